#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# What a port's NIC gives the daemons at start, on veth: xdp_mode = auto is
# native (and falls back to generic when native XDP is refused), zero_copy =
# auto is copy mode and says why (veth has no AF_XDP zero-copy:
# EOPNOTSUPP), zero_copy = on refuses to start naming the port, and the
# result is in the start log, `l2ccctl ports`/`status` and the metrics
# (promtool-clean). NIC pause: veth does not report it, which the daemons
# say and go on; the pause handling itself is a stated SKIP here.
. "$(dirname "$0")/lib.sh"

setup() {
	mk_switch s
	for i in 1 2; do
		mk_host "h$i"
		link_host s "p$i" "h$i" "$i"
	done
	mk_switch hs
	mk_host hh
	link_hd_host hs p9 hh 9
}

sw_conf() { # [SWITCH KEYS] [P1 KEYS]
	printf '%s\n' "$1" "[port p1]" "ifname = $(ifn p1)" "$2" "[port p2]" "ifname = $(ifn p2)"
}

ping_ok() { hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null; }

# zero_copy and xdp_mode defaults (native, auto): native XDP, copy mode, said once per port.
t_switch_default() {
	local out
	rm -f "$L2T_DIR/s.log"
	start_switchd s "$(sw_conf)"
	ping_ok || fail "no ping through switchd"
	for p in p1 p2; do
		grep -q "$p: native XDP, copy mode (zero-copy not supported by veth: EOPNOTSUPP" \
			"$L2T_DIR/s.log" || fail "no start line for $p: $(grep -E "^.*$p: " "$L2T_DIR/s.log" | head -2)"
		assert_eq "$(grep -c "$p: native XDP" "$L2T_DIR/s.log")" 1 "start lines for $p"
	done
	info "$(grep -m1 'p1: native XDP' "$L2T_DIR/s.log")"
	out=$(ctl s ports) || fail "l2ccctl ports"
	assert_eq "$(jget "$out" "d['ports'][0]['xdp_mode']")" native "p1 xdp_mode in l2ccctl ports"
	assert_eq "$(jget "$out" "d['ports'][0]['zero_copy']")" false "p1 zero_copy in l2ccctl ports"
	assert_eq "$(jget "$out" "d['ports'][0]['driver']")" veth "p1 driver in l2ccctl ports"
	jget "$out" "d['ports'][0]['zero_copy_reason']" | grep -q EOPNOTSUPP ||
		fail "no reason for copy mode in l2ccctl ports: $out"
	ctl s metrics >"$L2T_DIR/s.prom" || fail "l2ccctl metrics"
	grep -q '^l2cc_switch_port_info{switch="s",port="p1",ifname="[^"]*",driver="veth",xdp_mode="native",zero_copy="0",nic_pause="unknown",nic_pfc="0"} 1$' \
		"$L2T_DIR/s.prom" || fail "no port_info for p1: $(grep port_info "$L2T_DIR/s.prom")"
	if command -v promtool >/dev/null 2>&1; then
		out=$(promtool check metrics <"$L2T_DIR/s.prom" 2>&1) || fail "promtool: $out"
	else
		info "promtool not installed: metrics not linted"
	fi
	stop_switchd s TERM || fail "switchd did not stop"
}

# xdp_mode = auto: native on veth.
t_switch_xdp_auto() {
	local out
	rm -f "$L2T_DIR/s.log"
	start_switchd s "$(sw_conf "" "xdp_mode = auto")"
	ping_ok || fail "no ping through switchd"
	grep -q "p1: native XDP, copy mode" "$L2T_DIR/s.log" ||
		fail "xdp_mode = auto did not give native XDP on veth: $(grep 'p1: ' "$L2T_DIR/s.log" | tail -2)"
	out=$(ctl s ports)
	assert_eq "$(jget "$out" "d['ports'][0]['xdp_mode']")" native "p1 xdp_mode (auto) in l2ccctl ports"
	stop_switchd s TERM || fail "switchd did not stop"
}

# xdp_mode = auto on a veth whose peer's MTU is above what native XDP takes
# on veth (a page less headroom and skb_shared_info, "Peer MTU is too large
# to set XDP"): native is refused, generic is used, and said.
t_switch_xdp_auto_fallback() {
	local out hns
	hns=$(ns h1)
	rm -f "$L2T_DIR/s.log"
	ip -n "$hns" link set eth0 mtu 4000 || skip "cannot raise h1's MTU to 4000"
	start_switchd s "$(sw_conf "" "xdp_mode = auto
mtu = 1500")"
	ip -n "$hns" link set eth0 mtu 1500 || fail "cannot set h1's MTU back to 1500"
	if grep -q "p1: native XDP" "$L2T_DIR/s.log"; then
		stop_switchd s TERM
		skip "this kernel's veth takes native XDP under a 4000-byte peer MTU: no fallback to test"
	fi
	grep -q "p1: generic (skb) XDP (native refused: ERANGE), copy mode (zero-copy not supported by veth: EOPNOTSUPP" "$L2T_DIR/s.log" ||
		fail "no generic fallback logged: $(grep 'p1: ' "$L2T_DIR/s.log" | tail -2)"
	info "$(grep -m1 'p1: generic' "$L2T_DIR/s.log")"
	grep -q "p2: native XDP, copy mode" "$L2T_DIR/s.log" ||
		fail "p2 is not native beside p1: $(grep 'p2: ' "$L2T_DIR/s.log" | tail -1)"
	out=$(ctl s ports)
	assert_eq "$(jget "$out" "d['ports'][0]['xdp_mode']")" skb "p1 xdp_mode after the fallback"
	jget "$out" "d['ports'][0]['xdp_native_error']" | grep -q '^E' || fail "no native error in l2ccctl ports: $out"
	ping_ok || fail "no ping through switchd with p1 in generic mode"
	stop_switchd s TERM || fail "switchd did not stop"
}

# zero_copy = on: veth cannot, the start fails naming the port, nothing left attached.
t_switch_zc_on() {
	local conf out rc
	conf=$(write_config s "$(sw_conf "zero_copy = on")")
	out=$(timeout 10 ip netns exec "$(ns s)" "$SWITCHD" -c "$conf" 2>&1)
	rc=$?
	info "zero_copy = on: exit $rc: $(tr '\n' ' ' <<<"$out")"
	[ "$rc" -ne 124 ] || fail "switchd did not exit (killed after 10 s)"
	[ "$rc" -ne 0 ] || fail "switchd exited 0 with zero_copy = on on veth"
	grep -q "p1: zero_copy = on, but $(ifn p1) (driver veth) cannot bind an AF_XDP socket in zero-copy mode: EOPNOTSUPP" <<<"$out" ||
		fail "the error does not name p1, veth and EOPNOTSUPP: $out"
	ip -n "$(ns s)" -d link show dev "$(ifn p1)" | grep -q "prog/xdp" && fail "a program is left on p1"
	[ -e "$L2T_DIR/s.sock" ] && fail "a control socket was left"
	return 0
}

# zero_copy = off: copy, and the reason says so.
t_switch_zc_off() {
	rm -f "$L2T_DIR/s.log"
	start_switchd s "$(sw_conf "zero_copy = off")"
	grep -q "p1: native XDP, copy mode (zero_copy = off" "$L2T_DIR/s.log" ||
		fail "no copy-mode line for zero_copy = off: $(tr '\n' ' ' <"$L2T_DIR/s.log")"
	stop_switchd s TERM || fail "switchd did not stop"
}

# Pause: veth answers ETHTOOL_GPAUSEPARAM with EOPNOTSUPP; switchd says so and runs.
t_switch_pause_veth() {
	rm -f "$L2T_DIR/s.log"
	start_switchd s "$(sw_conf "" "nic_pause = off")"
	grep -q "p1: pause: not reported by the driver ($(ifn p1): EOPNOTSUPP)" "$L2T_DIR/s.log" ||
		fail "no 'pause: not reported' line: $(tr '\n' ' ' <"$L2T_DIR/s.log")"
	ping_ok || fail "no ping through switchd"
	stop_switchd s TERM || fail "switchd did not stop"
	ls "$L2T_DIR/run" | grep -q '^pause-' && fail "a pause file was saved for a NIC that has none"
	skip "veth cannot report NIC pause: detection, nic_pause = off and its restore need a NIC (the decision is unit-tested)"
}

# hostd: the same keys, both ports in one mode.
t_hostd() {
	local conf out rc
	conf=$(write_config hh "host_port = cc0
uplink = up0
zero_copy = on" hostd)
	out=$(timeout 10 ip netns exec "$(ns hh)" "$HOSTD" -c "$conf" 2>&1)
	rc=$?
	info "hostd zero_copy = on: exit $rc: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
	[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "hostd did not refuse zero_copy = on on veth (exit $rc)"
	grep -q "host_port: zero_copy = on, but cc0 (driver veth) cannot" <<<"$out" ||
		fail "the error does not name host_port/cc0: $out"
	start_hostd hh "xdp_mode = auto"
	for p in host_port uplink; do
		grep -q "$p: native XDP, copy mode (zero-copy not supported by veth: EOPNOTSUPP" \
			"$L2T_DIR/hh.log" || fail "no start line for $p: $(grep "$p" "$L2T_DIR/hh.log" | head -2)"
		grep -q "$p: pause: not reported by the driver" "$L2T_DIR/hh.log" ||
			fail "no pause line for $p"
	done
	out=$(ctl hh status) || fail "l2ccctl status"
	assert_eq "$(jget "$out" "d['ports']['uplink']['xdp_mode']")" native "uplink xdp_mode"
	assert_eq "$(jget "$out" "d['ports']['uplink']['zero_copy']")" false "uplink zero_copy"
	ctl hh metrics >"$L2T_DIR/hh.prom" || fail "l2ccctl metrics"
	grep -q '^l2cc_hostd_port_info{hostd="hh",port="uplink",ifname="up0",driver="veth",xdp_mode="native",zero_copy="0",nic_pause="unknown",nic_pfc="0"} 1$' \
		"$L2T_DIR/hh.prom" || fail "no port_info for the uplink: $(grep port_info "$L2T_DIR/hh.prom")"
	if command -v promtool >/dev/null 2>&1; then
		out=$(promtool check metrics <"$L2T_DIR/hh.prom" 2>&1) || fail "promtool: $out"
	fi
	stop_switchd hh TERM || fail "hostd did not stop"
}

run_setup setup
run_test nic_switch_default t_switch_default
run_test nic_switch_xdp_auto t_switch_xdp_auto
run_test nic_switch_xdp_auto_fallback t_switch_xdp_auto_fallback
run_test nic_switch_zc_on t_switch_zc_on
run_test nic_switch_zc_off t_switch_zc_off
run_test nic_switch_pause_veth t_switch_pause_veth
run_test nic_hostd t_hostd
tests_done
