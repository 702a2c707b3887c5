#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# switchd's lifecycle: clean SIGTERM exit (XDP detached, control socket
# removed), restart after SIGKILL, config errors with file:line, --check,
# SIGHUP reload of a port's rate (and -v still on after it, a change that
# needs a restart refused), refusal to replace a foreign XDP program.
. "$(dirname "$0")/lib.sh"

XDP_OBJ=$L2CC_ROOT/build/xdp_fwd.bpf.o

setup() {
	mk_switch s
	for i in 1 2; do
		mk_host "h$i"
		link_host s "p$i" "h$i" "$i"
	done
}

sw_conf() { # [p2 rate]
	printf '%s\n' "[port p1]" "ifname = $(ifn p1)" "[port p2]" "ifname = $(ifn p2)" "rate = ${1:-100M}"
}

xdp_on() { # NS IFNAME: print the attached XDP program (or mode flag), if any
	local out
	out=$(ip -n "$1" -d link show dev "$2")
	grep -oE 'prog/xdp id [0-9]+ name [^ ]+' <<<"$out" && return
	head -1 <<<"$out" | grep -oE ' xdp(generic|drv|offload)? ' | tr -d ' '
}

ping_ok() { hx h1 ping -c 2 -i 0.2 -W 2 10.99.0.2 >/dev/null; }

t_check_ok() {
	local conf out rc
	conf=$(write_config good "$(sw_conf)")
	out=$("$SWITCHD" --check -c "$conf" 2>&1)
	rc=$?
	info "switchd --check: exit $rc: $out"
	assert_eq "$rc" 0 "switchd --check exit status on a good config"
}

t_bad_config() {
	local conf=$L2T_DIR/bad.conf out rc
	# Line 5 carries the bad value.
	printf '%s\n' "[switch]" "name = bad" "ctl_socket = $L2T_DIR/bad.sock" "[port p1]" "rate = fast" \
		"ifname = $(ifn p1)" >"$conf"
	out=$(timeout 10 ip netns exec "$(ns s)" "$SWITCHD" -c "$conf" 2>&1)
	rc=$?
	info "bad config: exit $rc: $out"
	[ "$rc" -ne 0 ] || fail "switchd accepted 'rate = fast'"
	[ "$rc" -ne 124 ] || fail "switchd did not exit on a bad config (killed after 10 s)"
	grep -qF "$conf:5:" <<<"$out" || fail "message does not name $conf:5: ($out)"
	grep -qi "expected" <<<"$out" || fail "message does not say what was expected ($out)"
	grep -qi "rate" <<<"$out" || fail "message does not name the key ($out)"
	[ -e "$L2T_DIR/bad.sock" ] && fail "a control socket was created for a config that failed"
	return 0
}

t_sigterm() {
	local p xdp
	start_switchd s "$(sw_conf)"
	for p in p1 p2; do
		[ -n "$(xdp_on "$(ns s)" "$(ifn "$p")")" ] || fail "no XDP program on $p while switchd runs"
	done
	ping_ok || fail "ping h1 -> h2 through switchd"
	stop_switchd s TERM || fail "switchd did not exit within 5 s of SIGTERM"
	info "SIGTERM: exit status $SW_RC; log: $(tail -1 "$L2T_DIR/s.log")"
	assert_eq "$SW_RC" 0 "switchd exit status after SIGTERM"
	for p in p1 p2; do
		xdp=$(xdp_on "$(ns s)" "$(ifn "$p")")
		[ -z "$xdp" ] || fail "XDP program still attached to $p after SIGTERM: $xdp"
	done
	[ -e "$L2T_DIR/s.sock" ] && fail "control socket $L2T_DIR/s.sock still exists after SIGTERM"
	info "after SIGTERM: no XDP program on p1/p2, control socket removed"
}

# v6_off NAME PORT: net.ipv6.conf.IF.disable_ipv6 of that port, in switchd s's namespace
v6_off() { ip netns exec "$(ns s)" sysctl -n "net.ipv6.conf.$(ifn "$2").disable_ipv6"; }

t_sigkill_restart() {
	local xdp saved
	# IPv6 is on (0) on p1 before; switchd turns it off while it runs
	# and saves the 0 under runtime_dir, so that the start after a
	# SIGKILL does not take its predecessor's 1 for the original.
	# (lib.sh makes namespaces with IPv6 off by default: p2 stays at 1,
	# which must come back as 1.)
	ip netns exec "$(ns s)" sysctl -qw "net.ipv6.conf.$(ifn p1).disable_ipv6=0" || skip "no IPv6 sysctls"
	assert_eq "$(v6_off s p2)" 1 "p2's disable_ipv6 before switchd"
	start_switchd s "$(sw_conf)"
	assert_eq "$(v6_off s p1)" 1 "p1's disable_ipv6 while switchd runs"
	saved=$L2T_DIR/run/ipv6-$(stat -L -c %i "/run/netns/$(ns s)")-$(ifn p1)
	[ -f "$saved" ] || fail "no saved value $saved while switchd runs: $(ls "$L2T_DIR/run" 2>&1)"
	info "saved while running: $saved: $(cat "$saved")"
	ping_ok || fail "ping h1 -> h2 through the first switchd"
	stop_switchd s KILL || fail "switchd did not die on SIGKILL"
	assert_eq "$(v6_off s p1)" 1 "p1's disable_ipv6 after SIGKILL (nobody restored it)"
	xdp=$(xdp_on "$(ns s)" "$(ifn p1)")
	info "after SIGKILL: XDP on p1: ${xdp:-none (the BPF link died with the process)};" \
		"control socket left behind: $([ -e "$L2T_DIR/s.sock" ] && echo yes || echo no)"
	start_switchd s "$(sw_conf)"
	ping_ok || fail "ping h1 -> h2 through the restarted switchd"
	info "restarted switchd forwards; its log: $(grep -v 'forwarding on' "$L2T_DIR/s.log" | tail -2 | tr '\n' ' ')"
	stop_switchd s TERM || fail "restarted switchd did not stop"
	assert_eq "$SW_RC" 0 "restarted switchd exit status"
	assert_eq "$(v6_off s p1)" 0 "p1's disable_ipv6 after the restarted switchd stopped (the value before the first run)"
	assert_eq "$(v6_off s p2)" 1 "p2's disable_ipv6 after the restarted switchd stopped (1 before)"
	[ -e "$saved" ] && fail "saved value $saved left after a clean stop"
	return 0
}

# p2_rate_is BPS (for wait_for): switchd s's port p2 runs at BPS.
p2_rate_is() {
	local j r
	j=$(ctl s ports) || return 1
	r=$(jget "$j" '[p["rate_bps"] for p in d["ports"] if p["name"] == "p2"][0]') || return 1
	echo "p2 rate_bps $r"
	[ "$r" = "$1" ]
}

t_sighup_rate() {
	local j rate
	start_switchd s "$(sw_conf 100M)"
	j=$(ctl s ports) || fail "l2ccctl ports"
	assert_eq "$(jget "$j" '[p["rate_bps"] for p in d["ports"] if p["name"] == "p2"][0]')" 100000000 "p2 rate_bps before reload"
	write_config s "$(sw_conf 250M)" >/dev/null
	kill -HUP "$(sw_pid s)"
	wait_for -q -t 20 "p2 to run at 250M after SIGHUP" p2_rate_is 250000000
	j=$(ctl s ports) || fail "l2ccctl ports after SIGHUP"
	rate=$(jget "$j" '[p["rate_bps"] for p in d["ports"] if p["name"] == "p2"][0]')
	info "SIGHUP: p2 rate_bps $rate; log: $(tail -1 "$L2T_DIR/s.log")"
	assert_eq "$rate" 250000000 "p2 rate_bps after changing the file and SIGHUP"
	ping_ok || fail "ping after the reload"
	stop_switchd s TERM || fail "switchd did not stop"
	assert_eq "$SW_RC" 0 "exit status after reload and SIGTERM"
}

# reloaded NAME N: wait (up to 2 s) for the log to have more than N reload
# outcome lines ("reloaded ..." or "reload: ... nothing changed").
reloaded() {
	local log=$L2T_DIR/$1.log
	for _ in $(seq 40); do
		[ "$(grep -cE ' reloaded |nothing changed|keeping the running configuration' "$log")" -gt "$2" ] &&
			return 0
		sleep 0.05
	done
	return 1
}

# -v asks for debug logging: a reload (whose file says log_level = info)
# must not turn it off. The control socket logs each request at debug.
t_sighup_verbose() {
	local log=$L2T_DIR/s.log n r
	start_switchd s "$(sw_conf 100M)" -v
	ctl s status >/dev/null || fail "l2ccctl status"
	grep -q "request 'status'" "$log" || fail "switchd -v logs no debug line before the reload"
	r=$(grep -cE ' reloaded |nothing changed' "$log")
	write_config s "log_level = info
$(sw_conf 250M)" >/dev/null
	kill -HUP "$(sw_pid s)"
	reloaded s "$r" || fail "no reload outcome in the log: $(tail -2 "$log")"
	grep -qF "reload: [port p2] rate: 100M -> 250M" "$log" ||
		fail "the reload did not log the rate change: $(tail -3 "$log")"
	n=$(grep -c "request 'ports'" "$log")
	ctl s ports >/dev/null || fail "l2ccctl ports after SIGHUP"
	info "after the reload: $(grep -c "request 'ports'" "$log") debug lines for 'ports' (were $n)"
	assert_ge "$(grep -c "request 'ports'" "$log")" "$((n + 1))" "debug lines after a reload with -v"
	# A key that needs a restart refuses the whole reload, and says why.
	r=$(grep -cE ' reloaded |nothing changed' "$log")
	write_config s "$(sw_conf 50M)
flow_control = pause" >/dev/null
	kill -HUP "$(sw_pid s)"
	reloaded s "$r" || fail "no reload outcome in the log: $(tail -2 "$log")"
	grep -qF "[port p2] flow_control none -> pause needs a restart; restart switchd to apply (nothing changed)" \
		"$log" || fail "the refusal does not name flow_control: $(tail -2 "$log")"
	assert_eq "$(jget "$(ctl s ports)" '[p["rate_bps"] for p in d["ports"] if p["name"] == "p2"][0]')" \
		250000000 "p2 rate_bps after a refused reload"
	stop_switchd s TERM || fail "switchd did not stop"
	assert_eq "$SW_RC" 0 "exit status after the reloads and SIGTERM"
}

# as_nobody ARGS...: l2ccctl on switchd s's socket as uid nobody, with
# group $NOBODY_GID only (setpriv), stdout and stderr together.
as_nobody() {
	setpriv --reuid nobody --regid "$NOBODY_GID" --clear-groups \
		"$L2CCCTL" -s "$L2T_DIR/s.sock" -r -t 3000 "$@" 2>&1
}

# Who may run what on the control socket (issue 18): root everything (and
# logged), the socket's group the read-only commands, anyone else nothing
# even where a careless chmod lets them connect; `reload` answers with what
# happened, a buffer past the UMEM made at start refused with the reason.
t_ctl_access_reload() {
	local out
	command -v setpriv >/dev/null || skip "setpriv is missing"
	start_switchd s "$(sw_conf)"
	chmod 755 "$L2T_DIR"
	chmod 666 "$L2T_DIR/s.sock"
	NOBODY_GID=$(getent group nogroup | cut -d: -f3)
	[ -n "$NOBODY_GID" ] || NOBODY_GID=65534
	out=$(as_nobody status)
	grep -q "permission denied: uid [0-9]* is not root" <<<"$out" || fail "nobody (not owner, not group) ran status: $out"
	out=$(as_nobody mark p1 1)
	grep -q "permission denied" <<<"$out" || fail "nobody ran mark: $out"
	chgrp "$NOBODY_GID" "$L2T_DIR/s.sock"
	out=$(as_nobody status) || fail "the socket's group could not run status: $out"
	grep -q '"daemon"' <<<"$out" || fail "status as the socket's group: $out"
	for c in "mark p1 1" "reload" "cp p1 level 5"; do
		# shellcheck disable=SC2086
		out=$(as_nobody $c)
		grep -q "permission denied: ${c%% *} changes the daemon's state" <<<"$out" ||
			fail "the socket's group ran '$c': $out"
	done
	info "as nobody in the socket's group: status answered, mark/reload/cp refused"
	chmod 700 "$L2T_DIR"
	ctl s mark p1 1 >/dev/null || fail "root could not run mark"
	grep -q "control command 'mark p1 1' from uid 0 (pid [0-9]*)" "$L2T_DIR/s.log" ||
		fail "mark by root not logged: $(tail -3 "$L2T_DIR/s.log")"
	# reload: the outcome in the reply.
	write_config s "$(sw_conf 250M)" >/dev/null
	out=$(ctl s reload) || fail "reload: $out"
	grep -q '"reloaded":true' <<<"$out" || fail "reload reply: $out"
	info "reload: $out"
	write_config s "$(sw_conf 250M | sed 's/^\[port p2\]$/[port p2]\nbuffer = 64M/')" >/dev/null
	out=$(ctl s reload 2>&1) && fail "a reload to a 64M buffer was applied: $out"
	grep -q "reload refused: .*buffer: 64M needs [0-9]* UMEM frames in all, the UMEM made at start has" <<<"$out" ||
		fail "the refusal does not say why: $out"
	grep -q "at most buffer = 0K" <<<"$out" && fail "the refusal names a limit of 0K: $out"
	grep -q "the UMEM made at start has" "$L2T_DIR/s.log" || fail "the refusal is not in the log"
	info "reload to buffer = 64M: $out"
	p2_rate_is 250000000 >/dev/null || fail "p2 lost its reloaded rate after the refused reload"
	stop_switchd s TERM || fail "switchd did not stop"
}

t_foreign_xdp() {
	local nsn pif out rc conf
	nsn=$(ns s)
	pif=$(ifn p1)
	[ -r "$XDP_OBJ" ] || skip "$XDP_OBJ not built"
	if ! out=$(ip -n "$nsn" link set dev "$pif" xdpdrv obj "$XDP_OBJ" program xdp_pass 2>&1); then
		skip "iproute2 cannot attach program xdp_pass from $XDP_OBJ: $out"
	fi
	info "foreign program on p1: $(xdp_on "$nsn" "$pif")"
	conf=$(write_config s "$(sw_conf)")
	out=$(timeout 10 ip netns exec "$nsn" "$SWITCHD" -c "$conf" 2>&1)
	rc=$?
	ip -n "$nsn" link set dev "$pif" xdpdrv off
	info "switchd over a foreign program: exit $rc: $(tr '\n' ' ' <<<"$out")"
	[ "$rc" -ne 124 ] || fail "switchd started on top of a foreign XDP program (killed after 10 s)"
	[ "$rc" -ne 0 ] || fail "switchd exited 0 over a foreign XDP program"
	grep -q "xdp_pass" <<<"$out" || fail "the message does not name the foreign program xdp_pass"
	grep -q "$pif" <<<"$out" || fail "the message does not name the interface $pif"
	[ -n "$(xdp_on "$nsn" "$(ifn p2)")" ] && fail "switchd left its program on p2 after refusing p1"
	return 0
}

# A stale l2cc program left in generic (skb) mode, as `ip link set ...
# xdpgeneric` or an old run with xdp_mode = skb leaves it: switchd finds it
# ours, removes it in the mode it was attached in, and starts. (It used to
# detach in the driver's mode only, which left the program and failed with
# EBUSY.)
t_stale_generic_xdp() {
	local nsn pif out obj=$L2CC_ROOT/build/l2cc_xdp.bpf.o
	nsn=$(ns s)
	pif=$(ifn p1)
	[ -r "$obj" ] || skip "$obj not built"
	if ! out=$(ip -n "$nsn" link set dev "$pif" xdpgeneric obj "$obj" program l2cc_xdp 2>&1); then
		skip "iproute2 cannot attach program l2cc_xdp from $obj: $out"
	fi
	info "stale program on p1: $(xdp_on "$nsn" "$pif")"
	start_switchd s "$(sw_conf)"
	grep -q "$pif: removing stale l2cc_xdp program" "$L2T_DIR/s.log" ||
		fail "no removal logged: $(tail -3 "$L2T_DIR/s.log")"
	stop_switchd s TERM || fail "switchd did not stop"
	out=$(xdp_on "$nsn" "$pif")
	[ -z "$out" ] || fail "a program is still on p1 after switchd's exit: $out"
}

run_setup setup
run_test lifecycle_check_ok t_check_ok
run_test lifecycle_bad_config t_bad_config
run_test lifecycle_sigterm t_sigterm
run_test lifecycle_sigkill_restart t_sigkill_restart
run_test lifecycle_sighup_rate t_sighup_rate
run_test lifecycle_sighup_verbose t_sighup_verbose
run_test lifecycle_ctl_access_reload t_ctl_access_reload
run_test lifecycle_foreign_xdp t_foreign_xdp
run_test lifecycle_stale_generic_xdp t_stale_generic_xdp
tests_done
