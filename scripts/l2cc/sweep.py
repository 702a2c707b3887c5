# SPDX-License-Identifier: BSD-2-Clause
"""Parameter sweeps: `l2cc-lab sweep SWEEP.yaml` (docs/testbed.md, "Sweeps").

A sweep file names a base topology and a base experiment and the points to
run: explicit points (a label and overrides), the cartesian product of grid
axes, or both (every explicit point at every grid combination). A point's
overrides are dotted paths into the two YAML documents; applied to copies
of the base files they give the point's derived topology and experiment.

Everything is validated before any lab is brought up: the sweep file, then
every point's derived files through the loaders `up` and `run` use
(lab.prepare(), which includes the daemons' own --check, experiment.load()
and check_against_lab()), then the metrics against each point's lab and
experiment. Every problem is reported as FILE:LINE: one that comes from an
override at the override's line in the sweep file, one in a part of a base
file that the point did not change at that line of the base file.

Running the points is sweeprun.py's. Per point and repeat, one after
another on the same lab name:
lab.up(), experiment.run_traffic(), lab.down() (always: also on an error,
Ctrl-C or SIGTERM), experiment.analyse_and_plot(), and the metrics (paths
into results.json, or expressions over them and the point's settings:
expr.py) into one table (sweep.csv a row per run; sweep.json and sweep.md a
row per point, the mean over its runs; rewritten after every run) and one
plot (sweep.png). Last, the checks (checks.py): each with its value and
verdict, into sweep.json; a failed one makes the exit status 1.
"""

import copy
import fnmatch
import itertools
import math
import os
import re
import tempfile

import yaml

from . import checks as C
from . import experiment as E
from . import expr as X
from . import lab as L
from . import topo as T

# ---- the file format -------------------------------------------------------------

TOP_KEYS = ("name", "description", "topology", "experiment", "repeat", "fidelity", "set",
            "points", "grid", "metrics", "checks", "plot")
POINT_KEYS = ("label", "set")
AXIS_KEYS = ("path", "values", "labels")
PLOT_KEYS = ("x", "y", "series", "log_y", "kind")
METRIC_KEYS = ("expr", "label", "unit", "log")
#: The sweep's `fidelity:` keys (docs/testbed.md, "The fidelity gate"):
#: the limits go to every point's experiment (results.json judges each run
#: by them), retries is the sweep's own.
FIDELITY_KEYS = ("max_wire_lost", "max_shortfall", "retries")
DEFAULT_RETRIES = 2
MAX_RETRIES = 10
DOCS = ("topology", "experiment")

#: Paths the sweep sets itself: every point runs on the same lab name, one
#: after another, and each derived experiment names its derived topology.
OWNED = {("topology", "name"): "every point keeps the base topology's lab name",
         ("topology", "prefix"): "every point keeps the base topology's prefix",
         ("experiment", "topology"): "each point's experiment names the point's derived "
                                     "topology"}

#: Columns of the table that axes and metrics cannot be called.
RESERVED = ("label", "point", "repeat", "runs", "status", "error", "result_dir")

#: The top-level keys of results.json (results.analyse()): a metric's path
#: starts with one of them.
RESULT_KEYS = ("experiment", "lab", "result_dir", "t0", "duration_s", "window_s", "status",
               "aborted", "sample_interval_s", "series_gaps", "flows", "fairness", "groups",
               "ports", "rate_check", "links", "fair_share", "phases", "fabric_drops",
               "host_edge_drops", "flow_control", "notifications", "fct", "cpu", "fidelity",
               "account", "warnings")

LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
COLUMN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
MAX_REPEAT = 100
#: Runs per point a sweep of paper results asks for at least (the audit).
MIN_PAPER_REPEAT = 3
MAX_POINTS = 10000

STATUSES = ("ok", "failed", "interrupted", "not-run")


class PathError(Exception):
    """A path that cannot be set or read: the message says why."""


class SweepErrors(Exception):
    """Problems in the sweep file or in what its points derive, each
    (file, line, message), printed as FILE:LINE: message."""

    def __init__(self, errs, first=None):
        super().__init__("sweep errors")
        self.errs = errs
        self.first = first          # the sweep file: its problems first

    def lines(self):
        order = {self.first: 0} if self.first else {}
        for f, _, _ in self.errs:
            order.setdefault(f, len(order))
        return ["%s:%s: %s" % (f, ln or 1, m) for f, ln, m in
                sorted(self.errs, key=lambda e: (order[e[0]], e[1] or 0))]


# ---- dotted paths ----------------------------------------------------------------------

_FIRST_RE = re.compile(r"[^.\[\]]+")
_NEXT_RE = re.compile(r"\.([^.\[\]]+)|\[([^\[\]]+)\]")


def parse_path(text):
    """'topology.defaults.law.law', 'links[B>C].utilisation' -> steps, a list
    of ("key", K) for .K and ("sel", S) for [S]. PathError if malformed."""
    if not isinstance(text, str) or not text:
        raise PathError("expected a dotted path such as topology.defaults.buffer, got %s"
                        % _show(text))
    m = _FIRST_RE.match(text)
    if not m:
        raise PathError('path "%s" must start with a key' % text)
    steps = [("key", m.group(0))]
    pos = m.end()
    while pos < len(text):
        m = _NEXT_RE.match(text, pos)
        if not m:
            raise PathError('path "%s": cannot read "%s", expected .KEY or [ID]'
                            % (text, text[pos:]))
        steps.append(("key", m.group(1)) if m.group(1) is not None else ("sel", m.group(2)))
        pos = m.end()
    return steps


def path_str(steps):
    out = ""
    for kind, tok in steps:
        out += "[%s]" % tok if kind == "sel" else ("." if out else "") + str(tok)
    return out


def _show(v):
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if v is None:
        return "empty"
    return '"%s"' % _vstr(v)


def _ids(lst):
    out = []
    for i, x in enumerate(lst):
        if isinstance(x, dict) and ("id" in x or "name" in x):
            out.append(str(x.get("id", x.get("name"))))
        else:
            out.append(str(i))
    return out


def _few(names, n=12):
    names = [str(x) for x in names]
    return ", ".join(names[:n]) + (", ..." if len(names) > n else "") if names else "(none)"


def _select(lst, tok):
    """Index of the element of list `lst` that [tok] selects: the mapping
    whose id (else name) is tok, else element number tok (from 0)."""
    for key in ("id", "name"):
        for i, x in enumerate(lst):
            if isinstance(x, dict) and key in x and str(x[key]) == tok:
                return i
    if tok.isdigit() and int(tok) < len(lst):
        return int(tok)
    return None


def _list_index(lst, kind, tok, where):
    """The index that step (kind, tok) selects in list lst; PathError for a
    .key step or an element that is not there."""
    if kind != "sel":
        raise PathError("%s is a list: select an element with [ID] (its id or name) "
                        "or [N], not .%s" % (where, tok))
    j = _select(lst, tok)
    if j is None:
        raise PathError("%s has no element [%s], expected one of: %s"
                        % (where, tok, _few(_ids(lst))))
    return j


def set_path(doc, steps, value, root=None):
    """doc[steps] = value, creating mappings on the way (an empty or
    missing key becomes one). [S] on a list selects an element (_select).
    Returns the concrete path (keys and list indices). PathError if a step
    meets a scalar or a list element that is not there; `root` names doc in
    its message."""
    cur, done = doc, []
    for i, (kind, tok) in enumerate(steps):
        last = i == len(steps) - 1
        where = path_str(([("key", root)] if root else []) + steps[:i]) or "the document"
        if isinstance(cur, dict):
            key = tok
        elif isinstance(cur, list):
            key = _list_index(cur, kind, tok, where)
        else:
            raise PathError("%s is %s, not a mapping: nothing can be set below it"
                            % (where, _show(cur)))
        done.append(key)
        if last:
            cur[key] = value
        else:
            if isinstance(cur, dict) and cur.get(key) is None or \
                    isinstance(cur, list) and cur[key] is None:
                cur[key] = {}
            cur = cur[key]
    return tuple(done)


def get_path(doc, steps, root="results.json"):
    """The value at steps in doc (plain JSON); PathError naming what is there."""
    cur = doc
    for i, (kind, tok) in enumerate(steps):
        where = path_str(steps[:i]) or root
        if isinstance(cur, dict):
            if tok not in cur:
                raise PathError("%s has no %s, expected one of: %s"
                                % (where, "key " + tok if kind == "key" else "[%s]" % tok,
                                   _few(cur.keys())))
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_list_index(cur, kind, tok, where)]
        else:
            raise PathError("%s is %s, not a mapping or a list: nothing below it"
                            % (where, _show(cur)))
    return cur


def metric_value(doc, steps):
    """A metric: the value at steps; a mapping with a `total` (fabric_drops,
    host_edge_drops) stands for its total. PathError for a missing key or a
    mapping or list that is not a number."""
    v = get_path(doc, steps)
    if isinstance(v, dict) and "total" in v:
        return v["total"]
    if isinstance(v, dict):
        raise PathError("%s is a mapping, expected a number: add one of its keys (%s)"
                        % (path_str(steps), _few(v.keys())))
    if isinstance(v, list):
        raise PathError("%s is a list, expected a number: select an element with [ID] (%s)"
                        % (path_str(steps), _few(_ids(v))))
    return v


def _vstr(v):
    """A value as a table cell or a label: YAML booleans as yes/no (the
    daemons' spelling), collections in YAML's flow style."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return yaml.safe_dump(v, default_flow_style=True, sort_keys=False,
                              width=10**6).strip()
    return str(v)


def _label_of(v):
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", _vstr(v)).strip("-.")
    return s or "x"


def _plain(x):
    """YMap/YSeq (with line numbers) -> plain dicts and lists (for yaml.safe_dump)."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x


# ---- the model -------------------------------------------------------------------------

class Override:
    """One `set` entry: `doc` (topology/experiment), `steps` inside it."""

    def __init__(self, text, steps, value, line, origin):
        self.text = text
        self.doc = steps[0][1]
        self.steps = steps[1:]
        self.value = value
        self.line = line
        self.origin = origin        # "set", "point", "axis NAME": for messages


class Axis:
    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.text = None
        self.target = None          # an Override without its value
        self.values = []
        self.labels = []
        self.vlines = []


class Point:
    """One point of the sweep: its overrides and, once derived and
    validated, its files' text, topology, lab document and experiment."""

    def __init__(self, label, point, axes, overrides, line):
        self.label = label
        self.point = point          # the explicit point's label, or None
        self.axes = axes            # {axis name: (value, label)}
        self.overrides = overrides  # [Override], in the order applied
        self.line = line
        self.texts = {}             # doc -> derived YAML text
        self.applied = {}           # doc -> [(concrete path, Override)]
        self.topo = None
        self.lab = None
        self.exp = None
        self.docs = {}              # doc -> the derived document (plain)
        self.warnings = []


class Sweep:
    def __init__(self, path):
        self.path = path
        self.name = None
        self.description = None
        self.bases = {}             # doc -> path of the base file
        self.base_docs = {}         # doc -> YMap
        self.repeat = 1
        self.retries = DEFAULT_RETRIES
        self.limits = {}            # fidelity limits for every point's experiment
        self.points = []
        self.axes = []
        self.explicit = []          # labels of the explicit points
        self.metrics = []           # [checks.Metric]
        self.checks = []            # [checks.Check]
        self.plot = None            # {"x": ..., "y": [...], "series": [...]}
        self.lines = {}


# ---- parsing the sweep file -----------------------------------------------------------

class _Parser:
    def __init__(self, path):
        self.path = path
        self.errs = []

    def err(self, line, msg):
        self.errs.append((self.path, line, msg))

    def unknown(self, m, allowed, where):
        for k in m:
            if k not in allowed:
                self.err(m.kline(k), 'unknown key "%s" in %s, expected one of: %s'
                         % (k, where, ", ".join(allowed)))

    def override(self, text, value, line, origin):
        try:
            steps = parse_path(text)
        except PathError as e:
            self.err(line, "%s: %s" % (origin, e))
            return None
        if steps[0][1] not in DOCS or len(steps) < 2:
            self.err(line, '%s: path "%s" must start with topology. or experiment. and name '
                     'a key inside it' % (origin, text))
            return None
        owned = OWNED.get(tuple(tok for _, tok in steps[:2]))
        if owned and len(steps) == 2:
            self.err(line, '%s: %s is set by the sweep (%s), expected it left out'
                     % (origin, text, owned))
            return None
        return Override(text, steps, _plain(value), line, origin)

    def set_map(self, m, line, origin):
        if m is None:
            return []
        if not isinstance(m, T.YMap):
            self.err(line, "%s: expected a mapping of dotted paths to values, e.g. "
                           "{topology.defaults.buffer: 4frames}" % origin)
            return []
        out = []
        for k, v in m.items():
            o = self.override(k, v, m.kline(k), origin)
            if o:
                out.append(o)
        return out

    def parse(self):
        try:
            doc, errs = T.read_yaml(self.path)
        except T.TopoError as e:
            raise SweepErrors([(self.path, ln, "expected a sweep: a mapping with topology, "
                                "experiment and points or grid" if "empty file" in m else m)
                               for ln, m in e.errors])
        self.errs.extend((self.path, ln, m) for ln, m in errs)
        sw = Sweep(self.path)
        if not isinstance(doc, T.YMap):
            self.err(getattr(doc, "line", 1), "expected a mapping with topology, experiment "
                     "and points or grid")
            raise SweepErrors(self.errs)
        self.unknown(doc, TOP_KEYS, "the sweep")
        sw.lines = {k: doc.kline(k) for k in doc}

        name = doc.get("name")
        if name is None:
            name = os.path.splitext(os.path.basename(self.path))[0]
        if not isinstance(name, str) or not E.NAME_RE.match(name):
            self.err(doc.vline("name"), 'name "%s": expected up to 64 letters, digits, _, ., - '
                     '(it names the result directory)' % (name,))
            name = "sweep"
        sw.name = name
        if "description" in doc:
            sw.description = str(doc["description"])

        here = os.path.dirname(self.path)
        for d in DOCS:
            v = doc.get(d)
            if not isinstance(v, str) or not v:
                self.err(doc.vline(d) if d in doc else doc.line,
                         "%s %s, expected the base %s file (relative to the sweep file)"
                         % (d, "is missing" if d not in doc else "is not a file name", d))
                continue
            p = os.path.normpath(v if os.path.isabs(v) else os.path.join(here, v))
            if not os.path.isfile(p):
                self.err(doc.vline(d), "%s: %s does not exist" % (d, p))
                continue
            sw.bases[d] = p

        if "repeat" in doc:
            r = doc["repeat"]
            if isinstance(r, bool) or not isinstance(r, int) or not 1 <= r <= MAX_REPEAT:
                self.err(doc.vline("repeat"), "repeat: expected runs per point, 1..%d"
                         % MAX_REPEAT)
            else:
                sw.repeat = r

        if "fidelity" in doc:
            self.fidelity(sw, doc)
        common = self.set_map(doc.get("set"), doc.vline("set"), "set")
        for k, v in sw.limits.items():
            # Every point's experiment judges its runs by the sweep's limits.
            common.append(Override("experiment.fidelity.%s" % k,
                                   [("key", "experiment"), ("key", "fidelity"), ("key", k)],
                                   v, doc.vline("fidelity"), "fidelity"))
        explicit = self.points(sw, doc)
        self.grid(sw, doc)
        self.expand(sw, doc, common, explicit)
        self.metrics(sw, doc)
        if "checks" in doc:
            self.checks(sw, doc)
        if "plot" in doc:
            self.plot(sw, doc)
        if self.errs:
            raise SweepErrors(self.errs)
        return sw

    def fidelity(self, sw, doc):
        f = doc["fidelity"]
        line = doc.vline("fidelity")
        if not isinstance(f, T.YMap):
            self.err(line, "fidelity: expected {max_wire_lost: 1%%, max_shortfall: 2%%, "
                           "retries: %d}" % DEFAULT_RETRIES)
            return
        self.unknown(f, FIDELITY_KEYS, "fidelity")
        for k in ("max_wire_lost", "max_shortfall"):
            if k in f:
                v = E.parse_fraction(f[k])
                if v is None:
                    self.err(f.vline(k), "fidelity: %s: expected a fraction of the window, "
                                         "0..1 or a percentage such as 1%%" % k)
                else:
                    sw.limits[k] = v
        if "retries" in f:
            r = f["retries"]
            if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= MAX_RETRIES:
                self.err(f.vline("retries"), "fidelity: retries: expected how many more "
                                             "tries a run that did not hold gets, 0..%d"
                                             % MAX_RETRIES)
            else:
                sw.retries = r

    def points(self, sw, doc):
        """[(label, [Override], line)] of `points:`, or [None] without it."""
        if "points" not in doc:
            return [None]
        ps = doc["points"]
        if not isinstance(ps, T.YSeq) or not ps:
            self.err(doc.vline("points"), "points: expected a list of {label: L, set: {PATH: "
                     "VALUE, ...}}")
            return [None]
        out, seen = [], {}
        for i, p in enumerate(ps):
            line = ps.ilines[i]
            if not isinstance(p, T.YMap):
                self.err(line, "point %d: expected {label: L, set: {PATH: VALUE, ...}}"
                         % (i + 1))
                continue
            self.unknown(p, POINT_KEYS, "point %d" % (i + 1))
            label = p.get("label")
            if label is None or isinstance(label, (bool, dict, list)) or \
                    not LABEL_RE.match(str(label)):
                self.err(p.vline("label") if "label" in p else line,
                         "point %d: label %s, expected up to 64 letters, digits, _, ., - (it "
                         "names the point's directory)"
                         % (i + 1, "is missing" if label is None else '"%s"' % _vstr(label)))
                continue
            label = str(label)
            if label in seen:
                self.err(p.vline("label"), 'point label "%s" is used twice (also line %d)'
                         % (label, seen[label]))
                continue
            seen[label] = p.vline("label")
            out.append((label, self.set_map(p.get("set"), p.vline("set"),
                                            "point %s" % label), line))
            sw.explicit.append(label)
        return out or [None]

    def grid(self, sw, doc):
        if "grid" not in doc:
            return
        g = doc["grid"]
        if not isinstance(g, T.YMap) or not g:
            self.err(doc.vline("grid"), "grid: expected a mapping of axis name to {path: PATH, "
                     "values: [V1, V2, ...]}")
            return
        for name, spec in g.items():
            line = g.kline(name)
            if not COLUMN_RE.match(name) or name in RESERVED:
                self.err(line, 'grid: axis name "%s" is not usable, expected a letter then up '
                         'to 63 letters, digits, _, ., -, and none of: %s'
                         % (name, ", ".join(RESERVED)))
                continue
            where = "grid axis %s" % name
            if not isinstance(spec, T.YMap):
                self.err(g.vline(name), "%s: expected {path: PATH, values: [V1, V2, ...]}"
                         % where)
                continue
            self.unknown(spec, AXIS_KEYS, where)
            ax = Axis(name, line)
            if "path" not in spec:
                self.err(line, "%s: path is missing, expected the dotted path the values go "
                               "to, e.g. topology.defaults.buffer" % where)
            else:
                o = self.override(spec["path"], None, spec.vline("path"), where)
                if o:
                    ax.text, ax.target = o.text, o
            vals = spec.get("values")
            if not isinstance(vals, T.YSeq) or not vals:
                self.err(spec.vline("values") if "values" in spec else line,
                         "%s: values: expected a non-empty list" % where)
                continue
            ax.values = [_plain(v) for v in vals]
            ax.vlines = list(vals.ilines)
            labels = spec.get("labels")
            if labels is None:
                ax.labels = [_label_of(v) for v in ax.values]
            elif not isinstance(labels, T.YSeq) or len(labels) != len(vals) or \
                    not all(isinstance(x, (str, int, float)) and not isinstance(x, bool)
                            and LABEL_RE.match(str(x)) for x in labels):
                self.err(spec.vline("labels"), "%s: labels: expected one label per value (%d), "
                         "each up to 64 letters, digits, _, ., -" % (where, len(vals)))
                continue
            else:
                ax.labels = [str(x) for x in labels]
            seen, dup = {}, False
            for i, (lab, vl) in enumerate(zip(ax.labels, ax.vlines)):
                if lab in seen:
                    self.err(vl, '%s: values %d and %d both have the label "%s"%s'
                             % (where, seen[lab] + 1, i + 1, lab, "" if "labels" in spec
                                else ": give the axis labels: [...]"))
                    dup = True
                seen.setdefault(lab, i)
            if ax.target and not dup:
                sw.axes.append(ax)

    def expand(self, sw, doc, common, explicit):
        # Counted before the product is made: a few long axes are a lot.
        n = len(explicit) * math.prod(len(a.values) for a in sw.axes)
        if n > MAX_POINTS:
            self.err(doc.line, "the sweep has %d points, expected at most %d" % (n, MAX_POINTS))
            return
        combos = list(itertools.product(*[range(len(a.values)) for a in sw.axes]))
        seen = {}
        for p in explicit:
            for combo in combos:
                parts, ovs, axes = [], list(common), {}
                line = doc.line
                if p is not None:
                    parts.append(p[0])
                    ovs += p[1]
                    line = p[2]
                for ax, i in zip(sw.axes, combo):
                    parts.append(ax.labels[i])
                    o = ax.target
                    ovs.append(Override(ax.text, [("key", o.doc)] + o.steps, ax.values[i],
                                        ax.vlines[i], "grid axis %s" % ax.name))
                    axes[ax.name] = (ax.values[i], ax.labels[i])
                if p is None and not sw.axes:
                    line = doc.line
                label = "_".join(parts) or "base"
                if label in seen:
                    self.err(line, 'two points are both labelled "%s": change a point label or '
                             'an axis label' % label)
                    continue
                seen[label] = line
                sw.points.append(Point(label, p[0] if p else None, axes, ovs, line))

    def metrics(self, sw, doc):
        if "metrics" not in doc:
            return
        m = doc["metrics"]
        if not isinstance(m, T.YMap):
            self.err(doc.vline("metrics"), "metrics: expected a mapping of column name to a "
                     "path into results.json or an expression, e.g. {victim_bps: "
                     "groups.victim.sum_bps}")
            return
        axes = {a.name for a in sw.axes}
        for name, spec in m.items():
            line = m.kline(name)
            text, opts = spec, {}
            if isinstance(spec, T.YMap):
                self.unknown(spec, METRIC_KEYS, "metric %s" % name)
                text = spec.get("expr")
                for k in ("label", "unit"):
                    if k in spec and (not isinstance(spec[k], str) or not spec[k].strip()):
                        self.err(spec.vline(k), "metric %s: %s: expected a few words" % (name, k))
                    elif k in spec:
                        opts[k] = spec[k].strip()
                if "log" in spec:
                    if not isinstance(spec["log"], bool):
                        self.err(spec.vline("log"), "metric %s: log: expected yes or no" % name)
                    else:
                        opts["log"] = spec["log"]
            if not COLUMN_RE.match(name) or name in RESERVED or name in axes:
                self.err(line, 'metric name "%s" is not usable, expected a letter then up to '
                         '63 letters, digits, _, ., -, not an axis name and none of: %s'
                         % (name, ", ".join(RESERVED)))
                continue
            try:
                ex = C.read_expr(text)
                for ref in ex.refs:
                    if ref.name:
                        raise X.ExprError("%s names a point: that is for checks; a metric "
                                          "is read from each run's results" % ref.text)
                    steps = parse_path(ref.path)
                    if steps[0][1] not in RESULT_KEYS + DOCS:
                        raise X.ExprError('results.json has no %s, expected a path starting '
                                          'with one of: %s, or a setting of the point '
                                          '(topology.KEY, experiment.KEY)'
                                          % (steps[0][1], ", ".join(RESULT_KEYS)))
            except (X.ExprError, PathError) as e:
                self.err(m.vline(name), "metric %s: %s" % (name, e))
                continue
            sw.metrics.append(C.Metric(name, text, ex, m.vline(name), **opts))

    def checks(self, sw, doc):
        cs = doc["checks"]
        if not isinstance(cs, T.YSeq) or not cs:
            self.err(doc.vline("checks"), "checks: expected a list of {name: NAME, expr: "
                     "\"METRIC >= VALUE\", holds_at: [POINT], fails_at: [CONTROL], source: "
                     "\"PAPER, FIG.\"}")
            return
        sw.checks = C.parse_checks(cs, sw.metrics, [p.label for p in sw.points], self.err)

    def plot(self, sw, doc):
        p = doc["plot"]
        line = doc.vline("plot")
        if not isinstance(p, T.YMap):
            self.err(line, "plot: expected {x: AXIS, y: [METRIC, ...], series: AXIS, "
                           "log_y: [METRIC, ...], kind: bars|lines}")
            return
        self.unknown(p, PLOT_KEYS, "plot")
        dims = [a.name for a in sw.axes] + (["point"] if sw.explicit else [])
        many = [a.name for a in sw.axes if len(a.values) > 1] + \
            (["point"] if len(sw.explicit) > 1 else [])
        metrics = [m.name for m in sw.metrics]
        ok = True

        def names(key, allowed, what, required):
            nonlocal ok
            v = p.get(key)
            if v is None:
                if required:
                    self.err(line, "plot: %s is missing, expected %s" % (key, what))
                    ok = False
                return []
            vs = [v] if isinstance(v, str) else v
            if not isinstance(vs, list) or not vs or \
                    not all(isinstance(x, str) and x in allowed for x in vs):
                self.err(p.vline(key), "plot: %s: expected %s, one of: %s"
                         % (key, what, _few(allowed, 40)))
                ok = False
                return []
            return list(vs)

        x = names("x", dims, "a grid axis or point", True)
        if len(x) > 1:
            self.err(p.vline("x"), "plot: x: expected one axis")
            ok = False
        y = names("y", metrics, "a metric name or a list of them", True)
        series = names("series", dims, "a grid axis or point, or a list of them", False)
        if x and x[0] in series:
            self.err(p.vline("series"), "plot: %s is both x and a series" % x[0])
            ok = False
        log_y = names("log_y", metrics, "a metric name or a list of them", False)
        kind = p.get("kind")
        if kind is not None and kind not in ("bars", "lines"):
            self.err(p.vline("kind"), "plot: kind: expected bars or lines (default: lines "
                                      "over a numeric grid axis, bars otherwise)")
            ok = False
        if not ok:
            return
        loose = [d for d in many if d not in x + series]
        if loose:
            self.err(line, "plot: %s %s several values but %s neither x nor a series: add %s "
                     "to series" % (", ".join(loose), "has" if len(loose) == 1 else "have",
                                    "is" if len(loose) == 1 else "are",
                                    "it" if len(loose) == 1 else "them"))
            return
        sw.plot = {"x": x[0], "y": y, "series": series, "log_y": log_y, "kind": kind}


# ---- deriving and validating the points -----------------------------------------------

def _line_index(ymap):
    """{line: concrete path} of a YAML tree read with line numbers: the
    deepest key or item that starts on each line."""
    idx = {}

    def put(line, path):
        if line and len(path) >= len(idx.get(line, ())):
            idx[line] = path

    def walk(node, path):
        if isinstance(node, T.YMap):
            for k, v in node.items():
                put(node.kline(k), path + (k,))
                walk(v, path + (k,))
        elif isinstance(node, T.YSeq):
            for i, v in enumerate(node):
                put(node.ilines[i], path + (i,))
                walk(v, path + (i,))
    walk(ymap, ())
    return idx


def _path_at(idx, line):
    best = None
    for ln in idx:
        if ln <= line and (best is None or ln > best):
            best = ln
    return idx[best] if best is not None else ()


def _in_base(node, path):
    for step in path:
        if isinstance(node, dict) and step in node or \
                isinstance(node, list) and isinstance(step, int) and step < len(node):
            node = node[step]
        else:
            return False
    return True


def _base_line(node, path):
    line = getattr(node, "line", 1) or 1
    for step in path:
        if isinstance(node, T.YMap) and step in node:
            line = node.kline(step)
            node = node[step]
        elif isinstance(node, T.YSeq) and isinstance(step, int) and step < len(node):
            line = node.ilines[step]
            node = node[step]
        else:
            break
    return line


def _header(sw, pt, d):
    sets = ["#   %s = %s" % (o.text, _vstr(o.value)) for o in pt.overrides if o.doc == d]
    return "\n".join(["# SPDX-License-Identifier: BSD-2-Clause",
                      "# Derived by `l2cc-lab sweep` from %s" % os.path.abspath(sw.bases[d]),
                      "# for point %s of sweep %s (%s)%s" % (pt.label, sw.name,
                                                             os.path.abspath(sw.path),
                                                             ", with:" if sets else ".")]
                     + sets) + "\n"


def derive(sw, pt, errs):
    """The point's derived documents as YAML text (pt.texts), from the base
    documents (mappings); problems with its paths go to errs."""
    docs = {d: _plain(sw.base_docs[d]) for d in DOCS}
    pt.docs = docs                  # the point's settings, for metrics that read them
    pt.applied = {d: [] for d in DOCS}
    mine = []                   # (concrete path, Override) of the point's and axes' own
    for o in pt.overrides:
        try:
            cp = set_path(docs[o.doc], o.steps, copy.deepcopy(o.value), o.doc)
        except PathError as e:
            errs.append((sw.path, o.line, "point %s: %s: %s" % (pt.label, o.text, e)))
            continue
        key = (o.doc,) + cp
        # `set` is there to be overridden; the point's own overrides and
        # its axes are not: one would silently replace the other's value,
        # or write into (and so keep) the value the other replaced.
        if o.origin != "set":
            for pkey, prev in mine:
                if pkey[:len(key)] != key and key[:len(pkey)] != pkey:
                    continue
                if pkey == key:
                    why = "which %s (line %d) sets too" % (prev.origin, prev.line)
                elif len(pkey) < len(key):
                    why = "inside %s, which %s (line %d) sets" % (prev.text, prev.origin,
                                                                  prev.line)
                else:
                    why = "which replaces %s that %s (line %d) sets" % (prev.text, prev.origin,
                                                                         prev.line)
                errs.append((sw.path, o.line, "point %s: %s sets %s, %s, expected one of them"
                             % (pt.label, o.origin, o.text, why)))
                break
            mine.append((key, o))
        if (o.doc,) + cp[:1] in (("topology", "name"), ("topology", "prefix")):
            errs.append((sw.path, o.line, "point %s: %s: %s" % (pt.label, o.text,
                                                                OWNED[(o.doc,) + cp[:1]])))
        pt.applied[o.doc].append((cp, o))
    exp = docs["experiment"]
    # The derived files live in the point's directory: the experiment names
    # the topology beside it, and a relative cdf file is the base's.
    exp["topology"] = "topology.yaml"
    here = os.path.dirname(os.path.abspath(sw.bases["experiment"]))
    for f in exp.get("flows") or []:
        size = ((f if isinstance(f, dict) else {}).get("poisson") or {})
        size = size.get("size") if isinstance(size, dict) else None
        if isinstance(size, dict) and isinstance(size.get("cdf"), str) and \
                not os.path.isabs(size["cdf"]):
            size["cdf"] = os.path.normpath(os.path.join(here, size["cdf"]))
    for d in DOCS:
        pt.texts[d] = _header(sw, pt, d) + yaml.safe_dump(
            docs[d], sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


def _blame(sw, pt, d, path, line, msg, errs):
    """An error at `line` of the point's derived file `path` (document d),
    reported where it comes from: the override that set what is on that
    line, else the base file's line of it."""
    try:
        idx = _line_index(T.read_yaml(path)[0])
    except T.TopoError:
        idx = {}
    cp = _path_at(idx, line or 1)
    if d == "experiment" and cp[:1] == ("topology",):
        errs.append((sw.path, sw.lines.get("experiment"), "point %s: %s" % (pt.label, msg)))
        return
    applied = list(reversed(pt.applied.get(d, [])))
    # Inside what an override set, or on a key that one created on its way.
    hit = next((o for done, o in applied if cp[:len(done)] == done), None)
    if hit is None and not _in_base(sw.base_docs[d], cp):
        hit = next((o for done, o in applied if done[:len(cp)] == cp), None)
    if hit is not None:
        errs.append((sw.path, hit.line, "point %s: %s: %s" % (pt.label, hit.text, msg)))
        return
    errs.append((sw.bases[d], _base_line(sw.base_docs[d], cp), "point %s: %s" % (pt.label, msg)))


def _link_ids(lab):
    """The link directions results.json will have (links[].id), or None
    without numpy (results.py needs it)."""
    try:
        from . import results
    except ImportError:
        return None
    return [x[0] for x in results.link_dirs(lab.get("nodes", {}))]


def _check_metric(sw, pt, name, steps, line, errs):
    """What can be known before the run: links[ID], flows[NAME], groups.G,
    phases.P and ports[SW:PORT] must be in the point's lab and experiment,
    a setting (topology.KEY, experiment.KEY) in its derived files."""
    if steps[0][1] in DOCS:
        try:
            get_path({steps[0][1]: pt.docs[steps[0][1]]}, steps)
        except PathError as e:
            errs.append((sw.path, line, "point %s: metric %s: %s" % (pt.label, name, e)))
        return
    if len(steps) < 2:
        return
    top, (kind, tok) = steps[0][1], steps[1]
    if top == "phases":
        have = list(pt.exp.phases)
        what = "phase"
    elif top == "links":
        have = _link_ids(pt.lab)
        what = "link"
    elif top == "flows":
        have = [f.name for f in pt.exp.flows]
        what = "flow"
    elif top == "groups":
        have = list(pt.exp.groups)
        what = "group"
    elif top == "ports":
        have = ["%s:%s" % (n, p) for n, nd in pt.lab["nodes"].items()
                if nd["kind"] == "switch" for p in nd["ports"]]
        what = "switch port"
    else:
        return
    if have is None:
        return
    lists = top in ("links", "flows")
    if lists and kind != "sel":
        errs.append((sw.path, line, "point %s: metric %s: %s is a list: select an element "
                     "with [ID], e.g. %s[%s]" % (pt.label, name, top, top,
                                                 have[0] if have else "ID")))
    elif tok not in have and not (lists and tok.isdigit() and int(tok) < len(have)):
        errs.append((sw.path, line, 'point %s: metric %s: no %s "%s" in %s, expected one of: '
                     '%s' % (pt.label, name, what, tok, "lab " + pt.lab["name"]
                             if what in ("link", "switch port") else "the experiment",
                             _few(have, 40))))


def validate(sw, rundir=None, bindir=None):
    """Derive and check every point; raises SweepErrors. Returns notes."""
    errs, notes = [], []
    for d in DOCS:
        try:
            doc, rerrs = T.read_yaml(sw.bases[d])
        except T.TopoError as e:
            errs.extend((sw.bases[d], ln, m) for ln, m in e.errors)
            continue
        errs.extend((sw.bases[d], ln, m) for ln, m in rerrs)
        if not isinstance(doc, T.YMap):
            errs.append((sw.bases[d], getattr(doc, "line", 1), "expected a mapping: the "
                         "sweep's base %s" % d))
        sw.base_docs[d] = doc
    if errs:
        raise SweepErrors(errs)
    perr = []                       # (file, line, message) per point, merged below
    with tempfile.TemporaryDirectory(prefix="l2cc-sweep.") as tmp:
        for pt in sw.points:
            e0 = len(perr)
            derive(sw, pt, perr)
            if len(perr) > e0:
                continue
            pdir = os.path.join(tmp, pt.label)
            os.makedirs(pdir)
            files = {}
            for d in DOCS:
                files[d] = os.path.join(pdir, d + ".yaml")
                with open(files[d], "w") as f:
                    f.write(pt.texts[d])
            try:
                pt.topo, prd, _, n = L.prepare(files["topology"], rundir, bindir)
                notes.extend(x for x in n if x not in notes)
                pt.lab = L.lab_document(pt.topo, prd, threads=L.one_process_threads(
                    None, pt.topo.one_process))
            except T.TopoError as e:
                for ln, m in e.errors:
                    _blame(sw, pt, "topology", files["topology"], ln, m, perr)
            except L.UsageError as e:
                perr.append((sw.path, sw.lines.get("topology"), "point %s: %s"
                             % (pt.label, e)))
            try:
                pt.exp = E.load(files["experiment"])
                if pt.lab:
                    pt.warnings = E.check_against_lab(pt.exp, pt.lab)
            except E.ExperimentError as e:
                for ln, m in e.errors:
                    _blame(sw, pt, "experiment", files["experiment"], ln, m, perr)
            if pt.lab and pt.exp:
                for m in sw.metrics:
                    for ref in m.ex.refs:
                        _check_metric(sw, pt, m.name, parse_path(ref.path), m.line, perr)
    if perr:
        # The same problem in several points is reported once, naming them.
        merged = {}
        for f, ln, m in perr:
            label, rest = m.split(": ", 1)      # "point LABEL: ..."
            merged.setdefault((f, ln, rest), []).append(label[len("point "):])
        for (f, ln, rest), labels in merged.items():
            who = ("every point" if len(labels) == len(sw.points) and len(labels) > 1 else
                   "point " + labels[0] if len(labels) == 1 else
                   "points " + _few(labels, 8))
            errs.append((f, ln, "%s: %s" % (who, rest)))
        raise SweepErrors(errs, sw.path)
    return notes


def load(path, rundir=None, bindir=None):
    """The sweep file, parsed and every point derived and validated: (Sweep,
    notes). Raises SweepErrors."""
    sw = _Parser(path).parse()
    notes = validate(sw, rundir, bindir)
    return sw, notes


def select(sw, spec):
    """The points that --points LABEL,PATTERN,... names, in sweep order
    (all without it). UsageError if a part or the whole selects none."""
    if spec is None:
        return list(sw.points)
    want = [w.strip() for w in spec.split(",") if w.strip()]
    if not want:
        raise L.UsageError('--points "%s" names no point, expected labels or shell patterns '
                           'separated by commas, of: %s'
                           % (spec, _few([p.label for p in sw.points], 40)))
    out = []
    for w in want:
        hit = [p for p in sw.points if fnmatch.fnmatchcase(p.label, w)]
        if not hit:
            raise L.UsageError("--points: no point %s, expected one of: %s"
                               % (w, _few([p.label for p in sw.points], 40)))
        out.extend(p for p in hit if p not in out)
    return [p for p in sw.points if p in out]
