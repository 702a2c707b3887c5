# SPDX-License-Identifier: BSD-2-Clause
"""Experiments: `l2cc-lab run EXP` and `l2cc-lab plot RESULTDIR`.

An experiment file (docs/testbed.md, "Experiments") says which flows to
send through a running lab, when, and how long; this module parses and
validates it (every problem as FILE:LINE: message, like topology files),
drives the traffic (traffic.py), collects the daemons' time series into a
result directory, computes the metrics (results.py) and draws the plots
(plots.py).

Entry points, for scripts/l2cc/cli.py:
  run_main(argv) / plot_main(argv)      the module parses its own options
  add_arguments(run_parser, plot_parser), cmd_run(args), cmd_plot(args)
                                        for a cli.py that owns the parsers
  load(), check_against_lab(), find_lab(), run_traffic(), analyse_and_plot()
                                        the steps of a run, for sweep.py

Exit status: 0 success, 1 a runtime failure (the lab is not up, a flow
failed), 2 an error in the experiment file or the arguments, 130 Ctrl-C.
"""

import argparse
import json
import math
import os
import re
import shutil
import sys
import time

from . import REPO, RUNROOT
from . import topo as T

# ---- the file format -------------------------------------------------------------

TOP_KEYS = ("name", "description", "topology", "duration", "warmup", "window", "phases",
            "sample", "rate_window", "seed", "fidelity", "defaults", "flows", "groups", "plots")
#: When a run held (docs/testbed.md, "The fidelity gate"): every
#: backlogged port lost at most max_wire_lost of the window to its daemon
#: running late, no generator fell short of its offered rate by more than
#: max_shortfall, and the frame account closed.
FIDELITY_DEFAULTS = {"max_wire_lost": 0.01, "max_shortfall": 0.02}
FLOW_KEYS = ("name", "src", "dst", "proto", "rate", "start", "stop", "duration", "parallel",
             "len", "port", "group", "seed", "stagger", "onoff", "poisson", "rr", "prio",
             "window", "iperf_args")
DEFAULT_KEYS = ("proto", "rate", "start", "stop", "duration", "parallel", "len", "group",
                "prio", "window", "iperf_args")
ONOFF_KEYS = ("on", "off")
POISSON_KEYS = ("rate", "size")
RR_KEYS = ("rate", "req", "resp")
RR_DEFAULT_SIZE = 64        # bytes of UDP payload, request and response alike
RR_MIN_SIZE = 48            # l2cc-flowgen's header
FLOWGEN_STAMP_LEN = 32      # l2cc-flowgen's stream datagram header (FG_DG_STREAM_LEN)
PLOT_KEYS = ("links", "rate_window")
PROTOS = ("tcp", "udp")

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
TIME_RE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)[ \t]*(ns|us|µs|ms|s|min)?$")
_TIME_MULT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, None: 1.0}
FIRST_PORT = 5201           # iperf3's own default, and upwards
MAX_DURATION = 24 * 3600

TIME_HINT = "expected seconds (e.g. 3, 0.5) or a duration with a unit (e.g. 10ms, 2s)"
RATE_HINT = "expected a rate (e.g. 100M, 1G, 2.5G, 1500k; bit/s) or line"
SIZE_HINT = "expected bytes (e.g. 1460, 64K, 1M; binary K)"


class ExperimentError(T.FileErrors):
    """Every problem of one experiment file: a list of (line, message)."""


def parse_time(v):
    """Seconds (float) from 3, 0.5, "10ms", "2s", "500us"; None if not a time."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if v >= 0 and math.isfinite(v) else None
    m = TIME_RE.match(str(v).strip())
    if not m:
        return None
    return float(m.group(1)) * _TIME_MULT[m.group(2)]


def parse_rate(v):
    """bit/s (int) from 100000000, "100M", "1G", "2.5G"; "line" -> "line"; else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v) if v > 0 and v == int(v) else None
    s = str(v).strip()
    if s.lower() == "line":
        return "line"
    r = T.parse_rate(s)
    return r if r else None     # 0 (unlimited) means nothing for a flow


def parse_fraction(v):
    """A fraction 0..1 from 0.01 or "1%"; None if not one."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if 0 <= v <= 1 else None
    m = re.match(r"^\s*([0-9]*\.?[0-9]+)\s*%\s*$", str(v))
    if m and float(m.group(1)) <= 100:
        return float(m.group(1)) / 100
    return None


def parse_size(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v > 0 else None
    if isinstance(v, float):
        return int(v) if v > 0 and v == int(v) else None
    n = T.parse_size(str(v))
    return n if n else None


def fmt_rate(bps):
    if bps is None:
        return "-"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(bps) >= div:
            return ("%.3f" % (bps / div)).rstrip("0").rstrip(".") + unit
    return "%d" % bps


def fmt_time(s):
    if s is None:
        return "-"
    if s == 0 or s >= 1:
        return ("%.3f" % s).rstrip("0").rstrip(".") + "s"
    if s >= 1e-3:
        return ("%.3f" % (s * 1e3)).rstrip("0").rstrip(".") + "ms"
    return ("%.3f" % (s * 1e6)).rstrip("0").rstrip(".") + "us"


# ---- the model ---------------------------------------------------------------------

class Flow:
    """One flow of the experiment, after defaults and expansion.

    kind: "iperf" (iperf3 TCP/UDP), "onoff", "poisson" or "rr" (l2cc-flowgen).
    Times are seconds from the experiment's start; rate is bit/s, "line" (the
    source's link rate) or None (TCP: as fast as it goes)."""

    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.kind = "iperf"
        self.src = self.dst = None
        self.proto = "tcp"
        self.rate = None
        self.start = 0.0
        self.duration = None
        self.parallel = 1
        self.len = None
        self.port = None
        self.groups = []
        self.seed = None
        self.onoff = None       # {"on": s, "off": s}
        self.poisson = None     # {"rate": flows/s, "size": {...}}
        self.rr = None          # {"rate": requests/s, "req": bytes, "resp": bytes}
        self.prio = None        # 0..7: the sender's DSCP class selector (PCP via hostd)
        self.window = None      # iperf3 TCP: -w bytes (SO_SNDBUF/SO_RCVBUF, both ends)
        self.iperf_args = []
        self.lines = {}         # key -> YAML line

    @property
    def stop(self):
        return self.start + self.duration

    def to_dict(self):
        d = {"name": self.name, "kind": self.kind, "src": self.src, "dst": self.dst,
             "start": self.start, "duration": self.duration, "rate": self.rate,
             "groups": self.groups, "port": self.port, "line": self.line}
        if self.kind == "iperf":
            d.update(proto=self.proto, parallel=self.parallel, len=self.len,
                     iperf_args=self.iperf_args)
        else:
            d["seed"] = self.seed
        if self.onoff:
            d.update(onoff=self.onoff, proto=self.proto or "tcp")
        if self.poisson:
            d["poisson"] = self.poisson
        if self.rr:
            d.update(rr=self.rr, proto="udp")
        if self.prio is not None:
            d["prio"] = self.prio
        if self.window is not None:
            d["window"] = self.window
        return d


class Experiment:
    def __init__(self, path):
        self.path = path
        self.name = None
        self.description = None
        self.topology = None
        self.duration = None
        self.warmup = None
        self.window = None
        self.phases = {}        # name -> [from, to], in file order
        self.sample = 0.01
        self.rate_window = 0.05
        self.seed = 1
        self.fidelity = dict(FIDELITY_DEFAULTS)
        self.flows = []
        self.groups = {}        # name -> [flow names], in order
        self.plot_links = []    # ["SW:PORT", ...]
        self.lines = {}         # top-level key -> line
        self.group_lines = {}

    def flow(self, name):
        return next((f for f in self.flows if f.name == name), None)

    def to_dict(self):
        return {"name": self.name, "file": os.path.abspath(self.path),
                "description": self.description, "topology": self.topology,
                "duration": self.duration, "warmup": self.warmup, "window": self.window,
                "phases": self.phases, "sample": self.sample, "rate_window": self.rate_window,
                "seed": self.seed, "fidelity": self.fidelity,
                "flows": [f.to_dict() for f in self.flows], "groups": self.groups,
                "plots": {"links": self.plot_links}}


# ---- parsing -------------------------------------------------------------------------

class _Parser:
    def __init__(self, path):
        self.path = path
        self.errs = []

    def err(self, line, msg):
        self.errs.append((line, msg))

    def unknown(self, m, allowed, where):
        for k in m:
            if k not in allowed:
                self.err(m.kline(k), 'unknown key "%s" in %s, expected one of: %s'
                         % (k, where, ", ".join(allowed)))

    def time(self, m, key, where, default=None, positive=False):
        if key not in m:
            return default
        v = parse_time(m[key])
        if v is None or (positive and v <= 0) or (v is not None and v > MAX_DURATION):
            self.err(m.vline(key), '%s: %s "%s" is not a %stime, %s'
                     % (where, key, m[key], "positive " if positive else "", TIME_HINT))
            return default
        return v

    def fidelity(self, e, doc):
        f = doc["fidelity"]
        if not isinstance(f, T.YMap):
            self.err(doc.vline("fidelity"), "fidelity: expected {max_wire_lost: 1%, "
                                            "max_shortfall: 2%}")
            return
        self.unknown(f, tuple(FIDELITY_DEFAULTS), "fidelity")
        for k in FIDELITY_DEFAULTS:
            if k in f:
                v = parse_fraction(f[k])
                if v is None:
                    self.err(f.vline(k), 'fidelity: %s "%s", expected a fraction 0..1 or a '
                                         'percentage such as 1%%' % (k, f[k]))
                else:
                    e.fidelity[k] = v

    def parse(self):
        doc, errs = T.read_yaml(self.path)
        self.errs.extend(errs)
        e = Experiment(self.path)
        if not isinstance(doc, T.YMap):
            self.err(getattr(doc, "line", 1), "expected a mapping with duration and flows")
            raise ExperimentError(self.path, self.errs)
        self.unknown(doc, TOP_KEYS, "the experiment")
        e.lines = {k: doc.kline(k) for k in doc}

        name = doc.get("name")
        if name is None:
            name = os.path.splitext(os.path.basename(self.path))[0]
        if not isinstance(name, str) or not NAME_RE.match(name):
            self.err(doc.vline("name"), 'name "%s": expected up to 64 letters, digits, _, ., - '
                     '(it names the result directory)' % (name,))
            name = "experiment"
        e.name = name
        if "description" in doc:
            e.description = str(doc["description"])
        if "topology" in doc:
            t = doc["topology"]
            if not isinstance(t, str):
                self.err(doc.vline("topology"), "topology: expected a file name or a lab name")
            else:
                e.topology = t

        e.duration = self.time(doc, "duration", "the experiment", positive=True)
        if "duration" not in doc:
            self.err(doc.line, "duration is missing, expected the run's length, e.g. "
                               "duration: 10")
        dur = e.duration or 0
        e.warmup = self.time(doc, "warmup", "the experiment",
                             default=min(1.0, dur / 2) if dur else 0.0)
        if dur and e.warmup is not None and e.warmup >= dur:
            self.err(doc.vline("warmup"), "warmup %s is not shorter than duration %s"
                     % (fmt_time(e.warmup), fmt_time(dur)))
        if "window" in doc:
            e.window = self.span(doc["window"], doc.vline("window"), "window", dur)
        if e.window is None and dur:
            e.window = [e.warmup or 0.0, dur]
        if "phases" in doc:
            self.phases(e, doc, dur)
        e.sample = self.time(doc, "sample", "the experiment", default=0.01, positive=True)
        e.rate_window = self.time(doc, "rate_window", "the experiment", default=0.05,
                                  positive=True)
        if "seed" in doc:
            if isinstance(doc["seed"], bool) or not isinstance(doc["seed"], int):
                self.err(doc.vline("seed"), "seed: expected an integer")
            else:
                e.seed = doc["seed"]

        if "fidelity" in doc:
            self.fidelity(e, doc)

        defaults = doc.get("defaults", T.YMap())
        if not isinstance(defaults, T.YMap):
            self.err(doc.vline("defaults"), "defaults: expected a mapping of flow keys")
            defaults = T.YMap()
        else:
            self.unknown(defaults, DEFAULT_KEYS, "defaults")

        flows = doc.get("flows")
        if flows is None:
            self.err(doc.line, "flows is missing, expected a list of flows")
            flows = T.YSeq()
        elif not isinstance(flows, list):
            self.err(doc.vline("flows"), "flows: expected a list of flows")
            flows = T.YSeq()
        for i, fm in enumerate(flows):
            line = flows.ilines[i] if hasattr(flows, "ilines") else doc.vline("flows")
            if not isinstance(fm, T.YMap):
                self.err(line, "flow %d: expected a mapping with name, src and dst" % (i + 1))
                continue
            e.flows.extend(self.flow(e, fm, defaults, i))

        seen = {}
        for f in e.flows:
            if f.name in seen:
                self.err(f.line, 'flow name "%s" is used twice (also line %d)'
                         % (f.name, seen[f.name]))
            seen.setdefault(f.name, f.line)

        self.groups(e, doc)
        self.ports(e)
        if "plots" in doc:
            self.plots(e, doc)
        if self.errs:
            raise ExperimentError(self.path, self.errs)
        return e

    def span(self, v, line, what, dur):
        """[FROM, TO] in seconds within the run, or None (reported)."""
        if not isinstance(v, list) or len(v) != 2:
            self.err(line, "%s: expected [FROM, TO] in seconds, e.g. [3, 6]" % what)
            return None
        a, b = parse_time(v[0]), parse_time(v[1])
        if a is None or b is None:
            self.err(line, "%s: %s" % (what, TIME_HINT))
        elif not a < b:
            self.err(line, "%s [%s, %s]: FROM must be before TO"
                     % (what, fmt_time(a), fmt_time(b)))
        elif dur and b > dur + 1e-9:
            self.err(line, "%s ends at %s, after the experiment (duration %s)"
                     % (what, fmt_time(b), fmt_time(dur)))
        else:
            return [a, b]
        return None

    def phases(self, e, doc, dur):
        pm = doc["phases"]
        if not isinstance(pm, T.YMap) or not pm:
            self.err(doc.vline("phases"), "phases: expected a mapping of phase name to "
                     "[FROM, TO], e.g. {one: [1, 2.5], two: [3, 4.5]}")
            return
        for name, v in pm.items():
            if not isinstance(name, str) or not NAME_RE.match(name):
                self.err(pm.kline(name), 'phase name "%s": expected up to 64 letters, digits, '
                         '_, ., -' % (name,))
                continue
            sp = self.span(v, pm.vline(name), "phase %s" % name, dur)
            if sp:
                e.phases[name] = sp

    def flow(self, e, fm, defaults, index):
        where = "flow %d" % (index + 1)
        name = fm.get("name")
        if not isinstance(name, str) or not NAME_RE.match(name):
            self.err(fm.vline("name") if "name" in fm else fm.line,
                     '%s: name %s, expected up to 64 letters, digits, _, ., -'
                     % (where, '"%s" is not valid' % name if name is not None else "is missing"))
            name = "flow%d" % (index + 1)
        where = 'flow "%s"' % name
        self.unknown(fm, FLOW_KEYS, where)

        # A flow's own keys win over defaults; lines point at whichever was used.
        m = T.YMap()
        m.line = fm.line
        for src in (defaults, fm):
            for k, v in src.items():
                m[k] = v
                m.klines[k] = src.kline(k)
                m.vlines[k] = src.vline(k)

        f = Flow(name, fm.line)
        f.lines = dict(m.vlines)
        kinds = [k for k in ("onoff", "poisson", "rr") if k in fm]
        if len(kinds) > 1:
            self.err(fm.kline(kinds[1]), "%s: %s exclude each other" % (where, " and ".join(kinds)))
        if kinds:
            f.kind = kinds[0]
            # An ON/OFF flow chooses its transport (proto) and, over UDP,
            # its datagram size (len): many slow streams need small
            # datagrams to be sampled often enough for their delay variation.
            for k in ("proto", "parallel", "len", "iperf_args", "window"):
                if k in fm and not (k in ("proto", "len") and f.kind == "onoff"):
                    self.err(fm.kline(k), "%s: %s is for iperf3 flows, not %s (l2cc-flowgen "
                             "chooses its transport)" % (where, k, f.kind))

        srcs = m.get("src")
        if srcs is None:
            self.err(fm.line, "%s: src is missing, expected a host name (or a list)" % where)
            srcs = []
        elif isinstance(srcs, str):
            srcs = [srcs]
        elif not isinstance(srcs, list) or not srcs or \
                not all(isinstance(s, str) for s in srcs):
            self.err(m.vline("src"), "%s: src: expected a host name or a list of host names"
                     % where)
            srcs = []
        dst = m.get("dst")
        if not isinstance(dst, str):
            self.err(m.vline("dst") if "dst" in m else fm.line,
                     "%s: dst %s, expected a host name" % (where, "is missing" if dst is None
                                                            else "is not a name"))
            dst = None
        f.src, f.dst = (srcs[0] if srcs else None), dst

        # ON/OFF (l2cc-flowgen --udp): the flow's own proto only; defaults.proto
        # stays with the iperf3 flows, so existing experiments keep TCP sources.
        if f.kind == "iperf" or (f.kind == "onoff" and "proto" in fm):
            proto = (m if f.kind == "iperf" else fm).get("proto", "tcp")
            if proto not in PROTOS:
                self.err(m.vline("proto"), '%s: proto "%s", expected tcp or udp'
                         % (where, proto))
            else:
                f.proto = proto
        if f.kind == "rr":
            # Requests per second are rr.rate; a rate from defaults is not its.
            if "rate" in fm:
                self.err(fm.kline("rate"), "%s: rate is not for rr flows (rr.rate is requests "
                         "per second)" % where)
            f.proto = "udp"
        elif "rate" in m:
            r = parse_rate(m["rate"])
            if r is None:
                self.err(m.vline("rate"), '%s: rate "%s", %s' % (where, m["rate"], RATE_HINT))
            f.rate = r
        elif f.kind == "onoff" or f.proto == "udp":
            f.rate = "line"

        f.start = self.time(m, "start", where, default=0.0)
        if f.start is None:
            f.start = 0.0
        if "stop" in m and "duration" in m:
            self.err(m.kline("stop"), "%s: give stop or duration, not both" % where)
        if "duration" in m:
            f.duration = self.time(m, "duration", where, positive=True)
        elif "stop" in m:
            stop = self.time(m, "stop", where)
            if stop is not None:
                if stop <= f.start:
                    self.err(m.vline("stop"), "%s: stop %s is not after start %s"
                             % (where, fmt_time(stop), fmt_time(f.start)))
                else:
                    f.duration = stop - f.start
        stagger = self.time(fm, "stagger", where, default=0.0)

        if "parallel" in m:
            p = m["parallel"]
            if isinstance(p, bool) or not isinstance(p, int) or not 1 <= p <= 128:
                self.err(m.vline("parallel"), "%s: parallel: expected 1..128 streams" % where)
            else:
                f.parallel = p
        if "len" in m:
            n = parse_size(m["len"])
            if n is None or n > 65507:
                self.err(m.vline("len"), "%s: len \"%s\", %s, at most 65507" % (where, m["len"],
                                                                                 SIZE_HINT))
            elif f.kind == "onoff" and "len" in fm and f.proto != "udp":
                self.err(fm.kline("len"), "%s: len is for UDP ON/OFF flows (proto: udp); a "
                         "TCP one writes what its rate allows" % where)
            elif f.kind == "onoff" and n < FLOWGEN_STAMP_LEN:
                self.err(m.vline("len"), "%s: len %d, at least %d: a datagram carries its "
                         "%d-byte stamp (sequence, send time)"
                         % (where, n, FLOWGEN_STAMP_LEN, FLOWGEN_STAMP_LEN))
            else:
                f.len = n
        if "port" in fm:
            p = fm["port"]
            if isinstance(p, bool) or not isinstance(p, int) or not 1024 <= p <= 65535:
                self.err(fm.vline("port"), "%s: port: expected 1024..65535" % where)
            elif len(srcs) > 1:
                self.err(fm.vline("port"), "%s: port cannot be set on a flow with several "
                         "sources (each gets its own server port)" % where)
            else:
                f.port = p
        if "seed" in fm:
            s = fm["seed"]
            if isinstance(s, bool) or not isinstance(s, int):
                self.err(fm.vline("seed"), "%s: seed: expected an integer" % where)
            else:
                f.seed = s
        if "iperf_args" in m:
            a = m["iperf_args"]
            if isinstance(a, str):
                a = a.split()
            if not isinstance(a, list) or not all(isinstance(x, (str, int, float)) for x in a):
                self.err(m.vline("iperf_args"), "%s: iperf_args: expected a list of "
                         "iperf3 arguments" % where)
            else:
                a = [str(x) for x in a]
                bad = [x for x in a if x in ("-c", "-s", "-p", "-J", "-t", "-u", "-P", "-b",
                                             "-l", "-i", "--json", "--client", "--server",
                                             "--port", "--time")]
                if bad:
                    self.err(m.vline("iperf_args"), "%s: iperf_args: %s is set by the runner "
                             "(use the flow's own keys)" % (where, bad[0]))
                f.iperf_args = a
        if "group" in m:
            g = m["group"]
            gs = [g] if isinstance(g, str) else g
            if not isinstance(gs, list) or not all(isinstance(x, str) and NAME_RE.match(x)
                                                   for x in gs):
                self.err(m.vline("group"), "%s: group: expected a group name or a list"
                         % where)
            else:
                f.groups = list(gs)

        if f.kind == "onoff":
            o = fm["onoff"]
            if not isinstance(o, T.YMap):
                self.err(fm.vline("onoff"), "%s: onoff: expected {on: MEAN, off: MEAN}" % where)
            else:
                self.unknown(o, ONOFF_KEYS, "%s onoff" % where)
                on = self.time(o, "on", where + " onoff", positive=True)
                off = self.time(o, "off", where + " onoff", positive=True)
                for k in ONOFF_KEYS:
                    if k not in o:
                        self.err(o.line, "%s: onoff.%s is missing (the mean %s period)"
                                 % (where, k, "ON" if k == "on" else "OFF"))
                if on and off:
                    f.onoff = {"on": on, "off": off}
        elif f.kind == "poisson":
            f.poisson = self.poisson(fm["poisson"], fm.vline("poisson"), where)
        elif f.kind == "rr":
            f.rr = self.rr(fm["rr"], fm.vline("rr"), where)
        if "window" in m and f.kind == "iperf":
            w = parse_size(m["window"])
            if w is None or not 2048 <= w <= 1 << 30:
                self.err(m.vline("window"), '%s: window "%s", expected the TCP window (iperf3 '
                         '-w: SO_SNDBUF/SO_RCVBUF at both ends), 2K..1G, e.g. 64K'
                         % (where, m["window"]))
            elif f.proto != "tcp":
                if "window" in fm:      # defaults.window is for the TCP flows
                    self.err(m.vline("window"), "%s: window is for TCP flows" % where)
            elif any(x in ("-w", "--window") for x in f.iperf_args):
                self.err(m.vline("window"), "%s: window sets iperf3's -w; drop -w from "
                         "iperf_args" % where)
            else:
                f.window = w
        if "prio" in m:
            pr = m["prio"]
            if isinstance(pr, bool) or not isinstance(pr, int) or not 0 <= pr <= 7:
                self.err(m.vline("prio"), "%s: prio: expected a priority 0..7 (the frames' "
                         "802.1p PCP)" % where)
            else:
                f.prio = pr
                if any(x in ("-S", "--tos") for x in f.iperf_args):
                    self.err(m.vline("prio"), "%s: prio sets iperf3's -S (TOS); drop -S from "
                             "iperf_args" % where)

        out = []
        for i, s in enumerate(srcs):
            g = Flow(f.name if len(srcs) == 1 else "%s-%s" % (f.name, s), f.line)
            g.__dict__.update({k: v for k, v in f.__dict__.items() if k not in ("name", "line")})
            g.src = s
            g.start = f.start + i * (stagger or 0.0)
            g.groups = list(f.groups) + ([f.name] if len(srcs) > 1 else [])
            out.append(g)
        if e.duration:
            for g in out:
                if g.duration is None:
                    g.duration = e.duration - g.start
                if g.duration <= 0 or g.stop > e.duration + 1e-9:
                    self.err(f.lines.get("duration", f.lines.get("start", f.line)),
                             "%s: active %s..%s, outside the experiment (duration %s)"
                             % ('flow "%s"' % g.name, fmt_time(g.start), fmt_time(g.stop),
                                fmt_time(e.duration)))
        return out

    def rr(self, p, line, where):
        if not isinstance(p, T.YMap):
            self.err(line, "%s: rr: expected {rate: REQUESTS_PER_S, req: BYTES, resp: BYTES}"
                     % where)
            return None
        self.unknown(p, RR_KEYS, where + " rr")
        r = p.get("rate")
        ok = True
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r <= 1e6:
            self.err(p.vline("rate") if "rate" in p else p.line,
                     "%s: rr.rate: expected requests per second (a positive number, at most "
                     "1000000)" % where)
            ok = False
        out = {"rate": float(r) if ok else None}
        for k in ("req", "resp"):
            n = parse_size(p[k]) if k in p else RR_DEFAULT_SIZE
            if n is None or not RR_MIN_SIZE <= n <= 65507:
                self.err(p.vline(k), "%s: rr.%s \"%s\": expected the datagram's UDP payload, "
                         "%d..65507 bytes" % (where, k, p[k], RR_MIN_SIZE))
                ok = False
            out[k] = n
        return out if ok else None

    def poisson(self, p, line, where):
        if not isinstance(p, T.YMap):
            self.err(line, "%s: poisson: expected {rate: FLOWS_PER_S, size: ...}" % where)
            return None
        self.unknown(p, POISSON_KEYS, where + " poisson")
        r = p.get("rate")
        if isinstance(r, bool) or not isinstance(r, (int, float)) or r <= 0:
            self.err(p.vline("rate") if "rate" in p else p.line,
                     "%s: poisson.rate: expected new flows per second (a positive number)"
                     % where)
            r = None
        size = p.get("size")
        spec = None
        if size is None:
            self.err(p.line, "%s: poisson.size is missing, expected a size (e.g. 100K), "
                     "{pareto: {shape: 1.2, mean: 100K}} or {cdf: FILE}" % where)
        elif isinstance(size, T.YMap):
            if len(size) != 1 or next(iter(size)) not in ("pareto", "cdf"):
                self.err(p.vline("size"), "%s: poisson.size: expected one of {pareto: ...} "
                         "or {cdf: FILE}" % where)
            elif "pareto" in size:
                pa = size["pareto"]
                if not isinstance(pa, T.YMap) or set(pa) != {"shape", "mean"}:
                    self.err(size.vline("pareto"), "%s: pareto: expected {shape: S, mean: "
                             "BYTES}" % where)
                else:
                    sh, mean = pa["shape"], parse_size(pa["mean"])
                    if isinstance(sh, bool) or not isinstance(sh, (int, float)) or sh <= 1:
                        self.err(pa.vline("shape"), "%s: pareto shape: expected a number > 1 "
                                 "(the mean is infinite otherwise)" % where)
                    elif mean is None:
                        self.err(pa.vline("mean"), "%s: pareto mean: %s" % (where, SIZE_HINT))
                    else:
                        spec = {"pareto": {"shape": float(sh), "mean": mean}}
            else:
                c = size["cdf"]
                if not isinstance(c, str):
                    self.err(size.vline("cdf"), "%s: cdf: expected a file name" % where)
                else:
                    path = c if os.path.isabs(c) else \
                        os.path.join(os.path.dirname(os.path.abspath(self.path)), c)
                    if not os.path.isfile(path):
                        self.err(size.vline("cdf"), "%s: cdf file %s does not exist"
                                 % (where, path))
                    spec = {"cdf": path}
        else:
            n = parse_size(size)
            if n is None:
                self.err(p.vline("size"), "%s: poisson.size \"%s\": %s" % (where, size,
                                                                           SIZE_HINT))
            else:
                spec = {"fixed": n}
        if r is None or spec is None:
            return None
        return {"rate": float(r), "size": spec}

    def groups(self, e, doc):
        for f in e.flows:
            for g in f.groups:
                e.groups.setdefault(g, [])
                if f.name not in e.groups[g]:
                    e.groups[g].append(f.name)
                e.group_lines.setdefault(g, f.line)
        if "groups" not in doc:
            return
        gm = doc["groups"]
        if not isinstance(gm, T.YMap):
            self.err(doc.vline("groups"), "groups: expected a mapping of group name to a list "
                     "of flow names")
            return
        names = {f.name for f in e.flows}
        for g, members in gm.items():
            if not isinstance(g, str) or not NAME_RE.match(g):
                self.err(gm.kline(g), 'group name "%s" is not valid' % (g,))
                continue
            if not isinstance(members, list) or not all(isinstance(x, str) for x in members):
                self.err(gm.vline(g), "group %s: expected a list of flow names" % g)
                continue
            e.groups.setdefault(g, [])
            e.group_lines[g] = gm.kline(g)
            for x in members:
                # A multi-source flow's name stands for all of its flows.
                expanded = [f.name for f in e.flows if f.name == x or
                            (x in f.groups and f.name.startswith(x + "-"))]
                if not expanded:
                    self.err(gm.vline(g), 'group %s: no flow "%s", expected one of: %s'
                             % (g, x, ", ".join(sorted(names)) or "(no flows)"))
                for n in expanded:
                    if n not in e.groups[g]:
                        e.groups[g].append(n)
                        e.flow(n).groups.append(g)

    def ports(self, e):
        used = {}
        for f in e.flows:
            if f.port:
                if f.port in used:
                    self.err(f.lines.get("port", f.line), 'flow "%s": port %d is also flow '
                             '"%s"\'s' % (f.name, f.port, used[f.port]))
                used.setdefault(f.port, f.name)
        nxt = FIRST_PORT
        for f in e.flows:
            if not f.port:
                while nxt in used:
                    nxt += 1
                f.port = nxt
                used[nxt] = f.name
        for i, f in enumerate(e.flows):
            if f.kind != "iperf" and f.seed is None:
                f.seed = e.seed * 1000 + i

    def plots(self, e, doc):
        pm = doc["plots"]
        if not isinstance(pm, T.YMap):
            self.err(doc.vline("plots"), "plots: expected a mapping (links, rate_window)")
            return
        self.unknown(pm, PLOT_KEYS, "plots")
        if "rate_window" in pm:
            e.rate_window = self.time(pm, "rate_window", "plots", default=e.rate_window,
                                      positive=True)
        if "links" in pm:
            ls = pm["links"]
            if not isinstance(ls, list) or not all(isinstance(x, str) and
                                                   re.match(r"^[^:\s]+:[^:\s]+$", x)
                                                   for x in ls):
                self.err(pm.vline("links"), 'plots.links: expected a list of switch ports '
                         '"SWITCH:PORT" (each plotted as that port\'s egress)')
            else:
                e.plot_links = list(ls)
                e.lines["plots.links"] = pm.vline("links")


def load(path):
    """The experiment file -> Experiment, or ExperimentError with every problem."""
    try:
        return _Parser(path).parse()
    except T.TopoError as e:    # unreadable file or YAML syntax, from read_yaml
        raise ExperimentError(path, e.errors)


def check_against_lab(e, lab):
    """Problems of a valid experiment with this lab (unknown hosts, ...),
    as ExperimentError; returns warnings (strings)."""
    errs, warns = [], []
    nodes = lab.get("nodes", {})
    hosts = sorted(n for n, nd in nodes.items() if nd.get("kind") == "host")
    for f in e.flows:
        for role in ("src", "dst"):
            h = getattr(f, role)
            if h is None:
                continue
            nd = nodes.get(h)
            if nd is None or nd.get("kind") != "host":
                errs.append((f.lines.get(role, f.line),
                             'flow "%s": %s "%s" is not a host of lab %s, expected one of: %s'
                             % (f.name, role, h, lab.get("name"), ", ".join(hosts))))
        if f.src and f.src == f.dst:
            errs.append((f.lines.get("dst", f.line), 'flow "%s": src and dst are both %s'
                         % (f.name, f.src)))
        if f.src in nodes and not nodes[f.src].get("hostd") and f.kind == "iperf":
            warns.append('flow "%s": %s has no hostd; its rate comes from iperf3\'s receiver '
                         'reports' % (f.name, f.src))
    for p in e.plot_links:
        sw, port = p.split(":", 1)
        nd = nodes.get(sw)
        if nd is None or nd.get("kind") != "switch" or port not in nd.get("ports", {}):
            errs.append((e.lines.get("plots.links", 1), 'plots.links: "%s" is not a switch '
                         'port of lab %s' % (p, lab.get("name"))))
    if e.topology and lab.get("topology"):
        tp = e.topology
        if not os.path.isabs(tp):
            tp = os.path.join(os.path.dirname(os.path.abspath(e.path)), tp)
        if os.path.exists(tp) and os.path.realpath(tp) != os.path.realpath(lab["topology"]) \
                and e.topology != lab.get("name"):
            warns.append("the experiment names topology %s, but lab %s was brought up from %s"
                         % (e.topology, lab.get("name"), lab["topology"]))
    if errs:
        raise ExperimentError(e.path, errs)
    return warns


# ---- finding the lab -------------------------------------------------------------------

def _labs_up():
    """Names of the labs under RUNROOT whose daemons run."""
    from . import lab as L
    out = []
    try:
        names = sorted(os.listdir(RUNROOT))
    except OSError:
        return out
    for n in names:
        doc = L.read_lab_json(os.path.join(RUNROOT, n))
        if not doc:
            continue
        if any(nd.get("pid") and L.is_our_daemon(nd["pid"], nd.get("config"))
               for nd in doc.get("nodes", {}).values()):
            out.append(n)
    return out


def find_lab(e, lab_arg, rundir):
    """lab.json of the lab to run on: --lab, else the experiment's topology,
    else the only lab that is up. Raises UsageError/LabError."""
    from . import lab as L
    target = lab_arg
    if not target and e.topology:
        tp = e.topology
        if not os.path.isabs(tp) and not T.NAME_RE.match(tp):
            tp = os.path.join(os.path.dirname(os.path.abspath(e.path)), tp)
        elif not os.path.isabs(tp) and not os.path.exists(os.path.join(RUNROOT, tp)):
            cand = os.path.join(os.path.dirname(os.path.abspath(e.path)), tp)
            if os.path.exists(cand):
                tp = cand
        target = tp
    if not target and not rundir:
        up = _labs_up()
        if len(up) == 1:
            target = up[0]
        elif not up:
            raise L.LabError("no lab is up: bring one up with `l2cc-lab up TOPO`, then run "
                             "the experiment (or name it with --lab)")
        else:
            raise L.UsageError("%d labs are up (%s): say which with --lab NAME"
                               % (len(up), ", ".join(up)))
    if not target:
        doc = L.read_lab_json(rundir)
        if not doc:
            raise L.LabError("no lab.json in %s" % rundir)
        target = doc["name"]
    tg = L.resolve(target, rundir)
    if not tg.doc:
        raise L.LabError("lab %s is not up (no %s/lab.json): `l2cc-lab up TOPO` first"
                         % (tg.name, tg.rundir))
    down = [n for n, nd in tg.doc.get("nodes", {}).items()
            if nd.get("config") and not (nd.get("pid") and
                                         L.is_our_daemon(nd["pid"], nd["config"]))]
    if down:
        raise L.LabError("lab %s is not up: the daemon%s of %s %s not running (`l2cc-lab "
                         "status %s`)" % (tg.name, "s" if len(down) > 1 else "",
                                          ", ".join(down), "are" if len(down) > 1 else "is",
                                          tg.name))
    return tg.doc


def _lab_on_paper(e, a):
    """For --check with the lab not up: (its lab document from the topology
    file, or its last lab.json; a note). Raises LabError without either."""
    from . import lab as L
    target = a.lab
    if not target and e.topology:
        tp = e.topology
        cand = tp if os.path.isabs(tp) else \
            os.path.join(os.path.dirname(os.path.abspath(e.path)), tp)
        target = os.path.normpath(cand) if os.path.exists(cand) else tp
    if target and os.path.isfile(target):
        try:
            topo = T.load(target)
        except T.TopoError as err:
            raise L.LabError("the experiment's topology does not validate:\n%s" % err)
        return (L.lab_document(topo, a.rundir or L.default_rundir(topo.name),
                               threads=L.one_process_threads(None, topo.one_process)),
                " (not up: checked against %s)" % target)
    tg = L.resolve(target, a.rundir) if target else None
    if tg and tg.doc:
        return tg.doc, " (not up: checked against its last lab.json)"
    raise L.LabError("lab %s is not up and has no topology file to check against"
                     % (target or "?"))


# ---- command line ----------------------------------------------------------------------

def add_arguments(run_parser, plot_parser):
    """The options of `l2cc-lab run` and `l2cc-lab plot`."""
    r = run_parser
    have = {a.dest for a in r._actions}
    if "experiment" not in have:
        r.add_argument("experiment", metavar="EXP", help="experiment YAML file")
    if "lab" not in have:
        r.add_argument("--lab", metavar="NAME|TOPO",
                       help="the lab to run on (default: the experiment's topology:, else "
                            "the only lab that is up)")
    if "rundir" not in have:
        r.add_argument("--rundir", metavar="DIR",
                       help="the lab's run directory (default /run/l2cc/NAME)")
    r.add_argument("--out", metavar="DIR",
                   help="result directory (default results/EXPNAME/YYYYmmdd-HHMMSS in the "
                        "repository)")
    r.add_argument("--check", action="store_true",
                   help="validate the experiment (against the lab if one is up or named) "
                        "and exit; sends nothing")
    if "bin" not in have:
        r.add_argument("--bin", metavar="DIR",
                       help="where l2ccctl and l2cc-flowgen are (default $L2CC_BIN, else "
                            "build/bin)")
    r.add_argument("--no-plots", action="store_true", help="skip the PNGs (plot later)")
    r.add_argument("-q", "--quiet", action="store_true", help="only the summary")

    p = plot_parser
    have = {a.dest for a in p._actions}
    if "resultdir" not in have:
        p.add_argument("resultdir", metavar="RESULTDIR", help="a result directory of `run`")
    p.add_argument("--results", action="store_true",
                   help="also recompute results.json and results.csv from the saved series")
    p.add_argument("--rate-window", metavar="TIME",
                   help="sliding window of the rate plots (default: the experiment's "
                        "rate_window, 50ms)")
    p.add_argument("--xlim", metavar="FROM,TO",
                   help="time range of the time plots, seconds (default: the whole run)")


def _parsers():
    run = argparse.ArgumentParser(
        prog="l2cc-lab run",
        description="Run an experiment file on a lab that is up: iperf3/l2cc-flowgen "
                    "flows, the daemons' time series, results.json/.csv and plots in a "
                    "result directory.",
        epilog="Exit status: 0 success, 1 runtime failure, 2 experiment or usage error. "
               "Reference: docs/testbed.md#experiments")
    plot = argparse.ArgumentParser(
        prog="l2cc-lab plot",
        description="(Re)draw the plots of a result directory from its saved time series.",
        epilog="Reference: docs/testbed.md#experiments")
    add_arguments(run, plot)
    return run, plot


def run_main(argv):
    """`l2cc-lab run ARGS...` (cli.py's hook)."""
    a = _parsers()[0].parse_args(argv)
    return cmd_run(a)


def plot_main(argv):
    """`l2cc-lab plot ARGS...` (cli.py's hook)."""
    a = _parsers()[1].parse_args(argv)
    return cmd_plot(a)


def scientific_python():
    """numpy and matplotlib, which results and plots need, come with Debian's
    python3 (python3-numpy, python3-matplotlib). If `env python3` found
    another interpreter without them (pyenv, a venv), run the whole command
    again with /usr/bin/python3, before anything has happened."""
    try:
        import numpy  # noqa: F401
        import matplotlib  # noqa: F401
        return
    except ImportError as err:
        sysp = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(sysp) and \
                os.access(sysp, os.X_OK) and not os.environ.get("L2CC_REEXEC"):
            os.environ["L2CC_REEXEC"] = "1"
            os.execv(sysp, [sysp] + sys.argv)
        print("l2cc-lab: %s: apt-get install python3-numpy python3-matplotlib" % err,
              file=sys.stderr)


def default_out(*names):
    """The default result directory: REPO/results/NAMES.../YYYYmmdd-HHMMSS
    (a run's: the experiment's name; a sweep's: sweeps, its name)."""
    return os.path.join(REPO, "results", *names, time.strftime("%Y%m%d-%H%M%S"))


def make_result_dir(out):
    """Create result directory `out` (--out, or default_out()), which must
    be new or empty. Raises lab.UsageError saying why it cannot be."""
    from . import lab as L
    try:
        if os.path.exists(out) and not os.path.isdir(out):
            raise L.UsageError("%s exists and is not a directory; choose another --out" % out)
        if os.path.isdir(out) and os.listdir(out):
            raise L.UsageError("%s exists and is not empty; choose another --out" % out)
        os.makedirs(out, exist_ok=True)
        if not os.access(out, os.W_OK | os.X_OK):
            raise L.UsageError("%s is not writable; choose another --out" % out)
    except OSError as err:
        raise L.UsageError("%s: %s; choose another --out"
                           % (err.filename or out, err.strerror or err))


def cmd_run(a):
    if not a.check:
        scientific_python()         # may re-run the command: before any output
    from . import lab as L
    try:
        e = load(a.experiment)
    except ExperimentError as err:
        for line in err.lines():
            print(line, file=sys.stderr)
        return 2
    note = ""
    try:
        if a.check and not (a.lab or a.rundir or e.topology or _labs_up()):
            print("%s: OK, %d flows, %s (no lab up and no topology: not checked against one)"
                  % (a.experiment, len(e.flows), fmt_time(e.duration)))
            return 0
        try:
            lab = find_lab(e, a.lab, a.rundir)
        except L.LabError:
            if not a.check:
                raise
            lab, note = _lab_on_paper(e, a)
        warns = check_against_lab(e, lab)
    except ExperimentError as err:
        for line in err.lines():
            print(line, file=sys.stderr)
        return 2
    except L.UsageError as err:
        print("l2cc-lab run: %s" % err, file=sys.stderr)
        return 2
    except L.LabError as err:
        print("l2cc-lab run: %s" % err, file=sys.stderr)
        return 1
    for w in warns:
        print("warning: " + w, file=sys.stderr)
    if a.check:
        print("%s: OK on lab %s%s: %d flows, %s, window %s..%s"
              % (a.experiment, lab["name"], note, len(e.flows), fmt_time(e.duration),
                 fmt_time(e.window[0]), fmt_time(e.window[1])))
        return 0
    out = os.path.abspath(a.out or default_out(e.name))
    rc = run_traffic(e, lab, out, L.bindir_of(a.bin), quiet=a.quiet)
    if rc == 130:
        print("l2cc-lab run: the lab stays up", file=sys.stderr)
    if rc in (2, 130):
        return rc
    return analyse_and_plot(out, rc, plots=not a.no_plots, quiet=a.quiet)


def run_traffic(e, lab, out, bindir, quiet=False):
    """Run experiment `e` (load()ed, check_against_lab() passed) on `lab`
    (its lab.json document, every daemon running): the inputs, the traffic,
    run.json and the time series into result directory `out` (created; new
    or empty), no analysis. Returns 0; 1 a runtime failure (what was
    recorded is kept); 2 `out` cannot be a result directory (not empty,
    not writable); 130 Ctrl-C or SIGTERM (the traffic is stopped, the lab
    is left up; one that comes while the traffic is being stopped waits
    for it). Needs root. For cmd_run and scripts/l2cc/sweep.py."""
    from . import lab as L
    from . import traffic
    if os.geteuid() != 0:
        print("l2cc-lab run: needs root (ip netns exec)", file=sys.stderr)
        return 1
    try:
        make_result_dir(out)
    except L.UsageError as err:
        print("l2cc-lab run: %s" % err, file=sys.stderr)
        return 2
    shutil.copyfile(e.path, os.path.join(out, "experiment.yaml"))
    with open(os.path.join(out, "lab.json"), "w") as f:
        json.dump(lab, f, indent=2)
    if not quiet:
        print("experiment %s on lab %s: %d flows, %s; results in %s"
              % (e.name, lab["name"], len(e.flows), fmt_time(e.duration), out), flush=True)
    tr = traffic.Traffic(e, lab, out, bindir, say=(lambda m: None) if quiet else
                         (lambda m: print("  " + m, flush=True)))
    rc, why = 0, None
    with L.StopSignals() as stop:
        try:
            rc = tr.run()
        except KeyboardInterrupt:
            rc, why = 130, "interrupted"
            print("l2cc-lab run: interrupted; stopping the traffic", file=sys.stderr)
        except traffic.TrafficError as err:
            rc, why = 1, str(err)
            print("l2cc-lab run: %s" % err, file=sys.stderr)
        finally:
            done = False
            while not done:     # a signal just before the hold: again
                try:
                    with stop.held():   # every process we started is stopped first
                        try:
                            if why:
                                what, why = why, None
                                tr.abort(what)
                        finally:
                            tr.cleanup()
                        done = True
                except KeyboardInterrupt:
                    if rc != 130:
                        print("l2cc-lab run: interrupted", file=sys.stderr)
                    rc = 130
    return rc


def analyse_and_plot(out, rc, plots=True, quiet=False):
    """results.json/.csv (and the plots) of result directory `out` after
    run_traffic() returned `rc` (0 or 1); prints the summary. Returns 1 if
    the analysis failed or a flow failed, else rc."""
    from . import results
    try:
        res = results.analyse(out)
    except results.ResultsError as err:
        print("l2cc-lab run: results: %s" % err, file=sys.stderr)
        return 1
    results.write(out, res)
    print(results.summary_text(res))
    if plots:
        try:
            from . import plots as P
            made = P.plot_all(out)
            if not quiet:
                print("plots: %s" % ", ".join(os.path.relpath(p, out) for p in made))
        except ImportError as err:
            print("l2cc-lab run: no plots (%s): apt-get install python3-matplotlib, then "
                  "`l2cc-lab plot %s`" % (err, out), file=sys.stderr)
    print("results: %s" % out)
    failed = [f["name"] for f in res.get("flows", []) if f.get("error")]
    if failed:
        print("l2cc-lab run: flow%s %s failed (see results.json)" %
              ("s" if len(failed) > 1 else "", ", ".join(failed)), file=sys.stderr)
        return 1
    return rc


def cmd_plot(a):
    scientific_python()
    from . import results
    d = os.path.abspath(a.resultdir)
    if not os.path.isfile(os.path.join(d, "run.json")):
        print("l2cc-lab plot: %s is not a result directory (no run.json)" % d, file=sys.stderr)
        return 2
    xlim = rw = None
    if a.xlim:
        try:
            x0, x1 = (float(x) for x in a.xlim.split(","))
            xlim = (x0, x1)
        except ValueError:
            print("l2cc-lab plot: --xlim %s: expected FROM,TO in seconds" % a.xlim,
                  file=sys.stderr)
            return 2
    if a.rate_window:
        rw = parse_time(a.rate_window)
        if not rw:
            print("l2cc-lab plot: --rate-window %s: %s" % (a.rate_window, TIME_HINT),
                  file=sys.stderr)
            return 2
    try:
        if a.results:
            res = results.analyse(d)
            results.write(d, res)
            print(results.summary_text(res))
        from . import plots
        made = plots.plot_all(d, rate_window=rw, xlim=xlim)
    except results.ResultsError as err:
        print("l2cc-lab plot: %s" % err, file=sys.stderr)
        return 1
    for p in made:
        print(p)
    return 0
