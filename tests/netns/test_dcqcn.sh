#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# RED and DCQCN on real traffic (docs/dcqcn.md). h1 and h3 send UDP at 100M
# each into h2's 100M port through S, PAUSE and 64K input buffers
# underneath, every host behind hostd:
#  - dcqcn: S's `red` marks (FECN) at the congested output p2 only; h2's
#    hostd sends at most one CNP per flow per the law's interval (the
#    paper's 50 us scaled to 100M: 20 ms); the senders' DCQCN rate falls
#    below the link rate while congested and climbs back to it after;
#  - drop: `action = drop` drops at p2, counted by RED and as the inputs'
#    congestion_point drops;
#  - ce: two TCP flows with ECN (net.ipv4.tcp_ecn = 1) and `action = ce`:
#    the CE marks RED sets reach h2's IP stack (IpExtInCEPkts) and the
#    senders' TCP hears them (TcpExtTCPDeliveredCE).
. "$(dirname "$0")/lib.sh"

setup() {
	mk_switch S
	for i in 1 2 3; do
		mk_host "h$i"
		link_hd_host S "p$i" "h$i" "$i"
	done
}

# switchd S with RED on every port; $1: extra [switch] keys.
start_red_switch() {
	local i ports=''
	for i in 1 2 3; do
		ports="$ports
[port p$i]
ifname = $(ifn "p$i")
rate = 100M
buffer = 64K
flow_control = pause"
	done
	start_switchd S "marking = red
$1
$ports"
}

restart_all() { # SWITCH_KEYS HOSTD_TEXT
	local i
	stop_switchd S 2>/dev/null
	for i in 1 2 3; do stop_switchd "h$i" 2>/dev/null; done
	start_red_switch "$1"
	for i in 1 2 3; do start_hostd "h$i" "link_rate = 100M
$2"; done
	for i in 1 3; do hx "h$i" ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h$i -> h2"; done
}

port_field() { # JSON PORT FIELD
	jget "$1" "d['ports']['$2']['$3']"
}

h1_released() {
	local s r
	s=$(law_field h1 h2 stage) && r=$(law_field h1 h2 rc_bps) || return 1
	echo "stage $s rc $r"
	[ "$s" = line_rate ] && [ "$r" -eq 100000000 ]
}

t_dcqcn() {
	local j m1 m2 m3 rc_low r i cnp marked per dur=3 maxcnp d out
	# Recovery at R_AI = 5M (not the paper's 100k at 100M) so the test
	# sees it within seconds.
	restart_all "kmin = 10K
kmax = 60K
pmax = 0.1" "[law]
law = dcqcn
rpg_ai_rate = 5M"
	iperf_server h2 5201
	iperf_server h2 5202
	measure_lock
	iperf_client_bg h1 2 5201 "$L2T_DIR/c1.json" -u -b 100M -l 1400 -t "$dur"
	c=$CLI_PID
	iperf_client_bg h3 2 5202 "$L2T_DIR/c3.json" -u -b 100M -l 1400 -t "$dur"
	# Rc saw-tooths between cuts and recovery steps: one instant can catch
	# it high. The lowest of ten readings over the congested second and
	# a half is what the cut must have taken below 80M.
	sleep 0.5
	rc_low=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		r=$(law_field h1 h2 rc_bps) || fail "h1's flow has no dcqcn state"
		if [ -z "$rc_low" ] || [ "$r" -lt "$rc_low" ]; then
			rc_low=$r
		fi
		sleep 0.15
	done
	wait "$c" "$CLI_PID"
	measure_unlock
	wait_drained S h1 h2 h3
	j=$(ctl S counters) || fail "counters"
	m1=$(port_field "$j" p1 red_marked)
	m2=$(port_field "$j" p2 red_marked)
	m3=$(port_field "$j" p3 red_marked)
	marked=$(port_field "$j" p2 marked)
	per=$(jget "$(ctl h2 peers)" "[p['cnp_out'] for p in d['peers']]")
	cnp=$(jget "$(ctl h2 counters)" 'd["cnp_tx"]')
	info "red_marked p1 $m1 p2 $m2 p3 $m3 (FECN set $marked); CNPs from h2 $cnp, per flow $per;" \
		"h1's lowest Rc over 0.5-2 s $(mbps "$rc_low") Mbit/s"
	assert_ge "$m2" 1 "frames RED chose at the congested output p2"
	assert_eq "$m2" "$marked" "RED's choices at p2 are the FECN marks set there"
	assert_eq "$((m1 + m3))" 0 "frames chosen at the uncongested outputs p1, p3"
	# 20 ms interval over a 3 s run (and the drain): at most 1 + 3.5 / 0.02.
	maxcnp=176
	for c in $(jget "$per" "' '.join(str(x) for x in d)"); do
		assert_le "$c" "$maxcnp" "CNPs to one flow over ${dur}s at one per 20 ms"
	done
	assert_ge "$cnp" 2 "CNPs sent by h2"
	assert_ge "$m2" "$((cnp + 1))" "marks coalesced into fewer CNPs"
	assert_le "$rc_low" 80000000 "h1's DCQCN rate while congested"
	wait_for -t 20 "h1's DCQCN rate back at the link rate" h1_released
	assert_eq "$(port_field "$j" p2 drops)" 0 "drops at S"
	# RED's per-priority counters and DCQCN's per-flow gauges follow
	# Prometheus' rules too.
	if command -v promtool >/dev/null 2>&1; then
		for d in S h1; do
			ctl "$d" metrics >"$L2T_DIR/$d.prom" || fail "l2ccctl $d metrics"
			out=$(promtool check metrics <"$L2T_DIR/$d.prom" 2>&1) ||
				fail "promtool check metrics on $d's metrics: $out"
		done
		grep -q '^l2cc_switch_red_marked_frames_total{switch="S",port="p2",prio="0"} [1-9]' \
			"$L2T_DIR/S.prom" || fail "no RED marks at p2, priority 0, in S's metrics"
		for m in current_rate_bytes_per_second target_rate_bytes_per_second alpha_ratio stage; do
			grep -q "^# TYPE l2cc_hostd_dcqcn_$m gauge" "$L2T_DIR/h1.prom" ||
				fail "h1's metrics have no l2cc_hostd_dcqcn_$m"
		done
	fi
}

t_drop() {
	local j d2 d1 d3
	restart_all "kmin = 5K
kmax = 30K
pmax = 0.2
action = drop" "[law]
law = static"
	iperf_server h2 5201
	iperf_server h2 5202
	measure_lock
	iperf_client_bg h1 2 5201 "$L2T_DIR/d1.json" -u -b 100M -l 1400 -t 2
	c=$CLI_PID
	iperf_client_bg h3 2 5202 "$L2T_DIR/d3.json" -u -b 100M -l 1400 -t 2
	wait "$c" "$CLI_PID"
	measure_unlock
	wait_drained S h1 h2 h3
	j=$(ctl S counters) || fail "counters"
	d2=$(port_field "$j" p2 red_dropped)
	d1=$(jget "$j" "d['ports']['p1']['drop']['congestion_point']")
	d3=$(jget "$j" "d['ports']['p3']['drop']['congestion_point']")
	info "red_dropped p2 $d2; congestion_point drops at the inputs p1 $d1 p3 $d3; FECN set $(port_field "$j" p2 marked)"
	assert_ge "$d2" 1 "frames RED dropped at p2"
	assert_eq "$((d1 + d3))" "$d2" "RED's drops counted at the inputs they came from"
	assert_eq "$(port_field "$j" p2 marked)" 0 "FECN marks with action = drop"
}

t_ce() {
	local j ce inc del
	for i in 1 2 3; do
		hx "h$i" sysctl -qw net.ipv4.tcp_ecn=1 >/dev/null || fail "tcp_ecn on h$i"
	done
	restart_all "kmin = 5K
kmax = 30K
pmax = 0.2
action = ce
not_ect = pass" "[law]
law = static"
	hx h2 nstat -n >/dev/null
	hx h1 nstat -n >/dev/null
	iperf_server h2 5201
	iperf_server h2 5202
	measure_lock
	iperf_client_bg h1 2 5201 "$L2T_DIR/e1.json" -t 3
	c=$CLI_PID
	iperf_client_bg h3 2 5202 "$L2T_DIR/e3.json" -t 3
	wait "$c" "$CLI_PID"
	measure_unlock
	wait_drained S h1 h2 h3
	j=$(ctl S counters) || fail "counters"
	ce=$(port_field "$j" p2 red_ce_set)
	inc=$(hx h2 nstat -az IpExtInCEPkts | awk '$1 == "IpExtInCEPkts" {print $2}')
	del=$(hx h1 nstat -az TcpExtTCPDeliveredCE | awk '$1 == "TcpExtTCPDeliveredCE" {print $2}')
	info "red_ce_set p2 $ce (not ECN-capable $(port_field "$j" p2 red_not_ect)); h2 IpExtInCEPkts $inc;" \
		"h1 TcpExtTCPDeliveredCE $del; h1 Mbit/s $(jget "$(cat "$L2T_DIR/e1.json")" "round(d['end']['sum_received']['bits_per_second'] / 1e6, 1)")"
	assert_ge "$ce" 1 "packets RED set CE in at p2"
	assert_ge "${inc:-0}" 1 "CE packets h2's IP stack received"
	assert_le "${inc:-0}" "$ce" "CE packets at h2 (all of them RED's)"
	assert_ge "${del:-0}" 1 "CE deliveries h1's TCP heard of (ECE)"
	assert_eq "$(port_field "$j" p2 marked)" 0 "FECN marks with action = ce"
}

run_setup setup
run_test dcqcn_marks_cnps_rate t_dcqcn
run_test red_drop_counted t_drop
run_test red_ce_seen_by_tcp t_ce
tests_done
