#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# l2cc demo: a lossless two-switch fabric, then the same fabric without flow
# control, so you can see where the drops go.
#
#   h1 ─┐ unlimited
#       ├─ switch A ══ 1G ══ switch B ── 100M ── h3
#   h2 ─┘
#
# Two UDP senders (h1→h3 and h2→h3, 200 Mbit/s each) share B's 100 Mbit/s
# port to h3. With flow_control = credit on the A–B link, B's input buffer
# never overflows: B stops returning credits, A's uplink waits, and the
# excess is dropped where it enters the fabric (A's host-facing ports, the
# host edge). With flow_control = none, B's input buffer tail-drops: the
# same loss happens inside the fabric.
#
# Needs root and the binaries in build/bin (`make demo` builds them first).
# Everything lives in network namespaces named l2demo-*; they, the daemons
# and iperf3 are removed at the end, on error and on Ctrl-C.
#
# Environment: L2CC_DEMO_DIR (where configs, logs and time series go;
# default results/demo/<date>), L2CC_DEMO_SECONDS (per run, default 8),
# L2CC_DEMO_RATE (per sender, default 200M), L2CC_DEMO_MODES (default
# "credit none"; pause and pfc also work on the A–B link).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN=${L2CC_BIN:-$REPO/build/bin}
SECONDS_PER_RUN=${L2CC_DEMO_SECONDS:-8}
SEND_RATE=${L2CC_DEMO_RATE:-200M}
MODES=${L2CC_DEMO_MODES:-"credit none"}
RUN=${L2CC_DEMO_DIR:-$REPO/results/demo/$(date +%Y%m%d-%H%M%S)}
LOCK=/tmp/l2cc-measure.lock
P=l2demo
NETNS=("$P-h1" "$P-h2" "$P-h3" "$P-a" "$P-b")
PIDS=()

die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, AF_XDP): sudo make demo"
for b in switchd l2ccctl; do
	[ -x "$BIN/$b" ] || die "$BIN/$b is missing; run 'make' (or 'make demo') first"
done
for t in ip ethtool iperf3 ping python3 flock; do
	command -v "$t" >/dev/null || die "$t is missing; run scripts/setup.sh (make demo does)"
done

# ---- teardown ------------------------------------------------------------

# Stop what we started, by PID, then remove our namespaces by name. Also
# used at start, for whatever an earlier run killed with SIGKILL left behind.
stop_pids() {
	local p alive=()

	for p in "$@"; do
		kill "$p" 2>/dev/null && alive+=("$p")
	done
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		local left=()
		for p in "${alive[@]}"; do
			kill -0 "$p" 2>/dev/null && left+=("$p")
		done
		[ ${#left[@]} -eq 0 ] && return 0
		alive=("${left[@]}")
		sleep 0.1
	done
	kill -KILL "${alive[@]}" 2>/dev/null || true
}

del_netns() {
	local n pids

	for n in "${NETNS[@]}"; do
		[ -e "/run/netns/$n" ] || continue
		# Only processes inside our own namespaces (a previous demo's).
		pids=$(ip netns pids "$n" 2>/dev/null || true)
		# shellcheck disable=SC2086
		[ -n "$pids" ] && stop_pids $pids
		ip netns del "$n" 2>/dev/null || true
	done
}

cleanup() {
	trap - EXIT INT TERM
	[ ${#PIDS[@]} -gt 0 ] && stop_pids "${PIDS[@]}"
	PIDS=()
	del_netns
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted, cleaning up"; exit 130' INT TERM

# ---- the fabric ------------------------------------------------------------

in_ns() { local n=$1; shift; ip netns exec "$P-$n" "$@"; }

build_fabric() {
	local h

	del_netns
	for n in "${NETNS[@]}"; do
		ip netns add "$n"
		# No IPv6: the namespaces' own stacks would otherwise send router
		# solicitations and MLD reports on every port, and what a switch
		# namespace's kernel sends on a credit link bypasses the credits.
		ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	# Host veths are called eth0 inside each host; switch ports are named
	# after what they face (their config label is the interface name).
	ip link add name h1 netns "$P-a" type veth peer name eth0 netns "$P-h1"
	ip link add name h2 netns "$P-a" type veth peer name eth0 netns "$P-h2"
	ip link add name up netns "$P-a" type veth peer name up netns "$P-b"
	ip link add name h3 netns "$P-b" type veth peer name eth0 netns "$P-h3"
	for h in 1 2 3; do
		ip -n "$P-h$h" addr add "10.77.0.$h/24" dev eth0
		ip -n "$P-h$h" link set dev lo up
		ip -n "$P-h$h" link set dev eth0 up
		# switchd copies frames through AF_XDP; a checksum the host left
		# for the "hardware" to fill would arrive unfilled.
		in_ns "h$h" ethtool -K eth0 tx off >/dev/null
	done
	for l in h1 h2 up; do ip -n "$P-a" link set dev "$l" up; done
	for l in up h3; do ip -n "$P-b" link set dev "$l" up; done
}

# write_configs DIR MODE: switch A and B, with MODE on the A–B link.
write_configs() {
	local d=$1 mode=$2

	cat >"$d/a.conf" <<EOF
# l2cc demo, switch A: hosts h1 and h2, uplink to B ($mode).
[switch]
name = A
ctl_socket = /run/l2cc/$P-a.sock
stats_file = $d/a.jsonl
stats_interval = 100ms

[port h1]
role = host
rate = unlimited        # the host edge: whatever the host sends arrives
buffer = 256K           # 10 ms at 200M: rides out a busy CPU, not the congestion

[port h2]
role = host
rate = unlimited
buffer = 256K

[port up]
role = switch
rate = 1G
flow_control = $mode
EOF
	cat >"$d/b.conf" <<EOF
# l2cc demo, switch B: uplink from A ($mode), receiver h3 at 100M.
[switch]
name = B
ctl_socket = /run/l2cc/$P-b.sock
stats_file = $d/b.jsonl
stats_interval = 100ms

[port up]
role = switch
rate = 1G
flow_control = $mode    # governs B's input buffer on this port: 64K per priority

[port h3]
role = host
rate = 100M             # the bottleneck
EOF
}

ctl() { "$BIN/l2ccctl" -s "/run/l2cc/$P-$1.sock" "${@:2}"; }

start_switch() { # name conf log
	# ip netns exec execs switchd, so $! is switchd's PID (a shell function
	# in the background would be a subshell in between).
	ip netns exec "$P-$1" "$BIN/switchd" -c "$2" >"$3" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 50); do
		ctl "$1" status >/dev/null 2>&1 && return 0
		kill -0 "${PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "$3" >&2
	die "switch $1 did not start (log: $3)"
}

# ---- live view and summary (python3: the replies are JSON) ------------------

# The measured part: start both senders, then print a line a second from
# both switches' counters until the senders are done.
read -r -d '' SAMPLER <<'PY' || true
import json, signal, subprocess, sys, time
ctl, mode, seconds, rate, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
# Ctrl-C: leave quietly; the shell's trap tears everything down.
signal.signal(signal.SIGINT, lambda *_: sys.exit(130))

def counters(sw):
    r = subprocess.run([ctl, "-r", "-s", "/run/l2cc/l2demo-%s.sock" % sw, "counters"],
                       capture_output=True, text=True, timeout=5)
    return json.loads(r.stdout)["ports"]

def fabric_drops(a, b):
    return sum(p["drops"] for p in b.values()) + a["up"]["drops"]

def edge_drops(a):
    return a["h1"]["drop"]["buffer_full"] + a["h2"]["drop"]["buffer_full"]

print("    t   B→h3 Mbit/s   A uplink                  B input buffer (up)   fabric drops   edge drops")
sys.stdout.flush()
a0, b0 = counters("a"), counters("b")
clients = []
for h, port in (("h1", 5201), ("h2", 5202)):
    clients.append(subprocess.Popen(
        ["ip", "netns", "exec", "l2demo-" + h, "iperf3", "-c", "10.77.0.3", "-p", str(port),
         "-u", "-b", rate, "-l", "1400", "-t", str(seconds), "--json"],
        stdout=open("%s/%s-h3.json" % (d, h), "w"), stderr=subprocess.STDOUT))
t0 = time.monotonic()
prev = (t0, a0, b0)
first = last = (t0, b0)
i = 0
while i < seconds + 5:
    i += 1
    time.sleep(max(0, t0 + i - time.monotonic()))
    now = time.monotonic()
    a, b = counters("a"), counters("b")
    pt, pa, pb = prev
    dt = now - pt
    mbps = (b["h3"]["tx_bytes"] - pb["h3"]["tx_bytes"]) * 8 / dt / 1e6
    waits = a["up"]["prio"][0]["credit_blocked"] - pa["up"]["prio"][0]["credit_blocked"]
    paused = (a["up"]["paused_ns"] - pa["up"]["paused_ns"]) / 1e9 / dt
    if waits:
        up = "credit-blocked %6.0f/s" % (waits / dt)
    elif paused > 0.001:
        up = "paused %3.0f%% of the time" % (100 * paused)
    elif mode == "none":
        up = "never held (no fc)"
    else:
        up = "sending"
    buf = b["up"]["buffer"][0] / 1024
    peak = b["up"]["buffer_peak"][0] / 1024
    print("%5ds %13.1f   %-24s  %5.1f KB (peak %5.1f)   %12d   %10d" %
          (i, mbps, up, buf, peak, fabric_drops(a, b), edge_drops(a)))
    sys.stdout.flush()
    prev = (now, a, b)
    if i == 1:
        first = (now, b)   # skip the first second: the senders start up
    if i <= seconds:
        last = (now, b)
    if i >= seconds and all(c.poll() is not None for c in clients):
        break
rc = [c.wait() for c in clients]
egress = (last[1]["h3"]["tx_bytes"] - first[1]["h3"]["tx_bytes"]) * 8 / (last[0] - first[0]) / 1e6
json.dump({"egress_mbps": egress, "seconds": last[0] - first[0], "iperf3_rc": rc},
          open(d + "/live.json", "w"))
sys.exit(1 if any(rc) else 0)
PY

read -r -d '' SUMMARY <<'PY' || true
import json, sys
d, mode = sys.argv[1], sys.argv[2]
a = json.load(open(d + "/a-end.json"))["ports"]
b = json.load(open(d + "/b-end.json"))["ports"]
live = json.load(open(d + "/live.json"))
res = {"mode": mode}
for f in ("h1", "h2"):
    try:
        j = json.load(open("%s/%s-h3.json" % (d, f)))
        r = j["end"]["sum_received"]
        res[f] = (r["bits_per_second"] / 1e6, r["lost_percent"])
    except (KeyError, ValueError, OSError):
        res[f] = (float("nan"), float("nan"))
res["egress"] = live["egress_mbps"]
fab = {"B " + n: sum(p["drop"].values()) for n, p in b.items()}
fab["A up"] = sum(a["up"]["drop"].values())
res["fabric"] = sum(fab.values())
res["fabric_detail"] = ", ".join("%s %d" % kv for kv in fab.items())
res["b_full"] = b["up"]["drop"]["buffer_full"]
res["edge"] = a["h1"]["drop"]["buffer_full"] + a["h2"]["drop"]["buffer_full"]
res["edge_detail"] = "A h1 %d, A h2 %d" % (a["h1"]["drop"]["buffer_full"], a["h2"]["drop"]["buffer_full"])
res["credit_ba"] = b["up"]["credit_tx"]
res["credit_ab"] = a["up"]["credit_tx"]
res["pause"] = b["up"]["pause_tx"] + b["up"]["pfc_tx"]
res["b_peak"] = b["up"]["buffer_peak"][0]
json.dump(res, open(d + "/summary.json", "w"))
print()
print("  result with flow_control = %s on the A–B link" % mode)
print("  ─────────────────────────────────────────────────────────────")
for f in ("h1", "h2"):
    print("  %s→h3 goodput              %7.1f Mbit/s   (%.1f%% of sent lost)" % (f, res[f][0], res[f][1]))
print("  B egress to h3             %7.1f Mbit/s   (line rate 100)" % res["egress"])
print("  drops inside the fabric    %7d          (%s)" % (res["fabric"], res["fabric_detail"]))
print("  drops at the host edge     %7d          (buffer_full: %s)" % (res["edge"], res["edge_detail"]))
print("  credit updates sent        %7d          (B→A; A→B %d)" % (res["credit_ba"], res["credit_ab"]))
if mode in ("pause", "pfc"):
    print("  PAUSE/PFC frames sent      %7d          (B→A)" % res["pause"])
print("  B input buffer peak        %7.1f KB of 64" % (res["b_peak"] / 1024))
PY

read -r -d '' COMPARE <<'PY' || true
import json, sys
rows = [json.load(open(p + "/summary.json")) for p in sys.argv[1:]]
w = 14
print()
print("  side by side" + "".join(("fc = " + r["mode"]).rjust(w) for r in rows))
print("  " + "─" * (28 + w * len(rows) - 14))
def line(label, fmt, get):
    print("  %-26s" % label + "".join((fmt % get(r)).rjust(w) for r in rows))
line("h1→h3 goodput (Mbit/s)", "%.1f", lambda r: r["h1"][0])
line("h2→h3 goodput (Mbit/s)", "%.1f", lambda r: r["h2"][0])
line("B egress to h3 (Mbit/s)", "%.1f", lambda r: r["egress"])
line("drops inside the fabric", "%d", lambda r: r["fabric"])
line("drops at the host edge", "%d", lambda r: r["edge"])
line("credit updates sent (B→A)", "%d", lambda r: r["credit_ba"])
line("B input buffer peak (KB)", "%.1f", lambda r: r["b_peak"] / 1024)
PY

# ---- one run ---------------------------------------------------------------

run_mode() {
	local mode=$1 d=$RUN/$1 s1 s2

	mkdir -p "$d"
	echo
	echo "=== flow_control = $mode on the A–B link ==="
	write_configs "$d" "$mode"
	start_switch a "$d/a.conf" "$d/a.log"
	start_switch b "$d/b.conf" "$d/b.log"
	echo "switches A and B up (configs and logs in $d)"

	# Ping both ways once so every address is learned and ARP is settled
	# before the measured part.
	in_ns h2 ping -c 1 -W 2 10.77.0.3 >/dev/null || die "h2 cannot reach h3"
	in_ns h1 ping -c 3 -i 0.2 -W 2 10.77.0.3 | sed -n 's/^/  /; /packets transmitted\|rtt/p' \
		|| die "h1 cannot reach h3"

	ip netns exec "$P-h3" iperf3 -s -1 -p 5201 >/dev/null 2>&1 & s1=$!
	ip netns exec "$P-h3" iperf3 -s -1 -p 5202 >/dev/null 2>&1 & s2=$!
	PIDS+=("$s1" "$s2")
	sleep 0.5

	exec 9>"$LOCK"
	if ! flock -n 9; then
		echo "waiting for another measurement on this machine ($LOCK)"
		flock 9
	fi
	echo "two UDP senders, $SEND_RATE each, ${SECONDS_PER_RUN}s: h1→h3 and h2→h3"
	python3 -c "$SAMPLER" "$BIN/l2ccctl" "$mode" "$SECONDS_PER_RUN" "$SEND_RATE" "$d" \
		| tee "$d/live.txt" || echo "demo: an iperf3 client failed; see $d/h*-h3.json" >&2
	flock -u 9
	exec 9>&-

	ctl a -r counters >"$d/a-end.json"
	ctl b -r counters >"$d/b-end.json"
	python3 -c "$SUMMARY" "$d" "$mode" | tee "$d/summary.txt"

	stop_pids "${PIDS[@]}"
	PIDS=()
}

# ---- main ------------------------------------------------------------------

mkdir -p "$RUN"
RUN=$(cd "$RUN" && pwd)
cat <<EOF
l2cc demo: a lossless two-switch fabric (switchd over AF_XDP, in namespaces $P-*)

   h1 ─┐ unlimited
       ├─ switch A ══ 1G ══ switch B ── 100M ── h3
   h2 ─┘

Two UDP senders at $SEND_RATE each share B's 100 Mbit/s port to h3; 3/4 of
what they send cannot be delivered. Where is it dropped?
EOF
build_fabric
dirs=()
for m in $MODES; do
	run_mode "$m"
	dirs+=("$RUN/$m")
done
[ ${#dirs[@]} -gt 1 ] && python3 -c "$COMPARE" "${dirs[@]}"

cat <<EOF

With credits, B never drops: A sends only what B has room for, and the excess
is dropped at A's host-facing ports, where it entered the fabric (hosts do not
slow down yet; hostd, the next piece, will). A serves its two inputs
round-robin, so the flows share B's port evenly. Without flow control the
same excess is tail-dropped inside the fabric, in B's input buffer, and the
flows get whatever share the arrivals at that one buffer happen to give them.

Logs, configs and iperf3 results: $RUN/<mode>/
JSON-lines time series (every 100 ms): $RUN/<mode>/a.jsonl, b.jsonl
Counters explained: docs/switchd.md
EOF
