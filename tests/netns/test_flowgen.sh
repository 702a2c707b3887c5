#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# l2cc-flowgen, the FCT traffic generator, on two hosts joined by a plain
# veth pair (no switchd: this tests the generator, not the fabric).
#
#   h1 eth0 (10.99.0.1, clients) -veth- h2 eth0 (10.99.0.2, servers)
#
# What it checks, and why:
#  - flowgen_poisson_fixed: 50 flows of 100 kB with Poisson arrivals all
#    complete; every FCT is > 0; the summary agrees with the flow list and
#    the server counted the same flows and bytes (protocol end to end).
#  - flowgen_pareto / flowgen_cdf: the size distributions, through --dry-run
#    (2000 draws, no network): the Pareto sample mean is within 20% of the
#    requested mean and nothing is below xm; an empirical CDF reproduces its
#    median and range; the same seed gives the same schedule.
#  - flowgen_onoff: a 10M ON/OFF source for 2 s sends rate x ON time within
#    10%, the ON periods add up, and the server received every byte.
#  - flowgen_onoff_udp: the same over UDP (--udp, no TCP dynamics): 20M,
#    ON/OFF 50 ms/50 ms for 2 s; bytes are rate x ON time within 10%, the
#    datagrams fill the veth's MTU (1500 - 28), the server counted them
#    (what it read plus its receive-buffer drops is the client's count,
#    within 1%), both exit 0. To a port nobody listens on, the ICMP port
#    unreachables are counted (refused), not fatal.
#  - flowgen_owd: one-way delay of stamped UDP datagrams. On the bare veth
#    the server times every datagram (no loss, p50 under 1 ms). Through a
#    tbf of 10 Mbit/s and 50 kB on h1's eth0, a 20M source keeps the queue
#    full: the delay is the queue's drain time (~40 ms; p50 within 25..60
#    ms) and about half the datagrams are lost. On the bare veth the
#    deviation from the 100 ms running mean has p99 under 2 ms.
#    A second source starting mid-run into that queue (5M alone first,
#    then 20M more) steps the delay up: the deviation's max is then
#    several ms.
#  - flowgen_rr: request/response (--rr 500/s, 64-byte datagrams): every
#    request answered, about rate x duration of them, the two one-way
#    delays add up to no more than the round trip; with a 20M UDP source
#    filling the tbf on h1 (requests' direction only), the request delay
#    is the queue's (> 20 ms) and the response delay stays under 5 ms.
#  - flowgen_max_open: 20 flows at once with --max-open 2: all complete, the
#    ones that waited are marked limited and late.
#  - flowgen_refused: flows to a port nobody listens on are counted as
#    failed, with the reason; the client does not crash; --timeout fails
#    flows to an address that never answers.
#  - flowgen_badargs: bad arguments exit 2 and name the option (--udp
#    without --onoff among them, and the --rr options).
. "$(dirname "$0")/lib.sh"

FLOWGEN=${FLOWGEN:-$L2CC_ROOT/build/bin/l2cc-flowgen}

setup() {
	[ -x "$FLOWGEN" ] || fail "$FLOWGEN not built (make all)"
	mk_host h1
	mk_host h2
	ip -n "$(ns h1)" link add eth0 type veth peer name eth0 netns "$(ns h2)" ||
		fail "veth h1:eth0 - h2:eth0"
	ip -n "$(ns h1)" addr add 10.99.0.1/24 dev eth0 || fail "address on h1"
	ip -n "$(ns h2)" addr add 10.99.0.2/24 dev eth0 || fail "address on h2"
	ip -n "$(ns h1)" link set eth0 up || fail "h1 eth0 up"
	ip -n "$(ns h2)" link set eth0 up || fail "h2 eth0 up"
}

# jf FILE PYEXPR: evaluate PYEXPR with d = the JSON in FILE (jget takes the
# document as an argument, and 2000 flows are over the 128 KiB argv limit).
jf() {
	"$PY" -c '
import json, statistics, sys
d = json.load(open(sys.argv[1]))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1" "$2"
}

# server NAME PORT [ARGS...]: l2cc-flowgen server in h2, JSON summary in
# $L2T_DIR/NAME.json; waits until it listens. Its PID is left in SRV_PID.
server() {
	local name=$1 port=$2
	shift 2
	# Not through hx: a function run with & is a subshell, and $! would be
	# that shell, not the server that server_stop and the cleanup signal.
	ip netns exec "$(ns h2)" "$FLOWGEN" server -p "$port" "$@" \
		>"$L2T_DIR/$name.json" 2>"$L2T_DIR/$name.log" &
	SRV_PID=$!
	bg_record "$SRV_PID"
	for _ in $(seq 100); do
		hx h2 ss -Hltn "sport = :$port" | grep -q . && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "flowgen server on port $port did not start: $(cat "$L2T_DIR/$name.log")"
}

# server_wait: wait (up to 5 s) for the server to exit by itself (--once);
# fails with its log if it does not, or exits non-zero.
server_wait() {
	local name=$1 rc
	for _ in $(seq 100); do
		_l2t_alive "$SRV_PID" || break
		sleep 0.05
	done
	_l2t_alive "$SRV_PID" && fail "server $name did not exit after --once: $(cat "$L2T_DIR/$name.log")"
	wait "$SRV_PID"
	rc=$?
	[ "$rc" -eq 0 ] || fail "server $name exited with $rc: $(cat "$L2T_DIR/$name.log")"
}

# server_stop NAME: SIGTERM the server (one without --once) and wait (up to
# 5 s) for its exit; fails with its log unless it exits 0.
server_stop() {
	local name=$1 rc
	kill -TERM "$SRV_PID" 2>/dev/null
	for _ in $(seq 100); do
		_l2t_alive "$SRV_PID" || break
		sleep 0.05
	done
	_l2t_alive "$SRV_PID" && fail "server $name did not exit on SIGTERM: $(cat "$L2T_DIR/$name.log")"
	wait "$SRV_PID"
	rc=$?
	[ "$rc" -eq 0 ] || fail "server $name exited with $rc: $(cat "$L2T_DIR/$name.log")"
}

# client NAME ARGS...: l2cc-flowgen client in h1 against h2, JSON into
# $L2T_DIR/NAME.json; fails with its stderr on a non-zero exit.
client() {
	local name=$1 rc
	shift
	timeout 20 ip netns exec "$(ns h1)" "$FLOWGEN" client -c 10.99.0.2 "$@" \
		>"$L2T_DIR/$name.json" 2>"$L2T_DIR/$name.log"
	rc=$?
	[ "$rc" -eq 0 ] || fail "client $name exited with $rc: $(cat "$L2T_DIR/$name.log")"
}

t_poisson_fixed() {
	local j=$L2T_DIR/pf.json n ok failed nfct minfct bytes s
	server pf-srv 5701 --once 50
	client pf -p 5701 --poisson 100 --flows 50 --size 100000 --seed 1
	server_wait pf-srv
	n=$(jf "$j" 'len(d["flows"])')
	ok=$(jf "$j" 'd["summary"]["completed"]')
	failed=$(jf "$j" 'd["summary"]["failed"]')
	nfct=$(jf "$j" 'sum(1 for f in d["flows"] if f["fct_us"] is not None and f["fct_us"] > 0)')
	minfct=$(jf "$j" 'min(f["fct_us"] for f in d["flows"])')
	bytes=$(jf "$j" 'd["summary"]["bytes"]')
	info "50 flows x 100000 B, Poisson 100/s over $(jf "$j" '"%.3f" % d["flows"][-1]["start"]') s:" \
		"completed $ok, failed $failed; FCT us $(jf "$j" '" ".join("%s %.0f" % kv for kv in d["summary"]["fct_us"].items())');" \
		"late us mean $(jf "$j" '"%.1f" % d["summary"]["late_us"]["mean"]')"
	assert_eq "$n" 50 "flows listed"
	assert_eq "$(jf "$j" 'd["summary"]["flows"]')" 50 "summary.flows"
	assert_eq "$ok" 50 "summary.completed"
	assert_eq "$failed" 0 "summary.failed"
	assert_eq "$nfct" 50 "flows with an FCT > 0"
	assert_ge "$minfct" 1 "smallest FCT (us)"
	assert_eq "$bytes" 5000000 "summary.bytes"
	assert_eq "$(jf "$j" 'sorted(f["id"] for f in d["flows"]) == list(range(50))')" true "flow ids 0..49"
	assert_eq "$(jf "$j" 'all(f["size"] == 100000 for f in d["flows"])')" true "every size 100000"
	s=$L2T_DIR/pf-srv.json
	assert_eq "$(jf "$s" 'd["completed"]')" 50 "server: completed flows"
	assert_eq "$(jf "$s" 'd["bytes"]')" 5000000 "server: bytes read"
}

t_pareto() {
	local j=$L2T_DIR/par.json shape mean xm m
	for shape in 2.5 1.5; do
		mean=50000
		"$FLOWGEN" client --dry-run --flows 2000 --pareto "$shape,$mean" --seed 42 >"$j" ||
			fail "dry run --pareto $shape,$mean"
		m=$(jf "$j" 'sum(f["size"] for f in d["flows"]) / len(d["flows"])')
		xm=$(calc "$mean * ($shape - 1) / $shape")
		info "Pareto shape $shape mean $mean: 2000 sizes, sample mean $m," \
			"min $(jf "$j" 'min(f["size"] for f in d["flows"])') (xm $xm)," \
			"p50 $(jf "$j" 'd["summary"]["size"]["p50"]'), max $(jf "$j" 'd["summary"]["size"]["max"]')"
		assert_eq "$(jf "$j" 'len(d["flows"])')" 2000 "sizes drawn"
		assert_within 20 "$mean" "$m" "Pareto $shape sample mean"
		assert_ge "$(jf "$j" 'min(f["size"] for f in d["flows"])')" "$(calc "int($xm)")" "smallest size vs xm"
		assert_eq "$(jf "$j" 'd["summary"]["size"]["mean"]')" "$m" "summary.size.mean"
	done
	# Reproducible: the same seed, the same schedule; another seed, another.
	"$FLOWGEN" client --dry-run --poisson 50 --flows 100 --pareto 1.5,10000 --seed 9 >"$L2T_DIR/a.json"
	"$FLOWGEN" client --dry-run --poisson 50 --flows 100 --pareto 1.5,10000 --seed 9 >"$L2T_DIR/b.json"
	"$FLOWGEN" client --dry-run --poisson 50 --flows 100 --pareto 1.5,10000 --seed 10 >"$L2T_DIR/c.json"
	cmp -s "$L2T_DIR/a.json" "$L2T_DIR/b.json" || fail "same seed, different schedules"
	cmp -s "$L2T_DIR/a.json" "$L2T_DIR/c.json" && fail "seeds 9 and 10 gave the same schedule"
	# Sizes have their own random stream: the arrival times do not move.
	"$FLOWGEN" client --dry-run --poisson 50 --flows 100 --size 1 --seed 9 >"$L2T_DIR/d.json"
	assert_eq "$(jf "$L2T_DIR/a.json" '[f["start"] for f in d["flows"]]')" \
		"$(jf "$L2T_DIR/d.json" '[f["start"] for f in d["flows"]]')" "arrival times with another size option"
}

t_cdf() {
	local j=$L2T_DIR/cdf.json cdf=$L2T_DIR/sizes.cdf med
	# Steep around the median (20% of the mass in 9000..11000), so 2000
	# draws pin the sample median to within about 1%.
	cat >"$cdf" <<-'EOF'
		# size cdf
		1000    0
		9000    0.4
		11000   0.6   # the median is 10000
		100000  1
	EOF
	"$FLOWGEN" client --dry-run --flows 2000 --cdf "$cdf" --seed 5 >"$j" || fail "dry run --cdf"
	med=$(jf "$j" 'statistics.median(f["size"] for f in d["flows"])')
	info "CDF median 10000: sample median $med, range" \
		"$(jf "$j" 'min(f["size"] for f in d["flows"])')..$(jf "$j" 'max(f["size"] for f in d["flows"])')"
	assert_within 5 10000 "$med" "CDF sample median"
	assert_ge "$(jf "$j" 'min(f["size"] for f in d["flows"])')" 1000 "smallest CDF size"
	assert_le "$(jf "$j" 'max(f["size"] for f in d["flows"])')" 100000 "largest CDF size"
	# 40% +- 4 points: over three binomial standard errors (1.1 points).
	assert_within 10 40 "$(jf "$j" '100 * sum(1 for f in d["flows"] if f["size"] <= 9000) / 2000')" \
		"% of sizes <= 9000 (CDF 0.4)"
}

t_onoff() {
	local j=$L2T_DIR/oo.json s=$L2T_DIR/oo-srv.json on bytes expect
	server oo-srv 5702 --once 1
	client oo -p 5702 --onoff 0.2,0.2 --rate 10M --duration 2 --seed 1
	server_wait oo-srv
	on=$(jf "$j" 'd["on_time"]')
	bytes=$(jf "$j" 'd["bytes"]')
	expect=$(calc "10e6 / 8 * $on")
	info "ON/OFF 10M for 2 s: $(jf "$j" 'len(d["on_periods"])') ON periods, ON $on s," \
		"$bytes B sent (rate x ON time = $(calc "int($expect)") B), server read $(jf "$s" 'd["bytes"]') B"
	assert_ge "$on" 0.3 "total ON time (seed 1)"
	assert_within 10 "$expect" "$bytes" "bytes vs rate x ON time"
	assert_eq "$(jf "$j" 'sum(p["bytes"] for p in d["on_periods"])')" "$bytes" "sum of per-period bytes"
	assert_eq "$(jf "$j" 'all(abs(p["bytes"] - 10e6 / 8 * p["dur"]) <= 2 * d["chunk"] for p in d["on_periods"])')" \
		true "every ON period within two chunks of rate x its length"
	assert_eq "$(jf "$s" 'd["streams"]')" 1 "server: streams"
	assert_eq "$(jf "$s" 'd["bytes"]')" "$bytes" "server: bytes read"
}

t_onoff_udp() {
	local j=$L2T_DIR/ou.json s=$L2T_DIR/ou-srv.json on bytes expect dg
	server ou-srv 5704
	client ou -p 5704 --onoff 0.05,0.05 --rate 20M --duration 2 --udp --seed 1
	server_stop ou-srv
	on=$(jf "$j" 'd["on_time"]')
	bytes=$(jf "$j" 'd["bytes"]')
	dg=$(jf "$j" 'd["datagrams"]')
	expect=$(calc "20e6 / 8 * $on")
	info "UDP ON/OFF 20M for 2 s: $(jf "$j" 'len(d["on_periods"])') ON periods, ON $on s," \
		"$bytes B in $dg datagrams of $(jf "$j" 'd["chunk"]') B (rate x ON time = $(calc "int($expect)") B)," \
		"send_blocked $(jf "$j" 'd["send_blocked"]'), refused $(jf "$j" 'd["refused"]');" \
		"server read $(jf "$s" 'd["udp_datagrams"]') datagrams, $(jf "$s" 'd["udp_bytes"]') B," \
		"dropped $(jf "$s" 'd["udp_drops"]')"
	assert_eq "$(jf "$j" 'd["proto"]')" udp "proto"
	assert_eq "$(jf "$j" 'd["mtu"]')" 1500 "path MTU (veth)"
	assert_eq "$(jf "$j" 'd["chunk"]')" 1472 "default datagram size (MTU - 28)"
	assert_ge "$on" 0.3 "total ON time (seed 1)"
	assert_within 10 "$expect" "$bytes" "bytes vs rate x ON time"
	assert_eq "$(jf "$j" 'sum(p["bytes"] for p in d["on_periods"])')" "$bytes" "sum of per-period bytes"
	assert_eq "$(jf "$j" 'd["send_blocked"]')" 0 "sends refused by a full host queue (20M into a veth)"
	assert_ge "$dg" "$(calc "int($bytes / 1472)")" "datagrams"
	assert_ge "$(jf "$s" 'd["udp_datagrams"]')" 1 "server: datagrams read"
	assert_within 1 "$dg" "$(jf "$s" 'd["udp_datagrams"] + d["udp_drops"]')" \
		"server: datagrams read + dropped vs sent"
	assert_le "$(jf "$s" 'd["udp_bytes"]')" "$bytes" "server: UDP bytes read"
	assert_eq "$(jf "$s" 'd["streams"]')" 0 "server: TCP streams"
	assert_eq "$(jf "$s" 'd["bytes"]')" 0 "server: TCP bytes"
	# Nobody on 5798: the ICMP port unreachables come back as ECONNREFUSED
	# on later sends. The source counts them and goes on.
	client our -p 5798 --onoff 0.1,0.1 --rate 5M --duration 1 --udp --seed 2
	info "UDP ON/OFF to a closed port: $(jf "$L2T_DIR/our.json" 'd["datagrams"]') datagrams," \
		"refused $(jf "$L2T_DIR/our.json" 'd["refused"]')"
	assert_ge "$(jf "$L2T_DIR/our.json" 'd["refused"]')" 1 "sends that reported a port unreachable"
	assert_eq "$(jf "$L2T_DIR/our.json" '"error" in d')" false "an error in the report"
}

# tbf_on / tbf_off: a 10 Mbit/s, 50 kB queue on h1's eth0 (toward h2).
tbf_on() {
	hx h1 tc qdisc replace dev eth0 root tbf rate 10mbit burst 5k limit 50k ||
		fail "tbf on h1 eth0"
}
tbf_off() {
	hx h1 tc qdisc del dev eth0 root 2>/dev/null
}

# owd FILE KEY: the server's udp_streams entry of the client's stream, KEY of it.
owd() {
	"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
st = [x for x in s["udp_streams"] if x["stream"] == c["stream"]]
v = eval(sys.argv[3], {"st": st[0] if st else None})
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)' "$1" "$2" "$3"
}

t_owd() {
	local j=$L2T_DIR/ow.json s=$L2T_DIR/ow-srv.json
	server ow-srv 5705
	client ow -p 5705 --onoff 1000,0.001 --rate 5M --duration 1 --udp --seed 1
	tbf_on
	client ow2 -p 5705 --onoff 1000,0.001 --rate 20M --duration 1 --udp --seed 2
	# 5M alone for 0.6 s, then 20M more into the same queue.
	timeout 20 ip netns exec "$(ns h1)" "$FLOWGEN" client -c 10.99.0.2 -p 5705 --onoff 1000,0.001 \
		--rate 5M --duration 1.2 --udp --seed 3 >"$L2T_DIR/ow3.json" 2>"$L2T_DIR/ow3.log" &
	local p3=$!
	bg_record "$p3"
	sleep 0.6
	client ow4 -p 5705 --onoff 1000,0.001 --rate 20M --duration 0.5 --udp --seed 4
	wait "$p3" || fail "client ow3: $(cat "$L2T_DIR/ow3.log")"
	tbf_off
	server_stop ow-srv
	info "bare veth, 5M: $(owd "$j" "$s" 'st["datagrams"]') of $(jf "$j" 'd["stamped"]') stamped datagrams timed," \
		"owd us $(owd "$j" "$s" 'st["owd_us"]')"
	info "tbf 10M/50k, 20M: $(owd "$L2T_DIR/ow2.json" "$s" 'st["datagrams"]') of $(jf "$L2T_DIR/ow2.json" 'd["stamped"]')," \
		"owd us $(owd "$L2T_DIR/ow2.json" "$s" 'st["owd_us"]')"
	info "tbf 10M/50k, 5M then 20M more: owd us $(owd "$L2T_DIR/ow3.json" "$s" 'st["owd_us"]')"
	assert_eq "$(owd "$j" "$s" 'st is not None')" true "the server knows the client's stream"
	assert_ge "$(jf "$j" 'd["stamped"]')" 400 "stamped datagrams sent (5M, 1 s, 1472 B)"
	assert_eq "$(owd "$j" "$s" 'st["datagrams"]')" "$(jf "$j" 'd["stamped"]')" "datagrams timed on the bare veth"
	assert_eq "$(owd "$j" "$s" 'st["lost"]')" 0 "lost on the bare veth"
	assert_eq "$(owd "$j" "$s" 'st["owd_us"]["count"]')" "$(jf "$j" 'd["stamped"]')" "owd samples"
	assert_eq "$(owd "$j" "$s" '0 < st["owd_us"]["p50"] < 1000')" true "bare veth: 0 < owd p50 < 1 ms"
	assert_eq "$(owd "$L2T_DIR/ow2.json" "$s" '25e3 <= st["owd_us"]["p50"] <= 60e3')" true \
		"tbf: owd p50 is the queue's drain time (25..60 ms)"
	assert_eq "$(owd "$L2T_DIR/ow2.json" "$s" '0.3 <= st["lost"] / (st["lost"] + st["datagrams"]) <= 0.7')" true \
		"tbf: about half of 20M lost into 10M"
	assert_eq "$(owd "$j" "$s" 'st["owd_us"]["dev_p99"] < 2e3')" true \
		"bare veth: deviation from the running mean p99 under 2 ms"
	assert_eq "$(owd "$L2T_DIR/ow3.json" "$s" 'st["owd_us"]["dev_max"] > 5e3')" true \
		"a step in the queue: deviation from the running mean over 5 ms"
	assert_eq "$(owd "$L2T_DIR/ow3.json" "$s" 'st["owd_us"]["max"] > 20e3 and st["owd_us"]["p50"] < st["owd_us"]["max"] / 2')" true \
		"a step in the queue: low delay first, then the queue's"
}

t_rr() {
	local j=$L2T_DIR/rr.json s=$L2T_DIR/rr-srv.json
	server rr-srv 5706
	client rr -p 5706 --rr 500 --duration 1 --seed 1
	info "rr 500/s for 1 s: $(jf "$j" 'd["requests"]') requests, $(jf "$j" 'd["responses"]') responses;" \
		"rtt us $(jf "$j" 'd["rtt_us"]'); req $(jf "$j" 'd["req_owd_us"]["mean"]'), resp $(jf "$j" 'd["resp_owd_us"]["mean"]')"
	assert_within 30 500 "$(jf "$j" 'd["requests"]')" "requests (500/s, 1 s)"
	assert_eq "$(jf "$j" 'd["lost"]')" 0 "lost exchanges"
	assert_eq "$(jf "$j" 'd["responses"]')" "$(jf "$j" 'd["requests"]')" "responses"
	assert_eq "$(jf "$j" 'd["owd_us"]["count"]')" "$(jf "$j" '2 * d["responses"]')" "one-way samples (both directions)"
	assert_eq "$(jf "$j" 'd["req_owd_us"]["mean"] > 0 and d["resp_owd_us"]["mean"] > 0')" true "one-way delays > 0"
	assert_eq "$(jf "$j" 'd["req_owd_us"]["mean"] + d["resp_owd_us"]["mean"] <= d["rtt_us"]["mean"]')" true \
		"request + response delay <= round trip"
	# A queue on the requests' way only.
	tbf_on
	timeout 20 ip netns exec "$(ns h1)" "$FLOWGEN" client -c 10.99.0.2 -p 5706 --onoff 1000,0.001 \
		--rate 20M --duration 1.5 --udp --seed 3 >"$L2T_DIR/rrbg.json" 2>"$L2T_DIR/rrbg.log" &
	local pbg=$!
	bg_record "$pbg"
	sleep 0.3
	client rrq -p 5706 --rr 200 --duration 1 --seed 2
	wait "$pbg" || fail "background source: $(cat "$L2T_DIR/rrbg.log")"
	tbf_off
	server_stop rr-srv
	j=$L2T_DIR/rrq.json
	info "rr behind a full 10M queue: $(jf "$j" 'd["responses"]') of $(jf "$j" 'd["requests"]');" \
		"req owd us $(jf "$j" 'd["req_owd_us"]'); resp owd us $(jf "$j" 'd["resp_owd_us"]')"
	assert_ge "$(jf "$j" 'd["responses"]')" 20 "responses through the full queue"
	assert_eq "$(jf "$j" 'd["req_owd_us"]["p50"] > 20e3')" true "request delay: the queue's (> 20 ms)"
	assert_eq "$(jf "$j" 'd["resp_owd_us"]["p50"] < 5e3')" true "response delay: no queue (< 5 ms)"
	assert_eq "$(jf "$s" 'd["rr_requests"] >= d["rr_answered"] > 0')" true "server: requests answered"
}

t_max_open() {
	local j=$L2T_DIR/mo.json
	server mo-srv 5703 --once 20
	client mo -p 5703 --flows 20 --size 200000 --max-open 2 --seed 1
	server_wait mo-srv
	info "20 flows at once, --max-open 2: completed $(jf "$j" 'd["summary"]["completed"]')," \
		"limited $(jf "$j" 'd["summary"]["limited"]'), late us max $(jf "$j" '"%.0f" % d["summary"]["late_us"]["max"]')"
	assert_eq "$(jf "$j" 'd["summary"]["completed"]')" 20 "completed"
	assert_eq "$(jf "$j" 'd["summary"]["limited"]')" 18 "flows that waited for a slot"
	assert_eq "$(jf "$j" '[f["limited"] for f in d["flows"][:2]]')" '[false, false]' "the first two did not wait"
	# All start at time 0, so late_us is the start and late_us + fct_us the
	# ack: flow i may start only once all but one of flows 0..i-1 are acked.
	assert_eq "$(jf "$j" 'all(sorted(g["late_us"] + g["fct_us"] for g in d["flows"][:i])[i - 2] <= d["flows"][i]["late_us"] for i in range(2, 20))')" \
		true "no more than 2 flows open at any time"
}

t_refused() {
	local j=$L2T_DIR/rf.json
	client rf -p 5799 --flows 3 --size 1000 --seed 1
	info "3 flows to a closed port: failed $(jf "$j" 'd["summary"]["failed"]'): $(jf "$j" 'd["flows"][0]["error"]')"
	assert_eq "$(jf "$j" 'd["summary"]["failed"]')" 3 "failed flows"
	assert_eq "$(jf "$j" 'd["summary"]["completed"]')" 0 "completed flows"
	assert_eq "$(jf "$j" 'd["flows"][0]["error"]')" "connect: Connection refused" "error of flow 0"
	assert_eq "$(jf "$j" 'd["summary"]["fct_us"]["p50"]')" null "p50 without completed flows"
	# Nobody answers ARP for 10.99.0.9: the connect would hang for
	# seconds; --timeout fails the flows on time instead.
	timeout 20 ip netns exec "$(ns h1)" "$FLOWGEN" client -c 10.99.0.9 --flows 2 --size 1000 \
		--timeout 0.3 >"$j" 2>"$L2T_DIR/rf2.log" || fail "client with --timeout: $(cat "$L2T_DIR/rf2.log")"
	info "2 flows to a silent address, --timeout 0.3: $(jf "$j" 'd["flows"][0]["error"]')"
	assert_eq "$(jf "$j" 'd["summary"]["failed"]')" 2 "flows failed by --timeout"
	assert_eq "$(jf "$j" 'd["flows"][1]["error"]')" "no ack within --timeout" "error of flow 1"
}

# badarg EXPECTED_SUBSTRING ARGS...: exit 2, message on stderr naming it.
badarg() {
	local want=$1 out rc
	shift
	out=$("$FLOWGEN" "$@" 2>&1 >/dev/null)
	rc=$?
	info "$* -> exit $rc: $out"
	[ "$rc" -eq 2 ] || fail "'$*' exited $rc, expected 2"
	grep -qF -- "$want" <<<"$out" || fail "'$*': message '$out' does not mention '$want'"
}

t_badargs() {
	badarg "--pareto" client --dry-run --flows 3 --pareto 0.5,100
	badarg "--poisson" client -c 10.99.0.2 --poisson fast --flows 3 --size 1
	badarg "--size" client -c 10.99.0.2 --flows 3 --size 10parsecs
	badarg "--onoff" client -c 10.99.0.2 --onoff 1 --rate 1M --duration 1
	badarg "--rate" client -c 10.99.0.2 --onoff 1,1 --duration 1
	badarg "--udp needs --onoff" client -c 10.99.0.2 --flows 3 --size 1 --udp
	badarg "--udp" server --udp
	badarg "--chunk" client -c 10.99.0.2 --onoff 1,1 --rate 1M --duration 1 --udp --chunk 64K
	badarg "--rr needs --duration" client -c 10.99.0.2 --rr 100
	badarg "--req-size" client -c 10.99.0.2 --rr 100 --duration 1 --req-size 10
	badarg "--resp-size is an --rr option" client -c 10.99.0.2 --flows 1 --size 1 --resp-size 100
	badarg "exclude each other" client -c 10.99.0.2 --rr 100 --onoff 1,1 --rate 1M --duration 1
	badarg "--tos" client -c 10.99.0.2 --rr 100 --duration 1 --tos 256
	badarg "--port" server -p 0
	badarg "--once" client --once 3 --flows 1 --size 1 --dry-run
	badarg "-c ADDR" client --flows 3 --size 1
	badarg "'frobnicate'" frobnicate
	printf '1000 0.5\n500 1\n' >"$L2T_DIR/bad.cdf"
	badarg "bad.cdf:2" client --dry-run --flows 1 --cdf "$L2T_DIR/bad.cdf"
}

run_setup setup
run_test flowgen_poisson_fixed t_poisson_fixed
run_test flowgen_pareto t_pareto
run_test flowgen_cdf t_cdf
run_test flowgen_onoff t_onoff
run_test flowgen_onoff_udp t_onoff_udp
run_test flowgen_owd t_owd
run_test flowgen_rr t_rr
run_test flowgen_max_open t_max_open
run_test flowgen_refused t_refused
run_test flowgen_badargs t_badargs
tests_done
