// SPDX-License-Identifier: BSD-2-Clause
/*
 * The BCN reaction point of Lu, Pan, Prabhakar et al., "Congestion control
 * in networks with no congestion drops" (Allerton 2006; "Lu" below), §II
 * and §III-C, driven by the CNMs of switchd's `bcn` congestion point
 * (docs/wire-formats.md: BCN travels in the 802.1Qau CNM format).
 *
 * On BCN(Qoff, Qδ) the source computes Fb = −(Qoff + w·Qδ), in cells of S
 * bytes (`cell`, the paper's fixed cell size: its Fb is "measured in terms
 * of a fixed cell-size S"):
 *   Fb < 0: R ← R·(1 − Gd·|Fb|), and the flow associates with that
 *           congestion point: its data tags then carry the rate-limited
 *           flag (RLT) with the CP's id, the last CP that sent a decrease;
 *   Fb > 0: R ← R + Gi·Fb·Ru, only from the associated CP (increases from
 *           another are ignored).
 * BCN(0,0), severe congestion: R ← 0 for a random time, then R ← Rmin.
 * hostd's pacer rescales a wait when a rate changes, so "0" is the rate at
 * which one cell takes the whole stop: at most one frame leaves during it,
 * and at its end the flow is at Rmin with no wait left over.
 * R stays within [Rmin, link rate]; at the link rate the flow is no longer
 * rate-limited and drops the association (its frames stop carrying RLT).
 *
 * Self-increase (Lu §III-C), a step every T = si_period:
 *   si = 0  none;
 *   si = 1  R ← R + I·T (I bit/s per second: 10 Mb/s/s "gentle", 500
 *           "aggressive" at 10 Gb/s);
 *   si = 2  R ← R·i^(T/1 s): the rate may grow by the factor i per second
 *           whatever the number of sources (the paper's formula "R·i·T" is
 *           garbled; this is the reading that matches its text);
 *   si = 3  R ← R + I·T / #NegFb, #NegFb the negative feedbacks in the last
 *           T (at least 1).
 *
 * The paper's values are for a 10 Gb/s link. Keys left 0 take them scaled
 * by the frame-time rule (docs/bcn-qcn.md), s = link / 10G: Ru, a rate,
 * times s; I, a rate per unit time, times s^2; queue quantities stay in
 * frames (the switch's qeq).
 */
#include "rp.h"
#include "rp_cn.h"
#include "hostd.h"
#include "json.h"
#include "config.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BCN_MAGIC 0x42434e31u           /* "BCN1" */
#define BCN_T_STOP 0                    /* timer: the end of a BCN(0,0) stop */
#define BCN_T_SI 1                      /* timer: the next self-increase */

struct bcn_cfg {
	double gi, gd, w;
	uint64_t ru;            /* bit/s per unit of Fb; 0 = 1e6 * link / 10G */
	uint64_t cell;          /* S, bytes */
	uint64_t rmin;          /* bit/s; 0 = link / 100 */
	uint64_t stop;          /* mean of the random stop after BCN(0,0), ns */
	int si;                 /* self-increase algorithm 0..3 */
	uint64_t si_period;     /* T, ns */
	uint64_t si_rate;       /* I, bit/s per second; 0 = 1e7 * link / 10G (gentle) */
	double si_factor;       /* i, SI-2's factor per second */
	uint64_t seed;
};

struct bcn {
	uint32_t magic;
	uint8_t assoc;          /* the flow is rate-limited by the CP in cpid */
	uint8_t stopped;        /* BCN(0,0): R = 0 until the stop timer */
	uint16_t pad;
	uint8_t cpid[8];
	double rate;            /* R, bit/s */
	uint32_t negfb;         /* negative feedbacks since the last SI step (SI-3) */
	uint32_t stop_bps;      /* while stopped: one cell per stop */
	uint64_t rng;
	uint64_t decreases, increases, severe, ignored, si_steps;
};
_Static_assert(sizeof(struct bcn) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct bcn must fit the flow's law area");

struct rp {
	struct rp_env env;
};

static const struct bcn_cfg *bcn_keys_of(const struct rp *rp) { return rp->env.keys; }

static struct bcn *bcn_of(struct flow *f) { return (struct bcn *)f->law_area; }

static double bcn_link(const struct rp *rp)
{
	return rp->env.link_bps ? (double)rp->env.link_bps : 1e10;
}

/* The paper's rates are for C = 10 Gb/s: a key left 0 takes its value
 * scaled to this link. */
static double bcn_scaled(const struct rp *rp, uint64_t v, double at_10g)
{
	return v ? (double)v : at_10g * bcn_link(rp) / 1e10;
}

static double bcn_rmin(const struct rp *rp)
{
	const struct bcn_cfg *k = bcn_keys_of(rp);

	return k->rmin ? (double)k->rmin : bcn_link(rp) / 100;
}

static void bcn_out(const struct rp *rp, struct bcn *b, struct rp_out *o)
{
	double r = b->rate;

	if (r >= bcn_link(rp))
		r = bcn_link(rp);
	o->by_ipd = false;
	o->rate_bps = b->stopped ? b->stop_bps : (uint64_t)r;
}

/* R within [Rmin, link]; at the link rate the flow is no longer limited. */
static void bcn_clamp(const struct rp *rp, struct bcn *b)
{
	if (b->rate < bcn_rmin(rp))
		b->rate = bcn_rmin(rp);
	if (b->rate >= bcn_link(rp)) {
		b->rate = bcn_link(rp);
		b->assoc = 0;
	}
}

static uint64_t bcn_rand(struct bcn *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng;
}

static void bcn_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	const struct bcn_cfg *k = bcn_keys_of(rp);
	struct bcn *b = bcn_of(f);

	if (b->magic != BCN_MAGIC) {
		rp_configured_rate(rp->env.cfg, f, o);
		memset(b, 0, sizeof(*b));
		b->magic = BCN_MAGIC;
		b->rate = o->rate_bps && !o->by_ipd ? (double)o->rate_bps : bcn_link(rp);
		b->rng = (k->seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)f->id << 32 | f->gen);
		if (!b->rng)
			b->rng = 1;
	}
	bcn_clamp(rp, b);
	bcn_out(rp, b, o);
	if (!rp->env.h)
		return;
	if (k->si)
		rp_timer(rp->env.h, f, BCN_T_SI, k->si_period);
	/* A state resumed in a stop (a reload, [law] persistent) lost the
	 * stop's timer with its flow: the stop starts again. */
	if (b->stopped)
		rp_timer(rp->env.h, f, BCN_T_STOP, k->stop ? k->stop : 1);
}

/* Fb = -(Qoff + w Qdelta), in cells of S bytes (Lu §II, §III). */
double rp_bcn_fb(int32_t qoff, int32_t qdelta, double w, uint64_t cell)
{
	return -((double)qoff + w * (double)qdelta) / (double)(cell ? cell : 1);
}

static void bcn_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			    struct rp_out *o)
{
	const struct bcn_cfg *k = bcn_keys_of(rp);
	struct bcn *b = bcn_of(f);
	double x;

	if (fb->kind != RP_FB_CNM)
		return;
	/* Stopped, or a rate pinned by hand (l2ccctl set-rate): heard, not
	 * acted on. */
	if (b->stopped || f->pinned) {
		b->ignored++;
		return;
	}
	if (!fb->qoff && !fb->qdelta) {
		/* BCN(0,0): stop for a random time in [stop/2, 3 stop/2). */
		uint64_t ns = k->stop / 2 + (k->stop ? bcn_rand(b) % k->stop : 0) + 1;
		double bps = 8.0 * (double)k->cell * 1e9 / (double)ns;

		b->severe++;
		b->stopped = 1;
		b->stop_bps = bps < 1 ? 1 : bps > 4e9 ? 4000000000u : (uint32_t)bps;
		b->assoc = 1;
		memcpy(b->cpid, fb->cpid, sizeof(b->cpid));
		if (rp->env.h)
			rp_timer(rp->env.h, f, BCN_T_STOP, ns);
		bcn_out(rp, b, o);
		return;
	}
	x = rp_bcn_fb(fb->qoff, fb->qdelta, k->w, k->cell);
	if (x < 0) {
		double cut = k->gd * -x;

		b->rate *= cut < 1 ? 1 - cut : 0;
		b->assoc = 1;
		memcpy(b->cpid, fb->cpid, sizeof(b->cpid));
		b->negfb++;
		b->decreases++;
	} else if (x > 0 && b->assoc && !memcmp(b->cpid, fb->cpid, sizeof(b->cpid))) {
		b->rate += k->gi * x * bcn_scaled(rp, k->ru, 1e6);
		b->increases++;
	} else {
		b->ignored++;   /* no change, or an increase from a CP we are not tied to */
	}
	bcn_clamp(rp, b);
	bcn_out(rp, b, o);
}

static void bcn_on_timer(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o)
{
	const struct bcn_cfg *k = bcn_keys_of(rp);
	struct bcn *b = bcn_of(f);
	double s = bcn_link(rp) / 1e10, t = (double)k->si_period / 1e9;
	/* I is a rate per unit time: the frame-time rule scales it by s^2. */
	double i_rate = k->si_rate ? (double)k->si_rate : 1e7 * s * s;

	if (timer == BCN_T_STOP) {
		b->stopped = 0;
		b->rate = bcn_rmin(rp);
		if (!f->pinned)
			bcn_out(rp, b, o);
		return;
	}
	if (timer != BCN_T_SI || !k->si)
		return;
	if (rp->env.h)
		rp_timer(rp->env.h, f, BCN_T_SI, k->si_period);
	if (b->stopped || f->pinned)
		return;
	switch (k->si) {
	case 1:
		b->rate += i_rate * t;
		break;
	case 2:
		b->rate *= pow(k->si_factor, t);
		break;
	case 3:
		b->rate += i_rate * t / (b->negfb ? b->negfb : 1);
		break;
	}
	b->negfb = 0;
	b->si_steps++;
	bcn_clamp(rp, b);
	bcn_out(rp, b, o);
}

/* Frames of a flow a CP slowed carry its id (Lu §II: the rate-limited tag). */
static void bcn_tag(struct rp *rp, const struct flow *f, struct wire_tag *t)
{
	const struct bcn *b = (const struct bcn *)f->law_area;

	if (!b->assoc || b->magic != BCN_MAGIC)
		return;
	t->flags |= L2CC_TAG_RLT;
	memcpy(t->cpid, b->cpid, sizeof(t->cpid));
}

static void bcn_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	const struct bcn *b = (const struct bcn *)f->law_area;
	char cpid[17];

	for (int i = 0; i < 8; i++)
		snprintf(cpid + 2 * i, 3, "%02x", b->cpid[i]);
	jw_double(w, "bcn_rate_bps", b->stopped ? 0 : b->rate);
	jw_str(w, "cpid", b->assoc ? cpid : "");
	jw_bool(w, "stopped", b->stopped);
	jw_u64(w, "decreases", b->decreases);
	jw_u64(w, "increases", b->increases);
	jw_u64(w, "severe", b->severe);
	jw_u64(w, "ignored", b->ignored);
	jw_u64(w, "si_steps", b->si_steps);
}

static double g_rate(const struct rp *rp, const struct flow *f)
{
	const struct bcn *b = (const struct bcn *)f->law_area;

	return b->magic != BCN_MAGIC || b->stopped ? 0 : b->rate / 8;
}

static double g_assoc(const struct rp *rp, const struct flow *f)
{
	const struct bcn *b = (const struct bcn *)f->law_area;

	return b->magic == BCN_MAGIC && b->assoc;
}

static const struct rp_gauge bcn_gauges[] = {
	{ "rate_bytes_per_second", "BCN rate R of the flow, bytes/s (0 while stopped by BCN(0,0))", g_rate },
	{ "associated", "1 while the flow is rate-limited by a congestion point (tags RLT + CPID)",
	  g_assoc },
};

static int bcn_create(struct rp **out, const struct rp_env *env)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->env = *env;
	*out = rp;
	return 0;
}

static void bcn_destroy(struct rp *rp)
{
	free(rp);
}

static const char *const si_names[] = { "0", "1", "2", "3", NULL };

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct bcn_cfg, f), \
	  .size = sizeof(((struct bcn_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item bcn_keys[] = {
	K("gi", CFG_REAL, gi, "4", 0, 1000000, "increase gain Gi: R += Gi Fb Ru for Fb > 0 (Lu et al. 2006 §III-B: 4)"),
	K("gd", CFG_REAL, gd, "1/128", 0, 1, "decrease gain Gd: R *= 1 - Gd |Fb| for Fb < 0 (Lu: 1/128)"),
	K("w", CFG_REAL, w, "2", 0, 1000, "weight of the queue's change in Fb = -(Qoff + w Qdelta) (Lu: 2)"),
	K("ru", CFG_RATE, ru, "0", 1, 0,
	  "Ru, bit/s per unit of Fb in an increase; 0 = the paper's 1e6 at 10 Gb/s, scaled by link/10G"),
	K("cell", CFG_SIZE, cell, "1500", 64, 65536,
	  "S, the cell size Fb is counted in (Lu: Fb is measured in cells of a fixed size; 1500 B packets)"),
	K("rmin", CFG_RATE, rmin, "0", 1, 0,
	  "Rmin, the lowest rate, and the rate after a BCN(0,0) stop; 0 = link / 100 (the paper gives none)"),
	K("stop", CFG_DURATION, stop, "1ms", 1000, 10000000000LL,
	  "mean of the random stop after BCN(0,0), uniform in [stop/2, 3 stop/2) (the paper gives none)"),
	{ .key = "si", .type = CFG_ENUM, .off = offsetof(struct bcn_cfg, si), .def = "0",
	  .names = si_names, .reload = CFG_LIVE,
	  .help = "self-increase (Lu §III-C): 0 none, 1 +I per second, 2 factor i per second, 3 +I T / #NegFb" },
	K("si_period", CFG_DURATION, si_period, "1ms", 10000, 10000000000LL,
	  "T, the time between two self-increase steps"),
	K("si_rate", CFG_RATE, si_rate, "0", 1, 0,
	  "I, bit/s added per second by SI-1 and SI-3; 0 = the paper's gentle 10 Mb/s/s at 10 Gb/s, "
	  "scaled by (link/10G)^2 (a rate per unit time; its aggressive is 50 times that)"),
	K("si_factor", CFG_REAL, si_factor, "10", 1, 1000, "i, SI-2's growth factor per second (Lu: 10)"),
	K("seed", CFG_UINT, seed, "1", 1, 0, "seed of the random stop times (runs repeat)"),
};
#undef K
_Static_assert(sizeof(struct bcn_cfg) <= HD_LAW_CFG_MAX, "bcn_cfg fits [law]'s store");

const struct rp_ops rp_bcn_ops = {
	.name = "bcn",
	.help = "Lu et al. 2006 BCN: Fb = -(Qoff + w Qdelta) from the CNMs of the bcn congestion "
		"point; R *= 1 - Gd|Fb| (and tag with its CPID) for Fb < 0, R += Gi Fb Ru from "
		"that CP for Fb > 0, BCN(0,0) stops; self-increase si = 0..3",
	.create = bcn_create,
	.destroy = bcn_destroy,
	.init = bcn_init,
	.on_feedback = bcn_on_feedback,
	.on_timer = bcn_on_timer,
	.tag = bcn_tag,
	.describe = bcn_describe,
	.state_size = sizeof(struct bcn),
	.keys = bcn_keys,
	.nkeys = sizeof(bcn_keys) / sizeof(bcn_keys[0]),
	.cfg_size = sizeof(struct bcn_cfg),
	.gauges = bcn_gauges,
	.ngauges = sizeof(bcn_gauges) / sizeof(bcn_gauges[0]),
};
