// SPDX-License-Identifier: BSD-2-Clause
/*
 * DCQCN's reaction point (hostd/rp_dcqcn.c) and the 802.1Qau increase it
 * shares (hostd/rp_qcn_inc.c), event by event: the stages, the guard,
 * release at line rate; alpha and the cut on CNPs, the alpha timer, Rmin;
 * the presets scaled to the link; and in hostd's core in virtual time: a
 * CNP cuts the flow's pacer, its timers bring it back, and the receiver
 * sends at most one CNP per flow per the law's interval.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "hdt.h"
#include "../../hostd/hostd_private.h"
#include "../../hostd/rp_dcqcn.h"
#include "../../hostd/rp_qcn_inc.h"

/* ---- the increase, alone -------------------------------------------------------- */

static const struct qcn_inc_cfg inc_cfg = {
	.rpg_time_reset = 1000000, .rpg_byte_reset = 1000, .rpg_threshold = 5,
	.rpg_ai_rate = 1e6, .rpg_hai_rate = 5e6, .rpg_min_rate = 1e6, .max_rate = 1000e6,
};

static void test_qcn_inc_stages(void)
{
	struct qcn_inc_cfg c = inc_cfg;
	struct qcn_inc s;
	static const double fr[] = { 75e6, 87.5e6, 93.75e6, 96.875e6 };

	qcn_inc_init(&s, 100e6);
	CHECK_EQ(s.stage, QCN_LINE_RATE);
	CHECK_EQ(qcn_inc_period(&c, &s), 0);            /* released: no timer */
	CHECK(!qcn_inc_bytes(&c, &s, 100000));          /* nor byte counter */
	qcn_inc_decrease(&c, &s, 50e6, true);
	CHECK_NEAR(s.rt, 100e6, 1e-6);
	CHECK_NEAR(s.rc, 50e6, 1e-6);
	CHECK_EQ(qcn_inc_period(&c, &s), 1000000);
	/* Timer events 1..4: fast recovery, Rc halves its distance to Rt. */
	for (int i = 0; i < 4; i++) {
		qcn_inc_timer(&c, &s);
		CHECK_EQ(s.stage, QCN_FAST_RECOVERY);
		CHECK_NEAR(s.rc, fr[i], 1e-6);
		CHECK_NEAR(s.rt, 100e6, 1e-6);
	}
	/* The fifth: the time counter is at F, active increase: Rt + R_AI. */
	qcn_inc_timer(&c, &s);
	CHECK_EQ(s.stage, QCN_ACTIVE);
	CHECK_NEAR(s.rt, 101e6, 1e-6);
	CHECK_NEAR(s.rc, (96.875e6 + 101e6) / 2, 1e-6);
	/* Byte events: 999 bytes are not one, the thousandth is. */
	CHECK(!qcn_inc_bytes(&c, &s, 999));
	CHECK(qcn_inc_bytes(&c, &s, 1));
	CHECK_EQ(s.byte_stage, 1);
	CHECK_EQ(s.stage, QCN_ACTIVE);
	CHECK_NEAR(s.rt, 102e6, 1e-6);
	for (int i = 0; i < 3; i++)
		CHECK(qcn_inc_bytes(&c, &s, 1000));
	CHECK_NEAR(s.rt, 105e6, 1e-6);
	/* Both counters at F: hyper-active, R_HAI per step (DCQCN). */
	CHECK(qcn_inc_bytes(&c, &s, 1000));
	CHECK_EQ(s.stage, QCN_HYPER);
	CHECK_NEAR(s.rt, 110e6, 1e-6);
	qcn_inc_timer(&c, &s);
	CHECK_NEAR(s.rt, 115e6, 1e-6);
	CHECK_EQ(s.increases, 11);
	/* 802.1Qau's growing step: i = min(stages) - F + 1. */
	c.hai_by_stage = true;
	qcn_inc_timer(&c, &s);                          /* min(5, 7) - 5 + 1 = 1 */
	CHECK_NEAR(s.rt, 120e6, 1e-6);
	CHECK(qcn_inc_bytes(&c, &s, 1000));             /* min(6, 7): 2 */
	CHECK_NEAR(s.rt, 130e6, 1e-6);
	CHECK(qcn_inc_bytes(&c, &s, 1000));             /* min(7, 7): 3 */
	CHECK_NEAR(s.rt, 145e6, 1e-6);
	/* 802.1Qau halves B and T once fast recovery is over. */
	c.halve_after_fr = true;
	CHECK_EQ(qcn_inc_period(&c, &s), 500000);
	CHECK(!qcn_inc_bytes(&c, &s, 499));
	CHECK(qcn_inc_bytes(&c, &s, 1));
}

/* 802.1Qau's byte counter: each cycle B times a factor in [0.85, 1.15],
 * drawn anew every cycle; without byte_jitter exactly B. */
static void test_qcn_inc_byte_jitter(void)
{
	struct qcn_inc_cfg c = inc_cfg;
	struct qcn_inc s;
	uint32_t lo = UINT32_MAX, hi = 0;

	c.rpg_byte_reset = 10000;
	c.rpg_threshold = 1000;                 /* stay in fast recovery */
	c.byte_jitter = true;
	qcn_inc_init(&s, 1000e6);
	s.rng = 12345;
	qcn_inc_decrease(&c, &s, 1e6, true);
	for (int cycle = 0; cycle < 200; cycle++) {
		uint32_t sent = 0;

		while (!qcn_inc_bytes(&c, &s, 100))
			sent += 100;
		sent += 100;
		lo = sent < lo ? sent : lo;
		hi = sent > hi ? sent : hi;
		s.rc = 1e6;                     /* keep it rate-limited */
	}
	CHECK(lo >= 8500 && hi <= 11500 + 100);
	CHECK(hi - lo >= 2000);                 /* it does vary */
	c.byte_jitter = false;
	qcn_inc_decrease(&c, &s, 1e6, true);
	CHECK(!qcn_inc_bytes(&c, &s, 9999));
	CHECK(qcn_inc_bytes(&c, &s, 1));
}

static void test_qcn_inc_guard_floor_release(void)
{
	struct qcn_inc_cfg c = inc_cfg;
	struct qcn_inc s;

	/* A cut far below the target: the first step divides Rt by 8. */
	qcn_inc_init(&s, 100e6);
	qcn_inc_decrease(&c, &s, 5e6, true);
	qcn_inc_timer(&c, &s);
	CHECK_NEAR(s.rt, 12.5e6, 1e-6);
	CHECK_NEAR(s.rc, 8.75e6, 1e-6);
	/* ... only at the first step. */
	qcn_inc_decrease(&c, &s, 1.1e6, false);         /* Rt kept: 12.5 > 11 */
	qcn_inc_timer(&c, &s);
	CHECK_NEAR(s.rt, 1.5625e6, 1e-6);
	qcn_inc_decrease(&c, &s, 1e6, false);
	qcn_inc_timer(&c, &s);
	qcn_inc_timer(&c, &s);
	CHECK_NEAR(s.rt, 1.5625e6, 1e-6);
	/* Rmin: a cut never goes below it. */
	qcn_inc_decrease(&c, &s, 10, true);
	CHECK_NEAR(s.rc, 1e6, 1e-6);
	/* Released at line rate: within 0.1% of max, Rc = Rt = max and the
	 * counters stop. */
	qcn_inc_init(&s, 1000e6);
	qcn_inc_decrease(&c, &s, 500e6, true);
	for (int i = 0; i < 8; i++)            /* 750, 875, ..., 998.05 */
		qcn_inc_timer(&c, &s);
	CHECK(s.rc < 999e6);
	CHECK(s.stage != QCN_LINE_RATE);
	qcn_inc_timer(&c, &s);
	CHECK_EQ(s.stage, QCN_LINE_RATE);
	CHECK_NEAR(s.rc, 1000e6, 1e-6);
	CHECK_NEAR(s.rt, 1000e6, 1e-6);
	CHECK_EQ(qcn_inc_period(&c, &s), 0);
}

/* The HPCC simulator's increase (rdma-hw.cc RateIncEventTimerMlx): no byte
 * counter, the time stage compared before it counts (F = 1): fast
 * recovery, then active (Rt + R_AI), then hyper-active (Rt + R_HAI, the
 * same every step). Counted after (the ns-3 code's order) the first step
 * is already active. */
static void test_qcn_inc_stage_before(void)
{
	struct qcn_inc_cfg c = { .rpg_time_reset = 300000, .rpg_byte_reset = 0,
				 .rpg_threshold = 1, .rpg_ai_rate = 5e6, .rpg_hai_rate = 50e6,
				 .rpg_min_rate = 1e6, .max_rate = 10000e6, .stage_before = true };
	static const double rt[] = { 1000e6, 1005e6, 1055e6, 1105e6 };
	static const double rc[] = { 750e6, 877.5e6, 966.25e6, 1035.625e6 };
	static const uint8_t stage[] = { QCN_FAST_RECOVERY, QCN_ACTIVE, QCN_HYPER, QCN_HYPER };
	struct qcn_inc s;

	qcn_inc_init(&s, 1000e6);
	qcn_inc_decrease(&c, &s, 500e6, true);
	for (int i = 0; i < 4; i++) {
		qcn_inc_timer(&c, &s);
		CHECK_EQ(s.stage, stage[i]);
		CHECK_NEAR(s.rt, rt[i], 1e-3);
		CHECK_NEAR(s.rc, rc[i], 1e-3);
	}
	c.stage_before = false;
	qcn_inc_decrease(&c, &s, 500e6, true);
	qcn_inc_timer(&c, &s);
	CHECK_EQ(s.stage, QCN_ACTIVE);
	qcn_inc_timer(&c, &s);
	CHECK_EQ(s.stage, QCN_HYPER);
}

/* The ns-3 code's hyper-active stage: R_HAI x (min(stages) - F + 1), and B
 * and T halved while in it (not before: active keeps them). */
static void test_qcn_inc_halve_in_hyper(void)
{
	struct qcn_inc_cfg c = { .rpg_time_reset = 1000000, .rpg_byte_reset = 1000,
				 .rpg_threshold = 1, .rpg_ai_rate = 1e6, .rpg_hai_rate = 10e6,
				 .rpg_min_rate = 1e6, .max_rate = 10000e6, .hai_by_stage = true,
				 .halve_in_hyper = true };
	struct qcn_inc s;

	qcn_inc_init(&s, 1000e6);
	qcn_inc_decrease(&c, &s, 500e6, true);
	CHECK(qcn_inc_bytes(&c, &s, 1000));             /* byte stage 1: active */
	CHECK_EQ(s.stage, QCN_ACTIVE);
	CHECK_NEAR(s.rt, 1001e6, 1e-3);
	CHECK_EQ(qcn_inc_period(&c, &s), 1000000);
	qcn_inc_timer(&c, &s);                          /* both at 1: hyper, i = 1 */
	CHECK_EQ(s.stage, QCN_HYPER);
	CHECK_NEAR(s.rt, 1011e6, 1e-3);
	CHECK_EQ(qcn_inc_period(&c, &s), 500000);
	CHECK(!qcn_inc_bytes(&c, &s, 499));
	CHECK(qcn_inc_bytes(&c, &s, 1));                /* min(2, 1): i = 1 */
	CHECK_NEAR(s.rt, 1021e6, 1e-3);
	qcn_inc_timer(&c, &s);                          /* min(2, 2): i = 2 */
	CHECK_NEAR(s.rt, 1041e6, 1e-3);
	/* A cut leaves hyper-active: the full B and T again. */
	qcn_inc_decrease(&c, &s, 500e6, true);
	CHECK_EQ(qcn_inc_period(&c, &s), 1000000);
	CHECK(!qcn_inc_bytes(&c, &s, 999));
}

/* ---- the law, by hand ------------------------------------------------------------------- */

struct lt {
	struct hd_cfg cfg;
	struct rp_env e;
	struct flow f;
	struct rp_out o;
	const struct rp_ops *law;
	struct rp *rp;
};

static int lt_new(struct lt *t, const char *law_keys, const char *link)
{
	char path[] = "/tmp/l2cc-dcqcn-XXXXXX", err[512], conf[1024];
	int ret;

	memset(t, 0, sizeof(*t));
	snprintf(conf, sizeof(conf), "[hostd]\nhost_port = cc0\nuplink = up0\nlink_rate = %s\n"
		 "[law]\nlaw = dcqcn\n%s", link, law_keys);
	ret = vt_conf_file(path, conf);
	if (!ret)
		ret = hd_cfg_load(&t->cfg, path, NULL, 0, err, sizeof(err));
	unlink(path);
	if (ret) {
		printf("    config: %s\n", err);
		return ret;
	}
	t->law = rp_find("dcqcn");
	t->e.cfg = &t->cfg;
	t->e.keys = t->cfg.law_cfg;
	t->e.link_bps = t->cfg.link_rate;
	t->f.in_use = true;
	t->f.id = 1;
	t->f.key.type = FLOW_KEY_DST;
	t->f.law_state = t->f.law_area;
	ret = t->law->create(&t->rp, &t->e);
	if (!ret)
		t->law->init(t->rp, &t->f, &t->o);
	return ret;
}

static void lt_free(struct lt *t)
{
	if (t->rp)
		t->law->destroy(t->rp);
}

static const struct dcqcn *lt_d(const struct lt *t)
{
	return (const struct dcqcn *)t->f.law_area;
}

static void lt_cnp(struct lt *t)
{
	struct rp_fb fb = { .kind = RP_FB_CNP, .marked = 1 };

	t->law->on_feedback(t->rp, &t->f, &fb, &t->o);
}

/* The paper's preset at 100M: s = 100M / 40G = 1/400. */
static void test_dcqcn_presets_scaled(void)
{
	const struct dcqcn_params *p;
	struct lt t;

	CHECK_EQ(lt_new(&t, "", "100M"), 0);
	p = dcqcn_params(t.rp);
	CHECK_NEAR(p->scale, 1.0 / 400, 1e-12);
	CHECK_NEAR(p->g, 1.0 / 256, 1e-12);
	CHECK_EQ(p->alpha_timer, 22000000);             /* 55 us x 400 */
	CHECK_EQ(p->cnp_interval, 20000000);            /* 50 us x 400 */
	CHECK_EQ(p->inc.rpg_time_reset, 22000000);
	CHECK_EQ(p->inc.rpg_byte_reset, 10000000);      /* bytes kept */
	CHECK_EQ(p->inc.rpg_threshold, 5);
	CHECK_NEAR(p->inc.rpg_ai_rate, 100e3, 1e-6);    /* 40M / 400 */
	CHECK_NEAR(p->inc.rpg_hai_rate, 500e3, 1e-6);
	CHECK_NEAR(p->inc.rpg_min_rate, 250e3, 1e-6);
	CHECK_NEAR(p->inc.max_rate, 100e6, 1e-6);
	CHECK_EQ(p->rate_decrease_interval, 0);         /* a cut per CNP */
	CHECK(p->clamp && !p->alpha_periodic && !p->alpha_before_cut);
	CHECK(!p->inc.stage_before && !p->inc.hai_by_stage && !p->inc.halve_in_hyper);
	CHECK_NEAR(p->alpha0, 1.0, 0);
	lt_free(&t);
	/* HPCC's simulator at 25G (run.py --cc dcqcn): s = 1/250. */
	CHECK_EQ(lt_new(&t, "preset = hpcc\n", "100M"), 0);
	p = dcqcn_params(t.rp);
	CHECK_EQ(p->alpha_timer, 250000);               /* 1 us x 250 */
	CHECK_EQ(p->cnp_interval, 0);                   /* a CNP per marked frame */
	CHECK_EQ(p->rate_decrease_interval, 1000000);   /* 4 us x 250 */
	CHECK_EQ(p->inc.rpg_time_reset, 75000000);      /* RP_TIMER 300 us x 250 */
	CHECK_EQ(p->inc.rpg_byte_reset, 0);
	CHECK_EQ(p->inc.rpg_threshold, 1);
	CHECK_NEAR(p->inc.rpg_ai_rate, 20e3, 1e-6);
	CHECK_NEAR(p->inc.rpg_hai_rate, 200e3, 1e-6);
	CHECK_NEAR(p->inc.rpg_min_rate, 4e6, 1e-6);     /* MIN_RATE 1000 Mb/s / 250 */
	CHECK(!p->clamp && p->alpha_periodic && p->inc.stage_before);
	lt_free(&t);
	/* The authors' ns-3 code at 40G, as it is (s = 1). */
	CHECK_EQ(lt_new(&t, "preset = ns3-rdma\n", "40G"), 0);
	p = dcqcn_params(t.rp);
	CHECK_EQ(p->inc.rpg_time_reset, 60000);
	CHECK_EQ(p->inc.rpg_byte_reset, 300000000);     /* BYTE_COUNTER */
	CHECK_NEAR(p->alpha0, 0.5, 0);
	CHECK(p->clamp && p->alpha_before_cut && !p->alpha_periodic);
	CHECK(p->inc.hai_by_stage && p->inc.halve_in_hyper && !p->inc.stage_before);
	lt_free(&t);
	/* The NIC's defaults: g = 5/1024 (dce_tcp_g 1019 is what alpha keeps). */
	CHECK_EQ(lt_new(&t, "preset = nic\n", "40G"), 0);
	p = dcqcn_params(t.rp);
	CHECK_NEAR(p->g, 5.0 / 1024, 1e-15);
	CHECK_NEAR(p->alpha0, 1023.0 / 1024, 1e-15);
	CHECK_EQ(p->alpha_timer, 1000);
	CHECK_EQ(p->rate_decrease_interval, 4000);
	CHECK(!p->clamp && p->alpha_periodic);
	lt_free(&t);
	/* The rules' keys replace the preset's. */
	CHECK_EQ(lt_new(&t, "preset = hpcc\nclamp_target_rate = yes\n"
			"rate_decrease_interval = 2ms\nrate_on_first_cnp = 10M\n", "100M"), 0);
	p = dcqcn_params(t.rp);
	CHECK(p->clamp);
	CHECK_EQ(p->rate_decrease_interval, 2000000);
	CHECK_NEAR(p->rate_on_first_cnp, 10e6, 0);
	lt_free(&t);
	/* The NIC's, with keys that replace the preset's as given. */
	CHECK_EQ(lt_new(&t, "preset = nic\nrpg_ai_rate = 1M\ng = 0.5\nalpha_timer = 1ms\n",
			"1G"), 0);
	p = dcqcn_params(t.rp);
	CHECK_NEAR(p->g, 0.5, 1e-12);
	CHECK_EQ(p->alpha_timer, 1000000);
	CHECK_NEAR(p->inc.rpg_ai_rate, 1e6, 1e-6);
	CHECK_NEAR(p->inc.rpg_hai_rate, 50e6 / 40, 1e-6);
	CHECK_EQ(p->inc.rpg_time_reset, 12000000);      /* 300 us x 40 */
	CHECK_EQ(p->inc.rpg_byte_reset, 32767 * 64);
	CHECK_EQ(p->inc.rpg_threshold, 1);
	lt_free(&t);
	/* g is at most 1; a fraction is fine; 0 is the preset's. */
	CHECK(lt_new(&t, "g = 2\n", "100M") < 0);
	CHECK(lt_new(&t, "g = -0.5\n", "100M") < 0);
	CHECK_EQ(lt_new(&t, "g = 1/512\n", "100M"), 0);
	CHECK_NEAR(dcqcn_params(t.rp)->g, 1.0 / 512, 1e-15);
	lt_free(&t);
	CHECK_EQ(lt_new(&t, "g = 0\n", "100M"), 0);
	CHECK_NEAR(dcqcn_params(t.rp)->g, 1.0 / 256, 1e-15);
	lt_free(&t);
}

/* Zhu et al. §3.3 event by event, g = 1/2 to see alpha move. */
static void test_dcqcn_cut_alpha(void)
{
	struct lt t;
	double a, rc;

	CHECK_EQ(lt_new(&t, "g = 0.5\n", "100M"), 0);
	/* Starts at the link rate, alpha 1, not rate-limited. */
	CHECK_EQ(t.o.rate_bps, 100000000);
	CHECK_NEAR(lt_d(&t)->alpha, 1.0, 0);
	CHECK_EQ(lt_d(&t)->inc.stage, QCN_LINE_RATE);
	/* CNP 1: Rt = 100M, Rc = 100M (1 - 1/2) = 50M, alpha = 1/2 + 1/2 = 1. */
	lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 50000000);
	CHECK_NEAR(lt_d(&t)->inc.rt, 100e6, 1e-6);
	CHECK_NEAR(lt_d(&t)->alpha, 1.0, 1e-12);
	CHECK_EQ(lt_d(&t)->inc.stage, QCN_FAST_RECOVERY);
	/* Alpha timer: 1/2. */
	t.law->on_timer(t.rp, &t.f, DCQCN_T_ALPHA, &t.o);
	CHECK_NEAR(lt_d(&t)->alpha, 0.5, 1e-12);
	CHECK_EQ(t.o.rate_bps, 50000000);               /* the rate does not move */
	/* CNP 2 cuts by alpha / 2 = 1/4 with alpha as it was: 37.5M; Rt = 50M;
	 * then alpha = 1/4 + 1/2 = 3/4. */
	lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 37500000);
	CHECK_NEAR(lt_d(&t)->inc.rt, 50e6, 1e-6);
	CHECK_NEAR(lt_d(&t)->alpha, 0.75, 1e-12);
	/* Rate timer: fast recovery toward Rt = 50M: 43.75M. */
	t.law->on_timer(t.rp, &t.f, DCQCN_T_RATE, &t.o);
	CHECK_EQ(t.o.rate_bps, 43750000);
	CHECK_EQ(lt_d(&t)->inc.time_stage, 1);
	/* CNP 3 starts the counters over: Rt = 43.75M, Rc x (1 - 3/8). */
	lt_cnp(&t);
	CHECK_EQ(lt_d(&t)->inc.time_stage, 0);
	CHECK_NEAR(lt_d(&t)->inc.rt, 43.75e6, 1e-6);
	CHECK_EQ(t.o.rate_bps, 27343750);
	CHECK_NEAR(lt_d(&t)->alpha, 0.875, 1e-12);
	CHECK_EQ(lt_d(&t)->cnps, 3);
	/* Rmin (250k): many CNPs never cut below it. */
	for (int i = 0; i < 100; i++)
		lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 250000);
	lt_free(&t);

	/* The paper's g = 1/256: alpha after CNPs and decays, exactly. */
	CHECK_EQ(lt_new(&t, "", "100M"), 0);
	a = 1.0;
	rc = 100e6;
	for (int i = 0; i < 3; i++) {
		t.law->on_timer(t.rp, &t.f, DCQCN_T_ALPHA, &t.o);
		a *= 1 - 1.0 / 256;
	}
	lt_cnp(&t);
	rc *= 1 - a / 2;
	a = (1 - 1.0 / 256) * a + 1.0 / 256;
	CHECK_NEAR(lt_d(&t)->alpha, a, 1e-12);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(rc));
	CHECK_EQ(lt_d(&t)->alpha_decays, 3);
	/* Bytes sent count toward the byte counter (10 MB). */
	for (int i = 0; i < 9999; i++)
		t.law->on_tx(t.rp, &t.f, (uint32_t)i, 1000, RP_LIMIT_RATE, &t.o);
	CHECK_EQ(lt_d(&t)->inc.byte_stage, 0);
	t.law->on_tx(t.rp, &t.f, 9999, 1000, RP_LIMIT_RATE, &t.o);
	CHECK_EQ(lt_d(&t)->inc.byte_stage, 1);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround((rc + 100e6) / 2));
	lt_free(&t);
}

static void lt_timer(struct lt *t, unsigned timer)
{
	t->law->on_timer(t->rp, &t->f, timer, &t->o);
}

/* The HPCC simulator's rules (rdma-hw.cc *Mlx) at its own 25G (s = 1),
 * event by event: a CNP does not cut at once but marks the decrease
 * interval (4 us), whose end cuts once however many CNPs came; alpha moves
 * on its 1 us clock only, + g in a period with a CNP (the first CNP just
 * starts the clock); Rt <- Rc only when an increase came since the last
 * cut (CLAMP_TARGET_RATE 0); the increase counts its stage before the
 * event (F = 1: fast recovery first). */
static void test_dcqcn_hpcc_rules(void)
{
	const double g = 1.0 / 256;
	double a, rc, rt;
	struct lt t;

	CHECK_EQ(lt_new(&t, "preset = hpcc\n", "25G"), 0);
	CHECK_EQ(t.o.rate_bps, 25000000000ull);
	lt_cnp(&t);
	lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 25000000000ull);         /* no cut yet */
	CHECK_EQ(lt_d(&t)->cuts, 0);
	CHECK(lt_d(&t)->dec_pending && lt_d(&t)->dec_armed && lt_d(&t)->alpha_armed);
	lt_timer(&t, DCQCN_T_ALPHA);                    /* CNP 2 came: + g */
	a = 1.0;
	CHECK_NEAR(lt_d(&t)->alpha, a, 1e-12);
	lt_timer(&t, DCQCN_T_ALPHA);                    /* none: decays */
	a *= 1 - g;
	CHECK_NEAR(lt_d(&t)->alpha, a, 1e-12);
	lt_timer(&t, DCQCN_T_DEC);                      /* the one cut */
	rc = 25e9 * (1 - a / 2);
	rt = 25e9;
	CHECK_EQ(lt_d(&t)->cuts, 1);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(rc));
	CHECK_NEAR(lt_d(&t)->inc.rt, rt, 1e-3);
	lt_timer(&t, DCQCN_T_DEC);                      /* no CNP since: nothing */
	CHECK_EQ(lt_d(&t)->cuts, 1);
	CHECK(!lt_d(&t)->dec_armed);
	/* Two cuts without an increase between: Rt is kept. */
	lt_cnp(&t);
	lt_timer(&t, DCQCN_T_DEC);
	rc *= 1 - a / 2;
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(rc));
	CHECK_NEAR(lt_d(&t)->inc.rt, rt, 1e-3);
	/* The rate timer: fast recovery first (stage 0 before it counts). */
	lt_timer(&t, DCQCN_T_RATE);
	rc = (rc + rt) / 2;
	CHECK_EQ(lt_d(&t)->inc.stage, QCN_FAST_RECOVERY);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(rc));
	/* After an increase the cut sets Rt <- Rc. */
	lt_cnp(&t);
	lt_timer(&t, DCQCN_T_DEC);
	CHECK_NEAR(lt_d(&t)->inc.rt, rc, 1e-3);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(rc * (1 - a / 2)));
	lt_free(&t);
	/* The paper's alpha with a decrease interval (g = 1/2): two CNPs, one
	 * cut at the interval's end with alpha as it was (1: 100M -> 50M),
	 * then alpha takes it once (still 1), and its timer runs. */
	CHECK_EQ(lt_new(&t, "g = 0.5\nrate_decrease_interval = 1ms\n", "100M"), 0);
	lt_cnp(&t);
	lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 100000000);
	lt_timer(&t, DCQCN_T_DEC);
	CHECK_EQ(t.o.rate_bps, 50000000);
	CHECK(lt_d(&t)->alpha_armed);
	lt_timer(&t, DCQCN_T_ALPHA);
	CHECK_NEAR(lt_d(&t)->alpha, 0.5, 1e-12);
	lt_cnp(&t);
	lt_timer(&t, DCQCN_T_DEC);                      /* cut by 1/4, then alpha 3/4 */
	CHECK_EQ(t.o.rate_bps, 37500000);
	CHECK_NEAR(lt_d(&t)->alpha, 0.75, 1e-12);
	lt_free(&t);
	/* The paper's rule with clamp_target_rate = no: the second cut keeps
	 * Rt at the line rate (the paper would take Rt = 50M). */
	CHECK_EQ(lt_new(&t, "g = 0.5\nclamp_target_rate = no\n", "100M"), 0);
	lt_cnp(&t);
	lt_cnp(&t);
	CHECK_NEAR(lt_d(&t)->inc.rt, 100e6, 1e-3);
	CHECK_EQ(t.o.rate_bps, 25000000);
	lt_free(&t);
}

/* The ns-3 code's alpha: 0.5 at the start, and the CNP counted before the
 * cut: alpha = 0.5 (1 - g) + g = 257/512, Rc = 40G (1 - 257/1024). The
 * NIC's first CNP with rate_to_set_on_first_cnp (10G): Rc = Rt = 10G at
 * once, then one cut at the end of its 4 us monitor period with alpha =
 * initial_alpha_value 1023/1024. */
static void test_dcqcn_ns3_nic_rules(void)
{
	struct lt t;

	CHECK_EQ(lt_new(&t, "preset = ns3-rdma\n", "40G"), 0);
	CHECK_NEAR(lt_d(&t)->alpha, 0.5, 0);
	lt_cnp(&t);
	CHECK_NEAR(lt_d(&t)->alpha, 257.0 / 512, 1e-15);
	CHECK_EQ(t.o.rate_bps, 29960937500ull);
	lt_free(&t);
	CHECK_EQ(lt_new(&t, "preset = nic\nrate_on_first_cnp = 10G\n", "40G"), 0);
	lt_cnp(&t);
	CHECK_EQ(t.o.rate_bps, 10000000000ull);
	CHECK_NEAR(lt_d(&t)->inc.rt, 10e9, 1e-3);
	lt_timer(&t, DCQCN_T_DEC);
	CHECK_EQ(t.o.rate_bps, (uint64_t)llround(10e9 * (1 - 1023.0 / 2048)));
	/* Only the first CNP sets it. */
	lt_cnp(&t);
	lt_timer(&t, DCQCN_T_DEC);
	CHECK(t.o.rate_bps < 5000000000ull);
	lt_free(&t);
}

/* ---- in hostd's core ---------------------------------------------------------------- */

static void hdt_cnp(struct hdt *t, uint16_t flow)
{
	struct wire_cnp c = { .flow = flow, .seq = 0, .marked = 1 };
	uint8_t buf[128], me[6], src[6];

	vt_mac(me, ME);
	vt_mac(src, B);
	hdt_up_raw(t, buf, wire_build_cnp(buf, sizeof(buf), me, src, &c));
}

/* CNPs hostd sent toward the fabric so far. */
static int hdt_cnps_out(struct hdt *t)
{
	return hdt_ctrl(t, 0, L2CC_CTRL_CNP, NULL);
}

/* The sender: a CNP cuts the flow's pacer; the rate timer (22 ms at 100M)
 * steps it back up; the alpha timer decays alpha while no CNP comes. */
static void test_dcqcn_core_sender(void)
{
	struct vt_eth e = { .dst = B, .src = ME, .prio = -1, .len = 482 };
	const struct dcqcn *d;
	struct flow *f;
	struct hdt t;
	uint32_t l = 0;
	uint64_t addr;

	CHECK_EQ(hdt_create_(&t, "[law]\nlaw = dcqcn\ng = 0.5\n"), 0);
	addr = vt_frame_make(t.u, &e, &l);
	hd_rx_host_frame(t.h, addr, l);
	hdt_run(&t, 1000000);
	f = flow_by_id(t.h->flows, 1);
	CHECK(f != NULL);
	if (!f) {
		hdt_destroy(&t);
		return;
	}
	d = (const struct dcqcn *)f->law_area;
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 100000000);
	hdt_cnp(&t, 1);
	hd_pass(t.h);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 50000000);
	CHECK_EQ(t.h->ntimers, 2);                      /* rate and alpha timers */
	/* 22 ms later: the first fast-recovery step, 75M; alpha 1 -> 0.5. */
	hdt_run(&t, 1000000 + 21900000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 50000000);
	hdt_run(&t, 1000000 + 22100000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 75000000);
	CHECK_NEAR(d->alpha, 0.5, 1e-12);
	/* Back at the link rate after enough steps, released: no rate timer. */
	hdt_run(&t, 1000000 + 22000000 * 12 + 100000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 100000000);
	CHECK_EQ(d->inc.stage, QCN_LINE_RATE);
	hdt_destroy(&t);
}

/* The receiver: with [hostd] cnp_interval 0, the law's (20 ms at 100M for
 * the paper's 50 us): one CNP for a run of marked frames within it. */
static void test_dcqcn_core_receiver(void)
{
	struct hdt t;

	CHECK_EQ(hdt_create_(&t, "[law]\nlaw = dcqcn\n"), 0);
	t.h->now = t.h->start_ns;
	for (uint32_t i = 0; i < 10; i++) {
		t.h->now = t.h->start_ns + i * 1000000ull;
		CHECK(hdt_up_data(&t, B, 7, i, true));
		hd_pass(t.h);
	}
	CHECK_EQ(hdt_cnps_out(&t), 1);                  /* the first, at once */
	hdt_run(&t, 19900000);
	CHECK_EQ(hdt_cnps_out(&t), 1);
	hdt_run(&t, 20100000);
	CHECK_EQ(hdt_cnps_out(&t), 2);                  /* the other nine, at 20 ms */
	hdt_destroy(&t);
	/* [hostd] cnp_interval wins when set. */
	CHECK_EQ(hdt_create_(&t, "cnp_interval = 1ms\n[law]\nlaw = dcqcn\n"), 0);
	for (uint32_t i = 0; i < 10; i++) {
		t.h->now = t.h->start_ns + i * 1000000ull;
		CHECK(hdt_up_data(&t, B, 7, i, true));
		hd_pass(t.h);
	}
	CHECK_EQ(hdt_cnps_out(&t), 10);
	hdt_destroy(&t);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_qcn_inc_stages);
	RUN(test_qcn_inc_guard_floor_release);
	RUN(test_qcn_inc_byte_jitter);
	RUN(test_qcn_inc_stage_before);
	RUN(test_qcn_inc_halve_in_hyper);
	RUN(test_dcqcn_presets_scaled);
	RUN(test_dcqcn_cut_alpha);
	RUN(test_dcqcn_hpcc_rules);
	RUN(test_dcqcn_ns3_nic_rules);
	RUN(test_dcqcn_core_sender);
	RUN(test_dcqcn_core_receiver);
	return check_summary();
}
