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
	return check_summary();
}
