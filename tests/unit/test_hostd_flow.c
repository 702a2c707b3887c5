// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for hostd's flows (hostd/flow.c): classification on annotated raw
 * frames for each granularity, the flow table (ids, stale ids, the default
 * flow, a full table, expiry) and the per-flow queues. The churn test drives
 * 10,000+ flows with a fixed-seed PRNG against a deliberately naive model (flat
 * arrays, one row per possible key) and checks after every operation.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
/* Relative path: the Makefile's include path has no -Ihostd. */
#include "../../hostd/flow.h"


/* Classify a copy of exactly len bytes: a read past len lands outside the
 * allocation, where ASan (make fuzz builds, or -fsanitize=address) sees it. */
static int classify(enum flow_granularity g, const uint8_t *frame, uint32_t len,
		    struct flow_key *k)
{
	uint8_t *copy = malloc(len ? len : 1);
	int ret;

	memcpy(copy, frame, len);
	ret = flow_key_from_frame(g, copy, len, k);
	free(copy);
	return ret;
}

static const uint8_t mac_h2[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t ip_10_0_0_1[4] = { 10, 0, 0, 1 };
static const uint8_t ip_10_0_0_2[4] = { 10, 0, 0, 2 };
static const uint8_t ip6_db8_1[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t ip6_db8_2[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x02 };

/* ---- raw frames ----------------------------------------------------------- */

/* Ethernet II, 02:00:00:00:00:01 -> 02:00:00:00:00:02, IPv4 10.0.0.1 -> 10.0.0.2,
 * TCP 50000 -> 5201 (iperf3), SYN. */
static const uint8_t f_ipv4_tcp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,     /* dst */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,     /* src */
	0x08, 0x00,                             /* type IPv4 */
	0x45, 0x00, 0x00, 0x28,                 /* v4, IHL 5, tos 0, total length 40 */
	0x12, 0x34, 0x40, 0x00,                 /* id 0x1234, DF, fragment offset 0 */
	0x40, 0x06, 0x00, 0x00,                 /* ttl 64, protocol TCP, checksum */
	0x0a, 0x00, 0x00, 0x01,                 /* src 10.0.0.1 */
	0x0a, 0x00, 0x00, 0x02,                 /* dst 10.0.0.2 */
	0xc3, 0x50, 0x14, 0x51,                 /* sport 50000, dport 5201 */
	0x00, 0x00, 0x00, 0x01,                 /* seq */
	0x00, 0x00, 0x00, 0x00,                 /* ack */
	0x50, 0x02, 0xff, 0xff,                 /* data offset 5, SYN, window */
	0x00, 0x00, 0x00, 0x00,                 /* checksum, urgent */
};

/* IPv4 with a 4-byte option (IHL 6: the ports must be read after it),
 * 10.0.0.1 -> 10.0.0.2, UDP 5353 -> 53. */
static const uint8_t f_ipv4_udp_opt[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x46, 0x00, 0x00, 0x24,                 /* v4, IHL 6, total length 36 */
	0x00, 0x01, 0x00, 0x00,                 /* id 1, no flags, offset 0 */
	0x40, 0x11, 0x00, 0x00,                 /* ttl 64, protocol UDP */
	0x0a, 0x00, 0x00, 0x01,
	0x0a, 0x00, 0x00, 0x02,
	0x01, 0x01, 0x01, 0x01,                 /* options: 4 x NOP */
	0x14, 0xe9, 0x00, 0x35,                 /* sport 5353, dport 53 */
	0x00, 0x08, 0x00, 0x00,                 /* UDP length 8, checksum */
};

/* IPv6 2001:db8::1 -> 2001:db8::2, UDP 40000 -> 4791 (RoCEv2). */
static const uint8_t f_ipv6_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,                             /* type IPv6 */
	0x60, 0x00, 0x00, 0x00,                 /* v6, traffic class 0, flow label 0 */
	0x00, 0x08, 0x11, 0x40,                 /* payload 8, next header UDP, hop limit 64 */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, /* src */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, /* dst */
	0x9c, 0x40, 0x12, 0xb7,                 /* sport 40000, dport 4791 */
	0x00, 0x08, 0x00, 0x00,
};

/* IPv6 with a hop-by-hop options header (8 bytes) before UDP 40000 -> 4791. */
static const uint8_t f_ipv6_hbh_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x00, 0x40,                 /* payload 16, next header HBH (0) */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	0x11, 0x00, 0x01, 0x04,                 /* HBH: next UDP, length 0 (8 bytes), PadN */
	0x00, 0x00, 0x00, 0x00,
	0x9c, 0x40, 0x12, 0xb7,                 /* sport 40000, dport 4791 */
	0x00, 0x08, 0x00, 0x00,
};

/* IPv6 with an Authentication Header (RFC 4302: length 4 = (4 + 2) x 4 = 24
 * bytes, unlike the 8-byte units of other extension headers) before UDP. */
static const uint8_t f_ipv6_ah_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00,
	0x00, 0x20, 0x33, 0x40,                 /* payload 32, next header AH (51) */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	0x11, 0x04, 0x00, 0x00,                 /* AH: next UDP, length 4, reserved */
	0x00, 0x00, 0x10, 0x01,                 /* SPI */
	0x00, 0x00, 0x00, 0x07,                 /* sequence number */
	0x11, 0x11, 0x11, 0x11,                 /* ICV (12 bytes) */
	0x22, 0x22, 0x22, 0x22,
	0x33, 0x33, 0x33, 0x33,
	0x9c, 0x40, 0x12, 0xb7,                 /* sport 40000, dport 4791 */
	0x00, 0x08, 0x00, 0x00,
};

/* A destination options header that claims 16 bytes (length 1) before ICMPv6,
 * in a frame that ends after 8 of them: too short, though ICMPv6 has no ports. */
static const uint8_t f_ipv6_dopt_cut[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x3c, 0x40,                 /* payload 16, next header Dest Opts (60) */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	0x3a, 0x01, 0x01, 0x04,                 /* next ICMPv6, length 1 (16 bytes), PadN */
	0x00, 0x00, 0x00, 0x00,                 /* ... the frame ends here */
};

/* IPv6 fragment header, offset 1448 (not the first fragment), next UDP:
 * the bytes after it are payload, not ports. */
static const uint8_t f_ipv6_frag[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd,
	0x60, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x2c, 0x40,                 /* payload 16, next header Fragment (44) */
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
	0x11, 0x00, 0x0b, 0x50,                 /* next UDP, offset 181 (x8 = 1448), M=0 */
	0xde, 0xad, 0xbe, 0xef,                 /* identification */
	0xaa, 0xbb, 0xcc, 0xdd,                 /* payload */
	0xee, 0xff, 0x00, 0x11,
};

/* 802.1Q tag PCP 5, VID 10, then IPv4 10.0.0.1 -> 10.0.0.2 UDP 1000 -> 2000. */
static const uint8_t f_vlan_pcp5[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00, 0xa0, 0x0a,                 /* TPID 8100, TCI: PCP 5, DEI 0, VID 10 */
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x1c,                 /* v4, IHL 5, total length 28 */
	0x00, 0x02, 0x00, 0x00,
	0x40, 0x11, 0x00, 0x00,                 /* UDP */
	0x0a, 0x00, 0x00, 0x01,
	0x0a, 0x00, 0x00, 0x02,
	0x03, 0xe8, 0x07, 0xd0,                 /* sport 1000, dport 2000 */
	0x00, 0x08, 0x00, 0x00,
};

/* ARP request who-has 10.0.0.2 tell 10.0.0.1, to broadcast. */
static const uint8_t f_arp[] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06,                             /* type ARP */
	0x00, 0x01, 0x08, 0x00,                 /* htype Ethernet, ptype IPv4 */
	0x06, 0x04, 0x00, 0x01,                 /* hlen 6, plen 4, request */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x02,
};

/* IPv4 cut inside its header: 10 of 20 bytes. */
static const uint8_t f_ipv4_cut[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x28,
	0x12, 0x34, 0x40, 0x00,
	0x40, 0x06,                             /* ... ends after the protocol */
};

/* IPv4 UDP fragment: offset 185 (x8 = 1480), MF 0: the bytes after the header
 * are the middle of a datagram, and look like ports 0xaabb, 0xccdd. */
static const uint8_t f_ipv4_frag[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x00, 0x1c,
	0xbe, 0xef, 0x00, 0xb9,                 /* id 0xbeef, flags 0, offset 185 */
	0x40, 0x11, 0x00, 0x00,                 /* UDP */
	0x0a, 0x00, 0x00, 0x01,
	0x0a, 0x00, 0x00, 0x02,
	0xaa, 0xbb, 0xcc, 0xdd,                 /* payload */
	0x00, 0x00, 0x00, 0x00,
};

/* The first fragment of the same datagram (MF 1, offset 0) carries the ports. */
static const uint8_t f_ipv4_frag_first[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00,
	0x45, 0x00, 0x05, 0xdc,
	0xbe, 0xef, 0x20, 0x00,                 /* MF, offset 0 */
	0x40, 0x11, 0x00, 0x00,
	0x0a, 0x00, 0x00, 0x01,
	0x0a, 0x00, 0x00, 0x02,
	0x03, 0xe8, 0x07, 0xd0,                 /* sport 1000, dport 2000 */
	0x05, 0xc8, 0x00, 0x00,
};

/* ---- classification ------------------------------------------------------- */

static void check_ip4_key(const struct flow_key *k, uint8_t proto, uint16_t sport,
			  uint16_t dport)
{
	uint8_t zero[16] = { 0 };

	CHECK_EQ(k->type, FLOW_KEY_IP4);
	CHECK_EQ(k->proto, proto);
	CHECK_MEM(k->src, ip_10_0_0_1, 4);
	CHECK_MEM(k->dst, ip_10_0_0_2, 4);
	CHECK_MEM(k->src + 4, zero, 12);
	CHECK_MEM(k->dst + 4, zero, 12);
	CHECK_EQ(k->sport, sport);
	CHECK_EQ(k->dport, dport);
	CHECK_MEM(k->mac, zero, 6);
	CHECK_EQ(k->vid, 0);
}

static void test_key_ipv4_tcp(void)
{
	struct flow_key k;

	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_tcp, sizeof(f_ipv4_tcp), &k), 0);
	check_ip4_key(&k, 6, 50000, 5201);

	CHECK_EQ(classify(FLOW_BY_DST, f_ipv4_tcp, sizeof(f_ipv4_tcp), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_DST);
	CHECK_MEM(k.mac, mac_h2, 6);
	CHECK_EQ(k.vid, 0);
	CHECK_EQ(k.sport, 0);

	CHECK_EQ(classify(FLOW_BY_PRIO, f_ipv4_tcp, sizeof(f_ipv4_tcp), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_PRIO);
	CHECK_EQ(k.prio, 0);

	CHECK_EQ(classify((enum flow_granularity)7, f_ipv4_tcp, sizeof(f_ipv4_tcp), &k),
		 -EINVAL);
}

static void test_key_ipv4_udp_options(void)
{
	struct flow_key k;

	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_udp_opt, sizeof(f_ipv4_udp_opt), &k), 0);
	check_ip4_key(&k, 17, 5353, 53);
}

static void test_key_ipv6_udp(void)
{
	struct flow_key k, k2;

	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_udp, sizeof(f_ipv6_udp), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_IP6);
	CHECK_EQ(k.proto, 17);
	CHECK_MEM(k.src, ip6_db8_1, 16);
	CHECK_MEM(k.dst, ip6_db8_2, 16);
	CHECK_EQ(k.sport, 40000);
	CHECK_EQ(k.dport, 4791);

	/* The same connection behind a hop-by-hop header is the same flow. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_hbh_udp, sizeof(f_ipv6_hbh_udp), &k2), 0);
	CHECK_MEM(&k, &k2, sizeof(k));
	/* ... cut inside the extension header, or inside the ports: too short. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_hbh_udp, 14 + 40 + 6, &k2), -EINVAL);
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_hbh_udp, 14 + 40 + 8 + 3, &k2), -EINVAL);

	/* Behind AH, whose length counts 4-byte units. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_ah_udp, sizeof(f_ipv6_ah_udp), &k2), 0);
	CHECK_MEM(&k, &k2, sizeof(k));
	/* An extension header cut short fails even with no ports to read. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_dopt_cut, sizeof(f_ipv6_dopt_cut), &k2),
		 -EINVAL);
	CHECK_EQ(classify(FLOW_BY_DST, f_ipv6_dopt_cut, sizeof(f_ipv6_dopt_cut), &k2), 0);

	/* A later fragment: protocol from the fragment header, no ports. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_frag, sizeof(f_ipv6_frag), &k2), 0);
	CHECK_EQ(k2.type, FLOW_KEY_IP6);
	CHECK_EQ(k2.proto, 17);
	CHECK_EQ(k2.sport, 0);
	CHECK_EQ(k2.dport, 0);
	CHECK_MEM(k2.dst, ip6_db8_2, 16);

	/* The version nibble must say 6. */
	{
		uint8_t bad[sizeof(f_ipv6_udp)];

		memcpy(bad, f_ipv6_udp, sizeof(bad));
		bad[14] = 0x40;
		CHECK_EQ(classify(FLOW_BY_5TUPLE, bad, sizeof(bad), &k2), -EINVAL);
	}
}

static void test_key_vlan_pcp5(void)
{
	struct flow_key k;

	CHECK_EQ(classify(FLOW_BY_PRIO, f_vlan_pcp5, sizeof(f_vlan_pcp5), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_PRIO);
	CHECK_EQ(k.prio, 5);
	/* SL-level: the priority alone, nothing of the destination. */
	{
		uint8_t zero[6] = { 0 };

		CHECK_MEM(k.mac, zero, 6);
		CHECK_EQ(k.vid, 0);
	}

	CHECK_EQ(classify(FLOW_BY_DST, f_vlan_pcp5, sizeof(f_vlan_pcp5), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_DST);
	CHECK_MEM(k.mac, mac_h2, 6);
	CHECK_EQ(k.vid, 10);
	CHECK_EQ(k.prio, 0);

	/* 5-tuple looks through the tag. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_vlan_pcp5, sizeof(f_vlan_pcp5), &k), 0);
	check_ip4_key(&k, 17, 1000, 2000);

	/* The tag cut after its TCI: nothing can be classified. */
	CHECK_EQ(classify(FLOW_BY_PRIO, f_vlan_pcp5, 16, &k), -EINVAL);
	CHECK_EQ(classify(FLOW_BY_DST, f_vlan_pcp5, 16, &k), -EINVAL);
}

static void test_key_arp(void)
{
	struct flow_key k, kd;
	const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	/* Not IP: 5-tuple falls back to the destination key. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_arp, sizeof(f_arp), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_DST);
	CHECK_MEM(k.mac, bcast, 6);
	CHECK_EQ(k.proto, 0);
	CHECK_EQ(classify(FLOW_BY_DST, f_arp, sizeof(f_arp), &kd), 0);
	CHECK_MEM(&k, &kd, sizeof(k));
	CHECK_EQ(classify(FLOW_BY_PRIO, f_arp, sizeof(f_arp), &k), 0);
	CHECK_EQ(k.type, FLOW_KEY_PRIO);
	CHECK_EQ(k.prio, 0);
}

static void test_key_truncated(void)
{
	struct flow_key k;

	/* The IP header is cut: only 5-tuple needs it. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_cut, sizeof(f_ipv4_cut), &k), -EINVAL);
	CHECK_EQ(k.type, FLOW_KEY_DEFAULT);     /* no half-filled key */
	CHECK_EQ(classify(FLOW_BY_DST, f_ipv4_cut, sizeof(f_ipv4_cut), &k), 0);
	CHECK_MEM(k.mac, mac_h2, 6);
	CHECK_EQ(classify(FLOW_BY_PRIO, f_ipv4_cut, sizeof(f_ipv4_cut), &k), 0);

	/* Every prefix of a TCP frame: Ethernet needs 14 bytes, the 5-tuple 14 +
	 * 20 + 4 (the ports); from there on the key is complete. */
	for (uint32_t len = 0; len <= sizeof(f_ipv4_tcp); len++) {
		int want_dst = len < 14 ? -EINVAL : 0;
		int want_5t = len < 14 + 20 + 4 ? -EINVAL : 0;
		int r_dst = classify(FLOW_BY_DST, f_ipv4_tcp, len, &k);
		int r_prio = classify(FLOW_BY_PRIO, f_ipv4_tcp, len, &k);
		int r_5t = classify(FLOW_BY_5TUPLE, f_ipv4_tcp, len, &k);

		if (r_dst != want_dst || r_prio != want_dst || r_5t != want_5t)
			printf("    prefix of %u bytes\n", len);
		CHECK_EQ(r_dst, want_dst);
		CHECK_EQ(r_prio, want_dst);
		CHECK_EQ(r_5t, want_5t);
		if (!r_5t)
			check_ip4_key(&k, 6, 50000, 5201);
	}
	/* Every prefix of an IPv6 HBH frame: 14 + 40 + 8 + 4. */
	for (uint32_t len = 0; len <= sizeof(f_ipv6_hbh_udp); len++) {
		int want = len < 14 + 40 + 8 + 4 ? -EINVAL : 0;

		CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv6_hbh_udp, len, &k), want);
	}

	/* Malformed IPv4: version 6 in an IPv4 frame, IHL below 5, IHL past the end. */
	{
		uint8_t bad[sizeof(f_ipv4_tcp)];

		memcpy(bad, f_ipv4_tcp, sizeof(bad));
		bad[14] = 0x65;
		CHECK_EQ(classify(FLOW_BY_5TUPLE, bad, sizeof(bad), &k), -EINVAL);
		bad[14] = 0x44;
		CHECK_EQ(classify(FLOW_BY_5TUPLE, bad, sizeof(bad), &k), -EINVAL);
		bad[14] = 0x4f;         /* 60-byte header in a 40-byte packet */
		CHECK_EQ(classify(FLOW_BY_5TUPLE, bad, sizeof(bad), &k), -EINVAL);
	}
}

static void test_key_ipv4_fragment(void)
{
	struct flow_key k, kfirst;

	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_frag, sizeof(f_ipv4_frag), &k), 0);
	check_ip4_key(&k, 17, 0, 0);
	/* The header alone is enough for a later fragment: it has no ports. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_frag, 14 + 20, &k), 0);
	check_ip4_key(&k, 17, 0, 0);

	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_frag_first, sizeof(f_ipv4_frag_first),
			  &kfirst), 0);
	check_ip4_key(&kfirst, 17, 1000, 2000);
	/* The first fragment needs its ports. */
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_frag_first, 14 + 20 + 2, &k), -EINVAL);
	/* A key left half-filled (addresses, no ports) would be a wrong flow. */
	CHECK_EQ(k.type, FLOW_KEY_DEFAULT);
	CHECK_EQ(k.proto, 0);
}

/* Keys that differ only in the field a granularity ignores are one flow. */
static void test_key_granularity_merges(void)
{
	struct flow_key a, b;
	uint8_t f2[sizeof(f_ipv4_tcp)];

	memcpy(f2, f_ipv4_tcp, sizeof(f2));
	f2[14 + 20 + 1] ^= 0x01;                /* another source port */
	CHECK_EQ(classify(FLOW_BY_DST, f_ipv4_tcp, sizeof(f_ipv4_tcp), &a), 0);
	CHECK_EQ(classify(FLOW_BY_DST, f2, sizeof(f2), &b), 0);
	CHECK_MEM(&a, &b, sizeof(a));
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f_ipv4_tcp, sizeof(f_ipv4_tcp), &a), 0);
	CHECK_EQ(classify(FLOW_BY_5TUPLE, f2, sizeof(f2), &b), 0);
	CHECK(memcmp(&a, &b, sizeof(a)) != 0);
	/* Different destinations, same priority: one SL-level flow. */
	CHECK_EQ(classify(FLOW_BY_PRIO, f_ipv4_tcp, sizeof(f_ipv4_tcp), &a), 0);
	CHECK_EQ(classify(FLOW_BY_PRIO, f_arp, sizeof(f_arp), &b), 0);
	CHECK_MEM(&a, &b, sizeof(a));
}

/* ---- table ---------------------------------------------------------------- */

#define NFRAMES 4096
static struct flow_frame frame_meta[NFRAMES];

static struct flow_table_config base_cfg(uint32_t max_flows, uint64_t idle_ns)
{
	return (struct flow_table_config){
		.max_flows = max_flows,
		.idle_ns = idle_ns,
		.queue_limit = 6000,
		.nframes = NFRAMES,
		.frames = frame_meta,
	};
}

static struct flow_key key_n(uint32_t n)
{
	struct flow_key k;

	memset(&k, 0, sizeof(k));
	k.type = FLOW_KEY_IP4;
	k.proto = 17;
	k.src[0] = 10;
	k.src[3] = n & 0xff;
	k.dst[0] = n >> 24;
	k.dst[1] = n >> 16;
	k.dst[2] = n >> 8;
	k.dst[3] = n;
	k.sport = 1000 + (n % 7);
	k.dport = 4791;
	return k;
}

static uint32_t key_index(const struct flow_key *k)
{
	return (uint32_t)k->dst[0] << 24 | k->dst[1] << 16 | k->dst[2] << 8 | k->dst[3];
}

static void test_table_create_lookup_remove(void)
{
	struct flow_table_config cfg = base_cfg(16, 1000);
	struct flow_table_stats st;
	struct flow_table *t;
	struct flow *a, *a2, *b;
	struct flow_key ka = key_n(1), kb = key_n(2), kd = { 0 };

	/* Bad configurations. */
	cfg.max_flows = 1;
	CHECK_EQ(flow_table_create(&t, &cfg), -EINVAL);
	cfg.max_flows = FLOW_MAX_FLOWS + 1;
	CHECK_EQ(flow_table_create(&t, &cfg), -EINVAL);
	cfg = base_cfg(16, 1000);
	cfg.queue_limit = 0;
	CHECK_EQ(flow_table_create(&t, &cfg), -EINVAL);
	cfg = base_cfg(16, 1000);
	cfg.nframes = 0;
	CHECK_EQ(flow_table_create(&t, &cfg), -EINVAL);
	/* A table without queues (no frames) is fine; it queues nothing. */
	cfg = base_cfg(16, 1000);
	cfg.frames = NULL;
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_enqueue(t, flow_default(t), 0, 60), -EINVAL);
	flow_table_destroy(t);

	cfg = base_cfg(16, 1000);
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_table_max_flows(t), 16);
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.flows, 1);                  /* the default flow */
	CHECK(flow_default(t) == flow_by_id(t, FLOW_ID_DEFAULT));
	CHECK(flow_default(t)->in_use);

	CHECK(flow_lookup(t, &ka) == NULL);
	a = NULL;
	CHECK_EQ(flow_lookup_or_create(t, &ka, 100, &a), 1);
	CHECK(a != NULL);
	if (!a)
		goto out;
	CHECK(a->id != FLOW_ID_DEFAULT && a->id < 16);
	CHECK(a->in_use);
	CHECK_EQ(a->last_seen_ns, 100);
	CHECK_EQ(a->q.limit, 6000);
	CHECK(a->law_state == (void *)a->law_area);
	CHECK_MEM(&a->key, &ka, sizeof(ka));
	CHECK(flow_lookup(t, &ka) == a);
	CHECK(flow_by_id(t, a->id) == a);

	a2 = NULL;
	CHECK_EQ(flow_lookup_or_create(t, &ka, 200, &a2), 0);
	CHECK(a2 == a);
	CHECK_EQ(a->last_seen_ns, 200);

	b = NULL;
	CHECK_EQ(flow_lookup_or_create(t, &kb, 300, &b), 1);
	CHECK(b && b != a && b->id != a->id && b->id != FLOW_ID_DEFAULT);
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.flows, 3);
	CHECK_EQ(st.created, 2);

	/* The default flow has no key and is not for lookups. */
	CHECK_EQ(flow_lookup_or_create(t, &kd, 300, &a2), -EINVAL);
	CHECK(flow_lookup(t, &kd) == NULL);
	CHECK_EQ(flow_remove(t, flow_default(t)), -EPERM);

	/* A flow with frames waiting is not removed under them. */
	CHECK_EQ(flow_enqueue(t, b, 3, 100), 0);
	CHECK_EQ(flow_remove(t, b), -EBUSY);
	CHECK(flow_lookup(t, &kb) == b);
	CHECK_EQ(flow_dequeue(t, b, 400, NULL), 3);

	{
		uint16_t aid = a->id;

		CHECK_EQ(flow_remove(t, a), 0);
		CHECK(flow_lookup(t, &ka) == NULL);
		CHECK(flow_by_id(t, aid) == NULL);
		CHECK_EQ(flow_remove(t, a), -ENOENT);
		CHECK(flow_lookup(t, &kb) == b);
	}
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.flows, 2);
	CHECK_EQ(st.removed, 1);
out:
	flow_table_destroy(t);
}

static void test_table_ids_stable(void)
{
	struct flow_table_config cfg = base_cfg(256, 0);
	struct flow_table *t;
	struct flow *f[200];
	uint16_t id[200];
	bool seen[256] = { false };

	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	for (uint32_t i = 0; i < 100; i++) {
		struct flow_key k = key_n(i);

		f[i] = NULL;
		CHECK_EQ(flow_lookup_or_create(t, &k, i, &f[i]), 1);
		if (!f[i])
			goto out;
		id[i] = f[i]->id;
		CHECK(id[i] > 0 && id[i] < 256);
		CHECK(!seen[id[i]]);
		seen[id[i]] = true;
	}
	/* Remove every other flow: backward shifts move slots, never flows. */
	for (uint32_t i = 0; i < 100; i += 2)
		CHECK_EQ(flow_remove(t, f[i]), 0);
	for (uint32_t i = 100; i < 200; i++) {
		struct flow_key k = key_n(i);

		f[i] = NULL;
		CHECK_EQ(flow_lookup_or_create(t, &k, i, &f[i]), 1);
		if (!f[i])
			goto out;
		id[i] = f[i]->id;
	}
	for (uint32_t i = 1; i < 200; i += (i < 100 ? 2 : 1)) {
		struct flow_key k = key_n(i);
		struct flow *g = NULL;

		CHECK_EQ(flow_lookup_or_create(t, &k, 1000, &g), 0);
		CHECK(g == f[i]);
		CHECK(g && g->id == id[i]);
		CHECK(flow_by_id(t, id[i]) == f[i]);
	}
	/* All live ids distinct. */
	memset(seen, 0, sizeof(seen));
	for (uint32_t i = 1; i < 200; i += (i < 100 ? 2 : 1)) {
		CHECK(!seen[id[i]]);
		seen[id[i]] = true;
	}
out:
	flow_table_destroy(t);
}

/* What the daemon does with a CNP: only a flow that exists is touched. */
static int on_cnp(struct flow_table *t, uint16_t id)
{
	struct flow *f = flow_by_id(t, id);

	if (!f)
		return -ENOENT;
	f->cnt.cnp_in++;
	f->cnt.marks++;
	return 0;
}

static int snapshot_fn(void *ctx, struct flow *f)
{
	struct flow *copy = ctx;

	copy[f->id] = *f;
	return 0;
}

static void test_table_stale_ids(void)
{
	struct flow_table_config cfg = base_cfg(8, 0);
	struct flow_table *t;
	struct flow *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
	struct flow_key ka = key_n(1), kb = key_n(2), kc = key_n(3), kd = key_n(4), ke = key_n(5);
	struct flow before[8], after[8];
	uint16_t aid, agen;

	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &ka, 1, &a), 1);
	CHECK_EQ(flow_lookup_or_create(t, &kb, 1, &b), 1);
	CHECK_EQ(flow_lookup_or_create(t, &kc, 1, &c), 1);
	if (!a || !b || !c)
		goto out;
	aid = a->id;
	agen = a->gen;
	CHECK(flow_by_ref(t, aid, agen) == a);
	CHECK_EQ(on_cnp(t, aid), 0);
	CHECK_EQ(a->cnt.cnp_in, 1);
	CHECK_EQ(flow_remove(t, a), 0);

	/* A CNP for the removed flow, or for ids never used, changes nothing. */
	memset(before, 0, sizeof(before));
	memset(after, 0, sizeof(after));
	flow_foreach(t, snapshot_fn, before);
	CHECK_EQ(on_cnp(t, aid), -ENOENT);
	CHECK_EQ(on_cnp(t, 7), -ENOENT);
	CHECK_EQ(on_cnp(t, 8), -ENOENT);        /* beyond max_flows */
	CHECK_EQ(on_cnp(t, FLOW_ID_NONE), -ENOENT);
	flow_foreach(t, snapshot_fn, after);
	CHECK_MEM(before, after, sizeof(before));
	CHECK(flow_by_ref(t, aid, agen) == NULL);

	/* Ids come back oldest-freed first: 4 ids were never used, so the next
	 * four flows do not get a's id. */
	CHECK_EQ(flow_lookup_or_create(t, &kd, 2, &d), 1);
	CHECK(d && d->id != aid);
	{
		struct flow *x = NULL, *y = NULL, *z = NULL;
		struct flow_key kx = key_n(10), ky = key_n(11), kz = key_n(12);

		CHECK_EQ(flow_lookup_or_create(t, &kx, 2, &x), 1);
		CHECK_EQ(flow_lookup_or_create(t, &ky, 2, &y), 1);
		CHECK_EQ(flow_lookup_or_create(t, &kz, 2, &z), 1);
		CHECK(x && x->id != aid);
		CHECK(y && y->id != aid);
		CHECK(z && z->id != aid);
	}
	/* Now the only free id is a's: reused, with a new generation. */
	CHECK_EQ(flow_lookup_or_create(t, &ke, 3, &e), 1);
	if (!e)
		goto out;
	CHECK_EQ(e->id, aid);
	CHECK(e->gen != agen);
	CHECK(flow_by_id(t, aid) == e);
	CHECK(flow_by_ref(t, aid, agen) == NULL);       /* the old reference is stale */
	CHECK(flow_by_ref(t, aid, e->gen) == e);
	/* The reused id starts clean: nothing of a's counters. */
	CHECK_EQ(e->cnt.cnp_in, 0);
	CHECK_EQ(e->cnt.marks, 0);
	CHECK(flow_lookup(t, &ka) == NULL);
out:
	flow_table_destroy(t);
}

static void test_queue_fifo_and_bound(void)
{
	struct flow_table_config cfg = base_cfg(8, 0);
	struct flow_table *t;
	struct flow *a = NULL, *b = NULL;
	struct flow_key ka = key_n(1), kb = key_n(2);
	uint32_t len;

	cfg.queue_limit = 3000;
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &ka, 0, &a), 1);
	CHECK_EQ(flow_lookup_or_create(t, &kb, 0, &b), 1);
	if (!a || !b)
		goto out;

	CHECK_EQ(flow_head(a), FLOW_FRAME_NONE);
	CHECK_EQ(flow_dequeue(t, a, 0, &len), FLOW_FRAME_NONE);
	/* Interleave two flows on the shared next[] array. */
	CHECK_EQ(flow_enqueue(t, a, 5, 1000), 0);
	CHECK_EQ(flow_enqueue(t, b, 6, 1500), 0);
	CHECK_EQ(flow_enqueue(t, a, 9, 1000), 0);
	CHECK_EQ(flow_enqueue(t, b, 1, 1000), 0);
	CHECK_EQ(flow_enqueue(t, a, 2, 1000), 0);
	CHECK_EQ(a->q.bytes, 3000);
	CHECK_EQ(a->q.frames, 3);
	/* Exactly at the limit; one more byte does not fit. */
	CHECK_EQ(flow_enqueue(t, a, 3, 1), -ENOBUFS);
	CHECK_EQ(a->cnt.drops, 1);
	CHECK_EQ(a->cnt.drop_bytes, 1);
	CHECK_EQ(a->q.bytes, 3000);
	CHECK_EQ(a->q.frames, 3);
	CHECK_EQ(flow_enqueue(t, b, 3, 1), 0);  /* b has room: its own bound */
	CHECK_EQ(flow_enqueue(t, a, NFRAMES, 1), -EINVAL);

	CHECK_EQ(flow_head(a), 5);
	CHECK_EQ(flow_dequeue(t, a, 10, &len), 5);
	CHECK_EQ(len, 1000);
	CHECK_EQ(a->last_seen_ns, 10);
	CHECK_EQ(flow_enqueue(t, a, 7, 1000), 0);       /* room again */
	CHECK_EQ(flow_dequeue(t, a, 11, &len), 9);
	CHECK_EQ(flow_dequeue(t, a, 12, &len), 2);
	CHECK_EQ(flow_dequeue(t, a, 13, &len), 7);
	CHECK_EQ(len, 1000);
	CHECK_EQ(flow_dequeue(t, a, 14, &len), FLOW_FRAME_NONE);
	CHECK_EQ(a->q.bytes, 0);
	CHECK_EQ(a->q.frames, 0);
	CHECK_EQ(a->cnt.frames_in, 4);
	CHECK_EQ(a->cnt.bytes_in, 4000);
	CHECK_EQ(a->cnt.frames_out, 4);
	CHECK_EQ(a->cnt.bytes_out, 4000);

	CHECK_EQ(flow_dequeue(t, b, 20, &len), 6);
	CHECK_EQ(len, 1500);
	CHECK_EQ(flow_dequeue(t, b, 20, &len), 1);
	CHECK_EQ(len, 1000);
	CHECK_EQ(flow_dequeue(t, b, 20, &len), 3);
	CHECK_EQ(len, 1);
	CHECK_EQ(b->cnt.drops, 0);

	/* A frame bigger than the whole bound never fits; a per-flow limit. */
	CHECK_EQ(flow_enqueue(t, a, 4, 3001), -ENOBUFS);
	a->q.limit = 100;
	CHECK_EQ(flow_enqueue(t, a, 4, 101), -ENOBUFS);
	CHECK_EQ(flow_enqueue(t, a, 4, 100), 0);
	CHECK_EQ(a->cnt.drops, 3);

	/* The default flow queues like any other. */
	CHECK_EQ(flow_enqueue(t, flow_default(t), 8, 60), 0);
	CHECK_EQ(flow_dequeue(t, flow_default(t), 21, &len), 8);
out:
	flow_table_destroy(t);
}

/* A path's lanes (2 per priority): each FIFO, the highest first (McAlpine
 * 2005 §8), a priority's pure ACKs ahead of its data. */
static void test_queue_priorities(void)
{
	struct flow_table_config cfg = base_cfg(8, 0);
	struct flow_table *t;
	struct flow *a = NULL;
	struct flow_key ka = key_n(1);
	uint32_t len;

	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &ka, 0, &a), 1);
	if (!a)
		goto out;
	CHECK_EQ(flow_enqueue_lane(t, a, 1, 100, 4), 0);
	CHECK_EQ(flow_enqueue_lane(t, a, 2, 100, 4), 0);
	CHECK_EQ(flow_head(a), 1);
	CHECK_EQ(flow_enqueue_lane(t, a, 3, 200, 10), 0);
	CHECK_EQ(flow_head(a), 3);
	CHECK_EQ(flow_enqueue_lane(t, a, 4, 300, 6), 0);
	CHECK_EQ(flow_enqueue_lane(t, a, 5, 200, 10), 0);
	CHECK_EQ(flow_enqueue_lane(t, a, 6, 100, 16), -EINVAL);
	CHECK_EQ(a->q.frames, 5);
	CHECK_EQ(a->q.bytes, 900);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 3);
	CHECK_EQ(len, 200);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 5);
	/* A later higher one overtakes what waits below it. */
	CHECK_EQ(flow_enqueue_lane(t, a, 7, 100, 14), 0);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 7);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 4);
	CHECK_EQ(len, 300);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 1);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 2);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), FLOW_FRAME_NONE);
	CHECK_EQ(flow_head(a), FLOW_FRAME_NONE);
	CHECK_EQ(a->q.bytes, 0);
	CHECK_EQ(a->q.lmask, 0);
	/* A pure ACK (lane 2p + 1) goes ahead of its priority's data only. */
	CHECK_EQ(flow_enqueue_lane(t, a, 1, 1000, 4), 0);
	CHECK_EQ(flow_enqueue_lane(t, a, 2, 60, 5), 0);
	CHECK_EQ(flow_enqueue_lane(t, a, 3, 1000, 6), 0);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 3);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 2);
	CHECK_EQ(flow_dequeue(t, a, 1, &len), 1);
out:
	flow_table_destroy(t);
}

/* One SL's flow with two connections offering far more than it sends
 * (granularity prio, Gran 2011 §II): each departure frees one slot, and A
 * arrives first after it, three frames, then B one. First come, first
 * served (sub 0) hands A every slot; shared (flow_enqueue_sub), each gets
 * about half of what leaves, as an HCA serving its QPs in turn. Returns
 * B's share of 2000 departures. */
static double sub_share_of_b(struct flow_table *t, struct flow *f, bool share)
{
	uint32_t ka = share ? 0x1111 : 0, kb = share ? 0x2222 : 0, next = 0, n_b = 0;
	uint32_t nfr = NFRAMES / 2, len, fr, i, j;
	bool is_b[NFRAMES / 2] = { false };

	for (i = 0; i < 2000; i++) {
		for (j = 0; j < 4; j++) {
			fr = next++ % nfr;
			if (flow_enqueue_sub(t, f, fr, 1000, 0, j < 3 ? ka : kb) == 0)
				is_b[fr] = j == 3;
			else
				next--;         /* refused: its index stays free */
		}
		fr = flow_dequeue(t, f, i, &len);
		if (fr == FLOW_FRAME_NONE)
			break;
		n_b += is_b[fr];
	}
	while (flow_dequeue(t, f, i, &len) != FLOW_FRAME_NONE)
		;
	return n_b / 2000.0;
}

static void test_queue_subflow_share(void)
{
	struct flow_table_config cfg = base_cfg(8, 0);
	struct flow_table *t;
	struct flow *f = NULL;
	struct flow_key k = key_n(1);
	uint64_t sum;
	uint32_t len, i;
	double b;

	cfg.queue_limit = 20000;
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &k, 0, &f), 1);
	if (!f)
		goto out;
	/* Alone a connection fills half the queue: 10 frames of 1000 bytes
	 * (10000 + 1000 > 10000 free refuses the 11th), counted as drops. */
	for (i = 0; i < 20; i++)
		flow_enqueue_sub(t, f, i, 1000, 0, 7);
	CHECK_EQ(f->q.frames, 10);
	CHECK_EQ(f->cnt.drops, 10);
	CHECK_EQ(flow_enqueue_sub(t, f, 30, 1000, 0, 7), -EDQUOT);
	CHECK_EQ(f->q.sub_key[0], 7);
	CHECK_EQ(f->q.sub_bytes[0], 10000);
	/* Another connection gets in beside it, up to the free bytes. */
	CHECK_EQ(flow_enqueue_sub(t, f, 31, 1000, 0, 8), 0);
	CHECK_EQ(f->q.sub_bytes[1], 1000);
	/* Frames without a connection count in no slot; a frame too long for
	 * flow_frame is refused. */
	CHECK_EQ(flow_enqueue_sub(t, f, 32, 500, 0, 0), 0);
	CHECK_EQ(flow_enqueue_sub(t, f, 33, 70000, 0, 8), -EINVAL);
	sum = 0;
	for (i = 0; i < FLOW_SUBS; i++)
		sum += f->q.sub_bytes[i];
	CHECK_EQ(sum + 500, f->q.bytes);
	while (flow_dequeue(t, f, 1, &len) != FLOW_FRAME_NONE)
		;
	for (i = 0; i < FLOW_SUBS; i++)
		CHECK_EQ(f->q.sub_bytes[i], 0);
	/* Connections beyond FLOW_SUBS - 1 share the last slot. */
	for (i = 0; i < FLOW_SUBS + 2; i++)
		CHECK_EQ(flow_enqueue_sub(t, f, i, 100, 0, 100 + i), 0);
	for (i = 0; i < FLOW_SUBS - 1; i++)
		CHECK_EQ(f->q.sub_bytes[i], 100);
	CHECK_EQ(f->q.sub_bytes[FLOW_SUBS - 1], 300);
	while (flow_dequeue(t, f, 1, &len) != FLOW_FRAME_NONE)
		;
	/* The two connections: first come, first served starves B; shared, the
	 * two get half each (within a frame's rounding: 0.465 in a queue of 21). */
	b = sub_share_of_b(t, f, false);
	CHECK(b < 0.01);
	b = sub_share_of_b(t, f, true);
	CHECK(b > 0.49 && b < 0.51);
	f->q.limit = 21000;
	b = sub_share_of_b(t, f, true);
	CHECK(b > 0.45 && b < 0.55);
	for (i = 0; i < FLOW_SUBS; i++)
		CHECK_EQ(f->q.sub_bytes[i], 0);
out:
	flow_table_destroy(t);
}

struct removed_log {
	uint32_t n;
	uint16_t ids[64];
};

static void log_remove(void *ctx, struct flow *f)
{
	struct removed_log *l = ctx;

	CHECK(f->in_use);       /* called before the flow goes */
	if (l->n < 64)
		l->ids[l->n] = f->id;
	l->n++;
}

static void test_expire(void)
{
	struct flow_table_config cfg = base_cfg(16, 1000);
	struct removed_log log = { 0 };
	struct flow_table_stats st;
	struct flow_table *t;
	struct flow *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	struct flow_key ka = key_n(1), kb = key_n(2), kc = key_n(3), kd = key_n(4);

	cfg.on_remove = log_remove;
	cfg.ctx = &log;
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &ka, 0, &a), 1);
	CHECK_EQ(flow_lookup_or_create(t, &kb, 0, &b), 1);     /* will hold a frame */
	CHECK_EQ(flow_lookup_or_create(t, &kc, 0, &c), 1);     /* pinned */
	CHECK_EQ(flow_lookup_or_create(t, &kd, 500, &d), 1);   /* seen later */
	if (!a || !b || !c || !d)
		goto out;
	CHECK_EQ(flow_enqueue(t, b, 0, 100), 0);
	c->pinned = true;

	/* Idle exactly idle_ns is still alive (as the FDB's aging). */
	CHECK_EQ(flow_expire(t, 1000, 0), 0);
	CHECK(flow_lookup(t, &ka) == a);
	CHECK_EQ(flow_expire(t, 1001, 0), 1);
	CHECK(flow_lookup(t, &ka) == NULL);
	CHECK_EQ(log.n, 1);
	CHECK_EQ(log.ids[0], a->id);
	CHECK(flow_lookup(t, &kb) == b);
	CHECK(flow_lookup(t, &kc) == c);
	CHECK(flow_lookup(t, &kd) == d);
	CHECK(flow_default(t)->in_use);         /* never expires */

	/* b drains at 1200: its clock restarts there; d sees a frame then. */
	CHECK_EQ(flow_dequeue(t, b, 1200, NULL), 0);
	CHECK_EQ(flow_lookup_or_create(t, &kd, 1200, &d), 0);
	CHECK_EQ(flow_expire(t, 2100, 0), 0);
	CHECK(flow_lookup(t, &kb) == b);
	CHECK_EQ(flow_expire(t, 2201, 0), 2);   /* b and d */
	CHECK(flow_lookup(t, &kb) == NULL);
	CHECK(flow_lookup(t, &kd) == NULL);
	CHECK(flow_lookup(t, &kc) == c);
	c->pinned = false;
	CHECK_EQ(flow_expire(t, 2201, 0), 1);
	CHECK(flow_lookup(t, &kc) == NULL);
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.expired, 4);
	CHECK_EQ(st.removed, 4);
	CHECK_EQ(st.flows, 1);
	CHECK_EQ(log.n, 4);

	/* Bounded work: 15 keyed ids, 4 per call: every idle flow is gone after
	 * ceil(15 / 4) = 4 calls, and no call removes more than it examined. */
	{
		uint32_t total = 0, r;

		for (uint32_t i = 0; i < 15; i++) {
			struct flow_key k = key_n(100 + i);
			struct flow *f;

			CHECK_EQ(flow_lookup_or_create(t, &k, 3000, &f), 1);
		}
		for (int call = 0; call < 4; call++) {
			r = flow_expire(t, 5000, 4);
			CHECK(r <= 4);
			total += r;
		}
		CHECK_EQ(total, 15);
		flow_table_get_stats(t, &st);
		CHECK_EQ(st.flows, 1);
	}
	flow_table_destroy(t);

	/* idle_ns 0: nothing ever expires. */
	cfg = base_cfg(16, 0);
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	CHECK_EQ(flow_lookup_or_create(t, &ka, 0, &a), 1);
	CHECK_EQ(flow_expire(t, UINT64_MAX / 2, 0), 0);
	CHECK(flow_lookup(t, &ka) != NULL);
out:
	flow_table_destroy(t);
}

static void test_full_table(void)
{
	struct flow_table_config cfg = base_cfg(8, 100);
	struct flow_table_stats st;
	struct flow_table *t;
	struct flow *f[7] = { NULL }, *x = NULL;
	struct flow_key kx = key_n(99);

	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	/* 8 ids: the default flow and 7 keyed flows. */
	for (uint32_t i = 0; i < 7; i++) {
		struct flow_key k = key_n(i);

		CHECK_EQ(flow_lookup_or_create(t, &k, i, &f[i]), 1);
	}
	CHECK_EQ(flow_lookup_or_create(t, &kx, 10, &x), -ENOSPC);
	CHECK(x == NULL);
	CHECK(flow_lookup(t, &kx) == NULL);
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.full, 1);
	CHECK_EQ(st.flows, 8);
	/* Existing flows are still found (and refreshed) in a full table. */
	{
		struct flow_key k = key_n(3);
		struct flow *g = NULL;

		CHECK_EQ(flow_lookup_or_create(t, &k, 150, &g), 0);
		CHECK(g == f[3]);
	}
	/* The caller's fallback: the shared default flow. */
	CHECK_EQ(flow_enqueue(t, flow_default(t), 0, 60), 0);
	CHECK_EQ(flow_default(t)->cnt.frames_in, 1);

	/* Expiry makes room: all but f[3] (refreshed at 150) are idle at 200. */
	CHECK_EQ(flow_expire(t, 200, 0), 6);
	CHECK_EQ(flow_lookup_or_create(t, &kx, 200, &x), 1);
	CHECK(x != NULL);
	{
		struct flow_key k3 = key_n(3);

		CHECK(flow_lookup(t, &k3) == f[3]);
	}
	flow_table_get_stats(t, &st);
	CHECK_EQ(st.flows, 3);
	CHECK_EQ(st.full, 1);
	flow_table_destroy(t);
}

static int count_fn(void *ctx, struct flow *f)
{
	uint32_t *c = ctx;

	/* Ascending ids: c[1] holds the last id seen + 1. */
	if (f->id + 1u <= c[1] && c[0])
		c[2]++;
	c[1] = f->id + 1u;
	c[0]++;
	return 0;
}

static int stop_fn(void *ctx, struct flow *f)
{
	uint32_t *n = ctx;

	return ++*n == 3 ? 42 : 0;
}

static int remove_self_fn(void *ctx, struct flow *f)
{
	struct flow_table *t = ctx;

	if (f->id != FLOW_ID_DEFAULT)
		CHECK_EQ(flow_remove(t, f), 0);
	return 0;
}

static void test_foreach(void)
{
	struct flow_table_config cfg = base_cfg(64, 0);
	struct flow_table *t;
	uint32_t c[3] = { 0, 0, 0 }, n = 0;

	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	for (uint32_t i = 0; i < 20; i++) {
		struct flow_key k = key_n(i);
		struct flow *f;

		CHECK_EQ(flow_lookup_or_create(t, &k, 0, &f), 1);
		if (i % 3 == 0)
			CHECK_EQ(flow_remove(t, f), 0);
	}
	CHECK_EQ(flow_foreach(t, count_fn, c), 0);
	CHECK_EQ(c[0], 1 + 20 - 7);
	CHECK_EQ(c[2], 0);
	CHECK_EQ(flow_foreach(t, stop_fn, &n), 42);
	CHECK_EQ(n, 3);
	CHECK_EQ(flow_foreach(t, remove_self_fn, t), 0);
	c[0] = c[1] = c[2] = 0;
	CHECK_EQ(flow_foreach(t, count_fn, c), 0);
	CHECK_EQ(c[0], 1);
	flow_table_destroy(t);
}

/* ---- churn against a model ------------------------------------------------ */

#define MQ 16   /* model queue capacity: limit 6000, frames >= 500 bytes -> <= 12 */

struct model_flow {
	bool present, pinned;
	uint16_t id, gen;
	uint64_t last_seen;
	uint32_t qn;
	uint32_t qframe[MQ], qlen[MQ];
	uint64_t qbytes;
};

struct model {
	struct model_flow *k;           /* [npool] */
	int32_t *owner;                 /* [max_flows]: pool index of the id's flow, -1 */
	uint16_t *last_gen;             /* [max_flows] */
	uint32_t count;                 /* keyed flows */
	uint32_t max_flows;
	uint64_t idle_ns, now;
	uint32_t *free_frames, nfree;   /* frame indices not in any queue */
	uint32_t removed_cb;
	bool expiring;                  /* on_remove during flow_expire */
	uint32_t bad_cb;
};

static bool model_idle(const struct model *m, const struct model_flow *mf)
{
	return mf->present && !mf->pinned && !mf->qn && m->now - mf->last_seen > m->idle_ns;
}

static void model_forget(struct model *m, uint32_t i)
{
	struct model_flow *mf = &m->k[i];

	m->owner[mf->id] = -1;
	mf->present = false;
	mf->pinned = false;
	m->count--;
}

/* flow_expire's removals are checked against the model as they happen. */
static void churn_on_remove(void *ctx, struct flow *f)
{
	struct model *m = ctx;
	uint32_t i = key_index(&f->key);
	struct model_flow *mf = &m->k[i];

	m->removed_cb++;
	if (!mf->present || mf->id != f->id || m->owner[f->id] != (int32_t)i ||
	    (m->expiring && !model_idle(m, mf))) {
		m->bad_cb++;
		return;
	}
	model_forget(m, i);
}

/* One key against the table: present with the model's id and queue, or absent. */
static bool check_key(struct flow_table *t, const struct model *m, uint32_t i)
{
	const struct model_flow *mf = &m->k[i];
	struct flow_key k = key_n(i);
	struct flow *f = flow_lookup(t, &k);

	if (!mf->present)
		return f == NULL;
	return f && f->id == mf->id && f->gen == mf->gen && f->q.frames == mf->qn &&
	       f->q.bytes == mf->qbytes && f->last_seen_ns == mf->last_seen &&
	       flow_by_id(t, mf->id) == f && f->pinned == mf->pinned;
}

static bool check_all(struct flow_table *t, const struct model *m, uint32_t npool)
{
	struct flow_table_stats st;

	for (uint32_t i = 0; i < npool; i++)
		if (!check_key(t, m, i))
			return false;
	for (uint32_t id = 1; id < m->max_flows; id++) {
		struct flow *f = flow_by_id(t, id);

		if ((f != NULL) != (m->owner[id] >= 0))
			return false;
		if (f && key_index(&f->key) != (uint32_t)m->owner[id])
			return false;
	}
	{
		uint32_t c[3] = { 0, 0, 0 };

		flow_foreach(t, count_fn, c);
		if (c[0] != m->count + 1 || c[2])
			return false;
	}
	flow_table_get_stats(t, &st);
	return st.flows == m->count + 1;
}

/* window_ops: operations in an idle time, on average (time advances at random). */
static void churn(uint64_t seed, uint32_t max_flows, uint32_t npool, uint32_t nops,
		  uint64_t idle_ns, uint32_t window_ops)
{
	struct model m = { 0 };
	struct flow_table_config cfg = base_cfg(max_flows, idle_ns);
	struct flow_table *t = NULL;
	struct flow_frame *next = calloc(NFRAMES, sizeof(*next));
	uint32_t n_create = 0, n_full = 0, n_expired = 0, n_reuse = 0, n_busy = 0;
	uint32_t n_drop = 0, n_stale_cnp = 0, op, fail_op = UINT32_MAX;
	uint32_t hot = npool / 10 + 1;

	m.k = calloc(npool, sizeof(*m.k));
	m.owner = malloc(max_flows * sizeof(*m.owner));
	m.last_gen = calloc(max_flows, sizeof(*m.last_gen));
	m.free_frames = malloc(NFRAMES * sizeof(*m.free_frames));
	m.max_flows = max_flows;
	m.idle_ns = idle_ns;
	for (uint32_t id = 0; id < max_flows; id++)
		m.owner[id] = -1;
	for (uint32_t i = 0; i < NFRAMES; i++)
		m.free_frames[m.nfree++] = i;
	cfg.frames = next;
	cfg.on_remove = churn_on_remove;
	cfg.ctx = &m;
	CHECK_EQ(flow_table_create(&t, &cfg), 0);
	if (!t)
		goto out;

	rng_seed(seed);
	for (op = 0; op < nops; op++) {
		uint32_t r = rng_below(100), i;
		struct model_flow *mf;
		bool ok = true;

		m.now += rng_below(2 * idle_ns / window_ops + 1);
		/* Half the traffic from a hot tenth of the keys: long-lived flows
		 * next to a stream of short ones. */
		i = rng_below(2) ? rng_below(hot) : rng_below(npool);
		mf = &m.k[i];

		if (r < 55) {                   /* a frame classified to key i */
			struct flow_key k = key_n(i);
			struct flow *f = NULL;
			int ret = flow_lookup_or_create(t, &k, m.now, &f);

			if (mf->present) {
				ok = ret == 0 && f && f->id == mf->id;
				mf->last_seen = m.now;
			} else if (m.count == max_flows - 1) {
				ok = ret == -ENOSPC && !f;
				n_full++;
			} else {
				ok = ret == 1 && f && f->id != FLOW_ID_DEFAULT && f->id < max_flows &&
				     m.owner[f->id] == -1 && f->gen == (uint16_t)(m.last_gen[f->id] + 1) &&
				     f->cnt.frames_in == 0 && f->q.frames == 0;
				if (ok) {
					n_reuse += m.last_gen[f->id] != 0;
					mf->present = true;
					mf->id = f->id;
					mf->gen = f->gen;
					mf->last_seen = m.now;
					mf->qn = 0;
					mf->qbytes = 0;
					m.owner[f->id] = i;
					m.last_gen[f->id] = f->gen;
					m.count++;
					n_create++;
				}
			}
			/* ... and queued on it, with a burst now and then. */
			for (uint32_t burst = rng_below(4); ok && ret >= 0 && m.nfree && burst; burst--) {
				uint32_t len = 500 + rng_below(1001);
				uint32_t fr = m.free_frames[--m.nfree];
				int e = flow_enqueue(t, f, fr, len);

				if (mf->qbytes + len > 6000) {
					ok = e == -ENOBUFS;
					m.free_frames[m.nfree++] = fr;
					n_drop++;
				} else {
					ok = e == 0 && mf->qn < MQ;
					if (ok) {
						mf->qframe[mf->qn] = fr;
						mf->qlen[mf->qn] = len;
						mf->qn++;
						mf->qbytes += len;
					}
				}
			}
		} else if (r < 75) {            /* the pacer sends one of key i's frames */
			struct flow_key k;
			uint16_t id = 1 + rng_below(max_flows - 1);

			/* The pacer serves flows that exist: mostly a live id's. */
			if (m.owner[id] >= 0 && rng_below(4)) {
				i = m.owner[id];
				mf = &m.k[i];
			}
			k = key_n(i);
			struct flow *f = flow_lookup(t, &k);
			uint32_t len = 0, fr;

			if (!mf->present) {
				ok = f == NULL;
			} else if (!f) {
				ok = false;
			} else {
				fr = flow_dequeue(t, f, m.now, &len);
				if (!mf->qn) {
					ok = fr == FLOW_FRAME_NONE;
				} else {
					ok = fr == mf->qframe[0] && len == mf->qlen[0];
					mf->qbytes -= mf->qlen[0];
					memmove(mf->qframe, mf->qframe + 1, (mf->qn - 1) * sizeof(uint32_t));
					memmove(mf->qlen, mf->qlen + 1, (mf->qn - 1) * sizeof(uint32_t));
					mf->qn--;
					mf->last_seen = m.now;
					m.free_frames[m.nfree++] = fr;
				}
			}
		} else if (r < 80) {            /* removed by hand (CLI) */
			struct flow_key k = key_n(i);
			struct flow *f = flow_lookup(t, &k);

			if (!mf->present) {
				ok = f == NULL;
			} else if (!f) {
				ok = false;
			} else {
				uint32_t before = m.removed_cb;
				int ret = flow_remove(t, f);

				if (mf->qn) {
					ok = ret == -EBUSY && m.removed_cb == before;
					n_busy++;
				} else {
					ok = ret == 0 && m.removed_cb == before + 1 && !mf->present;
				}
			}
		} else if (r < 90) {            /* timer tick */
			uint32_t budget = rng_below(4) ? 1 + rng_below(max_flows / 8 + 1) : 0;
			uint32_t before = m.removed_cb, n;

			m.expiring = true;
			n = flow_expire(t, m.now, budget);
			m.expiring = false;
			ok = n == m.removed_cb - before && (!budget || n <= budget);
			n_expired += n;
			/* A full sweep leaves nothing idle. */
			for (uint32_t j = 0; ok && !budget && j < npool; j++)
				ok = !model_idle(&m, &m.k[j]);
		} else if (r < 93) {            /* CLI pins or unpins a flow */
			struct flow_key k = key_n(i);
			struct flow *f = flow_lookup(t, &k);

			ok = (f != NULL) == mf->present;
			if (f) {
				f->pinned = !f->pinned;
				mf->pinned = f->pinned;
			}
		} else {                        /* a CNP for a random id arrives */
			uint16_t id = rng_below(max_flows + 2);
			struct flow_table_stats s0, s1;
			int ret;

			flow_table_get_stats(t, &s0);
			ret = on_cnp(t, id);
			flow_table_get_stats(t, &s1);
			if (id < max_flows && id != FLOW_ID_DEFAULT && m.owner[id] >= 0) {
				struct flow *f = flow_by_id(t, id);

				ok = ret == 0 && f && key_index(&f->key) == (uint32_t)m.owner[id] &&
				     flow_by_ref(t, id, m.k[m.owner[id]].gen) == f &&
				     flow_by_ref(t, id, (uint16_t)(m.k[m.owner[id]].gen - 1)) == NULL;
			} else if (id == FLOW_ID_DEFAULT) {
				ok = ret == 0;
			} else {
				ok = ret == -ENOENT && !memcmp(&s0, &s1, sizeof(s0));
				n_stale_cnp++;
			}
		}

		/* After every operation: the key touched, two random keys, the count. */
		if (ok) {
			struct flow_table_stats st;

			flow_table_get_stats(t, &st);
			ok = check_key(t, &m, i) && check_key(t, &m, rng_below(npool)) &&
			     check_key(t, &m, rng_below(npool)) && st.flows == m.count + 1 &&
			     !m.bad_cb;
		}
		if (ok && op % 4096 == 4095)
			ok = check_all(t, &m, npool);
		if (!ok) {
			fail_op = op;
			break;
		}
	}
	if (fail_op == UINT32_MAX && !check_all(t, &m, npool))
		fail_op = nops;
	if (getenv("FLOW_CHURN_VERBOSE"))
		printf("    churn(seed %" PRIu64 "): created %u full %u expired %u reused %u busy %u "
		       "drop %u stale_cnp %u\n", seed, n_create, n_full, n_expired, n_reuse,
		       n_busy, n_drop, n_stale_cnp);
	if (fail_op != UINT32_MAX)
		printf("    churn(seed %" PRIu64 ", max %u, pool %u): first mismatch at op %u\n",
		       seed, max_flows, npool, fail_op);
	CHECK_EQ(fail_op, UINT32_MAX);
	CHECK_EQ(m.bad_cb, 0);
	/* The run exercised what it claims to. */
	CHECK(n_create > max_flows);
	CHECK(n_reuse > 0);
	CHECK(n_full > 0);
	CHECK(n_expired > 0);
	CHECK(n_busy > 0);
	CHECK(n_drop > 0);
	CHECK(n_stale_cnp > 0);
out:
	flow_table_destroy(t);
	free(next);
	free(m.k);
	free(m.owner);
	free(m.last_gen);
	free(m.free_frames);
}

static void test_churn_small(void)
{
	/* A crowded small table: long probe chains, many backward shifts. */
	churn(1, 9, 40, 100000, 2000, 20);
	churn(2, 17, 200, 100000, 500, 100);
}

static void test_churn_10k(void)
{
	/* 10,000 keyed flows (plus the default) out of 30,000 keys. */
	churn(3, 10001, 30000, 400000, 1000000, 60000);
}

int main(void)
{
	RUN(test_key_ipv4_tcp);
	RUN(test_key_ipv4_udp_options);
	RUN(test_key_ipv6_udp);
	RUN(test_key_vlan_pcp5);
	RUN(test_key_arp);
	RUN(test_key_truncated);
	RUN(test_key_ipv4_fragment);
	RUN(test_key_granularity_merges);
	RUN(test_table_create_lookup_remove);
	RUN(test_table_ids_stable);
	RUN(test_table_stale_ids);
	RUN(test_queue_fifo_and_bound);
	RUN(test_queue_priorities);
	RUN(test_queue_subflow_share);
	RUN(test_expire);
	RUN(test_full_table);
	RUN(test_foreach);
	RUN(test_churn_small);
	RUN(test_churn_10k);
	return check_summary();
}
