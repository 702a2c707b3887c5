# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
#
# What scripts/bench.sh and scripts/bench_hostd.sh share: messages, cleanup
# of exactly the PIDs they started and the namespaces they made, the
# measurement lock, and the steps of a run (namespaces, a daemon's control
# socket, an iperf3 one-shot server). Sourced from the repository root,
# after the script set:
#   BENCH_TAG   the prefix of its messages ("bench", "bench-hostd")
#   B           the build directory
#   DIR         its temp dir (holds the "pids" file; removed at exit unless
#               BENCH_KEEP is set)
#   IP2         the address the iperf3 server binds

# shellcheck disable=SC2034  # used by the scripts that source this file
L2CCCTL=$B/bin/l2ccctl
LOCK=${L2CC_MEASURE_LOCK:-/tmp/l2cc-measure.lock}
# The system interpreter: a pyenv shim costs a second or two per call on a
# busy machine, and a configuration's measurements make half a dozen.
PY=${L2CC_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
NETNS_MADE=()

say() { echo "$BENCH_TAG: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

hx() { local n=$1; shift; ip netns exec "$n" "$@"; }

# ---- cleanup: exactly the PIDs we started and the namespaces we made -------

starttime() { sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'; }
# A recorded PID is ours only while its start time still matches.
ours() { [ -n "$2" ] && [ "$(starttime "$1")" = "$2" ]; }
record_pid() { echo "$1 $(starttime "$1")" >>"$DIR/pids"; }

# stop_pid PID: TERM, wait up to 5 s, then KILL (only if it is still ours).
stop_pid() {
	local pid=$1 st
	[ -n "$pid" ] || return 0
	st=$(awk -v p="$pid" '$1 == p { s = $2 } END { print s }' "$DIR/pids")
	if ! ours "$pid" "$st"; then
		wait "$pid" 2>/dev/null
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" = Z ] && break
		sleep 0.1
	done
	ours "$pid" "$st" && kill -0 "$pid" 2>/dev/null &&
		[ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ] && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

cleaned=
cleanup() {
	local pid st n
	[ -n "$cleaned" ] && return 0
	cleaned=1
	trap - EXIT INT TERM
	while read -r pid st; do
		ours "$pid" "$st" && stop_pid "$pid"
	done < <(tac "$DIR/pids" 2>/dev/null)
	for n in "${NETNS_MADE[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	if [ -n "${BENCH_KEEP:-}" ]; then
		say "kept $DIR"
	else
		rm -rf "$DIR"
	fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# ---- the steps of a run ----------------------------------------------------------

# netns_add NAME: a namespace with lo up, deleted by cleanup
netns_add() {
	ip netns add "$1" || die "ip netns add $1"
	NETNS_MADE+=("$1")
	ip -n "$1" link set lo up || die "lo up in $1"
}

# ping_ready NS IP: the path from NS to IP works (ARP, FDB learning) within
# about 5 s, before we measure
ping_ready() {
	for _ in $(seq 20); do
		hx "$1" ping -c 1 -W 1 -q "$2" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	return 1
}

# wait_ctl NAME PID SOCK LOG [LINES]: wait up to 5 s for the daemon NAME
# (PID) to answer on its control socket SOCK; if it exits or does not
# answer, show its LOG (the last LINES lines, or all of it) and die.
wait_ctl() {
	local name=$1 pid=$2 sock=$3 log=$4 lines=${5:-}
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || { show_log "$log" "$lines"; die "$name exited"; }
		"$L2CCCTL" -s "$sock" -r status >/dev/null 2>&1 && break
		sleep 0.05
	done
	"$L2CCCTL" -s "$sock" -r status >/dev/null 2>&1 ||
		{ show_log "$log" "$lines"; die "$name did not answer on its control socket"; }
}
show_log() {
	if [ -n "$2" ]; then tail -"$2" "$1" >&2; else cat "$1" >&2; fi
}

# take_lock: run inside `{ ...; } 9>"$LOCK"`; waits up to 240 s for other
# engineers' timing-sensitive runs, then measures anyway
take_lock() {
	flock -w 240 9 || say "WARNING: could not take $LOCK in 240 s; measuring unlocked"
}

# iperf_server NS OUT: a one-shot iperf3 server on $IP2:5201 in NS (JSON in
# OUT), listening when this returns; its PID in IPERF_SPID. It does not
# inherit the lock's fd 9.
iperf_server() {
	ip netns exec "$1" iperf3 -s -1 -B "$IP2" -p 5201 -J >"$2" 2>&1 9>&- &
	IPERF_SPID=$!
	record_pid "$IPERF_SPID"
	for _ in $(seq 100); do
		hx "$1" ss -Hltn "sport = :5201" | grep -q . && break
		kill -0 "$IPERF_SPID" 2>/dev/null || break
		sleep 0.05
	done
}

# iperf_server_end PID: the one-shot server ends with the test; stop it if not
iperf_server_end() {
	for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	stop_pid "$1"
}
