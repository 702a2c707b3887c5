#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Run a daemon under what its systemd unit allows, without systemd as PID 1.

tests/netns/test_systemd_units.sh starts switchd and hostd through this, so
that the unit's sandbox is the one the daemons are shown to work in. Three
stages, each exec'ing the next (the PID stays the daemon's):

  unit_sandbox.py caps UNIT
      print the unit's CapabilityBoundingSet for setpriv ("net_admin,bpf,...")

  unshare -m --propagation private \\
  unit_sandbox.py mounts UNIT [--rw PATH]... [--no-rw PATH]... -- CMD...
      ProtectSystem=strict and ProtectKernelTunables= as mounts: every mount
      read-only (and /proc/sys, bound on itself) except the unit's
      ReadWritePaths= and each --rw PATH (standing in for RuntimeDirectory=,
      which the test keeps in its own directory); --no-rw drops one of the
      unit's paths (the test's control experiment). Needs CAP_SYS_ADMIN, so
      it comes before the capabilities are dropped. Then exec CMD.

  setpriv --bounding-set=... --inh-caps=... --ambient-caps=... --no-new-privs -- \\
  unit_sandbox.py seccomp UNIT -- CMD...
      SystemCallFilter= (in order, with the @default set systemd adds to an
      allow list; groups expanded by `systemd-analyze syscall-filter`),
      SystemCallErrorNumber=, RestrictAddressFamilies= and
      MemoryDenyWriteExecute= as seccomp filters stacked the way systemd
      stacks them (libseccomp through ctypes), then exec CMD.

Not emulated (the daemons make none of these calls, and the test would not
see them fail): PrivateTmp, PrivateDevices, ProtectHome, ProtectProc,
RestrictNamespaces, RestrictRealtime, LockPersonality, IPAddressDeny.
"""
import ctypes
import ctypes.util
import errno
import os
import re
import subprocess
import sys

# linux/capability.h
CAPS = ["chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid",
        "setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast",
        "net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio",
        "sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
        "sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write",
        "audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm",
        "block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore"]
# linux/socket.h
AF = {"AF_UNIX": 1, "AF_LOCAL": 1, "AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16,
      "AF_PACKET": 17, "AF_XDP": 44}
AF_MAX = 46


def unit_values(path, key):
    """Every value of KEY= in the [Service] section, in order ("" resets)."""
    vals, section = [], None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[Service]" and line.startswith(key + "="):
                v = line[len(key) + 1:].strip()
                if v:
                    vals.append(v)
                else:
                    vals = []
    return vals


def unit_caps(path):
    names = set()
    for v in unit_values(path, "CapabilityBoundingSet"):
        if v.startswith("~"):
            sys.exit("unit_sandbox: a ~ bounding set is not supported")
        names.update(w.lower().removeprefix("cap_") for w in v.split())
    unknown = names - set(CAPS)
    if unknown:
        sys.exit("unit_sandbox: unknown capabilities %s" % sorted(unknown))
    return sorted(names, key=CAPS.index)


def cap_mask(names):
    return sum(1 << CAPS.index(n) for n in names)


# ---- mounts ------------------------------------------------------------------

def mountpoints():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4]
            yield re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), mp)


def under(path, top):
    return path == top or path.startswith(top.rstrip("/") + "/")


def run(*cmd):
    subprocess.run(cmd, check=True)


def do_mounts(unit, rw_extra, no_rw):
    strict = "strict" in unit_values(unit, "ProtectSystem")
    tunables = "yes" in unit_values(unit, "ProtectKernelTunables")
    rw = [p for v in unit_values(unit, "ReadWritePaths") for p in v.split()]
    rw = [p.lstrip("-") for p in rw if p.lstrip("-") not in no_rw] + rw_extra
    run("mount", "--make-rprivate", "/")
    if tunables:
        run("mount", "--bind", "/proc/sys", "/proc/sys")
    for p in rw:
        run("mount", "--bind", p, p)
    for mp in sorted(set(mountpoints())):
        if any(mp == p for p in rw):
            continue
        api = under(mp, "/dev") or under(mp, "/proc") or under(mp, "/sys")
        if strict and not api:
            ro = True
        elif tunables and (under(mp, "/sys") or mp == "/proc/sys"):
            ro = True
        else:
            ro = False
        if ro:
            # A mount we may not remount (locked in a user namespace) stays.
            subprocess.run(["mount", "-o", "remount,bind,ro", mp],
                           stderr=subprocess.DEVNULL)
    print("unit_sandbox: read-only but %s" % " ".join(rw), file=sys.stderr)


# ---- seccomp -------------------------------------------------------------------

SCMP_ACT_KILL_PROCESS = 0x80000000
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_CMP_EQ, SCMP_CMP_GE, SCMP_CMP_MASKED_EQ = 4, 5, 7


def SCMP_ACT_ERRNO(e):
    return 0x00050000 | (e & 0xFFFF)


class ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


_groups = {}


def expand(name):
    """A syscall group (@x) as a set of names, nested groups expanded."""
    if not name.startswith("@"):
        return {name}
    if name not in _groups:
        out = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                             capture_output=True, text=True).stdout
        items = set()
        for line in out.splitlines()[1:]:
            w = line.strip()
            if w and not w.startswith("#"):
                items |= expand(w)
        _groups[name] = items
    return _groups[name]


class Filter:
    def __init__(self, lib, default):
        self.lib = lib
        self.ctx = lib.seccomp_init(default)
        if not self.ctx:
            sys.exit("unit_sandbox: seccomp_init failed")

    def nr(self, name):
        return self.lib.seccomp_syscall_resolve_name(name.encode())

    def add(self, action, name, *cmps):
        nr = self.nr(name)
        if nr == -1:  # __NR_SCMP_ERROR: libseccomp does not know it
            return False
        arr = (ArgCmp * max(1, len(cmps)))(*cmps)
        ret = self.lib.seccomp_rule_add_array(self.ctx, action, nr, len(cmps), arr)
        return ret == 0

    def load(self):
        ret = self.lib.seccomp_load(self.ctx)
        if ret:
            sys.exit("unit_sandbox: seccomp_load: %s" % os.strerror(-ret))
        self.lib.seccomp_release(self.ctx)


def do_seccomp(unit):
    path = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    lib = ctypes.CDLL(path, use_errno=True)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(ArgCmp)]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    notes = []

    # RestrictAddressFamilies: socket() of any other family -> EAFNOSUPPORT.
    fams = [w for v in unit_values(unit, "RestrictAddressFamilies") for w in v.split()]
    if fams:
        if any(w.startswith("~") for w in fams) or set(fams) - set(AF):
            sys.exit("unit_sandbox: RestrictAddressFamilies %s not supported" % fams)
        ok = {AF[w] for w in fams}
        f = Filter(lib, SCMP_ACT_ALLOW)
        nope = SCMP_ACT_ERRNO(errno.EAFNOSUPPORT)
        for fam in range(AF_MAX):
            if fam not in ok:
                f.add(nope, "socket", ArgCmp(0, SCMP_CMP_EQ, fam, 0))
        f.add(nope, "socket", ArgCmp(0, SCMP_CMP_GE, AF_MAX, 0))
        f.load()
        notes.append("socket families %s" % " ".join(fams))

    # MemoryDenyWriteExecute (systemd's seccomp_memory_deny_write_execute).
    if "yes" in unit_values(unit, "MemoryDenyWriteExecute"):
        PROT_WRITE, PROT_EXEC, SHM_EXEC = 0x2, 0x4, 0o100000
        f = Filter(lib, SCMP_ACT_ALLOW)
        eperm = SCMP_ACT_ERRNO(errno.EPERM)
        wx = PROT_WRITE | PROT_EXEC
        f.add(eperm, "mmap", ArgCmp(2, SCMP_CMP_MASKED_EQ, wx, wx))
        for s in ("mprotect", "pkey_mprotect"):
            f.add(eperm, s, ArgCmp(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC))
        f.add(eperm, "shmat", ArgCmp(2, SCMP_CMP_MASKED_EQ, SHM_EXEC, SHM_EXEC))
        f.load()
        notes.append("no writable+executable memory")
    # SystemCallFilter: the first line decides allow or deny list; later
    # lines add to or take from it (systemd.exec(5)). Loaded last, as systemd
    # does: it may deny seccomp() itself.
    allow, names = None, set()
    for v in unit_values(unit, "SystemCallFilter"):
        deny = v.startswith("~")
        words = set()
        for w in v.lstrip("~").split():
            words |= expand(w.split(":")[0])
        if allow is None:
            allow = not deny
            if allow:
                names = expand("@default")
        if deny == (not allow):
            names |= words
        else:
            names -= words
    if allow is not None:
        err = unit_values(unit, "SystemCallErrorNumber")
        miss = (SCMP_ACT_ERRNO(getattr(errno, err[-1])) if err else SCMP_ACT_KILL_PROCESS)
        f = Filter(lib, miss if allow else SCMP_ACT_ALLOW)
        n = sum(f.add(SCMP_ACT_ALLOW if allow else miss, s) for s in sorted(names))
        f.load()
        notes.append("%s list of %d syscalls (%d known here)" % (
            "allow" if allow else "deny", len(names), n))

    print("unit_sandbox: seccomp: %s" % "; ".join(notes), file=sys.stderr)


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "caps":
        print(",".join(unit_caps(args[1])))
        return
    if len(args) >= 2 and args[0] == "mask":
        print("%016x" % cap_mask(unit_caps(args[1])))
        return
    if len(args) < 4 or args[0] not in ("mounts", "seccomp") or "--" not in args:
        sys.exit(__doc__)
    cmd = args[args.index("--") + 1:]
    opts = args[2:args.index("--")]
    if args[0] == "mounts":
        rw, no_rw = [], []
        while opts:
            o, p = opts[0], opts[1]
            (rw if o == "--rw" else no_rw).append(p)
            opts = opts[2:]
        do_mounts(args[1], rw, no_rw)
    else:
        do_seccomp(args[1])
    sys.stderr.flush()
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main()
