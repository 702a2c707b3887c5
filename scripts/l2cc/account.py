# SPDX-License-Identifier: BSD-2-Clause
"""The frame account of a run (docs/testbed.md, "The frame account"):
losslessness proven, not assumed.

From two snapshots of every daemon's `counters` and every interface's
kernel statistics (`ip -s -j link` in each namespace), one before the run
and one after it, once the fabric went quiet (traffic.py), it checks that
every frame sent into the fabric was received, dropped with a cause, or is
still queued:

- per directed link X -> Y: what X sent (switch port or hostd uplink:
  tx_frames less the link-local control it built, ctrl_tx_frames; a host
  without hostd: its interface's tx_packets) equals what Y received (less
  the control it consumed) plus what the kernel dropped between them: the
  sender veth's tx_dropped (peer ring full), the receiving AF_XDP socket's
  rx_ring_full and rx_dropped, and its XDP program's no-socket and runt
  drops. Kernel drop counters cannot tell data from control, so a link
  closes when 0 <= missing <= kernel drops; every kernel drop is a fabric
  drop. Toward a host without hostd the link-local frames a switch sends
  (PAUSE, CREDIT) are counted too, and those sent while the snapshots were
  taken are the tolerance;
- per switch: what its ports received (less control consumed), what its
  congestion points originated (cpu_tx) and the extra copies of floods
  (flood_tx) equal what it sent (less control built), the frames it
  dropped (by cause; refusals such as no_frame or flood_limit are not
  frames), flooded frames no output took (flood_unsent) and the change in
  what its VOQs hold (voq_frames).

fabric_drops is taken from the account: the switches' frame drops by
cause plus the kernel's by link. A switch forwarding in XDP (forwarding =
xdp) counts those frames where they came in only: such a run has no
account.
"""

#: Drop reasons of switchd that count refusals, not frames (a copy not
#: made, a control frame not built): not in the account.
SW_REFUSALS = ("no_frame", "flood_limit", "reserve")


class Missing(Exception):
    """A counter the account needs is not in a snapshot."""


def _d(before, after, *path):
    """after[path] - before[path] (a missing path in `before` counts 0: a
    daemon that started later)."""
    a, b = after, before
    for k in path:
        if not isinstance(a, dict) or k not in a:
            raise Missing(".".join(path))
        a = a[k]
        b = b.get(k, {}) if isinstance(b, dict) else {}
    return int(a) - (int(b) if isinstance(b, (int, float)) else 0)


def _iface(snap, netns, ifname):
    """The kernel's statistics of interface ifname in netns, or None."""
    for it in (snap.get("links") or {}).get(netns) or []:
        if it.get("ifname") == ifname:
            return it.get("stats64") or it.get("stats") or {}
    return None


def _if_d(b, a, key, sub):
    x, y = (a or {}).get(sub, {}), (b or {}).get(sub, {})
    return int(x.get(key, 0)) - int(y.get(key, 0))


class _End:
    """One end of a link: how much it sent and received (data), the kernel's
    drops on frames toward it, and who it is."""

    def __init__(self, name, sent, recv, kernel_rx, veth_tx_dropped, ctrl_tx=0,
                 plain=False):
        self.name, self.sent, self.recv = name, sent, recv
        self.kernel_rx, self.veth_tx_dropped = kernel_rx, veth_tx_dropped
        self.ctrl_tx, self.plain = ctrl_tx, plain


def _xsk(b, a, path):
    """The kernel's drops of frames toward an AF_XDP port (its socket's and
    its XDP program's), by cause."""
    out = {}
    for k, name in (("rx_ring_full", "xsk_rx_ring_full"), ("rx_dropped", "xsk_rx_dropped"),
                    ("prog_no_socket", "xdp_no_socket"), ("prog_runt", "xdp_runt")):
        v = _d(b, a, *(path + (k,)))
        if v:
            out[name] = v
    return out


def _switch_end(sw, nd, p, B, A):
    b = B["daemons"].get(sw) or {}
    a = A["daemons"].get(sw) or {}
    pre = ("ports", p)
    sent = _d(b, a, *pre, "tx_frames") - _d(b, a, *pre, "ctrl_tx_frames")
    recv = _d(b, a, *pre, "rx_frames") - _d(b, a, *pre, "ctrl_rx_frames")
    ifname = (nd.get("ports", {}).get(p) or {}).get("ifname") or p
    ifb, ifa = _iface(B, nd["netns"], ifname), _iface(A, nd["netns"], ifname)
    if ifa is None:
        raise Missing("%s:%s's interface statistics (%s)" % (sw, p, ifname))
    return _End("%s:%s" % (sw, p), sent, recv, _xsk(b, a, pre + ("xdp",)),
                _if_d(ifb, ifa, "dropped", "tx") if ifa is not None else 0,
                ctrl_tx=_d(b, a, *pre, "ctrl_tx_frames"))


def _host_end(h, nd, B, A):
    if nd.get("hostd"):
        b = B["daemons"].get(h) or {}
        a = A["daemons"].get(h) or {}
        sent = _d(b, a, "uplink", "tx_frames") - _d(b, a, "uplink", "ctrl_tx_frames")
        recv = _d(b, a, "uplink", "rx_frames") - _d(b, a, "uplink", "ctrl_rx_frames")
        ifb, ifa = _iface(B, nd["netns"], "up0"), _iface(A, nd["netns"], "up0")
        return _End("%s:uplink" % h, sent, recv, _xsk(b, a, ("xdp_uplink",)),
                    _if_d(ifb, ifa, "dropped", "tx") if ifa is not None else 0)
    ifb, ifa = _iface(B, nd["netns"], "eth0"), _iface(A, nd["netns"], "eth0")
    if ifa is None:
        raise Missing("%s's eth0 statistics" % h)
    # Its stack counts what it received and then discarded (PAUSE, CNMs,
    # unknown ethertypes) in rx_packets and rx_dropped alike: not a fabric
    # drop. A frame lost on the way to it is the switch veth's tx_dropped.
    return _End("%s:eth0" % h, _if_d(ifb, ifa, "packets", "tx"),
                _if_d(ifb, ifa, "packets", "rx"), {},
                _if_d(ifb, ifa, "dropped", "tx"), plain=True)


def _ends(lab, B, A):
    """[(X, Y)] for every directed link of the lab."""
    nodes = lab.get("nodes", {})
    out = []
    for lk in lab.get("links", []):
        ends = []
        for ep in (lk["a"], lk["b"]):
            n, p = ep.split(":", 1)
            nd = nodes[n]
            ends.append(_switch_end(n, nd, p, B, A) if nd["kind"] == "switch"
                        else _host_end(n, nd, B, A))
        out.append((ends[0], ends[1]))
        out.append((ends[1], ends[0]))
    return out


def _link(x, y):
    kernel = dict(y.kernel_rx)
    if x.veth_tx_dropped:
        kernel["veth_tx_dropped"] = x.veth_tx_dropped
    k = sum(kernel.values())
    sent = x.sent
    tol = 0
    if y.plain:
        # A host stack sees every frame, link-local control included; the
        # switch keeps sending CREDIT/PAUSE while the snapshots are taken.
        sent += x.ctrl_tx
        tol = max(1, x.ctrl_tx_skew) if hasattr(x, "ctrl_tx_skew") else 1
    missing = sent - y.recv
    closed = -tol <= missing <= k + tol
    return {"from": x.name, "to": y.name, "sent": sent, "received": y.recv,
            "missing": missing, "kernel_drops": kernel, "tolerance": tol, "closed": closed}


def _switch_node(sw, nd, B, A):
    b = B["daemons"].get(sw) or {}
    a = A["daemons"].get(sw) or {}
    rx = tx = cpu = copies = unsent = 0
    drops = {}
    q0 = q1 = 0
    for p in nd.get("ports", {}):
        pre = ("ports", p)
        rx += _d(b, a, *pre, "rx_frames") - _d(b, a, *pre, "ctrl_rx_frames")
        tx += _d(b, a, *pre, "tx_frames") - _d(b, a, *pre, "ctrl_tx_frames")
        cpu += _d(b, a, *pre, "cpu_tx")
        copies += _d(b, a, *pre, "flood_tx")
        unsent += _d(b, a, *pre, "flood_unsent")
        for reason in (a["ports"][p].get("drop") or {}):
            if reason in SW_REFUSALS:
                continue
            v = _d(b, a, *pre, "drop", reason)
            if v:
                drops["%s:%s" % (sw, p), reason] = v
        q1 += int(a["ports"][p].get("voq_frames", 0))
        q0 += int(((b.get("ports") or {}).get(p) or {}).get("voq_frames", 0))
    cp = a.get("cpu_port")
    if cp is not None:
        for reason in cp.get("drop") or {}:
            if reason in SW_REFUSALS:
                continue
            v = _d(b, a, "cpu_port", "drop", reason)
            if v:
                drops["%s:cpu" % sw, reason] = v
    dropped = sum(drops.values())
    residual = rx + cpu + copies - (tx + dropped + unsent + (q1 - q0))
    return {"node": sw, "received": rx, "originated": cpu, "flood_copies": copies,
            "sent": tx, "dropped": dropped, "flood_unsent": unsent, "queued_before": q0,
            "queued_after": q1, "residual": residual, "closed": residual == 0}, drops


def take(lab, before, after, strict=False):
    """The account of a run from its snapshots (traffic.py). closed None
    with `why` when it cannot be taken, `excused` when that is no fault of
    the run (results from before the snapshots, forwarding in XDP, daemons
    older than the counters: strict false); closed False when a daemon
    could not be read or, strict, reports no counter the account needs."""
    if not before or not after:
        return {"closed": None, "excused": not strict, "why": "no counter snapshots"}
    unread = sorted(n for n, nd in lab.get("nodes", {}).items()
                    if nd.get("ctl") and (not (before.get("daemons") or {}).get(n) or
                                          not (after.get("daemons") or {}).get(n)))
    if unread:
        return {"closed": False, "why": "the counters of %s could not be read"
                % ", ".join(unread[:5])}
    why = None
    for tag, sn in (("before", before), ("after", after)):
        if not sn.get("quiet", True):
            why = "the fabric was not quiet %s the run (still moving: %s)" % (
                tag, ", ".join(sn.get("busy") or []))
            break
    try:
        fast = sum(_d(before["daemons"].get(n) or {}, after["daemons"].get(n) or {},
                      "ports", p, "xdp_forwarded")
                   for n, nd in lab.get("nodes", {}).items() if nd["kind"] == "switch"
                   for p in nd.get("ports", {}))
    except Missing:
        fast = 0
    if fast:
        # Forwarded in XDP, a frame is counted where it came in only.
        return {"closed": None, "excused": True,
                "why": "%d frames were forwarded in XDP (forwarding = xdp), which switchd "
                "counts on their input only" % fast}
    try:
        links = []
        for x, y in _ends(lab, before, after):
            x.ctrl_tx_skew = after.get("ctrl_skew", {}).get(x.name, 0)
            links.append(_link(x, y))
        nodes, drops = [], {}
        for n, nd in lab.get("nodes", {}).items():
            if nd["kind"] == "switch":
                node, d = _switch_node(n, nd, before, after)
                nodes.append(node)
                drops.update(d)
    except (Missing, KeyError) as e:
        if strict:
            return {"closed": False, "why": "the daemons do not report %s" % e}
        return {"closed": None, "excused": True, "why": "the daemons do not report %s "
                "(older than the account)" % e}
    by_reason, by_port = {}, {}
    for (where, reason), v in drops.items():
        by_reason[reason] = by_reason.get(reason, 0) + v
        by_port[where] = by_port.get(where, 0) + v
    for lk in links:
        for cause, v in lk["kernel_drops"].items():
            by_reason["kernel_" + cause] = by_reason.get("kernel_" + cause, 0) + v
            where = "%s>%s" % (lk["from"], lk["to"])
            by_port[where] = by_port.get(where, 0) + v
    bad = ["link %s>%s: %+d frames unaccounted (sent %d, received %d, kernel drops %d)"
           % (lk["from"], lk["to"], lk["missing"] - sum(lk["kernel_drops"].values())
              if lk["missing"] > 0 else lk["missing"], lk["sent"], lk["received"],
              sum(lk["kernel_drops"].values()))
           for lk in links if not lk["closed"]]
    bad += ["switch %s: %+d frames unaccounted (in %d + originated %d + copies %d; out %d, "
            "dropped %d, flood unsent %d, queued %d -> %d)"
            % (nd["node"], nd["residual"], nd["received"], nd["originated"],
               nd["flood_copies"], nd["sent"], nd["dropped"], nd["flood_unsent"],
               nd["queued_before"], nd["queued_after"])
            for nd in nodes if not nd["closed"]]
    if why:
        bad.insert(0, why)
    edges = [lk for lk in links if not lk["from"].split(":")[0] in _switches(lab)]
    into = sum(lk["sent"] for lk in edges)
    out_of = sum(lk["received"] for lk in links if lk["to"].split(":")[0] not in
                 _switches(lab))
    return {"closed": not bad, "why": "; ".join(bad[:3]) + (" (and %d more)" % (len(bad) - 3)
                                                            if len(bad) > 3 else "")
            if bad else None,
            "sent_into_fabric": into, "received_from_fabric": out_of,
            "originated": sum(n["originated"] for n in nodes),
            "flood_copies": sum(n["flood_copies"] for n in nodes),
            "queued_after": sum(n["queued_after"] for n in nodes),
            "fabric_drops": {"total": sum(by_reason.values()), "by_reason": by_reason,
                             "by_port": by_port},
            "links": links, "switches": nodes,
            "definition": "per directed link, sent (less link-local control built) = "
                          "received (less control consumed) + kernel drops; per switch, "
                          "received + originated + flood copies = sent + dropped + flood "
                          "unsent + change in queued; from counter snapshots before the run "
                          "and after the fabric went quiet"}


def _switches(lab):
    return {n for n, nd in lab.get("nodes", {}).items() if nd["kind"] == "switch"}
