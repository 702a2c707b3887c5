# SPDX-License-Identifier: BSD-2-Clause
"""A sweep's plot, OUT/sweep.png (docs/testbed.md, "Sweeps", "plot"): one
panel per y metric over the x axis, a line or a group of bars per series.

Each point is the mean of its held runs with its 95% interval (Student t)
as error bars and the runs themselves as dots, so the spread is seen. A
numeric grid axis is drawn as a line (on a log axis when its values span
two decades or more); points and text-valued axes are categories, drawn as
bars. A metric is labelled in words with its unit (its `label:` and
`unit:` in the sweep file, rates in Mbit/s) and drawn on a log axis when
its `log:` (or the plot's `log_y:`) says so, or when its values span more
than two decades.
"""

import itertools
import math
import os

from . import checks as C

#: Words for the endings of metric names, when a metric has no label.
_SUFFIX_UNITS = (("_bps", "Mbit/s"), ("_pct", "%"), ("_us", "µs"), ("_ms", "ms"),
                 ("_s", "s"), ("_bytes", "bytes"), ("_frames", "frames"))


def metric_words(m):
    """(label, unit, scale) of a metric on an axis."""
    name = m.label or m.name
    unit, scale = m.unit, 1.0
    if m.is_rate():
        unit, scale = unit or "Mbit/s", 1e6
    if not m.label:
        for suf, u in _SUFFIX_UNITS:
            if name.endswith(suf):
                name = name[:-len(suf)]
                unit = unit or u
                break
        name = name.replace("_", " ").replace("-", " ")
    return name, unit, scale


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _spans_decades(vals):
    vals = [v for v in vals if isinstance(v, float) and math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= 100


def plot(sw, runs, out):
    """OUT/sweep.png from the sweep's runs (a row per try; only held runs
    count). None without a plot spec; raises ImportError without
    matplotlib."""
    if not sw.plot:
        return None
    # Lazy, as in experiment.py: matplotlib is only needed here.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xdim = sw.plot["x"]

    def key_of(r, dim):
        return r["point"] if dim == "point" else r["axis_labels"][dim]

    def order(dim):
        if dim == "point":
            return list(sw.explicit)
        return next(a.labels for a in sw.axes if a.name == dim)

    xs = order(xdim)
    axis = next((a for a in sw.axes if a.name == xdim), None)
    numeric = axis is not None and _numeric(axis.values)
    kind = sw.plot.get("kind") or ("lines" if numeric else "bars")
    xpos = list(axis.values) if numeric and kind == "lines" else list(range(len(xs)))
    log_x = numeric and kind == "lines" and _spans_decades([float(v) for v in xpos])
    series = list(itertools.product(*[order(s) for s in sw.plot["series"]]))
    metrics = {m.name: m for m in sw.metrics}
    ys = sw.plot["y"]
    held = [r for r in runs if r["status"] == "ok"]
    fig, axs = plt.subplots(len(ys), 1, figsize=(10, 1.4 + 2.8 * len(ys)),
                            sharex=True, squeeze=False)
    width = 0.8 / max(1, len(series))
    for ax, y in zip(axs[:, 0], ys):
        m = metrics[y]
        label, unit, scale = metric_words(m)
        allv = []
        for si, s in enumerate(series):
            mean, err, dots = [], [], []
            for xv in xs:
                vals = [r["metrics"].get(y) for r in held if key_of(r, xdim) == xv and
                        tuple(key_of(r, d) for d in sw.plot["series"]) == s]
                vals = [float(v) / scale for v in vals if isinstance(v, (int, float)) and
                        not isinstance(v, bool) and math.isfinite(v)]
                st = C.stats(vals)
                mean.append(st["mean"] if st["n"] else float("nan"))
                err.append(st["ci95"] or 0.0)
                dots.append(vals)
                allv.extend(vals)
            lab = ", ".join(s) if s else None
            if kind == "bars":
                pos = [p - 0.4 + width * (si + 0.5) for p in xpos]
                ax.bar(pos, mean, width * 0.9, yerr=err, capsize=3, label=lab, alpha=0.8,
                       error_kw={"lw": 1})
            else:
                pos = xpos
                ax.errorbar(pos, mean, yerr=err, marker="o", capsize=3, label=lab)
            for p, vs in zip(pos, dots):
                ax.plot([p] * len(vs), vs, linestyle="none", marker=".", ms=4, color="0.2",
                        alpha=0.7, zorder=3)
        log_y = m.log if m.log is not None else (y in sw.plot.get("log_y", []) or
                                                   _spans_decades(allv))
        if log_y and allv and min(allv) > 0:
            ax.set_yscale("log")
        elif ax.get_ylim()[0] > 0:
            ax.set_ylim(bottom=0)
        ax.set_ylabel("%s (%s)" % (label, unit) if unit else label)
        ax.grid(True, lw=0.3, color="0.8")
        if sw.plot["series"]:
            ax.legend(fontsize=8, title=", ".join(sw.plot["series"]), title_fontsize=8,
                      loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0,
                      frameon=False)
    last = axs[-1, 0]
    if log_x:
        last.set_xscale("log")
    if kind == "bars" or not numeric:
        last.set_xticks(xpos)
        last.set_xticklabels(xs, rotation=30 if max(len(x) for x in xs) > 8 else 0,
                             ha="right" if max(len(x) for x in xs) > 8 else "center")
        last.set_xlim(min(xpos) - 0.6, max(xpos) + 0.6)
    last.set_xlabel("point" if xdim == "point" else xdim.replace("_", " "))
    n = sorted({len([r for r in held if r["label"] == lab]) for lab in
                {r["label"] for r in held}})
    fig.suptitle("sweep %s: mean of %s held run%s per point, 95%% interval as bars, runs "
                 "as dots" % (sw.name, "-".join(str(x) for x in (n[:1] + n[-1:] if
                                                              len(n) > 1 else n)) or "0",
                              "" if n == [1] else "s"), fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, "sweep.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
