#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The experiment runner end to end: `l2cc-lab up` a one-switch lab (three
# hosts behind hostd, 100M links, PAUSE), `l2cc-lab run` a 3-second
# experiment on it (config/experiments/incast3.yaml: two UDP flows from h1
# and h2 into h3, a TCP flow from h3 to h1), check the result directory,
# `l2cc-lab plot` it again, `l2cc-lab down`.
#
#  - testbed_run_check: --check accepts the example and an error in an
#    experiment file is reported as FILE:LINE with exit status 2.
#  - testbed_run: the run (incast3.yaml with two phases added) exits 0 and
#    results.json is sane: every flow has a rate > 0, the bottleneck S>h3
#    runs at 0.8..1.05 of its rate, the fabric drops nothing (flow control
#    is on), Jain's index is in (0, 1]; the two UDP flows get 0.6..1.4 of
#    their max-min fair share (half of S>h3 each; one short and the other
#    over is one shortfall, judged against S's wait for a CPU; how much
#    the TCP flow h3 -> h1 gets, reported, depends on whether its ACKs
#    catch h1's paused uplink, which moves the UDP split too); S:p3's
#    output queue holds something, and in every line of S's time series
#    each port's outq_frames add up to its voq_frames; both phases have
#    their flows, groups (settle_s), links and ports; the time series,
#    results.csv and the PNGs are there and not empty.
#  - testbed_delays: a second experiment on the same lab: a
#    request/response flow (rr, prio 3) h1 -> h2, an always-on 10M UDP
#    stream (prio 5) h2 -> h1 and a TCP flow with a 64K window (prio 2)
#    h3 -> h1. results.json carries the rr flow's round trip (rr_*) and
#    one-way delays (owd_*, each way below the round trip), the stream's
#    one-way delay from its server (owd_*, its deviation from the running
#    mean, nothing lost), their group's delays (counts summed), and the
#    TCP flow ran with iperf3 -w 65536 -S 64. The lab's hostds set
#    pcp_from_dscp (eth0 MTU 1478), which the incast run (TOS 0) does not
#    notice.
#  - testbed_plot: `l2cc-lab plot DIR --results` redraws a deleted PNG.
#  - testbed_down: `l2cc-lab down` removes the lab's namespaces.
#
# The lab is named after this run ($L2T) and lives in $L2T_DIR/run, so
# concurrent runs and other labs are not touched; the EXIT trap takes it down.
. "$(dirname "$0")/lib.sh"

LAB_TOOL=$L2CC_ROOT/scripts/l2cc-lab
EXP=$L2CC_ROOT/config/experiments/incast3.yaml
RUNDIR=$L2T_DIR/run
OUT=$L2T_DIR/result

lab() { "$LAB_TOOL" "$@"; }

_lab_down() {
	[ -f "$RUNDIR/lab.json" ] && lab down "$L2T" --rundir "$RUNDIR" >/dev/null 2>&1
	l2t_cleanup
}
trap '_lab_down' EXIT
trap '_lab_down; exit 130' INT
trap '_lab_down; exit 143' TERM

setup() {
	[ -x "$LAB_TOOL" ] || skip "scripts/l2cc-lab is not there"
	command -v iperf3 >/dev/null || skip "iperf3 is missing"
	"$PY" -c 'import yaml, numpy, matplotlib' 2>/dev/null ||
		skip "python3-yaml, python3-numpy or python3-matplotlib is missing"
	for b in switchd hostd l2ccctl; do
		[ -x "$L2CC_ROOT/build/bin/$b" ] || skip "build/bin/$b is missing (make)"
	done
	cat >"$L2T_DIR/topo.yaml" <<EOF
name: $L2T
prefix: $L2T
subnet: 10.98.0.0/24
defaults: {rate: 100M, mtu: 1500, buffer: 64K, flow_control: pause,
           hostd: {pcp_from_dscp: yes}}
nodes:
  S: {kind: switch}
  h1: {kind: host}
  h2: {kind: host}
  h3: {kind: host}
links:
  - endpoints: ["S:p1", "h1:eth0"]
  - endpoints: ["S:p2", "h2:eth0"]
  - endpoints: ["S:p3", "h3:eth0"]
EOF
	if ! lab up "$L2T_DIR/topo.yaml" --rundir "$RUNDIR" >"$L2T_DIR/up.log" 2>&1; then
		sed 's/^/    #   /' "$L2T_DIR/up.log" >&2
		if grep -Eq "(AF_XDP socket|XDP program).*(not supported|Function not implemented)" \
			"$RUNDIR"/*.log 2>/dev/null; then
			skip "AF_XDP/XDP unsupported here"
		fi
		fail "l2cc-lab up failed: $(tail -1 "$L2T_DIR/up.log")"
	fi
}

t_check() {
	local out rc
	out=$(lab run "$EXP" --check --lab "$L2T" --rundir "$RUNDIR" 2>&1) ||
		fail "--check of $EXP: $out"
	info "$out"
	printf '%s\n' "duration: 3" "flows:" "  - {name: x, src: h1, dst: nohost, rate: fast}" \
		>"$L2T_DIR/bad.yaml"
	out=$(lab run "$L2T_DIR/bad.yaml" --check --lab "$L2T" --rundir "$RUNDIR" 2>&1)
	rc=$?
	assert_eq "$rc" 2 "exit status of --check on a bad file"
	echo "$out" | grep -q "^$L2T_DIR/bad.yaml:3: flow \"x\": rate \"fast\"" ||
		fail "no FILE:LINE message for the bad rate: $out"
	# The lab check is a second pass: a file without syntax errors reaches it.
	printf '%s\n' "duration: 3" "flows:" "  - {name: x, src: h1, dst: nohost}" \
		>"$L2T_DIR/bad2.yaml"
	out=$(lab run "$L2T_DIR/bad2.yaml" --check --lab "$L2T" --rundir "$RUNDIR" 2>&1)
	rc=$?
	assert_eq "$rc" 2 "exit status of --check with an unknown host"
	echo "$out" | grep -q "^$L2T_DIR/bad2.yaml:3: .*dst \"nohost\" is not a host" ||
		fail "no FILE:LINE message for the unknown host: $out"
}

# The lab's rates need its daemons on a CPU: a run whose bottleneck comes up
# short is tried once more, and short twice it is a SKIP when the switch
# that paces the bottleneck waited for a CPU long enough to explain it (the
# run's results carry each daemon's run-queue delay; see lib.sh's
# short_or_starved for the rule). Every other check is judged as is.
# unless_starved WHY_AGAIN WHY_FAIL TRY...: runs TRY (0 ok, 3: short while
# a daemon starved, with the figures in $L2T_DIR/starved, else a failure)
# up to twice; SKIP with the figures if it starved both times.
unless_starved() {
	local again=$1 failed=$2 n rc
	shift 2
	for n in 1 2; do
		"$@" "$n"
		rc=$?
		[ "$rc" -eq 3 ] || break
		info "run $n: $again; once more"
	done
	case $rc in
	0) ;;
	3) skip "$(cat "$L2T_DIR/starved")" ;;
	*) fail "$failed" ;;
	esac
}

t_run() {
	unless_starved "the bottleneck came up short while S waited for a CPU" \
		"results.json is not sane (above)" run_once
}

run_once() { # attempt
	local rc
	rm -rf "$OUT"
	# incast3.yaml with phases: the first second, then the rest.
	{ cat "$EXP"; echo "phases: {start: [0.2, 1], steady: [1, 3]}"; } >"$L2T_DIR/exp.yaml"
	measure_lock
	lab run "$L2T_DIR/exp.yaml" --lab "$L2T" --rundir "$RUNDIR" --out "$OUT" >"$L2T_DIR/run.log" 2>&1
	rc=$?
	measure_unlock
	sed 's/^/    #   /' "$L2T_DIR/run.log"
	[ "$rc" -eq 0 ] || fail "l2cc-lab run exited $rc: $(tail -1 "$L2T_DIR/run.log")"
	[ -s "$OUT/results.json" ] || fail "no results.json in $OUT"
	[ -s "$OUT/results.csv" ] || fail "no results.csv in $OUT"
	head -1 "$OUT/results.csv" | grep -q '^section,name,metric,value,unit' ||
		fail "results.csv has no header"
	for n in S h1 h2 h3; do
		[ -s "$OUT/series/$n.jsonl" ] || fail "no time series of $n in $OUT/series"
	done
	for p in overview flow_rates link_utilisation queues events; do
		[ -s "$OUT/plots/$p.png" ] || fail "plots/$p.png is missing or empty"
		head -c 8 "$OUT/plots/$p.png" | grep -q PNG || fail "plots/$p.png is not a PNG"
	done
	"$PY" - "$OUT/results.json" "$OUT/series/S.jsonl" "$L2T_DIR/starved" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
bad, short = [], []
def check(ok, what, rate=None):
    """rate: (expected, got) when the check is a rate the daemons keep only
    with a CPU: short of it is 'short', judged against S's run delay."""
    print("    # %s %s" % ("ok " if ok else "BAD", what))
    if not ok:
        (short if rate and rate[1] < rate[0] else bad).append((what, rate))
for f in r["flows"]:
    check((f["mean_rate_bps"] or 0) > 0 and not f.get("error"),
          "flow %s: %.2f Mbit/s from %s%s" % (f["name"], (f["mean_rate_bps"] or 0) / 1e6,
                                              f["rate_source"],
                                              " ERROR " + f["error"] if f.get("error") else ""))
link = next((l for l in r["links"] if l["id"] == "S>h3"), None)
check(link is not None and 0.8 <= (link["utilisation"] or 0) <= 1.05,
      "bottleneck S>h3 utilisation %s in [0.8, 1.05]" % (link or {}).get("utilisation"),
      rate=(1.0, (link or {}).get("utilisation") or 0) if link else None)
check(link is not None and link["bottleneck"], "S>h3 is flagged as a bottleneck")
check(r["fabric_drops"]["total"] == 0, "fabric drops %s == 0 (PAUSE on)"
      % json.dumps(r["fabric_drops"]))
j = r["fairness"]["jain"]
check(j is not None and 0 < j <= 1, "Jain's index %s in (0, 1]" % j)
g = r["groups"].get("incast", {})
check(g.get("jain") is not None and 0 < g["jain"] <= 1, "group incast Jain %s" % g.get("jain"))
check(r["flow_control"]["switch"]["pause_tx"] > 0,
      "PAUSE frames sent: %d" % r["flow_control"]["switch"]["pause_tx"])
c = r.get("cpu") or {}
check((c.get("lab_pct_one_core") or 0) > 0, "lab CPU %s%% of one core, machine %s%%"
      % (c.get("lab_pct_one_core"), c.get("machine_pct_one_core")))
s = r["ports"]["S:p3"]["saturation"]
print("    # S:p3 saturated %.2f s, achieved %s bit/s, held within 2%%: %s"
      % (s["saturated_s"], s["achieved_bps"], s["held"]))
fl = {f["name"]: f for f in r["flows"]}
# The two UDP flows share S>h3; how much the TCP flow back gets depends on
# whether its ACKs from h1 catch h1's paused uplink (a bistable head-of-line
# case: 4.7 to 89 Mbit/s of its 98M share over four runs), so that is
# reported, not judged, and the UDP split moves with it.
# The split is one check on the pair: a flow that comes up short leaves its
# share to the other, so one above 1.4 with the other below 0.6 is a single
# shortfall (judged against S's wait like any rate); above 1.4 with the other
# at 0.6 or more is a wrong split.
us = [fl[n] for n in ("u1", "u2")]
ratios = [f["rate_over_fair"] or 0 for f in us]
lo, hi = min(ratios), max(ratios)
held = all(f["fair_limit"] == "S>h3" for f in us)
check(held and 0.6 <= lo and hi <= 1.4,
      "UDP split, Mbit/s of a fair share: %s (held by %s), within 0.6..1.4" % (
          ", ".join("%s %.2f of %.2f" % (f["name"], (f["mean_rate_bps"] or 0) / 1e6,
                                                (f["fair_bps"] or 0) / 1e6) for f in us),
          "/".join(sorted({str(f["fair_limit"]) for f in us}))),
      rate=(0.6, lo) if held and lo < 0.6 else None)
b = fl["back"]
check(b["fair_bps"] and b["fair_bps"] > 80e6 and (b["mean_rate_bps"] or 0) > 0,
      "flow back: %.2f Mbit/s of a fair share of %.2f" % ((b["mean_rate_bps"] or 0) / 1e6,
                                                         (b["fair_bps"] or 0) / 1e6))
e = r["fair_share"]["efficiency"]
check(e is not None and 0.3 < e <= 1.05, "efficiency %s" % e)
p3 = r["ports"]["S:p3"]
check((p3["outq_mean_bytes"] or 0) > 0 and p3["outq_std_bytes"] is not None and
      p3["outq_mean_bytes"] <= p3["outq_p99_bytes"] <= p3["outq_max_bytes"],
      "S:p3 output queue mean %s, std %s, p99 %s, max %s bytes"
      % tuple(p3["outq_%s_bytes" % k] for k in ("mean", "std", "p99", "max")))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
odd = [(l["t"], p) for l in lines for p, v in l["ports"].items()
       if sum(v["outq_frames"]) != v["voq_frames"] or len(v["outq_bytes"]) != 8 or
       (v["voq_frames"] > 0) != (sum(v["outq_bytes"]) > 0)]
check(lines and not odd, "%d time-series lines of S: outq_frames add up to voq_frames, bytes "
      "with frames%s" % (len(lines), "; not at %s" % odd[:3] if odd else ""))
ph = r.get("phases", {})
check(list(ph) == ["start", "steady"], "phases %s" % list(ph))
for n, v in ph.items():
    g = v["groups"].get("incast", {})
    check(v["ports"].get("S:p3") is not None and any(l["id"] == "S>h3" for l in v["links"]) and
          g.get("sum_bps") and g.get("settled") is not None and 0 <= g["settle_s"] <= 2,
          "phase %s %s..%s: incast %.1f Mbit/s, Jain %s, settle_s %s (settled %s), "
          "efficiency %s" % (n, v["from_s"], v["to_s"], (g.get("sum_bps") or 0) / 1e6,
                             g.get("jain"), g.get("settle_s"), g.get("settled"),
                             v["efficiency"]))
c = r.get("cpu") or {}
w, wall = (c.get("daemons_run_delay_s") or {}).get("S"), c.get("wall_s")
print("    # waits for a CPU over the run (%s s): %s" % (wall, json.dumps(c.get("daemons_run_delay_s"))))
if bad or not short:
    sys.exit(1 if bad or short else 0)
# Short only: explained when S waited at least the shortfall's share of the run.
frac = w / wall if w is not None and wall else 0
if all(1 - got / exp <= frac for _, (exp, got) in short):
    open(sys.argv[3], "w").write("%s: short by %.1f%%, and S waited %.3f s of %.3f s (%.1f%%) "
                                 "for a CPU (the machine is busy)" % (
                                     "; ".join(x for x, _ in short),
                                     100 * max(1 - g / e for _, (e, g) in short), w, wall,
                                     100 * frac))
    sys.exit(3)
print("    # BAD the shortfall is more than S's wait for a CPU (%.1f%% of the run)" % (100 * frac))
sys.exit(1)
EOF
}

# Requests and datagrams are lost only where a daemon stood still (its
# host-edge queue overflows while it waits for a CPU): a run that lost some
# is tried once more, and lost again it is a SKIP when the fabric dropped
# nothing and a daemon wrote no time-series line for 100 ms or more
# (series_gaps), a FAIL otherwise. Every other check is judged as is.
t_delays() {
	[ -x "$L2CC_ROOT/build/bin/l2cc-flowgen" ] || skip "build/bin/l2cc-flowgen is missing (make)"
	unless_starved "lost while a daemon stood still" \
		"results.json delays are not sane (above)" delays_once
}

delays_once() {
	local rc out=$L2T_DIR/result-delays
	rm -rf "$out"
	cat >"$L2T_DIR/delays.yaml" <<EOF
name: delays
duration: 3
warmup: 1
flows:
  - {name: ipc, src: h1, dst: h2, rr: {rate: 200, req: 100, resp: 200}, prio: 3, group: lat}
  - {name: video, src: h2, dst: h1, onoff: {on: 1000, off: 0.001}, proto: udp, rate: 10M,
     prio: 5, group: lat}
  - {name: db, src: h3, dst: h1, window: 64K, prio: 2}
EOF
	measure_lock
	lab run "$L2T_DIR/delays.yaml" --lab "$L2T" --rundir "$RUNDIR" --out "$out" >"$L2T_DIR/run-delays.log" 2>&1
	rc=$?
	measure_unlock
	sed 's/^/    #   /' "$L2T_DIR/run-delays.log"
	[ "$rc" -eq 0 ] || fail "l2cc-lab run exited $rc: $(tail -1 "$L2T_DIR/run-delays.log")"
	"$PY" - "$out/results.json" "$out/run.json" "$L2T_DIR/starved" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
run = json.load(open(sys.argv[2]))
bad, lost = [], []
def check(ok, what, loss=False):
    """loss: a check that losses fail, which a stalled daemon explains."""
    print("    # %s %s" % ("ok " if ok else "BAD", what))
    if not ok:
        (lost if loss else bad).append(what)
fl = {f["name"]: f for f in r["flows"]}
ipc, video, db = fl["ipc"], fl["video"], fl["db"]
check(not ipc.get("error") and ipc["rr_count"] >= 0.6 * 200 * 3 and ipc["rr_lost"] == 0,
      "ipc: %s exchanges, %s lost" % (ipc.get("rr_count"), ipc.get("rr_lost")),
      loss=not ipc.get("error"))
check(0 < ipc["owd_mean_us"] < ipc["rr_mean_us"] and ipc["owd_count"] == 2 * ipc["rr_count"],
      "ipc: rtt mean %s us p99 %s, one-way mean %s us (req %s, resp %s), dev p99 %s"
      % (ipc["rr_mean_us"], ipc["rr_p99_us"], ipc["owd_mean_us"], ipc["owd_req_mean_us"],
         ipc["owd_resp_mean_us"], ipc["owd_dev_p99_us"]))
check(ipc["owd_req_mean_us"] + ipc["owd_resp_mean_us"] <= ipc["rr_mean_us"],
      "ipc: request + response delay <= round trip")
check(not video.get("error") and video["owd_count"] >= 0.9 * 10e6 / 8 * 3 / 1500
      and video["owd_lost"] == 0 and video["owd_dev_p99_us"] is not None,
      "video: %s datagrams timed, %s lost, owd mean %s us p99 %s, dev p99 %s max %s"
      % (video.get("owd_count"), video.get("owd_lost"), video.get("owd_mean_us"),
         video.get("owd_p99_us"), video.get("owd_dev_p99_us"), video.get("owd_dev_max_us")),
      loss=not video.get("error") and video["owd_dev_p99_us"] is not None)
check(0 < video["owd_mean_us"] <= video["owd_p99_us"] <= video["owd_max_us"],
      "video: mean <= p99 <= max")
g = r["groups"]["lat"]
check(g["owd_count"] == ipc["owd_count"] + video["owd_count"] and
      g["owd_p99_us"] == max(ipc["owd_p99_us"], video["owd_p99_us"]) and
      g["rr_count"] == ipc["rr_count"],
      "group lat: owd_count %s, owd_mean_us %s, owd_p99_us %s, rr_mean_us %s"
      % (g.get("owd_count"), g.get("owd_mean_us"), g.get("owd_p99_us"), g.get("rr_mean_us")))
cmd = run["flows"]["db"]["client_cmd"]
cmd = cmd[cmd.index("iperf3"):]
check(cmd[cmd.index("-w") + 1] == "65536" and cmd[cmd.index("-S") + 1] == "64"
      and (db["mean_rate_bps"] or 0) > 0 and not db.get("error"),
      "db: iperf3 -w %s -S %s, %.1f Mbit/s" % (cmd[cmd.index("-w") + 1],
                                               cmd[cmd.index("-S") + 1],
                                               (db["mean_rate_bps"] or 0) / 1e6))
for n in ("ipc", "video"):
    c = run["flows"][n]["client_cmd"]
    check(c[c.index("--tos") + 1] == {"ipc": "96", "video": "160"}[n], "%s: --tos %s"
          % (n, c[c.index("--tos") + 1]))
gaps = [g for g in r.get("series_gaps") or [] if g["gap_s"] >= 0.1]
if bad or not lost:
    sys.exit(1 if bad or lost else 0)
if r["fabric_drops"]["total"] == 0 and gaps:
    g = max(gaps, key=lambda g: g["gap_s"])
    open(sys.argv[3], "w").write("%s, with no fabric drop, while %s stood still %.3f s at t=%.2f s "
                                 "(the machine is busy)" % ("; ".join(lost), g["node"], g["gap_s"],
                                                            g["at_s"]))
    sys.exit(3)
print("    # BAD lost with %s fabric drops and no daemon standing still for 100 ms"
      % r["fabric_drops"]["total"])
sys.exit(1)
EOF
}

t_plot() {
	local out
	rm -f "$OUT/plots/queues.png"
	out=$(lab plot "$OUT" --results 2>&1) || fail "l2cc-lab plot: $out"
	[ -s "$OUT/plots/queues.png" ] || fail "plot did not redraw plots/queues.png"
	[ -s "$OUT/results.json" ] || fail "plot --results lost results.json"
}

t_down() {
	local left
	lab down "$L2T" --rundir "$RUNDIR" >/dev/null 2>&1 || fail "l2cc-lab down failed"
	left=$(ip netns list | awk '{print $1}' | grep "^$L2T-" | tr '\n' ' ')
	[ -z "$left" ] || fail "namespaces left after down: $left"
}

run_setup setup
run_test testbed_run_check t_check
run_test testbed_run t_run
run_test testbed_delays t_delays
run_test testbed_plot t_plot
run_test testbed_down t_down
tests_done
