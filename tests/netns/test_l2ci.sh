#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# L2CI and Path Rate Control on a line of three switches (docs/l2ci.md; the
# spec's checks 1 and 2): every switch marking = l2ci, every host law = prc.
#
#   h1 [hostd] -- p1 [S1] s12 -- s21 [S2] s23 -- s32 [S3] p2 -- [hostd] h2
#        100M          100M            100M            10M
#
#  - discover: h1's path to h2 reports 3 hops and 10M (S3's egress toward
#    h2), becomes active at 10M, with an RTT; h2 echoed it;
#  - levels pinned at 10/70/30 % on the path's forward egresses (S1 s12,
#    S2 s23, S3 p2) reach h1 as 70 % set at the second switch; unpinned,
#    the feedback carries the real (near-empty) levels again;
#  - h1's link runs through a tap: tshark with our Lua dissector decodes
#    DISCOVER, DISCOVER_ECHO and FEEDBACK there, at priority 7;
#  - both daemons' metrics, with the scheme's families (and the emulation's
#    wire/pace time lost, the build's version), pass promtool.
. "$(dirname "$0")/lib.sh"

setup() {
	command -v tshark >/dev/null 2>&1 || skip "tshark not installed"
	command -v tcpdump >/dev/null 2>&1 || skip "tcpdump not installed"
	mk_switch S1
	mk_switch S2
	mk_switch S3
	mk_switch T
	mk_host h1
	mk_host h2
	link_hd_host S1 p1 h1 1
	link_hd_host S3 p2 h2 2
	link_switches S1 s12 S2 s21
	link_switches S2 s23 S3 s32
	tap_link S1 p1 h1
}

sw_conf() { # PORT:RATE...
	local p label rate
	echo "marking = l2ci"
	for p in "$@"; do
		IFS=: read -r label rate <<<"$p"
		printf '[port %s]\nifname = %s\nrate = %s\nbuffer = 128K\n' "$label" "$(ifn "$label")" "$rate"
	done
}

t_discover() {
	local st hops bps rtt pc=$L2T_DIR/l2ci.pcap lines
	start_switchd S1 "$(sw_conf p1:100M s12:100M)"
	start_switchd S2 "$(sw_conf s21:100M s23:100M)"
	start_switchd S3 "$(sw_conf s32:100M p2:10M)"
	for h in h1 h2; do
		start_hostd "$h" "link_rate = 100M
granularity = dst
tag = yes
[law]
law = prc"
	done
	tap_capture "$pc"
	hx h1 ping -c 3 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
	wait_for "h1's path to h2 to be active" eval '[ "$(law_field h1 h2 state)" = active ]'
	hops=$(law_field h1 h2 hops)
	bps=$(law_field h1 h2 path_bps)
	rtt=$(law_field h1 h2 min_rtt_us)
	info "h1 -> h2: $hops hops, path $(mbps "$bps") Mbit/s, min RTT $rtt us," \
		"rate $(mbps "$(law_field h1 h2 rate_bps)") Mbit/s"
	assert_eq "$hops" 3 "hops on h1's path to h2"
	assert_eq "$bps" 10000000 "path speed of h1's path to h2"
	assert_eq "$(law_field h1 h2 rate_bps)" 10000000 "h1's rate toward h2 once discovered"
	assert_ge "$(calc "int($rtt)")" 1 "discover RTT (us)"
	# The way back has no slow link.
	assert_eq "$(law_field h2 h1 path_bps)" 100000000 "path speed of h2's path to h1"
	assert_ge "$(jget "$(ctl h2 counters)" 'd["echo_tx"]')" 1 "echoes h2 sent"
	assert_eq "$(jget "$(ctl h1 counters)" 'd["path_msg_unknown"]')" 0 "L2CI messages h1 could not place"
	# Feedback flows as the pings arrive; then stop the capture and decode.
	wait_for "h1 to hear feedback" eval '[ "$(law_field h1 h2 feedback)" -ge 1 ]'
	tap_stop_capture S1 S2 S3 h1 h2
	lines=$(tap_ts "$pc" 'l2cc.type >= 4 && l2cc.type <= 6' l2cc.type vlan.priority l2cc.l2ci.hops \
		l2cc.l2ci.path_bps l2cc.fb.hop)
	info "decoded L2CI frames on h1's link: $(echo "$lines" | grep -c .)"
	for t in 4 5 6; do
		assert_ge "$(echo "$lines" | awk -F'\t' -v t="$t" '$1 == t && $2 == 7' | grep -c .)" 1 \
			"L2CI type $t frames at priority 7 tshark decoded"
	done
	# DISCOVER from h1 leaves with 0 hops, its echo comes back with 3 and 10M,
	# FEEDBACK for h1's path arrives having passed the three switches.
	echo "$lines" | awk -F'\t' '$1 == 5 && $3 == 3 && $4 == 10000000 { ok = 1 } END { exit !ok }' ||
		fail "no echo with 3 hops and 10M on h1's link: $(echo "$lines" | head -5)"
	echo "$lines" | awk -F'\t' '$1 == 6 && $5 == 3 { ok = 1 } END { exit !ok }' ||
		fail "no feedback with hop 3 on h1's link: $(echo "$lines" | head -5)"
}

level_is() { # PCT AT
	local l a
	l=$(law_field h1 h2 level_pct) && a=$(law_field h1 h2 level_at) || return 1
	echo "h1 hears level $l % at switch $a"
	[ "$(calc "int(round($l))")" = "$1" ] && [ "$a" = "$2" ]
}

t_levels() {
	local j
	ctl S1 cp s12 level 10 >/dev/null || fail "l2ccctl S1 cp s12 level 10"
	ctl S2 cp s23 level 70 >/dev/null || fail "l2ccctl S2 cp s23 level 70"
	ctl S3 cp p2 level 30 >/dev/null || fail "l2ccctl S3 cp p2 level 30"
	hx h1 ping -c 30 -i 0.05 -W 2 10.99.0.2 >/dev/null &
	bg_record $!
	wait_for "h1 to hear 70 % from switch 2" level_is 70 2
	j=$(ctl S2 counters) || fail "counters"
	assert_ge "$(jget "$j" "d['ports']['s23']['l2ci_feedback_set']")" 1 "feedbacks S2's s23 set"
	# A level over 100 % passes intact.
	ctl S1 cp s12 level 250 >/dev/null || fail "l2ccctl S1 cp s12 level 250"
	wait_for "h1 to hear 250 % from switch 1" level_is 250 1
	ctl S1 cp s12 level off >/dev/null || fail "unpin S1 s12"
	ctl S2 cp s23 level off >/dev/null || fail "unpin S2 s23"
	ctl S3 cp p2 level off >/dev/null || fail "unpin S3 p2"
	wait_for "h1 to hear a near-empty path again" eval \
		'[ "$(calc "int(float(\"$(law_field h1 h2 level_pct)\") < 5)")" = 1 ]'
	wait
}

t_metrics() {
	local d out m v
	command -v promtool >/dev/null 2>&1 || skip "promtool not installed (Debian package prometheus)"
	for d in S2 h1; do
		ctl "$d" metrics >"$L2T_DIR/$d.prom" || fail "l2ccctl $d metrics"
		out=$(promtool check metrics <"$L2T_DIR/$d.prom" 2>&1) ||
			fail "promtool check metrics on $d's metrics: $out"
	done
	grep -q '^l2cc_switch_l2ci_feedback_total{switch="[^"]*",port="s23"} [1-9]' "$L2T_DIR/S2.prom" ||
		fail "S2's metrics have no feedback at s23: $(grep l2ci_feedback_total "$L2T_DIR/S2.prom" | head -3)"
	for m in l2cc_hostd_prc_level_ratio l2cc_hostd_prc_hops l2cc_hostd_feedback_rx_total \
		l2cc_hostd_wire_lost_seconds_total l2cc_hostd_wire_late_events_total \
		l2cc_hostd_wire_lost_max_seconds l2cc_hostd_pace_lost_seconds_total l2cc_build_info; do
		grep -q "^# TYPE $m " "$L2T_DIR/h1.prom" || fail "hostd's metrics have no $m"
	done
	for m in l2cc_switch_wire_lost_seconds_total l2cc_switch_wire_late_events_total \
		l2cc_switch_wire_lost_max_seconds l2cc_build_info; do
		grep -q "^# TYPE $m " "$L2T_DIR/S2.prom" || fail "switchd's metrics have no $m"
	done
	# Which build, as --version says it.
	v=$("$SWITCHD" --version | sed 's/.* //')
	grep -qF "l2cc_build_info{version=\"$v\"} 1" "$L2T_DIR/S2.prom" ||
		fail "switchd's l2cc_build_info is not version $v: $(grep '^l2cc_build_info' "$L2T_DIR/S2.prom")"
}

run_setup setup
run_test l2ci_discover_line t_discover
run_test l2ci_levels_max_aggregated t_levels
run_test l2ci_metrics_promtool t_metrics
tests_done
