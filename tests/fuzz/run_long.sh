#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# `make fuzz-long`: each fuzzer given for L2CC_FUZZ_SECONDS (default 600),
# one at a time and niced (they are CPU-bound), starting from its seed
# corpus and from what earlier long runs grew (build/fuzz/corpus/<target>/,
# kept there). Prints libFuzzer's final statistics per target; a crash
# leaves its input as build/fuzz/crash-<target>-* and fails the run.
# What a long run grew goes into the repository only by hand, when it adds
# coverage and is small (README.md, Fuzzers):
#   build/fuzz/<target> -merge=1 tests/fuzz/corpus/<target> build/fuzz/corpus/<target>
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${L2CC_FUZZ_SECONDS:-600}
rc=0
for fz in "$@"; do
	name=$(basename "$fz")
	grown=build/fuzz/corpus/$name
	mkdir -p "$grown"
	echo "== $name: ${secs}s"
	nice -n 10 "$fz" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="build/fuzz/crash-$name-" \
		"$grown" "tests/fuzz/corpus/$name" >"build/fuzz/$name.log" 2>&1 || rc=1
	grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' \
		"build/fuzz/$name.log"
	[ $rc -eq 0 ] || { tail -40 "build/fuzz/$name.log"; break; }
done
exit $rc
