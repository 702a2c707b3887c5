#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# switchd's emulated line rate: h1 -- s -- h2 with s's port toward h2 at
# 100M (UDP overload), and toward h3 at 1G (TCP). The egress rate is measured
# from the port's tx_bytes counter over the steady middle of each run.
. "$(dirname "$0")/lib.sh"

UDP_LEN=1400
# Frame bytes per UDP datagram: payload + UDP 8 + IPv4 20 + Ethernet 14
# (tx_bytes counts frames without FCS, and wire_overhead is 0).
FRAME_LEN=$((UDP_LEN + 42))

setup() {
	mk_star s 4
	start_switchd s "
[port p1]
ifname = $(ifn p1)
[port p2]
ifname = $(ifn p2)
rate = 100M
[port p3]
ifname = $(ifn p3)
rate = 1G
[port p4]
ifname = $(ifn p4)
rate = 50M"
	# Learn every address before measuring (no flooding during the runs).
	for i in 2 3 4; do
		hx h1 ping -c 1 -W 2 "10.99.0.$i" >/dev/null || fail "ping h1 -> h$i"
	done
}

# One UDP run h1 -> hN at 300M: leaves the egress rate of pN and the
# receiver goodput in RATE and GOOD, how long switchd waited for a CPU
# meanwhile in STARVE_* (the client offers three times the rate: its waits
# explain nothing).
udp_run() { # attempt [host number, 2]
	local port=$((5200 + $1)) h=${2:-2}
	iperf_server "h$h" "$port"
	measure_lock
	iperf_client_bg h1 "$h" "$port" "$L2T_DIR/udp100-$1.json" -u -b 300M -l "$UDP_LEN" -t 5
	sleep 1.2
	starve_begin "switchd=$(sw_pid s)"
	RATE=$(port_rate s "p$h" 3) || fail "reading p$h's counters"
	starve_end
	wait "$CLI_PID"
	measure_unlock
	iperf_server_wait "h$h" "$port" || fail "iperf3 server on h$h did not finish"
	# Receiver goodput over its steady middle seconds (intervals 1..3).
	GOOD=$("$PY" - "$L2T_DIR/iperf-h$h-$port.json" <<'EOF'
import json, sys
iv = [i["sum"] for i in json.load(open(sys.argv[1]))["intervals"]]
mid = iv[1:4]
print(sum(i["bytes"] for i in mid) * 8 / sum(i["seconds"] for i in mid))
EOF
) || fail "iperf3 UDP h1 -> h$h: no receiver report: $(head -c 300 "$L2T_DIR/iperf-h$h-$port.json")"
}

# The shaper can only fall behind when switchd waits for a CPU longer than
# its burst allowance (243 us at 100M), never get ahead: a run short of the
# rate is tried once more (L2CC_RATE_ATTEMPTS, 2), and a shortfall that
# switchd's wait for a CPU explains is a SKIP (lib.sh's
# short_or_starved); every run is printed.
t_rate_100m_udp() {
	local j n expect attempts=${L2CC_RATE_ATTEMPTS:-2} runs=
	j=$(ctl s ports) || fail "l2ccctl ports"
	assert_eq "$(jget "$j" '[p["rate_bps"] for p in d["ports"] if p["name"] == "p2"][0]')" 100000000 "p2 rate_bps"
	for n in $(seq "$attempts"); do
		udp_run "$n"
		expect=$(calc "float('$RATE') * $UDP_LEN / $FRAME_LEN")
		info "100M port, UDP 300M offered, run $n: egress $(mbps "$RATE") Mbit/s of frames (tx_bytes, 3 s mid-run)," \
			"receiver goodput $(mbps "$GOOD") Mbit/s (expected $(mbps "$expect") = egress x $UDP_LEN/$FRAME_LEN); $STARVE_TXT"
		runs="$runs $(mbps "$RATE")"
		assert_le "$RATE" 102e6 "p2 egress rate (bit/s), run $n: above 100M + 2%"
		calc "abs(float('$RATE') - 100e6) <= 2e6" | grep -q True && break
	done
	calc "float('$RATE') >= 98e6" | grep -q True ||
		short_or_starved "p2 egress rate (bit/s) in each of $attempts runs (Mbit/s:$runs)" 100e6 "$RATE"
	assert_within 3 "$expect" "$GOOD" "h2 goodput vs egress rate x $UDP_LEN/$FRAME_LEN (bit/s)"
}

# The breakage check of the rule above: p4 paces at 50M, as a pacer that
# runs at half speed would at 100M. Judged as a 100M port it must FAIL, on
# a busy machine too: the verdict would be a SKIP only if switchd waited for
# a CPU half the window, and then this check cannot tell and says so. (Half,
# not a tenth: with a 300M UDP sender beside it, switchd waits for a CPU
# about a quarter of the time on this otherwise idle 2-core VM, most of it
# in waits shorter than its burst allowance, which cost no rate; the rule
# counts all of it, so it only ever errs toward SKIP.)
t_rate_breakage() {
	udp_run 9 4
	info "p4 (50M, judged as 100M): egress $(mbps "$RATE") Mbit/s; $STARVE_TXT"
	assert_le "$RATE" 51e6 "p4 egress rate (bit/s): above 50M + 2%"
	if starved 100e6 "$RATE"; then
		skip "the check cannot tell: $STARVE_WHO waited $STARVE_S s for a CPU in $STARVE_WIN s, half the window, what a pacer at half speed loses"
	fi
	info "a pacer at half speed is a FAIL: short of 100M by $(calc "'%.3f' % ((1 - float('$RATE') / 100e6) * $STARVE_WIN)") s, longest wait $STARVE_S s ($STARVE_WHO)"
}

t_rate_1g_tcp() {
	local rate tcp
	iperf_server h3 5210
	measure_lock
	iperf_client_bg h1 3 5210 "$L2T_DIR/tcp1g.json" -t 5
	sleep 1.2
	rate=$(port_rate s p3 3) || fail "reading p3's counters"
	wait "$CLI_PID"
	measure_unlock
	tcp=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"])' \
		"$L2T_DIR/tcp1g.json" 2>/dev/null) || fail "iperf3 TCP h1 -> h3 failed: $(head -c 300 "$L2T_DIR/tcp1g.json")"
	iperf_server_wait h3 5210
	info "1G port, TCP: egress $(mbps "$rate") Mbit/s of frames (tx_bytes, 3 s mid-run), iperf3 goodput $(mbps "$tcp") Mbit/s"
	assert_le "$rate" 1.02e9 "p3 egress rate (bit/s)"
	assert_le "$tcp" 1.02e9 "TCP goodput through a 1G port (bit/s)"
	assert_ge "$tcp" 50e6 "TCP goodput through a 1G port (bit/s)"
}

run_setup setup
run_test rate_100M_udp_egress t_rate_100m_udp
run_test rate_breakage t_rate_breakage
run_test rate_1G_tcp t_rate_1g_tcp
tests_done
