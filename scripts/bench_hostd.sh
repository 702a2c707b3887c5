#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# `make bench-hostd`: hostd's per-flow pacing against an HTB class, like for
# like, on one topology and the same veths:
#
#   tx namespace                                         rx namespace
#   eth0 (10.98.0.1, MTU 1482) ══veth══ cc0 [hostd] up0 ══veth══ rx0 (10.98.0.2)
#
#   hostd rows: hostd between cc0 (host_port) and up0 (uplink), tag = no so
#               that the receiver (a plain Linux stack, no hostd) sees plain
#               frames; granularity = 5tuple, flow_control = none,
#               link_rate = 10G (so only the per-flow rate limits), and
#               [law] rate = target / flows: every flow (each iperf3 UDP
#               stream, and also iperf3's TCP control connection) is paced at
#               target / flows; the aggregate is compared with the target.
#   htb rows:   hostd stopped; cc0 and up0 joined by a Linux bridge (br0) in
#               the tx namespace, and HTB as the root qdisc of eth0, the
#               host's own interface (where a host shapes what it sends;
#               hostd sits on the same edge). 1 flow: one class at the target
#               (rate = ceil = target, every frame goes there). 100 flows: a
#               parent class at the target with 100 leaves at target / 100
#               (rate = ceil), one per UDP stream: u32 on the UDP source
#               port, through a 256-bucket hash table on its low byte (the
#               streams use ports 20000..20099, see iperf3 --cport), and a
#               default leaf at target / 100 for the rest (the TCP control
#               connection), like hostd's flow of its own. HTB's burst is
#               tc's default; quantum (which only matters when classes
#               borrow, and none can here) is set to keep tc quiet: 1514 on
#               the 100 leaves, 60000 on the others.
#
# Traffic, the same for both: iperf3 UDP, 1400-byte payloads (1442-byte
# frames), 1 stream or 100 (-P 100, so 100 distinct 5-tuples), offering
# about 1.5 x the target in total (-b, per stream and in payload bits, is
# 1.5 x target / flows: 1.545 x in frame bits), or as fast as it can (-b 0)
# on the "max" rows. The client is stopped when the window is over.
#
# Rates (targets): 10M, 100M, 1G, and "max" = 5G: hostd and HTB set to 5G,
# which the sender and the machine cannot reach; it shows the fastest each
# gets through ("the fastest it can do"). The max rows are reported but are
# not part of the accuracy figures.
#
# Achieved rate: bytes received on rx0 (the receiver's veth) per second over
# a steady window of BENCH_SECONDS, starting one second after the traffic
# arrives: the slope of a least-squares line through the byte counter read
# every 5 ms (see sample()). Every side counts the same bytes: veth counts
# the Ethernet frame without FCS and preamble (14-byte header + IP packet);
# hostd's pacer charges the frame length + wire_overhead (0, the default) +
# the tag (none with tag = no); HTB charges skb->len at eth0, which is the
# same frame (no linklayer/overhead options given). So achieved/target
# compares like with like. rx0 also counts the little else that crosses (iperf3's TCP
# control connection); neighbour entries are static, IPv6 is off.
#
# CPU over the same window: the machine's busy time (user+nice+system+irq+
# softirq of all cores, /proc/stat) as % of all cores, for every row (HTB's
# work is softirq time that cannot be attributed to a process); and for the
# hostd rows hostd's own utime+stime as % of one core. The machine is shared
# with other engineers' runs: the busy % includes their load.
#
# Ping: 20 pings 50 ms apart from eth0 to rx0, through hostd (link_rate 10G,
# rate unlimited) and through the bridge without HTB; the median RTT of each
# and the difference (what hostd adds).
#
# Ends with one line:
#   RATIO hostd accuracy=<worst achieved/target> htb_accuracy=<same for HTB>
# "worst" = the achieved/target farthest from 1 over the 10M, 100M and 1G
# rows with 1 and 100 flows (not the max rows). Numbers never fail the run;
# it exits non-zero only when something cannot be set up.
#
# Each row's measurement holds /tmp/l2cc-measure.lock (flock) so that
# timing-sensitive runs of other engineers do not overlap with ours.
#
# Environment:
#   BENCH_SECONDS=S   measurement window per row (default 5)
#   BENCH_ONLY="PAT..."  rows to run, shell patterns over the row names
#                     SHAPER/RATE/FLOWS (hostd/10M/1, htb/1G/100, hostd/max/100, ...)
#                     and "ping"; e.g. BENCH_ONLY="*/1G/* ping" (default "*")
#   BENCH_HOSTD_SET="hostd.busy_poll=50us ..."  extra hostd -o overrides, to
#                     try settings without editing this file
#   BENCH_HTB_CLASS="burst 64k cburst 64k"  extra options for every HTB class
#   BENCH_KEEP=1      keep the temp dir (configs, logs, iperf3 JSON, counters)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD

B=$ROOT/build
HOSTD=$B/bin/hostd
SECS=${BENCH_SECONDS:-5}
ONLY=${BENCH_ONLY:-"*"}
# The system interpreter: a pyenv shim costs most of a second per call.
PY=${L2CC_PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
PAYLOAD=1400          # UDP payload bytes; frames are PAYLOAD + 42
LINK_RATE=10G         # hostd's link_rate: above every target
MAX_TARGET=5000000000 # the "max" rows' target, bit/s
CPORT=20000           # first client (source) port of the UDP streams

P=l2h$$
TX=$P-tx RX=$P-rx
IP1=10.98.0.1 IP2=10.98.0.2
DIR=$(mktemp -d "/tmp/$P.XXXXXX")
: >"$DIR/pids"
: >"$DIR/rows"

BENCH_TAG=bench-hostd
# say, die, hx, record_pid, stop_pid, the cleanup at exit, and the steps
# shared with bench.sh
# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

# ---- prerequisites -----------------------------------------------------------

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, tc)"
for t in ip tc ethtool iperf3 ping flock ss; do
	command -v "$t" >/dev/null || die "$t not found (make deps)"
done
[ -x "$PY" ] || die "python3 not found (make deps)"
for f in "$HOSTD" "$L2CCCTL"; do
	[ -x "$f" ] || die "$f missing: run make first"
done

# BENCH_ONLY patterns, without letting the shell expand them against files
set -f
# shellcheck disable=SC2206
PATS=($ONLY)
set +f
want() {
	local p
	for p in "${PATS[@]}"; do
		# shellcheck disable=SC2053
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# ---- topology ------------------------------------------------------------------

for n in "$TX" "$RX"; do
	netns_add "$n"
	# no IPv6 chatter (RS, MLD, DAD) in the counters
	hx "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 >/dev/null
done
ip -n "$TX" link add eth0 type veth peer name cc0 || die "veth eth0 - cc0"
ip -n "$TX" link add up0 type veth peer name rx0 netns "$RX" || die "veth up0 - rx:rx0"
# as tests/netns/lib.sh link_hd_host: MTU 1482 (room for the tag on a 1500
# fabric, though we run tag = no) and TX checksum offload off (AF_XDP)
ip -n "$TX" link set eth0 mtu 1482 || die "mtu eth0"
hx "$TX" ethtool -K eth0 tx off >/dev/null 2>&1 || die "ethtool -K eth0 tx off"
# the receiver too: its replies (iperf3 control, ping) cross hostd, which
# cannot complete a partial checksum
hx "$RX" ethtool -K rx0 tx off >/dev/null 2>&1 || die "ethtool -K rx0 tx off"
ip -n "$TX" addr add "$IP1/24" dev eth0 || die "address on eth0"
ip -n "$RX" addr add "$IP2/24" dev rx0 || die "address on rx0"
for i in eth0 cc0 up0; do ip -n "$TX" link set "$i" up || die "$i up"; done
ip -n "$RX" link set rx0 up || die "rx0 up"
mac() { ip -n "$1" link show dev "$2" | awk '/link\/ether/ { print $2 }'; }
ip -n "$TX" neigh replace "$IP2" lladdr "$(mac "$RX" rx0)" dev eth0 nud permanent || die "neighbour in tx"
ip -n "$RX" neigh replace "$IP1" lladdr "$(mac "$TX" eth0)" dev rx0 nud permanent || die "neighbour in rx"

# anchors: a process in each namespace whose /proc/PID/net/dev the sampler reads
ip netns exec "$TX" sleep 100000 9>&- &
TX_ANCHOR=$!
record_pid "$TX_ANCHOR"
ip netns exec "$RX" sleep 100000 9>&- &
RX_ANCHOR=$!
record_pid "$RX_ANCHOR"

# no XDP program may be left on cc0/up0 after hostd stops
check_no_xdp() {
	local i
	for i in cc0 up0; do
		ip -n "$TX" link show dev "$i" | grep -q ' xdp' || continue
		say "WARNING: an XDP program is still attached to $i after hostd stopped; removing it"
		ip -n "$TX" link set dev "$i" xdp off 2>/dev/null
		ip -n "$TX" link set dev "$i" xdpgeneric off 2>/dev/null
	done
}

wait_ping() { ping_ready "$TX" "$IP2" || die "$1: no ping from eth0 to rx0"; }

# ---- shapers ---------------------------------------------------------------------

HD_PID=
# up_hostd FLOW_RATE_BPS|unlimited
up_hostd() {
	local conf=$DIR/hostd.conf log=$DIR/hostd.log
	cat >"$conf" <<EOF
[hostd]
name = bench
ctl_socket = $DIR/hostd.sock
host_port = cc0
uplink = up0
link_rate = $LINK_RATE
tag = no
flow_control = none
granularity = 5tuple

[law]
law = static
rate = $1
EOF
	local kv
	local -a set=()
	for kv in ${BENCH_HOSTD_SET:-}; do set+=(-o "$kv"); done
	echo "== rate $1 ${set[*]}" >>"$log"
	ip netns exec "$TX" "$HOSTD" -c "$conf" "${set[@]}" >>"$log" 2>&1 9>&- &
	HD_PID=$!
	record_pid "$HD_PID"
	wait_ctl hostd "$HD_PID" "$DIR/hostd.sock" "$log" 20
	wait_ping hostd
}
down_hostd() {
	stop_pid "$HD_PID"
	HD_PID=
	check_no_xdp
}
hd_ctl() { "$L2CCCTL" -s "$DIR/hostd.sock" -r -t 3000 "$@"; }

up_bridge() {
	ip -n "$TX" link add br0 type bridge || die "bridge br0"
	ip -n "$TX" link set cc0 master br0 || die "cc0 into br0"
	ip -n "$TX" link set up0 master br0 || die "up0 into br0"
	ip -n "$TX" link set br0 up || die "br0 up"
	wait_ping bridge
}
down_bridge() { ip -n "$TX" link del br0 2>/dev/null; }

# up_htb TARGET_BPS FLOWS: bridge + HTB on eth0 (see the header)
up_htb() {
	local r=$1 n=$2 leaf i p tcb=$DIR/htb.tc x=${BENCH_HTB_CLASS:-}
	up_bridge
	if [ "$n" -eq 1 ]; then
		{
			echo "qdisc add dev eth0 root handle 1: htb default 10"
			echo "class add dev eth0 parent 1: classid 1:10 htb rate ${r}bit ceil ${r}bit quantum 60000 $x"
		} >"$tcb"
	else
		leaf=$((r / n))
		{
			echo "qdisc add dev eth0 root handle 1: htb default ff"
			echo "class add dev eth0 parent 1: classid 1:1 htb rate ${r}bit ceil ${r}bit quantum 60000 $x"
			echo "class add dev eth0 parent 1:1 classid 1:ff htb rate ${leaf}bit ceil ${leaf}bit quantum 1514 $x"
			for i in $(seq 0 $((n - 1))); do
				printf 'class add dev eth0 parent 1:1 classid 1:%x htb rate %sbit ceil %sbit quantum 1514 %s\n' \
					$((0x100 + i)) "$leaf" "$leaf" "$x"
			done
			# UDP: hash on the source port's low byte, then one exact match per bucket
			echo "filter add dev eth0 parent 1: prio 1 handle 2: protocol ip u32 divisor 256"
			echo "filter add dev eth0 parent 1: prio 1 protocol ip u32 ht 800:: match ip protocol 17 0xff hashkey mask 0x00ff0000 at 20 link 2:"
			for i in $(seq 0 $((n - 1))); do
				p=$((CPORT + i))
				printf 'filter add dev eth0 parent 1: prio 1 protocol ip u32 ht 2:%x: match ip sport %d 0xffff flowid 1:%x\n' \
					$((p & 255)) "$p" $((0x100 + i))
			done
		} >"$tcb"
	fi
	hx "$TX" tc -batch "$tcb" || die "tc: HTB setup failed ($tcb)"
	wait_ping htb
}
down_htb() {
	hx "$TX" tc qdisc del dev eth0 root 2>/dev/null
	down_bridge
}

# ---- measurement -----------------------------------------------------------------

# sample OUT HDPID|-: wait for the traffic to reach rx0, skip one second, then
# measure BENCH_SECONDS. OUT: achieved_bps rx_pps cpu_all% hostd%|- rx0_drops
# offered_bps (the sender's UDP datagrams over the window, in frame bits)
sample() {
	"$PY" - "$TX_ANCHOR" "$RX_ANCHOR" "$2" "$SECS" "$(getconf CLK_TCK)" "$PAYLOAD" >"$1" <<'EOF'
import os, sys, time
txp, rxp, hdp, secs, hz = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
payload = int(sys.argv[6])
def netdev(pid, ifname):
    for line in open("/proc/%s/net/dev" % pid).readlines()[2:]:
        name, rest = line.split(":", 1)
        if name.strip() == ifname:
            v = [int(x) for x in rest.split()]
            return v  # rx: bytes packets errs drop ...; tx from v[8]
    raise SystemExit("no %s" % ifname)
def cpu():
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return v[0] + v[1] + v[2] + v[5] + v[6], sum(v[:8])
def hd():
    if hdp == "-":
        return None
    try:
        s = open("/proc/%s/stat" % hdp).read().rsplit(")", 1)[1].split()
        return int(s[11]) + int(s[12])
    except OSError:
        return None
def udp_out(pid):  # datagrams the sender's UDP layer sent (OutDatagrams)
    l = [x.split() for x in open("/proc/%s/net/snmp" % pid) if x.startswith("Udp:")]
    return int(l[1][l[0].index("OutDatagrams")])
def snap():
    t0 = time.monotonic()
    r = netdev(rxp, "rx0")
    t1 = time.monotonic()
    return (t0 + t1) / 2, r, cpu(), hd(), udp_out(txp)
start = netdev(rxp, "rx0")[0]
end = time.monotonic() + 20
while netdev(rxp, "rx0")[0] - start < 64 * 1024:
    if time.monotonic() > end:
        print("nan nan nan - nan nan")
        sys.exit(0)
    time.sleep(0.02)
time.sleep(1.0)
# rx0's byte counter every 5 ms over the window; the rate is the slope of
# the least-squares line through them, not (last - first) / time: 100 flows
# started together send in phase, so the counter is a staircase with a step
# of one frame per flow (at 10M, 1.15 Mbit every 115 ms), and a two-point
# difference would be off by up to a step (2% over 5 s)
a = snap()
pts = [(a[0], a[1][0])]
while True:
    time.sleep(0.005)
    t0 = time.monotonic()
    v = netdev(rxp, "rx0")[0]
    t = (t0 + time.monotonic()) / 2
    pts.append((t, v))
    if t - a[0] >= secs:
        break
b = snap()
dt = b[0] - a[0]
n = len(pts)
mt = sum(p[0] for p in pts) / n
mv = sum(p[1] for p in pts) / n
ach = 8 * sum((p[0] - mt) * (p[1] - mv) for p in pts) / sum((p[0] - mt) ** 2 for p in pts)
pps = (b[1][1] - a[1][1]) / dt
busy, tot = b[2][0] - a[2][0], b[2][1] - a[2][1]
cpu_all = 100.0 * busy / tot if tot else float("nan")
hdc = "%.1f" % (100.0 * (b[3] - a[3]) / hz / dt) if a[3] is not None and b[3] is not None else "-"
off = (b[4] - a[4]) * (payload + 42) * 8 / dt
print("%.0f %.0f %.1f %s %d %.0f" % (ach, pps, cpu_all, hdc, b[1][3] - a[1][3], off))
EOF
}

# run_traffic NAME FLOWS PER_STREAM_B HDPID|-: iperf3 UDP eth0 -> rx0 while
# sample() measures; results in $DIR/NAME.{sample,json}
run_traffic() {
	local name=$1 n=$2 bw=$3 hdpid=$4 spid cpid
	iperf_server "$RX" "$DIR/$name.server.json"
	spid=$IPERF_SPID
	ip netns exec "$TX" iperf3 -c "$IP2" -p 5201 -u -l "$PAYLOAD" -b "$bw" -P "$n" --cport "$CPORT" \
		-t $((${SECS%.*} + 10)) -J >"$DIR/$name.json" 2>&1 9>&- &
	cpid=$!
	record_pid "$cpid"
	sample "$DIR/$name.sample" "$hdpid"
	# the window is over: stop the client (its -t is only a safety net)
	stop_pid "$cpid"
	iperf_server_end "$spid"
}

# hd_note C0 C1 FLOWS: hostd's counters over the row: frames dropped at the
# host edge by reason, XDP ring drops on cc0, UDP flows that sent
hd_note() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import json, sys
try:
    a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    f = json.load(open(sys.argv[3]))
    da, db = a["host"]["drop"], b["host"]["drop"]
    drops = {k: db[k] - da.get(k, 0) for k in db if db[k] - da.get(k, 0)}
    rx = b["host"]["rx_frames"] - a["host"]["rx_frames"]
    xa, xb = a.get("xdp_host", {}), b.get("xdp_host", {})
    ring = sum(xb.get(k, 0) - xa.get(k, 0) for k in ("rx_dropped", "rx_ring_full"))
    udp = sum(1 for x in f["flows"] if x["key"].startswith("udp") and x["frames_out"] > 0)
    d = ",".join("%s=%d" % kv for kv in sorted(drops.items())) or "0"
    print("in=%d drop:%s xdp_ring=%d udp_flows=%d" % (rx, d, ring, udp))
except Exception as e:
    print("counters unavailable (%s)" % e)
EOF
}

# htb_note: qdisc drops and the classes that sent
htb_note() {
	hx "$TX" tc -s qdisc show dev eth0 >"$DIR/htb.qdisc" 2>&1
	hx "$TX" tc -s class show dev eth0 >"$DIR/htb.class" 2>&1
	"$PY" - "$DIR/htb.qdisc" "$DIR/htb.class" <<'EOF'
import re, sys
q = open(sys.argv[1]).read()
m = re.search(r"dropped (\d+), overlimits (\d+)", q)
c = open(sys.argv[2]).read()
blocks = [b for b in c.split("class htb ")[1:]]
handle = lambda b: b.split()[0]
parents = {m.group(1) for b in blocks for m in [re.search(r" parent (\S+)", b.split("\n")[0])] if m}
leaves = 0
for b in blocks:
    s = re.search(r"Sent (\d+) bytes", b)
    if handle(b) not in parents and s and int(s.group(1)) > 0:
        leaves += 1
print("drops=%s overlimits=%s classes_sent=%d" % (m.group(1) if m else "?", m.group(2) if m else "?", leaves))
EOF
}

# measure_row SHAPER RATE_LABEL TARGET_BPS FLOWS
measure_row() {
	local shaper=$1 label=$2 target=$3 n=$4 name bw note s
	name=$shaper-$label-$n
	if [ "$label" = max ]; then
		bw=0
	else
		bw=$((target * 3 / 2 / n))
	fi
	{
		take_lock
		if [ "$shaper" = hostd ]; then
			hd_ctl counters >"$DIR/$name.c0" 2>&1
			run_traffic "$name" "$n" "$bw" "$HD_PID"
			hd_ctl counters >"$DIR/$name.c1" 2>&1
			hd_ctl flows >"$DIR/$name.flows" 2>&1
			note=$(hd_note "$DIR/$name.c0" "$DIR/$name.c1" "$DIR/$name.flows")
		else
			run_traffic "$name" "$n" "$bw" -
			note=$(htb_note)
		fi
	} 9>"$LOCK"
	s=$(cat "$DIR/$name.sample")
	[ "${s%% *}" = nan ] && say "$name: no traffic reached rx0 (iperf3: $(head -c 300 "$DIR/$name.json"))"
	[ -n "$s" ] || s="nan nan nan - nan nan"
	echo "$shaper $label $n $target $s $note" >>"$DIR/rows"
}

# ping_median: median RTT (us) of 20 pings 50 ms apart
ping_median() {
	hx "$TX" ping -c 20 -i 0.05 "$IP2" 2>/dev/null |
		"$PY" -c '
import re, statistics, sys
t = [float(m.group(1)) for m in re.finditer(r"time=([0-9.]+) ms", sys.stdin.read())]
print("%.0f %d" % (statistics.median(t) * 1000, len(t)) if t else "nan 0")'
}

# ---- run ---------------------------------------------------------------------------

say "namespaces $TX $RX; ${SECS}s per row; hostd tag = no (the receiver is plain Linux)${BENCH_HOSTD_SET:+; hostd -o $BENCH_HOSTD_SET}${BENCH_HTB_CLASS:+; HTB classes: $BENCH_HTB_CLASS}"
for label in 10M 100M 1G max; do
	case $label in
	10M) target=10000000 ;;
	100M) target=100000000 ;;
	1G) target=1000000000 ;;
	max) target=$MAX_TARGET ;;
	esac
	for n in 1 100; do
		if want "hostd/$label/$n"; then
			say "hostd $label, $n flow(s)"
			up_hostd $((target / n))
			measure_row hostd "$label" "$target" "$n"
			down_hostd
		fi
		if want "htb/$label/$n"; then
			say "htb $label, $n flow(s)"
			up_htb "$target" "$n"
			measure_row htb "$label" "$target" "$n"
			down_htb
		fi
	done
done

PING=
if want ping; then
	say "ping"
	{
		take_lock
		up_hostd unlimited
		read -r hd_rtt hd_n <<<"$(ping_median)"
		down_hostd
		up_bridge
		read -r br_rtt br_n <<<"$(ping_median)"
		down_bridge
	} 9>"$LOCK"
	PING="$hd_rtt $hd_n $br_rtt $br_n"
fi

# ---- report -------------------------------------------------------------------------

"$PY" - "$DIR/rows" "$PING" "$(nproc)" <<'EOF'
import math, sys
rows = [l.split(None, 10) for l in open(sys.argv[1]).read().splitlines() if l.strip()]
def fmt_rate(x):
    try:
        x = float(x)
    except ValueError:
        return x
    if math.isnan(x):
        return "nan"
    return "%.2fM" % (x / 1e6) if x < 1e9 else "%.4fG" % (x / 1e9)
print()
hdr = "%-6s %5s %5s %10s %11s %8s %11s %7s %7s  %s" % (
    "shaper", "rate", "flows", "target", "achieved", "ach/tgt", "offered", "cpu%", "hostd%", "notes")
print(hdr)
worst = {"hostd": None, "htb": None}
for r in rows:
    shaper, label, n, target, ach, pps, cpu, hdc, rxdrop, off = r[:10]
    note = r[10] if len(r) > 10 else ""
    t, a = float(target), float(ach)
    ratio = a / t if not math.isnan(a) else float("nan")
    if label != "max" and not math.isnan(ratio):
        w = worst[shaper]
        if w is None or abs(ratio - 1) > abs(w - 1):
            worst[shaper] = ratio
    if rxdrop not in ("0", "nan"):
        note += " rx0_drops=%s" % rxdrop
    try:
        if label != "max" and float(off) < 0.99 * t:
            note += " OFFERED<TARGET"
    except ValueError:
        pass
    print("%-6s %5s %5s %10s %11s %8s %11s %7s %7s  %s" % (
        shaper, label, n, fmt_rate(t), fmt_rate(a), "%.4f" % ratio, fmt_rate(off), cpu, hdc, note))
print("""
  achieved: frame bytes (Ethernet header + IP, no FCS) received on rx0 per second over
  the window, the bytes both shapers charge; offered: UDP datagrams the sender sent in
  the window, in frame bits (HTB blocks the sender's socket, so it offers about what
  passes; hostd drops the excess at its host edge). hostd: [law] rate = target/flows per 5-tuple
  flow, link_rate 10G, tag = no. htb: on eth0 of the same namespace, cc0-up0 bridged;
  100 flows = 100 leaves at target/100 under a parent at target (u32 on the source port).
  max: target 5G, beyond the sender: the fastest each gets through (not in RATIO).
  cpu%: machine busy time, % of all %s cores (includes other users); hostd%: hostd's
  utime+stime, % of one core. notes (hostd): in = frames from the host, drop: host-edge
  drops by reason, xdp_ring = cc0 frames the XDP socket had no room for, udp_flows =
  UDP flows that sent; (htb): qdisc drops/overlimits, leaf classes that sent.
  OFFERED<TARGET: the sender offered less than 99% of the target (for HTB, whose socket
  blocks, this does not tell whether the sender or HTB held it back).""".replace("%s", sys.argv[3], 1))
p = sys.argv[2].split()
if len(p) == 4:
    try:
        d = "%+.0f" % (float(p[0]) - float(p[2]))
    except ValueError:
        d = "nan"
    print("\nPING median_rtt_us hostd=%s bridge=%s added_by_hostd=%s (%s and %s replies of 20)"
          % (p[0], p[2], d, p[1], p[3]))
print()
f = lambda w: "nan" if w is None else "%.4f" % w
print("RATIO hostd accuracy=%s htb_accuracy=%s" % (f(worst["hostd"]), f(worst["htb"])))
EOF
