#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make test-busy: the whole suite with a CPU hog beside it (stress-ng --cpu 1,
# one of this machine's two cores). A test may SKIP when its daemons waited
# for a CPU long enough to explain a shortfall (tests/netns/lib.sh's
# short_or_starved), never FAIL for it: the run must end with no FAIL.
# Not in CI. Extra arguments go to stress-ng (e.g. --cpu 2).
set -uo pipefail
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || { echo "test-busy: stress-ng is missing (make deps installs it)" >&2; exit 2; }
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--cpu 1)
stress-ng "${args[@]}" --timeout 3h --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null' EXIT
echo "test-busy: stress-ng ${args[*]} (pid $hog) beside the suite"
tests/run.sh
rc=$?
echo "test-busy: the suite ran beside stress-ng ${args[*]}; exit $rc"
exit "$rc"
