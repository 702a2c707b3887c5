#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# 802.1Qau CNMs on real traffic (docs/bcn-qcn.md). h1 and h3 send UDP at
# 100M each into h2's 100M port through S (marking = qcn), every host behind
# hostd with law = qcn; h4 is a plain host on p4:
#  - S's congestion point at p2, the congested output, sends CNMs to exactly
#    the two senders (their hostds take them: cnm_rx), none elsewhere; the
#    senders' CR falls while congested and climbs back to the link rate;
#  - h3's link runs through a tap (a Linux bridge): tshark with our Lua
#    dissector decodes the CNMs there, naming h3's flow and p2's CP;
#  - a CNM sent by the plain host h4 is dropped at S as forged.
#
#   h1 [hostd] -- p1 [switchd S] p2 -- [hostd] h2
#                    p3 -- tap T (bridge) -- [hostd] h3
#                    p4 -- h4
. "$(dirname "$0")/lib.sh"

setup() {
	command -v tshark >/dev/null 2>&1 || skip "tshark not installed"
	command -v tcpdump >/dev/null 2>&1 || skip "tcpdump not installed"
	mk_switch S
	mk_switch T
	for i in 1 2 3; do
		mk_host "h$i"
		link_hd_host S "p$i" "h$i" "$i"
	done
	mk_host h4
	link_host S p4 h4 4
	# h3's uplink through a tap (lib.sh: no PAUSE there, a bridge does not
	# forward it; a deep buffer instead).
	tap_link S p3 h3
	start_switchd S "marking = qcn
[port p1]
ifname = $(ifn p1)
rate = 100M
buffer = 64K
flow_control = pause
[port p2]
ifname = $(ifn p2)
rate = 100M
buffer = 64K
flow_control = pause
[port p3]
ifname = $(ifn p3)
rate = 100M
buffer = 512K
[port p4]
ifname = $(ifn p4)
rate = 100M"
	# Recovery at T = 20 ms and R_AI = 5M (the MIB's scaled to 100M would
	# take minutes) so the test sees it within seconds.
	for i in 1 2 3; do
		start_hostd "h$i" "link_rate = 100M
[law]
law = qcn
rpg_time_reset = 20ms
rpg_ai_rate = 5M"
	done
	for i in 1 3; do hx "h$i" ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h$i -> h2"; done
}

released() { # HOST
	local s r
	s=$(law_field "$1" h2 stage) && r=$(law_field "$1" h2 cr_bps) || return 1
	echo "$1 stage $s cr $r"
	[ "$s" = line_rate ] && [ "$r" -eq 100000000 ]
}

port_field() { # JSON PORT FIELD
	jget "$1" "d['ports']['$2']['$3']"
}

t_qcn() {
	local pc=$L2T_DIR/cnm.pcap j c cr1 n1 n3 n2 cnm_p2 other flow3 lines p2idx dur=3
	tap_capture "$pc"
	iperf_server h2 5201
	iperf_server h2 5202
	measure_lock
	iperf_client_bg h1 2 5201 "$L2T_DIR/c1.json" -u -b 100M -l 1400 -t "$dur"
	c=$CLI_PID
	iperf_client_bg h3 2 5202 "$L2T_DIR/c3.json" -u -b 100M -l 1400 -t "$dur"
	sleep 1.5
	cr1=$(law_field h1 h2 cr_bps) || fail "h1's flow has no qcn state"
	wait "$c" "$CLI_PID"
	measure_unlock
	tap_stop_capture S h1 h2 h3
	j=$(ctl S counters) || fail "counters"
	cnm_p2=$(port_field "$j" p2 cnm)
	other=$(( $(port_field "$j" p1 cnm) + $(port_field "$j" p3 cnm) + $(port_field "$j" p4 cnm) ))
	n1=$(jget "$(ctl h1 counters)" 'd["cnm_rx"]')
	n2=$(jget "$(ctl h2 counters)" 'd["cnm_rx"]')
	n3=$(jget "$(ctl h3 counters)" 'd["cnm_rx"]')
	info "CNMs from p2's CP $cnm_p2 (samples $(port_field "$j" p2 samples), lost $(port_field "$j" p2 cnm_lost)," \
		"from other ports $other); taken by h1 $n1, h3 $n3, h2 $n2; h1's CR at 1.5 s $(mbps "$cr1") Mbit/s"
	assert_ge "$cnm_p2" 2 "CNMs sent by the congested output p2's CP"
	assert_eq "$other" 0 "CNMs from the uncongested outputs"
	assert_ge "$n1" 1 "CNMs h1's hostd took"
	assert_ge "$n3" 1 "CNMs h3's hostd took"
	assert_eq "$n2" 0 "CNMs to the receiver h2"
	assert_eq "$(jget "$(ctl h1 counters)" 'd["cnm_unknown"]')" 0 "CNMs h1 could not match to a flow"
	assert_le "$cr1" 80000000 "h1's QCN rate while congested"
	wait_for -t 30 "h1's QCN rate back at the link rate" released h1
	# The capture on h3's link: CNMs to h3 about its flow, from p2's CP
	# (CPID = p2's MAC, port index 1, priority 0), the sample's DA h2.
	flow3=$(jget "$(ctl h3 flows)" '[f["id"] for f in d["flows"] if f["key"] == "'"$(host_mac h2)"'"][0]')
	lines=$(tap_ts "$pc" cnm eth.dst cnm.flow cnm.cpid cnm.encap_da cnm.qntz_fb)
	info "decoded CNMs on h3's link: $(echo "$lines" | grep -c .), first: $(echo "$lines" | head -1)"
	assert_ge "$(echo "$lines" | grep -c .)" 1 "CNMs tshark decoded on h3's link"
	p2idx=$(ip -n "$(ns S)" -j link show "$(ifn p2)" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"].replace(":", "") + "0100")')
	echo "$lines" | awk -F'\t' -v d="$(host_mac h3)" -v f="$flow3" -v c="$p2idx" -v e="$(host_mac h2)" \
		'$1 != d || $2 != f || $3 != c || $4 != e || $5 < 1 || $5 > 63 { bad++ } END { exit bad > 0 }' ||
		fail "a decoded CNM is not to h3 ($(host_mac h3)) about flow $flow3 from CP $p2idx about a frame to h2: $(echo "$lines" | head -3)"
}

forged_above() { # N
	local n
	n=$(jget "$(ctl S counters)" "d['ports']['p4']['drop']['forged']") || return 1
	echo "forged drops at p4: $n"
	[ "$n" -gt "$1" ]
}

t_forged() {
	local before after
	before=$(jget "$(ctl S counters)" "d['ports']['p4']['drop']['forged']")
	hx h4 "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
cnm = bytes(2) + bytes(8) + (100).to_bytes(2, "big") * 2 + bytes(2) + bytes(6) + bytes(2)
s.send(bytes.fromhex(sys.argv[1].replace(":", "")) + bytes.fromhex(sys.argv[2].replace(":", "")) +
       b"\x22\xe7" + cnm.ljust(46, b"\0"))
' "$(host_mac h2)" "$(host_mac h4)" || fail "send a CNM from h4"
	wait_for "S to count h4's CNM as forged" forged_above "$before"
	after=$(jget "$(ctl S counters)" "d['ports']['p4']['drop']['forged']")
	info "forged drops at p4: $before -> $after"
	assert_eq "$(jget "$(ctl h2 counters)" 'd["cnm_rx"] + d["cnm_unknown"] + d["cnm_bad"]')" 0 \
		"CNMs that reached h2's hostd"
}

# The qcn run's daemons are still up: their metrics, with the scheme's
# per-priority families and the law's gauges, pass promtool.
t_metrics() {
	local d out
	command -v promtool >/dev/null 2>&1 || skip "promtool not installed (Debian package prometheus)"
	for d in S h1; do
		ctl "$d" metrics >"$L2T_DIR/$d.prom" || fail "l2ccctl $d metrics"
		out=$(promtool check metrics <"$L2T_DIR/$d.prom" 2>&1) ||
			fail "promtool check metrics on $d's metrics: $out"
		info "$d: $(grep -c '^# TYPE' "$L2T_DIR/$d.prom") families, promtool: clean"
	done
	grep -q '^l2cc_switch_qcn_cnm_total{switch="[^"]*",port="p2",prio="0"} [1-9]' "$L2T_DIR/S.prom" ||
		fail "switchd's metrics have no CNMs sent at p2, priority 0: $(grep qcn_cnm_total "$L2T_DIR/S.prom" | head -3)"
	for m in l2cc_switch_qcn_samples_total l2cc_switch_qcn_cnm_lost_total; do
		grep -q "^# TYPE $m counter" "$L2T_DIR/S.prom" || fail "switchd's metrics have no $m"
	done
	for m in l2cc_hostd_cnm_rx_total l2cc_hostd_qcn_current_rate_bytes_per_second; do
		grep -q "^# TYPE $m " "$L2T_DIR/h1.prom" || fail "hostd's metrics have no $m"
	done
}

run_setup setup
run_test qcn_cnms_to_senders t_qcn
run_test cnm_metrics_promtool t_metrics
run_test cnm_from_host_forged t_forged
tests_done
