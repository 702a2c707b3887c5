# SPDX-License-Identifier: BSD-2-Clause
"""The max-min fair share of every flow: the yardstick the papers use
implicitly ("the victim gets what the remote flows leave", "each
contributor a quarter", "efficiency").

Three pieces, all plain Python (no numpy, so tests/python runs anywhere):

  tree_path(nodes, src, dst)    the link directions a flow from host src to
                                host dst crosses: the switches form a tree
                                (docs/testbed.md, "links"), which is the
                                path switchd's learned FDB takes
  frame_sizes(...)              how many bytes a frame of a flow is on the
                                wire and in the unit its rate is measured in
  max_min(capacity, flows)      progressive filling

results.py measures what goes in (the link rates, the control traffic the
daemons add, each flow's offered rate) and reports what comes out
(docs/testbed.md, "Fair shares").
"""

import math

#: The l2cc data tag hostd inserts into every data frame (daemon/wire.h,
#: L2CC_TAG_LEN): on the wire between the hostds, not in hostd's bytes_out.
TAG_LEN = 18
VLAN_HLEN = 4               # hostd's priority tag (pcp_from_dscp)
ETH_HLEN = 14
IP_UDP_HLEN = 28
#: TCP/IPv4 headers of a full segment: 20 + 20, and Linux's timestamps 12.
IP_TCP_HLEN = 52

#: Below this a capacity or a demand counts as used up.
EPS = 1e-9


class Flow:
    """One flow for max_min(): `uses` maps each link it crosses to the
    link capacity one unit of the flow's rate takes there (its frames'
    wire overhead included); `demand` caps it (None: as much as it can
    get)."""

    def __init__(self, uses, demand=None):
        self.uses = dict(uses)
        self.demand = demand


def max_min(capacity, flows):
    """Progressive filling. capacity: {link: units/s}; flows: {name: Flow}.
    Every flow not yet frozen grows at the same pace; a flow freezes when
    it reaches its demand or when a link it crosses is full. Returns
    {name: (rate, limit)}, limit being the link that froze the flow,
    "offered" (its demand) or None (it crosses no link and wants no limit:
    rate inf)."""
    left = {l: float(c) for l, c in capacity.items()}
    rate = {n: 0.0 for n in flows}
    limit = {}
    for n, f in flows.items():
        missing = [l for l in f.uses if l not in left]
        if missing:
            raise KeyError("flow %s crosses link %s, which has no capacity" % (n, missing[0]))
        if f.demand is not None and f.demand <= EPS:
            limit[n] = "offered"
    active = [n for n in flows if n not in limit]
    while active:
        # How far every active flow can grow before something is full.
        step, why = math.inf, None
        for n in active:
            d = flows[n].demand
            if d is not None and d - rate[n] < step:
                step, why = d - rate[n], "offered"
        load = {}
        for n in active:
            for l, w in flows[n].uses.items():
                load[l] = load.get(l, 0.0) + w
        for l, w in load.items():
            if w > 0 and left[l] / w < step:
                step, why = left[l] / w, l
        if step is math.inf:
            for n in active:
                rate[n], limit[n] = math.inf, None
            break
        step = max(step, 0.0)
        for n in active:
            rate[n] += step
        for l, w in load.items():
            left[l] -= step * w
        full = {l for l in load if left[l] <= EPS * max(1.0, capacity[l])}
        still = []
        for n in active:
            d = flows[n].demand
            if d is not None and rate[n] >= d - EPS * max(1.0, d):
                limit[n] = "offered"
            else:
                hit = sorted(l for l in flows[n].uses if l in full)
                if hit:
                    limit[n] = hit[0]
                else:
                    still.append(n)
        if len(still) == len(active):
            # Rounding left the limiting link a hair short of full, or the
            # demand a hair short: freeze what it limits, as it would have.
            for n in active:
                d = flows[n].demand
                if why == "offered" and d is not None and d - rate[n] <= 1e-6 * max(1.0, d):
                    limit[n] = why
                elif why in flows[n].uses:
                    limit[n] = why
            still = [n for n in active if n not in limit]
            if len(still) == len(active):
                raise RuntimeError("max_min: no progress (a bug)")
        active = still
    return {n: (rate[n], limit.get(n)) for n in flows}


# ---- paths -------------------------------------------------------------------------------

def _switch_links(nodes):
    """{switch: {neighbour switch: port toward it}} from lab.json's nodes."""
    adj = {}
    for sw, nd in nodes.items():
        if nd.get("kind") != "switch":
            continue
        adj.setdefault(sw, {})
        for p, pd in (nd.get("ports") or {}).items():
            if pd.get("role") == "switch":
                adj[sw][pd.get("peer")] = p
    return adj


def tree_path(nodes, src, dst):
    """The link directions (ids as in results.json's links: "H>SW",
    "SW>SW2", "SW>H") a frame from host src to host dst crosses, in order;
    None if either is not a host attached to a switch or no switch path
    joins them."""
    s, d = nodes.get(src) or {}, nodes.get(dst) or {}
    if s.get("kind") != "host" or d.get("kind") != "host" or \
            not s.get("switch") or not d.get("switch"):
        return None
    adj = _switch_links(nodes)
    a, b = s["switch"], d["switch"]
    prev = {a: None}
    todo = [a]
    while todo and b not in prev:       # breadth first: a tree has one path
        cur = todo.pop(0)
        for nb in sorted(adj.get(cur, {})):
            if nb not in prev:
                prev[nb] = cur
                todo.append(nb)
    if b not in prev:
        return None
    hops = [b]
    while prev[hops[-1]] is not None:
        hops.append(prev[hops[-1]])
    hops.reverse()
    return (["%s>%s" % (src, a)] + ["%s>%s" % (x, y) for x, y in zip(hops, hops[1:])] +
            ["%s>%s" % (b, dst)])


# ---- frames --------------------------------------------------------------------------------

def frame_sizes(kind, proto, source, mtu, dst_mtu=None, dgram=None, tagged=True,
                hostd_frame=None, vlan=False):
    """Bytes of one full data frame of a flow: {"wire": as switchd counts it
    (Ethernet header on, FCS and wire overhead off, the l2cc tag on when the
    source's hostd tags), "measured": the part the flow's rate source
    counts (hostd's bytes_out: the frame before the tag; an iperf3 receiver
    or l2cc-flowgen: the payload), "payload": what iperf3 -b and
    l2cc-flowgen --rate count}. hostd_frame is hostd's measured bytes_out
    per frames_out when known. vlan: the source's hostd gives the flow's
    frames a priority tag (pcp_from_dscp and a prio), which its bytes_out
    counts too. None for a Poisson workload (many short TCP connections:
    no one frame size)."""
    if kind == "poisson":
        return None
    tag = TAG_LEN if tagged else 0
    mtu = min(x for x in (mtu, dst_mtu) if x) if (mtu or dst_mtu) else 1500
    if proto == "udp":
        payload = dgram or (mtu - IP_UDP_HLEN)
        frame = payload + IP_UDP_HLEN + ETH_HLEN
    else:
        payload = mtu - IP_TCP_HLEN
        frame = mtu + ETH_HLEN
    if vlan:
        frame += VLAN_HLEN
    if source == "hostd":
        if hostd_frame:
            payload = payload * hostd_frame / frame
            frame = hostd_frame
        return {"wire": frame + tag, "measured": frame, "payload": payload}
    return {"wire": frame + tag, "measured": payload, "payload": payload}


def epochs(spans, a, b):
    """[(from, to, names active throughout)] cutting [a, b] at every start
    and stop of spans {name: (start, stop)} inside it."""
    cuts = {a, b}
    for s, e in spans.values():
        for x in (s, e):
            if a < x < b:
                cuts.add(x)
    cuts = sorted(cuts)
    out = []
    for x, y in zip(cuts, cuts[1:]):
        if y - x <= EPS:
            continue
        out.append((x, y, sorted(n for n, (s, e) in spans.items() if s <= x and e >= y)))
    return out
