#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Checks that the frames l2cc puts on the wire decode as intended in Wireshark:
# PAUSE and PFC with tshark's built-in MAC Control dissector (so anyone's
# capture tools understand them unaided), and CREDIT, CNP, ACK, the 802.1Qau CNM
# and CN-TAG, and the 0x88B5
# data tag (with IPv4/UDP decoded inside it) with our Lua dissector
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

def unit_frame(name):
    m = re.search(name + r"\[\d+\] = \{(.*?)\n\};", src, re.S)
    if not m:
        sys.exit(name + "[] not found in test_wire.c")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    # 0xNN bytes and the bare 0s of the padding rows
    return bytes(int(x, 0) for x in re.findall(r"0x[0-9a-fA-F]{2}|\b0\b", body))

if unit_frame("credit_frame") != credit:
    sys.exit("CREDIT frame differs from credit_frame[] in test_wire.c")

# Data tag: IPv4/UDP 10.0.0.1:12345 -> 10.0.0.2:5001 "l2cc", from
# 02:00:00:00:00:01 to 02:00:00:00:00:02, tagged for flow 7 seq 0x01020304
# and marked by a switch (FECN).
hda = bytes.fromhex("020000000002")
hsa = bytes.fromhex("020000000001")
ip = bytes.fromhex("45000020000100004011" "66ca" "0a000001" "0a000002")
udp = struct.pack(">HHHH", 12345, 5001, 12, 0) + b"l2cc"
payload = ip + udp
payload += bytes(46 - len(payload))
def tag(flags, flow, seq, cpid, inner):
    return struct.pack(">HBBHI8sH", 0x88b5, 1, flags, flow, seq, cpid, inner)
tagged = hda + hsa + tag(0x00, 7, 0x01020304, bytes(8), 0x0800) + payload
if unit_frame("ipv4_udp_tagged") != tagged:
    sys.exit("tagged frame differs from ipv4_udp_tagged[] in test_wire.c")
tagged_fecn = tagged[:15] + b"\x01" + tagged[16:]
# Behind an 802.1Q tag (PCP 5, VID 100), RLT set with a CPID
tagged_vlan = (hda + hsa + bytes.fromhex("8100a064")
               + tag(0x02, 0xbeef, 0xfffffffe, bytes.fromhex("0011223344556677"), 0x0800)
               + payload)
# CNP and ACK: the receiver (02..02) answers the sender (02..01), unicast
cnp = pad(hsa + hda + struct.pack(">HBBHHHII", 0x88b6, 1, 2, 12, 7, 0, 0x01020304, 3))
ack = pad(hsa + hda + struct.pack(">HBBHHBBII", 0x88b6, 1, 3, 12, 7, 1, 0, 0xffffffff, 16))
if unit_frame("cnp_frame") != cnp:
    sys.exit("CNP frame differs from cnp_frame[] in test_wire.c")
if unit_frame("ack_frame") != ack:
    sys.exit("ACK frame differs from ack_frame[] in test_wire.c")
# 802.1Qau CNM from a switch port (02..0a:01) to the sender of `tagged`
# (unmarked): QntzFb 21, CPID switch MAC + port 3 + prio 0, cnmQOffset -5,
# cnmQDelta 3, and the first 64 of the 66 bytes of its MSDU.
cpmac = bytes.fromhex("020000000a01")
msdu = tagged[12:]
cnm = (hsa + cpmac + struct.pack(">HH8shhH6sH", 0x22e7, 21, cpmac + b"\x03\x00", -5, 3, 0,
                                 hda, len(msdu)) + msdu[:64])
# L2CI (priority-tagged PCP 7): a DISCOVER after three switches (10M) and the
# FEEDBACK whose 70 % was set at hop 2 by 02:00:00:00:02:01, a 100M port
vlan7 = bytes.fromhex("8100e000")
disc = pad(hda + hsa + vlan7 + struct.pack(">HBBHHBBIQQ", 0x88b6, 1, 4, 24, 7, 3, 0, 1,
                                           10000000, 123456789))
fb = pad(hsa + hda + vlan7 + struct.pack(">HBBHHBBIHH6s", 0x88b6, 1, 6, 18, 7, 3, 2, 42,
                                         7000, 100, bytes.fromhex("020000000201")))
if unit_frame("disc_frame") != disc:
    sys.exit("DISCOVER frame differs from disc_frame[] in test_wire.c")
if unit_frame("fb_frame") != fb:
    sys.exit("FEEDBACK frame differs from fb_frame[] in test_wire.c")
if unit_frame("cnm_frame") != cnm:
    sys.exit("CNM frame differs from cnm_frame[] in test_wire.c")

frames = [
    # PAUSE, pause_time 0xffff
    pad(da + sa + struct.pack(">HHH", 0x8808, 0x0001, 0xffff)),
    # PFC, class-enable 0x0021, C0 = 256, C5 = 65535
    pad(da + sa + struct.pack(">HHH8H", 0x8808, 0x0101, 0x0021,
                              256, 0, 0, 0, 0, 0xffff, 0, 0)),
    credit,
    credit_none,
    tagged_fecn,    # 5
    tagged_vlan,    # 6
    cnp,            # 7
    ack,            # 8
    cnm,            # 9
    # 802.1Qau CN-TAG, flow id 4660, in front of the IPv4/UDP payload
    pad(hsa + hda + struct.pack(">HHH", 0x22e9, 0x1234, 0x0800) + payload),   # 10
    disc,           # 11
    fb,             # 12
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
# Data tag, FECN set, IPv4/UDP decoded inside it
expect '^    Type: Local Experimental Ethertype 1 \(0x88b5\)$'
expect '^l2cc data tag, Flow: 7, Seq: 16909060, FECN$'
expect '^    Flags: 0x01$'
expect '^        \.\.\.\. \.\.\.1 = FECN: True$'
expect '^        \.\.\.\. \.\.0\. = RLT: False$'
expect '^    Flow: 7$'
expect '^    Seq: 16909060$'
expect '^    CPID: 0000000000000000 \(not valid: RLT clear\)$'
expect '^    Type: IPv4 \(0x0800\)$'
expect '^Internet Protocol Version 4, Src: 10\.0\.0\.1, Dst: 10\.0\.0\.2$'
expect '^User Datagram Protocol, Src Port: 12345, Dst Port: 5001$'
# Behind 802.1Q, RLT with a CPID
expect '^802\.1Q Virtual LAN, PRI: 5, DEI: 0, ID: 100$'
expect '^l2cc data tag, Flow: 48879, Seq: 4294967294, RLT$'
expect '^    CPID: 0011223344556677$'
# CNP and ACK
expect '^l2cc control, CNP$'
expect '^    Type: CNP \(2\)$'
expect '^    Length: 12$'
expect '^    Marked: 3$'
expect '^l2cc control, ACK$'
expect '^    Type: ACK \(3\)$'
expect '^    Flags: 0x01$'
expect '^        \.\.\.\. \.\.\.1 = ECE: True$'
expect '^    Cumulative seq: 4294967295$'
expect '^    Frames: 16 \(15 unmarked \+ 1 marked\)$'
# CNM: Wireshark has none; ours names the flow from the encapsulated tag
expect '^802\.1Qau congestion notification, QntzFb: 21, CPID: 020000000a010300, Flow: 7$'
expect '^    \.\.\.\. \.\.\.\. \.\.01 0101 = QntzFb: 21$'
expect '^    cnmQOffset: -5 \(-320 octets\)$'
expect '^    cnmQDelta: 3 \(192 octets\)$'
expect '^    Encapsulated DA: 02:00:00:00:00:02'
expect '^    Encapsulated MSDU length: 66$'
expect '^    l2cc flow: 7$'
expect '^802\.1Qau CN-TAG, Flow ID: 4660$'
# L2CI
expect '^802\.1Q Virtual LAN, PRI: 7, DEI: 0, ID: 0$'
expect '^l2cc control, DISCOVER$'
expect '^    Type: DISCOVER \(4\)$'
expect '^    Hops: 3$'
expect '^    Path speed \(bit/s\): 10000000$'
expect '^    Sent at \(ns\): 123456789$'
expect '^l2cc control, FEEDBACK$'
expect '^    Set at hop: 2$'
expect '^    Level \(0\.01 %\): 7000 = 70\.00 %$'
expect '^    Speed of the setter \(Mbit/s\): 100$'
expect '^    Set by: 02:00:00:00:02:01'
expect '^    Flow ID \(RPID\): 4660$'
n=$(TS -Y 'cntag.rpid == 4660 && udp.dstport == 5001' 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "filter cntag.rpid == 4660 && udp matched $n frames, want 1"
NFIELDS="-e frame.number -e eth.dst -e cnm.version -e cnm.qntz_fb -e cnm.cpid -e cnm.qoffset
	-e cnm.qdelta -e cnm.encap_prio -e cnm.encap_len -e cnm.flow -e cnm.seq"
# shellcheck disable=SC2086
got=$(TS -Y cnm -T fields -E separator=, $NFIELDS 2>"$TMP/err6.txt") ||
	fail "tshark -T fields (CNM) failed: $(tail -n 3 "$TMP/err6.txt")"
want="9,02:00:00:00:00:01,0,21,020000000a010300,-5,3,0,66,7,16909060"
[ "$got" = "$want" ] || fail "CNM fields: got '$got', want '$want'"
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
got=$(TS -Y 'l2cc.type == 1' -T fields -E separator=, $FIELDS 2>"$TMP/err2.txt") ||
	fail "tshark -T fields failed: $(tail -n 3 "$TMP/err2.txt")"
want="3,1,1,132,0,0x21,1,4294967296,18446744073709551600,72623859790382856,1000,18446744073709551615,1230066625199609624
4,1,1,132,0,0x21,255,4294967296,18446744073709551600,72623859790382856,1000,18446744073709551615,1230066625199609624"
[ "$got" = "$want" ] || fail "fields: got '$got', want '$want'"

# Tag, CNP and ACK fields, and IPv4 inside the tag (ip.dst from frames 5 and 6)
TFIELDS="-e frame.number -e vlan.priority -e l2cc_tag.version -e l2cc_tag.flags
	-e l2cc_tag.flags.fecn -e l2cc_tag.flags.rlt -e l2cc_tag.flow -e l2cc_tag.seq
	-e l2cc_tag.cpid -e l2cc_tag.inner_type -e ip.dst -e udp.dstport"
# shellcheck disable=SC2086
got=$(TS -Y l2cc_tag -T fields -E separator=, $TFIELDS 2>"$TMP/err4.txt") ||
	fail "tshark -T fields (tag) failed: $(tail -n 3 "$TMP/err4.txt")"
want="5,,1,0x01,1,0,7,16909060,0000000000000000,0x0800,10.0.0.2,5001
6,5,1,0x02,0,1,48879,4294967294,0011223344556677,0x0800,10.0.0.2,5001"
[ "$got" = "$want" ] || fail "tag fields: got '$got', want '$want'"
CFIELDS="-e frame.number -e eth.dst -e l2cc.type -e l2cc.cnp.flow -e l2cc.cnp.seq
	-e l2cc.cnp.marked -e l2cc.ack.flow -e l2cc.ack.flags.ece -e l2cc.ack.cum_seq
	-e l2cc.ack.frames"
# shellcheck disable=SC2086
got=$(TS -Y 'l2cc.type == 2 || l2cc.type == 3' -T fields -E separator=, $CFIELDS 2>"$TMP/err5.txt") ||
	fail "tshark -T fields (CNP/ACK) failed: $(tail -n 3 "$TMP/err5.txt")"
want="7,02:00:00:00:00:01,2,7,16909060,3,,,,
8,02:00:00:00:00:01,3,,,,7,1,4294967295,16"
[ "$got" = "$want" ] || fail "CNP/ACK fields: got '$got', want '$want'"
n=$(TS -Y 'l2cc_tag.flags.fecn == 1 && ip' 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "filter l2cc_tag.flags.fecn == 1 && ip matched $n frames, want 1"

# Every per-priority field is registered (a display filter on it compiles).
for p in 0 1 2 3 4 5 6 7; do
	TS -Y "l2cc.credit.limit$p >= 0 && l2cc.credit.sent$p >= 0" >/dev/null 2>"$TMP/err3.txt" ||
		fail "filter on l2cc.credit.limit$p / sent$p: $(tail -n 1 "$TMP/err3.txt")"
done
# Filters select on the new fields.
n=$(TS -Y 'l2cc.credit.sent_unit == 255' 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "filter l2cc.credit.sent_unit == 255 matched $n frames, want 1"

# Every type of the control message table (daemon/ctrl_msg.h), from its
# sample message as the daemons encode it: dissected by name, nothing
# malformed, no expert info.
DUMP="$ROOT/build/tests/dump_ctrl"
[ -x "$DUMP" ] || fail "$DUMP missing (make)"
CPCAP="$TMP/ctrl.pcap"
"$DUMP" "$CPCAP" >"$TMP/types.txt" || fail "dump_ctrl failed"
env -u DISPLAY tshark -o gui.console_open:NEVER -X "lua_script:$LUA" -r "$CPCAP" -V \
	>"$TMP/cv.txt" 2>/dev/null || fail "tshark -V on the table's samples failed"
while read -r num type name; do
	grep -qE "^l2cc control, $name\$" "$TMP/cv.txt" ||
		fail "control type $type ($name) of daemon/ctrl_msg.h is not dissected by name"
	grep -qE "^    Type: $name \($type\)\$" "$TMP/cv.txt" ||
		fail "control type $type ($name): no 'Type: $name ($type)' line"
done <"$TMP/types.txt"
if grep -qiE 'malformed|Expert Info' "$TMP/cv.txt"; then
	fail "a sample of the control table dissects badly: $(grep -miE 'malformed|Expert Info' "$TMP/cv.txt")"
fi

echo "PASS dissector"
