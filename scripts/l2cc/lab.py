# SPDX-License-Identifier: BSD-2-Clause
"""A lab's lifecycle: up (namespaces, veths, daemons), down, status.

Everything a lab makes carries its prefix: namespaces <prefix>-<node>, and
the interfaces live inside them only (veths are created straight into their
namespaces, never in the root one), so deleting the namespaces removes every
veth. The daemons are found again by the PID files in the run directory, and
a PID is signalled only while /proc/PID/cmdline still names the daemon and
its configuration file. That makes `down` safe to run at any time: after a
clean `up`, after a crash, after an `up` that failed half-way, or twice.

The run directory's lab.json is the contract with the experiment runner
(docs/testbed.md, "Lab layout on disk"): it is written before anything is
created (PIDs null), and again once every daemon answers.

Facts this relies on (see ../shared DESIGN notes and docs/testbed.md):
- `ip netns exec` gives every command a fresh mount namespace with a fresh
  /sys, so a bpffs mounted by one `ip netns exec ... mount` is gone for the
  next one. The bpffs is therefore mounted by the daemon's own launch
  command, in the mount namespace the daemon then lives in.
- Attaching XDP to a veth turns GSO off on its peer; TX checksum offload
  must still be turned off by hand on the host's eth0.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

from . import DEFAULT_BINDIR, RUNROOT
from . import topo as T

READY_TIMEOUT = 10.0        # seconds for every daemon to answer `status`
STOP_TIMEOUT = 5.0          # seconds between TERM and KILL
DAEMONS = ("switchd", "hostd")
SHARED = "l2ccd"            # every daemon of a lab in one process (docs/l2ccd.md)

# Run in the daemon's own `ip netns exec` mount namespace: mount bpffs there
# (libxdp pins its dispatcher by ifindex, which collides across namespaces
# on the root bpffs), then become the daemon, so the recorded PID is its PID.
_LAUNCH = ('mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || '
           'echo "l2cc-lab: could not mount bpffs on /sys/fs/bpf" >&2; exec "$@"')


class LabError(Exception):
    """A runtime failure (exit status 1)."""


class UsageError(Exception):
    """A problem with the arguments or the topology (exit status 2)."""


# ---- small helpers ---------------------------------------------------------------

def log(msg, out=None):
    """A line of progress on stdout (or `out`), flushed at once: also for
    experiment.py and sweep.py."""
    print(msg, file=out or sys.stdout, flush=True)


def _warn(msg):
    print("l2cc-lab: " + msg, file=sys.stderr, flush=True)


def _run(cmd, what=None, check=True):
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise LabError("%s: `%s` failed (status %d): %s"
                       % (what or cmd[0], " ".join(cmd), r.returncode,
                          (r.stderr or r.stdout).strip() or "no message"))
    return r


def bindir_of(bindir=None):
    """Where the binaries are: --bin, else $L2CC_BIN, else build/bin."""
    return os.path.abspath(bindir or os.environ.get("L2CC_BIN") or DEFAULT_BINDIR)


#: Ctrl-C, and SIGTERM (kill, systemd, a test's timeout): one orderly stop.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _swap_handlers(handlers):
    """Install {signal: handler}; returns the handlers replaced. Both stop
    signals are blocked meanwhile, so that a handler that raises cannot run
    between two of the signal.signal() calls and leave the set half
    swapped (SIGINT swallowed, or SIGTERM ignored, for good). Blocked only
    here: a child inherits the signal mask, and the teardowns start many."""
    try:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    except BaseException:
        # The old handler raised for a signal that came just before, once
        # the mask was set: nothing is swapped yet, only the mask to undo.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        raise
    try:
        return {s: signal.signal(s, h) for s, h in handlers.items()}
    finally:
        # What came meanwhile is delivered here, to the new handlers.
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


class StopSignals:
    """Ctrl-C and SIGTERM as one orderly stop, for the commands that clean
    up after themselves (experiment.run_traffic(), sweep.py): inside `with
    StopSignals() as stop:` both raise KeyboardInterrupt, except inside
    `with stop.held():` (a teardown that must finish), where they wait and
    are raised as KeyboardInterrupt when the held block ends. A signal
    that is ignored when the block starts (nohup, a script's background
    job) stays ignored. Blocks nest; the handlers replaced are back
    afterwards.

    The handler only sets a flag until the handlers are all in place and
    again from when they start being restored, so the swaps themselves
    never raise half-way."""

    def __init__(self):
        self._old = {}
        self._hold = 1          # > 0: note a signal, do not raise
        self._got = False

    def _on(self, signum, frame):
        if self._hold:
            self._got = True
        else:
            raise KeyboardInterrupt

    def __enter__(self):
        mine = {s: self._on for s in STOP_SIGNALS if signal.getsignal(s) != signal.SIG_IGN}
        self._old = _swap_handlers(mine)
        try:
            self._hold -= 1
            if self._got:       # it came while the handlers were being swapped
                self._got = False
                raise KeyboardInterrupt
        except BaseException:
            self._restore()
            raise
        return self

    def _restore(self):
        self._hold += 1         # from here on our handler only notes
        _swap_handlers(self._old)   # what is pending goes to the old handlers

    def __exit__(self, etype, evalue, tb):
        self._restore()
        if self._got and etype is None:     # it came while they were being restored
            self._got = False
            raise KeyboardInterrupt
        return False

    @contextlib.contextmanager
    def held(self):
        """The block runs to its end whatever signal comes; one that came
        meanwhile is raised as KeyboardInterrupt then. A signal just before
        the block begins is raised before it: a teardown that must happen
        retries until it has run."""
        self._hold += 1
        try:
            yield
        finally:
            self._hold -= 1
            if not self._hold and self._got:
                self._got = False
                raise KeyboardInterrupt


def default_rundir(name):
    return os.path.join(RUNROOT, name)


def _write_atomic(path, text):
    tmp = path + ".tmp"
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _need_root(what):
    if os.geteuid() != 0:
        raise LabError("%s needs root (namespaces, XDP, AF_XDP)" % what)


def netns_list():
    r = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def _proc_argv(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            raw = f.read()
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None
    if state == "Z":
        return None
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def is_our_daemon(pid, conf):
    """Is PID (still) a running switchd/hostd started with -c CONF? Also
    true in the instant before the launch command execs the daemon."""
    if not pid or not conf:
        return False
    argv = _proc_argv(int(pid))
    if not argv:
        return False
    if any(os.path.basename(a) == SHARED for a in argv):
        # l2ccd KIND@NETNS:CONF...: one process for every node
        return any(a.endswith(":" + conf) for a in argv)
    return conf in argv and any(os.path.basename(a) in DAEMONS for a in argv)


def _read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _ctl(bindir, sock, cmd="status", timeout_ms=2000):
    """(reply as parsed JSON or None, error text or None)."""
    ctl = os.path.join(bindir, "l2ccctl")
    try:
        r = subprocess.run([ctl, "-s", sock, "-r", "-t", str(timeout_ms), cmd],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           timeout=timeout_ms / 1000 + 2)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip() or "status %d" % r.returncode
    try:
        return json.loads(r.stdout), None
    except ValueError:
        return None, "not JSON: %s" % r.stdout[:200]


def _tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


# ---- lab.json ------------------------------------------------------------------

def lab_document(topo, rundir, pids=None, threads=None):
    """The status document (docs/testbed.md, "lab.json"); threads: the
    l2ccd threads the daemons run in, None for a process per daemon."""
    pids = pids or {}
    nodes = {}
    for n in topo.nodes.values():
        if n.kind == "switch":
            f = T.node_files(rundir, n.name)
            ports = {}
            for port, lk, peer in n.ports:
                ports[port] = {"ifname": port, "peer": peer, "rate_bps": lk.rate_bps,
                               "mtu": lk.mtu, "buffer": lk.buffer,
                               "flow_control": lk.flow_control,
                               "role": topo.nodes[peer].kind}
            nodes[n.name] = {"kind": "switch", "netns": n.netns, "config": f["config"],
                             "ctl": f["ctl"], "stats": f["stats"], "log": f["log"],
                             "pid": pids.get(n.name), "ports": ports}
        else:
            f = T.node_files(rundir, n.name, n.hostd)
            nodes[n.name] = {"kind": "host", "netns": n.netns, "addr": str(n.addr),
                             "mac": n.mac, "hostd": n.hostd, "config": f["config"],
                             "ctl": f["ctl"], "stats": f["stats"], "log": f["log"],
                             "pid": pids.get(n.name) if n.hostd else None,
                             "switch": n.switch, "port": n.port,
                             "rate_bps": n.link.rate_bps, "tcp_ecn": n.tcp_ecn,
                             "tcp_window": n.tcp_window}
    links = [{"a": lk.endpoint(0), "b": lk.endpoint(1), "rate_bps": lk.rate_bps,
              "mtu": lk.mtu, "buffer": lk.buffer, "flow_control": lk.flow_control}
             for lk in topo.links]
    return {"name": topo.name, "prefix": topo.prefix, "rundir": rundir,
            "topology": topo.path, "one_process": threads or 0, "nodes": nodes,
            "links": links}


def write_lab_json(rundir, doc):
    _write_atomic(os.path.join(rundir, "lab.json"), json.dumps(doc, indent=2) + "\n")


def read_lab_json(rundir):
    try:
        with open(os.path.join(rundir, "lab.json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        _warn("%s/lab.json is unreadable (%s); going by the topology and the prefix"
              % (rundir, e))
        return None


# ---- finding a lab -----------------------------------------------------------------

class Target:
    """What `down`/`status` were pointed at, resolved: name, prefix,
    rundir, and lab.json if there is one."""

    def __init__(self, name, prefix, rundir, doc, topo_path=None):
        self.name, self.prefix, self.rundir, self.doc = name, prefix, rundir, doc
        self.topo_path = topo_path


def resolve(target, rundir=None):
    """NAME or TOPO file -> Target. A topology file that does not validate
    still names its lab (so that `down` can clean up after anything)."""
    topo_path = None
    if os.path.isfile(target) or target.endswith((".yaml", ".yml")):
        topo_path = target
        try:
            t = T.load(target)
            name, prefix = t.name, t.prefix
        except T.TopoError:
            name, prefix = T.peek_name(target)
        if not name:
            raise UsageError("%s: cannot tell which lab it describes (no usable name:)" % target)
    else:
        name = target
        if not T.NAME_RE.match(name):
            raise UsageError('"%s" is neither a topology file nor a lab name' % target)
        prefix = None
    rundir = os.path.abspath(rundir or default_rundir(name))
    doc = read_lab_json(rundir)
    if doc:
        if doc.get("name") != name:
            raise UsageError("%s/lab.json is lab %s, not %s" % (rundir, doc.get("name"), name))
        prefix = doc.get("prefix") or prefix
    if not prefix:
        prefix = T.default_prefix(name)
    return Target(name, prefix, rundir, doc, topo_path)


# ---- up ------------------------------------------------------------------------------

def prepare(topo_path, rundir=None, bindir=None):
    """Everything that can be known without touching the system: the
    topology, the run directory and the daemon configurations, all checked.
    Raises T.TopoError or UsageError."""
    topo = T.load(topo_path)
    rundir = os.path.abspath(rundir or default_rundir(topo.name))
    errs = T.path_errors(topo, rundir)
    if errs:
        raise UsageError("\n".join("--rundir %s: %s" % (rundir, e) for e in errs))
    bindir = bindir_of(bindir)
    confs = T.render_configs(topo, rundir)
    derrs, notes = T.check_daemon_configs(topo, confs, bindir)
    if derrs:
        raise T.TopoError(topo_path, derrs)
    return topo, rundir, confs, notes


def up_reasons(topo, rundir):
    """Reasons this lab cannot be brought up now (it, or its namespaces,
    exist): [] when it can. Also for sweep.py, which checks before its first
    point."""
    why = []
    mine = [ns for ns in netns_list() if T.is_lab_netns(topo.prefix, ns)]
    if mine:
        why.append("namespace%s %s exist%s" % ("s" if len(mine) > 1 else "",
                                                ", ".join(mine), "" if len(mine) > 1 else "s"))
    for n in topo.daemons():
        f = T.node_files(rundir, n.name)
        pid = _read_pid(f["pid"])
        if pid and is_our_daemon(pid, f["config"]):
            why.append("%s of node %s still runs (pid %d)" % (os.path.basename(
                _proc_argv(pid)[0]), n.name, pid))
    return why


def _ns(ns, *cmd, what=None):
    return _run(["ip", "-n", ns] + list(cmd), what)


def _nsx(ns, *cmd, what=None):
    return _run(["ip", "netns", "exec", ns] + list(cmd), what)


def _make_netns(topo):
    for n in topo.nodes.values():
        _run(["ip", "netns", "add", n.netns], "namespace of node %s" % n.name)
        _ns(n.netns, "link", "set", "dev", "lo", "up", what="lo of node %s" % n.name)
        # No IPv6 autoconfiguration chatter (RS, MLD, DAD) in the counters.
        _nsx(n.netns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
             "net.ipv6.conf.default.disable_ipv6=1", what="IPv6 off in %s" % n.netns)


def _host_eth0(topo, h, mtu):
    ns = h.netns
    w = "eth0 of host %s" % h.name
    _ns(ns, "link", "set", "dev", "eth0", "address", h.mac, "mtu", str(mtu), what=w)
    _ns(ns, "addr", "add", "%s/%d" % (h.addr, topo.subnet.prefixlen), "dev", "eth0", what=w)
    # veth leaves checksums to the "hardware"; through AF_XDP copy mode
    # they would arrive never computed, and the receiving stack drops them.
    _nsx(ns, "ethtool", "-K", "eth0", "tx", "off", what=w)
    _ns(ns, "link", "set", "dev", "eth0", "up", what=w)
    for k, v in host_sysctls(h):
        _nsx(ns, "sysctl", "-qw", "%s=%s" % (k, v), what="%s of host %s" % (k, h.name))


def host_sysctls(h):
    """[(sysctl, value)] of host h's TCP keys. tcp_window W: every socket's
    buffers as SO_RCVBUF/SO_SNDBUF = W would make them (the kernel doubles
    the value for its overhead, so 2W; about W of window), autotuning
    included; the defaults stay where they are unless above that."""
    out = []
    if h.tcp_ecn is not None:
        out.append(("net.ipv4.tcp_ecn", str(h.tcp_ecn)))
    if h.tcp_window:
        b = 2 * h.tcp_window
        out.append(("net.ipv4.tcp_rmem", "4096 %d %d" % (min(131072, b), b)))
        out.append(("net.ipv4.tcp_wmem", "4096 %d %d" % (min(16384, b), b)))
    return out


def _veth(a, ns_a, b, ns_b, what):
    """A veth pair created straight into its namespaces: nothing of a lab
    ever exists in the root namespace. `name`, so that a port called "up"
    or "type" is not read as a keyword."""
    _run(["ip", "link", "add", "name", a, "netns", ns_a, "type", "veth", "peer", "name", b,
          "netns", ns_b], what)


def _make_links(topo):
    for lk in topo.links:
        (na, pa), (nb, pb) = lk.ends
        a, b = topo.nodes[na], topo.nodes[nb]
        if a.kind == "host":
            a, pa, b, pb = b, pb, a, pa       # the switch first
        what = "link %d (%s - %s)" % (lk.index + 1, lk.endpoint(0), lk.endpoint(1))
        mtu = str(lk.mtu)
        if b.kind == "switch":
            _veth(pa, a.netns, pb, b.netns, what)
            _ns(a.netns, "link", "set", "dev", pa, "mtu", mtu, "up", what=what)
            _ns(b.netns, "link", "set", "dev", pb, "mtu", mtu, "up", what=what)
        elif not b.hostd:
            # link_host: the host stack straight on the switch port.
            _veth(pa, a.netns, "eth0", b.netns, what)
            _ns(a.netns, "link", "set", "dev", pa, "mtu", mtu, "up", what=what)
            _host_eth0(topo, b, lk.mtu)
        else:
            # link_hd_host: eth0 -veth- cc0 in the host's namespace, and
            # up0 -veth- the switch port; hostd bridges cc0 and up0.
            _veth("eth0", b.netns, "cc0", b.netns, what)
            _veth(pa, a.netns, "up0", b.netns, what)
            _ns(a.netns, "link", "set", "dev", pa, "mtu", mtu, "up", what=what)
            _ns(b.netns, "link", "set", "dev", "cc0", "mtu", mtu, "up", what=what)
            _ns(b.netns, "link", "set", "dev", "up0", "mtu", mtu, "up", what=what)
            _host_eth0(topo, b, T.host_mtu(b, lk.mtu))


def _start_daemon(topo, n, rundir, bindir):
    f = T.node_files(rundir, n.name)
    daemon = "switchd" if n.kind == "switch" else "hostd"
    cmd = ["ip", "netns", "exec", n.netns, "/bin/sh", "-c", _LAUNCH, "l2cc-lab",
           os.path.join(bindir, daemon), "-c", f["config"]]
    with open(f["log"], "wb") as log:
        # A session of its own: the daemon outlives this command and is not
        # hit by the terminal's Ctrl-C.
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    _write_atomic(f["pid"], "%d\n" % p.pid)
    return p


def one_process_threads(value=None, topo_value=0):
    """How many l2ccd threads a lab's daemons share: `up --one-process N`,
    else $L2CC_ONE_PROCESS, else the topology's one_process (topo_value).
    0 or None: a process per daemon (0 from the command line or the
    environment overrides a topology's one_process)."""
    v, origin = value, "--one-process"
    if v is None:
        v, origin = os.environ.get("L2CC_ONE_PROCESS") or None, "L2CC_ONE_PROCESS"
    if v is None:
        return topo_value or None
    try:
        n = int(v)
    except ValueError:
        n = -1
    if n < 0 or n > T.ONE_PROCESS_MAX:
        raise UsageError("%s: expected 0..%d l2ccd threads (0: a process per daemon), got %r"
                         % (origin, T.ONE_PROCESS_MAX, v))
    return n or None


def _start_shared(topo, nodes, rundir, bindir, threads):
    """Every daemon of the lab in one l2ccd, each in its namespace. Every
    node's PID file names it, and each node's log is a link to its log."""
    log_path = os.path.join(rundir, SHARED + ".log")
    # SCHED_FIFO: the fabric as hardware no iperf3 can delay (docs/l2ccd.md);
    # l2ccd falls back to weighing its threads by nice where it may not.
    cmd = [os.path.join(bindir, SHARED), "-t", str(threads), "--realtime", "10"]
    for n in nodes:
        cmd.append("%s@%s:%s" % (_daemon(topo, n.name), n.netns,
                                 T.node_files(rundir, n.name)["config"]))
    with open(log_path, "wb") as logf:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf,
                             stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
    procs = {}
    for n in nodes:
        f = T.node_files(rundir, n.name)
        _write_atomic(f["pid"], "%d\n" % p.pid)
        os.symlink(os.path.basename(log_path), f["log"])
        procs[n.name] = p
    return procs


def _wait_ready(topo, procs, rundir, bindir):
    """Wait until every daemon answers `status`; LabError otherwise."""
    deadline = time.monotonic() + READY_TIMEOUT
    pending = dict(procs)
    while pending:
        for name, p in list(pending.items()):
            f = T.node_files(rundir, name)
            rc = p.poll()
            if rc is not None:
                raise LabError("%s of node %s exited with status %d while starting; the end "
                               "of %s:\n%s" % (_daemon(topo, name), name, rc, f["log"],
                                               "\n".join("    " + x for x in _tail(f["log"]))))
            if os.path.exists(f["ctl"]) and _ctl(bindir, f["ctl"], timeout_ms=500)[0] \
                    is not None:
                del pending[name]
        if not pending:
            break
        if time.monotonic() > deadline:
            name = next(iter(pending))
            f = T.node_files(rundir, name)
            raise LabError("%s of node %s did not answer on %s within %.0f s; the end of "
                           "%s:\n%s" % (_daemon(topo, name), name, f["ctl"], READY_TIMEOUT,
                                        f["log"], "\n".join("    " + x
                                                            for x in _tail(f["log"]))))
        time.sleep(0.05)


def _daemon(topo, name):
    return "switchd" if topo.nodes[name].kind == "switch" else "hostd"


def _clean_node_files(topo, rundir):
    """A new run starts clean: the time series is opened for appending, and
    an old log, socket or PID file would mislead."""
    for n in topo.daemons():
        for k, p in T.node_files(rundir, n.name).items():
            if k != "config" and os.path.lexists(p):
                os.unlink(p)


def up(topo_path, rundir=None, bindir=None, one_process=None):
    """Build the lab. Returns 0; raises TopoError/UsageError before touching
    anything, LabError after having torn down whatever was made.
    one_process: see one_process_threads()."""
    t0 = time.monotonic()
    topo, rundir, confs, notes = prepare(topo_path, rundir, bindir)
    threads = one_process_threads(one_process, topo.one_process)
    bindir = bindir_of(bindir)
    for b in DAEMONS + ("l2ccctl",) + ((SHARED,) if threads else ()):
        if not os.access(os.path.join(bindir, b), os.X_OK):
            raise LabError("%s/%s is missing: run `make -j2 all` first" % (bindir, b))
    for tool in ("ip", "ethtool", "mount", "mountpoint"):
        if not shutil.which(tool):
            raise LabError("%s is missing: run scripts/setup.sh" % tool)
    _need_root("up")
    why = up_reasons(topo, rundir)
    if why:
        raise LabError("lab %s looks up already (%s); run `l2cc-lab down %s%s` first"
                       % (topo.name, "; ".join(why), topo.name,
                          "" if rundir == default_rundir(topo.name)
                          else " --rundir " + rundir))
    for note in notes + topo.notes:
        log("note: " + note)

    os.makedirs(rundir, exist_ok=True)
    _clean_node_files(topo, rundir)
    if os.path.lexists(os.path.join(rundir, SHARED + ".log")):
        os.unlink(os.path.join(rundir, SHARED + ".log"))
    for name, c in confs.items():
        _write_atomic(T.node_files(rundir, name)["config"], c.text())
    shutil.copyfile(topo.path, os.path.join(rundir, "topology.yaml"))
    with open(os.path.join(rundir, "hosts"), "w") as f:
        f.write("# lab %s: host address mac\n" % topo.name)
        for h in topo.hosts():
            f.write("%s %s %s\n" % (h.name, h.addr, h.mac))
    # Written before anything exists, so that `down` finds everything even
    # if this command dies half-way.
    write_lab_json(rundir, lab_document(topo, rundir, threads=threads))

    procs = {}
    try:
        _make_netns(topo)
        _make_links(topo)
        nodes = topo.switches() + [h for h in topo.hosts() if h.hostd]
        if threads and nodes:
            procs = _start_shared(topo, nodes, rundir, bindir, threads)
        else:
            for n in nodes:
                procs[n.name] = _start_daemon(topo, n, rundir, bindir)
        _wait_ready(topo, procs, rundir, bindir)
        pids = {name: p.pid for name, p in procs.items()}
        write_lab_json(rundir, lab_document(topo, rundir, pids, threads))
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            _warn("interrupted; tearing down what was built")
        elif isinstance(e, LabError):
            _warn("up %s: %s" % (topo.name, e))
            _warn("tearing down what was built")
        else:
            _warn("up %s: unexpected %s: %s; tearing down" % (topo.name, type(e).__name__, e))
        try:
            down(Target(topo.name, topo.prefix, rundir, lab_document(topo, rundir,
                        {k: p.pid for k, p in procs.items()}, threads)), quiet=True)
        except Exception as e2:  # report the first failure, not the cleanup's
            _warn("teardown: %s" % e2)
        if isinstance(e, LabError):
            raise LabError("lab %s is not up (everything it made was removed)" % topo.name)
        raise

    _summary(topo, rundir, pids, time.monotonic() - t0)
    return 0


def _summary(topo, rundir, pids, secs):
    dflt = rundir == default_rundir(topo.name)
    rd = "" if dflt else " --rundir " + rundir
    log("lab %s up in %.1f s: prefix %s, run directory %s" % (topo.name, secs, topo.prefix,
                                                               rundir))
    w = max(len(n) for n in topo.nodes)
    for n in topo.nodes.values():
        if n.kind == "switch":
            ports = " ".join("%s->%s" % (p, peer) for p, _, peer in n.ports)
            log("  %-*s switch %-14s switchd pid %-7d ports %s"
                 % (w, n.name, n.netns, pids[n.name], ports))
        else:
            lk = n.link
            d = "hostd pid %-9d" % pids[n.name] if n.hostd else "no hostd        "
            log("  %-*s host   %-14s %s %s/%d %s on %s:%s at %s"
                 % (w, n.name, n.netns, d, n.addr, topo.subnet.prefixlen, n.mac, n.switch,
                    n.port, lk.rate))
    h = topo.hosts()
    if len(h) >= 2:
        log("try: ip netns exec %s ping -c 3 %s" % (h[0].netns, h[1].addr))
    log("status: l2cc-lab status %s%s   down: l2cc-lab down %s%s"
         % (topo.name, rd, topo.name, rd))


# ---- down ----------------------------------------------------------------------------

def _thread_netns_pids(ns):
    """Processes with a thread in namespace ns: `ip netns pids` looks at
    each process's main thread only, and an l2ccd lives in its namespaces
    by its loop threads (one started by hand over a lab's configurations)."""
    try:
        ino = os.stat("/run/netns/" + ns).st_ino
    except OSError:
        return set()
    found = set()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            tasks = os.listdir("/proc/%s/task" % p)
        except OSError:
            continue
        for t in tasks:
            try:
                if os.stat("/proc/%s/task/%s/ns/net" % (p, t)).st_ino == ino:
                    found.add(int(p))
                    break
            except OSError:
                continue
    return found


def _lab_daemons(tg):
    """[(node, pid, conf)] this lab may have running, from lab.json and from
    the PID files in its run directory (an `up` that died before rewriting
    lab.json leaves only those)."""
    found = []
    nodes = (tg.doc or {}).get("nodes") or {}
    for name, nd in nodes.items():
        if nd.get("config") and nd.get("pid"):
            found.append((name, nd["pid"], nd["config"]))
    if os.path.isdir(tg.rundir):
        for fn in sorted(os.listdir(tg.rundir)):
            if fn.endswith(".pid"):
                name = fn[:-4]
                pid = _read_pid(os.path.join(tg.rundir, fn))
                conf = (nodes.get(name) or {}).get("config") or \
                    os.path.join(tg.rundir, name + ".conf")
                if pid:
                    found.append((name, pid, conf))
    seen, out = set(), []
    for name, pid, conf in found:
        if (pid, conf) not in seen:
            seen.add((pid, conf))
            out.append((name, pid, conf))
    return out


def _stop_pids(victims, say):
    """TERM each (pid, label), wait, KILL what is left. Returns the labels
    of processes that would not die."""
    alive = []
    for pid, label, check in victims:
        if check():
            try:
                os.kill(pid, signal.SIGTERM)
                alive.append((pid, label, check))
                say("stopping %s (pid %d)" % (label, pid))
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_TIMEOUT
    while alive and time.monotonic() < deadline:
        alive = [v for v in alive if v[2]()]
        if alive:
            time.sleep(0.05)
    stuck = []
    for pid, label, check in alive:
        if check():
            say("%s (pid %d) ignored SIGTERM for %.0f s: SIGKILL" % (label, pid, STOP_TIMEOUT))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
    for pid, label, check in alive:
        for _ in range(40):
            if not check():
                break
            time.sleep(0.05)
        else:
            stuck.append("%s (pid %d)" % (label, pid))
    return stuck


def down(tg, quiet=False):
    """Stop the lab's daemons and remove its namespaces and sockets.
    Idempotent. Returns 0, or 1 if something could not be removed."""
    say = (lambda m: None) if quiet else (lambda m: log("  " + m))
    if not quiet:
        log("lab %s down (prefix %s, run directory %s)" % (tg.name, tg.prefix, tg.rundir))
    _need_root("down")
    did = False

    # 1. The daemons, by recorded PID, only while they are still ours.
    victims, pids = [], set()
    for name, pid, conf in _lab_daemons(tg):
        if pid not in pids and is_our_daemon(pid, conf):
            pids.add(pid)   # l2ccd: one process for every node
            victims.append((pid, "%s of node %s" % (os.path.basename(
                next((a for a in _proc_argv(pid) or []
                      if os.path.basename(a) in DAEMONS + (SHARED,)),
                     "daemon")), name), (lambda p=pid, c=conf: is_our_daemon(p, c))))
    stuck = _stop_pids(victims, say)
    did = did or bool(victims)

    # 2. The namespaces lab.json records, and only those: another one
    # with the lab's prefix may be someone else's (a lab of the same name
    # with another run directory, a hand-made one), and deleting it would
    # take its daemons' ports away. lab.json is written before `up` makes
    # anything, so a lab without one has made nothing to delete.
    names = set()
    for nd in ((tg.doc or {}).get("nodes") or {}).values():
        if nd.get("netns"):
            names.add(nd["netns"])
    existing = netns_list()
    foreign = sorted(ns for ns in existing if T.is_lab_netns(tg.prefix, ns) and ns not in names)
    names &= set(existing)
    for ns in foreign:
        _warn("namespace %s has the lab's prefix but %s/lab.json does not record it: "
              "left alone (`ip netns del %s` if it is a leftover)" % (ns, tg.rundir, ns))
    # Whatever else still runs inside them (an experiment's iperf3 after a
    # crash, a daemon whose PID file was lost) would keep the namespace and
    # its veths alive after `ip netns del`.
    others, seen = [], set()
    for ns in sorted(names):
        r = _run(["ip", "netns", "pids", ns], check=False)
        for pid in sorted(set(int(t) for t in r.stdout.split() if t.isdigit())
                          | _thread_netns_pids(ns)):
            if pid != os.getpid() and pid not in seen:
                seen.add(pid)
                argv = _proc_argv(pid)
                if argv is None:
                    continue
                start = _starttime(pid)
                others.append((pid, "%s in %s" % (os.path.basename(argv[0]), ns),
                               (lambda p=pid, s=start: _proc_argv(p) is not None
                                and _starttime(p) == s)))
    stuck += _stop_pids(others, say)
    did = did or bool(others)
    failed = []
    gone = set()
    for ns in sorted(names):
        try:
            ino = os.stat("/run/netns/" + ns).st_ino
        except OSError:
            ino = None
        r = _run(["ip", "netns", "del", ns], check=False)
        if r.returncode != 0:
            failed.append("%s: %s" % (ns, r.stderr.strip()))
        else:
            say("deleted namespace %s" % ns)
            did = True
            if ino is not None:
                gone.add(ino)
    _forget_saved_state(tg, gone, say)

    # 3. Sockets and PID files (logs, configs, time series and lab.json stay).
    if os.path.isdir(tg.rundir):
        for fn in os.listdir(tg.rundir):
            if fn.endswith((".sock", ".pid")):
                try:
                    os.unlink(os.path.join(tg.rundir, fn))
                except OSError:
                    pass
        if tg.doc and any(nd.get("pid") for nd in tg.doc.get("nodes", {}).values()):
            for nd in tg.doc["nodes"].values():
                nd["pid"] = None
            write_lab_json(tg.rundir, tg.doc)

    for s in stuck:
        _warn("could not stop %s" % s)
    for f in failed:
        _warn("could not delete namespace %s" % f)
    if not quiet and not did and not stuck and not failed:
        log("  nothing was running")
    return 1 if stuck or failed else 0


#: What a daemon saved of an interface to restore it after a crash
#: (daemon/ifsave.c): RUNTIME_DIR/KIND-NETNS_INODE-IFNAME.
_SAVED_STATE = re.compile(r"^(ipv6|pause)-(\d+)-[^/]+$")


def _forget_saved_state(tg, inodes, say):
    """Remove what the daemons saved of interfaces in namespaces this down
    deleted: a killed daemon leaves it for its next start to restore, and
    with the namespace gone there is nothing left to restore it to."""
    if not inodes:
        return
    dirs = {"/run/l2cc"}
    for nd in ((tg.doc or {}).get("nodes") or {}).values():
        try:
            with open(nd.get("config") or "") as f:
                for line in f:
                    k, _, v = line.partition("=")
                    if k.strip() == "runtime_dir" and v.strip():
                        dirs.add(v.split("#")[0].strip())
        except OSError:
            pass
    for d in sorted(dirs):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for fn in names:
            m = _SAVED_STATE.match(fn)
            if m and int(m.group(2)) in inodes:
                try:
                    os.unlink(os.path.join(d, fn))
                    say("removed %s/%s (saved state of a deleted namespace's interface)" % (d, fn))
                except OSError:
                    pass


def _starttime(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


# ---- status --------------------------------------------------------------------------

def status(tg, bindir=None):
    """(document, all_up): lab.json plus, per node, `running` (daemon alive;
    null for a host without hostd), `netns_present`, and `status` (the
    daemon's status reply, or null with `status_error`)."""
    if not tg.doc:
        raise LabError("no lab %s: %s/lab.json does not exist (is it up? with --rundir?)"
                       % (tg.name, tg.rundir))
    bindir = bindir_of(bindir)
    doc = tg.doc
    present = set(netns_list())
    all_up = True
    for name, nd in doc.get("nodes", {}).items():
        nd["netns_present"] = nd.get("netns") in present
        all_up = all_up and nd["netns_present"]
        if not nd.get("config"):
            nd["running"] = None
            continue
        pid = nd.get("pid") or _read_pid(os.path.join(tg.rundir, name + ".pid"))
        nd["running"] = bool(pid) and is_our_daemon(pid, nd["config"])
        nd["status"] = None
        if nd["running"]:
            nd["pid"] = pid
            reply, err = _ctl(bindir, nd["ctl"])
            nd["status"] = reply
            if err:
                nd["status_error"] = err
        all_up = all_up and nd["running"]
    doc["up"] = all_up
    return doc, all_up
