#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Multi-queue interfaces: a port serves every receive queue (an AF_XDP
# socket on each), or counts and reports what it leaves out (no_socket).
#
#   h1 eth0 =4q= p1 [switchd S] p2 =4q= eth0 h2
#   h3 eth0 =4q= cc0 [hostd h3] up0 =4q= eth0 h4
#
# Every veth has 4 RX and 4 TX queues at both ends. veth hands a frame to
# the peer's RX queue of the sender's TX queue, and the sending kernel picks
# that per flow (skb_tx_hash): UDP flows from 32 sockets land on several
# queues, as RSS spreads a NIC's. The XDP program's per-queue counters
# (`counters`: xdp.queues) show where they landed.
#
#  - mq_switch_all: with rx_queues = all (the default) every datagram of 32
#    flows h1 -> h2 crosses S; more than one of p1's queues received some,
#    and nothing met a queue without a socket (no_socket 0). The start-up
#    log says "4 rx queues, a socket on each"; frame conservation holds.
#  - mq_switch_queue0: with queue = 0 (the old one-socket port) the same
#    flows lose what RSS put on queues 1-3: no_socket counts it exactly
#    (sent - delivered), in `ports`, `counters`, the Prometheus metrics
#    (promtool clean) and the time series, and the log warns at start and
#    again once frames are lost.
#  - mq_hostd_all: hostd between h3 and h4 (tag = no: h4 is a plain host)
#    serves all queues of cc0 and up0; flows both ways spread over both
#    ports' queues and all arrive, no_socket 0 on both.
#  - mq_hostd_queue0: rx_queues = 1: both ports count no_socket, visible in
#    `counters` and the metrics, and the log warns.
. "$(dirname "$0")/lib.sh"

NQ=4
FLOWS=32
PER_FLOW=20

# mq_link NSA IFA NSB IFB: a veth with NQ queues each way at both ends.
mq_link() {
	ip link add "$2" netns "$(ns "$1")" numrxqueues $NQ numtxqueues $NQ type veth \
		peer name "$4" netns "$(ns "$3")" numrxqueues $NQ numtxqueues $NQ ||
		fail "multi-queue veth $1:$2 - $3:$4 (numrxqueues needs iproute2 and kernel support)"
	ip -n "$(ns "$1")" link set "$2" up || fail "$1 $2 up"
	ip -n "$(ns "$3")" link set "$4" up || fail "$3 $4 up"
}

mq_host_addr() { # HOST N
	ip -n "$(ns "$1")" addr add "10.99.0.$2/24" dev eth0 || fail "address on $1"
	hx "$1" ethtool -K eth0 tx off >/dev/null || fail "ethtool tx off on $1"
}

setup() {
	mk_switch S
	for h in h1 h2 h3 h4; do mk_host "$h"; done
	mq_link S "$(ifn p1)" h1 eth0
	mq_link S "$(ifn p2)" h2 eth0
	mq_host_addr h1 1
	mq_host_addr h2 2
	mq_link h3 eth0 h3 cc0
	mq_link h3 up0 h4 eth0
	# Room for nothing: hostd with tag = no forwards frames unchanged.
	mq_host_addr h3 3
	mq_host_addr h4 4
	local n
	n=$(hx h1 ls /sys/class/net/eth0/queues | grep -c '^rx-')
	[ "$n" -eq $NQ ] || skip "veth has $n rx queues, not $NQ: numrxqueues not supported"
}

# send_flows HOST DST: FLOWS UDP sockets (one source port each) send
# PER_FLOW 200-byte datagrams each to DST's port 9 (discard: the receiver's
# kernel drops them after counting; its ICMP unreachables are rate-limited).
send_flows() {
	hx "$1" "$PY" -c '
import socket, sys, time
dst, flows, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(flows)]
for r in range(per):
    for i, s in enumerate(socks):
        s.sendto(b"x" * 200, (dst, 20000 + i))
    time.sleep(0.002)
' "$2" $FLOWS $PER_FLOW || fail "sending $FLOWS flows from $1 to $2"
}

# udp_in HOST: datagrams HOST's IP stack received (delivered or not to a socket).
udp_in() {
	hx "$1" "$PY" -c '
for line in open("/proc/net/snmp"):
    if line.startswith("Udp:"):
        f = line.split()
        if f[1].isdigit():
            h = names
            print(int(f[h.index("InDatagrams")]) + int(f[h.index("NoPorts")]) + int(f[h.index("InErrors")]))
        else:
            names = f
'
}

# xdpq DAEMON KEY: "rx/no_socket" per queue of the xdp object at KEY of
# `counters` (a python expression on d), e.g. 0:12/0 1:30/0 ...
xdpq() {
	local j
	j=$(ctl "$1" counters) || fail "l2ccctl counters on $1"
	jget "$j" "' '.join('%d:%d/%d' % (q['queue'], q['rx'], q['no_socket']) for q in ($2)['queues'])"
}

# busy_queues "0:12/0 1:30/0 ...": queues that received anything.
busy_queues() { tr ' ' '\n' <<<"$1" | awk -F'[:/]' '$2 > 0' | wc -l; }

warm_arp() { # HOST DST
	hx "$1" ping -c 2 -i 0.2 -W 2 "$2" >/dev/null || fail "ping $1 -> $2"
}

# static_neigh HOST_A N_A HOST_B N_B: permanent ARP entries both ways. With
# queues left out, ARP itself may hash to one of them, for ever (the flow
# hash of an ARP packet is fixed by its addresses).
static_neigh() {
	hx "$1" ip neigh replace "10.99.0.$4" lladdr "$(host_mac "$3")" dev eth0 nud permanent ||
		fail "neighbour entry on $1"
	hx "$3" ip neigh replace "10.99.0.$2" lladdr "$(host_mac "$1")" dev eth0 nud permanent ||
		fail "neighbour entry on $3"
}

# last_line LOG TEXT: the last line of LOG with TEXT, from the daemon's
# subsystem tag on.
last_line() { grep "$2" "$1" | tail -1 | sed 's/^[^]]*\] *//'; }

promtool_ok() { # FILE: promtool finds nothing wrong (when it is installed)
	command -v promtool >/dev/null 2>&1 || return 0
	promtool check metrics <"$1" >/dev/null 2>&1 ||
		fail "promtool on $1: $(promtool check metrics <"$1" 2>&1 | head -3)"
}

sw_conf() { # extra port keys
	printf '%s\n' "[port p1]" "ifname = $(ifn p1)" "$1" "[port p2]" "ifname = $(ifn p2)" "$1"
}

t_switch_all() {
	local j before after got nosock q busy
	start_switchd S "$(sw_conf "")"
	grep -q "port p1 ($(ifn p1)): $NQ rx queues, a socket on each" "$L2T_DIR/S.log" ||
		fail "no start-up line for p1's queues: $(grep -m2 'rx queue' "$L2T_DIR/S.log")"
	info "log: $(last_line "$L2T_DIR/S.log" "port p1 (")"
	warm_arp h1 10.99.0.2
	before=$(udp_in h2)
	send_flows h1 10.99.0.2
	wait_drained S
	after=$(udp_in h2)
	got=$((after - before))
	q=$(xdpq S "d['ports']['p1']['xdp']")
	busy=$(busy_queues "$q")
	j=$(ctl S ports) || fail "l2ccctl ports"
	nosock=$(jget "$j" "[p['no_socket'] for p in d['ports'] if p['name'] == 'p1'][0]")
	info "p1 per queue (queue:rx/no_socket): $q; $busy queues busy; no_socket $nosock"
	info "h2 received $got of $((FLOWS * PER_FLOW)) datagrams"
	assert_ge "$busy" 2 "p1's queues that received frames (the veth spreads flows)"
	assert_eq "$nosock" 0 "p1 no_socket with every queue served"
	assert_eq "$(jget "$j" "[p['rx_queues_served'] for p in d['ports'] if p['name'] == 'p1'][0]")" \
		"0-$((NQ - 1))" "p1 rx_queues_served"
	assert_eq "$got" $((FLOWS * PER_FLOW)) "datagrams h2 received"
	assert_eq "$(jget "$(ctl S status)" "d['umem']['conserved']")" true "UMEM frame conservation"
	stop_switchd S || fail "S did not stop"
}

t_switch_queue0() {
	local j before after got nosock q busy c m sent
	start_switchd S "$(sw_conf "queue = 0")"
	grep -q "port p1 ($(ifn p1)): $NQ rx queues, socket on queue 0 only: queues 1-$((NQ - 1)) drop (no_socket)" \
		"$L2T_DIR/S.log" || fail "no start-up warning for p1's queues: $(grep -m2 'rx queue' "$L2T_DIR/S.log")"
	info "log: $(last_line "$L2T_DIR/S.log" "port p1 (")"
	static_neigh h1 1 h2 2
	before=$(udp_in h2)
	send_flows h1 10.99.0.2
	wait_drained S
	after=$(udp_in h2)
	got=$((after - before))
	sent=$((FLOWS * PER_FLOW))
	q=$(xdpq S "d['ports']['p1']['xdp']")
	busy=$(busy_queues "$q")
	j=$(ctl S ports) || fail "l2ccctl ports"
	nosock=$(jget "$j" "[p['no_socket'] for p in d['ports'] if p['name'] == 'p1'][0]")
	c=$(jget "$(ctl S counters p1)" "d['ports']['p1']['no_socket']")
	info "p1 per queue (queue:rx/no_socket): $q; no_socket: ports $nosock, counters $c"
	info "h2 received $got of $sent datagrams"
	assert_ge "$busy" 2 "p1's queues that received frames"
	assert_ge "$nosock" 1 "p1 no_socket with queue = 0"
	assert_eq "$c" "$nosock" "no_socket in counters and ports"
	# What did not arrive met a queue without a socket (the pings' ARP may
	# have too: at most a few more).
	assert_ge "$nosock" $((sent - got)) "no_socket against the datagrams lost"
	assert_le "$nosock" $((sent - got + 8)) "no_socket against the datagrams lost"
	ctl S metrics >"$L2T_DIR/S.prom" || fail "l2ccctl metrics"
	m=$(grep "^l2cc_switch_rx_no_socket_frames_total{.*port=\"p1\"" "$L2T_DIR/S.prom" | awk '{print $2}')
	info "metrics: l2cc_switch_rx_no_socket_frames_total{port=p1} $m"
	assert_eq "$m" "$nosock" "the metric"
	promtool_ok "$L2T_DIR/S.prom"
	wait_for -t 5 "the time series to carry no_socket" \
		sh -c "tail -1 '$L2T_DIR/S.stats' | grep -q '\"no_socket\":$nosock'"
	wait_for -t 5 "the no_socket warning in the log" \
		grep -q "port p1 ($(ifn p1)): [0-9]* frames arrived on receive queues without a socket" "$L2T_DIR/S.log"
	info "log: $(last_line "$L2T_DIR/S.log" "port p1 ($(ifn p1)): [0-9]* frames arrived")"
	stop_switchd S || fail "S did not stop"
}

hd_run() { # RX_QUEUES-LINE -> starts hostd h3
	start_hostd h3 "tag = no
link_rate = 1G
$1"
}

t_hostd_all() {
	local qh qu bh bu j nh nu b3 b4 g3 g4
	hd_run ""
	for w in "host_port cc0" "uplink up0"; do
		grep -q "$w: $NQ rx queues, a socket on each" "$L2T_DIR/h3.log" ||
			fail "no start-up line for $w: $(grep 'rx queue' "$L2T_DIR/h3.log")"
	done
	warm_arp h3 10.99.0.4
	b4=$(udp_in h4)
	b3=$(udp_in h3)
	send_flows h3 10.99.0.4
	send_flows h4 10.99.0.3
	wait_drained h3
	g4=$(($(udp_in h4) - b4))
	g3=$(($(udp_in h3) - b3))
	qh=$(xdpq h3 "d['xdp_host']")
	qu=$(xdpq h3 "d['xdp_uplink']")
	bh=$(busy_queues "$qh")
	bu=$(busy_queues "$qu")
	j=$(ctl h3 counters) || fail "l2ccctl counters"
	nh=$(jget "$j" "d['host']['no_socket']")
	nu=$(jget "$j" "d['uplink']['no_socket']")
	info "cc0 per queue: $qh ($bh busy), no_socket $nh"
	info "up0 per queue: $qu ($bu busy), no_socket $nu"
	info "h4 received $g4, h3 received $g3 of $((FLOWS * PER_FLOW)) each"
	assert_ge "$bh" 2 "cc0's queues that received frames"
	assert_ge "$bu" 2 "up0's queues that received frames"
	assert_eq "$nh" 0 "host port no_socket"
	assert_eq "$nu" 0 "uplink no_socket"
	assert_eq "$g4" $((FLOWS * PER_FLOW)) "datagrams h4 received"
	assert_eq "$g3" $((FLOWS * PER_FLOW)) "datagrams h3 received"
	assert_eq "$(jget "$(ctl h3 status)" "d['umem']['consistent']")" true "UMEM frame conservation"
	stop_switchd h3 || fail "hostd did not stop"
}

t_hostd_queue0() {
	local j nh nu m
	hd_run "rx_queues = 1"
	grep -q "uplink up0: $NQ rx queues, socket on queue 0 only: queues 1-$((NQ - 1)) drop (no_socket)" \
		"$L2T_DIR/h3.log" || fail "no start-up warning for up0: $(grep 'rx queue' "$L2T_DIR/h3.log")"
	static_neigh h3 3 h4 4
	send_flows h3 10.99.0.4
	send_flows h4 10.99.0.3
	wait_drained h3
	j=$(ctl h3 counters) || fail "l2ccctl counters"
	nh=$(jget "$j" "d['host']['no_socket']")
	nu=$(jget "$j" "d['uplink']['no_socket']")
	info "cc0: $(xdpq h3 "d['xdp_host']"), no_socket $nh; up0: $(xdpq h3 "d['xdp_uplink']"), no_socket $nu"
	assert_ge "$nh" 1 "host port no_socket with rx_queues = 1"
	assert_ge "$nu" 1 "uplink no_socket with rx_queues = 1"
	ctl h3 metrics >"$L2T_DIR/h3.prom" || fail "l2ccctl metrics"
	m=$(grep '^l2cc_hostd_rx_no_socket_frames_total{.*port="uplink"' "$L2T_DIR/h3.prom" | awk '{print $2}')
	info "metrics: l2cc_hostd_rx_no_socket_frames_total{port=uplink} $m"
	assert_ge "$m" "$nu" "the metric"
	promtool_ok "$L2T_DIR/h3.prom"
	wait_for -t 5 "the no_socket warning in the log" \
		grep -q "frames arrived on receive queues without a socket" "$L2T_DIR/h3.log"
	info "log: $(last_line "$L2T_DIR/h3.log" 'without a socket since')"
	stop_switchd h3 || fail "hostd did not stop"
}

run_setup setup
run_test mq_switch_all t_switch_all
run_test mq_switch_queue0 t_switch_queue0
run_test mq_hostd_all t_hostd_all
run_test mq_hostd_queue0 t_hostd_queue0
tests_done
