#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Checks that the frames l2cc puts on the wire decode as intended in Wireshark:
# PAUSE and PFC with tshark's built-in MAC Control dissector (so anyone's
# capture tools understand them unaided) and CREDIT with our Lua dissector
# (scripts/wireshark/l2cc.lua). The frames are the ones in tests/unit/test_wire.c,
# byte for byte, so the encoder, the unit tests and the dissector agree.
#
# Prints "PASS dissector", "FAIL dissector: reason" (exit 1), or
# "SKIP dissector: reason" (exit 77, the automake convention) when tshark or
# python3 is missing.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LUA="$ROOT/scripts/wireshark/l2cc.lua"

skip() { echo "SKIP dissector: $*"; exit 77; }
fail() { echo "FAIL dissector: $*"; exit 1; }

command -v tshark >/dev/null 2>&1 || skip "tshark not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 not installed"
[ -r "$LUA" ] || fail "$LUA missing"

TMP=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$TMP"' EXIT
PCAP="$TMP/l2cc.pcap"

python3 - "$PCAP" "$ROOT/tests/unit/test_wire.c" <<'PY' || fail "could not write the pcap"
import re, struct, sys

da = bytes.fromhex("0180c2000001")      # 802.3 Annex 31B MAC control DA
sa = bytes.fromhex("020000000001")

def pad(b):
    return b + bytes(max(0, 60 - len(b)))

# CREDIT: version 1, type 1, length 132; unit bytes, mask 0x21, sent_unit
# frames, reserved 0; limits and sent counts as in test_wire.c
limits = (1 << 32, 1, 0, 0, 0, 2**64 - 16, 0, 0x0102030405060708)
sent = (1000, 0, 0, 0, 0, 2**64 - 1, 0, 0x1112131415161718)
credit = (da + sa + struct.pack(">HBBH", 0x88b6, 1, 1, 132)
          + struct.pack(">BBBB8Q8Q", 0, 0x21, 1, 0, *limits, *sent))
# The same with sent_unit 0xff (none), as in test_credit_sent_unit_none
credit_none = credit[:20] + b"\xff" + credit[21:]

# Built independently here, the CREDIT frame must be credit_frame[] of the
# unit test byte for byte.
src = open(sys.argv[2]).read()
m = re.search(r"credit_frame\[\d+\] = \{(.*?)\n\};", src, re.S)
if not m:
    sys.exit("credit_frame[] not found in test_wire.c")
unit = bytes(int(x, 16) for x in
             re.findall(r"0x([0-9a-fA-F]{2})", re.sub(r"/\*.*?\*/", "", m.group(1))))
if unit != credit:
    sys.exit("CREDIT frame differs from credit_frame[] in test_wire.c")

frames = [
    # PAUSE, pause_time 0xffff
    pad(da + sa + struct.pack(">HHH", 0x8808, 0x0001, 0xffff)),
    # PFC, class-enable 0x0021, C0 = 256, C5 = 65535
    pad(da + sa + struct.pack(">HHH8H", 0x8808, 0x0101, 0x0021,
                              256, 0, 0, 0, 0, 0xffff, 0, 0)),
    credit,
    credit_none,
]
with open(sys.argv[1], "wb") as f:
    # classic pcap, microsecond, LINKTYPE_ETHERNET
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, fr in enumerate(frames):
        f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)
PY

# DISPLAY unset: tshark needs no X; as root it warns on stderr, which we keep
# only to look for Lua errors.
TS() { env -u DISPLAY tshark -o gui.console_open:NEVER -X "lua_script:$LUA" -r "$PCAP" "$@"; }

TS -V >"$TMP/v.txt" 2>"$TMP/err.txt" || fail "tshark -V failed: $(tail -n 3 "$TMP/err.txt")"
if grep -qi "lua.*error\|error.*lua" "$TMP/err.txt"; then
	fail "Lua error: $(grep -i lua "$TMP/err.txt" | head -n 3)"
fi

expect() {
	grep -qE -- "$1" "$TMP/v.txt" || fail "no line matching '$1' in tshark -V output"
}

# Built-in MAC Control dissector
expect '^    Opcode: Pause \(0x0001\)$'
expect '^    pause_time: 65535$'
expect '^    Opcode: Class Based Flow Control \[CBFC\] Pause \(0x0101\)$'
expect '^    CBFC Class Enable Vector: 0x0021, C0, C5$'
expect '^        C0: 256$'
expect '^        C5: 65535$'
# Our Lua dissector
expect '^    Type: Local Experimental Ethertype 2 \(0x88b6\)$'
expect '^l2cc control, CREDIT$'
expect '^    Version: 1$'
expect '^    Type: CREDIT \(1\)$'
expect '^    Length: 132$'
expect '^    Unit: bytes \(0\)$'
expect '^    Priority mask: 0x21$'
expect '^    Sent unit: frames \(1\)$'
expect '^    Sent unit: none \(255\)$'
expect '^    Reserved: 0x00$'
expect '^    Limit\[0\]: 4294967296$'
expect '^    Limit\[5\]: 18446744073709551600$'
expect '^    Sent\[0\]: 1000$'
expect '^    Sent\[5\]: 18446744073709551615$'
expect '^    Sent\[0\]: 1000 \(not valid: sent unit none\)$'
if grep -qi 'session' "$TMP/v.txt"; then
	fail "a session field is still dissected"
fi
if grep -q 'Expert Info' "$TMP/v.txt"; then
	fail "expert info on a well-formed frame: $(grep -m1 'Expert Info' "$TMP/v.txt")"
fi

# The named fields exist and carry the values (tshark rejects unknown -e names).
FIELDS="-e frame.number -e l2cc.version -e l2cc.type -e l2cc.length -e l2cc.credit.unit
	-e l2cc.credit.prio_mask -e l2cc.credit.sent_unit -e l2cc.credit.limit0
	-e l2cc.credit.limit5 -e l2cc.credit.limit7 -e l2cc.credit.sent0
	-e l2cc.credit.sent5 -e l2cc.credit.sent7"
# shellcheck disable=SC2086
got=$(TS -Y l2cc -T fields -E separator=, $FIELDS 2>"$TMP/err2.txt") ||
	fail "tshark -T fields failed: $(tail -n 3 "$TMP/err2.txt")"
want="3,1,1,132,0,0x21,1,4294967296,18446744073709551600,72623859790382856,1000,18446744073709551615,1230066625199609624
4,1,1,132,0,0x21,255,4294967296,18446744073709551600,72623859790382856,1000,18446744073709551615,1230066625199609624"
[ "$got" = "$want" ] || fail "fields: got '$got', want '$want'"

# Every per-priority field is registered (a display filter on it compiles).
for p in 0 1 2 3 4 5 6 7; do
	TS -Y "l2cc.credit.limit$p >= 0 && l2cc.credit.sent$p >= 0" >/dev/null 2>"$TMP/err3.txt" ||
		fail "filter on l2cc.credit.limit$p / sent$p: $(tail -n 1 "$TMP/err3.txt")"
done
# Filters select on the new fields.
n=$(TS -Y 'l2cc.credit.sent_unit == 255' 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "filter l2cc.credit.sent_unit == 255 matched $n frames, want 1"

echo "PASS dissector"
