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
# The tap: frames that an AF_XDP socket sends or receives never pass the
# kernel's packet taps on that interface, so tcpdump on a daemon's port sees
# nothing. A plain bridge between switch and host, with no XDP on it, is a
# wire we can listen on (it forwards the unicast tag, CNP and ACK frames; the
# test runs without PAUSE, which no bridge forwards).
. "$(dirname "$0")/lib.sh"

LUA=$L2CC_ROOT/scripts/wireshark/l2cc.lua

setup() {
	command -v tshark >/dev/null 2>&1 || skip "tshark not installed"
	command -v tcpdump >/dev/null 2>&1 || skip "tcpdump not installed"
	mk_switch S
	mk_host h1
	mk_host h2
	mk_switch T
	link_hd_host S p1 h1 1
	link_hd_host S p2 h2 2
	# Re-plumb h2's uplink through the tap: S:p2 - T:ta | br0 | T:tb - h2:up0.
	ip -n "$(ns S)" link del "$(ifn p2)" || fail "unlink p2"
	ip link add "$(ifn p2)" netns "$(ns S)" type veth peer name ta netns "$(ns T)" || fail "veth p2 - ta"
	ip link add up0 netns "$(ns h2)" type veth peer name tb netns "$(ns T)" || fail "veth up0 - tb"
	ip -n "$(ns T)" link add br0 type bridge || fail "bridge"
	for i in ta tb; do
		ip -n "$(ns T)" link set "$i" master br0 || fail "$i in br0"
		ip -n "$(ns T)" link set "$i" up || fail "$i up"
	done
	ip -n "$(ns T)" link set br0 up || fail "br0 up"
	ip -n "$(ns S)" link set "$(ifn p2)" up || fail "p2 up"
	ip -n "$(ns h2)" link set up0 up || fail "up0 up"
	start_switchd S "
[port p1]
ifname = $(ifn p1)
rate = 100M
[port p2]
ifname = $(ifn p2)
rate = 100M"
}

# probe MARK: from S's p2 (as the kernel sends it, not through switchd) a
# frame to ta's own address with MARK in its payload and an EtherType
# (0x88B7) no test decodes: the capture on ta sees it arrive, the bridge keeps
# it (it is addressed to ta), and no daemon counts it.
probe() {
	hx S "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(bytes.fromhex(sys.argv[2].replace(":", "")) + bytes.fromhex("020000000001") + b"\x88\xb7" +
       sys.argv[3].encode().ljust(46, b"\0"))
' "$(ifn p2)" "$(ip -n "$(ns T)" -j link show ta | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')" "$1"
}

# probe_seen FILE MARK (for wait_for): send a probe, succeed once one is in
# the capture file.
probe_seen() {
	probe "$2" || return 1
	grep -qa "$2" "$1"
}

# capture FILE: tcpdump on the tap's port ta; its PID in CAP_PID. Returns
# once the capture has seen a probe: tcpdump writes the file header before
# its socket sees traffic. --immediate-mode: libpcap would otherwise hold
# packets up to a second in its ring, and the INT that ends the capture
# would lose them.
capture() {
	CAP_FILE=$1
	ip netns exec "$(ns T)" tcpdump -i ta --immediate-mode -U -w "$CAP_FILE" -s 256 >/dev/null 2>&1 &
	CAP_PID=$!
	bg_record "$CAP_PID"
	wait_for "tcpdump on ta to capture a probe frame" probe_seen "$CAP_FILE" l2t-probe-start
}

# stop_capture: once the frames the test waits for have passed (the
# daemons' queues drained and counters still), a last probe: when it is in
# the file, every frame before it is too. Then stop tcpdump.
stop_capture() {
	wait_drained S h1 h2
	wait_for "tcpdump on ta to capture the last probe frame" probe_seen "$CAP_FILE" l2t-probe-end
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
}

# ts FILE FILTER FIELDS...: tshark -T fields with the dissector.
ts() {
	local f=$1 filter=$2 args=()
	shift 2
	for e in "$@"; do args+=(-e "$e"); done
	env -u DISPLAY tshark -o gui.console_open:NEVER -X "lua_script:$LUA" -r "$f" \
		-Y "$filter" -T fields "${args[@]}" 2>/dev/null
}

t_cnp() {
	local pc=$L2T_DIR/cnp.pcap seqs n marked cnp
	start_hostd h1 "link_rate = 100M"
	start_hostd h2 "link_rate = 100M"
	hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
	capture "$pc"
	ctl S mark p2 3 >/dev/null || fail "mark"
	hx h1 ping -c 6 -i 0.1 -W 2 10.99.0.2 >/dev/null || fail "ping during capture"
	stop_capture
	# Data frames toward h2: tagged, consecutive sequence numbers, inner IPv4.
	seqs=$(ts "$pc" "l2cc_tag && icmp.type == 8" l2cc_tag.seq | tr '\n' ' ')
	n=$(echo "$seqs" | wc -w)
	[ "$n" -ge 6 ] || fail "expected >= 6 tagged echo requests, decoded $n: $seqs"
	"$PY" -c 'import sys; s = list(map(int, sys.argv[1].split())); sys.exit(0 if s == list(range(s[0], s[0] + len(s))) else 1)' "$seqs" ||
		fail "sequence numbers not consecutive: $seqs"
	info "tagged echo requests, seq: $seqs"
	# The three frames the switch marked carry FECN in the capture.
	marked=$(ts "$pc" "l2cc_tag.flags.fecn == 1" l2cc_tag.seq | wc -l)
	assert_eq "$marked" 3 "frames decoded with FECN set"
	# The CNPs from h2's hostd to h1 name h1's flow and the marked seqs
	# (captured on p2: they enter the switch there).
	cnp=$(ts "$pc" "l2cc.type == 2" l2cc.cnp.flow l2cc.cnp.seq l2cc.cnp.marked)
	[ "$(echo "$cnp" | grep -c .)" -eq 3 ] || fail "expected 3 CNPs, decoded: $cnp"
	flow=$(jget "$(ctl h1 flows)" '[f["id"] for f in d["flows"] if f["key"] == "'"$(host_mac h2)"'"][0]')
	echo "$cnp" | awk -v f="$flow" '$1 != f || $3 != 1 { exit 1 }' ||
		fail "CNPs must name flow $flow with marked 1: $cnp"
	fseqs=$(ts "$pc" "l2cc_tag.flags.fecn == 1" l2cc_tag.seq | tr '\n' ' ')
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
	capture "$pc"
	ctl S mark p2 1 >/dev/null || fail "mark"
	hx h1 ping -c 8 -i 0.1 -W 2 10.99.0.2 >/dev/null || fail "ping during capture"
	stop_capture
	acks=$(ts "$pc" "l2cc.type == 3" l2cc.ack.flow l2cc.ack.cum_seq l2cc.ack.frames l2cc.ack.flags.ece)
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
