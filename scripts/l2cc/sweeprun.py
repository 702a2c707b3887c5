# SPDX-License-Identifier: BSD-2-Clause
"""Running a sweep (docs/testbed.md, "Sweeps"): `l2cc-lab sweep` and
`sweep --audit`. sweep.py reads and validates the file and derives every
point; this module runs the points (up, run, down per point, repeat and
try), writes the tables (sweep.csv, sweep.json, sweep.md) after every run,
and judges the checks (checks.py) on the runs that held.
"""

import csv
import json
import math
import os
import shutil
import sys
import time
import traceback

from . import checks as C
from . import experiment as E
from . import expr as X
from . import lab as L
from . import provenance as P
from . import sweepplot as SP
from . import topo as T
from .sweep import (DOCS, MIN_PAPER_REPEAT, PathError, SweepErrors, _Parser, _vstr,
                    get_path, load, metric_value, parse_path, select)


# ---- the table -------------------------------------------------------------------------

def _is_rate(path):
    return C.is_rate_path(path)


def _cell(v, rate=False):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if rate:
            return E.fmt_rate(v)
        return str(v) if isinstance(v, int) else "%.4g" % v
    return _vstr(v).replace("|", "\\|")


def _columns(sw):
    cols = ["label"]
    if sw.explicit and sw.axes:
        cols.append("point")
    cols += [a.name for a in sw.axes]
    return cols


def _stat_cell(st, rate):
    """A point's metric over several runs: the mean, and the range."""
    if not st or st["n"] == 0:
        return "-"
    if st["n"] == 1 or st["min"] == st["max"]:
        return _cell(st["mean"], rate)
    return "%s (%s..%s)" % (_cell(st["mean"], rate), _cell(st["min"], rate),
                            _cell(st["max"], rate))


def _held_cell(r, repeat):
    """The point's fidelity column: held runs of the repeats asked, the
    worst wire time lost among them (% of the window), the tries that did
    not hold, and the most CPU time the hypervisor took in a run (steal)."""
    f = r.get("fidelity") or {}
    cell = "%d/%d" % (f.get("held", 0), repeat)
    if f.get("wire_lost_max_fraction") is not None:
        cell += " lost %.2g%%" % (100 * f["wire_lost_max_fraction"])
    if f.get("not_held"):
        cell += " (%d retried)" % len(f["not_held"])
    if (f.get("steal_max_fraction") or 0) >= C.STEAL_NOTED:
        cell += " steal %.0f%%" % (100 * f["steal_max_fraction"])
    return cell


def table_rows(sw, rows):
    """(header, [[cell, ...]], number of leading text columns) of the
    markdown table: one row per point (checks.point_rows); each metric the
    mean of the runs that held (and their range), the `held` column the
    point's fidelity."""
    head = _columns(sw) + ["held", "status"] + [m.name for m in sw.metrics]
    out = []
    for r in rows:
        cells = [r["label"]]
        if sw.explicit and sw.axes:
            cells.append(r["point"])
        # An axis's label where it has one: `r5`, not the list it stands for.
        cells += [r.get("axis_labels", {}).get(a.name) or _vstr(r["axes"][a.name])
                  for a in sw.axes]
        cells.append(_held_cell(r, sw.repeat))
        cells.append(r["status"])
        cells += [_stat_cell(r["metric_stats"].get(m.name), m.is_rate()) for m in sw.metrics]
        out.append(cells)
    return head, out, len(head) - len(sw.metrics) - 2


def markdown(sw, rows):
    head, body, ntext = table_rows(sw, rows)
    w = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
    # Numbers right-aligned: the metric columns.
    num = [i >= ntext + 2 for i in range(len(head))]

    def line(cells):
        return "| " + " | ".join(c.rjust(w[i]) if num[i] else c.ljust(w[i])
                                 for i, c in enumerate(cells)) + " |"
    sep = "|" + "|".join(("-" * (w[i] + 1) + ":") if num[i] else "-" * (w[i] + 2)
                         for i in range(len(head))) + "|"
    return "\n".join([line(head), sep] + [line(b) for b in body]) + "\n"


def write_tables(sw, out, runs, meta, selected):
    """sweep.json (a row per point, the checks), sweep.csv (a row per run)
    and sweep.md (a row per point) in out, atomically each. Returns the
    checks' results (checks.evaluate) over the points in `selected`."""
    rows = C.point_rows(runs, sw.metrics)
    checks = C.evaluate(sw.checks, rows, selected, [p.label for p in sw.points])
    doc = dict(meta)
    doc.update({"name": sw.name, "description": sw.description,
                "file": os.path.abspath(sw.path),
                "topology": os.path.abspath(sw.bases["topology"]),
                "experiment": os.path.abspath(sw.bases["experiment"]),
                "repeat": sw.repeat, "retries": sw.retries, "fidelity_limits": sw.limits,
                "points": [p.label for p in sw.points],
                "axes": [{"name": a.name, "path": a.text, "values": a.values,
                          "labels": a.labels} for a in sw.axes],
                "metrics": {m.name: m.text for m in sw.metrics},
                "checks": checks, "checks_summary": C.summary(checks) if checks else None,
                "rows": rows})

    def atomic(name, text):
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "w", newline="") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out, name))
    atomic("sweep.json", json.dumps(doc, indent=1) + "\n")

    class _Buf(list):
        def write(self, s):
            self.append(s)
    buf = _Buf()
    wr = csv.writer(buf, lineterminator="\n")
    cols = _columns(sw)
    wr.writerow(cols + ["repeat", "try", "status", "held", "wire_lost_max_fraction",
                        "run_delay_max_s", "steal_fraction"] + [m.name for m in sw.metrics] +
                ["error", "result_dir"])
    for r in runs:
        f = r.get("fidelity") or {}
        wr.writerow([r["label"]] + ([r["point"]] if "point" in cols else []) +
                    [_vstr(r["axes"][a.name]) for a in sw.axes] +
                    [r["repeat"], r.get("try", 1), r["status"], _vstr(f.get("held")),
                     _vstr(f.get("wire_lost_max_fraction")), _vstr(f.get("run_delay_max_s")),
                     _vstr(f.get("machine_steal_fraction"))] +
                    ["" if r["metrics"].get(m.name) is None else _vstr(r["metrics"][m.name])
                     for m in sw.metrics] + [r["error"] or "", r["result_dir"] or ""])
    atomic("sweep.csv", "".join(buf))
    atomic("sweep.md", markdown(sw, rows) + ("\n" + C.markdown(checks) if checks else ""))
    return checks


# ---- running -----------------------------------------------------------------------------

class _Tee:
    """A point's output: to its log file, and to the terminal unless quiet
    (stderr always). Remembers the last line for the table's error column."""

    def __init__(self, log, stream, show):
        self.log, self.stream, self.show = log, stream, show
        self.last = ""
        self._part = ""

    def write(self, s):
        self.log.write(s)
        if self.show:
            self.stream.write(s)
        self._part += s
        lines = [x for x in self._part.split("\n") if x.strip()]
        if lines:
            self.last = lines[-1].strip()
        self._part = self._part.rsplit("\n", 1)[-1]
        return len(s)

    def flush(self):
        self.log.flush()
        self.stream.flush()

    def isatty(self):
        return False


class _Interrupted(Exception):
    pass


def _down(name, rundir, out):
    """lab down; its own failure is reported and is status 1, not raised."""
    try:
        return L.down(L.resolve(name, rundir))
    except Exception as e:
        print("l2cc-lab sweep: lab down: %s" % e, file=out)
        return 1


def _teardown(stop, name, rundir, out):
    """lab down, whatever happens: a Ctrl-C or SIGTERM meanwhile (or just
    before) waits until it is done. Returns (down's status, whether such a
    signal came)."""
    rc, got = None, False
    while rc is None:
        try:
            with stop.held():
                rc = _down(name, rundir, out)
        except KeyboardInterrupt:   # meanwhile; or before the hold, then again
            got = True
    return rc, got


def _run_name(rep, try_):
    """run3 for repeat 3; run3-try2 for its second try (the first did not
    hold)."""
    return "run%d" % rep + ("-try%d" % try_ if try_ > 1 else "")


def _run_point(sw, pt, rep, a, rundir, bindir, out, row, stop):
    """One run of one point into row; raises _Interrupted after Ctrl-C or
    SIGTERM (the lab is down by then). Returns False if the lab could not
    be taken down (the sweep cannot go on)."""
    pdir = os.path.join(out, "points", pt.label)
    res = os.path.join(pdir, _run_name(rep, row["try"]))
    row["result_dir"] = os.path.relpath(res, out)
    t0 = time.monotonic()
    interrupted, down_ok, rc = False, True, None
    with open(os.path.join(pdir, _run_name(rep, row["try"]) + ".log"), "w") as log:
        so, se = sys.stdout, sys.stderr
        tee_out, tee_err = _Tee(log, so, not a.quiet), _Tee(log, se, True)
        sys.stdout, sys.stderr = tee_out, tee_err
        try:
            try:
                try:
                    row["status"] = "failed"    # until it is ok
                    L.up(os.path.join(pdir, "topology.yaml"), rundir, bindir)
                    e = E.load(os.path.join(pdir, "experiment.yaml"))
                    lab = E.find_lab(e, pt.topo.name, rundir)
                    for w in E.check_against_lab(e, lab):
                        print("warning: " + w, file=sys.stderr)
                    rc = E.run_traffic(e, lab, res, bindir, quiet=a.quiet)
                finally:
                    while True:
                        try:
                            drc, sig = _teardown(stop, pt.topo.name, rundir, sys.stderr)
                            break
                        except KeyboardInterrupt:   # before it began: again
                            interrupted = True
                    down_ok = drc == 0
                    interrupted = interrupted or sig
                if rc == 130 or interrupted:
                    raise KeyboardInterrupt
                if rc in (0, 1):
                    rc = E.analyse_and_plot(res, rc, plots=not a.no_plots, quiet=a.quiet)
                if rc == 0:
                    row["status"] = "ok"
                else:
                    row["error"] = tee_err.last or "the run failed (status %s)" % rc
            except KeyboardInterrupt:
                interrupted = True
                row["status"] = "interrupted"
                row["error"] = "interrupted (Ctrl-C or SIGTERM)"
            except (L.LabError, L.UsageError) as err:
                print("l2cc-lab sweep: %s" % err, file=sys.stderr)
                row["error"] = str(err).splitlines()[0]
            except T.FileErrors as err:
                print(str(err), file=sys.stderr)
                row["error"] = err.lines()[0]
            except Exception as err:  # a bug or an OSError: record it, go on
                traceback.print_exc(file=log)
                print("l2cc-lab sweep: unexpected %s: %s" % (type(err).__name__, err),
                      file=sys.stderr)
                row["error"] = "unexpected %s: %s" % (type(err).__name__, err)
        finally:
            sys.stdout, sys.stderr = so, se
    row["seconds"] = round(time.monotonic() - t0, 1)
    _collect(sw, pt, res, row)
    if row["status"] in ("ok", "failed") and (row.get("fidelity") or {}).get("held") is False:
        # Its emulation did not hold: not judged, tried again. A flow that
        # failed on a starved machine (its results say so) is not the
        # scheme's failure either.
        row["status"] = "not-held"
    if not down_ok:
        row["error"] = (row["error"] + "; " if row["error"] else "") + \
            "lab %s could not be taken down" % pt.topo.name
        row["status"] = "failed" if row["status"] == "ok" else row["status"]
    if interrupted:
        raise _Interrupted()
    return down_ok


#: The conversions a metric may apply to a setting written as text.
CONVERT = {"rate": T.parse_rate, "size": T.parse_size, "time": E.parse_time}


def metric_of(m, doc, docs):
    """Metric m of one run: its expression over results.json `doc` and the
    point's derived documents `docs`. Raises PathError or X.ExprError."""
    def resolve(ref):
        steps = parse_path(ref.path)
        if steps[0][1] in DOCS:
            return get_path({steps[0][1]: docs[steps[0][1]]}, steps)
        return metric_value(doc, steps)
    return m.ex.evaluate(resolve, CONVERT)[0]


def _collect(sw, pt, res, row):
    path = os.path.join(res, "results.json")
    if not os.path.isfile(path):
        return
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        row["metric_errors"].append("%s: %s" % (path, e))
        return
    f = doc.get("fidelity") or {}
    row["fidelity"] = {k: f.get(k) for k in ("held", "why", "wire_lost_max_fraction",
                                              "wire_lost_max_port", "run_delay_max_s",
                                              "run_delay_max_daemon", "shortfall_max",
                                              "account_closed", "machine_steal_fraction")}
    for m in sw.metrics:
        try:
            row["metrics"][m.name] = metric_of(m, doc, pt.docs)
        except (PathError, X.ExprError) as e:
            msg = "%s:%d: metric %s: %s (in %s)" % (sw.path, m.line, m.name, e, path)
            print("l2cc-lab sweep: " + msg, file=sys.stderr)
            row["metric_errors"].append(msg)


def _eta(t_start, rows, left):
    """", about N min left" from the runs done so far."""
    done = [r["seconds"] for r in rows if r["seconds"]]
    if not done or left <= 0:
        return ""
    return ", about %.0f min left" % max(1, left * (sum(done) / len(done)) / 60)


def run(sw, a, points, rundir, bindir):
    """Run the points; returns the exit status. From here on Ctrl-C and
    SIGTERM are one orderly stop (L.StopSignals)."""
    with L.StopSignals() as stop:
        return _run(sw, a, points, rundir, bindir, stop)


def _prepare_out(sw, a, points):
    """The sweep's directory, new or empty, with the sweep file and every
    point's derived files: all of it before any lab is touched. Raises
    UsageError (or OSError)."""
    out = os.path.abspath(a.out or E.default_out("sweeps", sw.name))
    E.make_result_dir(out)
    shutil.copyfile(sw.path, os.path.join(out, "sweep.yaml"))
    for pt in points:
        pdir = os.path.join(out, "points", pt.label)
        os.makedirs(pdir, exist_ok=True)
        for d in DOCS:
            with open(os.path.join(pdir, d + ".yaml"), "w") as f:
                f.write(pt.texts[d])
    return out


def _run(sw, a, points, rundir, bindir, stop):
    name = points[0].topo.name
    why = []
    for pt in points:
        why.extend(w for w in L.up_reasons(pt.topo, rundir) if w not in why)
    rd = "" if rundir == L.default_rundir(name) else " --rundir " + rundir
    if why and not a.replace:
        raise L.LabError("lab %s is up already (%s). A sweep brings the lab up and takes it "
                         "down for every point itself: take it down first (`l2cc-lab down "
                         "%s%s`) or run the sweep with --replace" % (name, "; ".join(why),
                                                                     name, rd))
    out = _prepare_out(sw, a, points)

    rows, plan = [], []         # a row per try; sweep.json has a row per point
    selected = [pt.label for pt in points]

    def new_row(pt, rep, try_):
        return {"label": pt.label, "point": pt.point,
                "axes": {k: v[0] for k, v in pt.axes.items()},
                "axis_labels": {k: v[1] for k, v in pt.axes.items()},
                "repeat": rep, "try": try_, "status": "not-run", "metrics": {},
                "metric_errors": [], "error": None, "result_dir": None,
                "seconds": None, "fidelity": None,
                "set": {o.text: o.value for o in pt.overrides}}
    for pt in points:
        for rep in range(1, sw.repeat + 1):
            rows.append(new_row(pt, rep, 1))
            plan.append((pt, rep))
    meta = {"out": out, "lab": name, "rundir": rundir, "argv": sys.argv,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "finished": None,
            "status": "running", "provenance": P.collect(bindir)}
    write_tables(sw, out, rows, meta, selected)

    status = "done"
    try:
        if why:
            L.log("lab %s is up (%s): taking it down first (--replace)" % (name, "; ".join(why)))
            drc, sig = _teardown(stop, name, rundir, sys.stderr)
            if drc != 0:
                status = "failed"
                raise L.LabError("lab %s could not be taken down; see above" % name)
            if sig:
                raise KeyboardInterrupt
        L.log("sweep %s: %d point%s x %d run%s on lab %s; results in %s"
              % (sw.name, len(points), "s" if len(points) > 1 else "", sw.repeat,
                 "s" if sw.repeat > 1 else "", name, out))
        t_start = time.monotonic()
        i = 0
        while i < len(plan):
            pt, rep = plan[i]
            row = next(r for r in rows if r["label"] == pt.label and r["repeat"] == rep and
                       r["status"] == "not-run")
            L.log("[%d/%d] point %s%s%s: up, run, down%s"
                  % (i + 1, len(plan), pt.label, " run %d" % rep if sw.repeat > 1 else "",
                     " (try %d of %d)" % (row["try"], sw.retries + 1) if row["try"] > 1
                     else "", _eta(t_start, rows, len(plan) - i)))
            try:
                ok = _run_point(sw, pt, rep, a, rundir, bindir, out, row, stop)
            except _Interrupted:
                status = "interrupted"
                break
            finally:
                write_tables(sw, out, rows, meta, selected)
            L.log("[%d/%d] point %s: %s in %.0f s%s"
                  % (i + 1, len(plan), pt.label, row["status"], row["seconds"] or 0,
                     (": " + (row["fidelity"] or {}).get("why", "")) if
                     row["status"] == "not-held" else
                     (": " + row["error"]) if row["error"] else
                     "".join(", %s %s" % (m.name, _cell(row["metrics"].get(m.name),
                                                         m.is_rate()))
                             for m in sw.metrics[:4])))
            if not ok:
                status = "failed"
                print("l2cc-lab sweep: lab %s could not be taken down: stopping the sweep "
                      "(see %s)" % (name, os.path.join(out, row["result_dir"] + ".log")),
                      file=sys.stderr)
                break
            if row["status"] == "not-held" and row["try"] <= sw.retries:
                # Tried again at once, on the same lab name: the next try
                # is this repeat's, not the next point's.
                rows.insert(rows.index(row) + 1, new_row(pt, rep, row["try"] + 1))
                continue
            i += 1
    except KeyboardInterrupt:        # between runs
        status = "interrupted"
    finally:
        with stop.held():           # the table says how it ended, whatever comes
            meta["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            meta["status"] = status
            checks = write_tables(sw, out, rows, meta, selected)
    if status == "interrupted":
        print("l2cc-lab sweep: interrupted; the lab is down, the table has what was run",
              file=sys.stderr)
    made = None
    if sw.plot:
        try:
            made = SP.plot(sw, rows, out)
        except ImportError as err:
            print("l2cc-lab sweep: no plot (%s): apt-get install python3-matplotlib"
                  % err, file=sys.stderr)
    print()
    print("sweep %s (%s):" % (sw.name, status))
    sys.stdout.write(markdown(sw, C.point_rows(rows, sw.metrics)))
    for r in rows:
        if r["status"] == "not-held":
            print("%s %s: did not hold: %s" % (r["label"], os.path.basename(r["result_dir"]),
                                               (r["fidelity"] or {}).get("why")))
        elif r["error"]:
            print("%s%s: %s" % (r["label"], " run %d" % r["repeat"] if sw.repeat > 1 else "",
                                r["error"]))
    prows = C.point_rows(rows, sw.metrics)
    for r in prows:
        if r["status"] == "inconclusive":
            print("%s: inconclusive: this machine could not hold the lab (%s)"
                  % (r["label"], C._not_held_why(r)))
    merrs = [m for r in rows for m in r["metric_errors"]]
    if merrs:
        print("l2cc-lab sweep: %d metric%s could not be read (sweep.json: rows[].metric_errors), "
              "the first: %s" % (len(merrs), "s" if len(merrs) > 1 else "", merrs[0]),
              file=sys.stderr)
    for line in C.lines(checks):
        print(line)
    print("table: %s/sweep.{csv,json,md}%s" % (out, ", plot: " + made if made else ""))
    if status == "interrupted":
        return 130
    failed = [c["name"] for c in checks if c["ok"] is False]
    inconclusive = [c["name"] for c in checks if c["verdict"] == C.INCONCLUSIVE]
    if failed:
        print("l2cc-lab sweep: check%s %s failed (%s)"
              % ("s" if len(failed) > 1 else "", ", ".join(failed),
                 "--report-only: not in the exit status" if a.report_only
                 else "sweep.json: checks"), file=sys.stderr)
    rc = C.exit_status(checks, prows, broken=status != "done", report_only=a.report_only)
    if rc == C.EXIT_INCONCLUSIVE:
        print("l2cc-lab sweep: inconclusive: %s (runs that did not hold are not judged; "
              "exit status 3)" % (", ".join(inconclusive) or "a point never held"),
              file=sys.stderr)
    return rc


# ---- command line ----------------------------------------------------------------------

def cmd_audit(files):
    """`l2cc-lab sweep --audit FILE...`: every check of every sweep with its
    kind, where it holds, its controls and its source, from the files
    alone (no lab, no binaries). Status 1 if a paper check has no control
    or no source (or a known gap no source or reason), 2 if a file does not
    parse."""
    bad = rc = 0
    for path in files:
        try:
            sw = _Parser(path).parse()
        except SweepErrors as err:
            for line in err.lines():
                print(line, file=sys.stderr)
            rc = 2
            continue
        lines, problems = C.audit(sw.checks, [p.label for p in sw.points])
        kinds = {k: sum(1 for c in sw.checks if c.kind == k) for k in C.KINDS}
        print("%s: sweep %s, %d point%s x %d run%s: %d paper check%s, %d invariant%s, %d known "
              "gap%s%s" % (path, sw.name, len(sw.points), "s" if len(sw.points) != 1 else "",
                           sw.repeat, "s" if sw.repeat != 1 else "",
                           kinds["paper"], "s" if kinds["paper"] != 1 else "",
                           kinds["invariant"], "s" if kinds["invariant"] != 1 else "",
                           kinds["known_gap"], "s" if kinds["known_gap"] != 1 else "",
                           "" if sw.checks else " (no checks)"))
        for line in lines:
            print(line)
        if sw.checks and sw.repeat < MIN_PAPER_REPEAT and kinds["paper"]:
            problems.append((sw.lines.get("repeat") or 1,
                             "repeat %d: a sweep of paper results runs each point at least "
                             "%d times (sweep --repeat lowers it for a quick look)"
                             % (sw.repeat, MIN_PAPER_REPEAT)))
        for line, msg in problems:
            print("%s:%s: %s" % (path, line, msg), file=sys.stderr)
        bad += len(problems)
    if rc:
        return rc
    print("audit: %d file%s, %s" % (len(files), "s" if len(files) != 1 else "",
                                    "%d problem%s" % (bad, "s" if bad != 1 else "") if bad
                                    else "every paper check has a control and a source"))
    return 1 if bad else 0


def cmd_sweep(a):
    """`l2cc-lab sweep` (its options are declared in cli.py's COMMANDS)."""
    if a.audit:
        return cmd_audit(a.sweep)
    if len(a.sweep) != 1:
        print("l2cc-lab sweep: one sweep file at a time (several only with --audit)",
              file=sys.stderr)
        return 2
    a.sweep = a.sweep[0]
    # numpy (results.py) names the links a metric can select; the run needs
    # matplotlib too. May re-run the command: before any output.
    E.scientific_python()
    bindir = L.bindir_of(a.bin)
    try:
        sw, notes = load(a.sweep, a.rundir, bindir)
        if a.repeat is not None:
            sw.repeat = a.repeat
        points = select(sw, a.points)
    except SweepErrors as err:
        for line in err.lines():
            print(line, file=sys.stderr)
        return 2
    except L.UsageError as err:
        print("l2cc-lab sweep: %s" % err, file=sys.stderr)
        return 2
    except OSError as err:
        print("l2cc-lab sweep: %s" % _oserror(err), file=sys.stderr)
        return 2
    for n in notes:
        print("note: " + n)
    warned = set()
    for pt in points:
        for w in pt.warnings:
            if w not in warned:
                warned.add(w)
                print("warning: point %s: %s" % (pt.label, w), file=sys.stderr)
    t = points[0].topo
    rundir = os.path.abspath(a.rundir or L.default_rundir(t.name))
    if a.check:
        e = points[0].exp
        print("%s: OK, sweep %s: %d point%s x %d run%s (%d selected), lab %s (prefix %s), "
              "experiment %s of %s each"
              % (a.sweep, sw.name, len(sw.points), "s" if len(sw.points) > 1 else "",
                 sw.repeat, "s" if sw.repeat > 1 else "", len(points), t.name, t.prefix,
                 e.name, E.fmt_time(e.duration)))
        w = max(len(p.label) for p in points)
        for pt in points:
            print("  %-*s  %s" % (w, pt.label, ", ".join("%s=%s" % (o.text, _vstr(o.value))
                                                         for o in pt.overrides) or "(base)"))
        if sw.metrics:
            print("metrics: " + ", ".join("%s (%s)" % (m.name, m.text) for m in sw.metrics))
        if sw.checks:
            print("checks:")
            for line in C.audit(sw.checks)[0]:
                print(line)
        if os.geteuid() == 0 or os.path.isdir(rundir):
            why = L.up_reasons(t, rundir)
            if why:
                print("note: lab %s is up now (%s): the sweep would refuse to start without "
                      "--replace" % (t.name, "; ".join(why)))
        return 0
    if os.geteuid() != 0:
        print("l2cc-lab sweep: needs root (namespaces, XDP, AF_XDP)", file=sys.stderr)
        return 1
    try:
        return run(sw, a, points, rundir, bindir)
    except L.UsageError as err:
        print("l2cc-lab sweep: %s" % err, file=sys.stderr)
        return 2
    except OSError as err:      # the sweep's directory: --out
        print("l2cc-lab sweep: %s" % _oserror(err), file=sys.stderr)
        return 2
    except L.LabError as err:
        print("l2cc-lab sweep: %s" % err, file=sys.stderr)
        return 1


def _oserror(err):
    """'PATH: what went wrong', without Python's [Errno N]."""
    if err.filename and err.strerror:
        return "%s: %s" % (err.filename, err.strerror)
    return str(err)
