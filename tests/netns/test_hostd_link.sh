#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# hostd's link events, both ports, mid-traffic:
#
#   h1 eth0 -veth- cc0 [hostd h1] up0 -veth- p1 \
#                                               switchd S
#   h2 eth0 -veth- cc0 [hostd h2] up0 -veth- p2 /
#
# h1 sends UDP to h2 at 50M. S's p1 goes down (`ip link set down` on the
# switch's side takes up0's carrier): h1's hostd must see its uplink down,
# drop what the host sends (counted, link_down) instead of queueing it, keep
# its frame accounting, and forward again when the link comes back (S's p2
# carries h1's traffic again). Then h2's eth0 goes down, which takes the
# carrier of h2's cc0: h2's hostd drops what the fabric sends for its host
# (link_down on its uplink) and delivers again once eth0 is back.
. "$(dirname "$0")/lib.sh"

setup() {
	mk_switch S
	for i in 1 2; do
		mk_host "h$i"
		link_hd_host S "p$i" "h$i" "$i"
	done
	# h1 keeps sending while h2 cannot answer ARP.
	ip -n "$(ns h1)" neigh replace 10.99.0.2 lladdr "$(host_mac h2)" dev eth0 nud permanent ||
		fail "static neighbour h2 on h1"
	start_switchd S "
[port p1]
ifname = $(ifn p1)
rate = 100M
flow_control = pause
[port p2]
ifname = $(ifn p2)
rate = 100M
flow_control = pause"
	for i in 1 2; do
		start_hostd "h$i" "link_rate = 100M"
	done
	hx h1 ping -c 3 -i 0.3 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2"
}

hd_link_is() { # HOST host|uplink up|down
	local s
	s=$(jget "$(ctl "$1" counters)" "d['$2']['link']") || return 1
	echo "$s"
	[ "$s" = "$3" ]
}

t_hostd_link() {
	local c1 a d b h2a h2b r_after m
	iperf_server h2 5201
	iperf_client_bg h1 2 5201 "$L2T_DIR/c1.json" -u -b 50M -l 1400 -t 8
	c1=$CLI_PID
	sleep 1.5
	a=$(ctl h1 counters) || fail "l2ccctl h1 counters"
	ip -n "$(ns S)" link set "$(ifn p1)" down || fail "S p1 down"
	wait_for -t 5 "h1's hostd to see its uplink down" hd_link_is h1 uplink down
	sleep 0.5
	d=$(ctl h1 counters) || fail "l2ccctl h1 counters"
	ctl h1 metrics >"$L2T_DIR/h1.prom" || fail "l2ccctl h1 metrics"
	ip -n "$(ns S)" link set "$(ifn p1)" up || fail "S p1 up"
	wait_for -t 5 "h1's hostd to see its uplink up" hd_link_is h1 uplink up
	sleep 0.3
	r_after=$(port_rate S p2 1) || fail "reading S's counters"
	h2a=$(ctl h2 counters) || fail "l2ccctl h2 counters"
	ip -n "$(ns h2)" link set eth0 down || fail "h2 eth0 down"
	wait_for -t 5 "h2's hostd to see its host port down" hd_link_is h2 host down
	sleep 0.5
	h2b=$(ctl h2 counters) || fail "l2ccctl h2 counters"
	ip -n "$(ns h2)" link set eth0 up || fail "h2 eth0 up"
	wait_for -t 5 "h2's hostd to see its host port up" hd_link_is h2 host up
	wait "$c1"
	wait_drained S
	b=$(ctl h1 counters) || fail "l2ccctl h1 counters"
	info "h1 uplink while down: $(jget "$d" '{k: d["uplink"][k] for k in ("link", "operstate", "link_down_events")}');" \
		"h1 host drop.link_down $(jget "$a" 'd["host"]["drop"]["link_down"]') -> $(jget "$d" 'd["host"]["drop"]["link_down"]')" \
		"-> $(jget "$b" 'd["host"]["drop"]["link_down"]'); S p2 egress after the uplink came back $(mbps "$r_after") Mbit/s"
	info "h2 uplink drop.link_down (for its host while eth0 was down): $(jget "$h2a" 'd["uplink"]["drop"]["link_down"]')" \
		"-> $(jget "$h2b" 'd["uplink"]["drop"]["link_down"]'); h2 host link_down_events $(jget "$h2b" 'd["host"]["link_down_events"]')"
	m=$(grep -E '^l2cc_hostd_port_up\{.*port="uplink"\}' "$L2T_DIR/h1.prom")
	assert_eq "${m##* }" 0 "l2cc_hostd_port_up of h1's uplink while down ($m)"
	if command -v promtool >/dev/null 2>&1; then
		promtool check metrics <"$L2T_DIR/h1.prom" >"$L2T_DIR/promtool.txt" 2>&1 ||
			fail "promtool check metrics on h1's metrics: $(head -5 "$L2T_DIR/promtool.txt")"
	fi
	grep -q "uplink up0: link down" "$L2T_DIR/h1.log" || fail "h1's hostd did not log its uplink going down"
	assert_ge "$(jget "$d" 'd["host"]["drop"]["link_down"] - '"$(jget "$a" 'd["host"]["drop"]["link_down"]')")" 100 \
		"h1 host drop.link_down in 0.5 s of the outage (50M offered: ~2000 frames)"
	assert_eq "$(jget "$b" 'd["uplink"]["link_down_events"]')" 1 "h1 uplink link_down_events"
	assert_eq "$(jget "$b" 'd["uplink"]["link_up_events"]')" 1 "h1 uplink link_up_events"
	assert_ge "$r_after" 10e6 "S p2 egress after h1's uplink came back (bit/s; 50M offered)"
	assert_ge "$(jget "$h2b" 'd["uplink"]["drop"]["link_down"] - '"$(jget "$h2a" 'd["uplink"]["drop"]["link_down"]')")" 100 \
		"h2 uplink drop.link_down while its host's eth0 was down"
	assert_eq "$(jget "$h2b" 'd["host"]["link_down_events"]')" 1 "h2 host link_down_events"
	for h in h1 h2; do
		assert_eq "$(jget "$(ctl "$h" status)" 'd["umem"]["consistent"]')" true "$h hostd umem.consistent"
	done
	assert_eq "$(jget "$(ctl S status)" 'd["umem"]["conserved"]')" true "S umem.conserved"
	assert_eq "$(jget "$(ctl S counters)" 'd["ports"]["p1"]["link_down_events"]')" 1 "S p1 link_down_events"
	# The host port is back: h1 -> h2 works again.
	hx h1 ping -c 3 -i 0.3 -W 2 10.99.0.2 >/dev/null || fail "ping h1 -> h2 after both outages"
}

run_setup setup
run_test hostd_link_down_up t_hostd_link
tests_done
