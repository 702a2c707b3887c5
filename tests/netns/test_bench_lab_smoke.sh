#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make bench-lab` (scripts/bench_lab.sh) in a short mode: one lab
# (gran-fig8: 2 switchd + 7 hostd) in both modes (a process per daemon,
# one l2ccd), 2 s of traffic, 20 pings a path.
# Structure only, never speed (it must pass on a busy machine):
#
#  - bench_lab_smoke: the script exits 0; it prints the table's header and a
#    gran-fig8 row per mode with a figure in every column that is always
#    measured (daemons 9, k 4: h1 -> h4 crosses two hostd and two switchd),
#    and ends with a line per mode `LAB mode=M held=N/1 hop_us=X cpu=Y` (N 0
#    or 1, X and Y numbers);
#    afterwards nothing of it is left: no namespace with its prefix, no
#    process started from its temp dir (the lab's daemons), no temp dir.
#    (A bench that never took its lab down fails here: tried by hand.)
#
# Its namespaces carry this run's prefix ($L2T-bl...), so lib.sh's EXIT
# cleanup removes any a failure leaves behind.
. "$(dirname "$0")/lib.sh"

BENCH=$L2CC_ROOT/scripts/bench_lab.sh
PFX=$L2T-bl
# The bench waits up to 240 s for other engineers' timed runs
# (/tmp/l2cc-measure.lock), then about 30 s of its own.
[ "$TEST_TIMEOUT" -ge 360 ] || TEST_TIMEOUT=360

setup() {
	[ -x "$BENCH" ] || skip "scripts/bench_lab.sh is not there"
	command -v iperf3 >/dev/null || skip "iperf3 is missing"
	"$PY" -c 'import yaml, numpy' 2>/dev/null || skip "python3-yaml or python3-numpy is missing"
	for b in switchd hostd l2ccd l2ccctl; do
		[ -x "$L2CC_ROOT/build/bin/$b" ] || skip "build/bin/$b is missing (make)"
	done
}

# leftovers: what of the bench's run is still there, one thing a line
leftovers() {
	local p c
	ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PFX" | sed 's/^/namespace /'
	for p in /proc/[0-9]*; do
		c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
		[[ $c == *"/tmp/$PFX."* ]] && echo "process ${p#/proc/}: ${c:0:200}"
	done
	find /tmp -maxdepth 1 -name "$PFX.*" | sed 's/^/temp dir /'
}

t_smoke() {
	local out=$L2T_DIR/bench.out rc last row re left pid m
	BENCH_LAB_SECONDS=2 BENCH_LAB_ONLY=gran-fig8 BENCH_LAB_PINGS=20 BENCH_LAB_PREFIX=$PFX \
		L2CC_PYTHON=$PY "$BENCH" >"$out" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] &&
		grep -Eq "(AF_XDP socket|XDP program).*(not supported|Function not implemented)" "$out"; then
		skip "AF_XDP/XDP unsupported here"
	fi
	sed 's/^/    #   /' "$out"
	assert_eq "$rc" 0 "exit status of bench_lab.sh"
	grep -Eq '^lab +mode +daemons +sat +held +worst +cpu_lab% .* rtt_us +bare_us +k +hop_us$' "$out" ||
		fail "no table header"
	for m in process one; do
		row=$(grep -E "^gran-fig8 +$m " "$out") || fail "no gran-fig8 row for mode $m"
		# lab mode daemons sat held worst cpu_lab% cpu_daemons% cpu_machine% wait_max rtt_us bare_us k hop_us
		re="^gran-fig8 +$m +9 +[0-9]+ +[0-9]+!? +[-0-9.]+ +[0-9]+ +[0-9]+ +[0-9]+ +[-0-9.s]+ +[0-9]+ +[0-9]+ +4 +-?[0-9.]+\$"
		[[ $row =~ $re ]] || fail "the gran-fig8 $m row does not parse: $row"
	done
	last=$(tail -2 "$out" | paste -sd'|')
	re='^LAB mode=process held=[01]/1 hop_us=-?[0-9]+\.[0-9] cpu=[0-9]+\|LAB mode=one held=[01]/1 hop_us=-?[0-9]+\.[0-9] cpu=[0-9]+$'
	[[ $last =~ $re ]] || fail "the last lines are not the LAB lines: $last"
	left=$(leftovers)
	if [ -n "$left" ]; then
		info "left behind:"
		printf '%s\n' "$left" | sed 's/^/    #   /'
		# Its daemons run from its temp dir, unique to this run: ours to stop
		# (lib.sh's cleanup takes the namespaces).
		for pid in $(printf '%s\n' "$left" | sed -n 's/^process \([0-9]*\):.*/\1/p'); do
			kill -TERM "$pid" 2>/dev/null
		done
		fail "left behind: $(printf '%s\n' "$left" | wc -l) things, the first: ${left%%$'\n'*}"
	fi
}

run_setup setup
run_test bench_lab_smoke t_smoke
tests_done
