#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `make bench-lab`: the testbed's reference labs at 100M, each brought up,
# pinged while idle, driven with greedy UDP, and taken down (docs/testbed.md,
# "The lab benchmark"):
#
#   gran-fig8  config/topologies/gran-fig8.yaml as it is (host links 100M,
#              inter-switch 200M, credit, 2 switchd + 7 hostd) and the flows
#              of config/experiments/gran-fig8.yaml, all from t = 0 (the
#              parking lot: four flows into h5, h1 -> h4 beside them)
#   santos-cc  config/topologies/santos-cc.yaml at 100M with no congestion
#              control (the settings of the `none` point of
#              config/sweeps/santos-exp1.yaml, read from it: no marking,
#              unreliable mode, static law; 2 switchd + 23 hostd) and the
#              flows of config/experiments/santos-cc-fig4.yaml (L = R = 10
#              into bc, the victim av -> bv), all from t = 0
#
# Per lab, under /tmp/l2cc-measure.lock (flock):
#   1. while the lab is idle: BENCH_LAB_PINGS pings (10 ms apart) from one
#      host to another across both switches (k daemons one way: the source's
#      hostd, the switches, the destination's hostd), and the same pings
#      over a bare veth pair between two namespaces of our own (no daemon);
#      hop_us = (median RTT through the lab - median RTT of the bare pair)
#      / (2 k): one daemon traversal with the veth into it, the round trip
#      crossing 2 k daemons and 2 (k + 1) veths against the pair's 2;
#   2. `l2cc-lab run` of the derived experiment: BENCH_LAB_SECONDS of
#      traffic, steady window from min(2 s, S/4) to the end; from its
#      results.json: rate_check (every saturated port held its rate within
#      2 %: achieved / rate over the intervals it had frames queued and no
#      flow control held it, judged with >= 0.1 s saturated), and cpu
#      (utime + stime over the run as % of one core: the lab's daemons plus
#      the iperf3 processes = cpu_lab; the daemons alone; the whole
#      machine's busy time, other users' load included).
# Each lab runs in each mode: `process`, a process per daemon (the default
# of `l2cc-lab up`), and `one`, every daemon in one l2ccd (`l2cc-lab up
# --one-process 1`, docs/l2ccd.md).
# Prints a table, a line per saturated port that missed its rate, and ends
# with one line per mode:
#   LAB mode=<mode> held=<labs held>/<labs> hop_us=<median of the labs' hop_us> cpu=<max cpu_lab>
# A lab is held when it had a saturated port and every one held its rate.
# Numbers never fail the run; it exits non-zero when something cannot be
# set up or a lab's run gave no results.
#
# Environment:
#   BENCH_LAB_SECONDS=S   traffic per lab (default 12)
#   BENCH_LAB_ONLY="gran-fig8 santos-cc"   subset, in this order
#   BENCH_LAB_MODES="process one"          subset, in this order
#   BENCH_LAB_THREADS=N   l2ccd's loops in mode one (default 1)
#   BENCH_LAB_PINGS=N     pings per path (default 200)
#   BENCH_LAB_PREFIX=P    namespace prefix (default l2bl<pid>): the labs' are
#                         Pg-NODE and Ps-NODE, the bare pair's P-b1, P-b2
#   BENCH_KEEP=1          keep the temp dir (derived files, lab logs, results)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD

B=$ROOT/build
SECS=${BENCH_LAB_SECONDS:-12}
ONLY=${BENCH_LAB_ONLY:-"gran-fig8 santos-cc"}
MODES=${BENCH_LAB_MODES:-"process one"}
THREADS=${BENCH_LAB_THREADS:-1}
PINGS=${BENCH_LAB_PINGS:-200}
P=${BENCH_LAB_PREFIX:-l2bl$$}
# The system interpreter: PyYAML, numpy and matplotlib are Debian's.
PY=${L2CC_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
LABTOOL=$ROOT/scripts/l2cc-lab
BARE1=$P-b1 BARE2=$P-b2
BIP1=10.97.0.1 BIP2=10.97.0.2
DIR=$(mktemp -d "/tmp/$P.XXXXXX")
: >"$DIR/pids"

BENCH_TAG=bench-lab
# say, die, hx, netns_add, take_lock, the cleanup at exit (bench_lib.sh)
# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

# The lab that is up goes down before bench_lib's cleanup (our PIDs, our
# namespaces, DIR).
LAB_UP=
lab() { "$PY" "$LABTOOL" "$@"; }
lab_down() { # NAME RUNDIR
	lab down "$1" --rundir "$2" >>"$DIR/down.log" 2>&1 ||
		say "WARNING: l2cc-lab down $1 failed: $(tail -1 "$DIR/down.log")"
}
labs_cleanup() {
	# shellcheck disable=SC2086  # LAB_UP: "NAME RUNDIR"
	[ -n "$LAB_UP" ] && lab_down $LAB_UP
	LAB_UP=
	cleanup
}
trap labs_cleanup EXIT
trap 'labs_cleanup; exit 130' INT
trap 'labs_cleanup; exit 143' TERM

# ---- prerequisites -----------------------------------------------------------

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP)"
for t in ip ethtool iperf3 ping flock; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
for f in "$B/bin/switchd" "$B/bin/hostd" "$L2CCCTL"; do
	[ -x "$f" ] || die "$f missing: run make first"
done
"$PY" -c 'import yaml, numpy' 2>/dev/null || die "python3-yaml or python3-numpy missing (make deps)"
case $SECS in '' | *[!0-9.]*) die "BENCH_LAB_SECONDS=$SECS: expected seconds" ;; esac
for l in $ONLY; do
	case $l in gran-fig8 | santos-cc) ;; *) die "BENCH_LAB_ONLY: unknown lab $l (gran-fig8, santos-cc)" ;; esac
done
for m in $MODES; do
	case $m in process | one) ;; *) die "BENCH_LAB_MODES: unknown mode $m (process, one)" ;; esac
done
case $THREADS in [1-9] | [1-5][0-9] | 6[0-4]) ;; *) die "BENCH_LAB_THREADS=$THREADS: expected 1..64" ;; esac
case " $MODES " in *" one "*) [ -x "$B/bin/l2ccd" ] || die "$B/bin/l2ccd missing: run make first" ;; esac

# ---- derived topologies and experiments -------------------------------------------

# derive LAB: $DIR/LAB/{topology,experiment}.yaml from the reference files,
# changed as the header says, with the sweeps' dotted paths (sweep.py); the
# lab is bench-LAB with its own prefix.
derive() {
	mkdir -p "$DIR/$1"
	"$PY" - "$1" "$DIR/$1" "$P" "$SECS" <<'EOF' || die "cannot derive the files of lab $1"
import sys, yaml
sys.path.insert(0, "scripts")
from l2cc.sweep import parse_path, set_path
lab, out, prefix, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
# topology, experiment, prefix suffix, (sweep, point) whose `set` applies, more settings
LABS = {
    "gran-fig8": ("config/topologies/gran-fig8.yaml", "config/experiments/gran-fig8.yaml",
                  "g", None, {}),
    "santos-cc": ("config/topologies/santos-cc.yaml", "config/experiments/santos-cc-fig4.yaml",
                  "s", ("config/sweeps/santos-exp1.yaml", "none"),     # no congestion control
                  {"topology.defaults.rate": "100M"}),
}
tpath, epath, sfx, point, more = LABS[lab]
docs = {"topology": yaml.safe_load(open(tpath)), "experiment": yaml.safe_load(open(epath))}
sets = {}
if point:
    sw = yaml.safe_load(open(point[0]))
    sets.update(next(p for p in sw["points"] if p["label"] == point[1]).get("set") or {})
warm = min(2.0, secs / 4)      # every iperf3 client started and sending
sets.update(more)
sets.update({"topology.name": "bench-" + lab, "topology.prefix": prefix + sfx,
             "experiment.name": "bench-" + lab,
             "experiment.description": "make bench-lab: the flows of %s, every one from t = 0"
                                      % epath,
             "experiment.topology": out + "/topology.yaml", "experiment.duration": secs,
             "experiment.warmup": warm, "experiment.window": [warm, secs]})
for text, v in sets.items():
    steps = parse_path(text)
    set_path(docs[steps[0][1]], steps[1:], v, steps[0][1])
docs["experiment"].pop("phases", None)
for f in docs["experiment"]["flows"]:
    for k in ("start", "stop", "duration", "stagger"):
        f.pop(k, None)
for d, src in (("topology", tpath), ("experiment", epath)):
    with open("%s/%s.yaml" % (out, d), "w") as f:
        f.write("# SPDX-License-Identifier: BSD-2-Clause\n# Derived by scripts/bench_lab.sh "
                "from %s, with:\n" % src)
        f.write("".join("#   %s = %s\n" % (k, v) for k, v in sets.items()
                        if k.startswith(d + ".")))
        f.write(yaml.safe_dump(docs[d], sort_keys=False, width=100))
EOF
}

# ---- the bare pair: the same ping with no daemon ----------------------------------

netns_add "$BARE1"
netns_add "$BARE2"
ip -n "$BARE1" link add eth0 type veth peer name eth0 netns "$BARE2" || die "veth of the bare pair"
ip -n "$BARE1" addr add "$BIP1/24" dev eth0 || die "address in $BARE1"
ip -n "$BARE2" addr add "$BIP2/24" dev eth0 || die "address in $BARE2"
for n in "$BARE1" "$BARE2"; do
	hx "$n" ethtool -K eth0 tx off >/dev/null 2>&1   # as the lab's hosts
	ip -n "$n" link set eth0 up || die "eth0 up in $n"
done
ping_ready "$BARE1" "$BIP2" || die "no ping over the bare pair"

# pings NS ADDR OUT: PINGS pings, 10 ms apart; one RTT (ms) a line in OUT
pings() {
	hx "$1" ping -n -c "$PINGS" -i 0.01 -W 1 "$2" 2>/dev/null |
		sed -n 's/.* time=\([0-9.]*\) ms$/\1/p' >"$3"
}

# ping_path LAB: "SRC_NS DST_ADDR K": a host pair across both switches and the
# daemons a ping crosses one way (from lab.json, by the shortest path)
ping_path() { # LAB RUNDIR
	"$PY" - "$2/lab.json" "$1" <<'EOF'
import json, sys
from collections import deque
doc = json.load(open(sys.argv[1]))
src, dst = {"gran-fig8": ("h1", "h4"), "santos-cc": ("av", "bv")}[sys.argv[2]]
nodes = doc["nodes"]
adj = {}
for lk in doc["links"]:
    a, b = lk["a"].split(":")[0], lk["b"].split(":")[0]
    adj.setdefault(a, []).append(b)
    adj.setdefault(b, []).append(a)
prev, q = {src: None}, deque([src])
while q:
    n = q.popleft()
    for m in adj.get(n, []):
        if m not in prev:
            prev[m] = n
            q.append(m)
path, n = [], dst
while n is not None:
    path.append(n)
    n = prev[n]
k = sum(1 for n in path if nodes[n]["kind"] == "switch" or nodes[n].get("hostd"))
print(nodes[src]["netns"], nodes[dst]["addr"], k)
EOF
}

# ---- one lab ----------------------------------------------------------------------

# bench LAB MODE: up (a process per daemon, or one l2ccd: `up --one-process`),
# pings, run, down; the figures in $DIR/LAB-MODE.res
bench() {
	local l=$1 m=$2 name=bench-$1 key=$1-$2 ns addr k rc
	local rd=$DIR/run-bench-$key res=$DIR/res-$key one=()
	# "process": say so, whatever the topology's one_process or the
	# environment's L2CC_ONE_PROCESS would choose.
	one=(--one-process 0)
	[ "$m" = one ] && one=(--one-process "$THREADS")
	derive "$l"
	say "$key: up ($DIR/$l/topology.yaml)"
	LAB_UP="$name $rd"
	if ! lab up "$DIR/$l/topology.yaml" --rundir "$rd" "${one[@]}" >"$DIR/$key.up.log" 2>&1; then
		tail -20 "$DIR/$key.up.log" >&2
		die "$key: l2cc-lab up failed"
	fi
	read -r ns addr k <<<"$(ping_path "$l" "$rd")"
	[ -n "$k" ] || die "$key: no ping path in $rd/lab.json"
	ping_ready "$ns" "$addr" || die "$key: no ping from $ns to $addr"
	{
		take_lock
		say "$key: $PINGS pings $ns -> $addr ($k daemons one way) and over the bare pair"
		pings "$BARE1" "$BIP2" "$DIR/$key.bare"
		pings "$ns" "$addr" "$DIR/$key.rtt"
		say "$key: ${SECS}s of traffic"
		lab run "$DIR/$l/experiment.yaml" --lab "$name" --rundir "$rd" --out "$res" \
			--no-plots -q >"$DIR/$key.run.log" 2>&1
		rc=$?
	} 9>"$LOCK"
	[ "$rc" -eq 0 ] || say "$key: l2cc-lab run exited $rc: $(tail -1 "$DIR/$key.run.log")"
	lab_down "$name" "$rd"
	LAB_UP=
	[ -s "$res/results.json" ] || { tail -20 "$DIR/$key.run.log" >&2; die "$key: no results.json"; }
	"$PY" - "$res/results.json" "$DIR/$key.rtt" "$DIR/$key.bare" "$k" "$rd/lab.json" "$rc" \
		"$(tail -1 "$DIR/$key.run.log")" >"$DIR/$key.res" <<'EOF' || die "$key: cannot read its results"
import json, statistics, sys
r = json.load(open(sys.argv[1]))
def med(p):
    v = [float(x) * 1000 for x in open(p).read().split()]
    return statistics.median(v) if v else float("nan")
rtt, bare, k = med(sys.argv[2]), med(sys.argv[3]), int(sys.argv[4])
nodes = json.load(open(sys.argv[5]))["nodes"]
daemons = sum(1 for n in nodes.values() if n["kind"] == "switch" or n.get("hostd"))
rc = r.get("rate_check") or {}
sat = rc.get("saturated_ports") or []
ports = r.get("ports") or {}
ratios = [ports[p]["saturation"]["ratio"] for p in sat if ports[p]["saturation"]["ratio"]]
held = bool(sat) and not rc.get("not_held")
c = r.get("cpu") or {}
print(json.dumps({"daemons": daemons, "sat": len(sat), "held_n": len(rc.get("held") or []),
                  "held": held, "worst": min(ratios) if ratios else None,
                  "not_held": ["%s %.3f" % (p, ports[p]["saturation"]["ratio"])
                               for p in rc.get("not_held") or []],
                  "cpu_lab": c.get("lab_pct_one_core"), "cpu_daemons": c.get("daemons_pct_one_core"),
                  "cpu_machine": c.get("machine_pct_one_core"),
                  "wait_max_s": c.get("run_delay_max_s"), "wait_max_daemon": c.get("run_delay_max_daemon"),
                  "rtt_us": rtt, "bare_us": bare, "k": k, "replies": len(open(sys.argv[2]).read().split()),
                  "hop_us": (rtt - bare) / (2 * k),
                  "run_rc": int(sys.argv[6]), "run_said": sys.argv[7]}))
EOF
}

# ---- run ---------------------------------------------------------------------------

say "labs: $ONLY; modes: $MODES; ${SECS}s of traffic each, $PINGS pings a path; temp dir $DIR"
for m in $MODES; do
	for l in $ONLY; do bench "$l" "$m"; done
done

# ---- report -------------------------------------------------------------------------

echo
# shellcheck disable=SC2086  # ONLY: one word per lab
"$PY" - "$DIR" "$MODES" $ONLY <<'EOF'
import json, math, statistics, sys
d, modes, labs = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
rows = [(l, m, json.load(open("%s/%s-%s.res" % (d, l, m)))) for m in modes for l in labs]
fmt = "%-10s %-7s %7s %4s %5s %6s %8s %12s %12s %9s %8s %8s %2s %7s"
print(fmt % ("lab", "mode", "daemons", "sat", "held", "worst", "cpu_lab%", "cpu_daemons%",
             "cpu_machine%", "wait_max", "rtt_us", "bare_us", "k", "hop_us"))
n = lambda x, f: f % x if x is not None and not (isinstance(x, float) and math.isnan(x)) else "-"
for l, m, r in rows:
    print(fmt % (l, m, r["daemons"], r["sat"], "%d%s" % (r["held_n"], "" if r["held"] else "!"),
                 n(r["worst"], "%.3f"), n(r["cpu_lab"], "%.0f"), n(r["cpu_daemons"], "%.0f"),
                 n(r["cpu_machine"], "%.0f"), n(r["wait_max_s"], "%.3fs"), n(r["rtt_us"], "%.0f"),
                 n(r["bare_us"], "%.0f"), r["k"], n(r["hop_us"], "%.1f")))
for l, m, r in rows:
    l = "%s (%s)" % (l, m)
    if r["run_rc"]:
        print("  %s: l2cc-lab run exited %d: %s" % (l, r["run_rc"], r["run_said"][:300]))
    if r["not_held"]:
        print("  %s: NOT held: %s" % (l, ", ".join(r["not_held"])))
    elif not r["sat"]:
        print("  %s: no port saturated for 0.1 s of the window: not judged (not held)" % l)
print("""  sat: ports saturated (frames queued, no flow control holding them) >= 0.1 s of the
  window; held: of those, how many sent within 2% of their rate (! = the lab did not hold);
  worst: the lowest achieved/rate among them. cpu_lab%: utime+stime of the lab's daemons
  and the iperf3 processes over the run, % of one core; cpu_daemons%: the daemons alone;
  cpu_machine%: the machine's busy time (/proc/stat, every user's), % of one core;
  wait_max: the longest time one daemon was runnable but had no CPU. rtt_us: median of the
  individual ping replies across the idle lab, k daemons one way; bare_us: the same over
  a bare veth pair; hop_us = (rtt_us - bare_us) / (2 k). mode: process = a process per
  daemon; one = every daemon in one l2ccd (l2cc-lab up --one-process 1).""")
print()
for mode in modes:
    rs = [r for _, m, r in rows if m == mode]
    held = sum(1 for r in rs if r["held"])
    hops = [r["hop_us"] for r in rs if not math.isnan(r["hop_us"])]
    cpus = [r["cpu_lab"] for r in rs if r["cpu_lab"] is not None]
    print("LAB mode=%s held=%d/%d hop_us=%s cpu=%s" % (
        mode, held, len(rs), "%.1f" % statistics.median(hops) if hops else "nan",
        "%.0f" % max(cpus) if cpus else "nan"))
EOF
