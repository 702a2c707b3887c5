#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# l2cc demo: congestion spreading on a lossless fabric, as in Santos, Turner
# and Janakiraman (2003), Fig. 1/2, built from config/topologies/santos.yaml
# and driven by config/experiments/santos.yaml:
#
#        ar1 ─┐                         ┌─ bl1..bl5 (local senders)
#             [ A ] ab ══ 100M ══ ba [ B ]─ bc   (C: the root of the congestion)
#        av  ─┘                         └─ bv   (the victim's receiver)
#
# Five local senders on B and one remote sender on A all send to bc; in the
# middle of the run a victim av -> bv starts, which shares nothing with them
# but the A-B link. Credit flow control and 4-frame input buffers make the
# fabric lossless, and that is the problem: B's buffer for the A-B link is
# full of frames for bc, A waits for credits, and the victim is held to about
# the remote flow's share of the link although the link is mostly idle.
#
# Runs: lab up, experiment (10 s), a short table, plots, lab down. Needs root
# and the binaries in build/bin (`make demo` builds them first).
#
# Environment: L2CC_DEMO_DIR (results; default results/demo/<date>),
# L2CC_DEMO_EXPERIMENTS (default "santos"; "santos santos-fig3d" adds the
# cure by hand: every rate set to its fair share).
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
LAB=$REPO/scripts/l2cc-lab
TOPO=$REPO/config/topologies/santos.yaml
OUT=${L2CC_DEMO_DIR:-$REPO/results/demo/$(date +%Y%m%d-%H%M%S)}
EXPS=${L2CC_DEMO_EXPERIMENTS:-santos}
PY=$(command -v /usr/bin/python3 || command -v python3)

die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, XDP, AF_XDP): sudo make demo"
for b in switchd hostd l2ccctl; do
	[ -x "$REPO/build/bin/$b" ] || die "build/bin/$b is missing; run 'make' (or 'make demo') first"
done

cleanup() {
	trap - EXIT INT TERM
	"$LAB" down "$TOPO" >/dev/null 2>&1 || echo "demo: 'l2cc-lab down $TOPO' failed; run it by hand" >&2
}
trap cleanup EXIT
trap 'echo; echo "demo: interrupted, cleaning up"; exit 130' INT TERM

mkdir -p "$OUT"
# A lab left by an interrupted demo: down is idempotent.
"$LAB" down "$TOPO" >/dev/null 2>&1 || true
echo "== bringing up the lab ($TOPO)"
"$LAB" up "$TOPO" | sed 's/^/   /'

for exp in $EXPS; do
	echo
	echo "== experiment $exp (config/experiments/$exp.yaml)"
	"$LAB" run "$REPO/config/experiments/$exp.yaml" --lab santos --out "$OUT/$exp" |
		sed 's/^/   /'
done

# The short table: what the victim got of what the remote flow left free on
# the A-B link, the two links' utilisation, fabric drops.
echo
"$PY" - "$OUT" $EXPS <<'EOF'
import json, os, sys

out, exps = sys.argv[1], sys.argv[2:]
print("%-14s %9s %9s %12s %9s %9s %7s" % ("experiment", "victim", "remote", "victim share",
                                         "A>B util", "B>bc util", "fabric"))
print("%-14s %9s %9s %12s %9s %9s %7s" % ("", "Mbit/s", "Mbit/s", "of free A>B", "", "", "drops"))
for e in exps:
    d = json.load(open(os.path.join(out, e, "results.json")))
    flows = {f["name"]: f for f in d["flows"]}
    links = {l["id"]: l for l in d["links"]}
    v = flows["victim"]["mean_rate_bps"] or 0
    r = flows["remote"]["mean_rate_bps"] or 0
    cap = links["A>B"]["rate_bps"]
    share = v / (cap - r) if cap > r else float("nan")
    print("%-14s %9.1f %9.1f %11.0f%% %9.2f %9.2f %7d" % (
        e, v / 1e6, r / 1e6, 100 * share, links["A>B"]["utilisation"],
        links["B>bc"]["utilisation"], d["fabric_drops"]["total"]))
    print("%-14s plots: %s" % ("", os.path.join(out, e, "plots", "overview.png")))
EOF
echo
echo "The victim shares nothing with the congested flows but the A-B link, yet"
echo "without congestion control it gets about what the remote flow gets: the"
echo "congestion has spread. Results, time series and plots: $OUT"
