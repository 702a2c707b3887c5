# SPDX-License-Identifier: BSD-2-Clause
"""Metrics of one experiment run, from its result directory alone.

A result directory (written by traffic.py) holds run.json (the schedule, the
plan of every flow, CPU accounting), lab.json, experiment.yaml, configs/,
series/NODE.jsonl (the daemons' time series over the run) and traffic/ (the
iperf3 and l2cc-flowgen outputs). Run loads it and turns every counter into
a cumulative curve C(t) (piecewise linear between samples), so that a rate
over any window [a, b] is (C(b) - C(a)) / (b - a) whatever the sampling, and
analyse() computes results.json (definitions in docs/testbed.md,
"Experiments"). plots.py draws from the same Run.

Times in results are seconds from t0, the experiment's time zero.
"""

import csv
import json
import os
import re

import numpy as np

from . import account as ACC
from . import fairshare as FS
from . import fidelity as F

SAT_MIN_S = 0.1             # saturated time needed before judging a port's rate
GAP_FACTOR = 5              # a time-series gap: more than 5 sample intervals
RATE_TOL = 0.02             # "held its rate": within 2% of the configured rate
BOTTLENECK_SAT = 0.5        # saturated half the window or more: a bottleneck
SETTLE_TOL = 1.1            # a group is even when its max/min rate is within this
SETTLE_JAIN = 0.98          # ... or, for settle_jain_s, when its Jain index is at least this
LIMIT_REACH_TOL = 0.1       # limit_reach_s: a flow's rate limit within 10 % of its mean
FCT_BUCKETS = [(0, 10 << 10, "<10K"), (10 << 10, 100 << 10, "10K-100K"),
               (100 << 10, 1 << 20, "100K-1M"), (1 << 20, None, ">=1M")]
#: The buckets' keys in fct.by_bucket (names a metric path can use).
FCT_BUCKET_KEYS = {"<10K": "lt10k", "10K-100K": "10k_100k", "100K-1M": "100k_1m", ">=1M": "ge1m"}
HD_TS_MAX_FLOWS = 256      # flows per hostd time-series line (hostd/hd_ctl.c)
SW_COUNTERS = ("rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "drops", "pause_tx",
               "pause_rx", "pfc_tx", "pfc_rx", "credit_tx", "credit_rx", "fc_ignored",
               "paused_ns", "credit_stall_ns", "marked", "mark_untagged", "pause_storms")
#: Counters a daemon may not report (older builds): arrays, or None.
OPTIONAL_COUNTERS = ("wire_lost_ns", "wire_late_events")
HD_COUNTERS = ("pause_rx", "pfc_rx", "credit_rx", "credit_tx", "fc_ignored", "fc_blocked",
               "window_blocked", "fecn_rx", "cnp_tx", "cnp_rx", "ack_tx", "ack_rx",
               "notify_drops", "seq_gaps")
KEY_IP_RE = re.compile(r"^(\S+) \[?([0-9a-fA-F.:]+?)\]?:(\d+) > \[?([0-9a-fA-F.:]+?)\]?:(\d+)$")
KEY_MAC_RE = re.compile(r"^([0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5})(?: vlan \d+)?$")
# What iperf3 says when we ended it on purpose (SIGINT at a fractional stop).
IPERF_INTERRUPTED = ("interrupt - the client has terminated", "the client has terminated")


class ResultsError(Exception):
    pass


def _load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ResultsError("%s: cannot read %s: %s" % (path, what, e.strerror))
    except ValueError as e:
        raise ResultsError("%s: %s is not JSON: %s" % (path, what, e))


def _try_json(path):
    """A JSON document from a file that may be missing, empty or have junk
    before the document (a tool's warnings on the same stream)."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    text = text.strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        i = text.find("{")
        try:
            return json.loads(text[i:]) if i >= 0 else None
        except ValueError:
            return None


def _mono(x):
    """A cumulative counter made monotonic across daemon restarts (a drop
    back toward zero continues from where it was)."""
    x = np.asarray(x, dtype=float)
    if len(x) < 2:
        return x
    d = np.diff(x)
    d[d < 0] = 0
    return np.concatenate([[x[0]], x[0] + np.cumsum(d)])


def jain(xs):
    """Jain's fairness index (sum x)^2 / (n sum x^2); None without data."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    s2 = sum(x * x for x in xs)
    if s2 == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * s2)


def _pct(vals, p):
    return float(np.percentile(np.asarray(vals, dtype=float), p)) if len(vals) else None


class Curve:
    """A cumulative quantity: value c[i] at absolute time t[i]."""

    def __init__(self, t, c):
        self.t = np.asarray(t, dtype=float)
        self.c = np.asarray(c, dtype=float)

    def at(self, x):
        if not len(self.t):
            return np.zeros_like(np.asarray(x, dtype=float))
        return np.interp(x, self.t, self.c)

    def rate(self, a, b):
        """(C(b) - C(a)) / (b - a): per second."""
        if b <= a or not len(self.t):
            return None
        return float(self.at(b) - self.at(a)) / (b - a)

    def sliding(self, grid, w):
        """Centred sliding-window rate on grid (absolute times)."""
        return (self.at(grid + w / 2) - self.at(grid - w / 2)) / w

    def per_bin(self, grid, step):
        """The increase in each [g, g + step)."""
        return self.at(grid + step) - self.at(grid)

    def __add__(self, o):
        if not len(self.t):
            return o
        if not len(o.t):
            return self
        t = np.union1d(self.t, o.t)
        return Curve(t, self.at(t) + o.at(t))


def _ramp(spans):
    """Curve of bytes delivered at constant rate over each (start, end, bytes)."""
    pts = {}
    for s, e, b in spans:
        e = max(e, s + 1e-6)
        pts[s] = pts.get(s, 0.0)
        pts[e] = pts.get(e, 0.0)
    if not spans:
        return Curve([], [])
    t = np.array(sorted(pts))
    c = np.zeros(len(t))
    for s, e, b in spans:
        e = max(e, s + 1e-6)
        c += b * np.clip((t - s) / (e - s), 0, 1)
    return Curve(t, c)


def link_dirs(nodes):
    """Every direction of every link of a lab, from its lab.json `nodes`:
    (id, from, to, switch, port, measured direction of that port, kind,
    rate_bps). Also for sweep.py, which checks links[ID] metrics before
    any run."""
    out = []
    for sw, nd in nodes.items():
        if nd.get("kind") != "switch":
            continue
        for p, pd in nd.get("ports", {}).items():
            peer = pd.get("peer")
            rate = pd.get("rate_bps") or 0
            if pd.get("role") == "switch":
                out.append(("%s>%s" % (sw, peer), sw, peer, sw, p, "tx", "inter-switch", rate))
            else:
                out.append(("%s>%s" % (sw, peer), sw, peer, sw, p, "tx", "to-host", rate))
                out.append(("%s>%s" % (peer, sw), peer, sw, sw, p, "rx", "from-host",
                            nodes.get(peer, {}).get("rate_bps") or rate))
    return out


class Run:
    """A result directory, loaded."""

    def __init__(self, d):
        self.dir = d
        self.run = _load_json(os.path.join(d, "run.json"), "run record")
        self.lab = _load_json(os.path.join(d, "lab.json"), "lab document")
        self.exp = self.run["experiment"]
        self.t0 = self.run.get("t0")
        if not self.t0:
            raise ResultsError("%s: the run never started (no t0; status %s)"
                               % (d, self.run.get("status")))
        self.duration = self.exp["duration"]
        self.t_end = self.t0 + self.duration
        self.window = self.exp.get("window") or [self.exp.get("warmup") or 0, self.duration]
        self.nodes = self.lab.get("nodes", {})
        self.flows = self.exp["flows"]
        self.plan = self.run.get("flows", {})
        self.warnings = list(self.run.get("warnings", []))
        self.overhead = self._wire_overheads()
        self.hostd_conf = self._hostd_confs()
        self.daemons = _try_json(os.path.join(d, "daemons.json")) or {}
        self._load_series()
        if self.run.get("aborted"):
            ends = [a["t"][-1] for a in list(self.sw.values()) + list(self.hd.values())
                    if len(a["t"])]
            if ends:
                stop = min(ends) - self.t0 - 0.1
                if stop < self.window[1]:
                    self.warnings.append("the run was aborted (%s) at about %.2f s: the "
                                         "window is cut to [%.2f, %.2f]"
                                         % (self.run["aborted"], stop, self.window[0],
                                            max(stop, self.window[0])))
                    self.window = [self.window[0], max(stop, self.window[0])]
        self._flow_curves = {}
        self._flow_source = {}

    # ---- loading ------------------------------------------------------------------------

    def _wire_overheads(self):
        """{(switch, port): bytes per frame} from the saved switchd configs."""
        out = {}
        for name, nd in self.nodes.items():
            if nd.get("kind") != "switch":
                continue
            path = os.path.join(self.dir, "configs", name + ".conf")
            port, glob = None, 0
            try:
                with open(path) as f:
                    for line in f:
                        s = line.split("#")[0].strip()
                        m = re.match(r"^\[port\s+(\S+)\]$", s)
                        if m:
                            port = m.group(1)
                        elif s.startswith("["):
                            port = None
                        m = re.match(r"^wire_overhead\s*=\s*(\d+)$", s)
                        if m:
                            if port:
                                out[(name, port)] = int(m.group(1))
                            else:
                                glob = int(m.group(1))
            except OSError:
                pass
            for p in nd.get("ports", {}):
                out.setdefault((name, p), glob)
        return out

    def _hostd_confs(self):
        """{host: {"tag": bool, "wire_overhead": bytes, "pcp_from_dscp":
        bool}} from the saved hostd configs (what the fair-share oracle
        needs of them)."""
        out = {}
        for name, nd in self.nodes.items():
            if nd.get("kind") != "host" or not nd.get("hostd"):
                continue
            conf = {"tag": True, "wire_overhead": 0, "pcp_from_dscp": False, "law": "static",
                    "target": None}
            try:
                with open(os.path.join(self.dir, "configs", name + ".conf")) as f:
                    for line in f:
                        m = re.match(r"^\s*(tag|wire_overhead|pcp_from_dscp|law|target)\s*="
                                     r"\s*(\S+)", line.split("#")[0])
                        if m and m.group(1) in ("tag", "pcp_from_dscp"):
                            conf[m.group(1)] = m.group(2).lower() in ("yes", "true", "on", "1")
                        elif m and m.group(1) == "law":
                            conf["law"] = m.group(2)
                        elif m and m.group(1) == "target":
                            conf["target"] = float(m.group(2))
                        elif m:
                            conf["wire_overhead"] = int(m.group(2))
            except (OSError, ValueError):
                pass
            out[name] = conf
        return out

    def _load_series(self):
        self.sw = {}        # switch -> {"t": array, "ports": {port: {field: array}}}
        self.hd = {}        # host -> {"t": array, field: array, "flows": {key: {...}}}
        sdir = os.path.join(self.dir, "series")
        for name, nd in self.nodes.items():
            path = os.path.join(sdir, name + ".jsonl")
            if not os.path.exists(path):
                continue
            recs = []
            with open(path, errors="replace") as f:
                for line in f:
                    try:
                        recs.append(json.loads(line))
                    except ValueError:
                        pass
            recs.sort(key=lambda r: r.get("t", 0))
            if not recs:
                continue
            if nd.get("kind") == "switch":
                self.sw[name] = self._switch_arrays(recs)
            else:
                self.hd[name] = self._hostd_arrays(recs)

    def _switch_arrays(self, recs):
        t = np.array([r["t"] for r in recs])
        ports = {}
        names = []
        for r in recs:
            for p in r.get("ports", {}):
                if p not in names:
                    names.append(p)
        for p in names:
            rows = [r.get("ports", {}).get(p, {}) for r in recs]
            a = {}
            for k in SW_COUNTERS:
                a[k] = _mono([row.get(k, 0) for row in rows])
            reasons = sorted({k for row in rows for k in row.get("drop", {})})
            a["drop"] = {k: _mono([row.get("drop", {}).get(k, 0) for row in rows])
                         for k in reasons}
            # Wire time lost to a late daemon (fidelity.py); None from a
            # switchd that predates the counter.
            for k in OPTIONAL_COUNTERS:
                a[k] = _mono([row.get(k, 0) for row in rows]) \
                    if any(k in row for row in rows) else None
            # Lost before switchd saw them, on a receive queue without a
            # socket: a fabric drop like the others.
            if any("no_socket" in row for row in rows):
                a["drop"]["no_socket"] = _mono([row.get("no_socket", 0) for row in rows])
            a["buffer"] = np.array([sum(row.get("buffer", [0])) for row in rows], dtype=float)
            a["buffer_peak"] = np.array([max(row.get("buffer_peak", [0]) or [0])
                                         for row in rows], dtype=float)
            a["voq_frames"] = np.array([row.get("voq_frames", 0) for row in rows],
                                       dtype=float)
            # The output queue per priority (samples x priorities); None
            # from a switchd that predates it.
            if any("outq_bytes" in row for row in rows):
                a["outq_bytes"] = np.array([(row.get("outq_bytes") or [0] * 8)[:8]
                                            for row in rows], dtype=float)
            else:
                a["outq_bytes"] = None
            # A congestion point's state per priority (a mask), from the
            # schemes that keep one (ibcc's `congested`); None otherwise.
            if any("congested" in row for row in rows):
                a["congested"] = np.array([row.get("congested", 0) for row in rows], dtype=int)
            else:
                a["congested"] = None
            ports[p] = a
        return {"t": t, "ports": ports}

    def _hostd_arrays(self, recs):
        t = np.array([r["t"] for r in recs])
        a = {"t": t}
        for k in HD_COUNTERS:
            a[k] = _mono([r.get(k, 0) for r in recs])
        for side in ("host", "uplink"):
            # no_socket: lost on a receive queue without a socket, before hostd.
            a[side + "_drops"] = _mono([r.get(side, {}).get("drops", 0) +
                                        r.get(side, {}).get("no_socket", 0) for r in recs])
            a[side + "_tx_bytes"] = _mono([r.get(side, {}).get("tx_bytes", 0) for r in recs])
        a["paused_ns"] = _mono([r.get("paused_ns", 0) for r in recs])
        for k in OPTIONAL_COUNTERS + ("pace_lost_ns",):
            a[k] = _mono([r.get(k, 0) for r in recs]) if any(k in r for r in recs) else None
        # A line lists at most HD_TS_MAX_FLOWS flows (hostd/hd_ctl.c): with
        # more in the table, some flows are missing from some lines, and the
        # tx_bps of a flow listed again covers all it sent since it was last
        # listed. So per-flow bytes come from the cumulative bytes_out,
        # differenced between the lines that list the flow.
        full = np.array([len(r.get("flow", [])) >= HD_TS_MAX_FLOWS for r in recs])
        a["truncated_lines"] = int(full.sum())
        a["full"] = full
        vals = {}
        n = len(recs)
        for i, r in enumerate(recs):
            for fl in r.get("flow", []):
                key = fl.get("key")
                if key is None:
                    continue
                e = vals.get(key)
                if e is None:
                    e = vals[key] = {k: np.full(n, np.nan) for k in
                                     ("bytes_out", "frames_out", "marks", "cnp_in", "drops",
                                      "queue_bytes", "rate_bps", "target_bps", "level_pct",
                                      "hops", "pace_lost_ns")}
                for k in e:
                    e[k][i] = fl.get(k, 0 if k != "pace_lost_ns" else np.nan)
                # A law that keeps a target rate says so in its state
                # (dcqcn: Rt as rt_bps); NaN for the others. So does a law
                # that hears a path's level (prc: level_pct, hops).
                law = fl.get("law", {})
                e["target_bps"][i] = law.get("rt_bps", np.nan)
                e["level_pct"][i] = law.get("level_pct", np.nan)
                e["hops"][i] = law.get("hops", np.nan)
        flows = {}
        for key, e in vals.items():
            idx = np.flatnonzero(~np.isnan(e["bytes_out"]))
            # Listed first after a complete line without it: the flow was
            # created during the series, and all it counts is new.
            new = bool(idx[0] > 0 and (~full[:idx[0]]).any())
            out = {"t": t[idx], "idx": idx, "queue": e["queue_bytes"][idx],
                   "rate_bps": e["rate_bps"][idx], "target_bps": e["target_bps"][idx],
                   "level_pct": e["level_pct"][idx], "hops": e["hops"][idx]}
            pl = e["pace_lost_ns"][idx]
            out["pace_lost_ns"] = None
            if len(pl) and not np.isnan(pl).any():
                inc = np.diff(pl, prepend=pl[0])
                inc[inc < 0] = pl[inc < 0]
                if new:
                    inc[0] = pl[0]
                out["pace_lost_ns"] = np.cumsum(inc)
            for k in ("bytes_out", "frames_out", "marks", "cnp_in", "drops"):
                v = e[k][idx]
                inc = np.diff(v, prepend=v[0])
                neg = inc < 0               # expired and created again
                inc[neg] = v[neg]
                if new:
                    inc[0] = v[0]
                out[k] = np.cumsum(inc)
                out[k + "_total"] = float(out[k][-1])
            flows[key] = out
        a["flows"] = flows
        return a

    # ---- flows ------------------------------------------------------------------------------

    def _host_mac(self, h):
        return str(self.nodes.get(h, {}).get("mac") or "").lower()

    def hostd_keys(self, f):
        """The keys of f's source hostd that carry f, or [] (with why)."""
        hd = self.hd.get(f["src"])
        if not hd:
            return [], "no hostd time series for %s" % f["src"]
        pl = self.plan.get(f["name"], {})
        src, dst, port = pl.get("src_addr"), pl.get("dst_addr"), f.get("port")
        ip_keys, mac_keys = [], []
        for key in hd["flows"]:
            m = KEY_IP_RE.match(key)
            if m:
                proto, a, _, b, dp = m.groups()
                if a == src and b == dst and int(dp) == port and \
                        proto == f.get("proto", "tcp"):
                    ip_keys.append(key)
                continue
            m = KEY_MAC_RE.match(key)
            if m and m.group(1).lower() == self._host_mac(f["dst"]):
                mac_keys.append(key)
        if ip_keys:
            return self._listed(f, hd, ip_keys)
        if mac_keys:
            # Keyed by destination, hostd's flow carries everything from src
            # to dst: other flows of the pair, and the ACKs of TCP flows
            # (iperf3 TCP, l2cc-flowgen) going the other way.
            same = [g["name"] for g in self.flows if g["src"] == f["src"] and
                    g["dst"] == f["dst"]]
            back = [g["name"] for g in self.flows if g["src"] == f["dst"] and
                    g["dst"] == f["src"] and g.get("proto", "tcp") == "tcp"]
            if len(same) == 1 and not back:
                return self._listed(f, hd, mac_keys)
            why = []
            if len(same) > 1:
                why.append("%s share %s -> %s" % (", ".join(same), f["src"], f["dst"]))
            if back:
                why.append("the ACKs of %s travel %s -> %s too" % (", ".join(back), f["src"],
                                                                   f["dst"]))
            return [], ("hostd keys flows by destination (granularity dst) and %s; "
                        "granularity 5tuple separates them" % "; ".join(why))
        return [], "no flow of %s's hostd matches it" % f["src"]

    def _listed(self, f, hd, keys):
        """keys, unless a line that hit the listing cap left all of them out
        while the flow was active: then hostd cannot tell what it sent."""
        if not hd["truncated_lines"]:
            return keys, None
        a, b = self.t0 + f["start"] + 0.1, self.t0 + f["start"] + f["duration"]
        active = (hd["t"] >= a) & (hd["t"] <= b)
        listed = np.zeros(len(hd["t"]), dtype=bool)
        for k in keys:
            listed[hd["flows"][k]["idx"]] = True
        gaps = int((active & hd["full"] & ~listed).sum())
        if gaps:
            return [], ("%d of its hostd lines hit the %d-flow listing cap without it"
                        % (gaps, HD_TS_MAX_FLOWS))
        return keys, None

    def _iperf_curve(self, f):
        pl = self.plan.get(f["name"], {})
        cl = pl.get("client") or {}
        base = cl.get("started") or pl.get("t_start") or (self.t0 + f["start"])
        for role in ("server", "client"):
            r = pl.get(role) or {}
            doc = _try_json(os.path.join(self.dir, r["out"])) if r.get("out") else None
            if not doc or not doc.get("intervals"):
                continue
            t, c, tot = [base], [0.0], 0.0
            for iv in doc["intervals"]:
                s = iv.get("sum") or {}
                if "end" not in s:
                    continue
                tot += s.get("bytes", 0)
                t.append(base + s["end"])
                c.append(tot)
            return Curve(t, c), "iperf3 %s" % ("receiver" if role == "server" else "sender")
        return None, None

    def _flowgen_doc(self, f):
        r = (self.plan.get(f["name"], {}).get("client")) or {}
        return _try_json(os.path.join(self.dir, r["out"])) if r.get("out") else None

    def _flowgen_server_doc(self, f):
        r = (self.plan.get(f["name"], {}).get("server")) or {}
        return _try_json(os.path.join(self.dir, r["out"])) if r.get("out") else None

    def _flowgen_curve(self, f):
        doc = self._flowgen_doc(f)
        if not doc:
            return None, None
        # Times in the report are seconds from its t0_realtime (= --start-at).
        base = doc.get("t0_realtime") or (self.t0 + f["start"])
        spans = []
        if f["kind"] == "onoff":
            for p in doc.get("on_periods", []):
                try:
                    s = base + float(p["start"])
                    spans.append((s, s + float(p["dur"]), float(p["bytes"])))
                except (KeyError, TypeError, ValueError):
                    pass
        else:
            # Each completed flow's bytes, spread over its completion time,
            # which runs from its actual start (scheduled + late_us).
            for fl in doc.get("flows", []):
                try:
                    if fl.get("fct_us") is None:
                        continue
                    s = base + float(fl["start"]) + (fl.get("late_us") or 0) / 1e6
                    spans.append((s, s + fl["fct_us"] / 1e6, float(fl["size"])))
                except (KeyError, TypeError, ValueError):
                    pass
        return _ramp(spans), "l2cc-flowgen"

    def flow_curve(self, name):
        """(Curve of bytes sent by flow `name`, source): hostd's per-flow
        bytes_out where the source runs hostd and hostd's flows tell this one
        apart (not for Poisson workloads), else iperf3's receiver intervals,
        else l2cc-flowgen's report."""
        if name in self._flow_curves:
            return self._flow_curves[name], self._flow_source[name]
        f = next(g for g in self.flows if g["name"] == name)
        curve, source, why = None, None, None
        # A Poisson workload is many short connections: l2cc-flowgen knows
        # each one's bytes and completion time, hostd's capped listing may not.
        if self.nodes.get(f["src"], {}).get("hostd") and f["kind"] != "poisson":
            keys, why = self.hostd_keys(f)
            if keys:
                hd = self.hd[f["src"]]
                curve = Curve([], [])
                for k in keys:
                    curve = curve + Curve(hd["flows"][k]["t"], hd["flows"][k]["bytes_out"])
                source = "hostd"
        if curve is None:
            if f["kind"] == "iperf":
                curve, source = self._iperf_curve(f)
            else:
                curve, source = self._flowgen_curve(f)
            if why and curve is not None:
                self.warnings.append('flow "%s": rate from %s (%s)' % (name, source, why))
        if curve is None:
            curve, source = Curve([], []), None
        self._flow_curves[name], self._flow_source[name] = curve, source
        return curve, source

    def flow_window(self, f, span=None):
        """The part of span (default: the steady window) where flow f is
        active, if it holds two samples or more; else None."""
        span = span or self.window
        a = max(span[0], f["start"])
        b = min(span[1], f["start"] + f["duration"])
        return (a, b) if b - a >= 2 * (self.exp.get("sample") or 0.01) else None

    # ---- ports and links -----------------------------------------------------------------

    def port(self, sw, p):
        s = self.sw.get(sw)
        return (s["t"], s["ports"][p]) if s and p in s["ports"] else (None, None)

    def port_curve(self, sw, p, direction="tx"):
        """Bytes on the wire of a switch port (frames + wire_overhead each)."""
        t, a = self.port(sw, p)
        if t is None:
            return Curve([], [])
        ov = self.overhead.get((sw, p), 0)
        return Curve(t, a[direction + "_bytes"] + ov * a[direction + "_frames"])

    def link_dirs(self):
        """link_dirs() of this run's lab."""
        return link_dirs(self.nodes)

    def port_info(self, sw, p):
        """The port as switchd described it before the run (`ports`), or {}."""
        for d in ((self.daemons.get(sw) or {}).get("ports") or {}).get("ports", []):
            if d.get("name") == p:
                return d
        return {}

    def link_peer(self, sw, p):
        """(node, port) at the other end of switch port sw:p."""
        me = "%s:%s" % (sw, p)
        for lk in self.lab.get("links", []):
            if me in (lk.get("a"), lk.get("b")):
                other = lk["b"] if lk.get("a") == me else lk["a"]
                return tuple(other.split(":", 1))
        return None, None

    def saturation(self, sw, p, a, b):
        """Over [a, b] (absolute): the intervals between two samples where
        the port's egress queue (frames in the VOQs toward it) was non-empty
        at both samples and flow control did not hold it (neither paused_ns
        nor credit_stall_ns grew): (seconds, bytes)."""
        t, arr = self.port(sw, p)
        if t is None:
            return 0.0, 0.0
        ov = self.overhead.get((sw, p), 0)
        wire = arr["tx_bytes"] + ov * arr["tx_frames"]
        sel = (t[1:] > a) & (t[:-1] >= a) & (t[1:] <= b)
        q = arr["voq_frames"]
        busy = ((q[:-1] > 0) & (q[1:] > 0) & (np.diff(arr["paused_ns"]) == 0) &
                (np.diff(arr["credit_stall_ns"]) == 0))
        m = sel & busy
        return float(np.diff(t)[m].sum()), float(np.diff(wire)[m].sum())

    def at_start_end(self, t, x):
        """(value at the last sample <= t0, or the first; the last value)."""
        i = int(np.searchsorted(t, self.t0, side="right")) - 1
        return float(x[max(i, 0)]), float(x[-1])


# ---- analysis -----------------------------------------------------------------------------

def analyse(d):
    """results.json of result directory d (docs/testbed.md, "results.json")."""
    R = Run(d)
    wa, wb = R.window
    A, B = R.t0 + wa, R.t0 + wb
    res = {"experiment": R.exp["name"], "lab": R.lab.get("name"), "result_dir": d,
           "t0": R.t0, "duration_s": R.duration, "window_s": [wa, wb],
           "status": R.run.get("status"), "aborted": R.run.get("aborted")}
    if R.sw:
        dts = np.concatenate([np.diff(s["t"]) for s in R.sw.values() if len(s["t"]) > 1]
                             or [np.array([])])
        res["sample_interval_s"] = float(np.median(dts)) if len(dts) else None
    res["series_gaps"] = _check_series(R, res.get("sample_interval_s"))
    res["flows"] = [_flow(R, f) for f in R.flows]
    res["fairness"] = _fairness(res["flows"])
    res["groups"] = _groups(R, res["flows"])
    res["ports"] = _ports(R, A, B, whole_run=True)
    res["rate_check"] = _rate_check(res["ports"])
    res["links"] = _links(R, A, B, res["ports"])
    res["fair_share"] = _fair_share(R, wa, wb, res["flows"], res["groups"])
    res["phases"] = {name: _phase(R, a, b) for name, (a, b) in
                     (R.exp.get("phases") or {}).items()}
    res.update(_run_counters(R))
    res["fct"] = _fct(R)
    res["cpu"] = _cpu(R.run.get("cpu") or {})
    # Daemons that put their version in `status` report every counter the
    # gate reads: then a missing one means the run is not shown to hold.
    strict = any(((v or {}).get("status") or {}).get("version") for v in R.daemons.values())
    res["account"] = ACC.take(R.lab, _try_json(os.path.join(d, "counters_before.json")),
                            _try_json(os.path.join(d, "counters_after.json")), strict)
    if res["account"].get("fabric_drops") is not None:
        # Counted end to end, the kernel's drops included.
        res["fabric_drops"] = res["account"]["fabric_drops"]
    res["fidelity"] = F.judge(R, res, res["account"], strict)
    if not res["fidelity"]["held"]:
        R.warnings.append("the emulation did not hold: %s" % res["fidelity"]["why"])
    res["warnings"] = R.warnings
    return res


def _check_series(R, interval):
    """Warnings about the time series; returns series_gaps."""
    for h, hd in sorted(R.hd.items()):
        if hd["truncated_lines"]:
            R.warnings.append("hostd %s had more flows than its time series lists (%d) in %d "
                              "of %d lines: flows missing from a line are interpolated from "
                              "their bytes_out (old flows expire after hostd's flow_idle)"
                              % (h, HD_TS_MAX_FLOWS, hd["truncated_lines"], len(hd["t"])))
    gaps = _series_gaps(R)
    if gaps:
        worst = max(gaps, key=lambda g: g["gap_s"])
        R.warnings.append("%d daemon%s wrote no time-series line for more than %g ms during "
                          "the run (the longest: %s, %.0f ms at t=%.2f s): they did not get "
                          "the CPU, and what they forward stood still meanwhile; see series_gaps"
                          % (len({g["node"] for g in gaps}),
                             "s" if len({g["node"] for g in gaps}) > 1 else "",
                             GAP_FACTOR * (interval or 0.01) * 1e3,
                             worst["node"], worst["gap_s"] * 1e3, worst["at_s"]))
    if not R.sw:
        R.warnings.append("no switch time series in %s/series: port, link and drop "
                          "figures are missing" % R.dir)
    return gaps


def _flow_rate(R, f, span=None):
    """(window over which flow f is measured within span, its mean rate in
    bit/s over it or None, its rate source)."""
    curve, source = R.flow_curve(f["name"])
    win = R.flow_window(f, span)
    rate = None
    if win and source:
        r = curve.rate(R.t0 + win[0], R.t0 + win[1])
        rate = r * 8 if r is not None else None
    return win, rate, source


def _flow(R, f):
    """flows[] of results.json: flow f over the steady window."""
    t0 = R.t0
    win, rate, source = _flow_rate(R, f)
    fr = {"name": f["name"], "kind": f["kind"], "src": f["src"], "dst": f["dst"],
          "proto": f.get("proto") if f["kind"] == "iperf" else None,
          "start_s": f["start"], "duration_s": f["duration"], "groups": f.get("groups", []),
          "offered_bps": R.plan.get(f["name"], {}).get("rate_bps") or None,
          "window_s": list(win) if win else None, "rate_source": source,
          "mean_rate_bps": rate}
    curve, _ = R.flow_curve(f["name"])
    if source and len(curve.t):
        # From the flow's start: hostd's flow may have carried the
        # warm-up ping, or an earlier run, before.
        c0 = curve.at(t0 + f["start"] - 0.02)
        moved = np.flatnonzero((curve.c > c0) & (curve.t >= t0 + f["start"] - 0.02))
        if len(moved):
            # The sample that first shows data closes the interval it came in.
            # hostd lists a flow only in the lines of intervals it was active
            # in: its previous listing may be the warm-up's, long before.
            m = int(moved[0])
            first = curve.t[max(m - 1, 0)]
            if source == "hostd":
                first = max(first, curve.t[m] - (R.exp.get("sample") or 0.01))
            fr["first_data_s"] = float(first - t0)
    pl = R.plan.get(f["name"], {})
    cl = pl.get("client") or {}
    if cl.get("started") and pl.get("t_start"):
        fr["start_late_ms"] = round((cl["started"] - pl["t_start"]) * 1e3, 2)
    if f["kind"] == "iperf":
        fr["iperf3"], err = _iperf_summary(R, f, win)
        if fr["iperf3"].get("goodput_bps") is not None:
            fr["goodput_bps"] = fr["iperf3"]["goodput_bps"]
    else:
        err = _flowgen_error(R, f)
    if f["kind"] in ("onoff", "rr"):
        fr.update(flow_delays(f["kind"], f.get("proto"), R._flowgen_doc(f),
                              R._flowgen_server_doc(f)))
    if err:
        fr["error"] = err
    elif fr["mean_rate_bps"] == 0:
        R.warnings.append('flow "%s": nothing was sent (or received) in its window'
                          % f["name"])
    hd = R.hd.get(f["src"])
    if hd and source == "hostd":
        keys, _ = R.hostd_keys(f)
        fr["hostd"] = {"keys": keys,
                       "marks": int(sum(hd["flows"][k]["marks_total"] for k in keys)),
                       "cnp_in": int(sum(hd["flows"][k]["cnp_in_total"] for k in keys)),
                       "queue_drops": int(sum(hd["flows"][k]["drops_total"]
                                              for k in keys)),
                       "limit_reach_s": _limit_reach(R, fr, hd, keys, win)}
    return fr


def _limit_reach(R, fr, hd, keys, win):
    """Seconds from the flow's start until the rate limit its source's law
    set for it first came within LIMIT_REACH_TOL of its mean over the
    flow's window: how fast the reaction point converges (Gran Fig. 12: a
    lower marking rate converges more slowly). From the start, not the
    first data: hostd's flow (by destination) may have carried the warm-up
    ping. None without one hostd flow for it, a window, or a limit that
    ever moved."""
    if len(keys) != 1 or not win:
        return None
    fl = hd["flows"][keys[0]]
    t, r = fl["t"] - R.t0, fl["rate_bps"]
    start = fr["start_s"]
    life = t >= start - 0.02
    inwin = (t >= win[0]) & (t <= win[1])
    # hostd writes 0 for an unpaced flow: no limit, as far from any as can be.
    if not np.isfinite(r[inwin]).any() or not np.isfinite(r[life]).any() or \
            np.nanmin(r[life]) == np.nanmax(r[life]):
        return None
    mean = float(np.nanmean(r[inwin]))
    if mean <= 0:
        return None
    near = np.flatnonzero(life & (np.abs(r - mean) <= LIMIT_REACH_TOL * mean))
    return round(max(float(t[near[0]] - start), 0.0), 3) if len(near) else None


def _rated(flows):
    """{name: mean_rate_bps} of the iperf3 and ON/OFF flows that have one."""
    return {fr["name"]: fr["mean_rate_bps"] for fr in flows
            if fr["kind"] in ("iperf", "onoff") and fr["mean_rate_bps"] is not None}


def _fairness(flows):
    rated = _rated(flows)
    good = [fr["goodput_bps"] for fr in flows if fr.get("goodput_bps") is not None]
    return {"jain": jain(list(rated.values())), "flows": len(rated),
            "over": "mean_rate_bps of the iperf3 and onoff flows, each over its window_s",
            "jain_goodput": jain(good), "goodput_flows": len(good)}


def _groups(R, flows):
    rated = _rated(flows)
    byname = {fr["name"]: fr for fr in flows}
    groups = {}
    for g, members in R.exp.get("groups", {}).items():
        rs = [rated[m] for m in members if m in rated]
        groups[g] = {"flows": members, "n": len(members),
                     "sum_bps": sum(rs) if rs else None,
                     "mean_bps": sum(rs) / len(rs) if rs else None,
                     "min_bps": min(rs) if rs else None, "max_bps": max(rs) if rs else None,
                     "jain": jain(rs)}
        groups[g].update(group_delays([byname[m] for m in members if m in byname]))
    return groups


# ---- one-way delays and request/response (l2cc-flowgen) -----------------------------------

#: A delay object of l2cc-flowgen (in us): flows[] and groups carry each as
#: PREFIX_KEY_us (owd_mean_us, rr_p99_us, ...), plus PREFIX_count and
#: PREFIX_lost.
DELAY_STATS = ("mean", "p50", "p99", "max", "dev_p99", "dev_max")


def delay_fields(prefix, st, lost=None):
    """{PREFIX_count, PREFIX_mean_us, ..., PREFIX_lost} of an l2cc-flowgen
    delay object st ({"count", "mean", ...}; None: nothing measured)."""
    st = st or {}
    out = {prefix + "_count": st.get("count") or 0}
    for k in DELAY_STATS:
        out["%s_%s_us" % (prefix, k)] = st.get(k)
    if lost is not None:
        out[prefix + "_lost"] = lost
    return out


def flow_delays(kind, proto, cdoc, sdoc):
    """The delay fields of one flow's results: a UDP ON/OFF source's
    one-way delay (owd_*, from its server's udp_streams entry, found by the
    stream id in the client's report), or a request/response flow's round
    trip (rr_*) and the one-way delays of its requests and responses
    together (owd_*, from the client's report). {} for other flows."""
    cdoc = cdoc or {}
    if kind == "rr":
        out = delay_fields("owd", cdoc.get("owd_us"), cdoc.get("lost"))
        out.update(delay_fields("rr", cdoc.get("rtt_us"), cdoc.get("lost")))
        out["owd_req_mean_us"] = (cdoc.get("req_owd_us") or {}).get("mean")
        out["owd_resp_mean_us"] = (cdoc.get("resp_owd_us") or {}).get("mean")
        return out
    if kind == "onoff" and proto == "udp":
        st = next((x for x in (sdoc or {}).get("udp_streams", [])
                   if cdoc.get("stream") is not None and x.get("stream") == cdoc["stream"]),
                  None)
        return delay_fields("owd", (st or {}).get("owd_us"), (st or {}).get("lost"))
    return {}


def group_delays(frs):
    """A group's delay fields from its members' (flow_delays): counts and
    losses summed, means weighted by the members' counts, the percentiles,
    maxima and deviations the worst member's (percentiles of several
    streams do not combine without their samples). {} when no member has
    any."""
    out = {}
    for prefix in ("owd", "rr"):
        ms = [fr for fr in frs if fr.get(prefix + "_count")]
        if not ms:
            continue
        n = sum(fr[prefix + "_count"] for fr in ms)
        out[prefix + "_count"] = n
        out[prefix + "_mean_us"] = sum(fr[prefix + "_mean_us"] * fr[prefix + "_count"]
                                       for fr in ms) / n
        for k in DELAY_STATS[1:]:
            v = [fr["%s_%s_us" % (prefix, k)] for fr in ms
                 if fr.get("%s_%s_us" % (prefix, k)) is not None]
            out["%s_%s_us" % (prefix, k)] = max(v) if v else None
        lost = [fr.get(prefix + "_lost") for fr in ms if fr.get(prefix + "_lost") is not None]
        out[prefix + "_lost"] = sum(lost) if lost else None
    return out


def outq_stats(q):
    """Mean, standard deviation, 99th percentile and maximum of an output
    queue's samples (bytes); Nones without samples."""
    q = np.asarray(q, dtype=float)
    if not len(q):
        return {"mean_bytes": None, "std_bytes": None, "p99_bytes": None, "max_bytes": None}
    return {"mean_bytes": float(q.mean()), "std_bytes": float(q.std()),
            "p99_bytes": float(np.percentile(q, 99)), "max_bytes": float(q.max())}


def _outq(arr, win):
    """ports[].outq_*: the output queue over the samples in win, all
    priorities together, and per priority that held anything."""
    oq = arr.get("outq_bytes")
    if oq is None or not win.any():
        out = {"outq_" + k: None for k in outq_stats([])}
        out["outq_prio"] = {}
        return out
    out = {"outq_" + k: v for k, v in outq_stats(oq[win].sum(axis=1)).items()}
    out["outq_prio"] = {str(i): outq_stats(oq[win, i]) for i in range(oq.shape[1])
                        if oq[:, i].max() > 0}
    return out


def _port(R, sw, p, pd, A, B, whole_run):
    """ports[SW:P] over [A, B] (absolute), or None without its series; its
    counts (pause_tx, drops, ...) over the whole run, or over [A, B]."""
    t, arr = R.port(sw, p)
    if t is None:
        return None
    rate = pd.get("rate_bps") or 0
    tx = R.port_curve(sw, p, "tx").rate(A, B)
    rx = R.port_curve(sw, p, "rx").rate(A, B)
    win = (t >= A) & (t <= B)
    sat_s, sat_b = R.saturation(sw, p, A, B)
    achieved = sat_b * 8 / sat_s if sat_s else None
    held = None
    if rate and sat_s is not None and sat_s >= SAT_MIN_S and achieved is not None:
        held = abs(achieved / rate - 1) <= RATE_TOL
    pr = {"switch": sw, "port": p, "peer": pd.get("peer"), "role": pd.get("role"),
          "rate_bps": rate, "flow_control": pd.get("flow_control"),
          "tx_bps": tx * 8 if tx is not None else None,
          "rx_bps": rx * 8 if rx is not None else None,
          "utilisation": tx * 8 / rate if rate and tx is not None else None,
          "buffer_mean_bytes": float(arr["buffer"][win].mean()) if win.any() else None,
          "buffer_max_bytes": float(arr["buffer"][win].max()) if win.any() else None,
          "buffer_peak_bytes": float(arr["buffer_peak"][-1])}
    pr.update(_outq(arr, win))
    pr.update({"paused_fraction": ((np.interp(B, t, arr["paused_ns"]) -
                                    np.interp(A, t, arr["paused_ns"])) / 1e9 / (B - A)),
               "saturation": {"saturated_s": sat_s,
                              "saturated_fraction": (sat_s / (B - A)
                                                     if sat_s is not None else None),
                              "achieved_bps": achieved,
                              "ratio": achieved / rate if achieved and rate else None,
                              "held": held, "stalls_excluded": _stalls_excluded(pd)}})
    for k in ("pause_tx", "pause_rx", "pfc_tx", "pfc_rx", "credit_tx", "credit_rx",
              "marked", "drops"):
        if whole_run:
            s0, s1 = R.at_start_end(t, arr[k])
        else:
            s0, s1 = np.interp(A, t, arr[k]), np.interp(B, t, arr[k])
        pr[k] = int(round(s1 - s0))
    return pr


def _ports(R, A, B, whole_run=False):
    ports = {}
    for sw, nd in R.nodes.items():
        if nd.get("kind") != "switch":
            continue
        for p, pd in nd.get("ports", {}).items():
            pr = _port(R, sw, p, pd, A, B, whole_run)
            if pr is not None:
                ports["%s:%s" % (sw, p)] = pr
    return ports


def _rate_check(ports):
    sat = {k: v["saturation"] for k, v in ports.items() if v["saturation"]["held"] is not None}
    und = sorted(k for k, v in ports.items() if v["saturation"]["saturated_s"] is None)
    return {
        "undetermined": und,
        "definition": "a port is saturated over an interval between two samples when its "
                      "egress queue (voq_frames) is non-empty at both and flow control did "
                      "not hold it (neither paused_ns nor credit_stall_ns grew); achieved = "
                      "wire bytes (frames + wire_overhead) sent in those intervals / their "
                      "length; held = |achieved/rate - 1| <= %g, judged when saturated >= "
                      "%g s of the window" % (RATE_TOL, SAT_MIN_S),
        "saturated_ports": sorted(sat), "held": sorted(k for k, v in sat.items() if v["held"]),
        "not_held": sorted(k for k, v in sat.items() if not v["held"])}


def _links(R, A, B, ports):
    links = []
    for lid, fr_, to, sw, p, direction, kind, rate in R.link_dirs():
        t, arr = R.port(sw, p)
        if t is None:
            continue
        r = R.port_curve(sw, p, direction).rate(A, B)
        satf = ports["%s:%s" % (sw, p)]["saturation"]["saturated_fraction"] \
            if direction == "tx" else None
        util = r * 8 / rate if rate and r is not None else None
        links.append({"id": lid, "from": fr_, "to": to, "port": "%s:%s" % (sw, p),
                      "measured": "%s:%s %s_bytes" % (sw, p, direction), "kind": kind,
                      "rate_bps": rate, "mean_bps": r * 8 if r is not None else None,
                      "utilisation": util, "saturated_fraction": satf,
                      "bottleneck": bool((satf or 0) >= BOTTLENECK_SAT or
                                         (util or 0) >= 0.9)})
    return links


def _run_counters(R):
    """fabric_drops, host_edge_drops, flow_control, notifications: over the
    whole run."""
    by_reason, by_port = {}, {}
    fc = {k: 0 for k in ("pause_tx", "pause_rx", "pfc_tx", "pfc_rx", "credit_tx",
                         "credit_rx")}
    fc["paused_s"] = 0.0
    cn = {"marked": 0, "mark_untagged": 0}
    for sw, s in R.sw.items():
        t = s["t"]
        for p, arr in s["ports"].items():
            for reason, x in arr["drop"].items():
                a0, a1 = R.at_start_end(t, x)
                if a1 - a0:
                    by_reason[reason] = by_reason.get(reason, 0) + int(a1 - a0)
                    by_port["%s:%s" % (sw, p)] = by_port.get("%s:%s" % (sw, p), 0) + \
                        int(a1 - a0)
            for k in fc:
                if k == "paused_s":
                    a0, a1 = R.at_start_end(t, arr["paused_ns"])
                    fc[k] += (a1 - a0) / 1e9
                else:
                    a0, a1 = R.at_start_end(t, arr[k])
                    fc[k] += int(a1 - a0)
            for k in cn:
                a0, a1 = R.at_start_end(t, arr[k])
                cn[k] += int(a1 - a0)
    hd_tot = {k: 0 for k in HD_COUNTERS}
    edge = {}
    for h, hd in R.hd.items():
        t = hd["t"]
        for k in HD_COUNTERS:
            a0, a1 = R.at_start_end(t, hd[k])
            hd_tot[k] += int(a1 - a0)
        e = 0
        for side in ("host_drops", "uplink_drops"):
            a0, a1 = R.at_start_end(t, hd[side])
            e += int(a1 - a0)
        if e:
            edge[h] = e
    return {
        "fabric_drops": {"total": sum(by_reason.values()), "by_reason": by_reason,
                         "by_port": by_port},
        "host_edge_drops": {"total": sum(edge.values()), "by_host": edge},
        "flow_control": {"switch": fc, "hostd": {k: hd_tot[k] for k in
                                                 ("pause_rx", "pfc_rx", "credit_rx",
                                                  "credit_tx", "fc_ignored", "fc_blocked",
                                                  "window_blocked")}},
        "notifications": {"switch_marked": cn["marked"],
                          "switch_mark_untagged": cn["mark_untagged"],
                          "hostd": {k: hd_tot[k] for k in ("fecn_rx", "cnp_tx", "cnp_rx",
                                                           "ack_tx", "ack_rx",
                                                           "notify_drops", "seq_gaps")}}}


# ---- phases ----------------------------------------------------------------------------------

def settle_time(grid, rates, a, b, tol=SETTLE_TOL, jain_min=None):
    """(settle_s, settled) of a group over the phase [a, b]: rates is one
    row per member on grid (seconds), NaN where the member is not active.
    At each grid point the group is even when max/min <= tol over the
    members active there (fewer than two, or all at 0: even); with
    jain_min, when their Jain index is at least jain_min instead (a
    steady offset between members within that index, which a max/min band
    never forgives, does not stop a group from settling). settle_s is the
    time from a until the group stays even to the end of the phase; b - a
    and False if it is not even at the end."""
    grid = np.asarray(grid, dtype=float)
    sel = (grid >= a) & (grid <= b)
    rates = np.asarray(rates, dtype=float).reshape(-1, len(grid))[:, sel]
    g = grid[sel]
    if not len(g):
        return b - a, False
    n = (~np.isnan(rates)).sum(axis=0)
    if jain_min is not None:
        x = np.where(np.isnan(rates), 0.0, rates)
        s1, s2 = x.sum(axis=0), (x * x).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            even = (n < 2) | (s1 <= 0) | (s1 * s1 >= jain_min * n * s2)
    else:
        hi = np.where(n > 0, np.nanmax(np.where(np.isnan(rates), -np.inf, rates), axis=0), 0)
        lo = np.where(n > 0, np.nanmin(np.where(np.isnan(rates), np.inf, rates), axis=0), 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            even = (n < 2) | (hi <= 0) | ((lo > 0) & (hi <= tol * lo))
    if not even[-1]:
        return b - a, False
    bad = np.flatnonzero(~even)
    if not len(bad):
        return 0.0, True
    return float(g[bad[-1] + 1] - a), True


def _settle(R, members, a, b):
    """settle_time() of group members on the rate_window series: (settle_s,
    settled, settle_jain_s, settled_jain)."""
    w = R.exp.get("rate_window") or 0.05
    step = min(R.exp.get("sample") or 0.01, w / 2)
    grid = np.arange(a, b + step / 2, step)
    rows = []
    for m in members:
        f = next((x for x in R.flows if x["name"] == m), None)
        curve, source = R.flow_curve(m)
        if f is None or not source:
            continue
        y = curve.sliding(R.t0 + grid, w) * 8
        # Only where the whole rate window lies in the flow's active time.
        y[(grid - w / 2 < f["start"]) | (grid + w / 2 > f["start"] + f["duration"])] = np.nan
        if not np.isnan(y).all():
            rows.append(y)
    if not rows:                    # no member active in the phase
        return None, None, None, None
    s, ok = settle_time(grid, np.array(rows), a, b)
    sj, okj = settle_time(grid, np.array(rows), a, b, jain_min=SETTLE_JAIN)
    return s, ok, sj, okj


def _phase(R, a, b):
    """phases.NAME: what the top level has over the window, over [a, b]."""
    flows = []
    for f in R.flows:
        win, rate, source = _flow_rate(R, f, (a, b))
        flows.append({"name": f["name"], "kind": f["kind"], "window_s": list(win) if win
                      else None, "rate_source": source, "mean_rate_bps": rate})
    groups = _groups(R, flows)
    for g, v in groups.items():
        (v["settle_s"], v["settled"],
         v["settle_jain_s"], v["settled_jain"]) = _settle(R, v["flows"], a, b)
    A, B = R.t0 + a, R.t0 + b
    ports = _ports(R, A, B)
    fair = _fair_share(R, a, b, flows, groups)
    del fair["definition"]          # the top level's says it
    return {"from_s": a, "to_s": b, "flows": flows, "fairness": _fairness(flows),
            "groups": groups, "efficiency": fair["efficiency"], "fair_share": fair,
            "links": _links(R, A, B, ports), "ports": ports}


# ---- fair shares -----------------------------------------------------------------------------

def _flow_model(R, f, source):
    """What the oracle needs of flow f: {"path", "wire", "measured",
    "payload", "demand" (bit/s of wire frames, None: as much as it gets),
    "span"}; or a string saying why it is not modelled."""
    if f["kind"] == "poisson":
        return "a Poisson workload (its load counts as background traffic)"
    path = FS.tree_path(R.nodes, f["src"], f["dst"])
    if not path:
        return "no path from %s to %s in the lab" % (f["src"], f["dst"])
    pl = R.plan.get(f["name"], {})
    hc = R.hostd_conf.get(f["src"])
    hostd_frame = None
    if source == "hostd":
        keys, _ = R.hostd_keys(f)
        fl = [R.hd[f["src"]]["flows"][k] for k in keys]
        frames = sum(x["frames_out_total"] for x in fl)
        if frames:
            hostd_frame = sum(x["bytes_out_total"] for x in fl) / frames
    proto = f.get("proto") or "tcp"
    sz = FS.frame_sizes(f["kind"], proto, source, pl.get("mtu"), pl.get("dst_mtu"),
                        pl.get("len"), tagged=bool(hc and hc["tag"]), hostd_frame=hostd_frame,
                        vlan=bool(hc and hc["pcp_from_dscp"] and f.get("prio")))
    offered = pl.get("rate_bps") or None
    if offered and f["kind"] == "onoff":
        on, off = f["onoff"]["on"], f["onoff"]["off"]
        offered = offered * on / (on + off)
    if offered and proto == "tcp" and f["kind"] == "onoff":
        offered = None          # one TCP connection: it takes what it gets while ON
    sz["demand"] = offered * sz["wire"] / sz["payload"] if offered else None
    sz["path"] = path
    sz["span"] = (f["start"], f["start"] + f["duration"])
    return sz


def _link_capacity(R):
    """{link id: (rate bit/s, wire overhead of its sender, (switch, port,
    direction) it is measured at)} of the links with a rate."""
    out = {}
    for lid, fr_, to, sw, p, direction, kind, rate in R.link_dirs():
        if not rate:
            continue            # unlimited: constrains nothing
        ov = R.overhead.get((sw, p), 0)
        if kind == "from-host" and fr_ in R.hostd_conf:
            ov = R.hostd_conf[fr_]["wire_overhead"]
        out[lid] = (rate, ov, (sw, p, direction))
    return out


def _fair_share(R, a, b, flows, groups):
    """Max-min fair shares over [a, b] (seconds from t0): sets fair_bps,
    rate_over_fair and fair_limit of every flow of `flows` (results.json
    entries, each measured over its window_s) and fair_bps, rate_over_fair
    of `groups`; returns the fair_share summary."""
    caps = _link_capacity(R)
    fres = {fr["name"]: fr for fr in flows}
    models, skipped = {}, {}
    for f in R.flows:
        m = _flow_model(R, f, fres[f["name"]].get("rate_source"))
        if isinstance(m, str):
            skipped[f["name"]] = m
        else:
            m["curve"] = R.flow_curve(f["name"])[0]
            models[f["name"]] = m
    lcurves = {lid: R.port_curve(*where) for lid, (_, _, where) in caps.items()}

    def control(lid, x, y):
        """Wire bits/s on link lid over [x, y] that no modelled flow's data
        frames account for: credits, ACKs, CNPs, ARP, unmodelled flows."""
        rate, ov, _ = caps[lid]
        tot = lcurves[lid].rate(R.t0 + x, R.t0 + y)
        if tot is None:
            return 0.0
        data = 0.0
        for m in models.values():
            if lid in m["path"]:
                r = m["curve"].rate(R.t0 + x, R.t0 + y) or 0.0
                data += r / m["measured"] * (m["wire"] + ov)
        return max(0.0, (tot - data) * 8)

    eps = []
    for x, y, active in FS.epochs({n: m["span"] for n, m in models.items()}, a, b):
        cap, oracle = {}, {}
        for n in active:
            m = models[n]
            uses = {l: (m["wire"] + caps[l][1]) / m["wire"] for l in m["path"] if l in caps}
            for l in uses:
                if l not in cap:
                    cap[l] = max(0.0, caps[l][0] - control(l, x, y))
            oracle[n] = FS.Flow(uses, m["demand"])
        got = FS.max_min(cap, oracle)
        # Wire frames -> the unit the flow's rate is measured in.
        eps.append((x, y, {n: (r * models[n]["measured"] / models[n]["wire"], lim)
                           for n, (r, lim) in got.items()}))
    for fr in flows:
        fr["fair_bps"] = fr["rate_over_fair"] = fr["fair_limit"] = None
        win = fr.get("window_s")
        if fr["name"] not in models or not win:
            continue
        tot, best = 0.0, (0.0, None)
        for x, y, alloc in eps:
            ov = min(y, win[1]) - max(x, win[0])
            if ov > 0 and fr["name"] in alloc:
                r, lim = alloc[fr["name"]]
                tot += r * ov
                best = max(best, (ov, lim), key=lambda z: z[0])
        fr["fair_bps"] = tot / (win[1] - win[0])
        fr["fair_limit"] = best[1]
        if fr["mean_rate_bps"] is not None and fr["fair_bps"] > 0 and \
                np.isfinite(fr["fair_bps"]):
            fr["rate_over_fair"] = fr["mean_rate_bps"] / fr["fair_bps"]
    both = [fr for fr in flows if fr["rate_over_fair"] is not None]
    for g, v in groups.items():
        mine = [fr for fr in both if fr["name"] in v["flows"]]
        v["fair_bps"] = sum(fr["fair_bps"] for fr in mine) if mine else None
        v["rate_over_fair"] = (sum(fr["mean_rate_bps"] for fr in mine) / v["fair_bps"]
                               if mine else None)
    rate = sum(fr["mean_rate_bps"] for fr in both)
    fair = sum(fr["fair_bps"] for fr in both)
    used = sorted({l for m in models.values() for l in m["path"] if l in caps})
    return {"efficiency": rate / fair if fair else None, "sum_bps": rate if both else None,
            "fair_bps": fair if both else None, "flows": len(both),
            "not_modelled": skipped,
            "links": {l: {"rate_bps": caps[l][0], "wire_overhead": caps[l][1],
                          "control_bps": control(l, a, b)} for l in used},
            "epochs": [{"from_s": x, "to_s": y,
                        "fair_bps": {n: r for n, (r, _) in alloc.items()},
                        "limit": {n: lim for n, (_, lim) in alloc.items()}}
                       for x, y, alloc in eps],
            "definition": FAIR_DEFINITION}


FAIR_DEFINITION = (
    "max-min fair allocation by progressive filling over the link directions each flow "
    "crosses on the switch tree, at every stretch of time with the same flows active, "
    "averaged over each flow's window_s. A link's capacity is its rate less the wire bits "
    "it carried that no modelled flow's data frames account for (control_bps: credits, "
    "ACKs, CNPs, unmodelled flows), each frame charged its length with the l2cc tag plus "
    "the sender's wire_overhead; a flow is capped by its offered rate (UDP, or a TCP -b; "
    "ON/OFF sources at rate x on/(on+off)). fair_bps is in the unit of the flow's "
    "rate_source (hostd: frames without the tag; iperf3/l2cc-flowgen: payload); "
    "efficiency = sum of mean_rate_bps / sum of fair_bps over the flows that have both")


def _series_gaps(R):
    """Intervals in [t0, end] where a daemon wrote no line for more than
    GAP_FACTOR sample intervals: the daemon was not running (no CPU)."""
    out = []
    dts = [np.diff(a["t"]) for a in list(R.sw.values()) + list(R.hd.values())
           if len(a["t"]) > 1]
    if not dts:
        return out
    lim = GAP_FACTOR * float(np.median(np.concatenate(dts)))
    for name, a in sorted(list(R.sw.items()) + list(R.hd.items())):
        t = a["t"]
        for i in np.flatnonzero(np.diff(t) > lim):
            if R.t0 <= t[i] <= R.t_end:
                out.append({"node": name, "at_s": float(t[i] - R.t0),
                            "gap_s": float(t[i + 1] - t[i])})
    return out


def _stalls_excluded(pd):
    fc = pd.get("flow_control")
    if fc in ("pause", "pfc"):
        return "PAUSE/PFC received (paused_ns)"
    if fc == "credit":
        return ("waiting for credits (credit_stall_ns)" if pd.get("role") == "switch" else
                "PAUSE/PFC (a host grants no credits)")
    return "none needed (flow_control none)"


def _iperf_summary(R, f, win):
    """(iperf3 figures of a flow, error or None)."""
    pl = R.plan.get(f["name"], {})
    out, err = {}, None
    cl, sv = pl.get("client") or {}, pl.get("server") or {}
    cdoc = _try_json(os.path.join(R.dir, cl["out"])) if cl.get("out") else None
    sdoc = _try_json(os.path.join(R.dir, sv["out"])) if sv.get("out") else None
    if cdoc is None and _died_at_stop(R, f, cl, sdoc):
        R.warnings.append('flow "%s": its iperf3 client died of signal %d when stopped at '
                          'its stop time (%s), after sending: its own report is lost, the '
                          'server\'s is used' % (f["name"], -cl["rc"], _last_line(R, cl)))
    elif cdoc is None:
        err = "no iperf3 client report (%s)" % (cl.get("err") or "never started")
    elif cdoc.get("error") and cdoc["error"] not in IPERF_INTERRUPTED:
        err = "iperf3: %s" % cdoc["error"]
    elif cl.get("rc") not in (0, None) and not cl.get("signalled"):
        err = "iperf3 client exited with status %s" % cl.get("rc")
    end = (cdoc or {}).get("end") or {}
    if f.get("proto") == "udp":
        s = end.get("sum") or {}
        out.update(sent_bps=s.get("bits_per_second"), lost_percent=s.get("lost_percent"),
                   jitter_ms=s.get("jitter_ms"))
        ss = ((sdoc or {}).get("end") or {}).get("sum") or {}
        if ss:
            out.update(lost_percent=ss.get("lost_percent"), jitter_ms=ss.get("jitter_ms"))
        # A UDP server's end summary has no byte count (3.12): add up its intervals.
        ivs = [iv.get("sum") or {} for iv in (sdoc or {}).get("intervals", [])]
        secs = sum(i.get("seconds", 0) for i in ivs)
        if secs > 0:
            out["received_bps"] = sum(i.get("bytes", 0) for i in ivs) * 8 / secs
    else:
        out.update(sent_bps=(end.get("sum_sent") or {}).get("bits_per_second"),
                   retransmits=(end.get("sum_sent") or {}).get("retransmits"))
        # A client stopped by SIGINT has no receiver summary (its
        # sum_received is zeros): take the server's, else say nothing.
        rcv = ((sdoc or {}).get("end") or {}).get("sum_received") or {}
        if not rcv.get("bytes"):
            rcv = end.get("sum_received") or {}
        out["received_bps"] = rcv.get("bits_per_second") if rcv.get("bytes") else None
    # Receiver goodput over the flow's window, from the interval reports.
    curve, src = R._iperf_curve(f)
    if curve is not None and win:
        r = curve.rate(R.t0 + win[0], R.t0 + win[1])
        out["goodput_bps"] = r * 8 if r is not None else None
        out["goodput_from"] = src
    return out, err


def _died_at_stop(R, f, cl, sdoc):
    """Whether an iperf3 client with no report was killed by a signal of
    its own (Debian's 3.12 may abort in its SIGINT handler: "malloc
    assertion failure in sysmalloc") after the SIGINT that ended it at its
    stop time, while its server reported intervals to the end: the flow
    ran, only the client's report is lost."""
    if cl.get("signalled") != "SIGINT" or not isinstance(cl.get("rc"), int) or cl["rc"] >= 0:
        return False
    stop = R.t0 + f["start"] + f["duration"]
    ivs = [iv.get("sum") or {} for iv in (sdoc or {}).get("intervals", [])]
    return bool(cl.get("ended") and cl["ended"] >= stop - 0.05 and ivs and
                cl.get("started") and
                cl["started"] + ivs[-1].get("end", 0) >= stop - 0.5)


def _last_line(R, cl):
    try:
        with open(os.path.join(R.dir, cl["err"]), errors="replace") as fh:
            lines = [x.strip() for x in fh if x.strip()]
        return lines[-1][:120] if lines else "no message"
    except (OSError, KeyError, TypeError):
        return "no message"


def _flowgen_error(R, f):
    pl = R.plan.get(f["name"], {})
    cl = pl.get("client") or {}
    doc = R._flowgen_doc(f)
    if doc is None:
        return "no l2cc-flowgen report (%s)" % (cl.get("err") or "never started")
    if cl.get("rc") not in (0, None) and not cl.get("signalled"):
        return "l2cc-flowgen client exited with status %s" % cl.get("rc")
    if doc.get("error"):
        return "l2cc-flowgen: %s" % doc["error"]
    failed = (doc.get("summary") or {}).get("failed")
    if failed:
        R.warnings.append('flow "%s": %d of its %s flows failed (see %s)'
                          % (f["name"], failed, (doc.get("summary") or {}).get("flows"),
                             cl.get("out")))
    return None


def _fct_stats(fl):
    v = [x["fct_us"] for x in fl]
    late = [x.get("late_us") for x in fl if x.get("late_us") is not None]
    mean = float(np.mean(v)) if v else None
    std = float(np.std(v)) if v else None
    # cv: the spread of completion times of flows alike, relative to their
    # mean (Lu et al. 2006 Fig. 5's normalised standard deviation).
    return {"count": len(v), "mean_us": mean, "std_us": std,
            "cv": std / mean if v and mean else None,
            "p50_us": _pct(v, 50), "p99_us": _pct(v, 99), "max_us": max(v) if v else None,
            "late_mean_us": float(np.mean(late)) if late else None}


def _fct(R):
    done, unfinished, per_flow = [], 0, {}
    for f in R.flows:
        if f["kind"] != "poisson":
            continue
        doc = R._flowgen_doc(f) or {}
        mine = []
        for x in doc.get("flows", []):
            if x.get("fct_us") is None or x.get("size") is None:
                unfinished += 1
            else:
                mine.append(x)
        per_flow[f["name"]] = _fct_stats(mine)
        per_flow[f["name"]]["summary"] = doc.get("summary")
        done.extend(mine)
    if not per_flow:
        return None
    buckets = []
    for lo, hi, label in FCT_BUCKETS:
        sel = [x for x in done if x["size"] >= lo and (hi is None or x["size"] < hi)]
        if sel:
            b = _fct_stats(sel)
            b["bucket"] = label
            buckets.append(b)
    return {"all": _fct_stats(done), "unfinished": unfinished, "buckets": buckets,
            "by_bucket": {FCT_BUCKET_KEYS[b["bucket"]]: b for b in buckets},
            "per_flow": per_flow, "bucket_edges_bytes": [b[1] for b in FCT_BUCKETS[:-1]]}


def _cpu(c):
    if not c or not c.get("wall_s"):
        return None
    w = c["wall_s"]
    pct = (lambda s: 100.0 * s / w if s is not None else None)
    return {"wall_s": round(w, 3), "ncpu": c.get("ncpu"),
            "lab_pct_one_core": pct(c.get("lab_s")),
            "daemons_pct_one_core": pct(c.get("daemons_s")),
            "traffic_pct_one_core": pct(c.get("traffic_s")),
            "per_daemon_pct_one_core": {k: pct(v) for k, v in
                                        (c.get("daemons_cpu_s") or {}).items()},
            "machine_pct_one_core": c.get("machine_pct_one_core"),
            "machine_steal_fraction": c.get("machine_steal_fraction"),
            "daemons_run_delay_s": {k: round(v, 4) if v is not None else None for k, v in
                                    (c.get("daemons_run_delay_s") or {}).items()},
            "run_delay_max_s": max((v for v in (c.get("daemons_run_delay_s") or {}).values()
                                    if v is not None), default=None),
            "run_delay_max_daemon": max(((v, k) for k, v in
                                         (c.get("daemons_run_delay_s") or {}).items()
                                         if v is not None), default=(None, None))[1],
            "definition": "utime+stime over the run (from launching the clients until every "
                          "traffic process was reaped) as %% of one core: the lab's daemons "
                          "(/proc/PID/stat) plus the iperf3/l2cc-flowgen processes "
                          "(RUSAGE_CHILDREN); machine: /proc/stat busy time x ncpu, which is "
                          "tick-sampled and may read below the per-process figures (those "
                          "come from the scheduler's exact run time); run delay: the time a "
                          "daemon's threads were runnable but waited for a CPU over the same "
                          "span (/proc/PID/task/*/schedstat), what a busy machine costs it; "
                          "steal: the share of the machine's CPU time the hypervisor gave to "
                          "others while the VM had work (/proc/stat), which the guest counts "
                          "as running"}


# ---- output ----------------------------------------------------------------------------------

# Epoch times keep their microseconds; everything else 6 significant digits.
_EXACT = ("t0",)


def _round(x, key=None):
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if x != x:      # NaN
            return None
        return x if key in _EXACT else float("%.6g" % x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, dict):
        return {k: _round(v, k) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v) for v in x]
    return x


def _csv_rows(res):
    rows = []

    def add(section, name, metric, value, unit=None):
        if value is None or isinstance(value, (dict, list)):
            return
        if unit is None:
            unit = next((u for suf, u in (("_bps", "bit/s"), ("_bytes", "bytes"),
                                          ("_percent", "%"), ("_ms", "ms"), ("_us", "us"),
                                          ("_s", "s")) if metric.endswith(suf)), "")
        rows.append((section, name, metric, value, unit))
    for f in res["flows"]:
        add("flow", f["name"], "mean_rate_bps", f["mean_rate_bps"], "bit/s")
        add("flow", f["name"], "goodput_bps", f.get("goodput_bps"), "bit/s")
        add("flow", f["name"], "rate_source", f["rate_source"])
        add("flow", f["name"], "fair_bps", f.get("fair_bps"), "bit/s")
        add("flow", f["name"], "rate_over_fair", f.get("rate_over_fair"))
        add("flow", f["name"], "first_data_s", f.get("first_data_s"))
        add("flow", f["name"], "start_late_ms", f.get("start_late_ms"))
        if f.get("window_s"):
            add("flow", f["name"], "window_from_s", f["window_s"][0], "s")
            add("flow", f["name"], "window_to_s", f["window_s"][1], "s")
        for k, v in (f.get("iperf3") or {}).items():
            add("flow", f["name"], "iperf3_" + k, v)
        for k, v in (f.get("hostd") or {}).items():
            if k != "keys":
                add("flow", f["name"], "hostd_" + k, v)
        for k in sorted(k for k in f if k.startswith(("owd_", "rr_"))):
            add("flow", f["name"], k, f[k], "us" if k.endswith("_us") else "")
        add("flow", f["name"], "error", f.get("error"))
    add("fairness", "all", "jain", res["fairness"]["jain"])
    add("fairness", "all", "jain_goodput", res["fairness"]["jain_goodput"])
    for g, v in res["groups"].items():
        for k in ("n", "sum_bps", "mean_bps", "min_bps", "max_bps", "jain", "fair_bps",
                  "rate_over_fair"):
            add("group", g, k, v.get(k), "bit/s" if k.endswith("bps") else "")
        for k in sorted(k for k in v if k.startswith(("owd_", "rr_"))):
            add("group", g, k, v[k], "us" if k.endswith("_us") else "")
    add("fair_share", "all", "efficiency", res["fair_share"]["efficiency"])
    for ph, v in res["phases"].items():
        add("phase", ph, "from_s", v["from_s"], "s")
        add("phase", ph, "to_s", v["to_s"], "s")
        add("phase", ph, "jain", v["fairness"]["jain"])
        add("phase", ph, "efficiency", v["efficiency"])
        for g, gv in v["groups"].items():
            for k in ("sum_bps", "jain", "rate_over_fair", "settle_s", "settle_jain_s"):
                add("phase", "%s/%s" % (ph, g), k, gv.get(k))
    for l in res["links"]:
        add("link", l["id"], "utilisation", l["utilisation"])
        add("link", l["id"], "mean_bps", l["mean_bps"], "bit/s")
        add("link", l["id"], "rate_bps", l["rate_bps"], "bit/s")
    for k, p in res["ports"].items():
        for m in ("tx_bps", "rx_bps", "utilisation", "buffer_mean_bytes", "buffer_max_bytes",
                  "outq_mean_bytes", "outq_std_bytes", "outq_p99_bytes", "outq_max_bytes",
                  "paused_fraction", "pause_tx", "pfc_tx", "credit_tx", "marked", "drops"):
            add("port", k, m, p[m], "bit/s" if m.endswith("bps") else
                "bytes" if m.endswith("bytes") else "")
        s = p["saturation"]
        add("port", k, "saturated_s", s["saturated_s"], "s")
        add("port", k, "saturated_ratio", s["ratio"])
        add("port", k, "saturated_achieved_bps", s["achieved_bps"], "bit/s")
        add("port", k, "rate_held", s["held"])
    add("drops", "fabric", "total", res["fabric_drops"]["total"], "frames")
    for r, v in res["fabric_drops"]["by_reason"].items():
        add("drops", "fabric", r, v, "frames")
    add("drops", "host_edge", "total", res["host_edge_drops"]["total"], "frames")
    for k, v in res["flow_control"]["switch"].items():
        add("flow_control", "switch", k, v, "s" if k.endswith("_s") else "frames")
    for k, v in res["flow_control"]["hostd"].items():
        add("flow_control", "hostd", k, v)
    add("notifications", "switch", "marked", res["notifications"]["switch_marked"], "frames")
    for k, v in res["notifications"]["hostd"].items():
        add("notifications", "hostd", k, v, "frames")
    fct = res.get("fct") or {}
    for b in fct.get("buckets", []) + ([dict(fct["all"], bucket="all")] if fct else []):
        for k in ("count", "mean_us", "p50_us", "p99_us", "max_us"):
            add("fct", b["bucket"], k, b[k], "us" if k.endswith("us") else "")
    for k, v in (res.get("cpu") or {}).items():
        if k.endswith("pct_one_core") or k in ("wall_s", "ncpu"):
            add("cpu", "lab" if k != "machine_pct_one_core" else "machine", k, v,
                "%" if k.endswith("core") else "")
        if k == "per_daemon_pct_one_core":
            for n, x in v.items():
                add("cpu", n, "pct_one_core", x, "%")
    return rows


def write(d, res):
    res = _round(res)
    tmp = os.path.join(d, "results.json.tmp")
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(d, "results.json"))
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(("section", "name", "metric", "value", "unit"))
        for r in _csv_rows(res):
            w.writerow([("%.6g" % v) if isinstance(v, float) else v for v in r])


def _m(bps):
    return "%8.2f" % (bps / 1e6) if bps is not None else "       -"


def _f3(x):
    return "%.3f" % x if x is not None else "-"


def summary_text(res):
    L = []
    L.append("%s on lab %s: window %.2f..%.2f s" % (res["experiment"], res["lab"],
                                                    res["window_s"][0], res["window_s"][1]))
    L.append("  %-20s %-14s %-7s %9s %9s %9s  %s" % ("flow", "src>dst", "kind", "Mbit/s",
                                                      "goodput", "fair", "source"))
    for f in res["flows"]:
        L.append("  %-20s %-14s %-7s %s %s %s  %s%s" % (
            f["name"], "%s>%s" % (f["src"], f["dst"]),
            f["proto"] or f["kind"], _m(f["mean_rate_bps"]), _m(f.get("goodput_bps")),
            _m(f.get("fair_bps")), f["rate_source"] or "-",
            "  ERROR " + f["error"] if f.get("error") else ""))
    eff = res["fair_share"]["efficiency"]
    if eff is not None:
        L.append("  efficiency %.3f (sum of rates / sum of max-min fair shares, %d flows)"
                 % (eff, res["fair_share"]["flows"]))
    j = res["fairness"]["jain"]
    L.append("  Jain's index over %d flows: %s%s" % (
        res["fairness"]["flows"], "%.3f" % j if j is not None else "-",
        "".join("; %s %.3f (sum %.1f Mbit/s)" % (g, v["jain"], (v["sum_bps"] or 0) / 1e6)
                for g, v in res["groups"].items() if v["jain"] is not None)))
    shown = [l for l in res["links"] if l["kind"] == "inter-switch" or l["bottleneck"]]
    for l in shown:
        L.append("  link %-14s %s Mbit/s, utilisation %s%s" % (
            l["id"], _m(l["mean_bps"]),
            "%.3f" % l["utilisation"] if l["utilisation"] is not None else "-",
            "  (bottleneck)" if l["bottleneck"] else ""))
    fd = res["fabric_drops"]
    fc = res["flow_control"]["switch"]
    L.append("  fabric drops %d%s; host-edge drops %d; PAUSE %d, PFC %d, credit %d sent; "
             "paused %.3f s" % (fd["total"], (" " + json.dumps(fd["by_reason"]))
                                if fd["total"] else "", res["host_edge_drops"]["total"],
                                fc["pause_tx"], fc["pfc_tx"], fc["credit_tx"],
                                fc["paused_s"]))
    n = res["notifications"]
    L.append("  marks %d; FECN rx %d, CNP tx %d rx %d" % (
        n["switch_marked"], n["hostd"]["fecn_rx"], n["hostd"]["cnp_tx"], n["hostd"]["cnp_rx"]))
    rc = res["rate_check"]
    if rc["saturated_ports"]:
        L.append("  rate check: %d saturated port%s, held within 2%%: %s%s" % (
            len(rc["saturated_ports"]), "s" if len(rc["saturated_ports"]) > 1 else "",
            ", ".join(rc["held"]) or "none",
            "; NOT held: " + ", ".join("%s (%.1f%%)" % (k, 100 * (
                res["ports"][k]["saturation"]["ratio"] - 1)) for k in rc["not_held"])
            if rc["not_held"] else ""))
    for ph, v in res["phases"].items():
        L.append("  phase %s %.2f..%.2f s: Jain %s, efficiency %s%s" % (
            ph, v["from_s"], v["to_s"], _f3(v["fairness"]["jain"]), _f3(v["efficiency"]),
            "".join("; %s %.2f Mbit/s, Jain %s, %s" % (
                g, (gv["sum_bps"] or 0) / 1e6, _f3(gv["jain"]),
                ("settled after %.2f s" % gv["settle_s"] if gv["settled"] else "not settled")
                + (" (Jain >= %.2f after %.2f s)" % (SETTLE_JAIN, gv["settle_jain_s"])
                   if gv["settled_jain"] and not gv["settled"] else ""))
                for g, gv in v["groups"].items() if gv["sum_bps"] is not None)))
    for f in res["flows"]:
        if f.get("owd_count"):
            L.append("  delay %-14s one-way n=%d mean %.0f us, p99 %.0f us, dev p99 %s us%s"
                     % (f["name"], f["owd_count"], f["owd_mean_us"], f["owd_p99_us"],
                        "%.0f" % f["owd_dev_p99_us"] if f["owd_dev_p99_us"] is not None
                        else "-", "; round trip mean %.0f us, p99 %.0f us, %d lost"
                        % (f["rr_mean_us"], f["rr_p99_us"], f["rr_lost"] or 0)
                        if f.get("rr_count") else ""))
    fct = res.get("fct")
    if fct:
        for b in fct["buckets"]:
            L.append("  FCT %-9s n=%-5d mean %.0f us, p50 %.0f us, p99 %.0f us"
                     % (b["bucket"], b["count"], b["mean_us"], b["p50_us"], b["p99_us"]))
    c = res.get("cpu")
    if c:
        L.append("  CPU: lab %.0f%% of one core (daemons %.0f%%, traffic %.0f%%); machine "
                 "%.0f%% of one core (%d cores)" % (
                     c["lab_pct_one_core"] or 0, c["daemons_pct_one_core"] or 0,
                     c["traffic_pct_one_core"] or 0, c["machine_pct_one_core"] or 0,
                     c["ncpu"] or 0))
        if c.get("run_delay_max_s") is not None:
            L[-1] += "; the longest wait for a CPU: %s %.3f s (%.1f%% of the run)" % (
                c["run_delay_max_daemon"], c["run_delay_max_s"],
                100.0 * c["run_delay_max_s"] / c["wall_s"])
        if c.get("machine_steal_fraction"):
            L[-1] += "; steal (the hypervisor's) %.1f%%" % (100.0 * c["machine_steal_fraction"])
    fi = res.get("fidelity")
    if fi:
        L.append("  fidelity: %s; wire time lost at most %s%s%s" % (
            "HELD" if fi["held"] else "NOT HELD (%s)" % fi["why"],
            "%.2g%% of the window (%s)" % (100 * fi["wire_lost_max_fraction"],
                                          fi["wire_lost_max_port"])
            if fi["wire_lost_max_fraction"] is not None else "- (not reported)",
            "; generators short by at most %.1f%%" % (100 * fi["shortfall_max"])
            if fi["shortfall_max"] is not None else "",
            "; frame account %s" % ("closed" if fi["account_closed"] else "NOT closed")
            if fi["account_closed"] is not None else ""))
    for w in res.get("warnings", []):
        L.append("  warning: " + w)
    return "\n".join(L)
