# SPDX-License-Identifier: BSD-2-Clause
"""The `l2cc-lab` command line.

Subcommands are declared as data (COMMANDS) so that --help cannot drift from
what is dispatched. Exit status: 0 success, 1 a runtime failure (a command
failed, a daemon did not come up, the lab is not fully up for `status`),
2 a usage or topology error (printed as FILE:LINE: message).
"""

import argparse
import importlib
import json
import os
import sys

from . import lab as L
from . import topo as T


def cmd_check(a):
    topo, rundir, confs, notes = L.prepare(a.topology, a.rundir, a.bin)
    for n in notes + topo.notes:
        print("note: " + n)
    # As `up` would run them: the environment may override the file.
    threads = L.one_process_threads(None, topo.one_process)
    print("%s: OK, lab %s (prefix %s): %d switches, %d hosts, %d links, %d daemons%s"
          % (a.topology, topo.name, topo.prefix, len(topo.switches()), len(topo.hosts()),
             len(topo.links), len(confs),
             " in one l2ccd (%d loop%s)" % (threads, "" if threads == 1 else "s")
             if threads else ""))
    if a.configs:
        for name, c in confs.items():
            print("\n### %s.conf (%s)\n" % (name, c.daemon))
            sys.stdout.write(c.text())
    return 0


def cmd_export(a):
    from . import export as X    # only here: the netns lab does not need it
    topo, man, notes = X.export(a.topology, a.out, a.bin)
    for n in notes + topo.notes:
        print("note: " + n)
    print("%s: lab %s exported to %s for %d machines" % (a.topology, topo.name, a.out,
                                                         len(man["machines"])))
    for m, e in man["machines"].items():
        print("  %-10s nodes %s; units %s; NICs %s" % (m, " ".join(e["nodes"]),
                                                      " ".join(e["units"]) or "-",
                                                      " ".join(e["nics"]) or "-"))
    print("deploy: ansible-playbook -i %s/inventory.yml %s/playbook.yml (or, on each "
          "machine, sh MACHINE/install.sh as root)" % (a.out, a.out))
    return 0


def _one_process(p):
    p.add_argument("--one-process", metavar="THREADS", nargs="?", const="1", default=None,
                   help="run every daemon in one l2ccd process with THREADS loops (default "
                        "1; also $L2CC_ONE_PROCESS, else the topology's one_process; 0: a "
                        "process per daemon): a hop between two daemons of one loop costs no "
                        "wake-up (docs/l2ccd.md)")


def cmd_up(a):
    return L.up(a.topology, a.rundir, a.bin, a.one_process)


def cmd_down(a):
    return L.down(L.resolve(a.lab, a.rundir))


def cmd_status(a):
    doc, ok = L.status(L.resolve(a.lab, a.rundir), a.bin)
    print(json.dumps(doc, indent=None if a.compact else 2))
    return 0 if ok else 1


# ---- hook: experiments (scripts/l2cc/experiment.py, another engineer's) -------------
#
# `l2cc-lab run ...` and `l2cc-lab plot ...` hand every argument after the
# subcommand word to the experiment module, imported only then, so the lab
# commands work without it:
#
#     experiment.run_main(argv: list[str]) -> int     # l2cc-lab run ARGS...
#     experiment.plot_main(argv: list[str]) -> int    # l2cc-lab plot ARGS...
#
# The module owns its own argparse (so `l2cc-lab run --help` is its help).
# From it, lab.resolve(name_or_topo).doc is lab.json, and lab.up()/lab.down()
# build and remove a lab.

def _experiment(entry, argv):
    name = __package__ + ".experiment"
    try:
        # Lazy: owned by the experiment runner, and not needed by the lab.
        experiment = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise  # experiment.py is there but imports something missing
        print("l2cc-lab: `%s` needs scripts/l2cc/experiment.py (the experiment runner), "
              "which is not there yet" % entry.split("_")[0], file=sys.stderr)
        return 2
    fn = getattr(experiment, entry, None)
    if fn is None:
        print("l2cc-lab: scripts/l2cc/experiment.py has no %s(argv)" % entry, file=sys.stderr)
        return 2
    return fn(argv)


def cmd_run(a):
    return _experiment("run_main", a.args)


def cmd_plot(a):
    return _experiment("plot_main", a.args)

# ---- end of hook ---------------------------------------------------------------------


def cmd_sweep(a):
    # Imported only here, like the experiment runner (which it uses).
    from . import sweeprun
    return sweeprun.cmd_sweep(a)


def _topology(p):
    p.add_argument("topology", metavar="TOPO", help="topology YAML file")


def _lab(p):
    p.add_argument("lab", metavar="NAME|TOPO", help="lab name, or its topology file")


def _rundir(p):
    p.add_argument("--rundir", metavar="DIR",
                   help="the lab's run directory (default /run/l2cc/NAME)")


def _configs(p):
    p.add_argument("--configs", action="store_true",
                   help="also print the generated daemon configurations")


def _out(p):
    p.add_argument("--out", metavar="DIR", required=True,
                   help="where to write the export (new or empty): a directory per machine, "
                        "inventory.yml, playbook.yml, export.json")


def _compact(p):
    p.add_argument("--compact", action="store_true", help="one line of JSON")


def _repeat(v):
    try:
        n = int(v)
    except ValueError:
        n = 0
    if not 1 <= n <= 100:
        raise argparse.ArgumentTypeError("expected runs per point, 1..100")
    return n


def _sweep(p):
    p.add_argument("sweep", metavar="SWEEP", nargs="+",
                   help="sweep YAML file (several with --audit)")
    p.add_argument("--check", action="store_true",
                   help="validate the sweep and every point's derived topology and "
                        "experiment, print the points, and exit; touches nothing")
    p.add_argument("--audit", action="store_true",
                   help="list every check of each SWEEP with its kind, where it must hold, "
                        "its controls and its source, from the files alone; exit 1 if a "
                        "paper check has no control or no source")
    p.add_argument("--repeat", metavar="N", type=_repeat,
                   help="runs per point instead of the sweep's repeat (e.g. 1 for a quick "
                        "look; verdicts then have no spread)")
    p.add_argument("--points", metavar="LABEL,...",
                   help="run only these points (labels or shell patterns, e.g. 'fimd_*')")
    p.add_argument("--out", metavar="DIR",
                   help="the sweep's directory (default results/sweeps/NAME/YYYYmmdd-HHMMSS "
                        "in the repository); new or empty")
    p.add_argument("--replace", action="store_true",
                   help="if the lab is up already, take it down first (default: refuse)")
    p.add_argument("--no-plots", action="store_true",
                   help="skip each point's plots (sweep.png is still drawn)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="a line per run and the table (each run's output is in its log)")
    p.add_argument("--report-only", action="store_true",
                   help="print and record the checks, but do not let a failed one make the "
                        "exit status non-zero")


def _passthrough(p):
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments of the experiment runner")


# name, handler, one-line help, argument adders, passthrough (no own parsing)
COMMANDS = [
    ("check", cmd_check, "validate a topology (and each daemon's generated config); "
     "touches nothing", [_topology, _rundir, _configs], False),
    ("export", cmd_export, "write each machine's daemon configs, units and interface script, "
     "and an Ansible inventory and playbook, for a topology whose nodes have machine:",
     [_topology, _out], False),
    ("up", cmd_up, "build a lab: namespaces, veths, addresses, daemons",
     [_topology, _rundir, _one_process], False),
    ("down", cmd_down, "stop a lab's daemons and delete its namespaces (idempotent)",
     [_lab, _rundir], False),
    ("status", cmd_status, "lab.json with live facts: daemons running, their status replies",
     [_lab, _rundir, _compact], False),
    ("run", cmd_run, "run an experiment (scripts/l2cc/experiment.py)", [_passthrough], True),
    ("plot", cmd_plot, "plot an experiment's results (scripts/l2cc/experiment.py)",
     [_passthrough], True),
    ("sweep", cmd_sweep, "run an experiment at every point of a parameter sweep (up, run, "
     "down each), tabulate metrics and judge the checks on the runs that held (exit 0 all "
     "checks pass, 1 one failed, 3 inconclusive: a point never held)", [_sweep, _rundir],
     False),
]


class _Version(argparse.Action):
    """--version, looked up only when asked (git runs three times)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from . import provenance
        print(provenance.lab_version())
        parser.exit()


def parser():
    p = argparse.ArgumentParser(
        prog="l2cc-lab",
        description="Build, inspect and remove l2cc labs: switchd and hostd in network "
                    "namespaces, from a topology file.",
        epilog="Exit status: 0 success, 1 runtime failure, 2 usage or topology error. "
               "Reference: docs/testbed.md")
    p.add_argument("--bin", metavar="DIR",
                   help="where switchd, hostd and l2ccctl are (default $L2CC_BIN, else "
                        "build/bin)")
    p.add_argument("--version", action=_Version, nargs=0,
                   help="print the git describe of the tree it runs from, and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, fn, help_, adders, passthrough in COMMANDS:
        sp = sub.add_parser(name, help=help_, description=help_, add_help=not passthrough)
        for add in adders:
            add(sp)
        sp.set_defaults(func=fn)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    p = parser()
    # run/plot: everything after the word belongs to the experiment runner,
    # options included, so argparse must not look at it.
    i = 0
    while i < len(argv):
        w = argv[i]
        if w == "--bin":
            i += 2
            continue
        if w.startswith("-"):
            i += 1
            continue
        if w in ("run", "plot"):
            a = p.parse_args(argv[:i + 1])
            a.args = argv[i + 1:]
            return a.func(a)
        break
    a = p.parse_args(argv)
    try:
        return a.func(a)
    except T.TopoError as e:
        for line in e.lines():
            print(line, file=sys.stderr)
        return 2
    except L.UsageError as e:
        print("l2cc-lab: %s" % e, file=sys.stderr)
        return 2
    except L.LabError as e:
        print("l2cc-lab: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `l2cc-lab status X | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
