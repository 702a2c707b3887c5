#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The systemd units checked as files (PID 1 here need not be systemd):
#
#  - units_verify: `make install DESTDIR=STAGE` puts the binaries and the
#    units in a staging root, and `systemd-analyze verify --root=STAGE`
#    finds nothing to say about switchd@t1 and hostd@t1 (any output, a
#    warning too, fails). The staging root gets the host's own unit files
#    (sysinit.target and the like) and /bin/kill (ExecReload) so that only
#    our units can be at fault.
#    units_verify_can_fail: the same staging root without the binaries must
#    fail verify (ExecStart missing), or the check above proves nothing.
#  - units_exposure: `systemd-analyze security --offline=yes` gives each
#    unit an exposure of at most $L2CC_UNIT_EXPOSURE_MAX (3.5; the score is
#    printed), through --threshold so systemd's own comparison decides.
#    units_exposure_can_fail: the switchd unit stripped of its sandbox
#    scores above the threshold.
#  - units_caps: no CAP_SYS_ADMIN in either unit's bounding set, and the
#    ambient set is the bounding set (what tests/netns/test_systemd_units.sh
#    starts the daemons with).
#
# Prints one PASS/FAIL/SKIP line per check; exits 0 when none failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

MAX=${L2CC_UNIT_EXPOSURE_MAX:-3.5}
UNITS="switchd@t1.service hostd@t1.service"
nfail=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; nfail=$((nfail + 1)); }
skip() { echo "SKIP $*"; }
info() { echo "    # $*"; }

if ! command -v systemd-analyze >/dev/null; then
	for t in units_verify units_verify_can_fail units_exposure units_exposure_can_fail; do
		skip "$t: systemd-analyze not installed (Debian: apt-get install systemd)"
	done
	exit 0
fi
info "$(systemd-analyze --version | head -1)"

work=$(mktemp -d /tmp/l2cc-units.XXXXXX)
trap 'rm -rf "$work"' EXIT

# stage DIR [nobin]: a root with our install (or only the units) and what
# the units refer to outside l2cc.
stage() {
	local d=$1
	mkdir -p "$d/usr/lib/systemd" "$d/usr/bin"
	make --no-print-directory -s install DESTDIR="$d" >"$work/install.log" 2>&1 || {
		fail "units_verify: make install DESTDIR=$d: $(tail -3 "$work/install.log")"
		return 1
	}
	[ "${2:-}" = nobin ] && rm -f "$d"/usr/local/sbin/switchd "$d"/usr/local/sbin/hostd
	cp -a /usr/lib/systemd/system "$d/usr/lib/systemd/"
	cp "$(type -P kill)" "$d/usr/bin/kill"
	ln -sfn usr/bin "$d/bin"
	ln -sfn usr/lib "$d/lib"
}

root=$work/root
if stage "$root"; then
	# shellcheck disable=SC2086
	out=$(cd "$work" && systemd-analyze verify --root="$root" $UNITS 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
		pass "units_verify"
	else
		fail "units_verify: systemd-analyze verify --root exited $rc: $(tr '\n' ' ' <<<"$out" | cut -c1-400)"
	fi

	nobin=$work/nobin
	if stage "$nobin" nobin; then
		# shellcheck disable=SC2086
		out=$(cd "$work" && systemd-analyze verify --root="$nobin" $UNITS 2>&1)
		rc=$?
		if [ "$rc" -ne 0 ] && grep -q "sbin/switchd is not executable" <<<"$out" && grep -q "sbin/hostd is not executable" <<<"$out"; then
			pass "units_verify_can_fail"
		else
			fail "units_verify_can_fail: verify without the binaries exited $rc: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
		fi
	fi

	# --threshold is on systemd's 0..100 scale (exposure x 10).
	thr=$(awk -v m="$MAX" 'BEGIN { printf "%d", m * 10 + 0.5 }')
	# exposure UNIT: prints the score; exit status of systemd-analyze.
	exposure() {
		local o r
		o=$(cd "$work" && systemd-analyze security --offline=yes --root="$root" --threshold="$thr" "$1" 2>&1)
		r=$?
		sed -nE 's/.*Overall exposure level for [^:]*: ([0-9.]+).*/\1/p' <<<"$o" | tail -1
		return "$r"
	}
	bad=
	for u in $UNITS; do
		score=$(exposure "$u")
		rc=$?
		info "$u: exposure $score (at most $MAX)"
		if [ -z "$score" ] || [ "$rc" -ne 0 ] ||
			! awk -v s="$score" -v m="$MAX" 'BEGIN { exit !(s <= m) }'; then
			bad+="$u ${score:-?} (exit $rc); "
		fi
	done
	if [ -z "$bad" ]; then pass "units_exposure"; else fail "units_exposure: above $MAX: $bad"; fi

	# The same unit with none of its sandbox: the threshold must catch it.
	u=$root/etc/systemd/system/switchd@.service
	grep -E '^(\[|Description|After|Type|ExecStart|ExecReload|Restart|WantedBy)' \
		"$u" >"$root/etc/systemd/system/l2ccbare@.service"
	score=$(exposure l2ccbare@t1.service)
	rc=$?
	if [ "$rc" -ne 0 ] && [ -n "$score" ] && awk -v s="$score" -v m="$MAX" 'BEGIN { exit !(s > m) }'; then
		info "the switchd unit without its sandbox: exposure $score"
		pass "units_exposure_can_fail"
	else
		fail "units_exposure_can_fail: the bare unit scored ${score:-?} (exit $rc), not above $MAX"
	fi
fi

# unit_caps FILE KEY: the capabilities of KEY= (all lines), sorted.
unit_caps() {
	sed -nE "s/^$2=//p" "$1" | tr ' ' '\n' | grep . | sort -u | tr '\n' ' '
}
bad=
for d in switchd hostd; do
	f=config/systemd/$d@.service
	b=$(unit_caps "$f" CapabilityBoundingSet)
	a=$(unit_caps "$f" AmbientCapabilities)
	info "$d@.service: CapabilityBoundingSet=$b"
	[ -n "$b" ] || bad+="$d: no CapabilityBoundingSet; "
	grep -qw CAP_SYS_ADMIN <<<"$b" && bad+="$d: CAP_SYS_ADMIN in the bounding set; "
	[ "$a" = "$b" ] || bad+="$d: AmbientCapabilities ($a) != CapabilityBoundingSet ($b); "
done
if [ -z "$bad" ]; then pass "units_caps"; else fail "units_caps: $bad"; fi

[ "$nfail" -eq 0 ]
