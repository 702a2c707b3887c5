#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The daemons run in the sandbox their systemd units give them, without
# systemd (PID 1 need not be systemd here): each daemon is started through
# tests/netns/unit_sandbox.py, which reads config/systemd/{switchd,hostd}@.service:
#
#   ip netns exec NS unshare -m  unit_sandbox.py mounts UNIT --rw $L2T_DIR --
#     setpriv --bounding-set=-all,+CAPS --inh-caps=... --ambient-caps=... --no-new-privs --
#     unit_sandbox.py seccomp UNIT -- DAEMON -c CONF
#
# CAPS is exactly the unit's CapabilityBoundingSet (= AmbientCapabilities);
# the mounts are ProtectSystem=strict and ProtectKernelTunables= with the
# unit's ReadWritePaths= writable ($L2T_DIR stands in for RuntimeDirectory=:
# control sockets); the seccomp filters are SystemCallFilter=,
# SystemCallErrorNumber=, RestrictAddressFamilies= and
# MemoryDenyWriteExecute=. Uid 0, as the units run.
#
#   h1 eth0 -veth- cc0 [hostd h1] up0 -veth- p1 [switchd S] p2 -veth- up0 [hostd h2] cc0 -veth- eth0 h2
#
#  - units_start: switchd and both hostds come up in their sandbox, with
#    that capability set and nothing else (/proc/PID/status: CapEff, CapPrm,
#    CapBnd), no_new_privs and seccomp filters on.
#  - units_forward: ping and iperf3 TCP h1 -> h2 through the three daemons
#    (goodput >= 50 Mbit/s, as test_hostd.sh asks at 100M), the control
#    socket answers, and a SIGHUP reload works in the sandbox.
#  - units_ipv6_sysctl: the daemons turn IPv6 off on their ports through
#    /proc/sys/net/ipv6/conf (writable in a read-only /proc/sys) and restore
#    it on SIGTERM.
#  - units_ipv6_needs_rw: the control experiment: without that
#    ReadWritePaths= entry the write fails (switchd warns, the value stays),
#    and a write elsewhere in /proc/sys fails in the sandbox: the emulated
#    mounts do constrain.
#  - units_caps_each_needed: switchd started with the set minus one
#    capability fails, for each one (CAP_IPC_LOCK only while the UMEM is
#    larger than RLIMIT_MEMLOCK, which is said), with the error that
#    capability is for.
#  - units_filter_needs_bpf: the unit without its SystemCallFilter=bpf line
#    stops switchd at the program load (the seccomp emulation constrains;
#    the line is needed).
#  - units_attached_xdp: without CAP_SYS_ADMIN switchd cannot tell a stale
#    l2cc program attached by netlink from a foreign one; it refuses the
#    port and says how to detach it.
. "$(dirname "$0")/lib.sh"

SANDBOX=$L2CC_ROOT/tests/netns/unit_sandbox.py
UNIT_DIR=${L2CC_UNIT_DIR:-$L2CC_ROOT/config/systemd}

need() {
	local t
	for t in setpriv unshare systemd-analyze; do
		command -v "$t" >/dev/null || skip "$t not installed"
	done
	"$PY" -c 'import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library("seccomp") else 1)' ||
		skip "libseccomp not installed"
}

# wrapper NAME DAEMON CAPS [MOUNT OPTS...]: $L2T_DIR/run-NAME, a command
# that starts DAEMON in DAEMON@.service's sandbox (or $WRAP_UNIT's; with
# CAPS instead of the unit's set unless empty), for lib.sh's
# start_switchd/start_hostd.
wrapper() {
	local name=$1 d=$2 caps=${3:-} unit bset c
	shift 3
	unit=${WRAP_UNIT:-$UNIT_DIR/$d@.service}
	[ -n "$caps" ] || caps=$("$PY" "$SANDBOX" caps "$unit") || return 1
	bset=-all
	for c in ${caps//,/ }; do bset+=",+$c"; done
	cat >"$L2T_DIR/run-$name" <<EOF
#!/bin/sh
exec unshare -m --propagation private "$PY" "$SANDBOX" mounts "$unit" --rw "$L2T_DIR" $* -- \\
	setpriv --bounding-set=$bset --inh-caps=$bset --ambient-caps=$bset --no-new-privs -- \\
	"$PY" "$SANDBOX" seccomp "$unit" -- "$L2CC_ROOT/build/bin/$d" "\$@"
EOF
	chmod +x "$L2T_DIR/run-$name"
	echo "$L2T_DIR/run-$name"
}

SW_CONF() {
	printf '%s\n' "[port p1]" "ifname = $(ifn p1)" "rate = 100M" "[port p2]" "ifname = $(ifn p2)" "rate = 100M"
}

setup() {
	need
	mk_switch S
	for i in 1 2; do
		mk_host "h$i"
		link_hd_host S "p$i" "h$i" "$i"
	done
}

ipv6_off() { # NS IF: the interface's disable_ipv6
	ip netns exec "$(ns "$1")" cat "/proc/sys/net/ipv6/conf/$2/disable_ipv6"
}
ipv6_set() { # NS IF VALUE
	ip netns exec "$(ns "$1")" sysctl -qw "net.ipv6.conf.$2.disable_ipv6=$3" || fail "sysctl on $1 $2"
}
# The ports the daemons turn IPv6 off on, as "NS IF" lines.
PORTS() { printf '%s\n' "S $(ifn p1)" "S $(ifn p2)" "h1 cc0" "h1 up0" "h2 cc0" "h2 up0"; }

start_all() {
	local w n i
	while read -r n i; do ipv6_set "$n" "$i" 0; done < <(PORTS)
	w=$(wrapper S switchd "") || fail "no capability set in switchd@.service"
	SWITCHD=$w start_switchd S "$(SW_CONF)"
	for n in h1 h2; do
		w=$(wrapper "$n" hostd "") || fail "no capability set in hostd@.service"
		HOSTD=$w start_hostd "$n" "link_rate = 100M"
	done
}

# status_field PID FIELD: a line of /proc/PID/status, value only.
status_field() { sed -nE "s/^$2:\s*//p" "/proc/$1/status"; }

t_start() {
	local n pid want f v unit
	start_all
	for n in S h1 h2; do
		pid=$(sw_pid "$n")
		case $n in S) unit=switchd ;; *) unit=hostd ;; esac
		want=$("$PY" "$SANDBOX" mask "$UNIT_DIR/$unit@.service")
		info "$n ($unit, pid $pid): caps $("$PY" "$SANDBOX" caps "$UNIT_DIR/$unit@.service"); $(grep -h '^unit_sandbox' "$L2T_DIR/$n.log" | tr '\n' ' ')"
		for f in CapEff CapPrm CapBnd; do
			v=$(status_field "$pid" $f)
			assert_eq "$v" "$want" "$n $f"
		done
		assert_eq "$(status_field "$pid" NoNewPrivs)" 1 "$n NoNewPrivs"
		assert_eq "$(status_field "$pid" Seccomp)" 2 "$n Seccomp (2 = filter)"
		info "$n: CapEff $want, NoNewPrivs 1, Seccomp 2, Seccomp_filters $(status_field "$pid" Seccomp_filters)"
	done
}

alive_all() {
	local n p
	for n in S h1 h2; do
		p=$(sw_pid "$n")
		if [ -z "$p" ] || ! _l2t_alive "$p"; then fail "$n is not running (see units_start)"; fi
	done
}

t_forward() {
	local out bps n
	alive_all
	out=$(hx h1 ping -c 5 -i 0.2 -W 2 10.99.0.2) || fail "ping h1 -> h2: $(tail -2 <<<"$out" | tr '\n' ' ')"
	grep -q ' 0% packet loss' <<<"$out" || fail "ping loss: $(grep 'packet loss' <<<"$out")"
	info "ping h1 -> h2: 5/5, rtt $(sed -nE 's|^rtt min/avg/max/mdev = ([0-9.]+)/([0-9.]+)/.*|min \1 avg \2 ms|p' <<<"$out")"
	tcp_bps h1 2 5201
	bps=$TCP_BPS
	info "iperf3 TCP h1 -> h2 through the sandboxed hostd, switchd (100M), hostd: $(mbps "$bps") Mbit/s"
	assert_ge "$bps" 50e6 "TCP goodput h1 -> h2 at 100M (bit/s)"
	alive_all
	assert_eq "$(jget "$(ctl S status)" 'd["umem"]["conserved"]')" true "switchd umem conserved"
	# A reload (the unit's ExecReload) re-reads the config in the sandbox.
	for n in S h1; do
		kill -HUP "$(sw_pid "$n")"
		wait_for "$n to reload in its sandbox" grep -q 'reloaded ' "$L2T_DIR/$n.log"
	done
	alive_all
	info "SIGHUP: $(grep -h 'reloaded ' "$L2T_DIR/S.log" "$L2T_DIR/h1.log" | sed -E 's/^[^ ]+ //' | tr '\n' ';')"
}

t_ipv6_sysctl() {
	local n i v
	alive_all
	while read -r n i; do
		v=$(ipv6_off "$n" "$i")
		assert_eq "$v" 1 "disable_ipv6 on $n $i while the daemons run"
	done < <(PORTS)
	info "disable_ipv6 = 1 on all six ports while the daemons run (0 before)"
	for n in h1 h2 S; do
		stop_switchd "$n" || fail "$n did not stop on SIGTERM: $(tail -2 "$L2T_DIR/$n.log")"
		info "$n: exit status $SW_RC"
		[ "$SW_RC" = unknown ] || assert_eq "$SW_RC" 0 "$n's exit status"
	done
	while read -r n i; do
		assert_eq "$(ipv6_off "$n" "$i")" 0 "disable_ipv6 on $n $i after SIGTERM"
	done < <(PORTS)
	info "disable_ipv6 = 0 again on all six after SIGTERM"
}

t_ipv6_needs_rw() {
	local w i out
	for i in p1 p2; do ipv6_set S "$(ifn "$i")" 0; done
	w=$(wrapper S switchd "" --no-rw /proc/sys/net/ipv6/conf) || fail "wrapper"
	SWITCHD=$w start_switchd S "$(SW_CONF)"
	assert_eq "$(ipv6_off S "$(ifn p1)")" 0 "disable_ipv6 on S p1 with /proc/sys read-only"
	grep -q 'cannot disable IPv6.*Read-only file system' "$L2T_DIR/S.log" ||
		fail "switchd did not warn about the read-only sysctl: $(grep -i ipv6 "$L2T_DIR/S.log")"
	info "without ReadWritePaths=/proc/sys/net/ipv6/conf: $(grep -m1 'cannot disable IPv6' "$L2T_DIR/S.log")"
	stop_switchd S || fail "S did not stop"
	out=$(ip netns exec "$(ns S)" unshare -m --propagation private "$PY" "$SANDBOX" mounts \
		"$UNIT_DIR/switchd@.service" -- sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward' 2>&1) &&
		fail "a write to /proc/sys/net/ipv4/ip_forward succeeded in the sandbox"
	info "ip_forward in the sandbox: $(tail -1 <<<"$out")"
}

# What each capability is for: the error switchd stops with without it
# (Linux 6.18: the XSKMAP needs CAP_NET_ADMIN to be created, the program
# CAP_BPF to load, an AF_XDP socket CAP_NET_RAW (the first one registers
# the UMEM), the UMEM CAP_IPC_LOCK or a RLIMIT_MEMLOCK above its size).
# start_to_exit NAME WRAPPER: switchd through WRAPPER in S's namespace on
# $L2T_DIR/NAME.conf, its log in $L2T_DIR/NAME.log; waits up to 5 s for it
# to exit. Returns 0 with its status in EXIT_RC, or 1 with it still running
# as EXIT_PID. Not inside $(...): the daemon is the calling shell's child.
start_to_exit() {
	local pid
	ip netns exec "$(ns S)" "$2" -c "$L2T_DIR/$1.conf" >"$L2T_DIR/$1.log" 2>&1 &
	pid=$!
	bg_record "$pid"
	for _ in $(seq 100); do _l2t_alive "$pid" || break; sleep 0.05; done
	EXIT_PID=$pid
	_l2t_alive "$pid" && return 1
	wait "$pid"
	EXIT_RC=$?
	return 0
}

declare -A NEEDED_FOR=(
	[net_admin]="load XDP program: Operation not permitted"
	[bpf]="load XDP program: Operation not permitted"
	[net_raw]="umem: create .*: Operation not permitted"
	[ipc_lock]="umem: create .*: No buffer space available"
)

t_caps_each_needed() {
	local unit caps c less w pid log rc memlock umem why bad=
	unit=$UNIT_DIR/switchd@.service
	caps=$("$PY" "$SANDBOX" caps "$unit")
	memlock=$(ulimit -l)
	for c in ${caps//,/ }; do
		less=$(tr ',' '\n' <<<"$caps" | grep -vx "$c" | paste -sd,)
		w=$(wrapper "less-$c" switchd "$less") || fail "wrapper"
		write_config "less-$c" "$(SW_CONF)" >/dev/null
		log=$L2T_DIR/less-$c.log
		if ! start_to_exit "less-$c" "$w"; then
			pid=$EXIT_PID
			# Without CAP_IPC_LOCK a UMEM within RLIMIT_MEMLOCK is fine.
			umem=$(jget "$(ctl "less-$c" status)" 'd["umem"]["frames"] * d["umem"]["frame_size"] // 1024') ||
				umem=unknown
			kill -TERM "$pid"
			wait "$pid" 2>/dev/null
			if [ "$c" = ipc_lock ] && [ "$umem" != unknown ] &&
				{ [ "$memlock" = unlimited ] || [ "$memlock" -ge "$umem" ]; }; then
				info "without cap_ipc_lock: runs, for RLIMIT_MEMLOCK ($memlock KiB) holds the UMEM ($umem KiB) here"
				continue
			fi
			bad+="switchd without cap_$c came up (UMEM $umem KiB, RLIMIT_MEMLOCK $memlock KiB); "
			continue
		fi
		rc=$EXIT_RC
		why=$(grep -m1 -E "${NEEDED_FOR[$c]:-no expectation for $c}" "$log" | sed -E 's/^[^ ]+ //')
		info "without cap_$c: exit $rc: ${why:-$(grep -m1 error "$log")}"
		[ "$rc" -ne 0 ] || bad+="switchd without cap_$c exited 0; "
		[ -n "$why" ] || bad+="switchd without cap_$c: not the expected error /${NEEDED_FOR[$c]:-}/: $(tail -1 "$log"); "
	done
	[ -z "$bad" ] || fail "$bad"
}

# The seccomp emulation has teeth, and the unit's bpf line is needed: the
# same unit without SystemCallFilter=bpf stops switchd at the program load.
t_filter_needs_bpf() {
	local w log rc
	grep -qx 'SystemCallFilter=bpf' "$UNIT_DIR/switchd@.service" ||
		fail "switchd@.service has no line SystemCallFilter=bpf"
	grep -vx 'SystemCallFilter=bpf' "$UNIT_DIR/switchd@.service" >"$L2T_DIR/nobpf@.service"
	w=$(WRAP_UNIT=$L2T_DIR/nobpf@.service wrapper nobpf switchd "") || fail "wrapper"
	write_config nobpf "$(SW_CONF)" >/dev/null
	log=$L2T_DIR/nobpf.log
	start_to_exit nobpf "$w" || fail "switchd came up with bpf(2) filtered out"
	rc=$EXIT_RC
	info "without bpf(2) in the filter: exit $rc: $(grep -m1 -E 'error' "$log" | sed -E 's/^[^ ]+ //')"
	grep -qE 'load XDP program: Operation not permitted' "$log" ||
		fail "not the expected error (load XDP program: EPERM): $(tail -1 "$log")"
}

# An XDP program attached without a BPF link (by hand, or by an older
# l2cc) cannot be inspected without CAP_SYS_ADMIN: switchd says so and
# how to detach it, rather than only EBUSY from the attach.
t_attached_xdp() {
	local w log rc pif
	pif=$(ifn p1)
	ip -n "$(ns S)" link set dev "$pif" xdpdrv obj "$L2CC_ROOT/build/l2cc_xdp.bpf.o" sec xdp 2>"$L2T_DIR/ip.err" ||
		skip "ip cannot attach an XDP object here: $(head -1 "$L2T_DIR/ip.err")"
	w=$(wrapper attached switchd "") || fail "wrapper"
	write_config attached "$(SW_CONF)" >/dev/null
	log=$L2T_DIR/attached.log
	start_to_exit attached "$w" || fail "switchd came up on a port with a program attached by netlink"
	rc=$EXIT_RC
	ip -n "$(ns S)" link set dev "$pif" xdpdrv off
	info "exit $rc: $(grep -m1 -E 'error' "$log" | sed -E 's/^[^ ]+ //')"
	grep -qE "$pif: an XDP program \(id [0-9]+\) is attached and cannot be inspected.*CAP_SYS_ADMIN.*ip link set dev $pif xdp off" "$log" ||
		fail "not the expected error: $(grep -m1 error "$log")"
}

run_setup setup
run_test units_start t_start
run_test units_forward t_forward
run_test units_ipv6_sysctl t_ipv6_sysctl
run_test units_ipv6_needs_rw t_ipv6_needs_rw
run_test units_caps_each_needed t_caps_each_needed
run_test units_filter_needs_bpf t_filter_needs_bpf
run_test units_attached_xdp t_attached_xdp
tests_done
