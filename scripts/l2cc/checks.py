# SPDX-License-Identifier: BSD-2-Clause
"""A sweep's metrics and checks, once the runs are done (docs/testbed.md,
"Metrics and checks"): a metric is an expression over one run's
results.json and its point's settings; a point's metric is the mean (also
min, max) over its runs; a check is a comparison over points' metrics,
with a verdict. sweep.py reads the files and resolves paths; this module
works on values only.
"""

import math
import re

from . import expr as X

#: The verdicts of a check.
OK, FAILED, ERROR, SKIPPED = "ok", "FAILED", "not evaluated", "skipped"

#: A run's status, worst first: a point's status is its worst run's.
STATUS_ORDER = ("failed", "interrupted", "not-run", "ok")

_OPS = re.compile(r"[\s()+*/,<>=!@]")


def read_expr(text):
    """The Expr of a metric: a bare path is read whole (its keys may hold
    `-`), anything with a space, a parenthesis or an operator other than
    `-` as an expression. Raises X.ExprError."""
    if not isinstance(text, str):
        raise X.ExprError("expected a path into results.json or an expression, e.g. "
                          "groups.victim.sum_bps / 1e6")
    if text.strip() and not _OPS.search(re.sub(r"\[[^\[\]]*\]", "", text.strip())):
        return X.Expr.of_path(text.strip())
    return X.Expr(text)


class Metric:
    """A column of the sweep table: an expression over a run's results."""

    def __init__(self, name, text, ex, line):
        self.name, self.text, self.ex, self.line = name, text, ex, line

    def is_rate(self):
        return self.ex.is_rate(is_rate_path)


class Check:
    """A named assertion over metrics of points."""

    def __init__(self, name, text, ex, line):
        self.name, self.text, self.ex, self.line = name, text, ex, line


def is_rate_path(path):
    return path.rsplit(".", 1)[-1].rsplit("]", 1)[-1].endswith("_bps")


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        or isinstance(v, bool)


def stats(values):
    """{mean, min, max, n} of the numbers (booleans count 1/0) in values."""
    v = [float(x) for x in values if _number(x)]
    if not v:
        return {"mean": None, "min": None, "max": None, "n": 0}
    return {"mean": math.fsum(v) / len(v), "min": min(v), "max": max(v), "n": len(v)}


def point_rows(runs, metrics):
    """One row per point from the rows of its runs (in order): the point's
    fields, status (its worst run's), error (the first), metrics (the mean
    over its runs with status ok; a lone run's value as it is),
    metric_stats ({mean, min, max, n} per metric), metric_errors, seconds
    and runs (each run's own row)."""
    out, by = [], {}
    for r in runs:
        if r["label"] not in by:
            by[r["label"]] = []
            out.append(r["label"])
        by[r["label"]].append(r)
    rows = []
    for label in out:
        rs = by[label]
        first = rs[0]
        ok = [r for r in rs if r["status"] == "ok"]
        row = {k: first[k] for k in ("label", "point", "axes", "axis_labels", "set")}
        row["status"] = min((r["status"] for r in rs), key=STATUS_ORDER.index)
        row["error"] = next((r["error"] for r in rs if r["error"]), None)
        row["metrics"], row["metric_stats"] = {}, {}
        for m in metrics:
            vals = [r["metrics"].get(m.name) for r in ok]
            st = stats(vals)
            row["metric_stats"][m.name] = st
            if len(rs) == 1:
                row["metrics"][m.name] = first["metrics"].get(m.name)
            else:
                row["metrics"][m.name] = st["mean"]
        row["metric_errors"] = [e for r in rs for e in r["metric_errors"]]
        done = [r["seconds"] for r in rs if r["seconds"] is not None]
        row["seconds"] = round(sum(done), 1) if done else None
        row["result_dir"] = first["result_dir"]
        row["runs"] = [{k: r[k] for k in ("repeat", "status", "error", "metrics",
                                          "metric_errors", "result_dir", "seconds")}
                       for r in rs]
        rows.append(row)
    return rows


def evaluate(checks, rows, selected):
    """[{name, expr, value, ok, verdict, values, why}] of every check over
    the point rows. A check that names a point not in `selected` (labels
    chosen with --points) is skipped (ok None); one that names a point
    with no value for the metric (a failed or unfinished run) is not
    evaluated (ok False)."""
    by = {r["label"]: r for r in rows}
    out = []
    for c in checks:
        res = {"name": c.name, "expr": c.text, "value": None, "ok": None, "verdict": SKIPPED,
               "values": {}, "why": None}
        out.append(res)
        missing = [r.label for r in c.ex.refs if not r.matches(selected)]
        if missing:
            res["why"] = "point %s was not selected (--points)" % missing[0]
            continue

        def resolve(ref):
            vals = []
            for label in ref.matches(selected):
                st = ((by.get(label) or {}).get("metric_stats") or {}).get(ref.name) or {}
                v = st.get(ref.stat)
                if v is None:
                    row = by.get(label) or {}
                    raise X.ExprError("%s@%s has no value (the point's status: %s%s)"
                                      % (ref.name, label, row.get("status", "not-run"),
                                         ", " + row["error"] if row.get("error") else ""))
                vals.append(v)
            return vals if ref.glob else vals[0]
        try:
            v, operand, seen = c.ex.evaluate(resolve)
        except X.ExprError as e:
            res.update(ok=False, verdict=ERROR, why=str(e))
            continue
        res["values"] = seen
        res["value"] = operand
        res["ok"] = bool(v)
        res["verdict"] = OK if v else FAILED
    return out


def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return "%.4g" % v


def lines(results):
    """The checks as printed at the end of a sweep."""
    if not results:
        return []
    w = max(len(r["name"]) for r in results)
    out = ["checks:"]
    for r in results:
        many = len(r["values"]) > 1 or any(isinstance(v, list) for v in r["values"].values())
        detail = r["why"] if r["why"] else "%s%s" % (
            _num(r["value"]), "" if not many else " (%s)" % ", ".join(
                "%s = %s" % (k, "[%s]" % ", ".join(map(_num, v)) if isinstance(v, list)
                             else _num(v)) for k, v in r["values"].items()))
        out.append("  %-*s  %-13s %s: %s" % (w, r["name"], r["verdict"], r["expr"], detail))
    bad = [r for r in results if r["ok"] is False]
    out.append("  %d of %d checks passed%s" % (sum(1 for r in results if r["ok"]), len(results),
                                               "; %d skipped" % sum(1 for r in results
                                                                     if r["ok"] is None)
                                               if any(r["ok"] is None for r in results)
                                               else "") +
               ("; FAILED: " + ", ".join(r["name"] for r in bad) if bad else ""))
    return out
