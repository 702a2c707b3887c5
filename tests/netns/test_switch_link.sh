#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# A port's link goes down mid-traffic and comes back (switchd's link events):
#
#   h1 --p1\                                   /-- p3 (100M) -- h3
#           A --up (1G) ====== down (1G)-- B
#   h2 --p2/                                   \-- p4 (100M) -- h4
#
# h1 -> h3 at 200M overloads B's p3: PAUSE on the A-B link holds A back, and
# B drops nothing (test_switch_lossless.sh's lab). h2 -> h4 at 10M goes
# beside it; h4's address is a static FDB entry on p4, so while p4 is down
# frames for h4 are dropped at B (link_down) instead of flooding to h3.
# Mid-run `ip link set eth0 down` on h4 takes the carrier of B's p4: B must
# see the link go down (ports, metrics), drop and count what was for h4, keep
# p3 at its rate, lose nothing on the A-B link, keep its frame accounting,
# and forward to h4 again once the link is back.
#
# The machine may be shared: rates are compared loosely (p3 during the
# outage against p3 before it), never to a tight bound.
. "$(dirname "$0")/lib.sh"

UDP_LEN=1400

setup() {
	mk_switch A
	mk_switch B
	for i in 1 2 3 4; do mk_host "h$i"; done
	link_host A p1 h1 1
	link_host A p2 h2 2
	link_host B p3 h3 3
	link_host B p4 h4 4
	link_switches A up B down
	# h2 keeps sending to h4 while h4 cannot answer ARP.
	ip -n "$(ns h2)" neigh replace 10.99.0.4 lladdr "$(host_mac h4)" dev eth0 nud permanent ||
		fail "static neighbour h4 on h2"
	start_switchd A "
[port p1]
ifname = $(ifn p1)
[port p2]
ifname = $(ifn p2)
[port up]
ifname = $(ifn up)
rate = 1G
role = switch
flow_control = pause"
	start_switchd B "
[port down]
ifname = $(ifn down)
rate = 1G
role = switch
flow_control = pause
[port p3]
ifname = $(ifn p3)
rate = 100M
[port p4]
ifname = $(ifn p4)
rate = 100M
[fdb $(host_mac h4)]
port = p4"
	for i in 3 4; do
		hx "h$((i - 2))" ping -c 1 -W 2 "10.99.0.$i" >/dev/null || fail "ping h$((i - 2)) -> h$i"
	done
}

# port_field SWITCH PORT KEY: a key of PORT in `l2ccctl ports`.
port_field() {
	jget "$(ctl "$1" ports)" "[p['$3'] for p in d['ports'] if p['name'] == '$2'][0]"
}

link_is() { # SWITCH PORT up|down
	local s
	s=$(port_field "$1" "$2" link) || return 1
	echo "$s"
	[ "$s" = "$3" ]
}

# B's drops by reason, all ports, but link_down: JSON.
other_drops() {
	jget "$1" '{n + "." + r: v for n, p in d["ports"].items() for r, v in p["drop"].items() if v and r != "link_down"}'
}

t_link_down_up() {
	local b0 b1 bd a1 r_before r_during r_after p4_after j prom m c1 c2
	b0=$(ctl B counters) || fail "l2ccctl B counters"
	iperf_server h3 5201
	iperf_server h4 5202
	measure_lock
	iperf_client_bg h1 3 5201 "$L2T_DIR/c1.json" -u -b 200M -l "$UDP_LEN" -t 9
	c1=$CLI_PID
	iperf_client_bg h2 4 5202 "$L2T_DIR/c2.json" -u -b 10M -l "$UDP_LEN" -t 9
	c2=$CLI_PID
	sleep 1.5
	r_before=$(port_rate B p3 1.5) || fail "reading B's counters"
	ip -n "$(ns h4)" link set eth0 down || fail "h4 eth0 down"
	wait_for -t 5 "B to see p4 down" link_is B p4 down
	sleep 0.2
	j=$(ctl B ports) || fail "l2ccctl B ports"
	info "B p4 while h4's eth0 is down: $(jget "$j" '[{k: p[k] for k in ("link", "operstate")} for p in d["ports"] if p["name"] == "p4"][0]')"
	prom=$(ctl B metrics) || fail "l2ccctl B metrics"
	printf '%s\n' "$prom" >"$L2T_DIR/B.prom"
	r_during=$(port_rate B p3 1.5) || fail "reading B's counters"
	bd=$(ctl B counters) || fail "l2ccctl B counters"
	ip -n "$(ns h4)" link set eth0 up || fail "h4 eth0 up"
	wait_for -t 5 "B to see p4 up" link_is B p4 up
	sleep 0.3
	r_after=$(port_rate B p3 1.5) || fail "reading B's counters"
	p4_after=$(port_rate B p4 1) || fail "reading B's counters"
	# (h2's iperf3 may report an error: its server could not answer
	# while h4 was down; the counters are what is judged.)
	wait "$c1" "$c2"
	measure_unlock
	wait_drained A B
	b1=$(ctl B counters) || fail "l2ccctl B counters"
	a1=$(ctl A counters) || fail "l2ccctl A counters"
	info "B p3 egress: $(mbps "$r_before") Mbit/s before, $(mbps "$r_during") with p4 down," \
		"$(mbps "$r_after") after; B p4 egress after: $(mbps "$p4_after") Mbit/s"
	info "B p4: link_down_events $(jget "$b1" 'd["ports"]["p4"]["link_down_events"]'), link_up_events" \
		"$(jget "$b1" 'd["ports"]["p4"]["link_up_events"]'), link_down_drops" \
		"$(jget "$b1" 'd["ports"]["p4"]["link_down_drops"]'); B drops link_down by input:" \
		"$(jget "$b1" '{n: p["drop"]["link_down"] for n, p in d["ports"].items() if p["drop"]["link_down"]}')"
	info "other B drops: $(other_drops "$b1"); A up drops $(jget "$a1" 'd["ports"]["up"]["drops"]'), A up paused" \
		"$(jget "$a1" '"%.1f ms" % (d["ports"]["up"]["paused_ns"] / 1e6)')"

	# The outage, as the operator sees it.
	m=$(grep -E '^l2cc_switch_port_up\{.*port="p4"\}' "$L2T_DIR/B.prom")
	assert_eq "${m##* }" 0 "l2cc_switch_port_up of p4 while down ($m)"
	if command -v promtool >/dev/null 2>&1; then
		promtool check metrics <"$L2T_DIR/B.prom" >"$L2T_DIR/promtool.txt" 2>&1 ||
			fail "promtool check metrics on B's metrics: $(head -5 "$L2T_DIR/promtool.txt")"
	fi
	grep -q "port p4 ($(ifn p4)): link down" "$L2T_DIR/B.log" || fail "B did not log p4's link going down"
	assert_eq "$(jget "$bd" 'd["ports"]["p4"]["link_up"]')" 0 "B p4 link_up while down"
	assert_eq "$(jget "$b1" 'd["ports"]["p4"]["link_up"]')" 1 "B p4 link_up after"
	assert_eq "$(jget "$b1" 'd["ports"]["p4"]["link_down_events"] - '"$(jget "$b0" 'd["ports"]["p4"]["link_down_events"]')")" 1 "B p4 link_down_events"
	assert_eq "$(jget "$b1" 'd["ports"]["p4"]["link_up_events"]')" 1 "B p4 link_up_events"
	# h4's frames during the outage: dropped and counted at B's input.
	assert_ge "$(jget "$b1" 'd["ports"]["down"]["drop"]["link_down"]')" 1 "B down drop.link_down (frames for h4 while p4 was down)"
	# Nothing else lost in the fabric: B drops nothing but what was for the
	# down port, A's uplink drops nothing (A's host ports may: hosts do
	# not honour PAUSE).
	assert_eq "$(other_drops "$b1")" "{}" "B drops other than link_down"
	assert_eq "$(jget "$a1" 'd["ports"]["up"]["drops"]')" 0 "A up drops"
	assert_eq "$(jget "$b1" 'sum(d["ports"]["down"]["xdp"][k] for k in ("rx_dropped", "rx_ring_full"))')" \
		"$(jget "$b0" 'sum(d["ports"]["down"]["xdp"][k] for k in ("rx_dropped", "rx_ring_full"))')" \
		"B down socket's kernel drops during the run"
	for s in A B; do
		assert_eq "$(jget "$(ctl "$s" status)" 'd["umem"]["conserved"]')" true "$s umem.conserved"
	done
	assert_ge "$(jget "$(ctl B status)" 'd["netlink"]["link_events"]')" 2 "B status netlink.link_events"
	# p3 kept its rate through the outage, and h4's traffic came back.
	assert_ge "$(calc "float('$r_during') / float('$r_before')")" 0.7 "B p3 rate with p4 down / before"
	assert_ge "$r_before" 20e6 "B p3 rate before the outage (bit/s)"
	assert_ge "$p4_after" 2e6 "B p4 egress after the link came back (bit/s; 10M offered)"
	assert_eq "$(port_field B p4 link)" up "B p4 link in l2ccctl ports"
}

run_setup setup
run_test switch_link_down_up t_link_down_up
tests_done
