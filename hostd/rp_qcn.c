// SPDX-License-Identifier: BSD-2-Clause
/*
 * The IEEE 802.1Qau reaction point (QCN), driven by the CNMs of switchd's
 * `qcn` congestion point; names and defaults from the IEEE8021-CN-MIB.
 *
 * On a CNM with quantised feedback QntzFb (1..63):
 *   TR <- CR, unless no increase event has happened since the previous
 *         decrease (still in the first fast-recovery cycle: a burst of CNMs
 *         does not drag the target down with the rate);
 *   CR <- CR * max(1 - Gd QntzFb, MinDecFac), at least rpg_min_rate;
 * both stage counters, the byte counter and the timer restart. The rate
 * then climbs back in 802.1Qau's stages (hostd/rp_qcn_inc.c, shared with
 * DCQCN): fast recovery CR <- (CR + TR) / 2 at each byte-counter event
 * (every rpg_byte_reset bytes sent, halved after fast recovery, each cycle
 * jittered by a uniform factor in [0.85, 1.15]) and timer
 * event (every rpg_time_reset, halved likewise), then active increase
 * (TR += rpg_ai_rate) and hyper-active increase (TR += i rpg_hai_rate, i
 * growing with the stages), with the TR/8 guard; a flow back at the link
 * rate is released.
 *
 * The MIB's values are for a 10 Gb/s link. A key left 0 takes the MIB's
 * value scaled to this link by the frame-time rule (as the dcqcn law's
 * presets are): with s = link_rate / 10G, rates times s, durations over s,
 * byte counts as they are, so the loop runs through the same number of
 * frames per step as on the standard's link.
 */
#include "rp.h"
#include "rp_qcn_inc.h"
#include "rp_cn.h"
#include "hostd.h"
#include "json.h"
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define QCN_MAGIC 0x51434e31u           /* "QCN1" */
#define QCN_T_RATE 0                    /* the rate increase timer */
#define QCN_REF_BPS 1e10                /* the MIB's defaults are for 10 Gb/s */

struct qcn_cfg {
	uint64_t rpg_time_reset;        /* ns; 0 = 15 ms, scaled */
	uint64_t rpg_byte_reset;        /* bytes; 0 = 150000 */
	uint64_t rpg_threshold;         /* F */
	uint64_t rpg_ai_rate;           /* bit/s; 0 = 5 Mb/s, scaled */
	uint64_t rpg_hai_rate;          /* bit/s; 0 = 50 Mb/s, scaled */
	uint64_t rpg_gd;                /* Gd = 2^-rpg_gd */
	uint64_t rpg_min_dec_fac;       /* percent */
	uint64_t rpg_min_rate;          /* bit/s; 0 = 5 Mb/s, scaled */
};

struct qcn {
	uint32_t magic;
	uint32_t pad;
	struct qcn_inc inc;
	uint64_t cnms, decreases;
	uint8_t cpid[8];                /* the CP of the last CNM */
};
_Static_assert(sizeof(struct qcn) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct qcn must fit the flow's law area");

struct rp {
	struct rp_env env;
	struct qcn_inc_cfg inc;
	double gd, min_dec;
};

static struct qcn *qcn_of(struct flow *f) { return (struct qcn *)f->law_area; }

static int qcn_create(struct rp **out, const struct rp_env *env)
{
	const struct qcn_cfg *k = env->keys;
	struct rp *rp = calloc(1, sizeof(*rp));
	double link = env->link_bps ? (double)env->link_bps : QCN_REF_BPS;
	double s = link / QCN_REF_BPS;

	if (!rp)
		return -ENOMEM;
	rp->env = *env;
	rp->inc = (struct qcn_inc_cfg){
		.rpg_time_reset = k->rpg_time_reset ? k->rpg_time_reset
						    : (uint64_t)llround(15e6 / s),
		.rpg_byte_reset = k->rpg_byte_reset ? k->rpg_byte_reset : 150000,
		.rpg_threshold = k->rpg_threshold ? (uint32_t)k->rpg_threshold : 5,
		.rpg_ai_rate = k->rpg_ai_rate ? (double)k->rpg_ai_rate : 5e6 * s,
		.rpg_hai_rate = k->rpg_hai_rate ? (double)k->rpg_hai_rate : 50e6 * s,
		.rpg_min_rate = k->rpg_min_rate ? (double)k->rpg_min_rate : 5e6 * s,
		.max_rate = link,
		/* 802.1Qau: B and T halve once fast recovery is over, and the
		 * hyper-active step grows with the stage. */
		.halve_after_fr = true,
		.hai_by_stage = true,
		.byte_jitter = true,
	};
	rp->gd = ldexp(1.0, -(int)k->rpg_gd);
	rp->min_dec = (double)k->rpg_min_dec_fac / 100.0;
	*out = rp;
	return 0;
}

static void qcn_destroy(struct rp *rp)
{
	free(rp);
}

static void qcn_arm(struct rp *rp, struct flow *f, uint64_t delay)
{
	if (rp->env.h)
		rp_timer(rp->env.h, f, QCN_T_RATE, delay);
}

static void qcn_out(const struct qcn *q, struct rp_out *o)
{
	o->by_ipd = false;
	o->rate_bps = (uint64_t)llround(q->inc.rc);
}

static void qcn_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	struct qcn *q = qcn_of(f);
	double r;

	/* Our state already (a reload, [law] persistent): resume it, with the
	 * timer its stage wants. */
	if (q->magic == QCN_MAGIC) {
		if (q->inc.rc > rp->inc.max_rate)
			q->inc.rc = rp->inc.max_rate;
		if (q->inc.rt > rp->inc.max_rate)
			q->inc.rt = rp->inc.max_rate;
		qcn_arm(rp, f, qcn_inc_period(&rp->inc, &q->inc));
		qcn_out(q, o);
		return;
	}
	rp_configured_rate(rp->env.cfg, f, o);
	r = o->by_ipd ? rp->inc.max_rate / (1.0 + o->ipd)
	    : o->rate_bps ? (double)o->rate_bps : rp->inc.max_rate;
	if (r > rp->inc.max_rate)
		r = rp->inc.max_rate;
	memset(q, 0, sizeof(*q));
	q->magic = QCN_MAGIC;
	qcn_inc_init(&q->inc, r);
	/* each flow its own jitter sequence */
	q->inc.rng = (uint32_t)((f->id + 1) * 2654435761u) ^ f->gen;
	qcn_arm(rp, f, 0);
	qcn_out(q, o);
}

/* CR's factor for a QntzFb: 1 - Gd QntzFb, at least MinDecFac. */
double rp_qcn_cut(uint32_t qntz_fb, double gd, double min_dec_fac)
{
	double x = 1.0 - gd * qntz_fb;

	return x < min_dec_fac ? min_dec_fac : x;
}

static void qcn_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			    struct rp_out *o)
{
	struct qcn *q = qcn_of(f);
	bool first_cycle;

	if (fb->kind != RP_FB_CNM || q->magic != QCN_MAGIC || fb->qntz_fb <= 0)
		return;
	q->cnms++;
	memcpy(q->cpid, fb->cpid, sizeof(q->cpid));
	if (f->pinned)
		return;
	first_cycle = q->inc.stage != QCN_LINE_RATE && !q->inc.byte_stage && !q->inc.time_stage;
	qcn_inc_decrease(&rp->inc, &q->inc,
			 q->inc.rc * rp_qcn_cut((uint32_t)fb->qntz_fb, rp->gd, rp->min_dec),
			 !first_cycle);
	q->decreases++;
	qcn_arm(rp, f, qcn_inc_period(&rp->inc, &q->inc));
	qcn_out(q, o);
}

static void qcn_on_tx(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len,
		      enum rp_limit lim, struct rp_out *o)
{
	struct qcn *q = qcn_of(f);

	if (q->magic != QCN_MAGIC || f->pinned)
		return;
	if (qcn_inc_bytes(&rp->inc, &q->inc, len)) {
		if (q->inc.stage == QCN_LINE_RATE)
			qcn_arm(rp, f, 0);      /* released: no timer */
		qcn_out(q, o);
	}
}

static void qcn_on_timer(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o)
{
	struct qcn *q = qcn_of(f);

	if (q->magic != QCN_MAGIC || f->pinned || timer != QCN_T_RATE)
		return;
	qcn_inc_timer(&rp->inc, &q->inc);
	qcn_arm(rp, f, qcn_inc_period(&rp->inc, &q->inc));
	qcn_out(q, o);
}

static void qcn_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	const struct qcn *q = (const struct qcn *)f->law_area;
	char cpid[17];

	if (q->magic != QCN_MAGIC)
		return;
	for (int i = 0; i < 8; i++)
		snprintf(cpid + 2 * i, 3, "%02x", q->cpid[i]);
	jw_u64(w, "cr_bps", (uint64_t)llround(q->inc.rc));
	jw_u64(w, "tr_bps", (uint64_t)llround(q->inc.rt));
	jw_str(w, "stage", qcn_inc_stage_name(&q->inc));
	jw_u64(w, "byte_stage", q->inc.byte_stage);
	jw_u64(w, "time_stage", q->inc.time_stage);
	jw_str(w, "cpid", q->cnms ? cpid : "");
	jw_u64(w, "cnms", q->cnms);
	jw_u64(w, "decreases", q->decreases);
	jw_u64(w, "increases", q->inc.increases);
}

static double g_cr(const struct rp *rp, const struct flow *f)
{
	const struct qcn *q = (const struct qcn *)f->law_area;

	return q->magic == QCN_MAGIC ? q->inc.rc / 8 : 0;
}

static double g_tr(const struct rp *rp, const struct flow *f)
{
	const struct qcn *q = (const struct qcn *)f->law_area;

	return q->magic == QCN_MAGIC ? q->inc.rt / 8 : 0;
}

static double g_stage(const struct rp *rp, const struct flow *f)
{
	const struct qcn *q = (const struct qcn *)f->law_area;

	return q->magic == QCN_MAGIC ? q->inc.stage : 0;
}

static const struct rp_gauge qcn_gauges[] = {
	{ "current_rate_bytes_per_second", "QCN current rate CR of the flow, bytes/s", g_cr },
	{ "target_rate_bytes_per_second", "QCN target rate TR of the flow, bytes/s", g_tr },
	{ "stage", "QCN stage of the flow: 0 line rate, 1 fast recovery, 2 active, 3 hyper-active",
	  g_stage },
};

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct qcn_cfg, f), \
	  .size = sizeof(((struct qcn_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item qcn_keys[] = {
	K("rpg_time_reset", CFG_DURATION, rpg_time_reset, "0", 1, 0,
	  "qcn: T, the rate increase timer (rpgTimeReset); 0 = the MIB's 15 ms at 10 Gb/s, "
	  "scaled to link_rate (durations / s)"),
	K("rpg_byte_reset", CFG_SIZE, rpg_byte_reset, "0", 1, 0,
	  "qcn: B, bytes sent between byte-counter events (rpgByteReset); 0 = the MIB's 150000"),
	K("rpg_threshold", CFG_UINT, rpg_threshold, "5", 1, 255,
	  "qcn: F, fast-recovery steps per counter (rpgThreshold, MIB: 5)"),
	K("rpg_ai_rate", CFG_RATE, rpg_ai_rate, "0", 1, 0,
	  "qcn: R_AI, added to TR per active-increase step (rpgAiRate); 0 = the MIB's 5 Mb/s at "
	  "10 Gb/s, scaled (rates x s)"),
	K("rpg_hai_rate", CFG_RATE, rpg_hai_rate, "0", 1, 0,
	  "qcn: R_HAI, hyper-active step (rpgHaiRate); 0 = the MIB's 50 Mb/s at 10 Gb/s, scaled"),
	K("rpg_gd", CFG_UINT, rpg_gd, "7", 0, 16,
	  "qcn: Gd = 2^-rpg_gd, the cut per unit of QntzFb (rpgGd, MIB: 7, Gd = 1/128)"),
	K("rpg_min_dec_fac", CFG_UINT, rpg_min_dec_fac, "50", 1, 100,
	  "qcn: a CNM leaves at least this percent of CR (rpgMinDecFac, MIB: 50)"),
	K("rpg_min_rate", CFG_RATE, rpg_min_rate, "0", 1, 0,
	  "qcn: the lowest CR (rpgMinRate); 0 = the MIB's 5 Mb/s at 10 Gb/s, scaled"),
};
#undef K
_Static_assert(sizeof(struct qcn_cfg) <= HD_LAW_CFG_MAX, "qcn_cfg fits [law]'s store");

const struct rp_ops rp_qcn_ops = {
	.name = "qcn",
	.help = "the IEEE 802.1Qau reaction point: a CNM cuts CR by Gd QntzFb (at most to "
		"MinDecFac), then fast recovery, active and hyper-active increase on a byte counter "
		"and a timer; MIB defaults scaled from 10 Gb/s",
	.create = qcn_create,
	.destroy = qcn_destroy,
	.init = qcn_init,
	.on_tx = qcn_on_tx,
	.on_feedback = qcn_on_feedback,
	.on_timer = qcn_on_timer,
	.describe = qcn_describe,
	.state_size = sizeof(struct qcn),
	.keys = qcn_keys,
	.nkeys = sizeof(qcn_keys) / sizeof(qcn_keys[0]),
	.cfg_size = sizeof(struct qcn_cfg),
	.gauges = qcn_gauges,
	.ngauges = sizeof(qcn_gauges) / sizeof(qcn_gauges[0]),
};
