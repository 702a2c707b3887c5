#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# switchd's pure-XDP forwarding (forwarding = xdp, docs/xdp-forwarding.md):
# four hosts on one switch. h1, h2 and h4 have an XDP program on eth0 (so
# their veth takes XDP-redirected frames), h3 has none at first: the veth
# trap. ping and TCP work and are forwarded in XDP while switchd sees only
# the first frames; p3 refuses redirects (its frames go through switchd)
# until h3 gets an XDP program; a MAC moving ports and a link going down
# change where (and whether) XDP sends its frames; the metrics pass promtool.
. "$(dirname "$0")/lib.sh"

XDP_OBJ=$L2CC_ROOT/build/xdp_fwd.bpf.o

setup() {
	local i
	[ -f "$XDP_OBJ" ] || skip "$XDP_OBJ missing: run make"
	mk_star s 4
	# xdp_pass (bpf/xdp_fwd.bpf.c) on the hosts' side: a veth accepts
	# redirected frames only when its peer has an XDP program.
	for i in 1 2 4; do
		ip -n "$(ns "h$i")" link set dev eth0 xdp object "$XDP_OBJ" program xdp_pass ||
			skip "cannot attach xdp_pass to h$i's eth0 with ip(8)"
	done
	start_switchd s "forwarding = xdp
[port p1]
ifname = $(ifn p1)
[port p2]
ifname = $(ifn p2)
[port p3]
ifname = $(ifn p3)
[port p4]
ifname = $(ifn p4)"
}

port_field() { # PORT FIELD (of `l2ccctl ports`)
	jget "$(ctl s ports)" "[p['$2'] for p in d['ports'] if p['name'] == '$1'][0]"
}

counter() { # PORT FIELD
	jget "$(ctl s counters "$1")" "d['ports']['$1']['$2']"
}

link_is() { # PORT up|down
	local s
	s=$(port_field "$1" link) || return 1
	[ "$s" = "$2" ]
}

fwd_is() { # PORT VALUE (of `forwarding` in `l2ccctl ports`)
	[ "$(port_field "$1" forwarding)" = "$2" ]
}

t_ports() {
	local i
	for i in 1 2 4; do
		assert_eq "$(port_field "p$i" forwarding)" xdp "p$i forwarding at start"
	done
	# h3's eth0 has no XDP program: its veth would drop redirected frames.
	assert_eq "$(port_field p3 forwarding)" xdp-refused "p3 forwarding at start (no XDP program behind it)"
	grep -q "port p3.*peer has no XDP program" "$L2T_DIR/s.log" || fail "no warning about p3 in the log"
}

t_ping() {
	local out f0 f1 r0 r1
	# ARP and the first frames teach switchd both addresses.
	hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2 (first packets)"
	f0=$(counter p1 xdp_forwarded)
	r0=$(counter p1 rx_frames)
	out=$(hx h1 ping -c 10 -i 0.1 -W 2 10.99.0.2) || fail "ping h1 -> h2: $(tail -2 <<<"$out" | tr '\n' ' ')"
	grep -q ' 0% packet loss' <<<"$out" || fail "ping loss: $(grep 'packet loss' <<<"$out")"
	f1=$(counter p1 xdp_forwarded)
	r1=$(counter p1 rx_frames)
	info "ping h1 -> h2, 10 echo requests: p1 xdp_forwarded +$((f1 - f0)), switchd rx_frames on p1 +$((r1 - r0))" \
		"($(grep -o 'rtt.*' <<<"$out"))"
	assert_ge "$((f1 - f0))" 10 "echo requests forwarded in XDP"
	assert_le "$((r1 - r0))" 2 "frames of p1 that reached switchd during the pings"
}

t_tcp() {
	local f0 f1 r0 r1 e
	f0=$(counter p1 xdp_forwarded)
	r0=$(counter p1 rx_frames)
	tcp_bps h1 2 5201
	f1=$(counter p1 xdp_forwarded)
	r1=$(counter p1 rx_frames)
	info "iperf3 TCP h1 -> h2: $(mbps "$TCP_BPS") Mbit/s; p1 xdp_forwarded +$((f1 - f0)), switchd rx_frames on p1 +$((r1 - r0))"
	assert_ge "$TCP_BPS" 50e6 "TCP throughput (bit/s)"
	assert_ge "$((f1 - f0))" 1000 "frames of h1 forwarded in XDP during iperf3"
	# The control connection's first frames and ARP refreshes at most.
	assert_le "$((r1 - r0))" 20 "frames of p1 that reached switchd during iperf3"
	# h2 has an XDP program, so its veth takes redirected frames: the
	# trap would lose every one. A few may still find h2's ring (256
	# frames) full when its NAPI waits for a CPU on a busy machine -- TCP
	# resends those -- so the check is a share: at most 1% of what p1
	# forwarded (a quiet run loses none; a CI run under steal lost 1082
	# of about 750 000).
	e=$(counter p2 xdp_redirect_errors)
	info "redirect errors toward p2 (its ring full): $e of $((f1 - f0)) frames forwarded from p1"
	assert_le "$((e * 100))" "$((f1 - f0))" "redirect errors toward p2 x 100 (h2 has an XDP program; at most 1% of p1's forwarded frames)"
}

t_veth_trap() {
	local out j f0 f1
	# p3 refuses redirects: frames for h3 go through switchd, none lost.
	# (Counted by what reaches switchd: a neighbour probe between other
	# hosts may be forwarded in XDP meanwhile.)
	f0=$(counter p1 rx_frames)
	out=$(hx h1 ping -c 5 -i 0.1 -W 2 10.99.0.3) || fail "ping h1 -> h3 through switchd: $(tail -2 <<<"$out" | tr '\n' ' ')"
	grep -q ' 0% packet loss' <<<"$out" || fail "ping h1 -> h3 loss: $(grep 'packet loss' <<<"$out")"
	f1=$(counter p1 rx_frames)
	info "ping h1 -> h3 (no XDP behind p3): 5/5, switchd rx_frames on p1 +$((f1 - f0))"
	assert_ge "$((f1 - f0))" 5 "echo requests toward p3 that went through switchd"
	# With an XDP program on h3's eth0, p3 takes redirected frames.
	ip -n "$(ns h3)" link set dev eth0 xdp object "$XDP_OBJ" program xdp_pass ||
		fail "attach xdp_pass to h3's eth0"
	wait_for -t 5 "p3 to take XDP redirects" fwd_is p3 xdp
	f0=$(counter p1 xdp_forwarded)
	out=$(hx h1 ping -c 5 -i 0.1 -W 2 10.99.0.3) || fail "ping h1 -> h3 in XDP: $(tail -2 <<<"$out" | tr '\n' ' ')"
	grep -q ' 0% packet loss' <<<"$out" || fail "ping h1 -> h3 loss: $(grep 'packet loss' <<<"$out")"
	f1=$(counter p1 xdp_forwarded)
	info "h3 with xdp_pass: p3 forwarding $(port_field p3 forwarding), ping 5/5, p1 xdp_forwarded +$((f1 - f0))"
	assert_ge "$((f1 - f0))" 5 "echo requests forwarded in XDP toward p3"
	j=$(ctl s metrics) || fail "l2ccctl metrics"
	printf '%s\n' "$j" >"$L2T_DIR/s.prom"
	grep -Eq '^l2cc_switch_xdp_redirect_errors_total\{.*port="p3"\} 0' "$L2T_DIR/s.prom" ||
		fail "l2cc_switch_xdp_redirect_errors_total of p3: $(grep xdp_redirect "$L2T_DIR/s.prom")"
	grep -Eq '^l2cc_switch_xdp_forwarded_frames_total\{.*port="p1"\} [1-9]' "$L2T_DIR/s.prom" ||
		fail "l2cc_switch_xdp_forwarded_frames_total of p1: $(grep xdp_forwarded "$L2T_DIR/s.prom")"
	if command -v promtool >/dev/null 2>&1; then
		promtool check metrics <"$L2T_DIR/s.prom" >"$L2T_DIR/promtool.txt" 2>&1 ||
			fail "promtool check metrics: $(head -5 "$L2T_DIR/promtool.txt")"
	else
		info "promtool not installed: metrics not checked"
	fi
	grep -q '"xdp_forwarded"' "$L2T_DIR/s.stats" || fail "xdp_forwarded not in the time series"
}

# h2's address (MAC and IP) moves to h4: frames for it must follow.
t_mac_move() {
	local mac2 f0 f1 out port
	mac2=$(host_mac h2)
	ip -n "$(ns h2)" addr del 10.99.0.2/24 dev eth0 || fail "address off h2"
	ip -n "$(ns h4)" link set eth0 address "$mac2" || fail "h2's MAC on h4"
	ip -n "$(ns h4)" addr add 10.99.0.2/24 dev eth0 || fail "h2's address on h4"
	# h4 speaks first (so switchd sees the MAC on p4), then h1 talks to it.
	hx h4 ping -c 2 -i 0.2 -W 1 10.99.0.1 >/dev/null || fail "ping h4 (with h2's address) -> h1"
	port=$(jget "$(ctl s fdb)" "[e['port'] for e in d['entries'] if e['mac'] == '$mac2']")
	assert_eq "$port" '["p4"]' "fdb entry of $mac2 after the move"
	f0=$(counter p1 xdp_forwarded)
	out=$(hx h1 ping -c 10 -i 0.1 -W 2 10.99.0.2) || fail "ping h1 -> the moved address: $(tail -2 <<<"$out" | tr '\n' ' ')"
	grep -q ' 0% packet loss' <<<"$out" || fail "ping loss after the move: $(grep 'packet loss' <<<"$out")"
	f1=$(counter p1 xdp_forwarded)
	info "after $mac2 moved p2 -> p4: p4 mac_moves $(counter p4 mac_moves), ping h1 -> it 10/10, p1 xdp_forwarded +$((f1 - f0))"
	assert_ge "$((f1 - f0))" 10 "echo requests to the moved address forwarded in XDP (to p4)"
}

t_link_down() {
	local mac2 f0 f1 d0 d1 out
	mac2=$(host_mac h4)
	ip -n "$(ns h4)" link set eth0 down || fail "h4 eth0 down"
	wait_for -t 5 "switchd to see p4 down" link_is p4 down
	assert_eq "$(jget "$(ctl s fdb)" "[e['port'] for e in d['entries'] if e['mac'] == '$mac2']")" '[]' \
		"fdb entry of $mac2 with p4 down"
	f0=$(counter p1 xdp_forwarded)
	d0=$(counter p1 rx_frames)
	# h1 still has the neighbour entry: its frames must reach switchd
	# (which floods them, unknown) instead of a dead devmap slot.
	hx h1 ping -c 3 -i 0.2 -W 1 10.99.0.2 >/dev/null && fail "ping h1 -> h4 answered while h4 is down"
	f1=$(counter p1 xdp_forwarded)
	d1=$(counter p1 rx_frames)
	info "p4 down: p1 xdp_forwarded +$((f1 - f0)) (other hosts' neighbour probes), switchd rx_frames on p1 +$((d1 - d0)), p4 fdb_flushed $(counter p4 fdb_flushed)"
	assert_ge "$((d1 - d0))" 3 "echo requests for the down port's address that reached switchd (not redirected in XDP)"
	assert_eq "$(counter p4 xdp_redirect_errors)" 0 "redirect errors toward the down port"
	ip -n "$(ns h4)" link set eth0 up || fail "h4 eth0 up"
	wait_for -t 5 "switchd to see p4 up" link_is p4 up
	out=$(hx h1 ping -c 5 -i 0.2 -W 2 10.99.0.2) || fail "ping h1 -> h4 after its link came back: $(tail -2 <<<"$out" | tr '\n' ' ')"
	f0=$(counter p1 xdp_forwarded)
	hx h1 ping -c 5 -i 0.1 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h4 (second round)"
	f1=$(counter p1 xdp_forwarded)
	info "p4 up again: p1 xdp_forwarded +$((f1 - f0)) for 5 echo requests"
	assert_ge "$((f1 - f0))" 5 "echo requests forwarded in XDP after p4 came back"
}

t_umem() {
	local j
	j=$(ctl s status) || fail "l2ccctl status"
	assert_eq "$(jget "$j" 'd["umem"]["conserved"]')" true "umem conserved"
}

run_setup setup
run_test xdpfwd_ports t_ports
run_test xdpfwd_ping t_ping
run_test xdpfwd_tcp t_tcp
run_test xdpfwd_veth_trap t_veth_trap
run_test xdpfwd_mac_move t_mac_move
run_test xdpfwd_link_down t_link_down
run_test xdpfwd_umem_conserved t_umem
tests_done
