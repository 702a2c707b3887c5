#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make soak: a two-switch lossless fabric under 10x oversubscription for 60 s
# (L2CC_SOAK_SECONDS) with one host misbehaving all along. Not in CI.
#
#   h1 [hostd] -p1 (credit) \                                 /  p4 (credit, 10M) - [hostd] h4
#   h2 [hostd] -p2 (credit) -- S1 -up (credit, 100M)- down- S2
#   h3 (no hostd) -p3 (PAUSE) /
#
# h1 and h2 send UDP at 50M each to h4 behind a 10M port: 10x what it
# takes; h2 also sends 200 datagrams a second to h3. Their hostds are held back by credits, so what does not fit is
# dropped at the hosts' own edge queues, never in the fabric. h3 floods
# broadcasts, sends PAUSE storms at S1 (the pause watchdog's case) and forges
# CNPs and CNMs toward h1 and h2 (the CNM is switch-only: S1 drops it; a CNP
# from a stranger is counted by h1's hostd and ignored).
#
# Fabric drops are counted by the frame's source: every drop counter of
# every port of S1 and S2, except the drops at p3's input (h3's own frames),
# the pause watchdog's drops of frames queued for p3 (frames addressed to
# the storming host, dropped by the watchdog's documented action; printed
# apart), frames not sent back where they came from (filtered: switching,
# not loss), and S2's flood drops (flood_limit, reserve) when S1 flooded
# nothing from p1 or p2 (the well-behaved hosts have static neighbours and
# talk to known addresses, so then every flooded frame is h3's broadcast).
#
# Ends with one line:
#   SOAK seconds=<s> fabric_drops=<n> daemons_alive=<yes|no> umem_consistent=<yes|no>
# and exits 0 only when fabric_drops is 0 and the rest is yes.
. "$(dirname "$0")/netns/lib.sh"

SECS=${L2CC_SOAK_SECONDS:-60}
TEST_TIMEOUT=$((SECS + 120))
UDP_LEN=1400

setup() {
	mk_switch S1
	mk_switch S2
	for i in 1 2 4; do mk_host "h$i"; done
	mk_host h3
	link_hd_host S1 p1 h1 1
	link_hd_host S1 p2 h2 2
	link_host S1 p3 h3 3
	link_hd_host S2 p4 h4 4
	link_switches S1 up S2 down
	start_switchd S1 "
[port p1]
ifname = $(ifn p1)
rate = 100M
flow_control = credit
[port p2]
ifname = $(ifn p2)
rate = 100M
flow_control = credit
[port p3]
ifname = $(ifn p3)
rate = 100M
flow_control = pause
[port up]
ifname = $(ifn up)
rate = 100M
flow_control = credit
role = switch"
	start_switchd S2 "
[port down]
ifname = $(ifn down)
rate = 100M
flow_control = credit
role = switch
[port p4]
ifname = $(ifn p4)
rate = 10M
flow_control = credit"
	for i in 1 2; do start_hostd "h$i" "link_rate = 100M"; done
	start_hostd h4 "link_rate = 10M"
	# (h3 has no hostd to strip the l2cc tag, so h1 and h2 cannot talk to it.)
	for i in 2 4; do
		hx h1 ping -c 2 -i 0.3 -W 2 "10.99.0.$i" >/dev/null || fail "ping h1 -> h$i before the soak"
	done
	hx h2 ping -c 2 -i 0.3 -W 2 10.99.0.4 >/dev/null || fail "ping h2 -> h4 before the soak"
	# Both switches learn h3's address before the run (one broadcast from it),
	# so that h2's datagrams to h3 are never flooded.
	hx h3 "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
s.send((b"\xff" * 6 + bytes.fromhex(sys.argv[1].replace(":", "")) + b"\x88\xb7").ljust(60, b"\0"))
' "$(host_mac h3)" || fail "h3's first frame"
	# No ARP during the run: the well-behaved hosts then flood nothing, and
	# every frame the switches flood is h3's (checked: S1's p1/p2 flood_tx).
	for i in 1 2 4; do
		for j in 1 2 3 4; do
			[ "$i" = "$j" ] && continue
			ip -n "$(ns "h$i")" neigh replace "10.99.0.$j" lladdr "$(host_mac "h$j")" dev eth0 nud permanent ||
				fail "static neighbour h$j on h$i"
		done
	done
}

# misbehave SECONDS: h3 floods broadcasts (up to 20 000 a second), sends
# PAUSE 65535 every 30 ms and forges a CNM and a CNP toward h1 and h2 every
# 10 ms, all from one process, for SECONDS.
misbehave() {
	hx h3 "$PY" -c '
import os, socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
me = bytes.fromhex(sys.argv[1].replace(":", ""))
peers = [bytes.fromhex(m.replace(":", "")) for m in sys.argv[3:5]]
flood = (b"\xff" * 6 + me + b"\x88\xb7").ljust(60, b"\0")
pause = (bytes.fromhex("0180c2000001") + me + b"\x88\x08\x00\x01\xff\xff").ljust(60, b"\0")
# A CNP (0x88B6 version 1, type 2, a 12-byte body with a random flow id and
# counts) and an 802.1Qau CNM (0x22E7, random contents).
def forged(dst):
    return [(dst + me + b"\x88\xb6\x01\x02\x00\x0c" + os.urandom(12)).ljust(60, b"\0"),
            (dst + me + b"\x22\xe7" + os.urandom(30)).ljust(64, b"\0")]
end = time.monotonic() + float(sys.argv[2])
nxt_pause = nxt_forge = 0.0
sent = 0
while True:
    now = time.monotonic()
    if now >= end:
        break
    if now >= nxt_pause:
        s.send(pause); nxt_pause = now + 0.03
    if now >= nxt_forge:
        for p in peers:
            for f in forged(p):
                try: s.send(f)
                except OSError: pass
        nxt_forge = now + 0.01
    for _ in range(20):
        try: s.send(flood)
        except OSError: pass
    sent += 20
    time.sleep(0.001)
' "$(host_mac h3)" "$1" "$(host_mac h1)" "$(host_mac h2)" &
	bg_record $!
	MISB_PID=$!
}

# udp_to_h3 SECONDS: 200 datagrams a second from h2 to h3.
udp_to_h3() {
	hx h2 "$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    try: s.sendto(b"x" * 1000, ("10.99.0.3", 9))
    except OSError: pass
    time.sleep(0.005)
' "$1" &
	bg_record $!
}

# drops SWITCH: {port: {reason: n}} of every nonzero drop reason.
drops() {
	jget "$(ctl "$1" counters)" '{p: {k: v for k, v in c["drop"].items() if v} for p, c in d["ports"].items()}'
}

t_soak() {
	local alive=yes consistent=yes n d1 d2 fabric watchdog j f0 f1
	iperf_server h4 5401
	iperf_server h4 5402
	f0=$(jget "$(ctl S1 counters)" 'd["ports"]["p1"]["flood_tx"] + d["ports"]["p2"]["flood_tx"]')
	misbehave "$SECS"
	iperf_client_bg h1 4 5401 "$L2T_DIR/c1.json" -u -b 50M -l "$UDP_LEN" -t "$SECS"
	c1=$CLI_PID
	iperf_client_bg h2 4 5402 "$L2T_DIR/c2.json" -u -b 50M -l "$UDP_LEN" -t "$SECS"
	c2=$CLI_PID
	# Something for h3's pauses to hold up: h2 -> h3 (h3 cannot strip the
	# l2cc tag, so nothing answers; the frames only need to be sent).
	udp_to_h3 "$SECS"
	# A look every 10 s: what a long run would show on a dashboard.
	for n in $(seq $((SECS / 10))); do
		sleep 10
		info "t=$((n * 10))s: S2 p4 $(mbps "$(port_rate S2 p4 1)") Mbit/s; S1 p3 $(jget "$(ctl S1 counters p3)" '"pause_rx %d storms %d" % (d["ports"]["p3"]["pause_rx"], d["ports"]["p3"]["pause_storms"])')" ||
			info "t=$((n * 10))s: a daemon did not answer"
	done
	wait "$c1" "$c2" "$MISB_PID"
	iperf_server_wait h4 5401
	iperf_server_wait h4 5402
	wait_drained S1 S2
	for n in S1 S2 h1 h2 h4; do
		_l2t_alive "$(sw_pid "$n")" || { alive=no; info "$n is not running: $(tail -2 "$L2T_DIR/$n.log")"; }
	done
	for n in S1 S2; do
		j=$(ctl "$n" status) || { consistent=no; continue; }
		[ "$(jget "$j" "d['umem']['conserved']")" = true ] || { consistent=no; info "$n umem: $(jget "$j" "d['umem']")"; }
	done
	for n in h1 h2 h4; do
		j=$(ctl "$n" status) || { consistent=no; continue; }
		[ "$(jget "$j" "d['umem']['consistent']")" = true ] || { consistent=no; info "$n umem: $(jget "$j" "d['umem']")"; }
	done
	d1=$(drops S1) || d1='{}'
	d2=$(drops S2) || d2='{}'
	f1=$(jget "$(ctl S1 counters)" 'd["ports"]["p1"]["flood_tx"] + d["ports"]["p2"]["flood_tx"]')
	info "S1 drops $d1"
	info "S2 drops $d2"
	info "flood copies of frames from h1 and h2 during the run: $((f1 - f0))"
	fabric=$("$PY" -c '
import json, sys
d1, d2, h3_only = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3] == "0"
# "filtered": a frame whose destination is behind the port it came in on
# (a flooded copy reaching a switch that knows better) is switching, not loss.
flood = ("flood_limit", "reserve", "filtered") if h3_only else ("filtered",)
n = sum(v for p, r in d1.items() if p != "p3" for k, v in r.items() if k != "pause_watchdog")
print(n + sum(v for r in d2.values() for k, v in r.items() if k not in flood))' "$d1" "$d2" "$((f1 - f0))")
	watchdog=$("$PY" -c 'import json, sys; print(sum(r.get("pause_watchdog", 0) for r in json.loads(sys.argv[1]).values()))' "$d1")
	info "frames for h3 dropped by the pause watchdog: $watchdog; h3's own frames dropped at p3: $(jget "$d1" 'sum(d.get("p3", {}).values())')"
	for n in h1 h2; do
		info "$n hostd: host-edge drops $(jget "$(ctl "$n" counters)" 'd["host"]["drop"]'), CNP from strangers $(jget "$(ctl "$n" counters)" 'd.get("cnp_unknown", d.get("path_msg_unknown", "-"))')"
	done
	info "h4 received: $(jget "$(cat "$L2T_DIR/iperf-h4-5401.json")" '"%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6)') + $(jget "$(cat "$L2T_DIR/iperf-h4-5402.json")" '"%.2f" % (d["end"]["sum_received"]["bits_per_second"] / 1e6)') Mbit/s"
	echo "SOAK seconds=$SECS fabric_drops=$fabric daemons_alive=$alive umem_consistent=$consistent"
	[ "$fabric" = 0 ] && [ "$alive" = yes ] && [ "$consistent" = yes ] ||
		fail "fabric_drops=$fabric daemons_alive=$alive umem_consistent=$consistent"
}

run_setup setup
run_test soak t_soak
tests_done
