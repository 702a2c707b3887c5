#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Real frames, real decoder: capture what two hostd and a switchd put on the
# wire (tagged data frames with sequence numbers, a FECN mark set by the
# switch, the CNP the receiver answers with, and in reliable mode the ACKs)
# with tcpdump on the switch's ports, and check that tshark with our Lua
# dissector (scripts/wireshark/l2cc.lua) decodes each field as the daemons'
# counters say it must be. tests/wireshark/check_dissector.sh does the same
# for frames built byte by byte from the unit tests; this one closes the loop
# with the daemons.
#
#   h1 [hostd] -- p1 [switchd S] p2 -- tap T (Linux bridge) -- [hostd] h2
#
# The tap (tap_link in lib.sh): tcpdump cannot see an AF_XDP port's frames;
# a plain bridge between switch and host can (the test runs without PAUSE,
# which no bridge forwards).
. "$(dirname "$0")/lib.sh"

setup() {
	command -v tshark >/dev/null 2>&1 || skip "tshark not installed"
	command -v tcpdump >/dev/null 2>&1 || skip "tcpdump not installed"
	mk_switch S
	mk_host h1
	mk_host h2
	mk_switch T
	link_hd_host S p1 h1 1
	link_hd_host S p2 h2 2
	tap_link S p2 h2
	start_switchd S "
[port p1]
ifname = $(ifn p1)
rate = 100M
[port p2]
ifname = $(ifn p2)
rate = 100M"
}

t_cnp() {
	local pc=$L2T_DIR/cnp.pcap seqs n marked cnp
	start_hostd h1 "link_rate = 100M"
	start_hostd h2 "link_rate = 100M"
	hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
	tap_capture "$pc"
	ctl S mark p2 3 >/dev/null || fail "mark"
	hx h1 ping -c 6 -i 0.1 -W 2 10.99.0.2 >/dev/null || fail "ping during capture"
	tap_stop_capture S h1 h2
	# Data frames toward h2: tagged, consecutive sequence numbers, inner IPv4.
	seqs=$(tap_ts "$pc" "l2cc_tag && icmp.type == 8" l2cc_tag.seq | tr '\n' ' ')
	n=$(echo "$seqs" | wc -w)
	[ "$n" -ge 6 ] || fail "expected >= 6 tagged echo requests, decoded $n: $seqs"
	"$PY" -c 'import sys; s = list(map(int, sys.argv[1].split())); sys.exit(0 if s == list(range(s[0], s[0] + len(s))) else 1)' "$seqs" ||
		fail "sequence numbers not consecutive: $seqs"
	info "tagged echo requests, seq: $seqs"
	# The three frames the switch marked carry FECN in the capture.
	marked=$(tap_ts "$pc" "l2cc_tag.flags.fecn == 1" l2cc_tag.seq | wc -l)
	assert_eq "$marked" 3 "frames decoded with FECN set"
	# The CNPs from h2's hostd to h1 name h1's flow and the marked seqs
	# (captured on p2: they enter the switch there).
	cnp=$(tap_ts "$pc" "l2cc.type == 2" l2cc.cnp.flow l2cc.cnp.seq l2cc.cnp.marked)
	[ "$(echo "$cnp" | grep -c .)" -eq 3 ] || fail "expected 3 CNPs, decoded: $cnp"
	flow=$(jget "$(ctl h1 flows)" '[f["id"] for f in d["flows"] if f["key"] == "'"$(host_mac h2)"'"][0]')
	echo "$cnp" | awk -v f="$flow" '$1 != f || $3 != 1 { exit 1 }' ||
		fail "CNPs must name flow $flow with marked 1: $cnp"
	fseqs=$(tap_ts "$pc" "l2cc_tag.flags.fecn == 1" l2cc_tag.seq | tr '\n' ' ')
	cseqs=$(echo "$cnp" | awk '{print $2}' | tr '\n' ' ')
	assert_eq "$cseqs" "$fseqs" "CNP seqs vs marked seqs"
	info "CNPs: flow $flow, seqs $cseqs"
	stop_switchd h1
	stop_switchd h2
}

t_ack() {
	local pc=$L2T_DIR/ack.pcap acks frames
	stop_switchd h1
	stop_switchd h2
	start_hostd h1 "link_rate = 100M
mode = reliable
ack_every = 2"
	start_hostd h2 "link_rate = 100M
mode = reliable
ack_every = 2"
	hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
	tap_capture "$pc"
	ctl S mark p2 1 >/dev/null || fail "mark"
	hx h1 ping -c 8 -i 0.1 -W 2 10.99.0.2 >/dev/null || fail "ping during capture"
	tap_stop_capture S h1 h2
	acks=$(tap_ts "$pc" "l2cc.type == 3" l2cc.ack.flow l2cc.ack.cum_seq l2cc.ack.frames l2cc.ack.flags.ece)
	[ -n "$acks" ] || fail "no ACK decoded"
	info "ACKs (flow cum_seq frames ece): $(echo "$acks" | tr '\n' ';')"
	frames=$(echo "$acks" | awk '{s += $3} END {print s}')
	assert_ge "$frames" 8 "frames covered by the captured ACKs"
	echo "$acks" | grep -Eq '\s(1|True)$' || fail "no ACK decoded with ECE after a mark: $acks"
	stop_switchd h1
	stop_switchd h2
}

run_setup setup
run_test hostd_capture_tag_fecn_cnp t_cnp
run_test hostd_capture_ack t_ack
tests_done
