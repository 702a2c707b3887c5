# SPDX-License-Identifier: BSD-2-Clause
"""A sweep's metrics and checks, once the runs are done (docs/testbed.md,
"Metrics and checks", "Checks that can fail").

A metric is an expression over one run's results.json and its point's
settings; a point's metric is a statistic over its held runs (mean, min,
max, and a 95% interval); a check is a predicate over points' metrics:

- where it must hold (`holds_at`) and where it must not (`fails_at`, the
  controls: congestion control off, or the scheme with its key mechanism
  disabled). A check that also holds at a control cannot tell the scheme
  from its absence: "cannot tell", counted as failed;
- of a kind: `paper` (a paper result: needs a control and a source),
  `invariant` (holds by construction, e.g. no fabric drop under credits:
  listed apart, never counted as a reproduced result) or `known_gap` (the
  paper's claim as the paper states it, which this fabric does not
  reproduce: reported with its reason, neither passed nor failed).

A point whose runs never held (results.json: fidelity) is inconclusive,
and so is every check that needs it. sweep.py reads the files and
resolves paths; this module works on values only.
"""

import ast
import itertools
import math
import re

from . import expr as X

#: The verdicts of a check.
OK, FAILED, ERROR, SKIPPED = "ok", "FAILED", "not evaluated", "skipped"
CANNOT_TELL, INCONCLUSIVE, KNOWN_GAP = "cannot tell", "inconclusive", "known gap"

#: The kinds of check, and the keys of one in a sweep file.
KINDS = ("paper", "invariant", "known_gap")
CHECK_KEYS = ("name", "kind", "expr", "holds_at", "fails_at", "source", "claim", "reason",
              "stat")

#: A run's status, worst first: a point's status is its worst run's, but a
#: run that did not hold (not-held) was tried again and counts only when no
#: try held (the point is then inconclusive).
STATUS_ORDER = ("failed", "interrupted", "not-run", "inconclusive", "ok")

#: The sweep's exit statuses (docs/testbed.md, "Exit statuses").
EXIT_OK, EXIT_FAILED, EXIT_INCONCLUSIVE = 0, 1, 3

_OPS = re.compile(r"[\s()+*/,<>=!@]")
_VAR_RE = re.compile(r"@\{([A-Za-z_][A-Za-z0-9_]*)\}")
_VAR_LABEL = "__var_"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


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
    """A column of the sweep table: an expression over a run's results;
    label and unit name it in words on plots (unit "Mbit/s" for rates by
    default), log draws it on a log axis."""

    def __init__(self, name, text, ex, line, label=None, unit=None, log=None):
        self.name, self.text, self.ex, self.line = name, text, ex, line
        self.label, self.unit, self.log = label, unit, log

    def is_rate(self):
        return self.ex.is_rate(is_rate_path)


def is_rate_path(path):
    return path.rsplit(".", 1)[-1].rsplit("]", 1)[-1].endswith("_bps")


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
        or isinstance(v, bool)


# ---- statistics -----------------------------------------------------------------------

#: Student's t, two-sided 95%, by degrees of freedom 1..30; beyond, 1.96.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201,
        2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
        2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t95(df):
    """The 0.975 quantile of Student's t with df degrees of freedom."""
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def stats(values):
    """{mean, min, max, n, sd, ci95} of the numbers (booleans count 1/0) in
    values: sd the sample standard deviation, ci95 the half-width of the
    95% interval of the mean (Student t over the runs); both None for
    fewer than two values."""
    v = [float(x) for x in values if _number(x)]
    if not v:
        return {"mean": None, "min": None, "max": None, "n": 0, "sd": None, "ci95": None}
    n = len(v)
    mean = math.fsum(v) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else None
    return {"mean": mean, "min": min(v), "max": max(v), "n": n, "sd": sd,
            "ci95": t95(n - 1) * sd / math.sqrt(n) if sd is not None else None}


def _held(r):
    """A run that counts: it ran to its end and its emulation held (a run
    without a fidelity record, from an older testbed, counts)."""
    return r["status"] == "ok"


def point_rows(runs, metrics):
    """One row per point from the rows of its runs (in order, tries
    included): the point's fields, status, error (the first), metrics (the
    mean over its held runs; a lone run's value as it is), metric_stats
    ({mean, min, max, n, sd, ci95} per metric), metric_errors, seconds,
    fidelity (held runs, tries, why the others did not hold) and runs (each
    run's own row)."""
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
        ok = [r for r in rs if _held(r)]
        row = {k: first[k] for k in ("label", "point", "axes", "axis_labels", "set")}
        counted = [r["status"] for r in rs if r["status"] != "not-held"]
        # Each repeat is tried until it holds (or its retries run out): a
        # point is judged on all its repeats or not at all.
        slots = {}
        for r in rs:
            slots.setdefault(r.get("repeat", 1), []).append(r["status"])
        if any("not-held" in st and "ok" not in st and all(x == "not-held" for x in st)
               for st in slots.values()):
            counted.append("inconclusive")
        row["status"] = min(counted or ["not-run"], key=STATUS_ORDER.index)
        row["error"] = next((r["error"] for r in rs if r["error"] and
                             r["status"] != "not-held"), None)
        row["metrics"], row["metric_stats"] = {}, {}
        for m in metrics:
            vals = [r["metrics"].get(m.name) for r in ok]
            st = stats(vals)
            row["metric_stats"][m.name] = st
            if len(ok) == 1 and len(rs) == 1:
                row["metrics"][m.name] = first["metrics"].get(m.name)
            else:
                row["metrics"][m.name] = st["mean"]
        # A try that did not hold is never judged: its unreadable metrics
        # are not the sweep's failure.
        row["metric_errors"] = [e for r in rs if r["status"] != "not-held"
                                for e in r["metric_errors"]]
        done = [r["seconds"] for r in rs if r["seconds"] is not None]
        row["seconds"] = round(sum(done), 1) if done else None
        row["result_dir"] = first["result_dir"]
        row["fidelity"] = _point_fidelity(rs)
        row["runs"] = [{k: r.get(k) for k in ("repeat", "try", "status", "error", "metrics",
                                              "metric_errors", "result_dir", "seconds",
                                              "fidelity")}
                       for r in rs]
        rows.append(row)
    return rows


#: Steal worth naming: a run whose hypervisor took at least this share of
#: the machine's CPU time (the likely cause of a run that did not hold,
#: beside the run delay, which steal does not show).
STEAL_NOTED = 0.01


def _point_fidelity(rs):
    """The point's fidelity: runs that held of those that ran to their
    end, the worst wire time lost and run delay among the held, and why the
    others did not hold."""
    ran = [r for r in rs if r["status"] in ("ok", "not-held")]
    held = [r for r in rs if r["status"] == "ok"]
    fids = [r.get("fidelity") or {} for r in held]
    lost = [f.get("wire_lost_max_fraction") for f in fids
            if f.get("wire_lost_max_fraction") is not None]
    delay = [f.get("run_delay_max_s") for f in fids if f.get("run_delay_max_s") is not None]
    steal = [(r.get("fidelity") or {}).get("machine_steal_fraction") for r in ran]
    steal = [x for x in steal if x is not None]
    return {"held": len(held), "ran": len(ran),
            "wire_lost_max_fraction": max(lost) if lost else None,
            "run_delay_max_s": max(delay) if delay else None,
            "steal_max_fraction": max(steal) if steal else None,
            "not_held": [{"result_dir": r["result_dir"],
                          "why": (r.get("fidelity") or {}).get("why") or r.get("error")}
                         for r in rs if r["status"] == "not-held"]}


# ---- checks ----------------------------------------------------------------------------

class Binding:
    """One entry of holds_at/fails_at: the labels (or shell patterns) its
    variables stand for; `point` is the one a bare metric is read at."""

    def __init__(self, labels, text, line):
        self.labels = labels        # {variable: label or pattern}
        self.text = text
        self.line = line

    def expand(self, labels, selected=None):
        """[{variable: label}] for every combination of the points its
        patterns match among labels (sweep order); with selected (the
        points run, --points), a pattern matches only those, so that `*`
        means every point that ran."""
        names = list(self.labels)
        choices = []
        for n in names:
            ref = X.Ref("", None, "m", self.labels[n])
            choices.append(ref.matches(selected if ref.glob and selected is not None
                                       else labels))
        return [dict(zip(names, c)) for c in itertools.product(*choices)]


class Check:
    """A named predicate over metrics of points, where it must hold and
    where it must not. `template` is the expression as written; with
    holds_at, its bare metrics are read at the binding's `point` and
    `@{VAR}` at its other variables, else it is evaluated once as written
    (METRIC@POINT references only)."""

    def __init__(self, name, text, ex, line, kind="paper", holds_at=None, fails_at=None,
                 source=None, claim=None, reason=None, stat=None, metrics=()):
        self.name, self.text, self.line = name, text, line
        self.ex = ex                    # the expression as written (legacy form), else None
        self.kind = kind
        self.holds_at = holds_at or []  # [Binding]
        self.fails_at = fails_at or []
        self.source, self.claim, self.reason = source, claim, reason
        self.stat = stat
        self.metrics = set(metrics)
        self.vars = sorted(set(_VAR_RE.findall(text)))

    @property
    def templated(self):
        return bool(self.holds_at)

    def instance(self, binding):
        """The expression text at one binding {variable: label}. Raises
        X.ExprError."""
        code, refs = X._scan(_VAR_RE.sub(lambda m: "@" + _VAR_LABEL + m.group(1), self.text))
        parts = []
        for ref in refs:
            if ref.name and ref.label.startswith(_VAR_LABEL):
                var = ref.label[len(_VAR_LABEL):]
                if var not in binding:
                    raise X.ExprError("@{%s}: the binding gives no point for %s" % (var, var))
                parts.append("%s@%s%s" % (ref.name, binding[var],
                                          ":" + ref.stat if ref.text.endswith(":" + ref.stat)
                                          else ":" + self.stat if self.stat else ""))
            elif ref.name:
                parts.append(ref.text)
            else:
                if ref.path not in self.metrics:
                    raise X.ExprError("%s: no metric %s, expected one of: %s"
                                      % (ref.text, ref.path, ", ".join(sorted(self.metrics))))
                if "point" not in binding:
                    raise X.ExprError("%s is read at the binding's point, and it names none"
                                      % ref.text)
                parts.append("%s@%s%s" % (ref.path, binding["point"],
                                          ":" + self.stat if self.stat else ""))
        return re.sub(r"_r(\d+)", lambda m: parts[int(m.group(1))], code)


def parse_checks(cs, metrics, labels, err):
    """[Check] of a sweep's `checks:` (a YSeq of YMaps); each problem goes
    to err(line, message)."""
    out, seen = [], {}
    for i, c in enumerate(cs):
        line = cs.ilines[i]
        if not isinstance(c, dict):
            err(line, "check %d: expected {name: NAME, expr: \"METRIC >= VALUE\", holds_at: "
                "[POINT], fails_at: [CONTROL], source: \"PAPER, FIG.\"}" % (i + 1))
            continue
        for k in c:
            if k not in CHECK_KEYS:
                err(c.kline(k), 'unknown key "%s" in check %d, expected one of: %s'
                    % (k, i + 1, ", ".join(CHECK_KEYS)))
        name = c.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            err(c.vline("name") if "name" in c else line,
                "check %d: name %s, expected a letter then up to 63 letters, digits, _, ., -"
                % (i + 1, "is missing" if name is None else '"%s"' % (name,)))
            continue
        if name in seen:
            err(c.vline("name"), 'check name "%s" is used twice (also line %d)'
                % (name, seen[name]))
            continue
        seen[name] = c.vline("name")
        chk = _parse_one(c, name, line, metrics, labels, err)
        if chk:
            out.append(chk)
    return out


def _text_key(c, key, name, err):
    v = c.get(key)
    if v is None:
        return None
    if not isinstance(v, str) or not v.strip() or "\n" in v.strip():
        err(c.vline(key), "check %s: %s: expected one line of text" % (name, key))
        return None
    return v.strip()


def _parse_bindings(c, key, name, labels, err):
    v = c.get(key)
    if v is None:
        return []
    line = c.vline(key)
    items = v if isinstance(v, list) else [v]
    lines = getattr(v, "ilines", None) or [line] * len(items)
    out = []
    for it, ln in zip(items, lines):
        if isinstance(it, (str, int, float)) and not isinstance(it, bool):
            b = Binding({"point": str(it)}, str(it), ln)
        elif isinstance(it, dict) and it and all(isinstance(k, str) and
                                                 isinstance(x, (str, int, float)) and
                                                 not isinstance(x, bool)
                                                 for k, x in it.items()):
            b = Binding({k: str(x) for k, x in it.items()},
                        ", ".join("%s=%s" % kv for kv in it.items()), ln)
        else:
            err(ln, "check %s: %s: expected a list of point labels (or patterns), or of "
                "{VARIABLE: LABEL} for expressions with @{VARIABLE}" % (name, key))
            continue
        bad = [x for x in b.labels.values() if not X.Ref("", None, "m", x).matches(labels)]
        if bad:
            err(ln, "check %s: %s: no point %s, expected one of: %s"
                % (name, key, bad[0], ", ".join(labels[:40])))
            continue
        out.append(b)
    if not out and not isinstance(v, list):
        return []
    if isinstance(v, list) and not v:
        err(line, "check %s: %s: expected at least one point" % (name, key))
    return out


def _parse_one(c, name, line, metrics, labels, err):
    kind = c.get("kind", "paper")
    bad = []

    def e(ln, msg):
        bad.append(1)
        err(ln, msg)
    if kind not in KINDS:
        e(c.vline("kind"), "check %s: kind \"%s\", expected one of: %s"
          % (name, kind, ", ".join(KINDS)))
        kind = "paper"
    text = c.get("expr")
    if text is None:
        e(line, "check %s: expr is missing, expected e.g. \"victim_share >= 0.8\" with "
          "holds_at and fails_at" % name)
        return None
    if not isinstance(text, str) or not text.strip():
        e(c.vline("expr"), "check %s: expr: expected an expression" % name)
        return None
    text = text.strip()
    eline = c.vline("expr")
    source = _text_key(c, "source", name, e)
    claim = _text_key(c, "claim", name, e)
    reason = _text_key(c, "reason", name, e)
    stat = c.get("stat")
    if stat is not None and stat not in X.STATS:
        e(c.vline("stat"), "check %s: stat \"%s\", expected one of: %s"
          % (name, stat, ", ".join(X.STATS)))
        stat = None
    holds = _parse_bindings(c, "holds_at", name, labels, e)
    fails = _parse_bindings(c, "fails_at", name, labels, e)
    if "fails_at" in c and "holds_at" not in c:
        e(c.vline("fails_at"), "check %s: fails_at needs holds_at: the predicate is read "
          "at each point of both" % name)
    if kind == "known_gap" and not reason:
        e(line, "check %s: a known_gap needs its reason: one line on why this fabric does "
          "not reproduce the claim" % name)
    mnames = [m.name for m in metrics]
    chk = Check(name, text, None, eline, kind, holds, fails, source, claim, reason, stat,
                mnames)
    try:
        if "holds_at" in c:
            if not holds:
                return None
            for b in holds + fails:
                missing = [v for v in chk.vars if v not in b.labels]
                if missing:
                    raise X.ExprError("%s binds no point for @{%s} (%s)"
                                      % ("holds_at" if b in holds else "fails_at",
                                         missing[0], b.text))
                for bd in b.expand(labels):
                    _validate(X.Expr(chk.instance(bd)), mnames, labels)
        else:
            if chk.vars:
                raise X.ExprError("@{%s} needs holds_at (and fails_at) to bind it"
                                  % chk.vars[0])
            chk.ex = X.Expr(text)
            _validate(chk.ex, mnames, labels)
            for ref in chk.ex.refs:
                if not ref.name:
                    raise X.ExprError("%s: a check without holds_at compares metrics of "
                                      "points, METRIC@POINT, e.g. victim_bps@santos_b4; or "
                                      "give holds_at: [POINT] and write the metric bare"
                                      % ref.text)
    except X.ExprError as ex:
        e(eline, "check %s: %s" % (name, ex))
    return None if bad else chk


def _validate(ex, metrics, labels):
    if not ex.test:
        raise X.ExprError("expected a comparison, e.g. victim_share >= 0.8 (and/or/not of "
                          "comparisons)")
    for ref in ex.refs:
        if not ref.name:
            continue
        if ref.name not in metrics:
            raise X.ExprError("%s: no metric %s, expected one of: %s"
                              % (ref.text, ref.name, ", ".join(sorted(metrics)[:40])))
        if not ref.matches(labels):
            raise X.ExprError("%s: no point %s, expected one of: %s"
                              % (ref.text, ref.label, ", ".join(labels[:40])))


class _Inconclusive(Exception):
    pass


def _eval_instance(text, by, selected):
    """{text, value, ok, values, why, state} of one instance: state is
    "true", "false", "error", "inconclusive" or "skipped"."""
    res = {"expr": text, "value": None, "ok": None, "values": {}, "why": None, "spread": {}}
    ex = X.Expr(text)
    missing = [r.label for r in ex.refs if r.name and not r.matches(selected)]
    if missing:
        res.update(state="skipped", why="point %s was not selected (--points)" % missing[0])
        return res

    def resolve(ref):
        vals = []
        for label in ref.matches(selected):
            row = by.get(label) or {}
            if row.get("status") == "inconclusive":
                raise _Inconclusive("point %s never held: %s" % (label, _not_held_why(row)))
            st = (row.get("metric_stats") or {}).get(ref.name) or {}
            v = st.get(ref.stat)
            if not ref.glob and st.get("n", 0) > 1:
                res["spread"][ref.text] = {k: st.get(k) for k in ("min", "max", "ci95", "n")}
            if v is None:
                raise X.ExprError("%s@%s has no value (the point's status: %s%s)"
                                  % (ref.name, label, row.get("status", "not-run"),
                                     ", " + row["error"] if row.get("error") else ""))
            vals.append(v)
        return vals if ref.glob else vals[0]
    try:
        v, operand, seen = ex.evaluate(resolve)
    except _Inconclusive as e:
        res.update(state="inconclusive", why=str(e))
        return res
    except X.ExprError as e:
        res.update(state="error", why=str(e))
        return res
    res.update(values=seen, value=operand, ok=bool(v), state="true" if v else "false")
    return res


def _not_held_why(row):
    f = row.get("fidelity") or {}
    whys = []
    for x in f.get("not_held", []):
        if x.get("why") and x["why"] not in whys:
            whys.append(x["why"])
    return "%d of %d tries did not hold%s" % (len(f.get("not_held", [])), f.get("ran", 0),
                                              " (%s)" % "; ".join(whys[:2]) if whys else "")


def _instances(check, bindings, labels, by, selected):
    out = []
    for b in bindings:
        bds = b.expand(labels, selected)
        if not bds:
            out.append({"expr": b.text, "value": None, "ok": None, "values": {},
                        "state": "skipped", "why": "%s matches no point that was selected "
                        "(--points)" % b.text})
        for bd in bds:
            out.append(_eval_instance(check.instance(bd), by, selected))
    return out


def evaluate(checks, rows, selected, labels=None):
    """[{name, kind, source, claim, reason, expr, verdict, ok, discriminated,
    holds: [instance], controls: [instance], value, values, why}] of every
    check over the point rows. ok: True passed, False failed (FAILED,
    cannot tell, not evaluated), None neither (skipped, inconclusive, known
    gap). A check that names a point not in `selected` (labels chosen with
    --points) is skipped."""
    by = {r["label"]: r for r in rows}
    labels = labels or [r["label"] for r in rows]
    return [_evaluate_one(c, by, selected, labels) for c in checks]


def _worst(insts):
    """The combined state of instances that must all be true."""
    states = [i["state"] for i in insts]
    for s in ("skipped", "false", "error", "inconclusive"):
        if s in states:
            return s
    return "true"


def _evaluate_one(c, by, selected, labels):
    res = {"name": c.name, "kind": c.kind, "source": c.source, "claim": c.claim,
           "reason": c.reason, "expr": c.text, "verdict": SKIPPED, "ok": None,
           "discriminated": None, "holds": [], "controls": [], "value": None, "values": {},
           "why": None,
           "holds_at": [b.text for b in c.holds_at], "fails_at": [b.text for b in c.fails_at]}
    if c.templated:
        res["holds"] = _instances(c, c.holds_at, labels, by, selected)
        res["controls"] = _instances(c, c.fails_at, labels, by, selected)
    else:
        res["holds"] = [_eval_instance(c.text, by, selected)]
    h = res["holds"]
    res["value"] = h[0]["value"] if len(h) == 1 else None
    res["values"] = {k: v for i in h for k, v in i["values"].items()}
    hs = _worst(h)
    cs = [i["state"] for i in res["controls"]]
    if hs == "skipped" or "skipped" in cs:
        res["why"] = next(i["why"] for i in h + res["controls"] if i["state"] == "skipped")
        verdict, ok = SKIPPED, None
    elif hs == "false":
        verdict, ok = FAILED, False
        res["why"] = "false at %s" % ", ".join(i["expr"] for i in h if i["state"] == "false")
    elif hs == "error":
        verdict, ok = ERROR, False
        res["why"] = next(i["why"] for i in h if i["state"] == "error")
    elif hs == "inconclusive":
        verdict, ok = INCONCLUSIVE, None
        res["why"] = next(i["why"] for i in h if i["state"] == "inconclusive")
    elif c.kind == "invariant" and not res["controls"]:
        verdict, ok = OK, True
    elif not res["controls"]:
        verdict, ok = CANNOT_TELL, False
        res["discriminated"] = False
        res["why"] = "no control: nothing shows it can fail (give fails_at)"
    elif "true" in cs:
        verdict, ok = CANNOT_TELL, False
        res["discriminated"] = False
        res["why"] = "also holds at the control %s" % ", ".join(
            i["expr"] for i in res["controls"] if i["state"] == "true")
    elif "error" in cs:
        verdict, ok = ERROR, False
        res["why"] = "control: " + next(i["why"] for i in res["controls"]
                                        if i["state"] == "error")
    elif "inconclusive" in cs:
        verdict, ok = INCONCLUSIVE, None
        res["why"] = "control: " + next(i["why"] for i in res["controls"]
                                        if i["state"] == "inconclusive")
    else:
        verdict, ok = OK, True
        res["discriminated"] = True
    if c.kind == "known_gap" and verdict != SKIPPED:
        # Reported as the paper states it, with what it measured here.
        res["measured_verdict"] = verdict
        verdict, ok = KNOWN_GAP, None
    res["verdict"], res["ok"] = verdict, ok
    return res


def exit_status(results, rows=(), broken=False, report_only=False):
    """The sweep's exit status: 1 a check failed on runs that held (unless
    report_only), a point's runs failed or were not run, or broken (a
    metric of a counted run could not be read, the lab could not be taken
    down); else 3 a check or a point was inconclusive; else 0 (a known gap
    or a skipped check does not count)."""
    if broken or any(r["status"] not in ("ok", "inconclusive") for r in rows) or \
            any(r["metric_errors"] for r in rows):
        return EXIT_FAILED
    if not report_only and any(r["ok"] is False for r in results):
        return EXIT_FAILED
    if any(r["verdict"] == INCONCLUSIVE for r in results) or \
            any(r["status"] == "inconclusive" for r in rows):
        return EXIT_INCONCLUSIVE
    return EXIT_OK


# ---- printing --------------------------------------------------------------------------

def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return "%.4g" % v


def _inst_text(i):
    if i["state"] in ("error", "inconclusive", "skipped"):
        return "%s: %s" % (i["expr"], i["why"])
    vals = ", ".join("%s = %s" % (k, "[%s]" % ", ".join(map(_num, v)) if isinstance(v, list)
                                  else _num(v)) for k, v in i["values"].items())
    return "%s: %s" % (i["expr"], vals or _num(i["value"]))


def lines(results):
    """The checks as printed at the end of a sweep: paper results (value
    at each point and control, whether it discriminated), invariants,
    known gaps, and a summary line."""
    if not results:
        return []
    out = []
    groups = (("paper", "checks of paper results (must hold at their points, fail at their "
                        "controls):"),
              ("invariant", "invariants (hold by construction; not paper results):"),
              ("known_gap", "known gaps (the paper's claim as it states it; not judged):"))
    w = max(len(r["name"]) for r in results)
    pad = " " * (w + 4)
    for kind, title in groups:
        rs = [r for r in results if r["kind"] == kind]
        if not rs:
            continue
        out.append(title)
        for r in rs:
            head = "  %-*s  %-13s %s" % (w, r["name"], r["verdict"], r["expr"])
            if r.get("source"):
                head += "   [%s]" % r["source"]
            out.append(head)
            shown = set()
            many = len(r["holds"]) > 1 or r["controls"] or r["holds_at"]
            for i in r["holds"]:
                out.append("%s%s%s" % (pad, "at      " if many else "", _inst_text(i)))
                shown.add(i["why"])
            for i in r["controls"]:
                out.append("%scontrol %s" % (pad, _inst_text(i)))
                shown.add(i["why"])
            note = r["why"] if r["why"] and not any(w and w in r["why"] for w in shown) \
                else None
            if r["discriminated"]:
                note = "discriminates: false at every control"
            if note and r["verdict"] != SKIPPED:
                out.append(pad + note)
            if kind == "known_gap":
                out.append("%smeasured here: %s; why not reproduced: %s"
                           % (pad, r.get("measured_verdict"), r["reason"]))
                if r.get("measured_verdict") == OK:
                    out.append("%sNOTE: it held here and failed at every control: the gap "
                               "may be closed; look again before calling it one" % pad)
    out.append("  " + summary(results))
    return out


def _md_inst(i):
    if i["state"] in ("error", "inconclusive", "skipped"):
        return "%s: %s" % (i["expr"].split(" ")[0].split("@")[-1], i["why"])

    def one(k, v):
        if isinstance(v, list):
            return "%s [%s]" % (k, ", ".join(map(_num, v)))
        sp = (i.get("spread") or {}).get(k)
        return "%s %s%s" % (k, _num(v), " (%s..%s)" % (_num(sp["min"]), _num(sp["max"]))
                            if sp else "")
    vals = ", ".join(one(k, v) for k, v in i["values"].items())
    return vals or _num(i["value"])


def markdown(results):
    """The checks as a Markdown table (sweep.md; to paste into the docs):
    each with its kind, source, predicate, its values where it must hold
    and at its controls, and its verdict."""
    if not results:
        return ""
    out = ["| check | kind | source | predicate | where it must hold | controls (must fail) "
           "| verdict |", "|---|---|---|---|---|---|---|"]
    for r in results:
        verdict = r["verdict"] + (" (discriminates)" if r["discriminated"] else "")
        if r["kind"] == "known_gap":
            verdict += ": %s; %s" % (r.get("measured_verdict"), r["reason"])
        elif r["why"] and r["verdict"] != OK:
            verdict += ": " + r["why"]
        vals = [tuple(i["values"].values()) for i in r["holds"]]
        if len(r["holds"]) > 2 and all(i["state"] == "true" for i in r["holds"]) and \
                len(set(vals)) == 1 and len(vals[0]) == 1:
            # Every point alike (an invariant over *): one line.
            where = "%d points, each %s" % (len(vals), _num(vals[0][0]))
        else:
            where = "<br>".join(_md_inst(i) for i in r["holds"]) or "-"
        out.append("| %s | %s | %s | `%s` | %s | %s | %s |" % (
            r["name"], r["kind"], r.get("source") or "", r["expr"], where,
            "<br>".join(_md_inst(i) for i in r["controls"]) or "-",
            verdict.replace("|", "\\|")))
    out.append("")
    out.append(summary(results))
    return "\n".join(out) + "\n"


def summary(results):
    """One line: paper results reproduced, invariants held, known gaps,
    inconclusive, failed (skipped checks are counted apart)."""
    run = [r for r in results if r["verdict"] != SKIPPED]
    paper = [r for r in run if r["kind"] == "paper"]
    inv = [r for r in run if r["kind"] == "invariant"]
    gaps = [r for r in run if r["kind"] == "known_gap"]
    bad = [r["name"] for r in run if r["ok"] is False]
    inc = [r["name"] for r in run if r["verdict"] == INCONCLUSIVE]
    skipped = len(results) - len(run)
    parts = []
    if paper:
        parts.append("paper results: %d of %d reproduced"
                     % (sum(1 for r in paper if r["ok"]), len(paper)))
        ct = sum(1 for r in paper if r["verdict"] == CANNOT_TELL)
        if ct:
            parts[-1] += " (%d cannot tell)" % ct
    if inv:
        parts.append("invariants: %d of %d held" % (sum(1 for r in inv if r["ok"]), len(inv)))
    if gaps:
        parts.append("known gaps: %d" % len(gaps))
    if skipped:
        parts.append("%d skipped" % skipped)
    if inc:
        parts.append("INCONCLUSIVE: " + ", ".join(inc))
    if bad:
        parts.append("FAILED: " + ", ".join(bad))
    return "; ".join(parts) or "no checks"


# ---- the audit -------------------------------------------------------------------------

def self_compared(check, binding):
    """The METRIC@LABEL a control instance reads twice (or None): a
    predicate comparing a point with itself (x@pause <= 0.1 * x@pause,
    x@a:max < x@a:min) is false there by construction, whatever the
    scheme does, so that control shows nothing."""
    ex = X.Expr(check.instance(binding))

    def refs(node):
        out = set()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and re.fullmatch(r"_r\d+", n.id):
                r = ex.refs[int(n.id[2:])]
                if r.name and not r.glob:
                    out.add((r.name, r.label))
        return out
    for node in ast.walk(ex.tree):
        if not isinstance(node, ast.Compare):
            continue
        # Both sides read the very same points' metrics: the comparison is
        # of a point with itself (abs(x@p - x@r) <= 0.25 * x@r is not).
        sides = [refs(x) for x in [node.left] + list(node.comparators)]
        for i in range(len(sides)):
            for j in range(i + 1, len(sides)):
                if sides[i] and sides[i] == sides[j]:
                    return "%s@%s" % sorted(sides[i])[0]
    return None


def audit(checks, labels=None):
    """([line], problems) of a sweep's checks: each with its kind, source,
    where it holds and its controls; a problem for a paper check without a
    control or a source, a control that compares a point with itself, a
    known gap without a source or reason."""
    out, problems = [], []
    for c in checks:
        for b in c.fails_at if labels else []:
            for bd in b.expand(labels):
                twice = self_compared(c, bd)
                if twice:
                    problems.append((b.line, "check %s: control %s compares %s with "
                                     "itself: it fails by construction; give a control "
                                     "where the scheme is off or its mechanism disabled, "
                                     "compared with the reference"
                                     % (c.name, b.text, twice)))
                    break
        where = ", ".join(b.text for b in c.holds_at) if c.holds_at else "(as written)"
        ctl = ", ".join(b.text for b in c.fails_at) or "-"
        out.append("  %-28s %-9s %s" % (c.name, c.kind, c.text))
        out.append("  %-28s           holds at: %s; controls: %s" % ("", where, ctl))
        out.append("  %-28s           source: %s%s" % ("", c.source or "-",
                                                     "; reason: " + c.reason if c.reason
                                                     else ""))
        if c.kind == "paper" and not c.fails_at:
            problems.append((c.line, "check %s: a paper check needs a control (fails_at: a "
                             "point where congestion control is off or its key mechanism "
                             "disabled, at which the predicate must be false)" % c.name))
        if c.kind in ("paper", "known_gap") and not c.source:
            problems.append((c.line, "check %s: a %s needs its source (the paper's section "
                             "or figure, e.g. \"Gran et al. 2011, Fig. 3\")"
                             % (c.name, "paper check" if c.kind == "paper" else "known gap")))
    return out, problems
