#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Link-level flow control between two switchd in series:
#
#   h1 --p1\                                   /-- p3 (100M) -- h3
#           A --up (1G) ====== down (1G)-- B
#   h2 --p2/
#
# Two UDP senders (h1 -> h3 and h2 -> h3, 200M each) overload B's 100M port
# toward h3. With flow_control = pause, pfc or credit on the A-B link, B must
# drop nothing: it holds A back, and the loss moves to A's host ports (hosts
# do not honour PAUSE). With none, B's input buffer overflows.
#
# Knobs for investigating: L2CC_LOSSLESS_CASES="pause pfc credit none
# pause_deep_xoff" picks cases, L2CC_LOSSLESS_DOWN_EXTRA="xoff = 64K" adds
# lines to B's down port, L2CC_LOSSLESS_SWITCH_EXTRA="busy_poll = 1ms" to the
# [switch] section of both switches.
. "$(dirname "$0")/lib.sh"

UDP_LEN=1400
# The A-B link's input buffers: switchd's default. At 1G its PAUSE headroom
# (burst + 2 frames + 500 us of line rate = 78044 bytes) is more than 64K, so
# XOFF sits at half the buffer and frames that arrive after the buffer is full
# wait in B's RX ring (counted as rx_holds) instead of being dropped.
# L2CC_LOSSLESS_BUFFER=256K runs the cases with a buffer that covers it.
LINK_BUFFER=${L2CC_LOSSLESS_BUFFER:-64K}
FRAME_LEN=$((UDP_LEN + 42))

setup() {
	mk_switch A
	mk_switch B
	for i in 1 2 3; do mk_host "h$i"; done
	link_host A p1 h1 1
	link_host A p2 h2 2
	link_host B p3 h3 3
	link_switches A up B down
}

# The A-B veth's drop counters (both ends, both directions), as JSON.
link_stats() {
	"$PY" - "$(ip -n "$(ns A)" -s -j link show "$(ifn up)")" "$(ip -n "$(ns B)" -s -j link show "$(ifn down)")" <<'EOF'
import json, sys
a, b = (json.loads(x)[0]["stats64"] for x in sys.argv[1:3])
print(json.dumps({"A_up_tx_dropped": a["tx"]["dropped"], "A_up_rx_dropped": a["rx"]["dropped"],
                  "B_down_tx_dropped": b["tx"]["dropped"], "B_down_rx_dropped": b["rx"]["dropped"]}))
EOF
}

# run_case TAG FC [DOWN_EXTRA]: start A and B with flow_control = FC on the
# A-B link (and DOWN_EXTRA lines in B's down port), run the two senders, and
# leave the figures in $L2T_DIR/TAG.result.json.
run_case() {
	local tag=$1 fc=$2 extra=${3:-} i c1 c2 log0
	log0=0
	[ -f "$L2T_DIR/B.log" ] && log0=$(wc -l <"$L2T_DIR/B.log")
	start_switchd A "${L2CC_LOSSLESS_SWITCH_EXTRA:-}
[port p1]
ifname = $(ifn p1)
[port p2]
ifname = $(ifn p2)
[port up]
ifname = $(ifn up)
rate = 1G
role = switch
buffer = $LINK_BUFFER
flow_control = $fc"
	start_switchd B "${L2CC_LOSSLESS_SWITCH_EXTRA:-}
[port down]
ifname = $(ifn down)
rate = 1G
role = switch
buffer = $LINK_BUFFER
flow_control = $fc
$extra
${L2CC_LOSSLESS_DOWN_EXTRA:-}
[port p3]
ifname = $(ifn p3)
rate = 100M"
	for i in 1 2; do
		hx "h$i" ping -c 1 -W 2 10.99.0.3 >/dev/null || fail "ping h$i -> h3 before the run ($tag)"
	done
	iperf_server h3 5201
	iperf_server h3 5202
	link_stats >"$L2T_DIR/$tag-link0.json"
	ctl B counters >"$L2T_DIR/$tag-B0.json" || fail "l2ccctl B counters ($tag)"
	measure_lock
	date +%s.%N >"$L2T_DIR/$tag-t0"
	iperf_client_bg h1 3 5201 "$L2T_DIR/$tag-c1.json" -u -b 200M -l "$UDP_LEN" -t 5
	c1=$CLI_PID
	iperf_client_bg h2 3 5202 "$L2T_DIR/$tag-c2.json" -u -b 200M -l "$UDP_LEN" -t 5
	c2=$CLI_PID
	starve_begin "A=$(sw_pid A)" "B=$(sw_pid B)"
	sleep 1.2
	port_rate B p3 3 >"$L2T_DIR/$tag-rate" || fail "reading B's counters ($tag)"
	wait "$c1" "$c2"
	starve_end
	date +%s.%N >"$L2T_DIR/$tag-t1"
	measure_unlock
	iperf_server_wait h3 5201
	iperf_server_wait h3 5202
	# Let the queues drain before reading the final counters.
	wait_drained A B
	ctl A counters >"$L2T_DIR/$tag-A.json" || fail "l2ccctl A counters ($tag)"
	ctl B counters >"$L2T_DIR/$tag-B.json" || fail "l2ccctl B counters ($tag)"
	ctl B queues >"$L2T_DIR/$tag-Bq.json" || fail "l2ccctl B queues ($tag)"
	ctl B ports >"$L2T_DIR/$tag-Bp.json" || fail "l2ccctl B ports ($tag)"
	link_stats >"$L2T_DIR/$tag-link1.json"
	tail -n "+$((log0 + 1))" "$L2T_DIR/B.log" | grep "headroom" | tail -1 >"$L2T_DIR/$tag-warn"
	stop_switchd A || fail "switchd A did not stop ($tag)"
	stop_switchd B || fail "switchd B did not stop ($tag)"
	"$PY" - "$L2T_DIR" "$tag" "$UDP_LEN" "$FRAME_LEN" >"$L2T_DIR/$tag.result.json" <<'EOF' ||
import json, sys
d, fc, ulen, flen = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ld = lambda n: json.load(open("%s/%s-%s" % (d, fc, n)))
A, B, B0 = ld("A.json")["ports"], ld("B.json")["ports"], ld("B0.json")["ports"]
kern = ("rx_dropped", "rx_ring_full", "rx_fill_ring_empty_descs")
# B's time series (every 100 ms): in the steady part of the run, how often
# was the input buffer toward h3 empty (h3's port starved, not shaped)?
t0, t1 = float(open("%s/%s-t0" % (d, fc)).read()), float(open("%s/%s-t1" % (d, fc)).read())
ts = [json.loads(l) for l in open("%s/B.stats" % d) if l.strip()]
ts = [l for l in ts if t0 + 1.0 <= l["t"] <= t1 - 0.5 and l["ports"]["p3"]["tx_bytes"] > 0]
starved = sum(1 for l in ts if l["ports"]["p3"]["voq_frames"] == 0)
q = ld("Bq.json")
good = 0.0
for port in (5201, 5202):
    iv = [i["sum"] for i in json.load(open("%s/iperf-h3-%d.json" % (d, port)))["intervals"]][1:4]
    good += sum(i["bytes"] for i in iv) * 8 / sum(i["seconds"] for i in iv)
cap = [i["capacity"] for i in q["inputs"] if i["port"] == "down"][0]
r = {
    "fc": fc,
    "B_drops": sum(p["drops"] for p in B.values()),
    "B_drop": {n: {k: v for k, v in p["drop"].items() if v} for n, p in B.items()},
    "B_buffer_full": sum(p["drop"]["buffer_full"] for p in B.values()),
    "A_drops_host_ports": A["p1"]["drops"] + A["p2"]["drops"],
    "A_up_drops": A["up"]["drops"],
    "A_up_paused_ms": A["up"]["paused_ns"] / 1e6,
    "A_up_credit_blocked": sum(p["credit_blocked"] for p in A["up"]["prio"]),
    "A_up_rx": {k: A["up"][k] for k in ("pause_rx", "pfc_rx", "credit_rx", "fc_ignored")},
    "B_down_tx": {k: B["down"][k] for k in ("pause_tx", "pfc_tx", "credit_tx")},
    "B_kernel_drops": {k: B["down"]["xdp"][k] - B0["down"]["xdp"][k] for k in kern},
    "B_kernel_drops_before_traffic": {k: B0["down"]["xdp"][k] for k in kern if B0["down"]["xdp"][k]},
    "B_p3_starved_samples": "%d of %d" % (starved, len(ts)),
    "link_drops": {k: ld("link1.json")[k] - ld("link0.json")[k] for k in ld("link0.json")},
    "B_down_peak": max(B["down"]["buffer_peak"]),
    "B_down_capacity": cap,
    "B_xoff": [p["xoff"] for p in ld("Bp.json")["ports"] if p["name"] == "down"][0],
    "B_p3_rate": float(open("%s/%s-rate" % (d, fc)).read()),
    "h3_goodput": good,
    "h3_goodput_wire_equiv": good * flen / ulen,
}
print(json.dumps(r))
EOF
		fail "could not collect the results ($tag): see $L2T_DIR"
}

report() { # result json
	local r=$1 tag
	tag=$(jget "$r" 'd["fc"]')
	[ -s "$L2T_DIR/$tag-warn" ] && info "$tag: B warned at start: $(sed 's/^.*warn[a-z]* switch: //' "$L2T_DIR/$tag-warn")"
	info "$(jget "$r" '"%s: B drops %d %s, B down buffer_peak %d of capacity %d bytes (xoff %d), A up paused %.1f ms, credit_blocked %d, B down tx %s, A up rx %s, A host-port drops %d; kernel %s, link %s" % (d["fc"], d["B_drops"], d["B_drop"], d["B_down_peak"], d["B_down_capacity"], d["B_xoff"], d["A_up_paused_ms"], d["A_up_credit_blocked"], d["B_down_tx"], d["A_up_rx"], d["A_drops_host_ports"], d["B_kernel_drops"], d["link_drops"])')"
	info "$(jget "$r" '"%s: h3 goodput %.2f Mbit/s (%.2f Mbit/s of frames), B p3 egress %.2f Mbit/s; p3 had nothing queued in %s time-series samples" % (d["fc"], d["h3_goodput"] / 1e6, d["h3_goodput_wire_equiv"] / 1e6, d["B_p3_rate"] / 1e6, d["B_p3_starved_samples"])')"
	[ "$(jget "$r" 'd["B_kernel_drops_before_traffic"]')" = "{}" ] ||
		info "NOTE $(jget "$r" 'd["fc"]'): B's down socket lost frames at startup, before any traffic: $(jget "$r" 'd["B_kernel_drops_before_traffic"]')"
}

# lossless_checks TAG FC: what every run must show, whatever the machine.
lossless_checks() {
	local tag=$1 fc=$2 r
	r=$(cat "$L2T_DIR/$tag.result.json")
	report "$r"
	info "$tag: $STARVE_TXT"
	assert_eq "$(jget "$r" 'd["B_drops"]')" 0 "$tag: frames dropped by B (sum over its ports)"
	assert_eq "$(jget "$r" 'sum(d["B_kernel_drops"].values()) + sum(d["link_drops"].values())')" 0 \
		"$tag: frames lost on the A-B link or in B's AF_XDP rings"
	case $fc in
	pause | pfc)
		assert_ge "$(jget "$r" 'd["A_up_paused_ms"]')" 0.000001 "$tag: A up paused_ns"
		assert_ge "$(jget "$r" "d['B_down_tx']['${fc}_tx']")" 1 "$tag: B down ${fc}_tx"
		;;
	credit)
		assert_ge "$(jget "$r" 'd["A_up_credit_blocked"]')" 1 "$tag: A up credit_blocked"
		assert_ge "$(jget "$r" 'd["B_down_tx"]["credit_tx"]')" 1 "$tag: B down credit_tx"
		;;
	esac
	GOODPUT=$(jget "$r" 'd["h3_goodput_wire_equiv"]')
}

# Goodput short of 90M is tried once more; short twice, it is a SKIP when
# A's or B's wait for a CPU explains it (lib.sh's short_or_starved).
t_lossless() { # TAG FC [DOWN_EXTRA]
	local tag=$1 fc=$2 n
	for n in 1 2; do
		run_case "$@"
		lossless_checks "$tag" "$fc"
		calc "float('$GOODPUT') >= 90e6" | grep -q True && return 0
		info "$tag: h3 goodput $(mbps "$GOODPUT") Mbit/s, short of 90 in run $n"
	done
	short_or_starved "$tag: h3 goodput in frame bit/s, 2 runs" 90e6 "$GOODPUT"
}

t_none() {
	local r
	run_case none none
	r=$(cat "$L2T_DIR/none.result.json")
	report "$r"
	assert_ge "$(jget "$r" 'd["B_buffer_full"]')" 1 "none: B drop.buffer_full"
}

# PAUSE with the default thresholds must be lossless. Not run by default,
# L2CC_LOSSLESS_CASES=pause_deep_xoff runs PAUSE with 384K of headroom above
# XOFF (buffer 512K, xoff 128K): B's buffer_peak - xoff then shows how far
# past XOFF the upstream keeps sending on this machine.
DEEP="buffer = 512K
xoff = 128K
xon = 112K"

run_setup setup
for c in ${L2CC_LOSSLESS_CASES:-pause pfc credit none}; do
	case $c in
	none) run_test lossless_none_drops t_none ;;
	pause_deep_xoff) run_test lossless_pause_deep_xoff t_lossless pause_deep_xoff pause "$DEEP" ;;
	*) run_test "lossless_$c" t_lossless "$c" "$c" ;;
	esac
done
tests_done
