# SPDX-License-Identifier: BSD-2-Clause
"""The plots of a result directory (PNG, matplotlib's Agg backend: no display).

plots/overview.png         rates the way Santos et al. (2003) Fig. 2-3 show them: each
                           group's aggregate (or each flow), the inter-switch and
                           bottleneck links, Mbit/s over time
plots/flow_rates.png       every flow's rate over time
plots/link_utilisation.png utilisation (fraction of the configured rate) of the
                           inter-switch links, the bottleneck links and plots.links
plots/queues.png           input buffer occupancy and output queue of every switch port
                           that held data
plots/events.png           PAUSE/PFC frames sent, ECN marks, CNPs: counts per 10 ms
plots/congestion_state.png each port's congestion state over time (ibcc), when any entered it
plots/path_levels.png      each path's congestion level as its source hears it (L2CI
                           feedback, prc) against the law's target, when any has one
plots/rate_limits.png      the rate each flow's hostd law allows it over time, and
                           dotted its target rate where the law keeps one (flows
                           whose hostd paces them; a rate law's answer to the marks)
plots/fct.png              flow completion time CDF per size bucket (poisson flows)

Rates are sliding-window averages (the experiment's rate_window, 50 ms by
default), centred on each point of a grid as fine as the daemons' sampling.
The steady window is shaded grey, the experiment's phases tinted and named.
"""

import os

import numpy as np

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import results  # noqa: E402

DPI = 110
SIZE = (10, 5.2)
EVENT_BIN = 0.01
PHASE_TINTS = ("tab:blue", "tab:orange")


def _style(ax, R, xlim, ylabel, title):
    ax.set_xlabel("time since t0 (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.axvspan(R.window[0], R.window[1], color="0.92", zorder=0, lw=0,
               label="_steady window")
    _phases(ax, R)
    ax.set_xlim(*xlim)
    ax.grid(True, lw=0.3, color="0.8")


def _phases(ax, R):
    """The experiment's phases: tinted (two tints, alternating), bounded by
    dotted lines and named at the top."""
    for i, (name, (a, b)) in enumerate((R.exp.get("phases") or {}).items()):
        ax.axvspan(a, b, color=PHASE_TINTS[i % 2], alpha=0.12, zorder=0, lw=0,
                   label="_phase " + name)
        for x in (a, b):
            ax.axvline(x, color="0.55", lw=0.6, ls=":", zorder=1)
        ax.text((a + b) / 2, 0.985, name, transform=ax.get_xaxis_transform(), ha="center",
                va="top", fontsize=7, color="0.3", clip_on=True)


def _legend(ax, n):
    if n:
        ax.legend(fontsize=7 if n > 8 else 8, ncol=1 if n <= 10 else 2 if n <= 24 else 3,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _title(R, what):
    return "%s on lab %s: %s" % (R.exp["name"], R.lab.get("name"), what)


def _plot_links(R, res):
    """Link directions to draw: plots.links, else inter-switch + bottlenecks."""
    dirs = R.link_dirs()
    want = R.exp.get("plots", {}).get("links") or []
    if want:
        return [d for d in dirs if "%s:%s" % (d[3], d[4]) in want and d[5] == "tx"]
    bott = {l["id"] for l in (res or {}).get("links", []) if l.get("bottleneck")}
    return [d for d in dirs if d[6] == "inter-switch" or (d[0] in bott and d[5] == "tx")]


def plot_all(d, rate_window=None, xlim=None):
    """Draw every plot of result directory d; returns the paths written."""
    R = results.Run(d)
    try:
        res = results.analyse(d)
    except results.ResultsError:
        res = None
    out = os.path.join(d, "plots")
    os.makedirs(out, exist_ok=True)
    w = rate_window or R.exp.get("rate_window") or 0.05
    step = min(R.exp.get("sample") or 0.01, w / 2)
    xlim = xlim or (0, R.duration)
    grid = np.arange(xlim[0], xlim[1] + step / 2, step)
    ga = R.t0 + grid
    made = []

    flows = {}
    for f in R.flows:
        c, src = R.flow_curve(f["name"])
        if src:
            flows[f["name"]] = c.sliding(ga, w) * 8 / 1e6
    links = _plot_links(R, res)
    lrates = {}
    for lid, fr, to, sw, p, direction, kind, rate in links:
        lrates[lid] = (R.port_curve(sw, p, direction).sliding(ga, w) * 8 / 1e6, rate, kind)
    wl = "%g ms window" % (w * 1e3)

    # overview: groups (or flows) and links
    fig, ax = plt.subplots(figsize=SIZE)
    n = 0
    groups = R.exp.get("groups") or {}
    grouped = set()
    for g, members in groups.items():
        ys = [flows[m] for m in members if m in flows]
        if ys:
            ax.plot(grid, np.sum(ys, axis=0), lw=1.4, label="%s (%d flow%s)"
                    % (g, len(ys), "s" if len(ys) > 1 else ""))
            n += 1
        grouped |= set(members)
    for name, y in flows.items():
        if name not in grouped:
            ax.plot(grid, y, lw=1.2, label=name)
            n += 1
    for lid, (y, rate, kind) in lrates.items():
        ax.plot(grid, y, lw=1.0, ls="--", label="link %s (%s)" % (lid, kind))
        n += 1
    _style(ax, R, xlim, "rate (Mbit/s)", _title(R, "aggregate rates and links, " + wl))
    ax.set_ylim(bottom=0)
    _legend(ax, n)
    made.append(_save(fig, os.path.join(out, "overview.png")))

    # every flow
    fig, ax = plt.subplots(figsize=SIZE)
    cmap = plt.get_cmap("tab20" if len(flows) > 10 else "tab10")
    for i, (name, y) in enumerate(flows.items()):
        ax.plot(grid, y, lw=1.0, color=cmap(i % cmap.N), label=name)
    _style(ax, R, xlim, "rate (Mbit/s)", _title(R, "per-flow rate, " + wl))
    ax.set_ylim(bottom=0)
    if not flows:
        ax.text(0.5, 0.5, "no flow rate data", transform=ax.transAxes, ha="center")
    _legend(ax, len(flows))
    made.append(_save(fig, os.path.join(out, "flow_rates.png")))

    # link utilisation
    fig, ax = plt.subplots(figsize=SIZE)
    for lid, (y, rate, kind) in lrates.items():
        if rate:
            ax.plot(grid, y * 1e6 / rate, lw=1.1, label="%s (%s, %s)"
                    % (lid, kind, _rate_str(rate)))
    ax.axhline(1.0, color="0.4", lw=0.6, ls=":")
    _style(ax, R, xlim, "utilisation (fraction of the link rate)",
           _title(R, "link utilisation, " + wl))
    ax.set_ylim(0, 1.15)
    if not lrates:
        ax.text(0.5, 0.5, "no inter-switch or bottleneck link", transform=ax.transAxes,
                ha="center")
    _legend(ax, len(lrates))
    made.append(_save(fig, os.path.join(out, "link_utilisation.png")))

    made.append(_queues(R, out, xlim))
    made.append(_events(R, out, xlim))
    cs = _congestion_state(R, out, xlim)
    if cs:
        made.append(cs)
    rl = _rate_limits(R, out, xlim)
    pl = _path_levels(R, out, xlim)
    if pl:
        made.append(pl)
    if rl:
        made.append(rl)
    if res and res.get("fct"):
        made.append(_fct(R, out))
    return made


def _rate_str(bps):
    for div, u in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if bps >= div:
            return "%g%s" % (bps / div, u)
    return "%d" % bps


def _queues(R, out, xlim):
    """Per switch, the input buffers (left) and the output queues (right) of
    its ports, as sampled."""
    sws = sorted(R.sw)
    fig, axes = plt.subplots(max(1, len(sws)), 2, figsize=(SIZE[0] * 1.6, 2.6 + 2.2 * len(sws)),
                             squeeze=False, sharex=True)
    for (ax, aq), sw in zip(axes, sws):
        _input_buffers(ax, R, sw, xlim)
        _output_queues(aq, R, sw, xlim)
    if not sws:
        axes[0, 0].text(0.5, 0.5, "no switch time series", ha="center")
    fig.suptitle(_title(R, "queue depth (input buffers, output queues), as sampled"),
                 fontsize=11)
    return _save(fig, os.path.join(out, "queues.png"))


def _input_buffers(ax, R, sw, xlim):
    s = R.sw[sw]
    rel = s["t"] - R.t0
    n = 0
    idle = []
    for p, arr in s["ports"].items():
        if arr["buffer"].max() <= 0:
            idle.append(p)
            continue
        peer = R.nodes[sw].get("ports", {}).get(p, {}).get("peer", "?")
        info = R.port_info(sw, p)
        frames = info.get("buffer_unit") == "frames"
        # Occupancy is in the port's buffer unit: bytes, or frames.
        scale = 1 if frames else 1024
        line, = ax.step(rel, arr["buffer"] / scale, where="post", lw=0.9,
                        label="%s (from %s)%s" % (p, peer, ", frames" if frames else ""))
        if info.get("xoff"):
            ax.axhline(info["xoff"] / scale, color=line.get_color(), ls=":", lw=0.8)
        n += 1
    _style(ax, R, xlim, "input buffer (KiB, or frames)",
           "switch %s: input buffer per port (all priorities; dotted: XOFF)%s"
           % (sw, "; empty: " + _few(idle) if idle else ""))
    ax.set_ylim(bottom=0)
    if not n:
        ax.text(0.5, 0.5, "no port buffered anything", transform=ax.transAxes, ha="center")
    _legend(ax, n)


def _output_queues(ax, R, sw, xlim):
    s = R.sw[sw]
    rel = s["t"] - R.t0
    n = 0
    idle = []
    for p, arr in s["ports"].items():
        oq = arr.get("outq_bytes")
        if oq is None or oq.max() <= 0:
            idle.append(p)
            continue
        peer = R.nodes[sw].get("ports", {}).get(p, {}).get("peer", "?")
        ax.step(rel, oq.sum(axis=1) / 1024, where="post", lw=0.9, label="%s (to %s)" % (p, peer))
        n += 1
    _style(ax, R, xlim, "output queue (KiB)",
           "switch %s: output queue per port (its VOQs, all priorities)%s"
           % (sw, "; empty: " + _few(idle) if idle else ""))
    ax.set_ylim(bottom=0)
    if not n:
        ax.text(0.5, 0.5, "no output queued anything" if any(
            a.get("outq_bytes") is not None for a in s["ports"].values())
            else "no output queue in the series (an older switchd)", transform=ax.transAxes,
            ha="center")
    _legend(ax, n)


def _few(names, n=6):
    return ", ".join(names[:n]) + (" and %d more" % (len(names) - n) if len(names) > n else "")


def _events(R, out, xlim):
    grid = np.arange(xlim[0], xlim[1], EVENT_BIN)
    ga = R.t0 + grid
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(SIZE[0], 7), sharex=True)
    n1 = 0
    for sw in sorted(R.sw):
        s = R.sw[sw]
        for p, arr in s["ports"].items():
            for k, label in (("pause_tx", "PAUSE sent by"), ("pfc_tx", "PFC sent by"),
                             ("pause_storms", "pause storms (watchdog) at")):
                y = results.Curve(s["t"], arr[k]).per_bin(ga, EVENT_BIN)
                if y.sum() > 0:
                    a1.step(grid, y, where="post", lw=0.9, label="%s %s:%s"
                            % (label, sw, p))
                    n1 += 1
    _style(a1, R, xlim, "frames per %g ms" % (EVENT_BIN * 1e3),
           "flow control: PAUSE/PFC frames sent by the switches")
    a1.set_xlabel("")
    if not n1:
        a1.text(0.5, 0.5, "no PAUSE or PFC frame sent", transform=a1.transAxes, ha="center")
    _legend(a1, n1)
    n2 = 0
    tot = {}
    for sw, s in R.sw.items():
        for p, arr in s["ports"].items():
            c = results.Curve(s["t"], arr["marked"])
            tot["ECN marks (switches)"] = tot.get("ECN marks (switches)", results.Curve([], []))\
                + c
    for h, hd in R.hd.items():
        for k, label in (("fecn_rx", "marked frames received (hostd)"),
                         ("cnp_tx", "CNPs sent (hostd)"), ("cnp_rx", "CNPs received (hostd)")):
            c = results.Curve(hd["t"], hd[k])
            tot[label] = tot.get(label, results.Curve([], [])) + c
    for label, c in tot.items():
        y = c.per_bin(ga, EVENT_BIN)
        if y.sum() > 0:
            a2.step(grid, y, where="post", lw=0.9, label=label)
            n2 += 1
    _style(a2, R, xlim, "events per %g ms" % (EVENT_BIN * 1e3),
           "congestion notification: marks and CNPs (all switches/hosts)")
    if not n2:
        a2.text(0.5, 0.5, "no marks or CNPs", transform=a2.transAxes, ha="center")
    _legend(a2, n2)
    for a in (a1, a2):
        a.set_ylim(bottom=0)
    fig.suptitle(_title(R, "events"), fontsize=11)
    return _save(fig, os.path.join(out, "events.png"))


def _congestion_state(R, out, xlim):
    """Each switch port's congestion state over time (a congestion point's
    `congested` mask, e.g. ibcc's: 1 while any priority is in it), one
    row per port that was ever in it; None when none was."""
    rows = []
    for sw in sorted(R.sw):
        s = R.sw[sw]
        for p, arr in s["ports"].items():
            c = arr.get("congested")
            if c is not None and c.any():
                rows.append(("%s:%s" % (sw, p), s["t"] - R.t0, (c != 0).astype(float)))
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(SIZE[0], 1.5 + 0.6 * len(rows)))
    for i, (name, t, y) in enumerate(rows):
        ax.fill_between(t, i, i + 0.8 * y, step="post", lw=0, alpha=0.8)
    ax.set_yticks([i + 0.4 for i in range(len(rows))])
    ax.set_yticklabels([r[0] for r in rows])
    _style(ax, R, xlim, "port (filled: congested)",
           _title(R, "congestion state per output port, as sampled"))
    ax.set_ylim(0, len(rows))
    return _save(fig, os.path.join(out, "congestion_state.png"))


def _rate_limits(R, out, xlim):
    """Each flow's paced rate from its hostd (rate_bps of the flow the
    experiment flow maps to) as steps; None when no flow is paced."""
    series = {}
    for f in R.flows:
        if not R.nodes.get(f["src"], {}).get("hostd") or f["kind"] == "poisson":
            continue
        keys, _ = R.hostd_keys(f)
        hd = R.hd.get(f["src"])
        if not keys or not hd:
            continue
        fl = hd["flows"][keys[0]]
        rate = fl["rate_bps"]
        if not (rate > 0).any():
            continue
        tgt = fl.get("target_bps")
        series[f["name"]] = (fl["t"] - R.t0, rate / 1e6,
                             tgt / 1e6 if tgt is not None and (tgt > 0).any() else None)
    if not series:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    cmap = plt.get_cmap("tab20" if len(series) > 10 else "tab10")
    for i, (name, (t, y, tgt)) in enumerate(series.items()):
        ax.step(t, y, where="post", lw=0.9, color=cmap(i % cmap.N), label=name)
        # The law's target rate (DCQCN's Rt), where it keeps one: dotted.
        if tgt is not None:
            ax.step(t, tgt, where="post", lw=0.6, ls=":", color=cmap(i % cmap.N))
    _style(ax, R, xlim, "rate limit (Mbit/s)",
           _title(R, "rate each flow's law allows (hostd rate_bps; 0 = unpaced; dotted: its target)"))
    ax.set_ylim(bottom=0)
    _legend(ax, len(series))
    return _save(fig, os.path.join(out, "rate_limits.png"))


def _path_levels(R, out, xlim):
    """Each path's level as its source hears it (prc's level_pct, from L2CI
    feedback: the most congested output on the path, percent of its
    buffer), with the law's target dotted; None when no flow has one."""
    names = {str(nd.get("mac") or "").lower(): n for n, nd in R.nodes.items()}
    confs = R._hostd_confs()
    rows = []
    for host in sorted(R.hd):
        for key, fl in R.hd[host]["flows"].items():
            lv = fl.get("level_pct")
            if lv is None or np.isnan(lv).all():
                continue
            hops = fl["hops"][~np.isnan(fl["hops"])]
            label = "%s>%s" % (host, names.get(key.lower(), key))
            if len(hops):
                label += " (%d hops)" % hops[-1]
            rows.append((label, fl["t"] - R.t0, lv, confs.get(host, {})))
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=SIZE)
    cmap = plt.get_cmap("tab20" if len(rows) > 10 else "tab10")
    targets = set()
    for i, (label, t, lv, conf) in enumerate(rows):
        ax.step(t, lv, where="post", lw=0.8, color=cmap(i % cmap.N), label=label)
        if conf.get("law") == "prc":
            targets.add(conf.get("target") or 25.0)
    for tg in sorted(targets):
        ax.axhline(tg, color="k", ls=":", lw=0.8)
    _style(ax, R, xlim, "level (% of a port buffer)",
           _title(R, "level each path's source hears (L2CI feedback; dotted: the target)"))
    ax.set_ylim(bottom=0)
    _legend(ax, len(rows))
    return _save(fig, os.path.join(out, "path_levels.png"))


def _fct(R, out):
    fig, ax = plt.subplots(figsize=SIZE)
    done = []
    for f in R.flows:
        if f["kind"] == "poisson":
            doc = R._flowgen_doc(f) or {}
            done += [x for x in doc.get("flows", []) if x.get("fct_us") is not None
                     and x.get("size") is not None]
    n = 0
    for lo, hi, label in results.FCT_BUCKETS:
        v = np.sort([x["fct_us"] for x in done if x["size"] >= lo and
                     (hi is None or x["size"] < hi)])
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post",
                    label="%s bytes (n=%d)" % (label, len(v)))
            n += 1
    ax.set_xscale("log")
    ax.set_xlabel("flow completion time (us)")
    ax.set_ylabel("fraction of flows")
    ax.set_title(_title(R, "FCT CDF by flow size"), fontsize=10)
    ax.grid(True, lw=0.3, color="0.8")
    _legend(ax, n)
    return _save(fig, os.path.join(out, "fct.png"))
