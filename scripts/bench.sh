#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `make bench`: switchd against the Linux bridge, the minimal copy-mode AF_XDP
# forwarder and the pure-XDP devmap redirect, like for like, on one topology:
#
#   h1 (eth0 10.98.0.1) ──veth── p1 [sw] p2 ──veth── h2 (eth0 10.98.0.2)
#
# Configurations, measured one after the other (each torn down before the next):
#   switchd      switchd, no rate limit, ports role=host flow_control=none
#   switchd-busy the same with busy_poll = 50us
#   switchd-xdp  switchd's pure-XDP forwarding mode (its block writes
#                switchd-xdp.res; until it exists, its RATIO line says nan)
#   bridge       Linux bridge in sw
#   xdp_fwd      XDP devmap redirect (build/bench/xdp_fwd_load)
#   afxdp_min    the minimal shared-UMEM copy-mode AF_XDP forwarder
#                (build/bench/afxdp_min): the ceiling of the copy-mode path,
#                with nothing of ours on it
#   bridge+offl  reference: the Linux bridge with default offloads
# All but the last run with TX checksum offload off on the host veths (as
# AF_XDP needs); the last one with the veth defaults.
#
# Per configuration: ping RTT (200 pings, 5 ms apart; the median of the
# replies), iperf3 TCP (one stream, 5 s, receiver Gbit/s), and iperf3 UDP with
# 18-byte payloads (60-byte frames = 64 with FCS, -b 0, 5 s): packets
# delivered per second at the receiver and the loss; during the UDP test the
# machine's busy CPU time (/proc/stat, all cores,
# user+nice+system+irq+softirq) per delivered frame, and for the forwarding
# process (switchd, afxdp_min) its own CPU (utime+stime) per frame and % of
# one core. Also shown, to read the numbers on a shared machine: how much of
# the loss h2's UDP socket dropped, the frames the forwarder got to h2 per
# second, our share of the CPU (bench_us/fr) and the other users' load
# (others%).
# Ends with three lines (nan where a configuration is missing):
#   RATIO switchd/bridge tcp=<x> udp64=<y> cpu_us_per_frame=<z>
#   RATIO switchd/afxdp_min tcp=<x> udp64=<y> daemon_us_per_frame=<d> rtt_added_us=<r>
#   RATIO switchd-xdp/xdp_fwd tcp=<x> udp64=<y>
# (switchd with its defaults over the offloads-off bridge, over the minimal
# forwarder, and the pure-XDP mode over the devmap redirect; d is switchd's
# own CPU per frame, r its median RTT minus afxdp_min's). Against afxdp_min,
# udp64 and d count the frames each forwarder got to h2's eth0 (fwd_pps), not
# those h2's socket then delivered: on two cores the faster forwarder leaves
# h2's receiver less CPU, so delivered frames would rank it last. Numbers never fail
# the run; it exits non-zero only when something cannot be set up.
#
# Each configuration's measurements hold /tmp/l2cc-measure.lock (flock) so
# timing-sensitive runs of other engineers do not overlap with ours.
#
# Environment:
#   BENCH_RUNS=N      best of N for the TCP and UDP tests (default 2)
#   BENCH_SECONDS=S   iperf3 duration (default 5)
#   BENCH_ONLY="switchd switchd-busy switchd-xdp bridge xdp_fwd afxdp_min bridge+offl"
#                     subset (each RATIO line needs its two configurations)
#   BENCH_PERF=1      after switchd's measurement, profile it during one more
#                     UDP run (perf record -g), report in build/bench/perf-switchd.txt
#   BENCH_KEEP=1      keep the temp dir (configs, logs, iperf3 JSON)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD

B=$ROOT/build
SWITCHD=$B/bin/switchd
LOADER=$B/bench/xdp_fwd_load
AFXDP_MIN=$B/bench/afxdp_min
RUNS=${BENCH_RUNS:-2}
SECS=${BENCH_SECONDS:-5}
ONLY=${BENCH_ONLY:-"switchd switchd-busy switchd-xdp bridge xdp_fwd afxdp_min bridge+offl"}
HZ=$(getconf CLK_TCK)

P=l2b$$
H1=$P-h1 SW=$P-sw H2=$P-h2
IP1=10.98.0.1 IP2=10.98.0.2
DIR=$(mktemp -d "/tmp/$P.XXXXXX")
: >"$DIR/pids"

BENCH_TAG=bench
# say, die, hx, record_pid, stop_pid, the cleanup at exit, and the steps
# shared with bench_hostd.sh
# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

# ---- prerequisites -----------------------------------------------------------

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP)"
for t in ip ethtool iperf3 ping flock "$PY" ss; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
for f in "$SWITCHD" "$L2CCCTL" "$LOADER" "$AFXDP_MIN"; do
	[ -x "$f" ] || die "$f missing: run make first"
done

# ---- topology ------------------------------------------------------------------

for n in "$H1" "$SW" "$H2"; do netns_add "$n"; done
ip -n "$H1" link add eth0 type veth peer name p1 netns "$SW" || die "veth h1:eth0 - sw:p1"
ip -n "$H2" link add eth0 type veth peer name p2 netns "$SW" || die "veth h2:eth0 - sw:p2"
ip -n "$H1" addr add "$IP1/24" dev eth0 || die "address on h1"
ip -n "$H2" addr add "$IP2/24" dev eth0 || die "address on h2"
for n in "$H1" "$H2"; do ip -n "$n" link set eth0 up || die "eth0 up in $n"; done
for i in p1 p2; do ip -n "$SW" link set "$i" up || die "$i up in sw"; done

# offloads on|off: TX checksum offload (and what depends on it) of the host veths.
offloads() {
	local n
	for n in "$H1" "$H2"; do
		hx "$n" ethtool -K eth0 tx "$1" >/dev/null 2>&1 || die "ethtool -K eth0 tx $1 in $n"
	done
}

# no XDP program may be left on any veth between configurations: one that a
# configuration left behind is reported and removed
check_no_xdp() {
	local n i
	for n in "$H1:eth0" "$H2:eth0" "$SW:p1" "$SW:p2"; do
		i=${n#*:}
		ip -n "${n%%:*}" link show dev "$i" | grep -q ' xdp' || continue
		say "WARNING: an XDP program is still attached to $n after teardown; removing it"
		ip -n "${n%%:*}" link set dev "$i" xdp off 2>/dev/null
		ip -n "${n%%:*}" link set dev "$i" xdpgeneric off 2>/dev/null
		ip -n "${n%%:*}" link show dev "$i" | grep -q ' xdp' &&
			die "cannot remove the XDP program from $n"
	done
}

# wait_ping: the path works (ARP, FDB learning) before we measure
wait_ping() { ping_ready "$H1" "$IP2" || die "$1: no ping from h1 to h2"; }

# ---- configurations --------------------------------------------------------------

SW_PID=
up_switchd() {
	local conf=$DIR/switchd.conf log=$DIR/switchd.log
	cat >"$conf" <<EOF
[switch]
name = bench
ctl_socket = $DIR/switchd.sock

[port p1]
ifname = p1
role = host
flow_control = none

[port p2]
ifname = p2
role = host
flow_control = none
EOF
	# BENCH_SWITCHD_SET="switch.busy_poll=50us ..." tries settings without editing this file.
	local -a set=()
	for kv in ${BENCH_SWITCHD_SET:-} "$@"; do set+=(-o "$kv"); done
	ip netns exec "$SW" "$SWITCHD" -c "$conf" "${set[@]}" >"$log" 2>&1 &
	SW_PID=$!
	record_pid "$SW_PID"
	wait_ctl switchd "$SW_PID" "$DIR/switchd.sock" "$log"
	wait_ping switchd
}
down_switchd() { stop_pid "$SW_PID"; SW_PID=; }

up_bridge() {
	ip -n "$SW" link add br0 type bridge || die "bridge br0"
	ip -n "$SW" link set p1 master br0 || die "p1 into br0"
	ip -n "$SW" link set p2 master br0 || die "p2 into br0"
	ip -n "$SW" link set br0 up || die "br0 up"
	wait_ping bridge
}
down_bridge() { ip -n "$SW" link del br0 2>/dev/null; }

# wait_ready NAME PID OUT: the test program PID printed "ready" to OUT
# within 5 s, or die
wait_ready() {
	for _ in $(seq 100); do
		grep -q '^ready' "$3" && return 0
		kill -0 "$2" 2>/dev/null || { cat "$3" >&2; die "$1 exited"; }
		sleep 0.05
	done
	cat "$3" >&2
	die "$1 not ready in 5 s"
}

LD_PID=
up_xdp_fwd() {
	local out=$DIR/xdp_fwd_load.out
	ip netns exec "$SW" "$LOADER" --pass "$H1:eth0" --pass "$H2:eth0" p1 p2 >"$out" 2>&1 &
	LD_PID=$!
	record_pid "$LD_PID"
	wait_ready xdp_fwd_load "$LD_PID" "$out"
	wait_ping xdp_fwd
}
down_xdp_fwd() { stop_pid "$LD_PID"; LD_PID=; }

AX_PID=
up_afxdp_min() {
	local out=$DIR/afxdp_min.out
	ip netns exec "$SW" "$AFXDP_MIN" p1 p2 >"$out" 2>&1 &
	AX_PID=$!
	record_pid "$AX_PID"
	wait_ready afxdp_min "$AX_PID" "$out"
	wait_ping afxdp_min
}
# at exit it prints the frames it forwarded: said, as a check that it did
down_afxdp_min() {
	stop_pid "$AX_PID"
	AX_PID=
	say "afxdp_min: $(tail -1 "$DIR/afxdp_min.out")"
}

# ---- measurements ------------------------------------------------------------------

# iperf_run OUT ARGS...: one-shot server in h2, client in h1 (JSON in OUT)
iperf_run() {
	local out=$1 spid cpid
	shift
	iperf_server "$H2" "$out.server"
	spid=$IPERF_SPID
	# in the background and waited for, so a TERM/INT runs the cleanup at once
	timeout $((SECS + 15)) ip netns exec "$H1" iperf3 -c "$IP2" -p 5201 -t "$SECS" -J "$@" >"$out" 2>&1 &
	cpid=$!
	record_pid "$cpid"
	wait "$cpid"
	iperf_server_end "$spid"
}

# snap OUT [PID]: one line of CPU counters for cpu_calc:
#   wall_s  machine_busy  machine_kernel (system+irq+softirq, USER_HZ ticks)
#   children_user_s (this shell's reaped children: the iperf3s)  pid_utime  pid_stime
# `times` runs in this shell (no pipe, no subshell) so it sees our children.
snap() {
	local out=$1 pid=${2:-} t u
	times >"$DIR/times"
	t=$(sed -n 2p "$DIR/times")
	u=${t%% *}
	u=$(awk -v x="$u" 'BEGIN { split(x, a, /[ms]/); print a[1] * 60 + a[2] }')
	{
		date +%s.%N | tr '\n' ' '
		awk '/^cpu /{ printf "%d %d ", $2 + $3 + $4 + $7 + $8, $4 + $7 + $8; exit }' /proc/stat
		printf '%s ' "$u"
		if [ -n "$pid" ] && [ -r "/proc/$pid/stat" ]; then
			sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12, $13 }'
		else
			echo "- -"
		fi
	} >"$out"
}

# cpu_calc BEFORE AFTER FRAMES: "machine_us/frame bench_us/frame others% daemon_us/frame daemon%"
#   machine: all busy CPU of the machine (as specified; includes other users' load)
#   bench:   system+irq+softirq of the machine + user time of the iperf3s and the
#            daemon, i.e. an estimate of our share when others are busy (their
#            fuzzers and tests are mostly user time)
#   others:  the rest of the machine's busy time, % of all cores
cpu_calc() {
	"$PY" - "$1" "$2" "$3" "$HZ" "$(nproc)" <<'EOF'
import sys
a = open(sys.argv[1]).read().split()
b = open(sys.argv[2]).read().split()
frames, hz, ncpu = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
wall = float(b[0]) - float(a[0])
busy = (int(b[1]) - int(a[1])) / hz
kern = (int(b[2]) - int(a[2])) / hz
cuser = float(b[3]) - float(a[3])
if a[4] != "-" and b[4] != "-":
    dut, dst = (int(b[4]) - int(a[4])) / hz, (int(b[5]) - int(a[5])) / hz
else:
    dut = dst = None
bench = kern + cuser + (dut or 0.0)
others = max(0.0, busy - bench) / (wall * ncpu) * 100 if wall > 0 else float("nan")
f = lambda x: "%.3f" % (x * 1e6 / frames) if frames > 0 else "nan"
out = [f(busy), f(bench), "%.0f" % others]
out += [f(dut + dst), "%.0f" % ((dut + dst) / wall * 100)] if dut is not None else ["-", "-"]
print(" ".join(out))
EOF
}

# tcp_gbps OUT: receiver Gbit/s, or "nan"
tcp_gbps() {
	"$PY" - "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print("%.3f" % (d["end"]["sum_received"]["bits_per_second"] / 1e9))
except Exception:
    print("nan")
EOF
}

# udp_rcvbuf_errors: h2's UDP RcvbufErrors (datagrams its sockets had no room for)
udp_rcvbuf_errors() {
	hx "$H2" awk '/^Udp:/ { if (n++) { print $6; exit } }' /proc/net/snmp
}

# h2_rx_packets: frames that reached h2's eth0 (whatever its socket then did)
h2_rx_packets() { hx "$H2" cat /sys/class/net/eth0/statistics/rx_packets; }

# udp_stats OUT RCVBUF_ERRORS H2_RX: "pps loss% rxsock% fwd_pps received" at the
# receiver (the server's report); rxsock% = the part of the loss that h2's
# socket dropped; fwd_pps = frames the forwarder got to h2's eth0 per second
udp_stats() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    s = d["end"]["sum"]
    got = s["packets"] - s["lost_packets"]
    sock = 100.0 * int(sys.argv[2]) / s["packets"] if s["packets"] else float("nan")
    print("%.0f %.2f %.2f %.0f %d" % (got / s["seconds"], s["lost_percent"], sock,
                                      int(sys.argv[3]) / s["seconds"], got))
except Exception:
    print("nan nan nan nan 0")
EOF
}

# ctl_dump OUT: switchd's counters and status (kept for diagnosis with BENCH_KEEP)
ctl_dump() {
	{
		"$L2CCCTL" -s "$DIR/switchd.sock" -r counters
		"$L2CCCTL" -s "$DIR/switchd.sock" -r status
	} >"$1" 2>&1
}

# median_rtt_us: the median of the replies' time= in ping's output on stdin,
# in microseconds ("nan" without a reply). The median, not ping's average: a
# few replies delayed by other users' load on a shared machine move the mean.
median_rtt_us() {
	"$PY" -c '
import re, statistics, sys
t = [float(m.group(1)) for m in re.finditer(r"time=([0-9.]+) ms", sys.stdin.read())]
print("%.0f" % (statistics.median(t) * 1000) if t else "nan")'
}

# measure NAME [PID]: ping, TCP, UDP (+CPU of process PID) into $DIR/NAME.res:
#   tcp_gbps pps loss% rxsock% fwd_pps rtt_us machine_us/frame bench_us/frame others% daemon_us/frame daemon%
measure() {
	local name=$1 pid=${2:-} r best_tcp=nan best_pps=-1 tcp pps loss sock got rtt out e0 e1
	local x0 x1 fwd udp_line="nan nan nan nan" cpu_line="nan nan nan - -"
	{
		take_lock
		rtt=$(hx "$H1" ping -c 200 -i 0.005 "$IP2" 2>/dev/null | median_rtt_us)
		for r in $(seq "$RUNS"); do
			out=$DIR/$name-tcp$r.json
			iperf_run "$out"
			tcp=$(tcp_gbps "$out")
			[ "$tcp" = nan ] && say "$name: TCP run $r failed: $(head -c 300 "$out")"
			best_tcp=$("$PY" -c 'import sys,math; a,b=(float(x) for x in sys.argv[1:]); print(b if math.isnan(a) or b>a else a)' "$best_tcp" "$tcp")
		done
		for r in $(seq "$RUNS"); do
			out=$DIR/$name-udp$r.json
			[ -S "$DIR/switchd.sock" ] && ctl_dump "$DIR/$name-udp$r.counters0"
			e0=$(udp_rcvbuf_errors); x0=$(h2_rx_packets)
			snap "$DIR/$name-udp$r.cpu0" "$pid"
			iperf_run "$out" -u -l 18 -b 0
			snap "$DIR/$name-udp$r.cpu1" "$pid"
			e1=$(udp_rcvbuf_errors); x1=$(h2_rx_packets)
			[ -S "$DIR/switchd.sock" ] && ctl_dump "$DIR/$name-udp$r.counters1"
			read -r pps loss sock fwd got <<<"$(udp_stats "$out" "$((e1 - e0))" "$((x1 - x0))")"
			[ "$pps" = nan ] && say "$name: UDP run $r failed: $(head -c 300 "$out")"
			if [ "$pps" != nan ] && [ "$pps" -gt "$best_pps" ]; then
				best_pps=$pps
				udp_line="$pps $loss $sock $fwd"
				cpu_line=$(cpu_calc "$DIR/$name-udp$r.cpu0" "$DIR/$name-udp$r.cpu1" "$got")
			fi
		done
	} 9>"$LOCK"
	echo "$best_tcp $udp_line $rtt $cpu_line" >"$DIR/$name.res"
}

# profile PID: perf record switchd during one more UDP run
profile() {
	local pid=$1 rep=$B/bench/perf-switchd.txt
	command -v perf >/dev/null || { say "perf not installed; no profile"; return 0; }
	{
		flock -w 240 9 || say "WARNING: could not take $LOCK; profiling unlocked"
		iperf_run "$DIR/perf-udp.json" -u -l 18 -b 0 &
		local ipid=$!
		sleep 1
		perf record -q -g -o "$DIR/perf.data" -p "$pid" -- sleep 3 >/dev/null 2>"$DIR/perf.err" ||
			say "perf record failed: $(tail -1 "$DIR/perf.err")"
		wait "$ipid"
	} 9>"$LOCK"
	if [ -s "$DIR/perf.data" ]; then
		{
			echo "== self time by object"
			perf report -i "$DIR/perf.data" --stdio --no-children --sort dso -g none 2>/dev/null |
				grep -E '^ +[0-9]'
			echo "== self time by symbol"
			perf report -i "$DIR/perf.data" --stdio --no-children --sort sym -g none 2>/dev/null |
				grep -E '^ +[0-9]' | head -40
			echo "== inclusive (children) time by symbol"
			perf report -i "$DIR/perf.data" --stdio --children --sort sym -g none 2>/dev/null |
				grep -E '^ +[0-9]' | head -60
			echo "== call graphs"
			perf report -i "$DIR/perf.data" --stdio --no-children 2>/dev/null
		} >"$rep"
		say "switchd profile in $rep; top symbols (self):"
		sed -n '/^== self time by symbol/,/^==/p' "$rep" | grep -E '^ +[0-9]' | head -12 | sed 's/^/    /' >&2
	fi
}

want() { [[ " $ONLY " == *" $1 "* ]]; }

# ---- run ---------------------------------------------------------------------------

say "namespaces $H1 $SW $H2; iperf3 ${SECS}s, best of $RUNS"
offloads off
if want switchd; then
	say "switchd"
	up_switchd
	measure switchd "$SW_PID"
	[ -n "${BENCH_PERF:-}" ] && profile "$SW_PID"
	down_switchd
	check_no_xdp
fi
if want switchd-busy; then
	# The same switchd, polling its rings for 50 us after each frame before
	# sleeping: what a dedicated core buys (off by default: a testbed runs a
	# dozen daemons on two cores).
	say "switchd-busy (busy_poll = 50us)"
	up_switchd switch.busy_poll=50us
	measure switchd-busy "$SW_PID"
	down_switchd
	check_no_xdp
fi
if want switchd-xdp; then
	# switchd with forwarding = xdp: known unicast leaves in XDP, by the
	# devmap, without the daemon (docs/xdp-forwarding.md). The hosts' veths
	# get xdp_pass, as in xdp_fwd: a veth takes XDP-redirected frames only
	# when its peer has an XDP program (switchd cannot attach one there: the
	# peers are in the hosts' namespaces; without it switchd would send
	# every frame itself).
	say "switchd-xdp (forwarding = xdp)"
	for n in "$H1" "$H2"; do
		ip -n "$n" link set dev eth0 xdp object "$B/xdp_fwd.bpf.o" program xdp_pass ||
			die "xdp_pass on eth0 in $n"
	done
	up_switchd switch.forwarding=xdp
	measure switchd-xdp "$SW_PID"
	down_switchd
	for n in "$H1" "$H2"; do ip -n "$n" link set dev eth0 xdp off; done
	check_no_xdp
fi
if want bridge; then
	say "bridge"
	up_bridge
	measure bridge
	down_bridge
fi
if want xdp_fwd; then
	say "xdp_fwd"
	up_xdp_fwd
	measure xdp_fwd
	down_xdp_fwd
	check_no_xdp
fi
if want afxdp_min; then
	say "afxdp_min"
	up_afxdp_min
	measure afxdp_min "$AX_PID"
	down_afxdp_min
	check_no_xdp
fi
if want bridge+offl; then
	say "bridge+offl"
	offloads on
	up_bridge
	measure bridge+offl
	down_bridge
fi

# ---- report -------------------------------------------------------------------------

echo
printf '%-12s %8s %10s %7s %8s %8s %7s %13s %11s %8s %13s %8s\n' \
	config tcp_gbps udp64_pps loss_% rxsock_% fwd_pps rtt_us cpu_us/frame bench_us/fr others% daemon_us/fr daemon%
for name in switchd switchd-busy switchd-xdp bridge xdp_fwd afxdp_min bridge+offl; do
	[ -s "$DIR/$name.res" ] || continue
	read -r tcp pps loss sock fwd rtt cpu bcpu oth dus dpct <"$DIR/$name.res"
	printf '%-12s %8s %10s %7s %8s %8s %7s %13s %11s %8s %13s %8s\n' \
		"$name" "$tcp" "$pps" "$loss" "$sock" "$fwd" "$rtt" "$cpu" "$bcpu" "$oth" "$dus" "$dpct"
done
cat <<'EOF'
  Host veth TX checksum offload off, except bridge+offl (veth defaults).
  rtt_us: median of 200 pings 5 ms apart (h1 to h2).
  udp64: 60-byte frames (64 with FCS) received per second at h2; loss_%: of the frames
  sent; rxsock_%: the part of it dropped by h2's full UDP socket (receiver too slow);
  fwd_pps: frames the forwarder got to h2's eth0 per second (before those drops).
  cpu_us/frame: busy time of all cores during the UDP test / frames delivered.
  bench_us/fr: system+irq+softirq of all cores + user time of iperf3 and the
  forwarding process (our share); others%: the rest of the busy time (other users),
  % of all cores.
  daemon: the forwarding process's (switchd, afxdp_min) utime+stime per frame, and %
  of one core.
  switchd-busy: switchd with busy_poll = 50us (spins while traffic flows);
  the RATIO lines are for switchd with its defaults.
  afxdp_min: one shared UMEM, a copy-mode AF_XDP socket per port, descriptors passed
  from RX to TX (tests/bench/afxdp_min.c): the ceiling of switchd's path.
EOF
echo

# nan where a configuration did not run (BENCH_ONLY, or switchd-xdp before
# that mode exists)
"$PY" - "$DIR" <<'EOF'
import math, sys
nan = float("nan")
def load(name):
    """tcp_gbps udp64_pps rtt_us cpu_us/frame daemon_us/fr fwd_pps of NAME.res"""
    try:
        f = open("%s/%s.res" % (sys.argv[1], name)).read().split()
    except OSError:
        return [nan] * 6
    def num(x):
        try:
            return float(x)
        except ValueError:  # "-": no process to measure
            return nan
    return [num(f[i]) for i in (0, 1, 5, 6, 9, 4)]
def ok(*v):
    return not any(math.isnan(x) for x in v)
def ratio(x, y):
    return "%.2f" % (x / y if y and ok(x, y) else nan)
def diff(x, y):
    return "%.0f" % (x - y if ok(x, y) else nan)
s, b, a = load("switchd"), load("bridge"), load("afxdp_min")
sx, xf = load("switchd-xdp"), load("xdp_fwd")
print("RATIO switchd/bridge tcp=%s udp64=%s cpu_us_per_frame=%s"
      % (ratio(s[0], b[0]), ratio(s[1], b[1]), ratio(s[3], b[3])))
# Forwarder against forwarder: frames each got to h2's eth0 (fwd_pps), and
# switchd's CPU per frame it forwarded. What h2's socket then delivers is
# capped by the CPU h2 gets, which the faster of two forwarders takes from it
# (both run h2's receive path inside their sendto()): delivered frames would
# rank the slower forwarder first.
def per_fwd(x):
    return x[4] * x[1] / x[5] if ok(x[4], x[1], x[5]) and x[5] else nan
print("RATIO switchd/afxdp_min tcp=%s udp64=%s daemon_us_per_frame=%.3f rtt_added_us=%s"
      % (ratio(s[0], a[0]), ratio(s[5], a[5]), per_fwd(s), diff(s[2], a[2])))
print("RATIO switchd-xdp/xdp_fwd tcp=%s udp64=%s" % (ratio(sx[0], xf[0]), ratio(sx[1], xf[1])))
EOF
