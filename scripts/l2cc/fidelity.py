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
  sent against what it was asked; TCP and greedy-by-design flows have no
  offered rate to fall short of);
- the frame account closed (account.py): everything sent into the fabric
  was received, dropped with a cause, or is still queued.

The daemons' run delay (the time they were runnable but waited for a CPU)
is not itself a criterion; it is reported beside, as the likely cause.
"""

import numpy as np

#: The limits when the experiment names none (experiment.FIDELITY_DEFAULTS).
DEFAULTS = {"max_wire_lost": 0.01, "max_shortfall": 0.02}


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


def shortfall(flows):
    """{flow: {offered_bps, sent_bps, shortfall}} of the iperf3 UDP flows
    that were asked for a rate."""
    out = {}
    for f in flows:
        off = f.get("offered_bps")
        sent = (f.get("iperf3") or {}).get("sent_bps")
        if f.get("kind") != "iperf" or f.get("proto") != "udp" or not off or sent is None:
            continue
        out[f["name"]] = {"offered_bps": off, "sent_bps": sent,
                          "shortfall": max(0.0, 1.0 - sent / off)}
    return out


def judge(R, res, account=None):
    """results.json's fidelity of a run (R: results.Run; res: its results
    so far, flows and cpu included; account: account.take()'s, or None
    where the run has no counter snapshots)."""
    lim = dict(DEFAULTS)
    lim.update((R.exp.get("fidelity") or {}))
    a, b = R.t0 + R.window[0], R.t0 + R.window[1]
    wl = wire_lost(R, a, b)
    pl = pace_lost(R, a, b)
    sf = shortfall(res.get("flows") or [])
    cpu = res.get("cpu") or {}
    why, notes = [], []
    worst = max(wl.items(), key=lambda kv: kv[1]["fraction"], default=(None, None))
    if worst[1] is not None and worst[1]["fraction"] <= 0:
        worst = (None, worst[1])        # nothing lost anywhere: no port to name
    if not wl:
        notes.append("no daemon reports wire_lost_ns (daemons older than the counter): "
                     "lost wire time not judged")
    for k, v in sorted(list(wl.items()) + list(pl.items()), key=lambda kv: -kv[1]["fraction"]):
        if v["fraction"] > lim["max_wire_lost"]:
            why.append("%s lost %.0f ms (%.1f%% of the %.2f s window) to its daemon running "
                       "late" % (k, v["lost_s"] * 1e3, 100 * v["fraction"], b - a))
    for k, v in sorted(sf.items(), key=lambda kv: -kv[1]["shortfall"]):
        if v["shortfall"] > lim["max_shortfall"]:
            why.append("flow %s's generator sent %.3g Mbit/s of the %.3g asked (%.1f%% short)"
                       % (k, v["sent_bps"] / 1e6, v["offered_bps"] / 1e6, 100 * v["shortfall"]))
    closed = None
    if account is not None:
        closed = account.get("closed")
        if closed is False:
            why.append("the frame account did not close: %s" % account.get("why"))
    else:
        notes.append("no counter snapshots before and after the run: frames not accounted")
    if why and cpu.get("run_delay_max_s") is not None and cpu.get("wall_s"):
        why.append("%s waited %.2f s of %.1f s for a CPU"
                   % (cpu.get("run_delay_max_daemon"), cpu["run_delay_max_s"], cpu["wall_s"]))
    held = not why
    return {"held": held, "why": "; ".join(why) if why else None, "notes": notes,
            "limits": lim, "window_s": [R.window[0], R.window[1]],
            "outputs_judged": len(wl),
            # Only the outputs that lost anything: most lose nothing.
            "wire_lost": {k: v for k, v in wl.items() if v["lost_s"] > 0},
            "wire_lost_max_fraction": worst[1]["fraction"] if worst[1]
            else None, "wire_lost_max_port": worst[0],
            "pace_lost": pl,
            "pace_lost_max_fraction": max((v["fraction"] for v in pl.values()), default=None),
            "shortfall": sf,
            "shortfall_max": max((v["shortfall"] for v in sf.values()), default=None),
            "account_closed": closed,
            "run_delay_max_s": cpu.get("run_delay_max_s"),
            "run_delay_max_daemon": cpu.get("run_delay_max_daemon"),
            "definition": "held = every backlogged output and paced flow lost at most "
                          "max_wire_lost of the window to its daemon running late (the "
                          "daemons' wire_lost_ns, pace_lost_ns), no iperf3 UDP generator sent "
                          "less than its offered rate by more than max_shortfall, and the "
                          "frame account closed"}
