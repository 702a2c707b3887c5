#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# l2cc demo: congestion spreading on a lossless fabric and its cure, as in
# Santos, Turner and Janakiraman (2003), Fig. 1-3, on
# config/topologies/santos-cc.yaml driven by config/experiments/santos-cc.yaml:
#
#   ar1..ar5 ─┐                          ┌─ bl1..bl5 (local senders)
#             [ A ] ab ══ 10M ══ ba [ B ]─ bc   (the root of the congestion)
#   av       ─┘                          └─ bv   (the victim's receiver)
#
# Local senders on B and remote senders on A all send to bc; from 4 s to
# 6 s a victim av -> bv runs, which shares nothing with them but the A-B
# link. Credit flow control and 4-frame input buffers make the fabric
# lossless, and that is the problem: without control B's buffer for the A-B
# link is full of frames for bc, A waits for credits, and the victim gets
# about the remote flows' share although the link is mostly idle. With the
# paper's control (santos marking in the switches, LIPD with a window of
# one frame in every hostd) the victim gets what the remote flows leave.
#
# Runs config/sweeps/santos-exp1.yaml (each point: lab up, 10 s of traffic,
# lab down; every daemon of the lab in one l2ccd, the topology's
# one_process): without and with control, for one remote sender (R = 1)
# and five (R = 5); then a table, and the sweep's check of the paper's
# claim (the victim gets >= 80% of what the remote flows leave while the
# root link stays >= 90% busy, and not without control: the no-control
# points are the check's controls) and its invariant (the fabric drops
# nothing). A run is judged only if its emulation held (no port lost more
# than 1% of the window to a daemon running late, the generators sent what
# they were asked, every frame accounted for); one that did not is tried
# again, up to twice. Exit status: 0 the claim reproduced, 1 a check
# failed, 3 inconclusive (this machine could not hold the lab: the reason
# is printed). Needs root and the binaries in build/bin (`make demo`
# builds them first). About 2 minutes.
#
# Environment: L2CC_DEMO_DIR (results; default results/demo/<date>),
# L2CC_DEMO_POINTS (default "none_r1,santos-lipd_r1,none_r5,santos-lipd_r5";
# add window_r1,window_r5 for the window of one frame without rate control),
# L2CC_DEMO_REPEAT (runs per point, default 1: the sweep itself runs 3 and
# gives the spread).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
LAB=$REPO/scripts/l2cc-lab
SWEEP=$REPO/config/sweeps/santos-exp1.yaml
OUT=${L2CC_DEMO_DIR:-$REPO/results/demo/$(date +%Y%m%d-%H%M%S)}
POINTS=${L2CC_DEMO_POINTS:-none_r1,santos-lipd_r1,none_r5,santos-lipd_r5}
REPEAT=${L2CC_DEMO_REPEAT:-1}
PY=$(command -v /usr/bin/python3 || command -v python3)

die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, AF_XDP): sudo make demo"
for b in switchd hostd l2ccctl; do
	[ -x "$REPO/build/bin/$b" ] || die "build/bin/$b is missing; run 'make' (or 'make demo') first"
done
[ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ] && die "$OUT exists and is not empty"

# The sweep takes every point's lab down itself, also when interrupted;
# --replace clears a lab left up by an earlier, killed demo.
echo "== congestion spreading and its cure: $POINTS"
rc=0
# The sweep's progress here; its own report (table, checks) is redrawn
# below, and kept whole in $OUT/sweep.log.
LOG=$(mktemp)
"$LAB" sweep "$SWEEP" --points "$POINTS" --repeat "$REPEAT" --out "$OUT" --replace -q \
	| tee "$LOG" | awk '/^sweep [^ ]+ \(/ { stop = 1 } !stop { print "   " $0; fflush() }' ||
	rc=${PIPESTATUS[0]}
[ -d "$OUT" ] && mv "$LOG" "$OUT/sweep.log" || rm -f "$LOG"
[ -f "$OUT/sweep.json" ] || die "the sweep wrote no table (exit $rc)"

# The table: what the victim got of what the remote flows left free on the
# A-B link (the sweep's victim_share), the two links' utilisation, the
# flows' rates against their max-min fair shares, fabric drops.
echo
"$PY" - "$OUT" "$REPO/scripts" <<'PYEOF'
import json, os, sys

out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from l2cc import checks as C
doc = json.load(open(os.path.join(out, "sweep.json")))
names = {"none": "no control", "window": "window 1 only", "santos-lipd": "santos + LIPD"}


def num(v, scale=1.0, fmt="%.2f"):
    return fmt % (v / scale) if isinstance(v, (int, float)) else "-"


print("%-6s %-15s %8s %8s %13s %9s %10s %11s %7s" % (
    "", "control", "victim", "remote", "victim share", "A>B util", "root util", "efficiency",
    "fabric"))
print("%-6s %-15s %8s %8s %13s %9s %10s %11s %7s" % ("", "", "Mbit/s", "Mbit/s", "of free A>B",
                                                     "", "", "(max-min)", "drops"))
for r in doc["rows"]:
    R = "R=" + r["axis_labels"].get("remote", "?").lstrip("r")
    control = names.get(r["point"], r["point"])
    if r["status"] == "inconclusive":
        print("%-6s %-15s inconclusive: %s" % (R, control, C._not_held_why(r)))
        continue
    if r["status"] != "ok":
        print("%-6s %-15s %s: %s" % (R, control, r["status"], r.get("error") or ""))
        continue
    m = r["metrics"]
    share = m.get("victim_share")
    print("%-6s %-15s %8s %8s %13s %9s %10s %11s %7s" % (
        R, control, num(m.get("victim_bps"), 1e6), num(m.get("remote_bps"), 1e6),
        "%.0f%%" % (100 * share) if isinstance(share, (int, float)) else "-",
        num(m.get("isl_util")), num(m.get("root_util")), num(m.get("efficiency")),
        num(m.get("fabric_drops"), fmt="%d")))
checks = doc.get("checks") or []
if checks:
    print()
    print("checks (config/sweeps/santos-exp1.yaml), on the runs that held:")
    for line in C.lines(checks):
        print("  " + line)
PYEOF
echo
echo "Without control the victim, which shares nothing with the congested flows"
echo "but the A-B link, gets about what the remote flows get: the congestion has"
echo "spread, and the flows carry a fraction of their max-min fair shares"
echo "(efficiency). With santos marking and LIPD the victim gets what they leave,"
echo "the root link stays busy and nothing is dropped: the checks above. Per point:"
echo "results, time series, plots (phases before/victim/after) under $OUT/points/."
case $rc in
0) echo "demo: the paper's claim reproduced, on runs whose emulation held" ;;
3) echo "demo: inconclusive: this machine could not hold the lab (see above: which daemon" \
	"waited how long, which port lost how much); nothing was judged on those runs" >&2 ;;
*) echo "demo: the sweep exited $rc (a run or a check failed; see above)" >&2 ;;
esac
exit "$rc"
