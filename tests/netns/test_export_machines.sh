#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `l2cc-lab export` with network namespaces as the machines (issue 19):
# config/topologies/two-machines.yaml is exported, and each namespace
# $(ns A), $(ns B) is treated as the machine of that name:
#
#   ns A: enp1s0f1 ═veth═ enp1s0f2 (the cable between two ports of A),
#         enp1s0f0 ═veth═ enp1s0f0 in ns B (the cable between the machines)
#
# What it checks, and why:
#  - export_machines: each machine's exported interface script, run as it
#    would be on the machine, sets up its interfaces (the local veths, the
#    host stack's address, MAC, MTU less hostd's tag, checksum offload
#    off), and runs again without error (the playbook runs it every time);
#    each exported daemon config starts its daemon unchanged but for the
#    control socket and stats paths (here a temp dir, not /run/l2cc); h1 on
#    A pings h2 on B through hostd, switchd sA, the "cable", switchd sB.
# What it cannot: systemd (PID 1 here is not), Ansible against a machine
# (tests/python/test_export.py runs --syntax-check), real NICs.
. "$(dirname "$0")/lib.sh"

TOPO=$L2CC_ROOT/config/topologies/two-machines.yaml
EXP=$L2T_DIR/export

# A daemon from an exported config, in machine namespace $1, as the lab
# starts its own (bpffs mounted in the daemon's own mount namespace).
start_exported() { # machine node daemon
	local m=$1 node=$2 daemon=$3 conf=$L2T_DIR/$2.conf pid
	sed -e "s|/run/l2cc/|$L2T_DIR/|" "$4" >"$conf"
	ip netns exec "$(ns "$m")" /bin/sh -c 'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; exec "$@"' \
		l2t "$L2CC_ROOT/build/bin/$daemon" -c "$conf" >"$L2T_DIR/$node.log" 2>&1 &
	pid=$!
	bg_record "$pid"
	echo "$pid" >"$L2T_DIR/$node.pid"
	for _ in $(seq 100); do
		_l2t_alive "$pid" || break
		ctl "$node" status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	sed 's/^/    #   /' "$L2T_DIR/$node.log" >&2
	grep -Eq "(AF_XDP socket|XDP program).*(not supported|not implemented)" "$L2T_DIR/$node.log" &&
		skip "AF_XDP/XDP unsupported here"
	fail "$daemon $node from the exported config did not come up: $(tail -1 "$L2T_DIR/$node.log")"
}

t_export_machines() {
	"$PY" "$L2CC_ROOT/scripts/l2cc-lab" export "$TOPO" --out "$EXP" >"$L2T_DIR/export.out" 2>&1 ||
		fail "export: $(tail -1 "$L2T_DIR/export.out")"
	mk_host A
	mk_host B
	ip link add name enp1s0f1 netns "$(ns A)" type veth peer name enp1s0f2 netns "$(ns A)" ||
		fail "cable on A"
	ip link add name enp1s0f0 netns "$(ns A)" type veth peer name enp1s0f0 netns "$(ns B)" ||
		fail "cable A-B"
	local m
	for m in A B; do
		ip netns exec "$(ns "$m")" sh "$EXP/$m/l2cc-nics.sh" >"$L2T_DIR/nics-$m.out" 2>&1 ||
			fail "machine $m: l2cc-nics.sh: $(tail -1 "$L2T_DIR/nics-$m.out")"
		ip netns exec "$(ns "$m")" sh "$EXP/$m/l2cc-nics.sh" >"$L2T_DIR/nics-$m.out" 2>&1 ||
			fail "machine $m: l2cc-nics.sh a second time: $(tail -1 "$L2T_DIR/nics-$m.out")"
	done
	local mtu tx
	mtu=$(ip -n "$(ns A)" -j link show l2e1 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["mtu"])')
	assert_eq "$mtu" 1482 "h1's stack interface MTU (1500 less hostd's tag)"
	tx=$(ip netns exec "$(ns A)" ethtool -k l2e1 | awk '/^tx-checksumming:/ {print $2}')
	assert_eq "$tx" off "tx checksumming on h1's stack interface"
	ip -n "$(ns B)" addr show dev l2l3b | grep -q "10.0.0.2/24" || fail "h2's address on l2l3b"
	start_exported A sA switchd "$EXP/A/etc/l2cc/sA.conf"
	start_exported A h1 hostd "$EXP/A/etc/l2cc/hostd-h1.conf"
	start_exported B sB switchd "$EXP/B/etc/l2cc/sB.conf"
	ip netns exec "$(ns A)" ping -c 3 -i 0.2 -W 2 10.0.0.2 >"$L2T_DIR/ping.out" 2>&1 ||
		fail "h1 (machine A) cannot ping h2 (machine B): $(tail -2 "$L2T_DIR/ping.out" | head -1)"
	info "$(grep -E 'packets transmitted' "$L2T_DIR/ping.out")"
}

run_test export_machines t_export_machines
tests_done
