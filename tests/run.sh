#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run every test layer and end with one line the CI reads:
#   N passed, N failed, N skipped
# Layers: unit tests, the same unit tests built with ASan and UBSan
# (make asan-bins), the testbed's Python unit tests, BPF_PROG_TEST_RUN
# tests, fuzzers (a short run over the seed corpus each), the Wireshark
# dissector check, the systemd units checked as files
# (tests/systemd/check_units.sh), netns integration tests.
# Set L2CC_TESTS="unit asan python bpf fuzz wireshark systemd netns" to run a subset,
# L2CC_FUZZ_SECONDS to give each fuzzer that long (default: 10 to 30 s,
# fuzz_seconds below; `make fuzz-long` for long runs), L2CC_NETNS_FILTER=regex
# to pick netns scripts.
set -uo pipefail
cd "$(dirname "$0")/.."

B=build
LAYERS=${L2CC_TESTS:-"unit asan python bpf fuzz wireshark systemd netns"}
# Each fuzzer's CI time, unless L2CC_FUZZ_SECONDS says: the decoders' and
# the classifier's are fast and shallow, the cores' slow and deep.
fuzz_seconds() { # target
	if [ -n "${L2CC_FUZZ_SECONDS:-}" ]; then echo "$L2CC_FUZZ_SECONDS"; return; fi
	case $1 in
	fuzz_flowkey) echo 10 ;;
	fuzz_datapath|fuzz_ctl) echo 30 ;;
	*) echo 20 ;;
	esac
}
passed=0 failed=0 skipped=0
failures=()

count_unit_output() { # name, output file, exit code
	local name=$1 out=$2 rc=$3 line p f
	line=$(grep -E '^# unit: [0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	if [ -z "$line" ]; then
		if [ "$rc" -eq 77 ]; then
			skipped=$((skipped + 1)); echo "SKIP $name: $(grep -m1 '^SKIP' "$out")"
		else
			failed=$((failed + 1)); failures+=("$name (no summary, exit $rc)")
			echo "FAIL $name: no summary line, exit $rc"; tail -20 "$out"
		fi
		return
	fi
	p=$(sed -E 's/# unit: ([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	passed=$((passed + p)); failed=$((failed + f))
	skipped=$((skipped + $(grep -c '^SKIP' "$out")))
	grep -E '^(FAIL|SKIP)|^    ' "$out" | sed "s/^/  [$name] /"
	if [ "$f" -gt 0 ] || [ "$rc" -ne 0 ]; then
		[ "$f" -eq 0 ] && failed=$((failed + 1))
		failures+=("$name")
	fi
	echo "$name: $p passed, $f failed"
}

run_bins() { # glob [name prefix]
	local t out rc
	for t in $1; do
		[ -x "$t" ] || continue
		out=$(mktemp)
		"$t" >"$out" 2>&1; rc=$?
		count_unit_output "${2:-}$(basename "$t")" "$out" "$rc"
		rm -f "$out"
	done
}

for layer in $LAYERS; do
	echo "== $layer"
	case $layer in
	unit)
		run_bins "$B/tests/test_[!b]*"
		# Each datapath rule broken on purpose: its unit test must fail.
		out=$(mktemp)
		tests/unit/mutants.sh >"$out" 2>&1
		count_unit_output mutants "$out" $?
		rm -f "$out"
		# The docs' configuration references are the parsers' own tables.
		if out=$(scripts/gen_reference.py --check 2>&1); then
			passed=$((passed + 1)); echo "PASS config_reference"
		else
			failed=$((failed + 1)); failures+=("config_reference"); echo "FAIL config_reference: $out"
		fi
		;;
	asan)
		# The unit tests once more with ASan and UBSan: any finding
		# (a read out of bounds, a leak, an overflow) ends the test
		# binary with an error, which fails it.
		if ! compgen -G "build-asan/tests/test_*" >/dev/null; then
			echo "SKIP asan: no build-asan/tests (make asan-bins)"; skipped=$((skipped + 1))
			continue
		fi
		ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1} \
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
			run_bins "build-asan/tests/test_[!b]*" asan:
		;;
	python)
		out=$(mktemp)
		"$(command -v /usr/bin/python3 || command -v python3)" tests/python/run.py >"$out" 2>&1
		count_unit_output python "$out" $?
		rm -f "$out"
		# Every shipped sweep's paper checks have a control and a source.
		if out=$(make -s --no-print-directory audit 2>&1); then
			passed=$((passed + 1)); echo "PASS sweep_audit"
		else
			failed=$((failed + 1)); failures+=("sweep_audit")
			echo "FAIL sweep_audit:"; echo "$out" | tail -20
		fi
		;;
	bpf)
		run_bins "$B/tests/test_bpf_*"
		;;
	fuzz)
		for fz in "$B"/fuzz/fuzz_*; do
			[ -x "$fz" ] || continue
			name=$(basename "$fz"); seeds=tests/fuzz/corpus/$name
			work=$(mktemp -d)
			secs=$(fuzz_seconds "$name")
			[ -d "$seeds" ] && cp -r "$seeds"/. "$work"/
			if "$fz" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
				-artifact_prefix="$work/" "$work" >"$work.log" 2>&1; then
				passed=$((passed + 1))
				echo "PASS $name ($(grep -Eo '#[0-9]+' "$work.log" | tail -1 | tr -d '#') runs in ${secs}s)"
			else
				failed=$((failed + 1)); failures+=("$name")
				echo "FAIL $name"; tail -30 "$work.log"
				ls "$work"/crash-* "$work"/leak-* 2>/dev/null
			fi
			rm -rf "$work" "$work.log"
		done
		;;
	wireshark)
		out=$(tests/wireshark/check_dissector.sh 2>&1); rc=$?
		echo "$out" | tail -5
		case $rc in
		0) passed=$((passed + 1)) ;;
		77) skipped=$((skipped + 1)) ;;
		*) failed=$((failed + 1)); failures+=("dissector") ;;
		esac
		;;
	systemd)
		out=$(mktemp)
		tests/systemd/check_units.sh >"$out" 2>&1; rc=$?
		cat "$out"
		p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out"); s=$(grep -c '^SKIP ' "$out")
		passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
		while read -r l; do failures+=("${l#FAIL }"); done < <(grep '^FAIL ' "$out")
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			failed=$((failed + 1)); failures+=("check_units.sh (exit $rc)")
		fi
		rm -f "$out"
		;;
	netns)
		if [ "$(id -u)" -ne 0 ]; then
			echo "SKIP netns: needs root"; skipped=$((skipped + 1)); continue
		fi
		for t in tests/netns/test_*.sh; do
			[ -n "${L2CC_NETNS_FILTER:-}" ] && ! [[ $t =~ $L2CC_NETNS_FILTER ]] && continue
			out=$(mktemp)
			bash "$t" 2>&1 | tee "$out"
			rc=${PIPESTATUS[0]}
			name=$(basename "$t")
			p=$(grep -c '^PASS ' "$out"); f=$(grep -c '^FAIL ' "$out"); s=$(grep -c '^SKIP ' "$out")
			passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
			while read -r l; do failures+=("${l#FAIL }"); done < <(grep '^FAIL ' "$out")
			# A script that dies mid-way fails: each test it started (RUN)
			# without a result, or else the script itself when its exit
			# status says it did not reach its end (lib.sh: 0 passed, 1
			# some test failed, anything else died).
			missing=$(comm -23 <(sed -n 's/^RUN //p' "$out" | sort) \
				<(sed -nE 's/^(PASS|FAIL|SKIP) ([^:]*).*/\2/p' "$out" | sort))
			for n in $missing; do
				echo "FAIL $n: no result ($name exited with status $rc)"
				failed=$((failed + 1)); failures+=("$n (no result, $name exited with status $rc)")
			done
			if [ -z "$missing" ] && { [ "$rc" -gt 1 ] || { [ "$rc" -eq 1 ] && [ "$f" -eq 0 ]; }; }; then
				echo "FAIL $name: exited with status $rc before its end"
				failed=$((failed + 1)); failures+=("$name (exited with status $rc before its end)")
			elif [ $((p + f + s)) -eq 0 ] && [ -z "$missing" ]; then
				failed=$((failed + 1)); failures+=("$name (no result)")
			fi
			rm -f "$out"
		done
		;;
	*)
		echo "unknown layer $layer"; failed=$((failed + 1))
		;;
	esac
done

echo
if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"; printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
