// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for daemon/wire.c on raw frame bytes. Each frame is written out
 * byte by byte with its Wireshark dissection in a comment, so a reader can
 * check the expected bytes against the standard without trusting our encoder
 * (the same frames are fed to tshark by tests/wireshark/check_dissector.sh).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

static const uint8_t src_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

/* ---- Ethernet / 802.1Q ------------------------------------------------- */

static void test_parse_untagged(void)
{
	/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02, Type: IPv4 (0x0800) */
	static const uint8_t f[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
		0x08, 0x00,                           /* Type: IPv4 */
		0x45, 0x00, 0x00, 0x14,               /* (start of an IPv4 header) */
	};
	struct eth_info ei;

	CHECK_EQ(wire_parse_eth(f, sizeof(f), &ei), 0);
	CHECK(ei.dst == f);
	CHECK(ei.src == f + 6);
	CHECK_EQ(ei.ethertype, 0x0800);
	CHECK_EQ(ei.hlen, 14);
	CHECK_EQ(ei.ntags, 0);
	CHECK_EQ(ei.prio, 0);   /* untagged = priority 0 */
	CHECK_EQ(ei.vid, 0);
	CHECK(!wire_is_multicast(ei.dst));

	/* A bare 14-byte header is still a header. */
	CHECK_EQ(wire_parse_eth(f, 14, &ei), 0);
	CHECK_EQ(ei.hlen, 14);
}

static void test_parse_8021q(void)
{
	/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02, Type: 802.1Q Virtual LAN (0x8100)
	 * 802.1Q Virtual LAN, PRI: 5, DEI: 0, ID: 100, Type: IPv4 (0x0800) */
	static const uint8_t f[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
		0x81, 0x00,                           /* Type: 802.1Q */
		0xa0, 0x64,                           /* PCP 5 (101), DEI 0, VID 100 */
		0x08, 0x00,                           /* Type: IPv4 */
		0x45, 0x00,
	};
	struct eth_info ei;

	CHECK_EQ(wire_parse_eth(f, sizeof(f), &ei), 0);
	CHECK_EQ(ei.ethertype, 0x0800);
	CHECK_EQ(ei.hlen, 18);
	CHECK_EQ(ei.ntags, 1);
	CHECK_EQ(ei.prio, 5);
	CHECK_EQ(ei.vid, 100);

	/* Priority-tagged (VID 0, PCP 7, DEI 1): 802.1Q, PRI: 7, DEI: 1, ID: 0 */
	{
		uint8_t g[sizeof(f)];

		memcpy(g, f, sizeof(g));
		g[14] = 0xf0;
		g[15] = 0x00;
		CHECK_EQ(wire_parse_eth(g, sizeof(g), &ei), 0);
		CHECK_EQ(ei.prio, 7);
		CHECK_EQ(ei.vid, 0);
	}

	/* A tag that ends exactly at the end of the frame is complete. */
	CHECK_EQ(wire_parse_eth(f, 18, &ei), 0);
	CHECK_EQ(ei.hlen, 18);
}

static void test_parse_qinq(void)
{
	/* Ethernet II, Src: 02:00:00:00:00:01, Dst: ff:ff:ff:ff:ff:ff, Type: 802.1ad Provider Bridge (Q-in-Q) (0x88a8)
	 * IEEE 802.1ad, ID: 10 (PRI: 3)
	 * 802.1Q Virtual LAN, PRI: 5, DEI: 0, ID: 100, Type: ARP (0x0806) */
	static const uint8_t f[] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff,   /* Destination: broadcast */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
		0x88, 0xa8,                           /* Type: 802.1ad (S-tag) */
		0x60, 0x0a,                           /* PCP 3, DEI 0, VID 10 */
		0x81, 0x00,                           /* Type: 802.1Q (C-tag) */
		0xa0, 0x64,                           /* PCP 5, DEI 0, VID 100 */
		0x08, 0x06,                           /* Type: ARP */
		0x00, 0x01,
	};
	struct eth_info ei;

	CHECK_EQ(wire_parse_eth(f, sizeof(f), &ei), 0);
	CHECK_EQ(ei.ethertype, 0x0806);
	CHECK_EQ(ei.hlen, 22);
	CHECK_EQ(ei.ntags, 2);
	CHECK_EQ(ei.prio, 3);   /* the outer (S-tag) priority */
	CHECK_EQ(ei.vid, 10);
	CHECK(wire_is_multicast(ei.dst));
	CHECK(!wire_is_link_local(ei.dst));
}

static void test_parse_three_tags(void)
{
	/* Ethernet II, Type: 802.1ad; 802.1ad ID: 10; 802.1Q ID: 100; 802.1Q ID: 200, Type: IPv4.
	 * We skip two tags only; the third is left for the caller as ethertype 0x8100. */
	static const uint8_t f[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0xa8, 0x60, 0x0a,               /* S-tag PCP 3 VID 10 */
		0x81, 0x00, 0xa0, 0x64,               /* C-tag PCP 5 VID 100 */
		0x81, 0x00, 0x00, 0xc8,               /* third tag VID 200 */
		0x08, 0x00,
	};
	struct eth_info ei;

	CHECK_EQ(wire_parse_eth(f, sizeof(f), &ei), 0);
	CHECK_EQ(ei.ntags, 2);
	CHECK_EQ(ei.ethertype, 0x8100);
	CHECK_EQ(ei.hlen, 22);
	CHECK_EQ(ei.prio, 3);
}

static void test_parse_runt_and_cut_tag(void)
{
	/* [Malformed Packet]: 13 bytes, the ethertype is cut in half. */
	static const uint8_t runt[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x08,
	};
	/* Ethernet II, Type: 802.1Q; 802.1Q [Malformed Packet]: the TCI is cut after one byte. */
	static const uint8_t cut[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x81, 0x00,
		0xa0,
	};
	/* Ethernet II, Type: 802.1ad; 802.1ad ID: 10; 802.1Q [Malformed Packet]: the inner
	 * tag's TCI is there but not the ethertype after it. */
	static const uint8_t cut_inner[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0xa8, 0x60, 0x0a,
		0x81, 0x00, 0xa0, 0x64,
	};
	struct eth_info ei;

	CHECK_EQ(wire_parse_eth(runt, sizeof(runt), &ei), -EINVAL);
	CHECK_EQ(wire_parse_eth(runt, 0, &ei), -EINVAL);
	CHECK_EQ(wire_parse_eth(cut, sizeof(cut), &ei), -EINVAL);
	/* TPID + TCI present but no inner ethertype */
	CHECK_EQ(wire_parse_eth(cut_inner, 16, &ei), -EINVAL);
	CHECK_EQ(wire_parse_eth(cut_inner, sizeof(cut_inner), &ei), -EINVAL);
	CHECK_EQ(wire_parse_eth(cut_inner, 17, &ei), -EINVAL);
}

static void test_link_local(void)
{
	static const uint8_t stp[6]  = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x00 };
	static const uint8_t lldp[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e };
	static const uint8_t top[6]  = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x0f };
	static const uint8_t gvrp[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x21 };
	static const uint8_t ptp[6]  = { 0x01, 0x1b, 0x19, 0x00, 0x00, 0x00 };

	CHECK(wire_is_link_local(wire_macctrl_da));
	CHECK(wire_is_link_local(stp));
	CHECK(wire_is_link_local(lldp));
	CHECK(wire_is_link_local(top));
	CHECK(!wire_is_link_local(gvrp));
	CHECK(!wire_is_link_local(ptp));
	CHECK(!wire_is_link_local(src_mac));
}

/* ---- PAUSE / PFC ------------------------------------------------------- */

/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 01:80:c2:00:00:01, Type: MAC Control (0x8808)
 * MAC Control, Opcode: Pause (0x0001), Quanta: 65535 */
static const uint8_t pause_ffff[60] = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,   /* Destination: Spanning-tree-(for-bridges)_01 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
	0x88, 0x08,                           /* Type: MAC Control */
	0x00, 0x01,                           /* Opcode: Pause */
	0xff, 0xff,                           /* Quanta: 65535 */
	/* 42 bytes of padding to the 60-byte minimum (no FCS) */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 01:80:c2:00:00:01, Type: MAC Control (0x8808)
 * MAC Control, Opcode: Class Based Flow Control [CBFC] Pause (0x0101)
 *     Class Enable Vector: 0x0021 (C0 Enable, C5 Enable)
 *     C0 Quanta: 256, C1..C4 Quanta: 0, C5 Quanta: 65535, C6..C7 Quanta: 0 */
static const uint8_t pfc_21[60] = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,   /* Destination */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
	0x88, 0x08,                           /* Type: MAC Control */
	0x01, 0x01,                           /* Opcode: PFC */
	0x00, 0x21,                           /* Class Enable Vector: priorities 0 and 5 */
	0x01, 0x00,                           /* C0 Quanta: 256 */
	0x00, 0x00,                           /* C1 */
	0x00, 0x00,                           /* C2 */
	0x00, 0x00,                           /* C3 */
	0x00, 0x00,                           /* C4 */
	0xff, 0xff,                           /* C5 Quanta: 65535 */
	0x00, 0x00,                           /* C6 */
	0x00, 0x00,                           /* C7 */
	/* 26 bytes of padding */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static void test_build_pause(void)
{
	uint8_t buf[128];
	int n;

	memset(buf, 0xaa, sizeof(buf));   /* the padding must be written, not assumed */
	n = wire_build_pause(buf, sizeof(buf), src_mac, 0xffff);
	CHECK_EQ(n, 60);
	CHECK_MEM(buf, pause_ffff, sizeof(pause_ffff));
	CHECK_EQ(buf[60], 0xaa);          /* nothing written past the frame */

	CHECK_EQ(wire_build_pause(buf, 59, src_mac, 1), -ENOSPC);
}

static void test_build_pause_zero(void)
{
	/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 01:80:c2:00:00:01, Type: MAC Control (0x8808)
	 * MAC Control, Opcode: Pause (0x0001), Quanta: 0  (i.e. resume now) */
	uint8_t expect[60] = {
		0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0x08,
		0x00, 0x01,                   /* Opcode: Pause */
		0x00, 0x00,                   /* Quanta: 0 */
		/* zeros to byte 60 */
	};
	struct wire_macctrl mc;
	struct eth_info ei;
	uint8_t buf[60];
	int i;

	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_pause(buf, sizeof(buf), src_mac, 0), 60);
	CHECK_MEM(buf, expect, sizeof(expect));

	CHECK_EQ(wire_parse_eth(buf, 60, &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_MACCTRL);
	CHECK_EQ(wire_parse_macctrl(buf + ei.hlen, 60 - ei.hlen, &mc), 0);
	CHECK_EQ(mc.opcode, L2CC_MACCTRL_PAUSE);
	CHECK_EQ(mc.class_enable, 0xff);
	for (i = 0; i < 8; i++)
		CHECK_EQ(mc.quanta[i], 0);
}

static void test_build_pfc(void)
{
	static const uint16_t q[8] = { 256, 0, 0, 0, 0, 0xffff, 0, 0 };
	uint8_t buf[64];
	int n;

	memset(buf, 0xaa, sizeof(buf));
	n = wire_build_pfc(buf, sizeof(buf), src_mac, 0x21, q);
	CHECK_EQ(n, 60);
	CHECK_MEM(buf, pfc_21, sizeof(pfc_21));
	CHECK_EQ(buf[60], 0xaa);

	CHECK_EQ(wire_build_pfc(buf, 33, src_mac, 0x21, q), -ENOSPC);
}

static void test_parse_pause(void)
{
	struct wire_macctrl mc;
	struct eth_info ei;
	int i;

	CHECK_EQ(wire_parse_eth(pause_ffff, sizeof(pause_ffff), &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_MACCTRL);
	CHECK_MEM(ei.dst, wire_macctrl_da, 6);
	CHECK_MEM(ei.src, src_mac, 6);
	CHECK_EQ(wire_parse_macctrl(pause_ffff + ei.hlen, sizeof(pause_ffff) - ei.hlen, &mc), 0);
	CHECK_EQ(mc.opcode, L2CC_MACCTRL_PAUSE);
	CHECK_EQ(mc.class_enable, 0xff);
	for (i = 0; i < 8; i++)
		CHECK_EQ(mc.quanta[i], 0xffff);

	/* Opcode + pause_time is all PAUSE needs, padding or not. */
	CHECK_EQ(wire_parse_macctrl(pause_ffff + 14, 4, &mc), 0);
	CHECK_EQ(mc.quanta[7], 0xffff);
}

static void test_parse_pfc(void)
{
	struct wire_macctrl mc;
	struct eth_info ei;
	uint8_t f[60];

	CHECK_EQ(wire_parse_eth(pfc_21, sizeof(pfc_21), &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_MACCTRL);
	CHECK_EQ(wire_parse_macctrl(pfc_21 + ei.hlen, sizeof(pfc_21) - ei.hlen, &mc), 0);
	CHECK_EQ(mc.opcode, L2CC_MACCTRL_PFC);
	CHECK_EQ(mc.class_enable, 0x21);
	CHECK_EQ(mc.quanta[0], 256);
	CHECK_EQ(mc.quanta[1], 0);
	CHECK_EQ(mc.quanta[4], 0);
	CHECK_EQ(mc.quanta[5], 0xffff);
	CHECK_EQ(mc.quanta[7], 0);

	/* Class Enable Vector: 0xff21 — bits 8..15 are reserved and ignored. */
	memcpy(f, pfc_21, sizeof(f));
	f[16] = 0xff;
	CHECK_EQ(wire_parse_macctrl(f + 14, 46, &mc), 0);
	CHECK_EQ(mc.class_enable, 0x21);

	/* Exactly 20 bytes (no padding) is enough. */
	CHECK_EQ(wire_parse_macctrl(pfc_21 + 14, 20, &mc), 0);
	CHECK_EQ(mc.quanta[7], 0);
}

static void test_macctrl_truncated(void)
{
	struct wire_macctrl mc;

	CHECK_EQ(wire_parse_macctrl(pause_ffff + 14, 0, &mc), -EINVAL);
	CHECK_EQ(wire_parse_macctrl(pause_ffff + 14, 1, &mc), -EINVAL);
	/* MAC Control, Opcode: Pause, Quanta: [Malformed Packet] (one byte of two) */
	CHECK_EQ(wire_parse_macctrl(pause_ffff + 14, 3, &mc), -EINVAL);
	/* PFC with the C7 timer cut after one byte: 19 of 20 bytes */
	CHECK_EQ(wire_parse_macctrl(pfc_21 + 14, 19, &mc), -EINVAL);
	CHECK_EQ(wire_parse_macctrl(pfc_21 + 14, 4, &mc), -EINVAL);
}

static void test_macctrl_unknown_opcode(void)
{
	/* MAC Control, Opcode: Gate (0x0002) — 802.3 EPON MPCP, not ours */
	static const uint8_t gate[20] = { 0x00, 0x02, 0x00, 0x00 };
	/* MAC Control, Opcode: Unknown (0x0000) */
	static const uint8_t zero[20] = { 0x00, 0x00 };
	struct wire_macctrl mc;

	CHECK_EQ(wire_parse_macctrl(gate, sizeof(gate), &mc), -EOPNOTSUPP);
	CHECK_EQ(wire_parse_macctrl(zero, sizeof(zero), &mc), -EOPNOTSUPP);
	/* The opcode decides, not the length: a 2-byte unknown opcode is unsupported. */
	CHECK_EQ(wire_parse_macctrl(gate, 2, &mc), -EOPNOTSUPP);
}

static void test_quanta_to_ns(void)
{
	/* 65535 * 512 bits = 33,553,920 bits; at 100 Mbit/s that is 335,539,200 ns.
	 * (335,544,320 ns would be 65536 quanta, one more than a 16-bit field holds.) */
	CHECK_EQ(wire_quanta_to_ns(0xffff, 100000000ull), 335539200ull);
	CHECK_EQ(wire_quanta_to_ns(1, 1000000000ull), 512);
	CHECK_EQ(wire_quanta_to_ns(0, 1000000000ull), 0);
	/* rate 0 is taken as 10 Gbit/s */
	CHECK_EQ(wire_quanta_to_ns(0xffff, 0), 3355392ull);
	CHECK_EQ(wire_quanta_to_ns(0xffff, 0), wire_quanta_to_ns(0xffff, 10000000000ull));
	CHECK_EQ(wire_quanta_to_ns(10, 0), 512);
	/* 1 quantum at 10G is 51.2 ns: rounded up, never cut short */
	CHECK_EQ(wire_quanta_to_ns(1, 0), 52);
	/* no overflow at the extremes */
	CHECK_EQ(wire_quanta_to_ns(0xffff, 1), 33553920000000000ull);
	CHECK_EQ(wire_quanta_to_ns(0xffff, UINT64_MAX), 1);
}

/* ---- l2cc CREDIT (0x88B6) ---------------------------------------------- */

/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 01:80:c2:00:00:01, Type: Local Experimental Ethertype 2 (0x88b6)
 * l2cc control, Version: 1, Type: CREDIT (1), Length: 132
 *     Unit: bytes (0), Priority mask: 0x21, Sent unit: frames (1), Reserved: 0x00,
 *     Limit[0]: 4294967296, Limit[1]: 1, Limit[5]: 18446744073709551600,
 *     Limit[7]: 0x0102030405060708, other limits 0,
 *     Sent[0]: 1000, Sent[5]: 18446744073709551615, Sent[7]: 0x1112131415161718,
 *     other sent 0 */
static const uint8_t credit_frame[150] = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,   /* Destination */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
	0x88, 0xb6,                           /* Type: l2cc control */
	0x01,                                 /* Version: 1 */
	0x01,                                 /* Type: CREDIT */
	0x00, 0x84,                           /* Length: 132 */
	0x00,                                 /* Unit: bytes */
	0x21,                                 /* Priority mask: 0 and 5 */
	0x01,                                 /* Sent unit: frames */
	0x00,                                 /* Reserved */
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,   /* Limit[0]: 2^32 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Limit[1]: 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Limit[2] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Limit[3] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Limit[4] */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0,   /* Limit[5]: 2^64 - 16 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Limit[6] */
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,   /* Limit[7] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,   /* Sent[0]: 1000 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Sent[1] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Sent[2] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Sent[3] */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Sent[4] */
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,   /* Sent[5]: 2^64 - 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* Sent[6] */
	0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,   /* Sent[7] */
};

static const struct wire_credit credit_val = {
	.unit = L2CC_CREDIT_BYTES,
	.prio_mask = 0x21,
	.sent_unit = L2CC_CREDIT_FRAMES,
	.limit = { 1ull << 32, 1, 0, 0, 0, UINT64_MAX - 15, 0, 0x0102030405060708ull },
	.sent = { 1000, 0, 0, 0, 0, UINT64_MAX, 0, 0x1112131415161718ull },
};

static void check_credit_eq(const struct wire_credit *a, const struct wire_credit *b)
{
	int i;

	CHECK_EQ(a->unit, b->unit);
	CHECK_EQ(a->prio_mask, b->prio_mask);
	CHECK_EQ(a->sent_unit, b->sent_unit);
	for (i = 0; i < 8; i++) {
		CHECK(a->limit[i] == b->limit[i]);
		CHECK(a->sent[i] == b->sent[i]);
	}
}

static void test_credit_round_trip(void)
{
	struct wire_credit c;
	const uint8_t *body;
	struct eth_info ei;
	uint8_t buf[160];
	size_t blen;
	int n;

	CHECK_EQ(sizeof(struct l2cc_credit), 132);
	memset(buf, 0xaa, sizeof(buf));
	n = wire_build_credit(buf, sizeof(buf), src_mac, &credit_val);
	CHECK_EQ(n, 150);
	CHECK_MEM(buf, credit_frame, sizeof(credit_frame));
	CHECK_EQ(buf[150], 0xaa);
	CHECK_EQ(wire_build_credit(buf, 149, src_mac, &credit_val), -ENOSPC);

	CHECK_EQ(wire_parse_eth(credit_frame, sizeof(credit_frame), &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_CTRL);
	CHECK_MEM(ei.dst, wire_macctrl_da, 6);
	CHECK_EQ(wire_parse_ctrl(credit_frame + ei.hlen, sizeof(credit_frame) - ei.hlen,
				 &body, &blen), L2CC_CTRL_CREDIT);
	CHECK(body == credit_frame + 18);
	CHECK_EQ(blen, 132);
	memset(&c, 0x55, sizeof(c));
	CHECK_EQ(wire_parse_credit(body, blen, &c), 0);
	CHECK_EQ(c.unit, L2CC_CREDIT_BYTES);
	CHECK_EQ(c.prio_mask, 0x21);
	CHECK_EQ(c.sent_unit, L2CC_CREDIT_FRAMES);
	CHECK(c.limit[5] == UINT64_MAX - 15);
	CHECK(c.sent[0] == 1000);
	CHECK(c.sent[5] == UINT64_MAX);
	CHECK(c.sent[7] == 0x1112131415161718ull);
	check_credit_eq(&c, &credit_val);

	/* Frames for the limits and bytes for sent[] round-trip too. */
	{
		struct wire_credit f = credit_val;

		f.unit = L2CC_CREDIT_FRAMES;
		f.sent_unit = L2CC_CREDIT_BYTES;
		CHECK_EQ(wire_build_credit(buf, sizeof(buf), src_mac, &f), 150);
		CHECK_EQ(buf[18], 0x01);
		CHECK_EQ(buf[20], 0x00);
		CHECK_EQ(wire_parse_credit(buf + 18, 132, &c), 0);
		check_credit_eq(&c, &f);
	}
}

static void test_credit_longer_body(void)
{
	/* l2cc CREDIT, Length: 140: 8 bytes appended by a later release are ignored. */
	uint8_t f[sizeof(credit_frame) + 8];
	struct wire_credit c;
	const uint8_t *body;
	size_t blen;

	memcpy(f, credit_frame, sizeof(credit_frame));
	memset(f + sizeof(credit_frame), 0xee, 8);
	f[17] = 140;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), L2CC_CTRL_CREDIT);
	CHECK_EQ(blen, 140);
	CHECK_EQ(wire_parse_credit(body, blen, &c), 0);
	check_credit_eq(&c, &credit_val);
	/* Reserved is sent 0 and ignored on receipt. */
	f[21] = 0x5a;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), 0);
	check_credit_eq(&c, &credit_val);
}

static void test_ctrl_padding_allowed(void)
{
	/* The same CREDIT with 6 bytes of trailing padding: body_len stays 132. */
	uint8_t f[156] = { 0 };
	const uint8_t *body;
	size_t blen;

	memcpy(f, credit_frame, sizeof(credit_frame));
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), L2CC_CTRL_CREDIT);
	CHECK_EQ(blen, 132);
}

static void test_credit_truncated(void)
{
	struct wire_credit c;
	const uint8_t *body;
	size_t blen;

	/* l2cc control [Malformed Packet]: 3 bytes, the header itself is cut */
	CHECK_EQ(wire_parse_ctrl(credit_frame + 14, 3, &body, &blen), -EINVAL);
	CHECK_EQ(wire_parse_ctrl(credit_frame + 14, 0, &body, &blen), -EINVAL);
	/* Header says 132 but the frame ends after 131 bytes of body */
	CHECK_EQ(wire_parse_ctrl(credit_frame + 14, 4 + 131, &body, &blen), -EINVAL);
	/* A body one byte short of a struct l2cc_credit (Sent[7] cut) */
	CHECK_EQ(wire_parse_credit(credit_frame + 18, 131, &c), -EINVAL);
	/* The old 72-byte body (limits only) is too short now */
	CHECK_EQ(wire_parse_credit(credit_frame + 18, 72, &c), -EINVAL);
	CHECK_EQ(wire_parse_credit(credit_frame + 18, 0, &c), -EINVAL);
}

static void test_credit_bad_version(void)
{
	/* l2cc control, Version: 2 (unknown), Type: CREDIT, Length: 132 */
	uint8_t f[sizeof(credit_frame)];
	const uint8_t *body;
	size_t blen;

	memcpy(f, credit_frame, sizeof(f));
	f[14] = 0x02;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EPROTO);
	f[14] = 0x00;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EPROTO);
	/* Type 0 is not a message. */
	f[14] = 0x01;
	f[15] = 0x00;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EINVAL);
	/* Unknown types pass the header check: the caller decides what to do. */
	f[15] = 0x07;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), 7);
}

static void test_credit_bad_unit(void)
{
	/* l2cc CREDIT, Unit: 2 (unknown) */
	uint8_t f[sizeof(credit_frame)];
	struct wire_credit c;

	memcpy(f, credit_frame, sizeof(f));
	f[18] = 0x02;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), -EINVAL);
	/* Unit: 0xff — "none" is only for sent_unit; limits always have a unit */
	f[18] = 0xff;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), -EINVAL);
}

static void test_credit_bad_sent_unit(void)
{
	/* l2cc CREDIT, Sent unit: 2 (unknown) */
	uint8_t f[sizeof(credit_frame)];
	struct wire_credit c;

	memcpy(f, credit_frame, sizeof(f));
	f[20] = 0x02;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), -EINVAL);
	/* Sent unit: 0xfe, one below "none" */
	f[20] = 0xfe;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), -EINVAL);
	/* Sent unit: 0x80 */
	f[20] = 0x80;
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), -EINVAL);
}

static void test_credit_sent_unit_none(void)
{
	/* l2cc CREDIT, Sent unit: none (0xff): limits valid, sent[] not valid.
	 * Accepted; sent[] is returned as received, for the caller to ignore. */
	uint8_t f[sizeof(credit_frame)];
	struct wire_credit c, want = credit_val;
	uint8_t buf[160];

	memcpy(f, credit_frame, sizeof(f));
	f[20] = 0xff;
	memset(&c, 0x55, sizeof(c));
	CHECK_EQ(wire_parse_credit(f + 18, 132, &c), 0);
	CHECK_EQ(c.sent_unit, L2CC_CREDIT_UNIT_NONE);
	want.sent_unit = L2CC_CREDIT_UNIT_NONE;
	check_credit_eq(&c, &want);
	/* and it is encoded as the same byte */
	CHECK_EQ(wire_build_credit(buf, sizeof(buf), src_mac, &want), 150);
	CHECK_MEM(buf, f, sizeof(f));
}

static void test_credit_length_too_large(void)
{
	/* l2cc control, Version: 1, Type: CREDIT, Length: 133 — one more than the 132 bytes that follow */
	uint8_t f[sizeof(credit_frame)];
	const uint8_t *body;
	size_t blen;

	memcpy(f, credit_frame, sizeof(f));
	f[17] = 133;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EINVAL);
	/* Length: 65535 */
	f[16] = 0xff;
	f[17] = 0xff;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EINVAL);
	/* Length: 388 (0x0184): the high byte alone overshoots */
	f[16] = 0x01;
	f[17] = 0x84;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), -EINVAL);
	/* A shorter length is legal at this layer; the CREDIT decoder rejects it. */
	f[16] = 0x00;
	f[17] = 131;
	CHECK_EQ(wire_parse_ctrl(f + 14, sizeof(f) - 14, &body, &blen), L2CC_CTRL_CREDIT);
	CHECK_EQ(blen, 131);
	{
		struct wire_credit c;

		CHECK_EQ(wire_parse_credit(body, blen, &c), -EINVAL);
	}
}

/* ---- l2cc data tag (0x88B5) -------------------------------------------- */

static const uint8_t dst_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

/* Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02, Type: IPv4 (0x0800)
 * Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2 (Total Length: 32, TTL 64, UDP)
 * User Datagram Protocol, Src Port: 12345, Dst Port: 5001 (Length: 12), Data: "l2cc" */
static const uint8_t ipv4_udp[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
	0x08, 0x00,                           /* Type: IPv4 */
	0x45, 0x00, 0x00, 0x20,               /* IPv4: version 4, IHL 5, Total Length 32 */
	0x00, 0x01, 0x00, 0x00,               /* Identification 1, no fragment */
	0x40, 0x11, 0x66, 0xca,               /* TTL 64, Protocol UDP, Header checksum 0x66ca */
	0x0a, 0x00, 0x00, 0x01,               /* Source Address: 10.0.0.1 */
	0x0a, 0x00, 0x00, 0x02,               /* Destination Address: 10.0.0.2 */
	0x30, 0x39, 0x13, 0x89,               /* UDP: Src Port 12345, Dst Port 5001 */
	0x00, 0x0c, 0x00, 0x00,               /* Length 12, Checksum 0 (none) */
	0x6c, 0x32, 0x63, 0x63,               /* Data: "l2cc" */
	/* 14 bytes of padding to 60: payload as far as the tag is concerned */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* The same frame tagged by hostd for flow 7, seq 0x01020304, no flags:
 * Ethernet II, Src: 02:00:00:00:00:01, Dst: 02:00:00:00:00:02, Type: Local Experimental Ethertype 1 (0x88b5)
 * l2cc data tag, Version: 1, Flags: 0x00, Flow: 7, Seq: 16909060, CPID: 0000000000000000, Type: IPv4 (0x0800)
 * Internet Protocol Version 4, Src: 10.0.0.1, Dst: 10.0.0.2 ... (as above) */
static const uint8_t ipv4_udp_tagged[78] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
	0x88, 0xb5,                           /* Type: l2cc data tag */
	0x01,                                 /* Version: 1 */
	0x00,                                 /* Flags: none (FECN 0, RLT 0) */
	0x00, 0x07,                           /* Flow: 7 */
	0x01, 0x02, 0x03, 0x04,               /* Seq: 0x01020304 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,   /* CPID: none */
	0x08, 0x00,                           /* Inner type: IPv4 (the original ethertype) */
	0x45, 0x00, 0x00, 0x20, 0x00, 0x01, 0x00, 0x00,   /* IPv4, unchanged */
	0x40, 0x11, 0x66, 0xca, 0x0a, 0x00, 0x00, 0x01,
	0x0a, 0x00, 0x00, 0x02,
	0x30, 0x39, 0x13, 0x89, 0x00, 0x0c, 0x00, 0x00,   /* UDP, unchanged */
	0x6c, 0x32, 0x63, 0x63,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,         /* the old padding */
};

static const struct wire_tag tag7 = { .flow = 7, .seq = 0x01020304 };

/* An AF_XDP-like frame: `headroom` bytes in front, poisoned so a write into
 * the wrong place shows up. */
struct umem_frame {
	uint8_t buf[256];
	uint8_t *data;
	uint32_t len;
};

static void umem_load(struct umem_frame *u, uint32_t headroom, const void *f, uint32_t len)
{
	memset(u->buf, 0xaa, sizeof(u->buf));
	u->data = u->buf + headroom;
	u->len = len;
	memcpy(u->data, f, len);
}

static void test_tag_insert_untagged(void)
{
	struct umem_frame u;
	struct eth_info ei;
	struct wire_tag t;
	uint8_t *orig;

	CHECK_EQ(sizeof(struct l2cc_data_tag), 18);
	CHECK_EQ(L2CC_TAG_LEN, 18);
	umem_load(&u, 64, ipv4_udp, sizeof(ipv4_udp));
	orig = u.data;
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 64, &tag7), 0);
	CHECK(u.data == orig - 18);       /* the header moved back; payload stayed */
	CHECK_EQ(u.len, 78);
	CHECK_MEM(u.data, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));
	CHECK_EQ(u.buf[64 - 19], 0xaa);   /* nothing written before the new start */
	CHECK_EQ(u.buf[64 + 60], 0xaa);   /* nor after the end */

	CHECK_EQ(wire_parse_eth(u.data, u.len, &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_DATA_TAG);
	CHECK_EQ(ei.hlen, 14);
	CHECK_EQ(wire_tag_find(u.data, u.len), 14);
	memset(&t, 0x55, sizeof(t));
	CHECK_EQ(wire_tag_read(u.data, u.len, &t), 14);
	CHECK_EQ(t.flags, 0);
	CHECK_EQ(t.flow, 7);
	CHECK_EQ(t.seq, 0x01020304);
	CHECK_EQ(t.inner_type, 0x0800);

	/* Exactly enough headroom is enough. */
	umem_load(&u, 18, ipv4_udp, sizeof(ipv4_udp));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 18, &tag7), 0);
	CHECK(u.data == u.buf);
	CHECK_MEM(u.data, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));
}

static void test_tag_insert_8021q(void)
{
	/* Ethernet II, Type: 802.1Q; 802.1Q Virtual LAN, PRI: 5, DEI: 0, ID: 100, Type: IPv4
	 * (the IPv4/UDP packet of ipv4_udp[], 46 bytes with its padding) */
	uint8_t vlan[64];
	/* Tagged, FECN clear, RLT set with CPID 00:11:22:33:44:55:66:77, flow 0xbeef, seq 0xfffffffe:
	 * Ethernet II, Type: 802.1Q
	 * 802.1Q Virtual LAN, PRI: 5, DEI: 0, ID: 100, Type: Local Experimental Ethertype 1 (0x88b5)
	 * l2cc data tag, Version: 1, Flags: 0x02 (RLT), Flow: 48879, Seq: 4294967294,
	 *     CPID: 0011223344556677, Type: IPv4 (0x0800)
	 * Internet Protocol Version 4 ... */
	static const uint8_t head[36] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination */
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source */
		0x81, 0x00, 0xa0, 0x64,               /* 802.1Q: PCP 5, VID 100 — stays outermost */
		0x88, 0xb5,                           /* Type: l2cc data tag */
		0x01,                                 /* Version: 1 */
		0x02,                                 /* Flags: RLT */
		0xbe, 0xef,                           /* Flow: 0xbeef */
		0xff, 0xff, 0xff, 0xfe,               /* Seq: 2^32 - 2 */
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,   /* CPID */
		0x08, 0x00,                           /* Inner type: IPv4 */
	};
	const struct wire_tag t = {
		.flags = L2CC_TAG_RLT, .flow = 0xbeef, .seq = 0xfffffffe,
		.cpid = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77 },
		.inner_type = 0x1234,   /* ignored: taken from the frame */
	};
	struct umem_frame u;
	struct eth_info ei;
	struct wire_tag got;

	memcpy(vlan, ipv4_udp, 12);
	vlan[12] = 0x81; vlan[13] = 0x00; vlan[14] = 0xa0; vlan[15] = 0x64;
	memcpy(vlan + 16, ipv4_udp + 12, 48);

	umem_load(&u, 100, vlan, sizeof(vlan));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 100, &t), 0);
	CHECK_EQ(u.len, 82);
	CHECK(u.data == u.buf + 82);
	CHECK_MEM(u.data, head, sizeof(head));
	CHECK_MEM(u.data + 36, ipv4_udp + 14, 46);

	/* Switches still find the priority in the outer tag. */
	CHECK_EQ(wire_parse_eth(u.data, u.len, &ei), 0);
	CHECK_EQ(ei.prio, 5);
	CHECK_EQ(ei.vid, 100);
	CHECK_EQ(ei.ntags, 1);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_DATA_TAG);
	CHECK_EQ(wire_tag_find(u.data, u.len), 18);

	/* Strip gives back the original bytes, at the original place. */
	memset(&got, 0, sizeof(got));
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, &got), 0);
	CHECK(u.data == u.buf + 100);
	CHECK_EQ(u.len, sizeof(vlan));
	CHECK_MEM(u.data, vlan, sizeof(vlan));
	CHECK_EQ(got.flags, L2CC_TAG_RLT);
	CHECK_EQ(got.flow, 0xbeef);
	CHECK_EQ(got.seq, 0xfffffffe);
	CHECK_MEM(got.cpid, t.cpid, 8);
	CHECK_EQ(got.inner_type, 0x0800);
}

static void test_tag_insert_qinq(void)
{
	/* Ethernet II, Type: 802.1ad; 802.1ad ID: 10 (PRI 3); 802.1Q PRI 5 ID 100, Type: IPv4
	 * The tag goes after both VLAN tags: ... 88a8 600a 8100 a064 88b5 01 ... 0800 45 ... */
	static const uint8_t f[26] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0xa8, 0x60, 0x0a,               /* S-tag PCP 3 VID 10 */
		0x81, 0x00, 0xa0, 0x64,               /* C-tag PCP 5 VID 100 */
		0x08, 0x00,                           /* Type: IPv4 */
		0x45, 0x00, 0x00, 0x14,
	};
	struct umem_frame u;
	struct eth_info ei;

	umem_load(&u, 32, f, sizeof(f));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 32, &tag7), 0);
	CHECK_EQ(u.len, 44);
	CHECK_MEM(u.data, f, 20);                 /* MACs and both VLAN tags first */
	CHECK_EQ(u.data[20], 0x88);
	CHECK_EQ(u.data[21], 0xb5);
	CHECK_EQ(u.data[22], 0x01);               /* version */
	CHECK_EQ(u.data[38], 0x08);               /* inner type IPv4 */
	CHECK_EQ(u.data[39], 0x00);
	CHECK_MEM(u.data + 40, f + 22, 4);
	CHECK_EQ(wire_parse_eth(u.data, u.len, &ei), 0);
	CHECK_EQ(ei.prio, 3);
	CHECK_EQ(wire_tag_find(u.data, u.len), 22);
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, NULL), 0);
	CHECK_EQ(u.len, sizeof(f));
	CHECK_MEM(u.data, f, sizeof(f));
}

static void test_tag_strip_round_trip(void)
{
	struct umem_frame u;
	struct wire_tag t;

	/* Strip the annotated tagged frame: the untagged one comes out, 18 bytes on. */
	umem_load(&u, 16, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, &t), 0);
	CHECK(u.data == u.buf + 16 + 18);
	CHECK_EQ(u.len, 60);
	CHECK_MEM(u.data, ipv4_udp, sizeof(ipv4_udp));
	CHECK_EQ(t.flow, 7);
	CHECK_EQ(t.seq, 0x01020304);
	CHECK_EQ(t.inner_type, 0x0800);
	/* and back again, from the tag strip returned */
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 16 + 18, &t), 0);
	CHECK(u.data == u.buf + 16);
	CHECK_MEM(u.data, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));

	/* A tag with nothing after it (20 + 12 bytes) strips to a bare header. */
	umem_load(&u, 0, ipv4_udp_tagged, 32);
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, &t), 0);
	CHECK_EQ(u.len, 14);
	CHECK_MEM(u.data, ipv4_udp, 14);
}

static void test_tag_insert_errors(void)
{
	/* Ethernet II, Type: 802.3 length 46 (LLC follows): no ethertype to carry */
	uint8_t llc[60];
	/* Three VLAN tags: wire_parse_eth stops after two, nowhere to put the tag */
	static const uint8_t three[26] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
		0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
		0x88, 0xa8, 0x60, 0x0a, 0x81, 0x00, 0xa0, 0x64, 0x81, 0x00, 0x00, 0xc8,
		0x08, 0x00,
	};
	struct umem_frame u;
	uint8_t *p;
	uint32_t len;

	/* No headroom, or one byte too little: refused, frame untouched. */
	umem_load(&u, 0, ipv4_udp, sizeof(ipv4_udp));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 0, &tag7), -ENOSPC);
	umem_load(&u, 17, ipv4_udp, sizeof(ipv4_udp));
	p = u.data;
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 17, &tag7), -ENOSPC);
	CHECK(u.data == p);
	CHECK_EQ(u.len, 60);
	CHECK_MEM(u.data, ipv4_udp, 60);
	CHECK_EQ(u.buf[0], 0xaa);

	/* Already tagged */
	umem_load(&u, 64, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 64, &tag7), -EEXIST);
	CHECK_MEM(u.data, ipv4_udp_tagged, sizeof(ipv4_udp_tagged));

	/* Not an Ethernet frame: 13 bytes */
	umem_load(&u, 64, ipv4_udp, 13);
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 64, &tag7), -EINVAL);
	p = NULL;
	len = 60;
	CHECK_EQ(wire_tag_insert(&p, &len, 64, &tag7), -EINVAL);

	memcpy(llc, ipv4_udp, sizeof(llc));
	llc[12] = 0x00;
	llc[13] = 0x2e;
	umem_load(&u, 64, llc, sizeof(llc));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 64, &tag7), -EINVAL);
	umem_load(&u, 64, three, sizeof(three));
	CHECK_EQ(wire_tag_insert(&u.data, &u.len, 64, &tag7), -EINVAL);
	CHECK_MEM(u.data, three, sizeof(three));
}

static void test_tag_strip_errors(void)
{
	uint8_t f[sizeof(ipv4_udp_tagged)];
	struct umem_frame u;
	struct wire_tag t;
	uint32_t n;

	/* Untagged IPv4 / 802.1Q / runt: no tag */
	umem_load(&u, 0, ipv4_udp, sizeof(ipv4_udp));
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, &t), -ENOENT);
	CHECK_MEM(u.data, ipv4_udp, sizeof(ipv4_udp));
	CHECK_EQ(wire_tag_find(ipv4_udp, sizeof(ipv4_udp)), -ENOENT);
	CHECK_EQ(wire_tag_find(ipv4_udp_tagged, 13), -ENOENT);

	/* l2cc data tag [Malformed Packet]: cut anywhere between the version and
	 * the end of inner_type (15..31 bytes) */
	for (n = 15; n < 32; n++) {
		umem_load(&u, 0, ipv4_udp_tagged, n);
		CHECK_EQ(wire_tag_strip(&u.data, &u.len, &t), -EINVAL);
		CHECK_EQ(u.len, n);
		CHECK(u.data == u.buf);
	}
	/* 88b5 and nothing else: the version is missing too */
	CHECK_EQ(wire_tag_find(ipv4_udp_tagged, 14), -EINVAL);

	/* l2cc data tag, Version: 2 (unknown): -EPROTO, even if short */
	memcpy(f, ipv4_udp_tagged, sizeof(f));
	f[14] = 0x02;
	umem_load(&u, 0, f, sizeof(f));
	CHECK_EQ(wire_tag_strip(&u.data, &u.len, &t), -EPROTO);
	CHECK_MEM(u.data, f, sizeof(f));
	CHECK_EQ(wire_tag_find(f, 15), -EPROTO);
	f[14] = 0x00;
	CHECK_EQ(wire_tag_find(f, sizeof(f)), -EPROTO);

	/* Inner type we never write: 802.3 length, VLAN, another tag */
	memcpy(f, ipv4_udp_tagged, sizeof(f));
	f[30] = 0x00; f[31] = 0x2e;
	CHECK_EQ(wire_tag_find(f, sizeof(f)), -EINVAL);
	f[30] = 0x81; f[31] = 0x00;
	CHECK_EQ(wire_tag_find(f, sizeof(f)), -EINVAL);
	f[30] = 0x88; f[31] = 0xb5;
	CHECK_EQ(wire_tag_find(f, sizeof(f)), -EINVAL);
	/* ARP is fine, and unknown flag bits are kept */
	f[30] = 0x08; f[31] = 0x06;
	f[15] = 0xf0;
	CHECK_EQ(wire_tag_read(f, sizeof(f), &t), 14);
	CHECK_EQ(t.inner_type, 0x0806);
	CHECK_EQ(t.flags, 0xf0);
}

static void test_tag_set_fecn(void)
{
	uint8_t f[sizeof(ipv4_udp_tagged)], want[sizeof(ipv4_udp_tagged)];
	uint8_t g[sizeof(ipv4_udp)];
	struct wire_tag t;

	/* l2cc data tag, Flags: 0x01 (FECN): only byte 15 changes */
	memcpy(f, ipv4_udp_tagged, sizeof(f));
	memcpy(want, ipv4_udp_tagged, sizeof(want));
	want[15] = 0x01;
	CHECK_EQ(wire_tag_set_fecn(f, sizeof(f)), 0);
	CHECK_MEM(f, want, sizeof(want));
	/* twice is once */
	CHECK_EQ(wire_tag_set_fecn(f, sizeof(f)), 0);
	CHECK_MEM(f, want, sizeof(want));
	CHECK_EQ(wire_tag_read(f, sizeof(f), &t), 14);
	CHECK_EQ(t.flags, L2CC_TAG_FECN);

	/* Never clears: RLT and unknown bits survive */
	f[15] = 0x82;
	CHECK_EQ(wire_tag_set_fecn(f, sizeof(f)), 0);
	CHECK_EQ(f[15], 0x83);

	/* Untagged: cannot be marked, not touched */
	memcpy(g, ipv4_udp, sizeof(g));
	CHECK_EQ(wire_tag_set_fecn(g, sizeof(g)), -ENOENT);
	CHECK_MEM(g, ipv4_udp, sizeof(g));
	/* Truncated tag / unknown version: not touched */
	memcpy(f, ipv4_udp_tagged, sizeof(f));
	CHECK_EQ(wire_tag_set_fecn(f, 20), -EINVAL);
	CHECK_EQ(f[15], 0x00);
	f[14] = 0x02;
	CHECK_EQ(wire_tag_set_fecn(f, sizeof(f)), -EPROTO);
	CHECK_EQ(f[15], 0x00);

	/* Behind an 802.1Q tag, FECN is byte 19 */
	{
		uint8_t v[sizeof(ipv4_udp_tagged) + 4];

		memcpy(v, ipv4_udp_tagged, 12);
		v[12] = 0x81; v[13] = 0x00; v[14] = 0xa0; v[15] = 0x64;
		memcpy(v + 16, ipv4_udp_tagged + 12, sizeof(ipv4_udp_tagged) - 12);
		CHECK_EQ(wire_tag_set_fecn(v, sizeof(v)), 0);
		CHECK_EQ(v[19], 0x01);
		CHECK_EQ(v[18], 0x01);   /* the version next to it untouched */
	}
}

/* ---- CNP and ACK (0x88B6 types 2, 3) ----------------------------------- */

/* In these frames the receiver of the tagged data (dst_mac, 02:..:02) answers
 * its sender (src_mac, 02:..:01): wire_build_cnp(buf, len, dst = src_mac, src = dst_mac, ...). */

/* Ethernet II, Src: 02:00:00:00:00:02, Dst: 02:00:00:00:00:01, Type: Local Experimental Ethertype 2 (0x88b6)
 * l2cc control, CNP: Version: 1, Type: CNP (2), Length: 12
 *     Flow: 7, Reserved: 0x0000, Seq: 16909060, Marked: 3
 * (the receiver of ipv4_udp_tagged answers its sender, unicast) */
static const uint8_t cnp_frame[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Destination: the data sender */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Source: us */
	0x88, 0xb6,                           /* Type: l2cc control */
	0x01,                                 /* Version: 1 */
	0x02,                                 /* Type: CNP */
	0x00, 0x0c,                           /* Length: 12 */
	0x00, 0x07,                           /* Flow: 7 */
	0x00, 0x00,                           /* Reserved */
	0x01, 0x02, 0x03, 0x04,               /* Seq: 0x01020304 */
	0x00, 0x00, 0x00, 0x03,               /* Marked: 3 */
	/* 30 bytes of padding */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Ethernet II, Src: 02:00:00:00:00:02, Dst: 02:00:00:00:00:01, Type: 0x88b6
 * l2cc control, ACK: Version: 1, Type: ACK (3), Length: 12
 *     Flow: 7, Flags: 0x01 (ECE), Reserved: 0x00, Cumulative seq: 4294967295, Frames: 16 */
static const uint8_t ack_frame[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Destination: the data sender */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Source: us */
	0x88, 0xb6,                           /* Type: l2cc control */
	0x01,                                 /* Version: 1 */
	0x03,                                 /* Type: ACK */
	0x00, 0x0c,                           /* Length: 12 */
	0x00, 0x07,                           /* Flow: 7 */
	0x01,                                 /* Flags: ECE */
	0x00,                                 /* Reserved */
	0xff, 0xff, 0xff, 0xff,               /* Cumulative seq: 2^32 - 1 */
	0x00, 0x00, 0x00, 0x10,               /* Frames: 16 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Ethernet II, Src: 02:00:00:00:00:01 (the source hostd), Dst: 02:00:00:00:00:02,
 * 802.1Q PRI 7 VID 0, Type: 0x88b6
 * l2cc control, DISCOVER: Version: 1, Type: DISCOVER (4), Length: 24
 *     Path (flow): 7, Hops: 3, Flags: 0x00, Seq: 1, Path speed: 10000000 bit/s,
 *     Sent at: 123456789 ns  (as it reaches the destination after three switches) */
static const uint8_t disc_frame[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Destination: the path's destination */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Source: the path's source */
	0x81, 0x00, 0xe0, 0x00,               /* 802.1Q: PCP 7, DEI 0, VID 0 */
	0x88, 0xb6,                           /* Type: l2cc control */
	0x01,                                 /* Version: 1 */
	0x04,                                 /* Type: DISCOVER */
	0x00, 0x18,                           /* Length: 24 */
	0x00, 0x07,                           /* Path (flow): 7 */
	0x03,                                 /* Hops: 3 */
	0x00,                                 /* Flags */
	0x00, 0x00, 0x00, 0x01,               /* Seq: 1 */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x98, 0x96, 0x80,   /* Path speed: 10^7 bit/s */
	0x00, 0x00, 0x00, 0x00, 0x07, 0x5b, 0xcd, 0x15,   /* Sent at: 123456789 ns */
	/* 14 bytes of padding */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Ethernet II, Src: 02:00:00:00:00:02 (the egress hostd), Dst: 02:00:00:00:00:01,
 * 802.1Q PRI 7 VID 0, Type: 0x88b6
 * l2cc control, FEEDBACK: Version: 1, Type: FEEDBACK (6), Length: 18
 *     Path (flow): 7, Hop: 3, Set at hop: 2, Seq: 42, Level: 7000 (70.00 %),
 *     Reserved: 0x0000, Set by: 02:00:00:00:02:01 */
static const uint8_t fb_frame[60] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Destination: the path's source */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Source: the path's egress host */
	0x81, 0x00, 0xe0, 0x00,               /* 802.1Q: PCP 7, DEI 0, VID 0 */
	0x88, 0xb6,                           /* Type: l2cc control */
	0x01,                                 /* Version: 1 */
	0x06,                                 /* Type: FEEDBACK */
	0x00, 0x12,                           /* Length: 18 */
	0x00, 0x07,                           /* Path (flow): 7 */
	0x03,                                 /* Hop: 3 */
	0x02,                                 /* Set at hop: 2 */
	0x00, 0x00, 0x00, 0x2a,               /* Seq: 42 */
	0x1b, 0x58,                           /* Level: 7000 = 70.00 % */
	0x00, 0x64,                           /* Speed: 100 Mbit/s (of the setter) */
	0x02, 0x00, 0x00, 0x00, 0x02, 0x01,   /* Set by */
	/* 20 bytes of padding */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Ethernet II, Src: 02:00:00:00:0a:01 (the switch's port 3), Dst: 02:00:00:00:00:01,
 * Type: 0x22e7. 802.1Qau CNM: QntzFb 21, CPID 020000000a010300, cnmQOffset -5,
 * cnmQDelta 3, encapsulated priority 0, DA 02:00:00:00:00:02, MSDU length 66:
 * what a congestion point sends about a sample of ipv4_udp_tagged. */
static const uint8_t cp_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x0a, 0x01 };
static const uint8_t cnm_frame[102] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,   /* Destination: the sampled frame's source */
	0x02, 0x00, 0x00, 0x00, 0x0a, 0x01,   /* Source: the CP's port */
	0x22, 0xe7,                           /* Type: 802.1Qau CNM */
	0x00, 0x15,                           /* Version 0, reserved 0, QntzFb 21 */
	0x02, 0x00, 0x00, 0x00, 0x0a, 0x01, 0x03, 0x00,   /* CPID: switch MAC, port 3, prio 0 */
	0xff, 0xfb,                           /* cnmQOffset: -5 (units of 64 octets) */
	0x00, 0x03,                           /* cnmQDelta: 3 */
	0x00, 0x00,                           /* Encapsulated priority: 0 */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,   /* Encapsulated DA */
	0x00, 0x42,                           /* Encapsulated MSDU length: 66 */
	/* Encapsulated MSDU: ipv4_udp_tagged from its EtherType, 64 of 66 bytes */
	0x88, 0xb5, 0x01, 0x00, 0x00, 0x07, 0x01, 0x02,
	0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x08, 0x00, 0x45, 0x00, 0x00, 0x20,
	0x00, 0x01, 0x00, 0x00, 0x40, 0x11, 0x66, 0xca,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
	0x30, 0x39, 0x13, 0x89, 0x00, 0x0c, 0x00, 0x00,
	0x6c, 0x32, 0x63, 0x63, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static const struct wire_cnm cnm21 = {
	.qntz_fb = 21, .cpid = { 0x02, 0, 0, 0, 0x0a, 0x01, 3, 0 },
	.qoffset = -5, .qdelta = 3,
};

static void test_l2ci_round_trip(void)
{
	const struct wire_discover d = { .flow = 7, .hops = 3, .seq = 1, .path_bps = 10000000,
					 .t_tx = 123456789 };
	const struct wire_feedback fb = { .flow = 7, .hop = 3, .max_hop = 2, .seq = 42,
					  .level = 7000, .speed_mbps = 100,
					  .setter = { 0x02, 0, 0, 0, 0x02, 0x01 } };
	struct wire_discover gd;
	struct wire_feedback gf;
	const uint8_t *body;
	struct eth_info ei;
	uint8_t buf[64];
	size_t blen;

	CHECK_EQ(sizeof(struct l2cc_discover), 24);
	CHECK_EQ(sizeof(struct l2cc_feedback), 18);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_discover(buf, sizeof(buf), dst_mac, src_mac, L2CC_CTRL_DISCOVER, &d),
		 60);
	CHECK_MEM(buf, disc_frame, sizeof(disc_frame));
	CHECK_EQ(buf[60], 0xaa);
	CHECK_EQ(wire_build_discover(buf, 59, dst_mac, src_mac, L2CC_CTRL_DISCOVER, &d), -ENOSPC);
	/* The echo is the same body under its own type. */
	CHECK_EQ(wire_build_discover(buf, sizeof(buf), src_mac, dst_mac, L2CC_CTRL_DISCOVER_ECHO,
				     &d), 60);
	CHECK_EQ(buf[19], L2CC_CTRL_DISCOVER_ECHO);
	CHECK_MEM(buf + 22, disc_frame + 22, 24);

	/* Priority-tagged at PCP 7: switches queue it at 7. */
	CHECK_EQ(wire_parse_eth(disc_frame, 60, &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_CTRL);
	CHECK_EQ(ei.prio, L2CC_L2CI_PCP);
	CHECK_EQ(ei.vid, 0);
	CHECK_EQ(ei.hlen, 18);
	CHECK_EQ(wire_parse_ctrl(disc_frame + 18, 42, &body, &blen), L2CC_CTRL_DISCOVER);
	CHECK_EQ(blen, 24);
	memset(&gd, 0x55, sizeof(gd));
	CHECK_EQ(wire_parse_discover(body, blen, &gd), 0);
	CHECK_EQ(gd.flow, 7);
	CHECK_EQ(gd.hops, 3);
	CHECK_EQ(gd.flags, 0);
	CHECK_EQ(gd.seq, 1);
	CHECK_EQ(gd.path_bps, 10000000);
	CHECK_EQ(gd.t_tx, 123456789);

	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_feedback(buf, sizeof(buf), src_mac, dst_mac, &fb), 60);
	CHECK_MEM(buf, fb_frame, sizeof(fb_frame));
	CHECK_EQ(wire_parse_ctrl(fb_frame + 18, 42, &body, &blen), L2CC_CTRL_FEEDBACK);
	CHECK_EQ(blen, 18);
	memset(&gf, 0x55, sizeof(gf));
	CHECK_EQ(wire_parse_feedback(body, blen, &gf), 0);
	CHECK_EQ(gf.flow, 7);
	CHECK_EQ(gf.hop, 3);
	CHECK_EQ(gf.max_hop, 2);
	CHECK_EQ(gf.seq, 42);
	CHECK_EQ(gf.level, 7000);
	CHECK_EQ(gf.speed_mbps, 100);
	CHECK_MEM(gf.setter, fb.setter, 6);
	/* Speeds as Mbit/s: rounded, at least 1, saturating; 0 stays 0. */
	CHECK_EQ(wire_speed_mbps(0), 0);
	CHECK_EQ(wire_speed_mbps(1), 1);
	CHECK_EQ(wire_speed_mbps(10000000), 10);
	CHECK_EQ(wire_speed_mbps(2500000), 3);
	CHECK_EQ(wire_speed_mbps(400000000000ull), 65535);
}

static void test_l2ci_invalid(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct wire_discover d = { .flow = 1, .path_bps = 0 };
	struct wire_feedback fb = { .flow = 1, .hop = 1, .max_hop = 2 };
	struct wire_discover gd;
	struct wire_feedback gf;
	uint8_t f[60], buf[64];

	CHECK_EQ(wire_build_discover(buf, sizeof(buf), dst_mac, src_mac, L2CC_CTRL_DISCOVER, &d),
		 -EINVAL);
	d.path_bps = 1;
	CHECK_EQ(wire_build_discover(buf, sizeof(buf), bcast, src_mac, L2CC_CTRL_DISCOVER, &d),
		 -EINVAL);
	CHECK_EQ(wire_build_discover(buf, sizeof(buf), dst_mac, src_mac, L2CC_CTRL_CNP, &d),
		 -EINVAL);
	CHECK_EQ(wire_build_feedback(buf, sizeof(buf), dst_mac, src_mac, &fb), -EINVAL);
	fb.max_hop = 1;
	CHECK_EQ(wire_build_feedback(buf, sizeof(buf), bcast, src_mac, &fb), -EINVAL);
	for (size_t n = 0; n < 24; n++)
		CHECK_EQ(wire_parse_discover(disc_frame + 22, n, &gd), -EINVAL);
	for (size_t n = 0; n < 18; n++)
		CHECK_EQ(wire_parse_feedback(fb_frame + 22, n, &gf), -EINVAL);
	/* DISCOVER, Path speed: 0 */
	memcpy(f, disc_frame, sizeof(f));
	memset(f + 30, 0, 8);
	CHECK_EQ(wire_parse_discover(f + 22, 24, &gd), -EINVAL);
	CHECK_EQ(wire_discover_transit(f + 22, 23, 1), -EINVAL);
	/* FEEDBACK set at hop 4 of 3 */
	memcpy(f, fb_frame, sizeof(f));
	f[25] = 4;
	CHECK_EQ(wire_parse_feedback(f + 22, 18, &gf), -EINVAL);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 9000, src_mac, 100000000), -EINVAL);
	CHECK_EQ(f[24], 3);     /* left untouched */
}

/* What each switch does on the way: the spec's check 2 on bytes. */
static void test_l2ci_transit(void)
{
	static const uint8_t s1[6] = { 2, 0, 0, 0, 1, 1 }, s2[6] = { 2, 0, 0, 0, 2, 1 },
			     s3[6] = { 2, 0, 0, 0, 3, 1 };
	struct wire_discover d = { .flow = 9, .path_bps = 1000000000, .t_tx = 5 };
	struct wire_feedback fb = { .flow = 9, .level = 500, .speed_mbps = 1000 };
	struct wire_discover gd;
	struct wire_feedback gf;
	uint8_t f[64];

	/* 100M, 100M, 10M egresses: three hops, 10M. Unrated (0) changes nothing. */
	CHECK_EQ(wire_build_discover(f, sizeof(f), dst_mac, src_mac, L2CC_CTRL_DISCOVER, &d), 60);
	CHECK_EQ(wire_discover_transit(f + 22, 24, 100000000), 0);
	CHECK_EQ(wire_discover_transit(f + 22, 24, 0), 0);
	CHECK_EQ(wire_discover_transit(f + 22, 24, 10000000), 0);
	CHECK_EQ(wire_discover_transit(f + 22, 24, 100000000), 0);
	CHECK_EQ(wire_parse_discover(f + 22, 24, &gd), 0);
	CHECK_EQ(gd.hops, 4);
	CHECK_EQ(gd.path_bps, 10000000);
	CHECK_EQ(gd.t_tx, 5);

	/* Levels 10/70/30 % at S1/S2/S3 (the feedback passes S3 first), egress 5 %
	 * on a 1G link; the ports 100M, 50M, 10M: the source sees 70 % set at hop
	 * 2 by S2, a 50M port. */
	CHECK_EQ(wire_build_feedback(f, sizeof(f), src_mac, dst_mac, &fb), 60);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 3000, s3, 10000000), 1);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 7000, s2, 50000000), 1);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 1000, s1, 100000000), 0);
	CHECK_EQ(wire_parse_feedback(f + 22, 18, &gf), 0);
	CHECK_EQ(gf.level, 7000);
	CHECK_EQ(gf.hop, 3);
	CHECK_EQ(gf.max_hop, 2);
	CHECK_EQ(gf.speed_mbps, 50);
	CHECK_MEM(gf.setter, s2, 6);
	/* Egress at 90 %: no switch is higher, the egress stays the setter. */
	fb.level = 9000;
	memcpy(fb.setter, dst_mac, 6);
	CHECK_EQ(wire_build_feedback(f, sizeof(f), src_mac, dst_mac, &fb), 60);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 3000, s3, 10000000), 0);
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 7000, s2, 50000000), 0);
	CHECK_EQ(wire_parse_feedback(f + 22, 18, &gf), 0);
	CHECK_EQ(gf.level, 9000);
	CHECK_EQ(gf.max_hop, 0);
	CHECK_EQ(gf.speed_mbps, 1000);
	CHECK_MEM(gf.setter, dst_mac, 6);
	/* Over 100 % passes intact (a shared buffer can hold more than a port's). */
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 25000, s1, 0), 1);
	CHECK_EQ(wire_parse_feedback(f + 22, 18, &gf), 0);
	CHECK_EQ(gf.level, 25000);
	CHECK_EQ(gf.max_hop, 3);
	CHECK_EQ(gf.speed_mbps, 0);     /* a port without a rate of its own */
	/* Hops saturate rather than wrap. */
	f[24] = 255;
	f[25] = 3;
	CHECK_EQ(wire_feedback_transit(f + 22, 18, 65535, s1, 100000000), 1);
	CHECK_EQ(f[24], 255);
	CHECK_EQ(f[25], 255);
}

/* A TCP segment in an Ethernet frame: IPv4 (or IPv6), flags, payload bytes. */
static uint32_t tcp_frame(uint8_t *f, bool v6, int vlan, uint8_t flags, uint32_t payload,
			  uint16_t frag)
{
	uint32_t off = 12, iplen = v6 ? 40 : 20, n;
	uint8_t *ip, *tcp;

	memset(f, 0, 200);
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	if (vlan >= 0) {
		f[12] = 0x81;
		f[14] = (uint8_t)(vlan << 5);
		off = 16;
	}
	f[off] = v6 ? 0x86 : 0x08;
	f[off + 1] = v6 ? 0xdd : 0x00;
	ip = f + off + 2;
	tcp = ip + iplen;
	if (v6) {
		ip[0] = 0x60;
		ip[4] = (uint8_t)((20 + payload) >> 8);
		ip[5] = (uint8_t)(20 + payload);
		ip[6] = 6;
	} else {
		ip[0] = 0x45;
		ip[2] = (uint8_t)((40 + payload) >> 8);
		ip[3] = (uint8_t)(40 + payload);
		ip[6] = (uint8_t)(frag >> 8);
		ip[7] = (uint8_t)frag;
		ip[9] = 6;
	}
	tcp[12] = 0x50;                 /* data offset 5 words */
	tcp[13] = flags;
	n = off + 2 + iplen + 20 + payload;
	return n < 60 ? 60 : n;
}

static void test_tcp_pure_ack(void)
{
	uint8_t f[200];
	uint32_t n;

	n = tcp_frame(f, false, -1, 0x10, 0, 0);        /* ACK */
	CHECK(wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x18, 0, 0);        /* PSH ACK, no data */
	CHECK(wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, 5, 0x10, 0, 0);         /* behind a priority tag */
	CHECK(wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, true, -1, 0x10, 0, 0);         /* IPv6 */
	CHECK(wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x10, 100, 0);      /* ACK with data */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, true, -1, 0x10, 1, 0);
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x12, 0, 0);        /* SYN ACK */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x11, 0, 0);        /* FIN ACK */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x14, 0, 0);        /* RST ACK */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x00, 0, 0);        /* no ACK */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x10, 0, 0x0010);   /* a later fragment */
	CHECK(!wire_tcp_pure_ack(f, n));
	n = tcp_frame(f, false, -1, 0x10, 0, 0);
	f[23] = 17;                                     /* UDP */
	CHECK(!wire_tcp_pure_ack(f, n));
	/* Cut short before the TCP flags: never read past len. */
	n = tcp_frame(f, false, -1, 0x10, 0, 0);
	CHECK(!wire_tcp_pure_ack(f, 14 + 20 + 13));
	CHECK(!wire_tcp_pure_ack(f, 10));
	CHECK(!wire_tcp_pure_ack(NULL, 60));
}

static void test_cnm_round_trip(void)
{
	struct wire_cnm c = cnm21, got;
	struct wire_tag t;
	struct eth_info ei;
	uint8_t buf[128];

	CHECK_EQ(sizeof(struct l2cc_cnm), 24);
	CHECK_EQ(wire_cnm_encap(&c, ipv4_udp_tagged, sizeof(ipv4_udp_tagged)), 0);
	CHECK_EQ(c.encap_len, 66);
	CHECK_EQ(c.msdu_len, 64);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_cnm(buf, sizeof(buf), src_mac, cp_mac, -1, &c), 102);
	CHECK_MEM(buf, cnm_frame, sizeof(cnm_frame));
	CHECK_EQ(buf[102], 0xaa);
	CHECK_EQ(wire_build_cnm(buf, 101, src_mac, cp_mac, -1, &c), -ENOSPC);

	CHECK_EQ(wire_parse_eth(cnm_frame, sizeof(cnm_frame), &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_CNM);
	memset(&got, 0x55, sizeof(got));
	CHECK_EQ(wire_parse_cnm(cnm_frame + 14, sizeof(cnm_frame) - 14, &got), 0);
	CHECK_EQ(got.qntz_fb, 21);
	CHECK_MEM(got.cpid, cnm21.cpid, 8);
	CHECK_EQ(got.qoffset, -5);
	CHECK_EQ(got.qdelta, 3);
	CHECK_EQ(got.encap_prio, 0);
	CHECK_MEM(got.encap_da, dst_mac, 6);
	CHECK_EQ(got.encap_len, 66);
	CHECK_EQ(got.msdu_len, 64);
	CHECK_MEM(got.msdu, ipv4_udp_tagged + 12, 64);

	/* The flow the CNM is about, from the encapsulated tag. */
	memset(&t, 0, sizeof(t));
	CHECK_EQ(wire_cnm_tag(&got, &t), 0);
	CHECK_EQ(t.flow, 7);
	CHECK_EQ(t.seq, 0x01020304);
	CHECK_EQ(t.inner_type, 0x0800);
	/* An untagged sampled frame: no flow to find. */
	CHECK_EQ(wire_cnm_encap(&c, ipv4_udp, sizeof(ipv4_udp)), 0);
	CHECK_EQ(wire_cnm_tag(&c, &t), -ENOENT);
}

static void test_cnm_vlan_and_short(void)
{
	/* A short sampled frame behind 802.1Q PCP 5 VID 100: the CNM copies the
	 * VLAN (at the CNM's own priority, 6), encapsulates the whole MSDU, and
	 * is padded to 60 bytes; the parser ignores the padding. */
	static const uint8_t sampled[22] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01,
		0x81, 0x00, 0xa0, 0x64, 0x08, 0x06, 1, 2, 3, 4,
	};
	struct wire_cnm c = cnm21, got;
	struct eth_info ei;
	uint8_t buf[128];
	int n;

	CHECK_EQ(wire_cnm_encap(&c, sampled, sizeof(sampled)), 0);
	CHECK_EQ(c.encap_prio, 5);
	CHECK_EQ(c.encap_len, 6);
	n = wire_build_cnm(buf, sizeof(buf), src_mac, cp_mac, 6 << 13 | 100, &c);
	CHECK_EQ(n, 60);
	CHECK_EQ(wire_parse_eth(buf, n, &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_CNM);
	CHECK_EQ(ei.prio, 6);
	CHECK_EQ(ei.vid, 100);
	CHECK_EQ(wire_parse_cnm(buf + ei.hlen, n - ei.hlen, &got), 0);
	CHECK_EQ(got.encap_prio, 5);
	CHECK_EQ(got.encap_len, 6);
	CHECK_EQ(got.msdu_len, 6);
	CHECK_MEM(got.msdu, sampled + 16, 6);
}

static void test_cnm_invalid(void)
{
	struct wire_cnm c = cnm21, got;
	uint8_t buf[128];

	CHECK_EQ(wire_cnm_encap(&c, ipv4_udp_tagged, sizeof(ipv4_udp_tagged)), 0);
	/* Builder refusals */
	CHECK_EQ(wire_build_cnm(buf, sizeof(buf), wire_macctrl_da, cp_mac, -1, &c), -EINVAL);
	c.qntz_fb = 64;
	CHECK_EQ(wire_build_cnm(buf, sizeof(buf), src_mac, cp_mac, -1, &c), -EINVAL);
	c.qntz_fb = 21;
	c.msdu_len = 63;
	CHECK_EQ(wire_build_cnm(buf, sizeof(buf), src_mac, cp_mac, -1, &c), -EINVAL);
	c.msdu_len = 64;
	CHECK_EQ(wire_build_cnm(buf, sizeof(buf), src_mac, cp_mac, 0x10000, &c), -EINVAL);
	/* Parser: another version, a cut header, a cut MSDU */
	memcpy(buf, cnm_frame, sizeof(cnm_frame));
	buf[14] = 0x10;
	CHECK_EQ(wire_parse_cnm(buf + 14, 88, &got), -EPROTO);
	buf[14] = 0x0f;                 /* reserved bits: ignored */
	CHECK_EQ(wire_parse_cnm(buf + 14, 88, &got), 0);
	CHECK_EQ(got.qntz_fb, 21);
	CHECK_EQ(wire_parse_cnm(cnm_frame + 14, 23, &got), -EINVAL);
	CHECK_EQ(wire_parse_cnm(cnm_frame + 14, 87, &got), -EINVAL);
	CHECK_EQ(wire_parse_cnm(cnm_frame + 14, 1, &got), -EINVAL);
}

static void test_cnp_round_trip(void)
{
	const struct wire_cnp c = { .flow = 7, .seq = 0x01020304, .marked = 3 };
	struct wire_cnp got;
	const uint8_t *body;
	struct eth_info ei;
	uint8_t buf[64];
	size_t blen;

	CHECK_EQ(sizeof(struct l2cc_cnp), 12);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_cnp(buf, sizeof(buf), src_mac, dst_mac, &c), 60);
	CHECK_MEM(buf, cnp_frame, sizeof(cnp_frame));
	CHECK_EQ(buf[60], 0xaa);
	CHECK_EQ(wire_build_cnp(buf, 59, src_mac, dst_mac, &c), -ENOSPC);

	CHECK_EQ(wire_parse_eth(cnp_frame, 60, &ei), 0);
	CHECK_EQ(ei.ethertype, L2CC_ETH_P_CTRL);
	CHECK(!wire_is_multicast(ei.dst));
	CHECK_EQ(wire_parse_ctrl(cnp_frame + 14, 46, &body, &blen), L2CC_CTRL_CNP);
	CHECK_EQ(blen, 12);
	memset(&got, 0x55, sizeof(got));
	CHECK_EQ(wire_parse_cnp(body, blen, &got), 0);
	CHECK_EQ(got.flow, 7);
	CHECK_EQ(got.seq, 0x01020304);
	CHECK_EQ(got.marked, 3);

	/* Reserved is ignored on receipt; a longer body is accepted. */
	memcpy(buf, cnp_frame, 60);
	buf[20] = 0xff;
	CHECK_EQ(wire_parse_cnp(buf + 18, 40, &got), 0);
	CHECK_EQ(got.marked, 3);
}

static void test_ack_round_trip(void)
{
	const struct wire_ack a = { .flow = 7, .flags = L2CC_ACK_ECE,
				    .cum_seq = 0xffffffff, .frames = 16 };
	struct wire_ack got;
	const uint8_t *body;
	uint32_t um, m;
	uint8_t buf[64];
	size_t blen;

	CHECK_EQ(sizeof(struct l2cc_ack), 12);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(wire_build_ack(buf, sizeof(buf), src_mac, dst_mac, &a), 60);
	CHECK_MEM(buf, ack_frame, sizeof(ack_frame));
	CHECK_EQ(buf[60], 0xaa);
	CHECK_EQ(wire_build_ack(buf, 59, src_mac, dst_mac, &a), -ENOSPC);

	CHECK_EQ(wire_parse_ctrl(ack_frame + 14, 46, &body, &blen), L2CC_CTRL_ACK);
	CHECK_EQ(blen, 12);
	memset(&got, 0x55, sizeof(got));
	CHECK_EQ(wire_parse_ack(body, blen, &got), 0);
	CHECK_EQ(got.flow, 7);
	CHECK_EQ(got.flags, L2CC_ACK_ECE);
	CHECK_EQ(got.cum_seq, 0xffffffff);
	CHECK_EQ(got.frames, 16);

	/* 16 frames, some marked: 15 unmarked and one marked */
	wire_ack_count(&got, &um, &m);
	CHECK_EQ(um, 15);
	CHECK_EQ(m, 1);
	got.flags = 0;
	wire_ack_count(&got, &um, &m);
	CHECK_EQ(um, 16);
	CHECK_EQ(m, 0);
	/* One frame, marked: 0 + 1 */
	got.flags = L2CC_ACK_ECE;
	got.frames = 1;
	wire_ack_count(&got, &um, &m);
	CHECK_EQ(um, 0);
	CHECK_EQ(m, 1);

	/* A repeated cumulative ACK covering no new frame is legal without ECE. */
	{
		const struct wire_ack dup = { .flow = 7, .cum_seq = 5, .frames = 0 };

		CHECK_EQ(wire_build_ack(buf, sizeof(buf), src_mac, dst_mac, &dup), 60);
		CHECK_EQ(wire_parse_ack(buf + 18, 12, &got), 0);
		CHECK_EQ(got.frames, 0);
		CHECK_EQ(got.cum_seq, 5);
	}
}

static void test_cnp_ack_invalid(void)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct wire_cnp c = { .flow = 1, .seq = 1, .marked = 0 };
	struct wire_ack a = { .flow = 1, .flags = L2CC_ACK_ECE, .frames = 0 };
	uint8_t f[60];
	uint8_t buf[64];
	int n;

	/* Builders refuse what decoders would reject, and group destinations. */
	CHECK_EQ(wire_build_cnp(buf, sizeof(buf), src_mac, dst_mac, &c), -EINVAL);
	CHECK_EQ(wire_build_ack(buf, sizeof(buf), src_mac, dst_mac, &a), -EINVAL);
	c.marked = 1;
	a.frames = 1;
	CHECK_EQ(wire_build_cnp(buf, sizeof(buf), bcast, dst_mac, &c), -EINVAL);
	CHECK_EQ(wire_build_ack(buf, sizeof(buf), wire_macctrl_da, dst_mac, &a), -EINVAL);

	/* Truncated bodies: l2cc CNP / ACK [Malformed Packet], 0..11 bytes */
	for (n = 0; n < 12; n++) {
		struct wire_cnp gc;
		struct wire_ack ga;

		CHECK_EQ(wire_parse_cnp(cnp_frame + 18, n, &gc), -EINVAL);
		CHECK_EQ(wire_parse_ack(ack_frame + 18, n, &ga), -EINVAL);
	}
	/* Header says 12, frame ends after 11 bytes of body */
	{
		const uint8_t *body;
		size_t blen;

		CHECK_EQ(wire_parse_ctrl(cnp_frame + 14, 15, &body, &blen), -EINVAL);
	}
	/* l2cc CNP, Marked: 0 */
	memcpy(f, cnp_frame, sizeof(f));
	f[29] = 0;
	{
		struct wire_cnp gc;

		CHECK_EQ(wire_parse_cnp(f + 18, 12, &gc), -EINVAL);
	}
	/* l2cc ACK, Flags: ECE, Frames: 0 */
	memcpy(f, ack_frame, sizeof(f));
	f[29] = 0;
	{
		struct wire_ack ga;

		CHECK_EQ(wire_parse_ack(f + 18, 12, &ga), -EINVAL);
		/* unknown flag bits are kept (no ECE, so frames 0 is fine) */
		f[20] = 0x80;
		CHECK_EQ(wire_parse_ack(f + 18, 12, &ga), 0);
		CHECK_EQ(ga.flags, 0x80);
	}
}

int main(void)
{
	RUN(test_parse_untagged);
	RUN(test_parse_8021q);
	RUN(test_parse_qinq);
	RUN(test_parse_three_tags);
	RUN(test_parse_runt_and_cut_tag);
	RUN(test_link_local);
	RUN(test_build_pause);
	RUN(test_build_pause_zero);
	RUN(test_build_pfc);
	RUN(test_parse_pause);
	RUN(test_parse_pfc);
	RUN(test_macctrl_truncated);
	RUN(test_macctrl_unknown_opcode);
	RUN(test_quanta_to_ns);
	RUN(test_credit_round_trip);
	RUN(test_credit_longer_body);
	RUN(test_ctrl_padding_allowed);
	RUN(test_credit_truncated);
	RUN(test_credit_bad_version);
	RUN(test_credit_bad_unit);
	RUN(test_credit_bad_sent_unit);
	RUN(test_credit_sent_unit_none);
	RUN(test_credit_length_too_large);
	RUN(test_tag_insert_untagged);
	RUN(test_tag_insert_8021q);
	RUN(test_tag_insert_qinq);
	RUN(test_tag_strip_round_trip);
	RUN(test_tag_insert_errors);
	RUN(test_tag_strip_errors);
	RUN(test_tag_set_fecn);
	RUN(test_cnp_round_trip);
	RUN(test_ack_round_trip);
	RUN(test_cnp_ack_invalid);
	RUN(test_l2ci_round_trip);
	RUN(test_l2ci_invalid);
	RUN(test_l2ci_transit);
	RUN(test_tcp_pure_ack);
	RUN(test_cnm_round_trip);
	RUN(test_cnm_vlan_and_short);
	RUN(test_cnm_invalid);
	return check_summary();
}
