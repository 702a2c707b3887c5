// SPDX-License-Identifier: BSD-2-Clause
/*
 * RED (switchd/cp_red.c) and IP CE marking (wire_ip_set_ce) on raw bytes
 * and in switchd's core in virtual time (vt.h): the probability curve, the
 * averaged backlog, the share of frames chosen, CE with valid IPv4/IPv6
 * headers, drops counted. Each rule has a row in mutants.sh.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "swt.h"
#include "../../switchd/cp_red.h"

/* ---- IP CE on annotated bytes ---------------------------------------------- */

static uint16_t ip4_csum(const uint8_t *h, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i < n; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void test_ce_ipv4(void)
{
	/* An untagged IPv4/UDP frame, 192.168.0.1 -> 192.168.0.199:
	 *   02:00:00:00:00:0b 02:00:00:00:00:0a 0800
	 *   45 02 0073 0000 4000 40 11 b85f c0a80001 c0a800c7
	 *   (version 4, IHL 5, DSCP 0, ECN ECT(0); total 115; DF; TTL 64;
	 *   UDP; header checksum 0xb85f) */
	static const uint8_t ect0[] = {
		0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x00,
		0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x5f,
		0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t f[sizeof(ect0)];

	memcpy(f, ect0, sizeof(f));
	CHECK_EQ(ip4_csum(f + 14, 20), 0);          /* valid as given */
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), 0);
	/* ECN CE (0x03), checksum 0xb85e: one less, as RFC 1624 says. */
	CHECK_EQ(f[15], 0x03);
	CHECK_EQ(f[24], 0xb8);
	CHECK_EQ(f[25], 0x5e);
	CHECK_EQ(ip4_csum(f + 14, 20), 0);
	CHECK_MEM(f + 26, ect0 + 26, sizeof(f) - 26);   /* nothing else touched */
	/* Already CE: nothing written. */
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), -EALREADY);
	CHECK_EQ(f[25], 0x5e);
	/* ECT(1) (0x01, checksum 0xb860) becomes CE too. */
	memcpy(f, ect0, sizeof(f));
	f[15] = 0x01;
	f[25] = 0x60;
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), 0);
	CHECK_EQ(f[15], 0x03);
	CHECK_EQ(ip4_csum(f + 14, 20), 0);
	/* Not-ECT (0x00, checksum 0xb861): the sender would not hear a mark. */
	memcpy(f, ect0, sizeof(f));
	f[15] = 0x00;
	f[25] = 0x61;
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), -EOPNOTSUPP);
	CHECK_EQ(f[15], 0x00);
	CHECK_EQ(f[25], 0x61);
	/* A checksum whose sum wraps (0x0000 after the change is written 0xffff's
	 * complement correctly): TOS 0x02 with a header summing to 0xfffd. */
	{
		uint8_t g[34];

		memcpy(g, ect0, sizeof(g));
		/* Source address chosen so the checksum is 0x0001 before. */
		g[26] = 0xc0; g[27] = 0xa8; g[28] = 0x00; g[29] = 0x01;
		g[24] = 0; g[25] = 0;
		{
			uint16_t c = ip4_csum(g + 14, 20);
			uint32_t id = (uint32_t)(c - 1) & 0xffff;

			/* Put the difference into the ID field: checksum becomes 1. */
			g[18] = (uint8_t)(id >> 8);
			g[19] = (uint8_t)id;
		}
		{
			uint16_t c = ip4_csum(g + 14, 20);

			g[24] = (uint8_t)(c >> 8);
			g[25] = (uint8_t)c;
		}
		CHECK_EQ(ip4_csum(g + 14, 20), 0);
		CHECK_EQ(wire_ip_set_ce(g, sizeof(g)), 0);
		CHECK_EQ(ip4_csum(g + 14, 20), 0);
	}
	/* Cut short, or not IP. */
	memcpy(f, ect0, sizeof(f));
	CHECK_EQ(wire_ip_set_ce(f, 14 + 19), -ENOENT);
	f[12] = 0x08;
	f[13] = 0x06;                               /* ARP */
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), -ENOENT);
}

static void test_ce_ipv6_tagged(void)
{
	/* A VLAN-tagged (PCP 3) frame with the l2cc data tag and IPv6 inside:
	 *   DA SA 8100 6000 88b5 | 01 00 0007 00000009 00*8 86dd |
	 *   6 (version) 02 (traffic class: DSCP 0, ECT(0)) 00000 (flow label)
	 *   0000 (payload length) 3b (no next header) 40 (hop limit), addresses */
	uint8_t f[18 + 18 + 40];
	size_t ip = 18 + 18;
	struct wire_tag t;

	memset(f, 0, sizeof(f));
	vt_mac(f, H_B);
	vt_mac(f + 6, H_A);
	f[12] = 0x81; f[13] = 0x00; f[14] = 0x60; f[15] = 0x00;
	f[16] = 0x88; f[17] = 0xb5;
	f[18] = L2CC_WIRE_VERSION; f[21] = 7; f[25] = 9;
	f[34] = 0x86; f[35] = 0xdd;
	f[ip] = 0x60; f[ip + 1] = 0x20;             /* TC 0x02: ECT(0) */
	f[ip + 6] = 0x3b; f[ip + 7] = 0x40;
	f[ip + 8] = 0xfe; f[ip + 9] = 0x80; f[ip + 23] = 1;
	f[ip + 24] = 0xfe; f[ip + 25] = 0x80; f[ip + 39] = 2;
	CHECK_EQ(wire_tag_read(f, sizeof(f), &t), 18);
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), 0);
	/* TC 0x03 (CE): byte 1 = 0x30; version, flow label, tag untouched. */
	CHECK_EQ(f[ip], 0x60);
	CHECK_EQ(f[ip + 1], 0x30);
	CHECK_EQ(f[ip + 2], 0);
	CHECK_EQ(wire_tag_read(f, sizeof(f), &t), 18);
	CHECK_EQ(t.flow, 7);
	CHECK_EQ(t.seq, 9);
	CHECK_EQ(t.flags, 0);                       /* no FECN: CE is IP's */
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), -EALREADY);
	/* DSCP kept: TC 0xb9 (DSCP 46, ECT(1)) -> 0xbb. */
	f[ip] = 0x6b; f[ip + 1] = 0x90;
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), 0);
	CHECK_EQ(f[ip], 0x6b);
	CHECK_EQ(f[ip + 1], 0xb0);
	f[ip + 1] = 0x80;                           /* TC 0xb8: Not-ECT */
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f)), -EOPNOTSUPP);
	CHECK_EQ(wire_ip_set_ce(f, sizeof(f) - 1), -ENOENT);
}

/* ---- the probability curve --------------------------------------------------- */

static void test_red_curve(void)
{
	/* DCQCN's: Kmin 5 KB, Kmax 200 KB, Pmax 1%. */
	CHECK_EQ(red_probability(5000, 200000, 0.01, 0), 0);
	CHECK_EQ(red_probability(5000, 200000, 0.01, 5000), 0);
	CHECK_NEAR(red_probability(5000, 200000, 0.01, 5001), 0.01 / 195000, 1e-12);
	CHECK_NEAR(red_probability(5000, 200000, 0.01, 102500), 0.005, 1e-12);
	CHECK_NEAR(red_probability(5000, 200000, 0.01, 200000), 0.01, 1e-12);
	CHECK_EQ(red_probability(5000, 200000, 0.01, 200001), 1);
	CHECK_EQ(red_probability(5000, 200000, 0.01, 1e9), 1);
	/* ns3-rdma's Pmax 1: continuous at kmax. */
	CHECK_NEAR(red_probability(41200, 1030000, 1.0, 535600), 0.5, 1e-12);
}

/* ---- in the switch ------------------------------------------------------------ */

/* Run passes at every deadline for `ns` of virtual time from now. */
static void swt_run_for(struct swt *t, uint64_t ns)
{
	swt_run(t, t->s->now - t->s->start_ns + ns);
}

/* A frame A -> B into p0, tagged, len bytes before the tag; IPv4 with ECN
 * field ecn (-1: not IP, zeros) and a valid checksum. */
static bool swt_send(struct swt *t, uint32_t len, int ecn, uint32_t seq)
{
	struct vt_eth e = { .dst = H_B, .src = H_A, .prio = -1, .len = len, .tag = true,
			    .flow = 1, .seq = seq, .ethertype = ecn < 0 ? 0x88b7 : 0x0800 };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);
	uint8_t *f = umem_data(t->u, addr);

	if (!l)
		return false;
	if (ecn >= 0) {
		uint8_t *ip = f + 14 + L2CC_TAG_LEN;
		uint16_t c;

		ip[0] = 0x45;
		ip[1] = (uint8_t)ecn;
		ip[2] = (uint8_t)((len - 14) >> 8);
		ip[3] = (uint8_t)(len - 14);
		ip[8] = 64;
		ip[9] = 17;
		ip[12] = 10; ip[15] = 1;
		ip[16] = 10; ip[19] = 2;
		c = ip4_csum(ip, 20);
		ip[10] = (uint8_t)(c >> 8);
		ip[11] = (uint8_t)c;
	}
	if (!sw_rx_frame(t->s, &t->s->ports[0], addr, l)) {
		umem_free(t->u, umem_idx(t->u, addr));
		return false;
	}
	return true;
}

/* The switch learns A on p0 (a tagged frame through p1: the averages
 * below start from it) and B on p1. */
static void red_learn(struct swt *t)
{
	swt_send(t, 60, -1, 0);
	{
		struct vt_eth e = { .dst = 0xff, .src = H_B, .prio = -1, .len = 60 };
		uint32_t l;
		uint64_t addr = vt_frame_make(t->u, &e, &l);

		sw_rx_frame(t->s, &t->s->ports[1], addr, l);
	}
	swt_run_for(t, 10000000);
	t->k.n = 0;
}

/* p0 from A, p1 toward B; RED on p1 with these keys; 64K input buffer, no
 * flow control, so the backlog for p1 is what p0 sent and p1 has not. */
static const char *red_conf(const char *keys)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "[switch]\nfdb_aging = 0\n"
		 "[port p0]\nrate = 10M\nbuffer = 256K\n"
		 "[port p1]\nrate = 10M\nbuffer = 64K\nmarking = red\n%s", keys);
	return buf;
}

/* A switch with RED on p1 with these keys (red_conf), A and B learnt; the
 * test stops there if it cannot be made. */
#define red_start(t, keys) do {                                           \
	swt_create((t), red_conf(keys));                                    \
	red_learn(t);                                                       \
} while (0)

/* The logged frames on p1: how many, marked (FECN), CE (IPv4 ECN 3). */
static void swt_tally(struct swt *t, int *n, int *fecn, int *ce, int *bad_csum)
{
	*n = *fecn = *ce = *bad_csum = 0;
	for (uint32_t i = 0; i < t->k.n; i++) {
		const struct vt_frame *f = &t->k.log[i];

		if (f->port != 1)
			continue;
		(*n)++;
		*fecn += vt_fecn(f) == 1;
		if (f->len > 14 + L2CC_TAG_LEN + 20 && f->data[14 + L2CC_TAG_LEN] == 0x45) {
			*ce += (f->data[14 + L2CC_TAG_LEN + 1] & 3) == 3;
			*bad_csum += ip4_csum(f->data + 14 + L2CC_TAG_LEN, 20) != 0;
		}
	}
}

/*
 * Burst of 40 frames of 1000 bytes (1018 with the tag) at once: the backlog
 * a frame leaves behind is k * 1018 for k = 39 .. 0. kmin 0, kmax 40720,
 * pmax 1: frame k is chosen with probability k / 40; over 100 bursts the
 * expected count is 100 * 19.5 = 1950, sd sqrt(100 * sum p(1-p)) = 26.
 */
static void test_red_share(void)
{
	struct swt t;
	int n, fecn, ce, bad;
	double var = 0;

	red_start(&t, "kmin = 0\nkmax = 40720\npmax = 1\nseed = 7\n");
	for (int b = 0; b < 100; b++) {
		t.k.n = 0;
		for (int i = 0; i < 40; i++)
			CHECK(swt_send(&t, 1000, 2, (uint32_t)i));
		swt_run_for(&t, 100000000);
		swt_tally(&t, &n, &fecn, &ce, &bad);
		CHECK_EQ(n, 40);
	}
	for (int k = 0; k < 40; k++)
		var += (k / 40.0) * (1 - k / 40.0);
	CHECK_NEAR(swt_cp(&t, 1, "red_marked"), 1950, 4 * sqrt(100 * var));
	CHECK_EQ(t.s->ports[1].st.marked, swt_cp(&t, 1, "red_marked"));
	CHECK_EQ(swt_cp(&t, 1, "red_ce_set"), 0);
	CHECK_EQ(swt_cp(&t, 1, "red_dropped"), 0);
	/* The last frame of a burst leaves nothing behind: never chosen. A
	 * backlog above kmax: always. */
	swt_destroy(&t);

	red_start(&t, "kmin = 3000\nkmax = 5000\npmax = 0.5\n");
	for (int i = 0; i < 10; i++)
		swt_send(&t, 1000, 2, (uint32_t)i);
	swt_run_for(&t, 100000000);
	/* Backlogs left: 9162 .. 5090 (5 frames above kmax: all marked), 4072
	 * (p = 0.27), 3054 (p = 0.013), 2036 .. 0 (never). */
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK_EQ(n, 10);
	CHECK(fecn >= 5 && fecn <= 7);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(vt_fecn(&t.k.log[i]), 1);
	for (int i = 7; i < 10; i++)
		CHECK_EQ(vt_fecn(&t.k.log[i]), 0);
	swt_destroy(&t);
}

/* Classic RED: the average follows avg <- (1 - w_q) avg + w_q q at each
 * arrival, and the choice follows the average, not the backlog. */
static void test_red_average(void)
{
	struct swt t;
	int n, fecn, ce, bad;

	red_start(&t, "kmin = 20000\nkmax = 30000\npmax = 1\nw_q = 0.5\n");
	/* Three arrivals without a pass: q = 1018, 2036, 3054. */
	for (int i = 0; i < 3; i++)
		swt_send(&t, 1000, 2, (uint32_t)i);
	/* The learning flood (78 bytes) left avg 39; then 528.5, 1282.25,
	 * 2168.1. */
	CHECK_EQ(swt_cp(&t, 1, "red_qavg"), 2168);
	swt_run_for(&t, 100000000);
	swt_destroy(&t);

	/* w_q tiny: 40 frames pile up to 40720 bytes, far above kmax, yet the
	 * average stays below kmin and nothing is marked. */
	red_start(&t, "kmin = 20000\nkmax = 30000\npmax = 1\nw_q = 0.001\n");
	for (int i = 0; i < 40; i++)
		swt_send(&t, 1000, 2, (uint32_t)i);
	swt_run_for(&t, 100000000);
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK_EQ(n, 40);
	CHECK_EQ(fecn, 0);
	CHECK(swt_cp(&t, 1, "red_qavg") < 1000);
	swt_destroy(&t);

	/* The same with w_q = 0 (DCQCN: the backlog itself): marked. */
	red_start(&t, "kmin = 20000\nkmax = 30000\npmax = 1\n");
	for (int i = 0; i < 40; i++)
		swt_send(&t, 1000, 2, (uint32_t)i);
	swt_run_for(&t, 100000000);
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK(fecn >= 10);
	swt_destroy(&t);
}

/* action = ce: ECN-capable packets leave with CE and a valid checksum, no
 * FECN; Not-ECT ones are dropped (not_ect = drop) and counted. */
static void test_red_ce(void)
{
	struct swt t;
	int n, fecn, ce, bad;

	red_start(&t, "kmin = 0\nkmax = 1\npmax = 1\naction = ce\n");
	/* Every frame but a burst's last leaves a backlog above kmax. */
	for (int i = 0; i < 10; i++)
		swt_send(&t, 1000, i < 6 ? (i & 1 ? 1 : 2) : 0, (uint32_t)i);
	swt_send(&t, 1000, 2, 10);
	swt_run_for(&t, 100000000);
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK_EQ(fecn, 0);
	CHECK_EQ(bad, 0);
	CHECK_EQ(ce, 6);                            /* the ECT(0)/ECT(1) ones */
	CHECK_EQ(n, 7);                             /* 4 Not-ECT dropped */
	CHECK_EQ(swt_cp(&t, 1, "red_ce_set"), 6);
	CHECK_EQ(swt_cp(&t, 1, "red_not_ect"), 4);
	CHECK_EQ(swt_cp(&t, 1, "red_dropped"), 4);
	CHECK_EQ(t.s->ports[0].st.drop[SW_DROP_CP], 4);
	CHECK_EQ(t.s->ports[1].st.marked, 0);
	CHECK_EQ(t.s->ports[0].occ[0], 0);          /* the dropped frames freed their room */
	swt_destroy(&t);

	/* not_ect = pass: they leave unmarked. */
	red_start(&t, "kmin = 0\nkmax = 1\npmax = 1\naction = ce\nnot_ect = pass\n");
	for (int i = 0; i < 5; i++)
		swt_send(&t, 1000, 0, (uint32_t)i);
	swt_run_for(&t, 100000000);
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK_EQ(n, 5);
	CHECK_EQ(ce, 0);
	CHECK_EQ(swt_cp(&t, 1, "red_not_ect"), 4);
	CHECK_EQ(swt_cp(&t, 1, "red_dropped"), 0);
	swt_destroy(&t);
}

/* action = drop: the chosen frames never reach the wire, counted on the
 * output (red_dropped, per priority) and as the input's congestion_point drop. */
static void test_red_drop(void)
{
	struct swt t;
	int n, fecn, ce, bad;
	const uint64_t *prio;

	red_start(&t, "kmin = 3000\nkmax = 5000\npmax = 0\naction = drop\n");
	for (int i = 0; i < 10; i++)
		swt_send(&t, 1000, 2, (uint32_t)i);
	swt_run_for(&t, 100000000);
	/* pmax 0: only the frames that leave more than kmax behind (5 of 10). */
	swt_tally(&t, &n, &fecn, &ce, &bad);
	CHECK_EQ(n, 5);
	CHECK_EQ(swt_cp(&t, 1, "red_dropped"), 5);
	CHECK_EQ(t.s->ports[0].st.drop[SW_DROP_CP], 5);
	CHECK_EQ(t.s->ports[1].st.tx_frames, 1 + 5);     /* the learning flood, and 5 */
	prio = cp_ctr_find(t.s->ports[1].cpo, t.s->ports[1].cp, 1, "red_dropped");
	CHECK(prio && prio[0] == 5 && prio[1] == 0);
	CHECK_EQ(t.s->ports[0].occ[0], 0);
	swt_destroy(&t);
}

/* kmin must be below kmax; pmax and w_q are numbers in [0, 1]. */
static void test_red_keys(void)
{
	static const char *const bad[] = {
		"kmin = 5000\nkmax = 5000\n", "pmax = 1.5\n", "pmax = x\n", "w_q = -0.1\n",
		"action = mark\n",
	};
	struct sw_cfg cfg;
	char path[] = "/tmp/l2cc-red-XXXXXX", err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char p2[sizeof(path)];

		memcpy(p2, path, sizeof(path));
		CHECK_EQ(vt_conf_file(p2, red_conf(bad[i])), 0);
		CHECK(sw_cfg_load(&cfg, p2, NULL, 0, err, sizeof(err)) < 0);
		unlink(p2);
	}
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_ce_ipv4);
	RUN(test_ce_ipv6_tagged);
	RUN(test_red_curve);
	RUN(test_red_share);
	RUN(test_red_average);
	RUN(test_red_ce);
	RUN(test_red_drop);
	RUN(test_red_keys);
	return check_summary();
}
