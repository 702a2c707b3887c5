#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# switchd's marking policies on real traffic (Santos, Turner and
# Janakiraman 2003, §IV): h1 and h3 send UDP at 100M each into h2's 100M
# port, credit flow control and 4-frame input buffers, so the inputs from
# h1 and h3 fill. With `none` nothing is marked; with `naive` every full
# input buffer marks the frames in it (events at the inputs p1, p3); with
# `santos` the root output p2 copies its backlog (cnt1) into marks (events
# at p2). (h2's hostd answers every mark with a CNP, which fills p2's input
# buffer in turn: that buffer has full events too, and under santos the
# outputs p1, p3 toward the senders see a few.) Every mark must come back to the sender as a CNP from h2's hostd
# and be counted on h1's or h3's flow to h2. Then both daemons' Prometheus
# metrics pass `promtool check metrics`.
. "$(dirname "$0")/lib.sh"

setup() {
	mk_switch S
	for i in 1 2 3; do
		mk_host "h$i"
		link_hd_host S "p$i" "h$i" "$i"
	done
}

# port_field JSON PORT FIELD: "-" when the port has no such counter (a
# scheme's counters exist only under that scheme's marking).
port_field() {
	jget "$1" "d['ports']['$2'].get('$3', '-')"
}

t_policy() { # POLICY
	local pol=$1 i c mac2 cnp m p
	stop_switchd S 2>/dev/null
	for i in 1 2 3; do stop_switchd "h$i" 2>/dev/null; done
	start_switchd S "marking = $pol
[port p1]
ifname = $(ifn p1)
rate = 100M
buffer = 4frames
flow_control = credit
[port p2]
ifname = $(ifn p2)
rate = 100M
buffer = 4frames
flow_control = credit
[port p3]
ifname = $(ifn p3)
rate = 100M
buffer = 4frames
flow_control = credit"
	for i in 1 2 3; do start_hostd "h$i" "link_rate = 100M"; done
	for i in 1 3; do hx "h$i" ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h$i -> h2"; done
	iperf_server h2 5201
	iperf_server h2 5202
	measure_lock
	iperf_client_bg h1 2 5201 "$L2T_DIR/c1-$pol.json" -u -b 100M -l 1400 -t 2
	c=$CLI_PID
	iperf_client_bg h3 2 5202 "$L2T_DIR/c3-$pol.json" -u -b 100M -l 1400 -t 2
	wait "$c" "$CLI_PID"
	measure_unlock
	# The last marks' CNPs from h2 back to the senders included.
	wait_drained S h1 h2 h3
	j=$(ctl S counters) || fail "counters"
	mac2=$(host_mac h2)
	cnp=0
	for i in 1 3; do
		c=$(jget "$(ctl "h$i" flows)" "sum(f['cnp_in'] for f in d['flows'] if f['key'] == '$mac2')")
		m=$(jget "$(ctl "h$i" flows)" "sum(f['marks'] for f in d['flows'] if f['key'] == '$mac2')")
		cnp=$((cnp + m))
	done
	m=$(port_field "$j" p2 marked)
	info "$pol: marked on p2 $m; full events p1 $(port_field "$j" p1 buffer_full_events) p3 $(port_field "$j" p3 buffer_full_events);" \
		"mark events p1 $(port_field "$j" p1 mark_events) p2 $(port_field "$j" p2 mark_events) p3 $(port_field "$j" p3 mark_events);" \
		"revoked p2 $(port_field "$j" p2 mark_revoked); marks counted by h1+h3 $cnp; h2 cnp_tx $(jget "$(ctl h2 counters)" 'd["cnp_tx"]')"
	assert_ge "$(port_field "$j" p1 buffer_full_events)" 1 "p1 buffer_full_events"
	case $pol in
	none)
		assert_eq "$m" 0 "frames marked with marking = none"
		;;
	naive)
		assert_ge "$m" 1 "frames marked (naive)"
		assert_ge "$(port_field "$j" p1 mark_events)" 1 "naive mark events at input p1"
		assert_ge "$(port_field "$j" p1 mark_events)" "$(port_field "$j" p2 mark_events)" \
			"naive: events at the data inputs (p1) vs the CNPs' input (p2)"
		;;
	santos)
		assert_ge "$m" 1 "frames marked (santos)"
		assert_ge "$(port_field "$j" p2 mark_events)" 1 "santos mark events at the root output p2"
		assert_ge "$(port_field "$j" p2 mark_events)" "$((10 * $(port_field "$j" p1 mark_events)))" \
			"santos: events at the root output p2 vs at p1 (the CNPs' output)"
		;;
	esac
	# Every mark went back as a CNP and was counted on the sender's flow.
	assert_eq "$cnp" "$m" "marks counted by the senders' hostd (cnp_interval 0: one CNP per mark)"
	assert_eq "$(port_field "$j" p2 drops)" 0 "drops at S"
}

# Both daemons' metrics follow Prometheus' rules (promtool, from Debian's
# prometheus package): the daemons of the santos run are still up, so the
# scheme's own families are in switchd's output.
t_metrics() {
	local d out fams
	command -v promtool >/dev/null 2>&1 || skip "promtool not installed (Debian package prometheus)"
	[ -n "$(sw_pid S)" ] || fail "the santos run's switchd is not running"
	for d in S h1 h2; do
		ctl "$d" metrics >"$L2T_DIR/$d.prom" || fail "l2ccctl $d metrics"
		out=$(promtool check metrics <"$L2T_DIR/$d.prom" 2>&1) ||
			fail "promtool check metrics on $d's metrics: $out"
		fams=$(grep -c '^# TYPE' "$L2T_DIR/$d.prom")
		info "$d: $fams families, promtool: clean"
	done
	for m in l2cc_switch_santos_mark_events_total l2cc_switch_santos_cnt2_frames \
		l2cc_switch_paused_seconds_total l2cc_switch_outq_bytes l2cc_switch_buffer_frames; do
		grep -q "^# TYPE $m " "$L2T_DIR/S.prom" || fail "switchd's metrics have no $m"
	done
	for m in l2cc_hostd_paused_seconds_total l2cc_hostd_cnp_rx_total \
		l2cc_hostd_flow_rate_bytes_per_second; do
		grep -q "^# TYPE $m " "$L2T_DIR/h1.prom" || fail "hostd's metrics have no $m"
	done
	# A metric in nanoseconds would fail promtool; the ns stay in the JSON.
	grep -q '_ns_total' "$L2T_DIR/S.prom" "$L2T_DIR/h1.prom" && fail "a _ns metric is left"
	return 0
}

run_setup setup
for pol in none naive santos; do
	run_test "marking_$pol" t_policy "$pol"
done
run_test marking_metrics_promtool t_metrics
tests_done
