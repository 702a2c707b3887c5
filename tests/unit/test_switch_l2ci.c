// SPDX-License-Identifier: BSD-2-Clause
/*
 * The l2ci congestion point (switchd/cp_l2ci.c) in virtual time, on the
 * plug-in seam: switchd's core without sockets, frames fed in, time moved
 * by hand. Pinned here: a DISCOVER leaves with one more hop and the path
 * speed lowered to the egress port's rate; a FEEDBACK arriving on a port
 * leaves with that output's level (its backlog as a share of the port's
 * buffer) when it is the highest so far, naming the hop and the port, and
 * with its own level otherwise; level_prios; a pinned level (`l2ccctl cp
 * PORT level P`), over 100 % too; and that both frames stay at priority 7.
 *
 * Each test's mutant in tests/unit/mutants.sh breaks the rule it checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "json.h"
#include "log.h"
#include "swt.h"

/*
 * p0: host A (the path's source). p1: toward host R (the destination) at
 * 10M with a 100 KB buffer. p2: host C, another source toward R.
 */
static const int l2_hosts[][2] = { { H_A, 0 }, { H_R, 1 }, { H_C, 2 } };

static const char l2_conf[] =
	"[switch]\nfdb_aging = 0\nmarking = l2ci\n"
	"[port p0]\nrate = 100M\nbuffer = 100K\n"
	"[port p1]\nrate = 10M\nbuffer = 100K\n"
	"[port p2]\nrate = 100M\nbuffer = 100K\n";

#define l2_start(t, conf) do {                                             \
	swt_create((t), (conf));                                            \
	swt_learn((t), l2_hosts, 3);                                        \
} while (0)

/* The last frame of ethertype 0x88B6 sent on port p, its body and type. */
static int l2_last_ctrl(struct swt *t, int p, const uint8_t **body, size_t *blen,
			struct eth_info *ei)
{
	for (uint32_t i = t->k.n; i-- > 0;) {
		const struct vt_frame *f = &t->k.log[i];

		if ((int)f->port != p || wire_parse_eth(f->data, f->len, ei) ||
		    ei->ethertype != L2CC_ETH_P_CTRL)
			continue;
		return wire_parse_ctrl(f->data + ei->hlen, f->len - ei->hlen, body, blen);
	}
	return -ENOENT;
}

/* The control frame arrives on p at `at` ns since the start. */
static void l2_rx_ctrl_at(struct swt *t, int p, const uint8_t *frame, int len, uint64_t at)
{
	swt_run(t, at);
	swt_rx_raw(t, p, frame, len);
	swt_run(t, at);
}

static void l2_rx_ctrl(struct swt *t, int p, const uint8_t *frame, int len)
{
	l2_rx_ctrl_at(t, p, frame, len, 0);
}

static void test_l2ci_discover(void)
{
	const struct wire_discover d = { .flow = 3, .path_bps = 1000000000, .t_tx = 77 };
	uint8_t a[6], r[6], buf[64];
	struct wire_discover got;
	const uint8_t *body;
	struct eth_info ei;
	struct swt t;
	size_t blen;
	int len;

	l2_start(&t, l2_conf);
	vt_mac(a, H_A);
	vt_mac(r, H_R);
	len = wire_build_discover(buf, sizeof(buf), r, a, L2CC_CTRL_DISCOVER, &d);
	l2_rx_ctrl(&t, 0, buf, len);
	CHECK_EQ(l2_last_ctrl(&t, 1, &body, &blen, &ei), L2CC_CTRL_DISCOVER);
	CHECK_EQ(ei.prio, L2CC_L2CI_PCP);
	CHECK_EQ(wire_parse_discover(body, blen, &got), 0);
	CHECK_EQ(got.hops, 1);
	CHECK_EQ(got.path_bps, 10000000);
	CHECK_EQ(got.t_tx, 77);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_discover"), 1);
	CHECK_EQ(swt_cp(&t, 0, "l2ci_discover"), 0);

	/* The echo goes back untouched: switches only count the way out. */
	len = wire_build_discover(buf, sizeof(buf), a, r, L2CC_CTRL_DISCOVER_ECHO, &got);
	l2_rx_ctrl(&t, 1, buf, len);
	CHECK_EQ(l2_last_ctrl(&t, 0, &body, &blen, &ei), L2CC_CTRL_DISCOVER_ECHO);
	CHECK_EQ(wire_parse_discover(body, blen, &got), 0);
	CHECK_EQ(got.hops, 1);
	CHECK_EQ(got.path_bps, 10000000);
	swt_destroy(&t);
}

/* A FEEDBACK from R about the path A -> R arrives on p1 (R's egress here)
 * at `at` ns since the start. */
static int l2_feedback_at(struct swt *t, uint16_t level, uint64_t at, struct wire_feedback *got)
{
	struct wire_feedback fb = { .flow = 3, .level = level, .speed_mbps = 1000 };
	uint8_t a[6], r[6], buf[64];
	const uint8_t *body;
	struct eth_info ei;
	size_t blen;
	int len;

	vt_mac(a, H_A);
	vt_mac(r, H_R);
	memcpy(fb.setter, r, 6);
	len = wire_build_feedback(buf, sizeof(buf), a, r, &fb);
	l2_rx_ctrl_at(t, 1, buf, len, at);
	if (l2_last_ctrl(t, 0, &body, &blen, &ei) != L2CC_CTRL_FEEDBACK)
		return -ENOENT;
	CHECK_EQ(ei.prio, L2CC_L2CI_PCP);
	return wire_parse_feedback(body, blen, got);
}

static int l2_feedback(struct swt *t, uint16_t level, struct wire_feedback *got)
{
	return l2_feedback_at(t, level, 0, got);
}

static void test_l2ci_feedback_level(void)
{
	struct wire_feedback got;
	uint64_t backlog;
	struct swt t;
	uint8_t r[6];

	l2_start(&t, l2_conf);
	vt_mac(r, H_R);
	/* Nothing queued: the egress's 5 % stays, set at hop 0, with its
	 * speed (l2_feedback_at sends 1000 Mbit/s). */
	CHECK_EQ(l2_feedback(&t, 500, &got), 0);
	CHECK_EQ(got.hop, 1);
	CHECK_EQ(got.max_hop, 0);
	CHECK_EQ(got.level, 500);
	CHECK_EQ(got.speed_mbps, 1000);
	CHECK_MEM(got.setter, r, 6);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_feedback"), 1);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_feedback_set"), 0);

	/* 40 frames of 1000 bytes from C for R, at 10M: most of them wait. */
	for (int i = 0; i < 40; i++)
		CHECK(swt_rx(&t, 2, (struct vt_eth){ .dst = H_R, .src = H_C, .prio = -1,
						      .len = 1000 }));
	swt_run(&t, 0);
	/* Queued, and the frame on the wire (test_l2ci_level_wire). */
	backlog = t.s->voq->out_total_bytes[1] + sw_port_wire_bytes(t.s, 1);
	CHECK(backlog >= 30000);
	CHECK_EQ(l2_feedback(&t, 500, &got), 0);
	CHECK_EQ(got.level, backlog * 10000 / 102400);
	CHECK_EQ(got.max_hop, 1);
	CHECK_MEM(got.setter, t.s->ports[1].mac, 6);
	CHECK_EQ(got.speed_mbps, 10);   /* the setter's rate: the path's increase unit */
	CHECK_EQ(swt_cp(&t, 1, "l2ci_feedback_set"), 1);
	/* A higher level from further on wins over this switch's. */
	CHECK_EQ(l2_feedback(&t, 9000, &got), 0);
	CHECK_EQ(got.level, 9000);
	CHECK_EQ(got.max_hop, 0);
	/* Once the queue drains, the level falls back to 0. */
	swt_run(&t, 100000000);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_level"), 0);
	swt_destroy(&t);
}

/* A frame leaves the level as its wire time runs, not when it starts: at
 * 10M (no wire_overhead here) a 1000-byte frame takes 800 us. Twelve wait
 * for p1; once its burst is spent, one leaves every 800 us. While one is on
 * the wire, with Q bytes queued behind it, a FEEDBACK 200 us into it reads
 * Q + 750 bytes of 100K, at 400 us Q + 500, at its end Q -- not Q
 * throughout, which made a path whose egress answers its own frames read
 * half a frame less than the others (cp_l2ci.c, l2ci_level). */
static void test_l2ci_level_wire(void)
{
	const uint64_t t0 = 10000000, wire_ns = 800000;
	struct wire_feedback got;
	uint64_t ts, q;
	struct swt t;

	l2_start(&t, l2_conf);
	swt_run(&t, t0);                /* the learning broadcasts are off the wire */
	CHECK_EQ(sw_port_wire_bytes(t.s, 1), 0);
	for (int i = 0; i < 12; i++)
		CHECK(swt_rx(&t, 2, (struct vt_eth){ .dst = H_R, .src = H_C, .prio = -1,
						      .len = 1000 }));
	swt_run(&t, t0 + 3000000);
	/* The frame on the wire started at ts (ns since the start). */
	ts = t.s->ports[1].wc.t_free - wire_ns - t.s->start_ns;
	q = t.s->voq->out_total_bytes[1];
	CHECK(ts <= t0 + 3000000 && q >= 3000);
	CHECK_EQ(l2_feedback_at(&t, 0, ts + 200000, &got), 0);
	CHECK_EQ(got.level, (q + 750) * 10000 / 102400);
	CHECK_EQ(l2_feedback_at(&t, 0, ts + 400000, &got), 0);
	CHECK_EQ(got.level, (q + 500) * 10000 / 102400);
	CHECK_EQ(l2_feedback_at(&t, 0, ts + wire_ns - 1, &got), 0);
	CHECK_EQ(got.level, q * 10000 / 102400);
	CHECK_EQ(t.s->voq->out_total_bytes[1], q);      /* the next one waits */
	swt_destroy(&t);
}

/* level_prios 0x7f: a backlog at priority 7 is not congestion. */
static void test_l2ci_level_prios(void)
{
	char conf[512];
	struct swt t;

	/* in [port p1]: the output whose level counts */
	snprintf(conf, sizeof(conf), "[switch]\nfdb_aging = 0\nmarking = l2ci\n"
		 "[port p0]\nrate = 100M\nbuffer = 100K\n"
		 "[port p1]\nrate = 10M\nbuffer = 100K\nlevel_prios = 0x7f\n"
		 "[port p2]\nrate = 100M\nbuffer = 100K\n");
	l2_start(&t, conf);
	for (int i = 0; i < 40; i++)
		CHECK(swt_rx(&t, 2, (struct vt_eth){ .dst = H_R, .src = H_C, .prio = 7,
						      .len = 1000 }));
	swt_run(&t, 0);
	CHECK(t.s->voq->out_total_bytes[1] >= 30000);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_level"), 0);
	for (int i = 0; i < 40; i++)
		CHECK(swt_rx(&t, 2, (struct vt_eth){ .dst = H_R, .src = H_C, .prio = 2,
						      .len = 1000 }));
	swt_run(&t, 0);
	CHECK(swt_cp(&t, 1, "l2ci_level") >= 3000);
	swt_destroy(&t);
}

static int l2_ctl(struct swt *t, int port, const char *args)
{
	const struct cp_ops *ops = t->s->ports[port].cpo;
	char err[128];
	struct jw w;
	int r;

	jw_init(&w);
	jw_obj_begin(&w, NULL);
	r = ops->ctl(t->s->ports[port].cp, (uint32_t)port, args, &w, err, sizeof(err));
	jw_obj_end(&w);
	jw_free(&w);
	return r;
}

/* The spec's line check on one switch at a time: a pinned level, over
 * 100 % as well, reaches the frame intact; off gives the backlog back. */
static void test_l2ci_pinned(void)
{
	struct wire_feedback got;
	struct swt t;

	l2_start(&t, l2_conf);
	CHECK_EQ(l2_ctl(&t, 1, "level 70"), 0);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_level_forced"), 1);
	CHECK_EQ(l2_feedback(&t, 500, &got), 0);
	CHECK_EQ(got.level, 7000);
	CHECK_EQ(got.max_hop, 1);
	CHECK_EQ(l2_ctl(&t, 1, "level 250.5"), 0);
	CHECK_EQ(l2_feedback(&t, 500, &got), 0);
	CHECK_EQ(got.level, 25050);
	CHECK_EQ(l2_ctl(&t, 1, "level off"), 0);
	CHECK_EQ(swt_cp(&t, 1, "l2ci_level_forced"), 0);
	CHECK_EQ(l2_feedback(&t, 500, &got), 0);
	CHECK_EQ(got.level, 500);
	CHECK_EQ(l2_ctl(&t, 1, "level 700"), -EINVAL);
	CHECK_EQ(l2_ctl(&t, 1, "level -1"), -EINVAL);
	CHECK_EQ(l2_ctl(&t, 1, "lvl 5"), -EINVAL);
	swt_destroy(&t);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_l2ci_discover);
	RUN(test_l2ci_feedback_level);
	RUN(test_l2ci_level_wire);
	RUN(test_l2ci_level_prios);
	RUN(test_l2ci_pinned);
	return check_summary();
}
