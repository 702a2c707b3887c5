# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
#
# A small framework for switchd's netns integration tests, in the spirit of
# xdp-tools' test_runner.sh. Source it from a test script:
#
#   . "$(dirname "$0")/lib.sh"
#   t_ping() { ...; [ ... ] || fail "why"; }
#   run_test ping t_ping
#   tests_done
#
# Every run gets a unique prefix ($L2T, "l2t<pid>"): namespaces are named
# "$L2T-NAME", interfaces "$L2T<port>" (<= 15 characters). Everything a run
# makes lives under that prefix and in its temp dir $L2T_DIR, and the EXIT
# trap removes exactly that: the PIDs it started (recorded in $L2T_DIR/pids,
# so processes started inside a test's subshell are found too) and the
# namespaces it created (which takes their veths with them).
#
# A test function runs in a subshell and reports through fail/skip; run_test
# prints "RUN NAME" when it starts it and exactly one result line when it
# ends: "PASS NAME", "FAIL NAME: reason" or "SKIP NAME: reason". Other output
# is indented ("    # ...").
#
# A script ends with tests_done. Its exit status is then 0 (no test failed)
# or 1 (some did); a script that exits before tests_done (an error outside a
# test, a signal) exits with a status of 2 or more and says where it was.
# tests/run.sh counts that, and a RUN without a result, as a failure.
#
# Steady state is waited for, not slept for: wait_for polls a condition,
# wait_stable waits until a reading stops moving, wait_drained until
# daemons' queues are empty and their data frame counters still. A fixed
# sleep is for time that must pass (a run's ramp-up before measuring).
#
# State is kept on disk under deterministic names, not in shell variables, so
# that a daemon started in one test's subshell can be used by the next one:
#   switch NAME  ->  namespace $(ns NAME), $L2T_DIR/NAME.{conf,sock,log,pid,stats}

L2CC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SWITCHD=${SWITCHD:-$L2CC_ROOT/build/bin/switchd}
HOSTD=${HOSTD:-$L2CC_ROOT/build/bin/hostd}
L2CCCTL=${L2CCCTL:-$L2CC_ROOT/build/bin/l2ccctl}
MEASURE_LOCK=${L2CC_MEASURE_LOCK:-/tmp/l2cc-measure.lock}
TEST_TIMEOUT=${L2CC_TEST_TIMEOUT:-120}
# The system interpreter: a pyenv shim costs most of a second per call.
PY=${L2CC_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

L2T=l2t$$
L2T_DIR=$(mktemp -d "/tmp/$L2T.XXXXXX")
L2T_SETUP_ERR=$L2T_DIR/.setup_err
: >"$L2T_DIR/pids"
: >"$L2T_DIR/netns"

# ---- cleanup -------------------------------------------------------------

_l2t_alive() { # pid: running and not a zombie
	kill -0 "$1" 2>/dev/null || return 1
	[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
_l2t_starttime() { # pid -> field 22 of /proc/PID/stat (boot-relative start time)
	sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | awk '{print $20}'
}
# A recorded PID is ours only while its start time still matches: a PID the
# kernel has reused for someone else's process is left alone.
_l2t_ours() { # pid starttime
	[ -n "$2" ] && [ "$(_l2t_starttime "$1")" = "$2" ]
}

_l2t_cleaned=
l2t_cleanup() {
	local pid st n left
	[ -n "$_l2t_cleaned" ] && return 0
	_l2t_cleaned=1
	trap - EXIT INT TERM
	# A test still running (interrupted run): stop it first, so that it
	# starts nothing more while we clean up.
	for pid in ${_l2t_cur_test:-} ${_l2t_cur_wd:-}; do
		kill -TERM "$pid" 2>/dev/null
	done
	# Exactly the PIDs we started, newest first (clients before servers).
	if [ -s "$L2T_DIR/pids" ]; then
		while read -r pid st; do
			_l2t_ours "$pid" "$st" && kill -TERM "$pid" 2>/dev/null
		done < <(tac "$L2T_DIR/pids")
		for _ in $(seq 30); do
			left=
			while read -r pid st; do
				_l2t_ours "$pid" "$st" && _l2t_alive "$pid" && left=1
			done <"$L2T_DIR/pids"
			[ -z "$left" ] && break
			sleep 0.1
		done
		while read -r pid st; do
			_l2t_ours "$pid" "$st" && _l2t_alive "$pid" && kill -KILL "$pid" 2>/dev/null
		done <"$L2T_DIR/pids"
	fi
	# Exactly the namespaces we created (recorded), and anything else that
	# carries this run's prefix.
	for n in $({ cat "$L2T_DIR/netns"; ip netns list 2>/dev/null | awk '{print $1}' | grep "^$L2T-"; } | sort -u); do
		ip netns del "$n" 2>/dev/null
	done
	if [ -n "${L2T_KEEP:-}" ]; then
		echo "    # kept $L2T_DIR" >&2
	else
		rm -rf "$L2T_DIR"
	fi
}

# The exit status says whether the script got to its end (tests_done).
_l2t_done=
_l2t_nfail=0
_l2t_last=
_l2t_cur_name=
_l2t_where() {
	echo "${_l2t_cur_name:+ during test $_l2t_cur_name}${_l2t_last:+ (last result: $_l2t_last)}"
}
_l2t_exit() {
	local rc=$?
	if [ -z "$_l2t_done" ]; then
		echo "    # $(basename "$0") exited with status $rc before tests_done$(_l2t_where)"
		[ "$rc" -le 1 ] && rc=2
	fi
	l2t_cleanup
	exit "$rc"
}
_l2t_signal() { # status, signal
	echo "    # $(basename "$0") stopped by SIG$2$(_l2t_where)"
	l2t_cleanup
	exit "$1"
}
trap '_l2t_exit' EXIT
trap '_l2t_signal 130 INT' INT
trap '_l2t_signal 143 TERM' TERM

# tests_done: the last line of a test script. Exits 0 if no test failed, 1
# otherwise.
tests_done() {
	_l2t_done=1
	[ "$_l2t_nfail" -eq 0 ] && exit 0
	exit 1
}

# ---- results ---------------------------------------------------------------

info() { echo "    # $*"; }

# fail/skip end the current test (they exit its subshell). The reason is
# also written to a file so a fail inside $(...) is not lost.
fail() {
	echo "FAIL $*" >>"$L2T_DIR/.result"
	exit 1
}

skip() {
	echo "SKIP $*" >>"$L2T_DIR/.result"
	exit 77
}

_l2t_watchdog() { # pid, seconds
	local pid=$1 n=$(($2 * 4))
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$n" -le 0 ]; then
			echo "FAIL timed out after $2 s" >>"$L2T_DIR/.result"
			kill -TERM "$pid" 2>/dev/null
			return
		fi
		n=$((n - 1))
		sleep 0.25
	done
}

# run_test NAME FUNCTION [ARGS...]: run FUNCTION in a subshell; print "RUN
# NAME" before and one result line after.
run_test() {
	local name=$1 fn=$2 rc pid wd res line
	shift 2
	rm -f "$L2T_DIR/.result"
	if [ -s "$L2T_SETUP_ERR" ]; then
		res=$(head -1 "$L2T_SETUP_ERR")
		case $res in
		SKIP*) line="SKIP $name: ${res#SKIP }" ;;
		*) line="FAIL $name: setup: ${res#FAIL }" ;;
		esac
	else
		echo "RUN $name"
		_l2t_cur_name=$name
		("$fn" "$@") &
		pid=$!
		_l2t_cur_test=$pid
		_l2t_watchdog "$pid" "$TEST_TIMEOUT" &
		wd=$!
		_l2t_cur_wd=$wd
		wait "$pid"
		rc=$?
		wait "$wd"
		_l2t_cur_test='' _l2t_cur_wd='' _l2t_cur_name=''
		res=
		[ -s "$L2T_DIR/.result" ] && res=$(head -1 "$L2T_DIR/.result")
		case $res in
		FAIL*) line="FAIL $name: ${res#FAIL }" ;;
		SKIP*) line="SKIP $name: ${res#SKIP }" ;;
		*)
			if [ "$rc" -eq 0 ]; then
				line="PASS $name"
			elif [ "$rc" -eq 77 ]; then
				line="SKIP $name: (no reason given)"
			else
				line="FAIL $name: exited with status $rc"
			fi
			;;
		esac
	fi
	echo "$line"
	_l2t_last=$line
	case $line in FAIL*) _l2t_nfail=$((_l2t_nfail + 1)) ;; esac
}

# run_setup FUNCTION: topology and daemons shared by the tests that follow.
# If it fails or skips, every later run_test reports that reason.
run_setup() {
	local fn=$1 rc res
	rm -f "$L2T_DIR/.result"
	("$fn")
	rc=$?
	res=
	[ -s "$L2T_DIR/.result" ] && res=$(head -1 "$L2T_DIR/.result")
	if [ -n "$res" ]; then
		echo "$res" >"$L2T_SETUP_ERR"
	elif [ "$rc" -ne 0 ]; then
		echo "FAIL $fn exited with status $rc" >"$L2T_SETUP_ERR"
	fi
	rm -f "$L2T_DIR/.result"
}

# ---- assertions ----------------------------------------------------------

# assert_ge ACTUAL MIN [WHAT]
assert_ge() {
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2" ||
		fail "${3:-value}: $1 < $2"
}

# assert_le ACTUAL MAX [WHAT]
assert_le() {
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) else 1)' "$1" "$2" ||
		fail "${3:-value}: $1 > $2"
}

# assert_eq ACTUAL EXPECTED [WHAT] (string compare)
assert_eq() {
	[ "$1" = "$2" ] || fail "${3:-value}: '$1' != '$2'"
}

# assert_within PCT EXPECTED ACTUAL [WHAT]: |actual - expected| <= PCT% of expected
assert_within() {
	"$PY" -c 'import sys; p, e, a = map(float, sys.argv[1:4]); sys.exit(0 if abs(a - e) <= p / 100 * abs(e) else 1)' \
		"$1" "$2" "$3" ||
		fail "${4:-value}: $3 is not within $1% of $2 ($("$PY" -c 'import sys; e, a = map(float, sys.argv[1:3]); print("%+.2f%%" % ((a - e) / e * 100))' "$2" "$3"))"
}

# ---- JSON and the control socket -------------------------------------------

# ctl SWITCH CMD [ARGS...]: the daemon's raw one-line JSON reply.
ctl() {
	local sw=$1
	shift
	"$L2CCCTL" -s "$L2T_DIR/$sw.sock" -r -t 3000 "$@"
}

# jget JSON PYEXPR: evaluate PYEXPR with d = the parsed JSON; print the result
# (dicts, lists and booleans as JSON, numbers and strings as is).
jget() {
	"$PY" -c '
import json, sys
d = json.loads(sys.argv[1])
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1" "$2"
}

# calc PYEXPR: a float/int expression, printed.
calc() { "$PY" -c "import sys; print($1)"; }

# ---- waiting for a state ---------------------------------------------------

# Waits poll: they end as soon as the state is reached, and their timeouts
# are generous (a busy 2-core machine, other engineers' labs) because they
# cost nothing when all is well. CMD is a command or shell function that
# succeeds once the state is reached and prints what it saw; it runs in a
# subshell, so it must not call fail (return non-zero instead).

_l2t_us() { # SECONDS (decimal) -> microseconds
	local i=${1%%.*} f=
	[[ $1 == *.* ]] && f=${1#*.}
	f=${f}000000
	echo $((10#${i:-0} * 1000000 + 10#${f:0:6}))
}

# wait_for [-t SECONDS] [-i SECONDS] [-q] WHAT CMD [ARGS...]: run CMD every
# -i seconds (0.05) until it succeeds, for at most -t seconds (30). On a
# timeout the test fails with "timed out after T s waiting for WHAT" and
# CMD's last output; with -q wait_for says so (info) and returns 1, for a
# caller whose assertions then report the figures.
wait_for() {
	_l2t_wait for "$@"
}

# wait_stable [-t SECONDS] [-i SECONDS] [-q] WHAT CMD [ARGS...]: like
# wait_for, until CMD succeeds twice in a row -i seconds (0.1) apart with
# the same output: a reading that has stopped moving.
wait_stable() {
	_l2t_wait stable "$@"
}

_l2t_wait() {
	local mode=$1 timeout=30 interval=0.05 quiet='' what out prev='' have='' start deadline
	shift
	[ "$mode" = stable ] && interval=0.1
	while :; do
		case $1 in
		-t) timeout=$2; shift 2 ;;
		-i) interval=$2; shift 2 ;;
		-q) quiet=1; shift ;;
		*) break ;;
		esac
	done
	what=$1
	shift
	start=${EPOCHREALTIME/./}
	deadline=$((start + $(_l2t_us "$timeout")))
	while :; do
		if out=$("$@" 2>&1); then
			if [ "$mode" = for ] || { [ -n "$have" ] && [ "$out" = "$prev" ]; }; then
				# A slow state is worth a line in the log (a loaded machine?).
				start=$((${EPOCHREALTIME/./} - start))
				[ "$start" -gt 2000000 ] && info "waited $((start / 1000000)).$((start / 100000 % 10)) s for $what"
				return 0
			fi
			have=1
		else
			have=
		fi
		prev=$out
		[ "${EPOCHREALTIME/./}" -ge "$deadline" ] && break
		sleep "$interval"
	done
	out=$(tr '\n' ' ' <<<"$out" | sed 's/ *$//' | cut -c1-400)
	if [ -n "$quiet" ]; then
		info "timed out after $timeout s waiting for $what${out:+ (last: $out)}"
		return 1
	fi
	fail "timed out after $timeout s waiting for $what${out:+ (last: $out)}"
}

# queues_empty NAME...: succeeds when the daemons (switchd: every VOQ and
# input buffer; hostd: every flow's queue) hold no frame, and prints how many
# data frames they have received and sent; else prints what is queued. Data
# frames only: a credit link sends CREDIT frames for as long as it is up.
queues_empty() {
	"$PY" - "$L2CCCTL" "$L2T_DIR" "$@" <<'EOF'
import json, subprocess, sys
ctl, d, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def ask(n, *cmd):
    r = subprocess.run([ctl, "-s", "%s/%s.sock" % (d, n), "-r", "-t", "3000"] + list(cmd),
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("%s: l2ccctl %s: %s" % (n, " ".join(cmd), (r.stderr or r.stdout).strip()))
    return json.loads(r.stdout)
def switch_frames(c):  # data frames: per priority (PAUSE, PFC, CREDIT are not)
    return sum(q["rx_frames"] + q["tx_frames"] for p in c["ports"].values() for q in p["prio"])
def hostd_frames(c):  # the host side, and the notifications on the uplink
    return (c["host"]["rx_frames"] + c["host"]["tx_frames"] +
            sum(c[k] for k in ("fecn_rx", "cnp_tx", "cnp_rx", "ack_tx", "ack_rx")))
busy, seen = [], []
try:
    for n in names:
        switch = open("%s/%s.conf" % (d, n)).readline().strip() == "[switch]"
        if switch:
            q = ask(n, "queues")
            held = ["%s %d frames" % (o["port"], o["frames"]) for o in q["outputs"] if o["frames"]]
            held += ["input %s %s" % (i["port"], i["occupancy"]) for i in q["inputs"] if any(i["occupancy"])]
        else:
            held = ["flow %s %d frames" % (f["key"], f["queue_frames"])
                    for f in ask(n, "flows")["flows"] if f["queue_frames"]]
        if held:
            busy.append("%s queues: %s" % (n, ", ".join(held)))
        else:
            c = ask(n, "counters")
            seen.append("%s %d" % (n, switch_frames(c) if switch else hostd_frames(c)))
except (RuntimeError, OSError, ValueError, KeyError) as e:
    print(e)
    sys.exit(1)
print("; ".join(busy) if busy else "data frames " + ", ".join(seen))
sys.exit(1 if busy else 0)
EOF
}

# wait_drained [-t SECONDS] NAME...: wait until the daemons' queues are
# empty and their frame counters have stopped moving (what was in flight
# between them has arrived): before reading the counters after a run.
wait_drained() {
	local t=30
	[ "$1" = -t ] && { t=$2; shift 2; }
	wait_stable -t "$t" "the queues of $* to drain and their frame counters to stop" queues_empty "$@"
}

# ---- topology --------------------------------------------------------------

ns() { echo "$L2T-$1"; }
ifn() { # port label -> interface name in a switch namespace
	local n="$L2T$1"
	if [ "${#n}" -gt 15 ]; then
		echo "interface name $n is longer than 15 characters" >&2
		return 1
	fi
	echo "$n"
}

_mk_ns() {
	local n
	n=$(ns "$1")
	ip netns add "$n" || fail "ip netns add $n"
	echo "$n" >>"$L2T_DIR/netns"
	ip -n "$n" link set lo up || fail "lo up in $n"
	# No IPv6 autoconfiguration chatter (RS, MLD, DAD) in the counters.
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}
mk_switch() { _mk_ns "$1"; }
mk_host() { _mk_ns "$1"; }

# link_host SWITCH PORT HOST N: veth SWITCH:$(ifn PORT) <-> HOST:eth0 with
# 10.99.0.N/24 on the host, TX checksum offload off on the host side.
link_host() {
	local sw=$1 port=$2 host=$3 addr=$4 pif hns
	pif=$(ifn "$port") || fail "bad port name $port"
	hns=$(ns "$host")
	ip link add "$pif" netns "$(ns "$sw")" type veth peer name eth0 netns "$hns" ||
		fail "veth $sw:$pif - $host:eth0"
	ip -n "$hns" addr add "10.99.0.$addr/24" dev eth0 || fail "address on $host"
	ip netns exec "$hns" ethtool -K eth0 tx off >/dev/null || fail "ethtool tx off on $host"
	ip -n "$hns" link set eth0 up || fail "$host eth0 up"
	ip -n "$(ns "$sw")" link set "$pif" up || fail "$sw $pif up"
}

# mk_star SWITCH N: a switch and hosts h1..hN, host hI on port pI with 10.99.0.I.
mk_star() {
	local sw=$1 n=$2 i
	mk_switch "$sw"
	for i in $(seq "$n"); do
		mk_host "h$i"
		link_host "$sw" "p$i" "h$i" "$i"
	done
}

# link_hd_host SWITCH PORT HOST N: a host behind hostd. In the host's
# namespace: eth0 (10.99.0.N/24, MTU 1482 so the 18-byte l2cc tag fits a
# 1500 fabric, TX checksum offload off) -veth- cc0, and up0 -veth- the
# switch's port. hostd (start_hostd) bridges cc0 and up0.
link_hd_host() {
	local sw=$1 port=$2 host=$3 addr=$4 pif hns
	pif=$(ifn "$port") || fail "bad port name $port"
	hns=$(ns "$host")
	ip -n "$hns" link add eth0 type veth peer name cc0 || fail "veth $host eth0 - cc0"
	ip link add "$pif" netns "$(ns "$sw")" type veth peer name up0 netns "$hns" ||
		fail "veth $sw:$pif - $host:up0"
	ip -n "$hns" link set eth0 mtu 1482 || fail "mtu on $host eth0"
	ip -n "$hns" addr add "10.99.0.$addr/24" dev eth0 || fail "address on $host"
	ip netns exec "$hns" ethtool -K eth0 tx off >/dev/null || fail "ethtool tx off on $host"
	for i in eth0 cc0 up0; do
		ip -n "$hns" link set "$i" up || fail "$host $i up"
	done
	ip -n "$(ns "$sw")" link set "$pif" up || fail "$sw $pif up"
}

# link_switches SWA PORTA SWB PORTB
link_switches() {
	local a b
	a=$(ifn "$2") || fail "bad port name $2"
	b=$(ifn "$4") || fail "bad port name $4"
	ip link add "$a" netns "$(ns "$1")" type veth peer name "$b" netns "$(ns "$3")" ||
		fail "veth $1:$a - $3:$b"
	ip -n "$(ns "$1")" link set "$a" up || fail "$1 $a up"
	ip -n "$(ns "$3")" link set "$b" up || fail "$3 $b up"
}

# law_field HOST PEER FIELD: a field of the law's state of HOST's flow toward
# PEER's host MAC (l2ccctl flows, "law"); fails when there is none.
law_field() {
	local mac
	mac=$(host_mac "$2") || return 1
	jget "$(ctl "$1" flows)" "[f['law']['$3'] for f in d['flows'] if f['key'] == '$mac'][0]"
}

# ---- a tap: a wire tcpdump can listen on ---------------------------------------
#
# Frames an AF_XDP socket sends or receives never pass the kernel's packet
# taps on that interface, so tcpdump on a daemon's port sees nothing. A plain
# Linux bridge between a switch port and a host, with no XDP on it, is a
# wire we can listen on: it forwards unicast (tags, CNP, ACK, CNM) but not
# PAUSE, so a tapped link runs without it.

# tap_link SWITCH PORT HOST: re-plumb HOST's uplink (made by link_hd_host)
# through namespace T: SWITCH:$(ifn PORT) - T:ta | br0 | T:tb - HOST:up0.
# mk_switch T first. The capture functions below listen on ta.
tap_link() {
	local sw=$1 port=$2 host=$3 i
	# (setup may run in a subshell: the probe reads where the tap is from a file)
	echo "$sw $port" >"$L2T_DIR/tap"
	ip -n "$(ns "$sw")" link del "$(ifn "$port")" || fail "unlink $port"
	ip link add "$(ifn "$port")" netns "$(ns "$sw")" type veth peer name ta netns "$(ns T)" ||
		fail "veth $port - ta"
	ip link add up0 netns "$(ns "$host")" type veth peer name tb netns "$(ns T)" ||
		fail "veth up0 - tb"
	ip -n "$(ns T)" link add br0 type bridge || fail "bridge"
	for i in ta tb; do
		ip -n "$(ns T)" link set "$i" master br0 || fail "$i in br0"
		ip -n "$(ns T)" link set "$i" up || fail "$i up"
	done
	ip -n "$(ns T)" link set br0 up || fail "br0 up"
	ip -n "$(ns "$sw")" link set "$(ifn "$port")" up || fail "$port up"
	ip -n "$(ns "$host")" link set up0 up || fail "up0 up"
}

# tap_probe MARK: from the tapped switch port (as the kernel sends it, not
# through switchd) a frame to ta's own address with MARK in its payload and
# an EtherType (0x88B7) no test decodes: the capture on ta sees it arrive,
# the bridge keeps it (it is addressed to ta), and no daemon counts it.
tap_probe() {
	local sw port
	read -r sw port <"$L2T_DIR/tap" || return 1
	hx "$sw" "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(bytes.fromhex(sys.argv[2].replace(":", "")) + bytes.fromhex("020000000001") + b"\x88\xb7" +
       sys.argv[3].encode().ljust(46, b"\0"))
' "$(ifn "$port")" "$(ip -n "$(ns T)" -j link show ta | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])')" "$1"
}

# tap_probe_seen FILE MARK (for wait_for): send a probe, succeed once one is
# in the capture file.
tap_probe_seen() {
	tap_probe "$2" || return 1
	grep -qa "$2" "$1"
}

# tap_capture FILE: tcpdump on ta; its PID in CAP_PID. Returns once the
# capture has seen a probe: tcpdump writes the file header before its socket
# sees traffic. --immediate-mode: libpcap would otherwise hold packets up to
# a second in its ring, and the INT that ends the capture would lose them.
tap_capture() {
	CAP_FILE=$1
	ip netns exec "$(ns T)" tcpdump -i ta --immediate-mode -U -w "$CAP_FILE" -s 256 >/dev/null 2>&1 &
	CAP_PID=$!
	bg_record "$CAP_PID"
	wait_for "tcpdump on ta to capture a probe frame" tap_probe_seen "$CAP_FILE" l2t-probe-start
}

# tap_stop_capture NODE...: once the frames the test waits for have passed
# (the NODEs' queues drained and counters still), a last probe: when it is
# in the file, every frame before it is too. Then stop tcpdump.
tap_stop_capture() {
	wait_drained "$@"
	wait_for "tcpdump on ta to capture the last probe frame" tap_probe_seen "$CAP_FILE" l2t-probe-end
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
}

# tap_ts FILE FILTER FIELDS...: tshark -T fields (tab-separated) with our
# Lua dissector.
tap_ts() {
	local f=$1 filter=$2 e args=()
	shift 2
	for e in "$@"; do args+=(-e "$e"); done
	env -u DISPLAY tshark -o gui.console_open:NEVER -X "lua_script:$L2CC_ROOT/scripts/wireshark/l2cc.lua" \
		-r "$f" -Y "$filter" -T fields "${args[@]}" 2>/dev/null
}

host_mac() { ip -n "$(ns "$1")" -j link show eth0 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["address"])'; }

# hx HOST CMD...: run CMD in a host's (or switch's) namespace.
hx() {
	local h=$1
	shift
	ip netns exec "$(ns "$h")" "$@"
}

# bg_record PID: a process the cleanup must end.
bg_record() { echo "$1 $(_l2t_starttime "$1")" >>"$L2T_DIR/pids"; }

# ---- switchd -----------------------------------------------------------------

# write_config NAME CONFIGTEXT [SECTION]: $L2T_DIR/NAME.conf with a
# [SECTION] (switch) section naming the daemon, its control socket and time
# series; CONFIGTEXT follows (key lines before its first section belong to
# [SECTION]).
write_config() {
	local name=$1 text=$2 section=${3:-switch}
	{
		echo "[$section]"
		echo "name = $name"
		echo "ctl_socket = $L2T_DIR/$name.sock"
		echo "stats_file = $L2T_DIR/$name.stats"
		echo "runtime_dir = $L2T_DIR/run"
		printf '%s\n' "$text"
	} >"$L2T_DIR/$name.conf"
	echo "$L2T_DIR/$name.conf"
}

sw_pid() { cat "$L2T_DIR/$1.pid" 2>/dev/null; }

# _start_daemon BIN SECTION NAME CONFIGTEXT [EXTRA ARGS]: start BIN in
# namespace $(ns NAME) and wait (up to 5 s) until its control socket answers
# (and start it again while an AF_XDP queue is still busy, up to 10 times).
# Skips the test when the kernel lacks AF_XDP/XDP, fails (with the log)
# otherwise.
_start_daemon() {
	local bin=$1 section=$2 name=$3 text=$4 conf pid log n0 try
	shift 4
	conf=$(write_config "$name" "$text" "$section")
	log=$L2T_DIR/$name.log
	for try in $(seq 10); do
		n0=0
		[ -f "$log" ] && n0=$(wc -l <"$log")
		ip netns exec "$(ns "$name")" "$bin" -c "$conf" "$@" >>"$log" 2>&1 &
		pid=$!
		bg_record "$pid"
		echo "$pid" >"$L2T_DIR/$name.pid"
		for _ in $(seq 100); do
			_l2t_alive "$pid" || break
			if ctl "$name" status >/dev/null 2>&1; then
				return 0
			fi
			sleep 0.05
		done
		# Just after a daemon on the same interfaces exited, the kernel may
		# not have freed its AF_XDP sockets' queues yet (that is deferred
		# work) and a new bind fails with EBUSY: start again a moment later.
		_l2t_alive "$pid" && break
		[ "$try" -lt 10 ] || break
		tail -n "+$((n0 + 1))" "$log" | grep -Eq "(AF_XDP socket|XDP program).*Device or resource busy" || break
		info "$(basename "$bin") $name: start $try: an AF_XDP queue or XDP hook is still busy (the kernel releases the previous daemon's after its exit); again in 0.2 s"
		sleep 0.2
	done
	if grep -Eq "(AF_XDP socket|load XDP program|attach XDP program).*: (Address family not supported|Operation not supported|Function not implemented)" "$log"; then
		skip "AF_XDP/XDP unsupported here: $(grep -Em1 'AF_XDP socket|XDP program' "$log")"
	fi
	echo "    # $(basename "$bin") $name did not come up; its log:" >&2
	sed 's/^/    #   /' "$log" >&2
	if _l2t_alive "$pid"; then
		kill -TERM "$pid"
		fail "$(basename "$bin") $name did not answer on its control socket within 5 s: $(tail -1 "$log")"
	fi
	fail "$(basename "$bin") $name exited at start: $(tail -1 "$log")"
}

# start_switchd NAME CONFIGTEXT [EXTRA ARGS]: switchd in $(ns NAME).
start_switchd() {
	local name=$1 text=$2
	shift 2
	_start_daemon "$SWITCHD" switch "$name" "$text" "$@"
}

# start_hostd HOST CONFIGTEXT [EXTRA ARGS]: hostd in the host's namespace
# between cc0 and up0 (see link_hd_host); CONFIGTEXT adds [hostd] keys and
# sections ([law], [rate NAME]).
start_hostd() {
	local name=$1 text=$2
	shift 2
	_start_daemon "$HOSTD" hostd "$name" "host_port = cc0
uplink = up0
$text" "$@"
}

# stop_switchd NAME [SIGNAL] (also for hostd): send SIGNAL (TERM) and wait up to 5 s for the
# exit. Sets SW_RC to the exit status when the daemon is a child of this
# shell (started by the same test), else to "unknown"; returns 1 if it did
# not exit. Do not call it inside $(...): a subshell cannot wait for it.
stop_switchd() {
	local name=$1 sig=${2:-TERM} pid
	SW_RC=unknown
	pid=$(sw_pid "$name")
	[ -n "$pid" ] || return 1
	kill "-$sig" "$pid" 2>/dev/null || return 1
	for _ in $(seq 100); do
		_l2t_alive "$pid" || break
		sleep 0.05
	done
	_l2t_alive "$pid" && return 1
	wait "$pid" 2>/dev/null
	SW_RC=$?
	[ "$SW_RC" -eq 127 ] && SW_RC=unknown
	return 0
}

# ---- traffic ---------------------------------------------------------------

# iperf_server HOST PORT: a one-shot iperf3 server (JSON into
# $L2T_DIR/iperf-HOST-PORT.json), waits until it listens.
iperf_server() {
	local host=$1 port=$2 pid
	ip netns exec "$(ns "$host")" iperf3 -s -1 -p "$port" -J >"$L2T_DIR/iperf-$host-$port.json" 2>&1 &
	pid=$!
	bg_record "$pid"
	echo "$pid" >"$L2T_DIR/iperf-$host-$port.pid"
	for _ in $(seq 100); do
		ip netns exec "$(ns "$host")" ss -Hltn "sport = :$port" | grep -q . && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "iperf3 server on $host:$port did not start: $(cat "$L2T_DIR/iperf-$host-$port.json")"
}

# iperf_server_wait HOST PORT: wait (up to 10 s) for the one-shot server to
# finish writing its JSON.
iperf_server_wait() {
	local pid
	pid=$(cat "$L2T_DIR/iperf-$1-$2.pid")
	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# iperf_client_bg HOST SERVER_N PORT OUTFILE ARGS...: iperf3 -c 10.99.0.SERVER_N
# in the background; its PID is left in CLI_PID (wait "$CLI_PID"). Not
# inside $(...): the client must be a child of the calling shell.
iperf_client_bg() {
	local host=$1 dst=$2 port=$3 out=$4
	shift 4
	timeout 60 ip netns exec "$(ns "$host")" iperf3 -c "10.99.0.$dst" -p "$port" -J "$@" >"$out" 2>&1 &
	CLI_PID=$!
	bg_record "$CLI_PID"
}

# tcp_bps SRC DST_N PORT: a 3 s iperf3 TCP run SRC -> 10.99.0.DST_N under
# the measure lock (a server on hDST_N:PORT, started here); the received
# bit/s in TCP_BPS, or the test fails. Not inside $(...): the server must
# be recorded, and a failure must end the test, in the calling shell.
tcp_bps() {
	local src=$1 dst=$2 port=$3 out="$L2T_DIR/tcp-$1-$2-$3.json" bps
	iperf_server "h$dst" "$port"
	measure_lock
	timeout 30 ip netns exec "$(ns "$src")" iperf3 -c "10.99.0.$dst" -p "$port" -t 3 -J >"$out" 2>&1
	measure_unlock
	bps=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' \
		"$out" 2>/dev/null) || fail "iperf3 TCP $src -> h$dst failed: $(head -c 300 "$out")"
	iperf_server_wait "h$dst" "$port"
	TCP_BPS=$bps
}

# ---- measurements ----------------------------------------------------------

# Time-sensitive sections take this lock so that another engineer's benchmark
# running at the same time does not skew them (and ours do not skew theirs).
# measure_lock waits up to 240 s; when it cannot get the lock it says so and
# goes on (the figures printed then carry the note).
measure_lock() {
	exec 9>"$MEASURE_LOCK"
	if ! flock -w 240 9; then
		info "WARNING: could not take $MEASURE_LOCK in 240 s; measuring unlocked"
	fi
}
measure_unlock() {
	flock -u 9 2>/dev/null
	exec 9>&-
}

# port_rate SWITCH PORT SECONDS [FIELD]: bit/s of FIELD (tx_bytes) of a port
# over SECONDS, from two counter reads; time taken around each read.
port_rate() {
	"$PY" - "$L2CCCTL" "$L2T_DIR/$1.sock" "$2" "$3" "${4:-tx_bytes}" <<'EOF'
import json, subprocess, sys, time
ctl, sock, port, secs, field = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
def read():
    t0 = time.monotonic()
    out = subprocess.run([ctl, "-s", sock, "-r", "counters", port], check=True,
                         capture_output=True, text=True).stdout
    t1 = time.monotonic()
    return (t0 + t1) / 2, json.loads(out)["ports"][port][field]
ta, a = read()
time.sleep(secs)
tb, b = read()
print((b - a) * 8 / (tb - ta))
EOF
}

# mbps BITS_PER_SECOND: "123.45"
mbps() { calc "'%.2f' % (float('$1') / 1e6)"; }

# ---- starvation: a shortfall the machine explains is a SKIP, not a FAIL ----
#
# On a shared 2-core machine a daemon that is runnable but waits for a CPU
# falls behind its rate: a pacer can lose by waiting, never gain. The
# scheduler counts that wait per thread (/proc/PID/task/*/schedstat, second
# field: run-queue delay in ns). A rate check that comes up short is tried
# once more; if it is short again and one of the processes on the path
# waited for a CPU at least as long as the shortfall lasted (shortfall /
# expected x window) — its run-queue wait plus the time the hypervisor
# stole from each vCPU meanwhile (steal, which the guest's scheduler counts
# as running) — the test is a SKIP that gives the figures. A shortfall
# that no wait explains still FAILs, busy machine or not: a pacer that runs
# at half speed is caught whenever its process waited less than half the
# window (t_rate_breakage in test_switch_rate.sh checks exactly that). The
# rule counts every wait, also those shorter than a pacer's burst allowance
# (which cost it nothing), so it errs toward SKIP, never toward PASS.

# run_delay_ns PID: nanoseconds PID's threads (and its children's, for a
# wrapper such as timeout) have spent runnable but not running.
run_delay_ns() {
	local p=$1 f a b c s=0 kids k
	for f in /proc/"$p"/task/*/schedstat; do
		read -r a b c 2>/dev/null <"$f" && s=$((s + b))
	done
	kids=$(cat /proc/"$p"/task/*/children 2>/dev/null)
	for k in $kids; do s=$((s + $(run_delay_ns "$k"))); done
	echo "$s"
}

# steal_ticks: the machine's steal time so far (/proc/stat, all CPUs, in
# clock ticks): time the hypervisor ran something else on our vCPUs. A
# process on a stolen vCPU is "running" for the guest's scheduler, so its
# run-queue delay does not show it.
steal_ticks() { awk '/^cpu /{print $9; exit}' /proc/stat; }

# starve_begin NAME=PID...: start a window over these processes (a daemon's
# name and PID, an iperf3 client's label and PID).
starve_begin() {
	local x
	_starve=() _starve_d0=()
	for x in "$@"; do
		_starve+=("$x")
		_starve_d0+=("$(run_delay_ns "${x#*=}")")
	done
	_starve_steal0=$(steal_ticks)
	_starve_t0=$(date +%s%N)
}

# starve_end: end the window; sets STARVE_S (the longest wait of one of the
# processes, plus what the hypervisor took of each vCPU meanwhile, in s),
# STARVE_WHO (which), STARVE_WIN (the window, s) and STARVE_TXT (every
# process's wait and the steal, for the log). Steal is added, not compared:
# a process loses its run-queue wait and its vCPU's stolen time both.
starve_end() {
	local i d best=0 who=- txt= steal
	for i in "${!_starve[@]}"; do
		d=$(($(run_delay_ns "${_starve[$i]#*=}") - ${_starve_d0[$i]}))
		[ "$d" -lt 0 ] && d=0
		txt="$txt ${_starve[$i]%%=*} $((d / 1000000)) ms"
		[ "$d" -gt "$best" ] && best=$d who=${_starve[$i]%%=*}
	done
	STARVE_WIN=$(calc "'%.3f' % (($(date +%s%N) - $_starve_t0) / 1e9)")
	# Per vCPU, in s: ticks over all CPUs / CLK_TCK / CPUs.
	steal=$(calc "'%.3f' % (max(0, $(steal_ticks) - $_starve_steal0) / $(getconf CLK_TCK) / $(nproc))")
	STARVE_S=$(calc "'%.3f' % ($best / 1e9 + $steal)")
	STARVE_WHO=$who
	STARVE_TXT="waited for a CPU in ${STARVE_WIN} s:${txt:- nothing measured}; the hypervisor took ${steal} s of each vCPU (steal)"
}

# starved EXPECTED ACTUAL: true when the last window's longest wait covers
# ACTUAL's shortfall below EXPECTED (both rates, or any figures that scale
# with the time a process ran).
starved() {
	calc "(1 - float('$2') / float('$1')) * $STARVE_WIN <= $STARVE_S" | grep -q True
}

# short_or_starved WHAT EXPECTED ACTUAL: after a check came up short twice,
# SKIP with the figures when waiting for a CPU explains it, else FAIL.
short_or_starved() {
	local short
	short=$(calc "'%.3f' % ((1 - float('$3') / float('$2')) * $STARVE_WIN)")
	if starved "$2" "$3"; then
		skip "$1: $3 short of $2 by ${short} s of ${STARVE_WIN} s, and $STARVE_WHO waited ${STARVE_S} s for a CPU, steal included (the machine is busy; $STARVE_TXT)"
	fi
	fail "$1: $3 short of $2 by ${short} s of ${STARVE_WIN} s, more than any process waited for a CPU, steal included (longest: $STARVE_WHO ${STARVE_S} s; $STARVE_TXT)"
}
