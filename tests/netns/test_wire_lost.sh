#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Wire time lost: switchd counts, per output, the time its emulated wire had
# frames to send but switchd woke too late (beyond the burst) to send them
# (docs/switchd.md, Wire time lost). h1 -- s -- h2, both ports at 10M, h1
# sends UDP at 30M to h2 through p2, which stays backlogged.
#
#  - quiet: 3 s of that on a paced port: wire_lost_ns grows by at most 1%
#    of the run (the issue asks for zero; the figure is printed, and 1% keeps
#    a busy CI machine from making the check flaky); more is a SKIP when
#    switchd waited for a CPU at least that long (steal included).
#  - stall: switchd stopped (SIGSTOP) for 200 ms while p2 is backlogged:
#    wire_lost_ns grows by about 200 ms less the burst (2.4 ms at 10M),
#    asserted within 150..300 ms (above 300 ms a SKIP when switchd's wait
#    for a CPU covers the excess); the time series carries the counters.
. "$(dirname "$0")/lib.sh"

UDP_LEN=1400

setup() {
	mk_star s 2
	start_switchd s "
[port p1]
ifname = $(ifn p1)
rate = 10M
[port p2]
ifname = $(ifn p2)
rate = 10M"
	hx h1 ping -c 1 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
	hx h2 ping -c 1 -W 2 10.99.0.1 >/dev/null || fail "ping h2 -> h1"
}

# p2_ctr FIELD: the counter of s's port p2.
p2_ctr() {
	jget "$(ctl s counters p2)" "d['ports']['p2']['$1']"
}

# Greedy UDP h1 -> h2 (3x the link) for SECONDS in the background (CLI_PID).
udp_bg() { # port seconds
	iperf_server h2 "$1"
	iperf_client_bg h1 2 "$1" "$L2T_DIR/udp-$1.json" -u -b 30M -l "$UDP_LEN" -t "$2"
}

# Until p2 is backlogged: frames queued for it.
p2_backlogged() {
	local q
	q=$(p2_ctr voq_frames) || return 1
	echo "voq_frames $q"
	[ "$q" -gt 2 ]
}

t_quiet() {
	local l0 l1 e0 e1 t0 t1 lost win
	udp_bg 5301 5
	measure_lock
	wait_for "p2 to be backlogged" p2_backlogged
	sleep 0.5
	t0=$(date +%s%N)
	l0=$(p2_ctr wire_lost_ns) || fail "counters"
	e0=$(p2_ctr wire_late_events) || fail "counters"
	starve_begin "switchd=$(sw_pid s)"
	sleep 3
	l1=$(p2_ctr wire_lost_ns) || fail "counters"
	e1=$(p2_ctr wire_late_events) || fail "counters"
	t1=$(date +%s%N)
	starve_end
	assert_ge "$(p2_ctr voq_frames)" 1 "p2 still backlogged at the end of the window"
	wait "$CLI_PID"
	measure_unlock
	iperf_server_wait h2 5301
	lost=$((l1 - l0))
	win=$((t1 - t0))
	info "quiet paced port, 10M backlogged by 30M UDP: wire_lost_ns +$lost ns in $((win / 1000000)) ms" \
		"($((e1 - e0)) late events, largest ever $(p2_ctr wire_lost_max_ns) ns); $STARVE_TXT"
	# More than 1%, but no more than switchd waited for a CPU (steal
	# included): the machine was busy, not the pacer late (lib.sh's rule).
	if [ "$lost" -gt "$((win / 100))" ] && calc "$lost / 1e9 <= $STARVE_S" | grep -q True; then
		skip "wire time lost on a quiet backlogged port: $lost ns of $win, more than 1%," \
			"and switchd waited $STARVE_S s for a CPU, steal included ($STARVE_TXT)"
	fi
	assert_le "$lost" "$((win / 100))" "wire time lost on a quiet backlogged port (ns, at most 1% of the window)"
}

t_stall() {
	local l0 l1 e0 e1 stopped lost burst pid last
	burst=$(jget "$(ctl s ports)" '[p["burst_ns"] for p in d["ports"] if p["name"] == "p2"][0]') ||
		fail "ports"
	udp_bg 5302 4
	measure_lock
	wait_for "p2 to be backlogged" p2_backlogged
	sleep 0.5
	l0=$(p2_ctr wire_lost_ns) || fail "counters"
	e0=$(p2_ctr wire_late_events) || fail "counters"
	pid=$(sw_pid s)
	starve_begin "switchd=$pid"
	# Stopped and continued from one process: the stop lasts 200 ms, not
	# 200 ms plus two fork/execs; the time it really lasted is printed.
	stopped=$("$PY" -c '
import os, signal, sys, time
pid = int(sys.argv[1])
os.kill(pid, signal.SIGSTOP)
t = time.monotonic()
time.sleep(0.2)
os.kill(pid, signal.SIGCONT)
print(int((time.monotonic() - t) * 1e9))' "$pid") || { kill -CONT "$pid"; fail "SIGSTOP/SIGCONT switchd"; }
	sleep 0.5
	l1=$(p2_ctr wire_lost_ns) || fail "counters"
	e1=$(p2_ctr wire_late_events) || fail "counters"
	starve_end
	wait "$CLI_PID"
	measure_unlock
	iperf_server_wait h2 5302
	lost=$((l1 - l0))
	info "switchd stopped $((stopped / 1000)) us with p2 backlogged: wire_lost_ns +$lost ns" \
		"($((e1 - e0)) late events; stop - burst = $(((stopped - burst) / 1000)) us, burst $burst ns); $STARVE_TXT"
	assert_ge "$lost" 150000000 "wire time lost over a 200 ms stop (ns)"
	# Beyond 300 ms by no more than switchd waited for a CPU besides the
	# stop (steal included; a stopped process waits in no run queue): busy.
	if [ "$lost" -gt 300000000 ] && calc "($lost - $stopped) / 1e9 <= $STARVE_S" | grep -q True; then
		skip "wire time lost over a 200 ms stop: $lost ns, above 300 ms by less than" \
			"switchd waited for a CPU ($STARVE_S s, steal included; $STARVE_TXT)"
	fi
	assert_le "$lost" 300000000 "wire time lost over a 200 ms stop (ns)"
	assert_ge "$((e1 - e0))" 1 "late events over the stop"
	# The time series carries them per port (CTR_TS).
	wait_for "a time-series line with p2's wire_lost_ns at least $l1" \
		"$PY" -c '
import json, sys
last = json.loads(open(sys.argv[1]).read().splitlines()[-1])
p = last["ports"]["p2"]
print(p["wire_lost_ns"], p["wire_late_events"])
sys.exit(0 if p["wire_lost_ns"] >= int(sys.argv[2]) else 1)' "$L2T_DIR/s.stats" "$l1"
	last=$(tail -1 "$L2T_DIR/s.stats")
	assert_eq "$(jget "$last" "'wire_lost_max_ns' in d['ports']['p2']")" false \
		"wire_lost_max_ns in the time series (counters only)"
}

run_setup setup
run_test wire_lost_quiet t_quiet
run_test wire_lost_stall t_stall
tests_done
