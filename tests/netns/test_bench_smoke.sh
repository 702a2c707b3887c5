#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A smoke run of `make bench` (scripts/bench.sh, issue 17): one second per
# iperf3 test, one run, three configurations. It checks the report's shape
# and the cleanup, never a speed: it must pass on a busy machine, and the
# figures are `make bench`'s to give on a quiet one.
#
#   BENCH_SECONDS=1 BENCH_RUNS=1 BENCH_ONLY="switchd afxdp_min bridge" scripts/bench.sh
#
# What it checks, and why:
#  - bench_smoke: the script exits 0 (it takes /tmp/l2cc-measure.lock
#    itself, per configuration); the table has exactly the rows of the three
#    configurations run, every figure a finite number (the daemon columns
#    "-" for the bridge, which has no process to measure); the three RATIO
#    lines come last, in order, with their keys and finite numbers, except
#    switchd-xdp/xdp_fwd, whose configurations did not run: nan (a missing
#    configuration must say so, not print a made-up ratio); afxdp_min says
#    it forwarded frames. Afterwards nothing of the run is left: no
#    namespace of its prefix (l2b<pid>-), no process it started (this
#    build's switchd, afxdp_min or xdp_fwd_load, an iperf3 to 10.98.0.2),
#    no XDP link of the benchmark's programs.
. "$(dirname "$0")/lib.sh"

BENCH=$L2CC_ROOT/scripts/bench.sh

# leftovers BENCH_PID SINCE LINK_ID: what the run left behind, one line
# each (processes started since SINCE, in clock ticks after boot; XDP links
# above LINK_ID).
leftovers() {
	local pid=$1 since=$2 p exe st
	ip netns list 2>/dev/null | awk '{print $1}' | grep "^l2b$pid-" | sed 's/^/namespace /'
	for p in /proc/[0-9]*; do
		st=$(_l2t_starttime "${p#/proc/}")
		if [ -z "$st" ] || [ "$st" -lt "$since" ]; then continue; fi
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		case $exe in
		"$L2CC_ROOT"/build/bin/switchd | "$L2CC_ROOT"/build/bench/*) ;;
		*/iperf3) tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q '10\.98\.0\.' || continue ;;
		*) continue ;;
		esac
		echo "process ${p#/proc/} ($exe)"
	done
	new_bench_links "$3"
}

# new_bench_links MIN_ID: XDP links of the benchmark's own programs
# (afxdp_min, xdp_fwd_load) with an id above MIN_ID; switchd's are covered
# by its process. "max N" when MIN_ID is "-": the highest link id now.
new_bench_links() {
	command -v bpftool >/dev/null || { [ "$1" = - ] && echo "max 0"; return 0; }
	"$PY" - "$1" <<'EOF'
import json, subprocess, sys
def j(*a):
    r = subprocess.run(["bpftool", "-j"] + list(a), capture_output=True, text=True)
    return json.loads(r.stdout or "[]") if r.returncode == 0 else []
links = j("link", "show")
if sys.argv[1] == "-":
    print("max %d" % max([l.get("id", 0) for l in links] + [0]))
    sys.exit(0)
names = {p.get("id"): p.get("name", "") for p in j("prog", "show")}
for l in links:
    name = names.get(l.get("prog_id"), "")
    if l.get("type") == "xdp" and l.get("id", 0) > int(sys.argv[1]) and \
            name in ("afxdp_min_xsk", "xdp_fwd", "xdp_pass"):
        print("XDP link %d (%s)" % (l["id"], name))
EOF
}

# check_report OUT: the table and the RATIO lines (prints what is wrong)
check_report() {
	"$PY" - "$1" <<'EOF'
import math, sys
lines = open(sys.argv[1]).read().splitlines()
bad = []
def num(s):
    try:
        return float(s)
    except ValueError:
        return None
head = [i for i, l in enumerate(lines) if l.split()[:2] == ["config", "tcp_gbps"]]
if len(head) != 1:
    print("no table header (config tcp_gbps ...)"); sys.exit(1)
cols = lines[head[0]].split()
rows = {}
for l in lines[head[0] + 1:]:
    if not l.strip() or l.startswith(" "):
        break
    f = l.split()
    if len(f) != len(cols):
        bad.append("row with %d fields, not %d: %s" % (len(f), len(cols), l))
        continue
    rows[f[0]] = dict(zip(cols, f))
if sorted(rows) != ["afxdp_min", "bridge", "switchd"]:
    bad.append("rows %s, expected afxdp_min bridge switchd" % sorted(rows))
for name, r in rows.items():
    for c in cols[1:]:
        if name == "bridge" and c.startswith("daemon"):
            if r[c] != "-":
                bad.append("bridge %s is %r, expected -" % (c, r[c]))
            continue
        v = num(r[c])
        if v is None or not math.isfinite(v):
            bad.append("%s %s is %r, not a finite number" % (name, c, r[c]))
ratio = [l for l in lines if l.startswith("RATIO ")]
want = [("switchd/bridge", ["tcp", "udp64", "cpu_us_per_frame"], True),
        ("switchd/afxdp_min", ["tcp", "udp64", "daemon_us_per_frame", "rtt_added_us"], True),
        ("switchd-xdp/xdp_fwd", ["tcp", "udp64"], False)]
if [l.split()[1] for l in ratio] != [w[0] for w in want]:
    bad.append("RATIO lines %s, expected %s" % ([l.split()[1] for l in ratio], [w[0] for w in want]))
elif lines[-len(ratio):] != ratio:
    bad.append("the RATIO lines are not the report's last lines")
else:
    for l, (what, keys, ran) in zip(ratio, want):
        kv = {}
        for t in l.split()[2:]:
            k, eq, v = t.partition("=")
            kv[k if eq else "?" + t] = v
        if list(kv) != keys:
            bad.append("RATIO %s keys %s, expected %s" % (what, list(kv), keys))
            continue
        for k, v in kv.items():
            x = num(v)
            if x is None or (ran and not math.isfinite(x)) or (not ran and v != "nan"):
                bad.append("RATIO %s %s=%s, expected %s" % (what, k, v, "a finite number" if ran else "nan"))
print("; ".join(bad) if bad else "%d rows, %d RATIO lines" % (len(rows), len(ratio)))
sys.exit(1 if bad else 0)
EOF
}

t_bench_smoke() {
	local f pid rc since links0 left fwd
	for f in "$SWITCHD" "$L2CC_ROOT/build/bench/afxdp_min" "$L2CC_ROOT/build/bench/xdp_fwd_load"; do
		[ -x "$f" ] || fail "$f not built (make all)"
	done
	command -v iperf3 >/dev/null || skip "iperf3 not installed"
	links0=$(new_bench_links - | awk '{print $2}')
	BENCH_SECONDS=1 BENCH_RUNS=1 BENCH_ONLY="switchd afxdp_min bridge" \
		"$BENCH" >"$L2T_DIR/bench.out" 2>"$L2T_DIR/bench.err" &
	pid=$!
	bg_record "$pid"
	since=$(_l2t_starttime "$pid")
	[ -n "$since" ] || since=0
	wait "$pid"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		sed 's/^/    #   /' "$L2T_DIR/bench.err"
		grep -Eq "(AF_XDP socket|XDP program).*(not supported|not implemented)" "$L2T_DIR/bench.err" &&
			skip "AF_XDP/XDP unsupported here"
		fail "bench.sh exited with status $rc: $(tail -1 "$L2T_DIR/bench.err")"
	fi
	sed -n '/^config /,$p' "$L2T_DIR/bench.out" | grep -Ev '^  ' | sed '/^$/d; s/^/    #   /'
	check_report "$L2T_DIR/bench.out" >"$L2T_DIR/check.out" || fail "report: $(cat "$L2T_DIR/check.out")"
	fwd=$(sed -n 's/^bench: afxdp_min: forwarded \([0-9]*\) frames.*/\1/p' "$L2T_DIR/bench.err")
	if [ -z "$fwd" ] || [ "$fwd" -eq 0 ]; then
		fail "afxdp_min did not say it forwarded frames (${fwd:-no line})"
	fi
	left=$(leftovers "$pid" "$since" "${links0:-0}")
	[ -z "$left" ] || fail "left behind: $(echo "$left" | tr '\n' ';')"
}

run_test bench_smoke t_bench_smoke
tests_done
