#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The testbed's lab lifecycle, end to end through scripts/l2cc-lab:
#
#   h1 ─ hostd ─ P1 ┐                      ┌ P3 ─ h3 (no hostd)
#                   [ switchd A ] Pab ═ Pba [ switchd B ]
#   h2 ─ hostd ─ P2 ┘        credit, 1G
#
# What it checks, and why:
#  - lab_broken_topology: a topology with a link to an unknown node is
#    refused with exit 2 and FILE:LINE, by `check` and by `up`, and `up`
#    creates nothing (no namespace, no run directory): validation is done
#    in full before anything is touched.
#  - lab_up_ping: `up` builds two switches and three hosts (one without
#    hostd); every host pings every other; `status` shows every daemon
#    running and answering; a second `up` of the same lab is refused and
#    leaves the running lab alone. The host keys reach the namespaces:
#    h1's tcp_ecn and tcp_window as its sysctls (h2 keeps the defaults),
#    and h2, whose hostd sets pcp_from_dscp, gets 4 bytes less MTU.
#  - lab_down_clean: `down` leaves no namespace of the lab, no veth, no
#    process of the recorded PIDs; a second `down` succeeds. A namespace
#    with the lab's prefix that lab.json does not record survives it.
#  - lab_down_after_kill: after SIGKILL of a switchd and a hostd, `down`
#    still removes everything.
#
# The lab is l2cc-lab's own (name tb<pid>), with lib.sh's run prefix as its
# namespace prefix and its run directory in lib.sh's temp dir, so lib.sh's
# EXIT cleanup catches whatever a failing test leaves behind.
. "$(dirname "$0")/lib.sh"

LAB=tb$$
LABDIR=$L2T_DIR/lab
TOPO=$L2T_DIR/$LAB.yaml
P=t$$           # interface names: unique per run, <= 15 characters
SUBNET=10.77.0

lab() { "$PY" "$L2CC_ROOT/scripts/l2cc-lab" "$@"; }

lab_cleanup() {
	if [ -e "$LABDIR/lab.json" ]; then
		lab down "$LAB" --rundir "$LABDIR" >/dev/null 2>&1
	fi
	l2t_cleanup
}
trap 'lab_cleanup' EXIT
trap 'lab_cleanup; exit 130' INT
trap 'lab_cleanup; exit 143' TERM

cat >"$TOPO" <<EOF
name: $LAB
prefix: $L2T
subnet: $SUBNET.0/24
defaults: {rate: 100M, mtu: 1500, buffer: 64K, flow_control: pause}
nodes:
  A: {kind: switch}
  B: {kind: switch}
  h1: {kind: host, tcp_ecn: 1, tcp_window: 64K}
  h2: {kind: host, hostd: {pcp_from_dscp: yes}}
  h3: {kind: host, hostd: false}
links:
  - endpoints: ["A:${P}1", "h1:eth0"]
  - endpoints: ["A:${P}2", "h2:eth0"]
  - endpoints: ["A:${P}ab", "B:${P}ba"]
    rate: 1G
    flow_control: credit
  - endpoints: ["B:${P}3", "h3:eth0"]
EOF

# ---- helpers ---------------------------------------------------------------

lab_netns() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$L2T-"; }

# lab_pids: "PID CONF" of every daemon in lab.json (after an up).
lab_pids() {
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"].values():
    if n["pid"]:
        print(n["pid"], n["config"])' "$LABDIR/lab.json"
}

# up_lab: l2cc-lab up, skipping when the kernel lacks AF_XDP/XDP; records
# the daemons' PIDs for lib.sh's cleanup and for lab_gone.
up_lab() {
	local out rc pid conf
	out=$(lab up "$TOPO" --rundir "$LABDIR" 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		if grep -Eq "(AF_XDP socket|XDP program).*: (Address family not supported|Operation not supported|Function not implemented)" <<<"$out"; then
			skip "AF_XDP/XDP unsupported here: $(grep -Em1 'AF_XDP socket|XDP program' <<<"$out")"
		fi
		sed 's/^/    #   /' <<<"$out" >&2
		fail "l2cc-lab up exited $rc: $(grep -m1 'l2cc-lab:' <<<"$out")"
	fi
	info "up: $(head -1 <<<"$out" | sed 's/^note: //')"
	lab_pids >"$L2T_DIR/lab.pids"
	while read -r pid conf; do
		bg_record "$pid"
	done <"$L2T_DIR/lab.pids"
}

# lab_gone: nothing of the lab is left (after a down).
lab_gone() {
	local left pid conf
	left=$(lab_netns | tr '\n' ' ')
	[ -z "$left" ] || fail "namespaces left after down: $left"
	left=$(ip -o link show type veth 2>/dev/null | grep -o "$P[a-z0-9]*" | sort -u | tr '\n' ' ')
	[ -z "$left" ] || fail "veths left in the root namespace after down: $left"
	while read -r pid conf; do
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$conf"; then
			fail "daemon pid $pid ($conf) still runs after down"
		fi
	done <"$L2T_DIR/lab.pids"
	for s in "$LABDIR"/*.sock; do
		[ -e "$s" ] && fail "control socket $s left after down"
	done
	return 0
}

addr_of() { jget "$(cat "$LABDIR/lab.json")" "d['nodes']['$1']['addr']"; }

# ---- tests -----------------------------------------------------------------

t_broken() {
	local bad=$L2T_DIR/broken.yaml out rc
	# Line 9 names node C, which does not exist.
	cat >"$bad" <<EOF
name: ${LAB}x
prefix: $L2T
nodes:
  A: {kind: switch}
  h1: {kind: host}
links:
  - endpoints: ["A:${P}1", "h1:eth0"]
  - endpoints:
      - "C:${P}9"
      - "A:${P}2"
EOF
	out=$(lab check "$bad" 2>&1)
	rc=$?
	info "check: $out"
	[ "$rc" -eq 2 ] || fail "check of a broken topology exited $rc, expected 2"
	grep -q "^$bad:9: .*unknown node \"C\"" <<<"$out" ||
		fail "check did not report $bad:9 (unknown node C): $out"
	out=$(lab up "$bad" --rundir "$LABDIR-broken" 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] || fail "up of a broken topology exited $rc, expected 2"
	grep -q "^$bad:9: " <<<"$out" || fail "up did not report $bad:9: $out"
	[ -z "$(lab_netns)" ] || fail "up of a broken topology created namespaces: $(lab_netns | tr '\n' ' ')"
	[ ! -e "$LABDIR-broken" ] || fail "up of a broken topology created its run directory"
	return 0
}

t_up_ping() {
	local st src dst a rc out n=0
	up_lab
	# Every host pings every other one.
	for src in h1 h2 h3; do
		for dst in h1 h2 h3; do
			[ "$src" = "$dst" ] && continue
			a=$(addr_of "$dst")
			ip netns exec "$L2T-$src" ping -c 1 -W 2 "$a" >/dev/null ||
				fail "ping $src -> $dst ($a) failed"
			n=$((n + 1))
		done
	done
	info "$n pings between 3 hosts (h3 without hostd) answered"
	st=$(lab status "$LAB" --rundir "$LABDIR" --compact)
	rc=$?
	[ "$rc" -eq 0 ] || fail "status exited $rc with every daemon up"
	out=$("$PY" - "$st" <<'EOF'
import json, sys
d = json.loads(sys.argv[1])
bad = []
want = {"A": "switchd", "B": "switchd", "h1": "hostd", "h2": "hostd"}
for name, kind in want.items():
    n = d["nodes"][name]
    if n.get("running") is not True:
        bad.append("%s not running" % name)
    elif not isinstance(n.get("status"), dict) or n["status"].get("daemon") != kind \
            or n["status"].get("name") != name:
        bad.append("%s: status reply %r" % (name, n.get("status")))
h3 = d["nodes"]["h3"]
if h3["hostd"] or h3["ctl"] or h3["pid"] or h3["config"] or h3["stats"]:
    bad.append("h3 (no hostd) has daemon fields: %r" % h3)
if not d.get("up"):
    bad.append("up is %r" % d.get("up"))
print("; ".join(bad) if bad else "ok: " + ", ".join(
    "%s pid %s" % (k, d["nodes"][k]["pid"]) for k in want))
EOF
)
	info "status: $out"
	[ "${out#ok}" != "$out" ] || fail "status: $out"
	# The host side as lib.sh builds it: MTU with tag room, no TX checksum.
	a=$(ip -n "$L2T-h1" -o link show eth0 | grep -o 'mtu [0-9]*')
	assert_eq "$a" "mtu 1482" "h1 (behind hostd) eth0"
	a=$(ip -n "$L2T-h3" -o link show eth0 | grep -o 'mtu [0-9]*')
	assert_eq "$a" "mtu 1500" "h3 (no hostd) eth0"
	a=$(ip -n "$L2T-h2" -o link show eth0 | grep -o 'mtu [0-9]*')
	assert_eq "$a" "mtu 1478" "h2 (hostd with pcp_from_dscp) eth0"
	assert_eq "$(ip netns exec "$L2T-h1" sysctl -n net.ipv4.tcp_ecn)" 1 "h1 net.ipv4.tcp_ecn (tcp_ecn: 1)"
	assert_eq "$(ip netns exec "$L2T-h1" sysctl -n net.ipv4.tcp_rmem | tr -s '\t ' ' ')" "4096 131072 131072" \
		"h1 net.ipv4.tcp_rmem (tcp_window: 64K)"
	assert_eq "$(ip netns exec "$L2T-h1" sysctl -n net.ipv4.tcp_wmem | tr -s '\t ' ' ')" "4096 16384 131072" \
		"h1 net.ipv4.tcp_wmem (tcp_window: 64K)"
	assert_eq "$(ip netns exec "$L2T-h2" sysctl -n net.ipv4.tcp_ecn)" 2 "h2 net.ipv4.tcp_ecn (the kernel's default)"
	ip netns exec "$L2T-h1" ethtool -k eth0 | grep -q '^tx-checksumming: off' ||
		fail "TX checksum offload is on on h1's eth0"
	# A second up of the running lab is refused and changes nothing.
	out=$(lab up "$TOPO" --rundir "$LABDIR" 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] || fail "a second up exited $rc, expected 1: $out"
	grep -q "looks up already" <<<"$out" || fail "a second up did not say why: $out"
	lab status "$LAB" --rundir "$LABDIR" >/dev/null || fail "the lab is not up after a refused second up"
	ip netns exec "$L2T-h3" ping -c 1 -W 2 "$(addr_of h1)" >/dev/null ||
		fail "ping h3 -> h1 failed after the refused second up"
	return 0
}

t_down() {
	local out rc
	[ -s "$L2T_DIR/lab.pids" ] || skip "no lab was up"
	# A namespace with the lab's prefix that lab.json does not record is
	# someone else's: down leaves it (and says so).
	ip netns add "$L2T-zz" || fail "ip netns add $L2T-zz"
	out=$(lab down "$LAB" --rundir "$LABDIR" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || { ip netns del "$L2T-zz"; fail "down exited $rc: $out"; }
	if ! ip netns list | grep -q "^$L2T-zz\b"; then
		fail "down deleted namespace $L2T-zz, which lab.json does not record"
	fi
	ip netns del "$L2T-zz"
	grep -q "$L2T-zz has the lab's prefix but" <<<"$out" || fail "down did not say it left $L2T-zz: $out"
	lab_gone
	out=$(lab down "$LAB" --rundir "$LABDIR" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || fail "a second down exited $rc: $out"
	info "second down: $(tail -1 <<<"$out" | sed 's/^ *//')"
	# status of a lab that is down: JSON still, exit 1.
	lab status "$LAB" --rundir "$LABDIR" >/dev/null 2>&1 && fail "status exited 0 for a lab that is down"
	return 0
}

# procs_gone PID... (for wait_for): none of the processes runs.
procs_gone() {
	local p
	for p; do
		_l2t_alive "$p" && { echo "$p still runs"; return 1; }
	done
	return 0
}

t_down_after_kill() {
	local out rc pa ph inos saved left
	up_lab
	pa=$(jget "$(cat "$LABDIR/lab.json")" "d['nodes']['A']['pid']")
	ph=$(jget "$(cat "$LABDIR/lab.json")" "d['nodes']['h2']['pid']")
	kill -KILL "$pa" "$ph" || fail "kill -KILL $pa $ph"
	wait_for -q -t 10 "switchd A and hostd h2 to die" procs_gone "$pa" "$ph"
	info "SIGKILLed switchd A (pid $pa) and hostd h2 (pid $ph)"
	# What they saved to restore at their next start (IPv6 switched off on
	# their ports) names each port's namespace by inode.
	inos=$(for ns in $(lab_netns); do stat -L -c %i "/run/netns/$ns"; done | paste -sd'|')
	saved=$(ls /run/l2cc 2>/dev/null | grep -cE "^(ipv6|pause)-($inos)-")
	out=$(lab down "$LABDIR/topology.yaml" --rundir "$LABDIR" 2>&1)
	rc=$?
	[ "$rc" -eq 0 ] || fail "down after SIGKILL exited $rc: $out"
	lab_gone
	left=$(ls /run/l2cc 2>/dev/null | grep -E "^(ipv6|pause)-($inos)-" | tr '\n' ' ')
	[ -z "$left" ] || fail "saved interface state of the deleted namespaces left in /run/l2cc: $left"
	info "saved interface state of the killed daemons: $saved files before down, none after"
	[ "$saved" -gt 0 ] || fail "the killed daemons saved no interface state (nothing for down to remove: the test proves nothing)"
	return 0
}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP needs root" >"$L2T_SETUP_ERR"
fi
run_test lab_broken_topology t_broken
run_test lab_up_ping t_up_ping
run_test lab_down_clean t_down
run_test lab_down_after_kill t_down_after_kill
tests_done
