# SPDX-License-Identifier: BSD-2-Clause
"""Whether a run's emulation held (docs/testbed.md, "The fidelity gate"):
results.json's `fidelity`.

Links are emulated by a wire clock in each daemon (daemon/wclock.h): a
daemon that runs late catches up at most its burst, and an output that
was backlogged meanwhile loses the rest of that time silently. A link
that did not carry its rate makes every rate-based metric of the run
wrong, so a run is judged only if

- every backlogged output (switch ports, hostd uplinks) and every paced
  flow of a hostd lost at most `max_wire_lost` of the measuring window to
  its daemon running late (the daemons' own exact counters: wire_lost_ns,
  pace_lost_ns);
- no traffic generator fell short of the rate it was asked for by more
  than `max_shortfall` (iperf3 UDP flows with a rate: what the client
  sent against what it was asked, unless the path carried less than it
  sent anyway: then the generator did not limit the flow; l2cc-flowgen's UDP ON/OFF sources: what
  they sent or the host refused against their rate over their ON time;
  TCP flows have no offered rate to fall short of);
- the frame account closed (account.py): everything sent into the fabric
  was received, dropped with a cause, or is still queued.

The daemons' run delay (the time they were runnable but waited for a CPU)
and the machine's steal (CPU time the hypervisor gave to others) are not
criteria themselves; they are reported beside, as the likely cause.
"""

import numpy as np

from . import checks as C

#: The limits when the experiment names none (experiment.FIDELITY_DEFAULTS).
DEFAULTS = {"max_wire_lost": 0.01, "max_shortfall": 0.02}
#: A flow whose receiver got less than this fraction below what its sender
#: sent was limited by the path, not by its generator.
PATH_LIMITED = 0.05


def _over(t, x, a, b):
    """What a cumulative counter x (sampled at t) grew by over [a, b]."""
    if t is None or len(t) == 0:
        return None
    return float(np.interp(b, t, x) - np.interp(a, t, x))


def wire_lost(R, a, b):
    """{"SW:PORT" or "HOST:uplink": {lost_s, fraction, late_events}} over
    [a, b] (absolute), for every output whose daemon reports the counter;
    {} if none does (daemons older than the counter)."""
    out = {}
    span = b - a
    for sw, s in sorted(R.sw.items()):
        for p, arr in sorted(s["ports"].items()):
            if arr.get("wire_lost_ns") is None:
                continue
            lost = _over(s["t"], arr["wire_lost_ns"], a, b) / 1e9
            late = _over(s["t"], arr["wire_late_events"], a, b) \
                if arr.get("wire_late_events") is not None else None
            out["%s:%s" % (sw, p)] = {"lost_s": lost, "fraction": lost / span,
                                      "late_events": int(round(late)) if late else 0}
    for h, hd in sorted(R.hd.items()):
        if hd.get("wire_lost_ns") is None:
            continue
        lost = _over(hd["t"], hd["wire_lost_ns"], a, b) / 1e9
        late = _over(hd["t"], hd["wire_late_events"], a, b) \
            if hd.get("wire_late_events") is not None else None
        out["%s:uplink" % h] = {"lost_s": lost, "fraction": lost / span,
                                "late_events": int(round(late)) if late else 0}
    return out


def pace_lost(R, a, b):
    """{"HOST flow KEY": {lost_s, fraction}} over [a, b] for the paced
    flows of every hostd that reports pace_lost_ns, the flows that lost
    anything only."""
    out = {}
    for h, hd in sorted(R.hd.items()):
        for key, fl in sorted(hd["flows"].items()):
            x = fl.get("pace_lost_ns")
            if x is None or not len(fl["t"]):
                continue
            lost = _over(fl["t"], x, a, b) / 1e9
            if lost > 0:
                out["%s %s" % (h, key)] = {"lost_s": lost, "fraction": lost / (b - a)}
    return out


def shortfall(flows, flowgen_doc=None):
    """{flow: {offered_bps, sent_bps, shortfall}} of the generators asked
    for a rate: iperf3 UDP flows (what the client sent against its rate),
    and l2cc-flowgen's UDP ON/OFF sources (what it sent and what the host
    refused, against its rate over its ON time: a refusal is the host's
    queue, a shortfall beyond it the generator's own lateness).
    flowgen_doc(name) gives a flowgen flow's client report."""
    out = {}
    for f in flows:
        off = f.get("offered_bps")
        if f.get("kind") == "iperf" and f.get("proto") == "udp":
            ip = f.get("iperf3") or {}
            sent, got = ip.get("sent_bps"), ip.get("received_bps")
            if off and sent is not None:
                out[f["name"]] = {"offered_bps": off, "sent_bps": sent,
                                  "shortfall": max(0.0, 1.0 - sent / off)}
                # The path carried less than it was offered (the host edge
                # dropped the rest, or its socket was held back): the
                # generator was not what limited the flow, and offering
                # less than asked changed nothing downstream.
                if (got is not None and got < sent * (1 - PATH_LIMITED)) or sent == 0:
                    # sent == 0: the test never began, its control
                    # connection starved in the fabric (a victim under
                    # naive marking): the network's doing, not the CPU's.
                    out[f["name"]]["path_limited"] = True
        elif f.get("kind") == "onoff" and flowgen_doc:
            d = flowgen_doc(f["name"]) or {}
            rate, on = d.get("rate_bps"), d.get("on_time")
            if d.get("proto") == "udp" and rate and on:
                sent = (d.get("bytes", 0) + d.get("blocked_bytes", 0)) * 8 / on
                out[f["name"]] = {"offered_bps": rate, "sent_bps": sent,
                                  "shortfall": max(0.0, 1.0 - sent / rate)}
    return out


def spans(R):
    """[(name, a, b)] (absolute) a run is judged over: its measuring
    window, each phase, and the whole run, each against its own length (a
    stall outside the window still spoils whole-run counts and phases)."""
    out = [("the window", R.window[0], R.window[1])]
    for name, (a, b) in (R.exp.get("phases") or {}).items():
        out.append(("phase %s" % name, a, b))
    out.append(("the run", 0.0, R.duration))
    return [(n, R.t0 + a, R.t0 + b) for n, a, b in out if b > a]


def judge(R, res, account=None, strict=False):
    """results.json's fidelity of a run (R: results.Run; res: its results
    so far, flows and cpu included; account: account.take()'s). strict:
    the daemons are new enough to report every counter the gate reads
    (their status carries a version), so a counter or an account missing
    means the run cannot be shown to have held."""
    lim = dict(DEFAULTS)
    lim.update((R.exp.get("fidelity") or {}))
    why, notes = [], []
    wl, pl, worst_span = {}, {}, {}
    for name, a, b in spans(R):
        for k, v in list(wire_lost(R, a, b).items()) + list(pace_lost(R, a, b).items()):
            v["span"] = name
            if k not in worst_span or v["fraction"] > worst_span[k]["fraction"]:
                worst_span[k] = v
        if name == "the window":
            wl, pl = wire_lost(R, a, b), pace_lost(R, a, b)
    if not spans(R):
        why.append("the run has no span to judge (aborted at its start)")
    sf = shortfall(res.get("flows") or [],
                   lambda name: R._flowgen_doc({"name": name})
                   if hasattr(R, "_flowgen_doc") else None)
    cpu = res.get("cpu") or {}
    worst = max(wl.items(), key=lambda kv: kv[1]["fraction"], default=(None, None))
    if worst[1] is not None and worst[1]["fraction"] <= 0:
        worst = (None, worst[1])        # nothing lost anywhere: no port to name
    if not wl:
        if strict:
            why.append("no daemon reported wire_lost_ns: lost wire time cannot be judged")
        else:
            notes.append("no daemon reports wire_lost_ns (daemons older than the counter): "
                         "lost wire time not judged")
    over = [(k, v) for k, v in sorted(worst_span.items(), key=lambda kv: -kv[1]["fraction"])
            if v["fraction"] > lim["max_wire_lost"]]
    for k, v in over[:3]:
        why.append("%s lost %.0f ms (%.1f%% of %s) to its daemon running late"
                   % (k, v["lost_s"] * 1e3, 100 * v["fraction"], v["span"]))
    if len(over) > 3:
        why.append("%d more outputs or flows lost more than %g%%"
                   % (len(over) - 3, 100 * lim["max_wire_lost"]))
    for k, v in sorted(sf.items(), key=lambda kv: -kv[1]["shortfall"]):
        if v["shortfall"] > lim["max_shortfall"] and not v.get("path_limited"):
            why.append("flow %s's generator sent %.3g Mbit/s of the %.3g asked (%.1f%% short)"
                       % (k, v["sent_bps"] / 1e6, v["offered_bps"] / 1e6, 100 * v["shortfall"]))
    closed = (account or {}).get("closed")
    if closed is False:
        why.append("the frame account did not close: %s" % account.get("why"))
    elif closed is None:
        what = (account or {}).get("why") or "no counter snapshots"
        if strict and not (account or {}).get("excused"):
            why.append("frames not accounted: %s" % what)
        else:
            notes.append("frames not accounted: %s" % what)
    if why and cpu.get("run_delay_max_s") is not None and cpu.get("wall_s"):
        why.append("%s waited %.2f s of %.1f s for a CPU"
                   % (cpu.get("run_delay_max_daemon"), cpu["run_delay_max_s"], cpu["wall_s"]))
    if why and (cpu.get("machine_steal_fraction") or 0) >= C.STEAL_NOTED:
        why.append("the hypervisor took %.0f%% of the machine's CPU time (steal)"
                   % (100 * cpu["machine_steal_fraction"]))
    return {"held": not why, "why": "; ".join(why) if why else None, "notes": notes,
            "limits": lim, "window_s": [R.window[0], R.window[1]],
            "spans": [n for n, _, _ in spans(R)],
            "outputs_judged": len(wl),
            # Only the outputs that lost anything: most lose nothing.
            "wire_lost": {k: v for k, v in wl.items() if v["lost_s"] > 0},
            "wire_lost_max_fraction": worst[1]["fraction"] if worst[1] else None,
            "wire_lost_max_port": worst[0],
            "wire_lost_worst": {k: v for k, v in worst_span.items() if v["lost_s"] > 0},
            "pace_lost": pl,
            "pace_lost_max_fraction": max((v["fraction"] for v in pl.values()), default=None),
            "shortfall": sf,
            "shortfall_max": max((v["shortfall"] for v in sf.values()
                                  if not v.get("path_limited")), default=None),
            "account_closed": closed,
            "run_delay_max_s": cpu.get("run_delay_max_s"),
            "run_delay_max_daemon": cpu.get("run_delay_max_daemon"),
            "machine_steal_fraction": cpu.get("machine_steal_fraction"),
            "definition": "held = every backlogged output and paced flow lost at most "
                          "max_wire_lost of the window, of each phase and of the whole run to "
                          "its daemon running late (the daemons' wire_lost_ns, "
                          "pace_lost_ns), no iperf3 UDP generator sent less than its offered "
                          "rate by more than max_shortfall, and the frame account closed"}
