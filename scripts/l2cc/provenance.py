# SPDX-License-Identifier: BSD-2-Clause
"""Where a result came from (docs/testbed.md, "Provenance"): the source
tree's commit and whether it was dirty, every binary's --version, the
kernel, the CPU, the load average before the run and the command line, so
that two result folders can be told apart later. Written into run.json
and sweep.json; nothing here may fail a run: what cannot be read is None.
"""

import os
import platform
import subprocess
import sys

from . import REPO

#: The binaries whose --version a result records (build/bin, or --bin).
BINARIES = ("switchd", "hostd", "l2ccd", "l2ccctl", "l2cc-flowgen")
#: The tools of the testbed whose version matters to a result.
TOOLS = (("iperf3", ["iperf3", "--version"]),)


def _out(cmd, cwd=None):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=5, cwd=cwd,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def git():
    """{commit, dirty, describe} of the repository the testbed runs from,
    or None outside a git checkout."""
    # As root in another user's checkout git refuses ("dubious ownership").
    g = ["git", "-c", "safe.directory=" + REPO]
    commit = _out(g + ["rev-parse", "HEAD"], REPO)
    if not commit:
        return None
    status = _out(g + ["status", "--porcelain", "--untracked-files=no"], REPO)
    return {"commit": commit, "dirty": bool(status) if status is not None else None,
            "describe": _out(g + ["describe", "--always", "--dirty", "--abbrev=12"], REPO)}


def lab_version():
    """l2cc-lab's --version line: the git describe of the tree it runs from,
    as the C binaries print theirs."""
    return "l2cc-lab (l2cc) %s" % ((git() or {}).get("describe") or "unknown")


def versions(bindir):
    """{binary: its --version line} (None where it is missing or has none)."""
    out = {}
    for b in BINARIES:
        path = os.path.join(bindir, b) if bindir else b
        out[b] = _out([path, "--version"]) if os.path.exists(path) else None
    out["l2cc-lab"] = lab_version()
    for name, cmd in TOOLS:
        v = _out(cmd)
        out[name] = v.splitlines()[0] if v else None
    out["python3"] = platform.python_version()
    return out


def cpu():
    """{model, count} of this machine's CPU."""
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"model": model, "count": os.cpu_count()}


def loadavg():
    """The 1, 5 and 15 minute load averages now."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def collect(bindir=None):
    """The whole record."""
    return {"git": git(), "versions": versions(bindir), "kernel": platform.release(),
            "machine": platform.machine(), "cpu": cpu(), "loadavg_before": loadavg(),
            "argv": list(sys.argv), "cwd": os.getcwd()}
