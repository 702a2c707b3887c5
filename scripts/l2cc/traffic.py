# SPDX-License-Identifier: BSD-2-Clause
"""The traffic of one experiment run: iperf3 and l2cc-flowgen servers and
clients in the lab's host namespaces, started on an absolute schedule.

Order of a run (Traffic.run):
 1. plan: each flow's addresses, server port, datagram size, rate;
 2. the daemons' configuration as they report it (`ports`, `status`) and
    the current size of every time series (the run's data is what follows);
 3. one server per flow (iperf3 -s -1, or l2cc-flowgen server), waited for
    until it listens; one ping per (src, dst) pair, so ARP caches and the
    switches' address tables are warm before anything is measured;
 4. t0 = now + a lead time. Every iperf3 client is started ahead of time
    by a tiny launcher that sleeps until its absolute start time and then
    execs iperf3 (so all start within a few ms, whatever process creation
    costs); l2cc-flowgen clients get --start-at. An iperf3 client is ended
    by SIGINT at its stop time (its -t, whole seconds from its own, possibly
    late, start, is only a backstop); iperf3 then still writes its JSON,
    intervals included;
 5. wait for the clients, stop the servers, CPU accounting;
 6. the time series lines of [t0 - 1 s, end + 1 s] into series/NODE.jsonl,
    and run.json: everything results.py needs, so that results and plots
    can be recomputed from the directory alone.

Processes are only ever signalled by the PIDs this module started.
"""

import concurrent.futures
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

from . import provenance as P

PY = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable

# Sleeps until argv[1] (epoch seconds), notes the actual start on stderr,
# becomes argv[2:]. Run by `ip netns exec`, so the PID stays the same all
# the way to iperf3 and signals reach it.
LAUNCHER = ("import os,sys,time\n"
            "t=float(sys.argv[1])\n"
            "while True:\n"
            "    d=t-time.time()\n"
            "    if d<=0: break\n"
            "    time.sleep(min(d,0.5))\n"
            "sys.stderr.write('l2cc-launch %.6f\\n'%time.time())\n"
            "sys.stderr.flush()\n"
            "os.execvp(sys.argv[2],sys.argv[2:])\n")

IPERF_INTERVAL = "0.1"      # iperf3's shortest reporting interval
LEAD_MIN = 0.5              # s between launching and t0
LEAD_PER_FLOW = 0.03
CLIENT_GRACE = 5.0          # s after its stop time before a client is interrupted
SERVER_GRACE = 2.0          # s for iperf3 -1 servers to exit on their own
SERIES_MARGIN = 1.0         # s of time series kept before t0 and after the end
QUIET_GAP = 0.1             # s between two reads of the counters that must agree
QUIET_MAX = 5.0             # s to wait for the fabric to go quiet


class TrafficError(Exception):
    pass


class Proc:
    """A process we started: its command, output files and fate."""

    def __init__(self, flow, role, cmd, out, err):
        self.flow, self.role, self.cmd, self.out, self.err = flow, role, cmd, out, err
        self.p = None
        self.launched = None
        self.ended = None
        self.rc = None
        self.kill_at = None         # epoch: SIGINT then (fractional iperf3 durations)
        self.signalled = None

    def alive(self):
        return self.p is not None and self.p.poll() is None

    def signal(self, sig):
        if self.alive():
            try:
                os.kill(self.p.pid, sig)
                self.signalled = self.signalled or signal.Signals(sig).name
            except ProcessLookupError:
                pass


def _read_cpu(pid):
    """utime + stime of PID in seconds, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _read_run_delay(pid):
    """Seconds PID's threads have spent runnable but waiting for a CPU (the
    scheduler's run-queue delay, /proc/PID/task/*/schedstat), or None."""
    total, seen = 0, False
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for t in tasks:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[1])
                seen = True
        except (OSError, IndexError, ValueError):
            pass
    return total / 1e9 if seen else None


def _read_proc_stat():
    """(busy, total, steal) jiffies of the machine, from /proc/stat's cpu
    line. Steal is time the hypervisor ran something else while this VM's
    vCPUs had work: the guest's scheduler counts it as running, so a daemon
    starved by it shows little run delay but still runs late."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    total = sum(v[:8])          # guest time is already in user
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return total - idle, total, (v[7] if len(v) > 7 else 0)


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def tos_of(prio):
    """The IP TOS byte of a flow of priority prio: DSCP class selector
    prio (CSprio = prio << 3), which hostd's pcp_from_dscp maps back to
    PCP prio."""
    return (prio << 3) << 2


class Traffic:
    def __init__(self, exp, lab, out, bindir, say=print):
        self.e, self.lab, self.out, self.bindir, self.say = exp, lab, out, bindir, say
        self.provenance = None
        self.nodes = lab.get("nodes", {})
        self.flowgen = os.path.join(bindir, "l2cc-flowgen")
        self.l2ccctl = os.path.join(bindir, "l2ccctl")
        self.tdir = os.path.join(out, "traffic")
        self.procs = []
        self.plan = {}
        self.warnings = []
        self.t0 = None
        self.cpu = {}
        self.offsets = {}
        self.aborted = None
        self.status = "planned"

    # ---- helpers ----------------------------------------------------------------------

    def _ns(self, host):
        return self.nodes[host]["netns"]

    def _addr(self, host):
        return str(self.nodes[host]["addr"]).split("/")[0]

    def _nsrun(self, host, *cmd, timeout=10):
        return subprocess.run(["ip", "netns", "exec", self._ns(host)] + list(cmd),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=timeout)

    def _warn(self, msg):
        self.warnings.append(msg)
        print("warning: " + msg, file=sys.stderr, flush=True)

    def _spawn(self, pr):
        with open(pr.out, "wb") as o, open(pr.err, "wb") as e:
            try:
                pr.p = subprocess.Popen(pr.cmd, stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                        close_fds=True)
            except OSError as err:
                raise TrafficError("cannot start %s: %s" % (pr.cmd[0], err))
        pr.launched = time.time()
        self.procs.append(pr)
        return pr

    # ---- 1. plan -------------------------------------------------------------------------

    def _mtu(self, host, cache={}):
        key = (self._ns(host), "eth0")
        if key not in cache:
            r = self._nsrun(host, "ip", "-j", "link", "show", "dev", "eth0")
            try:
                cache[key] = int(json.loads(r.stdout)[0]["mtu"])
            except (ValueError, KeyError, IndexError):
                cache[key] = 1500
                self._warn("could not read eth0's MTU in %s; assuming 1500" % self._ns(host))
        return cache[key]

    def make_plan(self):
        if any(f.kind != "iperf" for f in self.e.flows) and not os.access(self.flowgen,
                                                                           os.X_OK):
            raise TrafficError("%s is missing (onoff/poisson flows need it): build it first"
                               % self.flowgen)
        for f in self.e.flows:
            rate = f.rate
            if rate == "line":
                rate = self.nodes[f.src].get("rate_bps") or 0
            pl = {"src_addr": self._addr(f.src), "dst_addr": self._addr(f.dst),
                  "src_netns": self._ns(f.src), "dst_netns": self._ns(f.dst),
                  "port": f.port, "rate_bps": rate, "mtu": self._mtu(f.src),
                  "src_hostd": bool(self.nodes[f.src].get("hostd"))}
            if f.kind == "rr":
                # What the oracle sees of it: the requests (UDP payload bit/s).
                pl["rate_bps"] = f.rr["rate"] * f.rr["req"] * 8
                pl["len"] = f.rr["req"]
                pl["dst_mtu"] = self._mtu(f.dst)
            elif f.kind == "iperf" or (f.kind == "onoff" and f.proto == "udp"):
                # A datagram that fits both ends' eth0: a host behind hostd has
                # 18 bytes less MTU than one without, and IP fragments would
                # be counted, paced and lost as separate frames. (l2cc-flowgen
                # alone would only see the source's route MTU.)
                pl["dst_mtu"] = self._mtu(f.dst)
                pl["len"] = f.len or (min(pl["mtu"], pl["dst_mtu"]) - 28
                                      if f.proto == "udp" else None)
            self.plan[f.name] = pl

    # ---- 2. the daemons before ---------------------------------------------------------

    def _ctl(self, sock, cmd, tries=2):
        for _ in range(tries):
            try:
                r = subprocess.run([self.l2ccctl, "-s", sock, "-r", "-t", "2000", cmd],
                                   capture_output=True, text=True, timeout=5,
                                   stdin=subprocess.DEVNULL)
                if r.returncode == 0:
                    return json.loads(r.stdout)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        return None

    def snapshot_daemons(self):
        cdir = os.path.join(self.out, "configs")
        os.makedirs(cdir, exist_ok=True)
        for name, nd in self.nodes.items():
            if nd.get("config"):
                try:
                    shutil.copyfile(nd["config"], os.path.join(cdir, name + ".conf"))
                except OSError as err:
                    self._warn("cannot copy %s's configuration: %s" % (name, err))
        snap = {}
        for name, nd in self.nodes.items():
            if not nd.get("ctl"):
                continue
            d = {"status": self._ctl(nd["ctl"], "status")}
            if nd.get("kind") == "switch":
                d["ports"] = self._ctl(nd["ctl"], "ports")
            snap[name] = d
        with open(os.path.join(self.out, "daemons.json"), "w") as f:
            json.dump(snap, f, indent=1)
        for name, nd in self.nodes.items():
            st = nd.get("stats")
            if st:
                try:
                    self.offsets[name] = os.path.getsize(st)
                except OSError:
                    self.offsets[name] = 0
                    self._warn("%s's time series %s does not exist (yet)" % (name, st))

    # ---- the frame account's snapshots (account.py) -------------------------------------

    def _snap_once(self):
        """Every daemon's `counters` and every namespace's interface
        statistics, read at once (threads: the less skew between them, the
        less link-local chatter falls between two reads)."""
        jobs = {}
        for name, nd in self.nodes.items():
            if nd.get("ctl"):
                jobs[("daemons", name)] = (self._ctl, nd["ctl"], "counters")
            if nd.get("netns"):
                jobs[("links", nd["netns"])] = (self._links, nd["netns"])
        out = {"t": time.time(), "daemons": {}, "links": {}}
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as ex:
            futs = {k: ex.submit(*v) for k, v in jobs.items()}
            for (kind, name), f in futs.items():
                out[kind][name] = f.result()
        return out

    def _links(self, ns):
        try:
            r = subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"],
                               capture_output=True, text=True, timeout=5,
                               stdin=subprocess.DEVNULL)
            return json.loads(r.stdout) if r.returncode == 0 else None
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return None

    def _moving(self, snap):
        """What must stand still for the fabric to be quiet: per switch port
        the frames in and out less link-local control, and its queue; per
        hostd its uplink's; per host without hostd what its stack sent."""
        key = {}
        for name, nd in self.nodes.items():
            d = snap["daemons"].get(name) or {}
            if nd.get("ctl") and not d:
                # Unreadable (a starved daemon misses l2ccctl's timeout):
                # never taken for quiet.
                key[name + " (unreadable)"] = snap["t"]
                continue
            if nd.get("kind") == "switch":
                for p, c in (d.get("ports") or {}).items():
                    key["%s:%s" % (name, p)] = (
                        c.get("rx_frames", 0) - c.get("ctrl_rx_frames", 0),
                        c.get("tx_frames", 0) - c.get("ctrl_tx_frames", 0),
                        c.get("voq_frames", 0))
            elif nd.get("hostd"):
                u = d.get("uplink") or {}
                key[name] = (u.get("rx_frames", 0) - u.get("ctrl_rx_frames", 0),
                             u.get("tx_frames", 0) - u.get("ctrl_tx_frames", 0))
            elif nd.get("netns"):
                for it in snap["links"].get(nd["netns"]) or []:
                    if it.get("ifname") == "eth0":
                        key[name] = ((it.get("stats64") or {}).get("tx") or {}).get("packets")
        return key

    def snapshot_counters(self, tag):
        """counters_TAG.json: a snapshot of the fabric once it is quiet
        (the same data counters in two reads QUIET_GAP apart), or the last
        read after QUIET_MAX with quiet false and what still moved."""
        gap = max(QUIET_GAP, 3 * self.e.sample)
        a = self._snap_once()
        deadline = time.time() + QUIET_MAX
        while True:
            time.sleep(gap)
            b = self._snap_once()
            ka, kb = self._moving(a), self._moving(b)
            busy = sorted(k for k in kb if ka.get(k) != kb[k])
            if not busy or time.time() >= deadline:
                break
            a = b
        b["quiet"] = not busy
        b["busy"] = busy[:8]
        b["settle_s"] = round(b["t"] - a["t"], 3)
        # Link-local control a switch port sent between two reads: toward a
        # host stack (which counts it) the account allows that much skew.
        skew = {}
        for name, nd in self.nodes.items():
            if nd.get("kind") != "switch":
                continue
            pa = (a["daemons"].get(name) or {}).get("ports") or {}
            for p, c in ((b["daemons"].get(name) or {}).get("ports") or {}).items():
                skew["%s:%s" % (name, p)] = c.get("ctrl_tx_frames", 0) - \
                    (pa.get(p) or {}).get("ctrl_tx_frames", 0)
        b["ctrl_skew"] = skew
        if busy:
            self._warn("the fabric did not go quiet in %.0f s %s the run (still moving: %s)"
                       % (QUIET_MAX, "before" if tag == "before" else "after",
                          ", ".join(busy[:8])))
        with open(os.path.join(self.out, "counters_%s.json" % tag), "w") as f:
            json.dump(b, f)
        return b

    # ---- 3. servers and warm-up --------------------------------------------------------

    def _files(self, f, role, ext="json"):
        return (os.path.join(self.tdir, "%s.%s.%s" % (f.name, role, ext)),
                os.path.join(self.tdir, "%s.%s.stderr" % (f.name, role)))

    def start_servers(self):
        os.makedirs(self.tdir, exist_ok=True)
        for f in self.e.flows:
            pl = self.plan[f.name]
            if f.kind == "iperf":
                cmd = ["iperf3", "-s", "-1", "-p", str(pl["port"]), "-J", "-i", IPERF_INTERVAL]
            else:
                cmd = [self.flowgen, "server", "-p", str(pl["port"])]
            out, err = self._files(f, "server")
            pr = self._spawn(Proc(f, "server", ["ip", "netns", "exec", pl["dst_netns"]] + cmd,
                                  out, err))
            pl["server_cmd"] = pr.cmd

    def wait_listening(self, timeout=5.0):
        want = {}
        for f in self.e.flows:
            want.setdefault(f.dst, set()).add(self.plan[f.name]["port"])
        deadline = time.monotonic() + timeout
        while want:
            for host in list(want):
                r = self._nsrun(host, "ss", "-Hltun")
                have = set()
                for line in r.stdout.splitlines():
                    parts = line.split()
                    if len(parts) >= 5:
                        try:
                            have.add(int(parts[4].rsplit(":", 1)[1]))
                        except (ValueError, IndexError):
                            pass
                want[host] -= have
                if not want[host]:
                    del want[host]
            if not want:
                return
            dead = [pr for pr in self.procs if pr.role == "server" and not pr.alive()]
            if dead or time.monotonic() > deadline:
                pr = dead[0] if dead else next(p for p in self.procs if p.role == "server"
                                               and self.plan[p.flow.name]["port"] in
                                               want.get(p.flow.dst, ()))
                raise TrafficError("the server of flow %s (%s) %s; its output: %s"
                                   % (pr.flow.name, " ".join(pr.cmd[4:]),
                                      "exited" if dead else "is not listening after %.0f s"
                                      % timeout, _tail(pr.out, pr.err)))
            time.sleep(0.05)

    def warm(self):
        pairs = []
        for f in self.e.flows:
            if (f.src, f.dst) not in pairs:
                pairs.append((f.src, f.dst))
        procs = [(s, d, subprocess.Popen(["ip", "netns", "exec", self._ns(s), "ping", "-c", "1",
                                          "-W", "2", "-q", self._addr(d)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                         stdin=subprocess.DEVNULL)) for s, d in pairs]
        bad = [(s, d) for s, d, p in procs if p.wait() != 0]
        for s, d in bad:   # one more try: a first ping may go while a flood settles
            if subprocess.call(["ip", "netns", "exec", self._ns(s), "ping", "-c", "1", "-W",
                                "2", "-q", self._addr(d)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL) != 0:
                self._warn("ping %s -> %s (%s) failed: is the lab forwarding?"
                           % (s, d, self._addr(d)))
        self.say("warm-up: %d ping%s, %d failed" % (len(pairs), "s" if len(pairs) != 1 else "",
                                                    len(bad)))

    # ---- 4. clients ----------------------------------------------------------------------

    def _client_cmd(self, f, t_start):
        pl = self.plan[f.name]
        if f.kind == "iperf":
            secs = max(1, int(math.ceil(f.duration - 1e-9)))
            c = ["iperf3", "-c", pl["dst_addr"], "-p", str(pl["port"]), "-J", "-i",
                 IPERF_INTERVAL, "-t", str(secs), "--connect-timeout", "3000"]
            if f.proto == "udp":
                c += ["-u", "-b", str(int(pl["rate_bps"] / f.parallel))]
            elif pl["rate_bps"]:
                c += ["-b", str(int(pl["rate_bps"] / f.parallel))]
            if pl["len"]:
                c += ["-l", str(pl["len"])]
            if f.prio is not None:
                c += ["-S", str(tos_of(f.prio))]
            if f.window:
                c += ["-w", str(f.window)]
            if f.parallel > 1:
                c += ["-P", str(f.parallel)]
            c += f.iperf_args
            # -t is whole seconds from iperf3's own start, which comes late
            # when the control connection waits for a busy lab: the flow is
            # ended by SIGINT at its stop time, -t (one more second) only
            # backs that up. iperf3 still writes its JSON then.
            c[c.index("-t") + 1] = str(secs + 1)
            return ["ip", "netns", "exec", pl["src_netns"], PY, "-S", "-c", LAUNCHER,
                    "%.6f" % t_start] + c, t_start + f.duration
        c = [self.flowgen, "client", "-c", pl["dst_addr"], "-p", str(pl["port"])]
        if f.kind == "onoff":
            c += ["--onoff", "%g,%g" % (f.onoff["on"], f.onoff["off"]),
                  "--rate", str(int(pl["rate_bps"])), "--duration", "%g" % f.duration]
            if f.proto == "udp":
                c += ["--udp", "--chunk", str(pl["len"])]
        elif f.kind == "rr":
            c += ["--rr", "%g" % f.rr["rate"], "--req-size", str(f.rr["req"]),
                  "--resp-size", str(f.rr["resp"]), "--duration", "%g" % f.duration]
        else:
            c += ["--poisson", "%g" % f.poisson["rate"], "--duration", "%g" % f.duration]
            sz = f.poisson["size"]
            if "fixed" in sz:
                c += ["--size", str(sz["fixed"])]
            elif "pareto" in sz:
                c += ["--pareto", "%g,%d" % (sz["pareto"]["shape"], sz["pareto"]["mean"])]
            else:
                c += ["--cdf", sz["cdf"]]
        if f.prio is not None:
            c += ["--tos", str(tos_of(f.prio))]
        c += ["--seed", str(f.seed), "--start-at", "%.6f" % t_start]
        return ["ip", "netns", "exec", pl["src_netns"]] + c, None

    def launch(self):
        lead = LEAD_MIN + LEAD_PER_FLOW * len(self.e.flows)
        self.t0 = time.time() + lead
        for f in sorted(self.e.flows, key=lambda f: f.start):
            t_start = self.t0 + f.start
            cmd, kill_at = self._client_cmd(f, t_start)
            out, err = self._files(f, "client")
            pr = self._spawn(Proc(f, "client", cmd, out, err))
            pr.kill_at = kill_at
            self.plan[f.name].update(client_cmd=cmd, t_start=t_start, stop_at=kill_at)
        late = time.time() - self.t0
        if late > 0:
            self._warn("launching the clients took %.0f ms longer than the lead time: the "
                       "first flows start late" % (late * 1e3))
        self.status = "running"

    def wait(self):
        clients = [p for p in self.procs if p.role == "client"]
        t_end = self.t0 + self.e.duration
        next_say = self.t0
        while True:
            now = time.time()
            for pr in clients:
                if not pr.alive():
                    if pr.ended is None:
                        pr.ended = now
                    continue
                stop = self.t0 + pr.flow.stop
                if pr.kill_at and now >= pr.kill_at and not pr.signalled:
                    pr.signal(signal.SIGINT)            # a fractional duration ends
                elif now >= stop + CLIENT_GRACE and pr.signalled in (None, "SIGINT") \
                        and now < stop + CLIENT_GRACE + 3:
                    if pr.signalled is None:
                        self._warn("client of flow %s still runs %.0f s after its stop time: "
                                   "interrupting it" % (pr.flow.name, CLIENT_GRACE))
                        pr.signal(signal.SIGINT)
                elif now >= stop + CLIENT_GRACE + 3:
                    pr.signal(signal.SIGKILL)
                    pr.signalled = "SIGKILL"
            running = [pr for pr in clients if pr.alive()]
            if not running and now >= t_end:
                break
            if now >= next_say and now >= self.t0:
                el = now - self.t0
                act = sum(1 for pr in clients if pr.flow.start <= el < pr.flow.stop)
                self.say("t=%5.1fs  %d flow%s active, %d client%s running"
                         % (el, act, "" if act == 1 else "s", len(running),
                            "" if len(running) == 1 else "s"))
                next_say += 1.0
            time.sleep(0.01)
        for pr in clients:
            pr.rc = pr.p.wait()
            pr.ended = pr.ended or time.time()

    def stop_servers(self):
        servers = [p for p in self.procs if p.role == "server"]
        deadline = time.time() + SERVER_GRACE
        for pr in servers:
            if pr.flow.kind != "iperf":
                pr.signal(signal.SIGTERM)     # flowgen servers serve until told
        while any(pr.alive() for pr in servers) and time.time() < deadline:
            time.sleep(0.02)
        for pr in servers:
            if pr.alive() and pr.flow.kind == "iperf":
                self._warn("iperf3 server of flow %s did not exit after its test: "
                           "stopping it" % pr.flow.name)
        _term_then_kill(servers, 2)
        for pr in servers:
            pr.rc = pr.p.wait()
            pr.ended = pr.ended or time.time()

    # ---- 5. CPU ----------------------------------------------------------------------------

    def _cpu_snapshot(self):
        d, w = {}, {}
        pids = [int(nd["pid"]) for nd in self.nodes.values() if nd.get("pid")]
        for name, nd in self.nodes.items():
            if nd.get("pid"):
                pid = int(nd["pid"])
                # l2ccd (`up --one-process`): one process for every node,
                # counted once under its own name
                key = "l2ccd" if pids.count(pid) > 1 else name
                if key not in d:
                    d[key] = _read_cpu(pid)
                    w[key] = _read_run_delay(pid)
        return {"wall": time.time(), "daemons": d, "waits": w, "children": _children_cpu(),
                "machine": _read_proc_stat()}

    def _cpu_result(self, a, b):
        wall = b["wall"] - a["wall"]
        daemons = {}
        for name, v in a["daemons"].items():
            w = b["daemons"].get(name)
            daemons[name] = (w - v) if v is not None and w is not None else None
        dsum = sum(v for v in daemons.values() if v is not None)
        waits = {}
        for name, v in a["waits"].items():
            w = b["waits"].get(name)
            waits[name] = (w - v) if v is not None and w is not None else None
        traffic = b["children"] - a["children"]
        busy = b["machine"][0] - a["machine"][0]
        total = b["machine"][1] - a["machine"][1]
        ncpu = os.cpu_count() or 1
        return {"wall_s": wall, "ncpu": ncpu, "daemons_cpu_s": daemons,
                "daemons_run_delay_s": waits,
                "daemons_s": dsum, "traffic_s": traffic, "lab_s": dsum + traffic,
                "machine_busy_fraction": busy / total if total else None,
                "machine_steal_fraction": ((b["machine"][2] - a["machine"][2]) / total
                                           if total else None),
                "machine_pct_one_core": 100.0 * ncpu * busy / total if total else None}

    # ---- 6. collect ------------------------------------------------------------------------

    def collect_series(self):
        sdir = os.path.join(self.out, "series")
        os.makedirs(sdir, exist_ok=True)
        lo, hi = self.t0 - SERIES_MARGIN, self.t0 + self.e.duration + SERIES_MARGIN
        got = {}
        for name, nd in self.nodes.items():
            st = nd.get("stats")
            if not st:
                continue
            off = self.offsets.get(name, 0)
            try:
                size = os.path.getsize(st)
                if size < off:      # truncated or rotated: read it all, filter by time
                    off = 0
                with open(st, "rb") as f:
                    f.seek(off)
                    data = f.read()
            except OSError as err:
                self._warn("cannot read %s's time series %s: %s" % (name, st, err))
                continue
            n = 0
            with open(os.path.join(sdir, name + ".jsonl"), "wb") as o:
                for line in data.split(b"\n"):
                    if not line.endswith(b"}"):
                        continue        # the last, partial line
                    try:
                        t = json.loads(line)["t"]
                    except (ValueError, KeyError):
                        continue
                    if lo <= t <= hi:
                        o.write(line + b"\n")
                        n += 1
            got[name] = n
            if n == 0:
                self._warn("no time series lines of %s in the run (%s)" % (name, st))
        return got

    def write_run_json(self):
        flows = {}
        for f in self.e.flows:
            d = dict(self.plan.get(f.name, {}))
            for pr in self.procs:
                if pr.flow is not f:
                    continue
                k = pr.role
                d[k] = {"cmd": pr.cmd, "out": os.path.relpath(pr.out, self.out),
                        "err": os.path.relpath(pr.err, self.out), "launched": pr.launched,
                        "ended": pr.ended, "rc": pr.rc, "signalled": pr.signalled}
                if k == "client":
                    st = _launch_time(pr.err)
                    d[k]["started"] = st
            flows[f.name] = d
        doc = {"format": 1, "experiment": self.e.to_dict(), "lab": self.lab.get("name"),
               "t0": self.t0, "t_end": self.t0 + self.e.duration if self.t0 else None,
               "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "status": self.status,
               "aborted": self.aborted, "flows": flows, "cpu": self.cpu,
               "warnings": self.warnings, "argv": sys.argv, "provenance": self.provenance}
        tmp = os.path.join(self.out, "run.json.tmp")
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
        os.replace(tmp, os.path.join(self.out, "run.json"))

    # ---- the whole run ---------------------------------------------------------------------

    def run(self):
        # Before anything of ours starts: the load the machine had.
        self.provenance = P.collect(self.bindir)
        self.make_plan()
        self.snapshot_daemons()
        self.snapshot_counters("before")
        self.start_servers()
        self.wait_listening()
        self.warm()
        cpu0 = self._cpu_snapshot()
        self.launch()
        self.say("t0 = %.3f (in %.2f s); running %s" % (self.t0, self.t0 - time.time(),
                                                        "%gs" % self.e.duration))
        self.wait()
        self.stop_servers()
        self.cpu = self._cpu_result(cpu0, self._cpu_snapshot())
        self.snapshot_counters("after")
        self.status = "done"
        # The daemons write a line every stats_interval: wait for the margin.
        time.sleep(max(0.0, self.t0 + self.e.duration + SERIES_MARGIN - time.time()))
        got = self.collect_series()
        self.say("time series: %s" % ", ".join("%s %d lines" % kv for kv in sorted(got.items())))
        self.write_run_json()
        bad = [pr for pr in self.procs if pr.role == "client" and pr.rc not in (0, None)
               and pr.signalled is None]
        return 1 if bad else 0

    def abort(self, why):
        self.aborted = why
        self.status = "aborted"
        for pr in self.procs:
            pr.signal(signal.SIGINT if pr.role == "client" else signal.SIGTERM)
        if self.t0:
            try:
                self.collect_series()
            except Exception as err:  # a partial record is better than none
                self._warn("collecting the time series: %s" % err)
        try:
            self.write_run_json()
        except OSError:
            pass

    def cleanup(self):
        """Every process we started is gone after this (TERM, then KILL)."""
        _term_then_kill(self.procs, 3)
        for pr in self.procs:
            if pr.p is not None:
                try:
                    pr.p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass


def _term_then_kill(procs, grace):
    """SIGTERM to those of procs still alive, SIGKILL to any left after
    grace seconds."""
    live = [pr for pr in procs if pr.alive()]
    for pr in live:
        pr.signal(signal.SIGTERM)
    deadline = time.time() + grace
    while any(pr.alive() for pr in live) and time.time() < deadline:
        time.sleep(0.02)
    for pr in live:
        if pr.alive():
            pr.signal(signal.SIGKILL)


def _launch_time(errfile):
    try:
        with open(errfile, errors="replace") as f:
            for line in f:
                if line.startswith("l2cc-launch "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _tail(*files):
    out = []
    for fn in files:
        try:
            with open(fn, errors="replace") as f:
                t = f.read().strip()
            if t:
                out.append(t[-400:])
        except OSError:
            pass
    return " | ".join(out) or "(none)"
