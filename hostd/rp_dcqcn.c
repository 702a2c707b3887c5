// SPDX-License-Identifier: BSD-2-Clause
/*
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015, §3.3), the sender's rate law:
 *
 *   on a CNP     Rt <- Rc, Rc <- max(Rmin, Rc (1 - alpha / 2)),
 *                alpha <- (1 - g) alpha + g; the increase counters and
 *                the rate timer start over, the alpha timer too
 *   alpha timer  (no CNP for a period) alpha <- (1 - g) alpha
 *   increase     802.1Qau's stages on a timer and a byte counter
 *                (rp_qcn_inc.c): fast recovery, active, hyper-active
 *
 * A flow starts at its configured rate (the link rate unless [law] rate
 * says otherwise) with alpha = 1, as the NICs and the reference
 * simulators do, and is rate-limited from its first CNP until the
 * increase brings it back to the link rate.
 *
 * Parameters come from a preset (the paper's, the authors' ns-3 code's,
 * the HPCC simulator's, Mellanox NIC defaults), given there at a
 * reference link rate and scaled to this host's link_rate by one rule,
 * the frame-time rule of the Santos experiments: with s = link_rate /
 * reference rate, rates are multiplied by s, durations divided by s, byte
 * counts kept. A key set to a value other than 0 replaces
 * the preset's, as it is, unscaled. docs/dcqcn.md has the tables.
 *
 * Timers: 0 the rate increase timer, 1 the alpha timer (rp_timer()).
 * The receiver's CNP interval is this law's too (cnp_interval below):
 * hostd's CNP notification point takes it when [hostd] cnp_interval is 0.
 */
#include "rp.h"
#include "rp_dcqcn.h"
#include "hostd.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The alpha timer stops once a released flow's alpha is this small. */
#define DCQCN_ALPHA_FLOOR 1e-4

/* ---- presets ------------------------------------------------------------------ */

struct dcqcn_preset_vals {
	double ref_bps;                 /* the link rate the values are for */
	double g, alpha0;
	uint64_t alpha_timer, cnp_interval, time_reset;        /* ns */
	uint64_t byte_reset;            /* bytes; 0 = no byte counter */
	uint32_t threshold;
	double ai, hai, rmin;           /* bit/s */
	uint64_t dec_interval;          /* ns; 0 = a cut per CNP, at once */
	bool clamp, alpha_periodic, alpha_before_cut;
	bool stage_before, hai_by_stage, halve_in_hyper;
};

/* ../shared/specs/bcn-qcn-dcqcn.md, "DCQCN", and each source as cited;
 * where a column has no value the choice is said (docs/dcqcn.md,
 * "Presets", which maps every name). */
static const struct dcqcn_preset_vals dcqcn_presets[] = {
	/* Zhu et al. 2015 §3.3 at 40G: every CNP cuts, Rt <- Rc, then alpha
	 * takes the CNP; R_HAI and Rmin are not in the paper (the authors'
	 * ns-3 code's), 10 MB byte counter. */
	[DCQCN_PAPER] = { .ref_bps = 40e9, .g = 1.0 / 256, .alpha0 = 1.0, .alpha_timer = 55000,
			  .cnp_interval = 50000, .time_reset = 55000, .byte_reset = 10000000,
			  .threshold = 5, .ai = 40e6, .hai = 200e6, .rmin = 100e6, .clamp = true },
	/* The authors' ns-3 code (bobzhuyb/ns3-rdma, mix/config.txt and
	 * qbb-net-device.cc), 40G: alpha 0.5 at start and updated before the
	 * cut, BYTE_COUNTER 300 000 000, RP_TIMER 60 us, CLAMP_TARGET_RATE 1,
	 * hyper-active steps of R_HAI x (min(stages) - F + 1) with B and T
	 * halved while hyper-active. */
	[DCQCN_NS3] = { .ref_bps = 40e9, .g = 1.0 / 256, .alpha0 = 0.5, .alpha_timer = 55000,
			.cnp_interval = 50000, .time_reset = 60000, .byte_reset = 300000000,
			.threshold = 5, .ai = 40e6, .hai = 200e6, .rmin = 100e6, .clamp = true,
			.alpha_before_cut = true, .hai_by_stage = true, .halve_in_hyper = true },
	/* The HPCC simulator's DCQCN (alibaba-edu/High-Precision-Congestion-
	 * Control, simulation/run.py `--cc dcqcn` and rdma-hw.cc's *Mlx) at
	 * 25G: alpha on a 1 us clock, a cut at most every 4 us
	 * (RATE_DECREASE_INTERVAL), CLAMP_TARGET_RATE 0, RP_TIMER 300 us, no
	 * byte counter, F = 1 compared before the count, R_AI 5 and R_HAI 50
	 * Mb/s at 25G (5 bw/25, 50 bw/25), MIN_RATE 1000 Mb/s, a CNP for
	 * every marked frame (its ACKs). */
	[DCQCN_HPCC] = { .ref_bps = 25e9, .g = 1.0 / 256, .alpha0 = 1.0, .alpha_timer = 1000,
			 .cnp_interval = 0, .time_reset = 300000, .byte_reset = 0, .threshold = 1,
			 .ai = 5e6, .hai = 50e6, .rmin = 1000e6, .dec_interval = 4000,
			 .alpha_periodic = true, .stage_before = true },
	/* NVIDIA/Mellanox ConnectX defaults, taken at 40G: dce_tcp_g 1019 is
	 * the weight alpha keeps (g = 5/1024), alpha updated every dce_tcp_rtt
	 * (1 us), rate_reduce_monitor_period 4 us, clamp_tgt_rate 0 with
	 * clamp_tgt_rate_after_time_inc 1 (Rt <- Rc after an increase),
	 * initial_alpha_value 1023/1024, rpg_time_reset 300 us, rpg_byte_reset
	 * 32767 x 64 B, rpg_threshold 1, AI/HAI 5/50 Mb/s, rpg_min_rate 1 Mb/s;
	 * no CNP interval of its own: the paper's 50 us. */
	[DCQCN_NIC] = { .ref_bps = 40e9, .g = 5.0 / 1024, .alpha0 = 1023.0 / 1024, .alpha_timer = 1000,
			.cnp_interval = 50000, .time_reset = 300000, .byte_reset = 32767ull * 64,
			.threshold = 1, .ai = 5e6, .hai = 50e6, .rmin = 1e6, .dec_interval = 4000,
			.alpha_periodic = true },
};

static const char *const dcqcn_preset_names[] = { "paper", "ns3-rdma", "hpcc", "nic", NULL };
static const char *const dcqcn_clamp_names[] = { "preset", "yes", "no", NULL };

/* ---- keys --------------------------------------------------------------------- */

_Static_assert(sizeof(struct dcqcn_cfg) <= HD_LAW_CFG_MAX, "dcqcn_cfg fits [law]'s store");

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct dcqcn_cfg, f), \
	  .size = sizeof(((struct dcqcn_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item dcqcn_keys[] = {
	{ .key = "preset", .type = CFG_ENUM, .off = offsetof(struct dcqcn_cfg, preset),
	  .def = "paper", .names = dcqcn_preset_names, .reload = CFG_LIVE,
	  .help = "dcqcn: the parameter set, scaled to link_rate (rates x s, durations / s, "
		  "s = link_rate / the set's link rate): paper (Zhu et al. 2015, 40G), ns3-rdma "
		  "(40G), hpcc (25G), nic (Mellanox defaults, 40G); docs/dcqcn.md" },
	K("g", CFG_REAL, g, "0", 0, 1,
	  "dcqcn: weight of a CNP in alpha, at most 1, e.g. 1/256; 0 = the preset's"),
	K("alpha_timer", CFG_DURATION, alpha_timer, "0", 0, 60000000000LL,
	  "dcqcn: alpha <- (1 - g) alpha after this long without a CNP; 0 = the preset's, scaled"),
	K("cnp_interval", CFG_DURATION, cnp_interval, "0", 0, 1000000000,
	  "dcqcn: the receiver's CNP interval when [hostd] cnp_interval is 0; 0 = the preset's, scaled"),
	K("rpg_time_reset", CFG_DURATION, rpg_time_reset, "0", 0, 60000000000LL,
	  "dcqcn: the rate increase timer (T); 0 = the preset's, scaled"),
	K("rpg_byte_reset", CFG_SIZE, rpg_byte_reset, "0", 0, 1LL << 40,
	  "dcqcn: bytes sent between byte-counter increase steps (B); 0 = the preset's"),
	K("rpg_threshold", CFG_UINT, rpg_threshold, "0", 0, 1000,
	  "dcqcn: fast-recovery steps per counter (F); 0 = the preset's"),
	K("rpg_ai_rate", CFG_RATE, rpg_ai_rate, "0", 0, 400000000000LL,
	  "dcqcn: rate added to the target per active-increase step (R_AI); 0 = the preset's, scaled"),
	K("rpg_hai_rate", CFG_RATE, rpg_hai_rate, "0", 0, 400000000000LL,
	  "dcqcn: rate added per hyper-active step (R_HAI); 0 = the preset's, scaled"),
	K("rpg_min_rate", CFG_RATE, rpg_min_rate, "0", 0, 400000000000LL,
	  "dcqcn: the lowest rate a cut leaves (Rmin); 0 = the preset's, scaled"),
	K("rate_decrease_interval", CFG_DURATION, rate_decrease_interval, "0", 0, 60000000000LL,
	  "dcqcn: at most one cut per interval, at its end, if a CNP came in it (the HPCC "
	  "simulator's RATE_DECREASE_INTERVAL, the NIC's rate_reduce_monitor_period); 0 = the "
	  "preset's, scaled (paper, ns3-rdma: none, a cut per CNP)"),
	{ .key = "clamp_target_rate", .type = CFG_ENUM, .off = offsetof(struct dcqcn_cfg, clamp_target_rate),
	  .def = "preset", .names = dcqcn_clamp_names, .reload = CFG_LIVE,
	  .help = "dcqcn: yes = every cut sets the target rate to the current (Zhu et al. §3.3); "
		  "no = only when an increase step came since the last cut (the HPCC simulator's "
		  "CLAMP_TARGET_RATE 0, the NIC's clamp_tgt_rate 0); preset = the preset's" },
	K("rate_on_first_cnp", CFG_RATE, rate_on_first_cnp, "0", 0, 400000000000LL,
	  "dcqcn: the current and target rate a flow's first CNP sets before its cut (the NIC's "
	  "rate_to_set_on_first_cnp); 0 = the rate is kept (every preset)"),
};
#undef K

/* ---- the instance ----------------------------------------------------------------- */

struct rp {
	struct rp_env env;
	struct dcqcn_params p;
};
_Static_assert(sizeof(struct dcqcn) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct dcqcn fits the flow's law area");

static struct dcqcn *dcqcn_of(struct flow *f)
{
	return (struct dcqcn *)f->law_area;
}

static uint64_t dcqcn_dur(uint64_t set, uint64_t preset, double s)
{
	return set ? set : (uint64_t)llround((double)preset / s);
}

static double dcqcn_rate(uint64_t set, double preset, double s)
{
	return set ? (double)set : preset * s;
}

/* Resolve the keys against the preset for this link. */
static void dcqcn_resolve(struct dcqcn_params *r, const struct dcqcn_cfg *k, uint64_t link_bps)
{
	const struct dcqcn_preset_vals *p = &dcqcn_presets[k->preset];
	double s = (double)link_bps / p->ref_bps;

	r->scale = s;
	r->g = k->g > 0 ? k->g : p->g;
	r->alpha0 = p->alpha0;
	r->alpha_timer = dcqcn_dur(k->alpha_timer, p->alpha_timer, s);
	r->cnp_interval = dcqcn_dur(k->cnp_interval, p->cnp_interval, s);
	r->rate_decrease_interval = dcqcn_dur(k->rate_decrease_interval, p->dec_interval, s);
	r->clamp = k->clamp_target_rate == DCQCN_CLAMP_PRESET ? p->clamp
		   : k->clamp_target_rate == DCQCN_CLAMP_YES;
	r->rate_on_first_cnp = (double)k->rate_on_first_cnp;
	r->alpha_periodic = p->alpha_periodic;
	r->alpha_before_cut = p->alpha_before_cut;
	r->inc = (struct qcn_inc_cfg){
		.rpg_time_reset = dcqcn_dur(k->rpg_time_reset, p->time_reset, s),
		.rpg_byte_reset = k->rpg_byte_reset ? k->rpg_byte_reset : p->byte_reset,
		.rpg_threshold = k->rpg_threshold ? (uint32_t)k->rpg_threshold : p->threshold,
		.rpg_ai_rate = dcqcn_rate(k->rpg_ai_rate, p->ai, s),
		.rpg_hai_rate = dcqcn_rate(k->rpg_hai_rate, p->hai, s),
		.rpg_min_rate = dcqcn_rate(k->rpg_min_rate, p->rmin, s),
		.max_rate = (double)link_bps,
		/* DCQCN keeps B and T after fast recovery (the ns-3 code
		 * halves them while hyper-active). */
		.halve_after_fr = false,
		.hai_by_stage = p->hai_by_stage,
		.halve_in_hyper = p->halve_in_hyper,
		.stage_before = p->stage_before,
	};
}

static int dcqcn_create(struct rp **out, const struct rp_env *env)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->env = *env;
	dcqcn_resolve(&rp->p, env->keys, env->link_bps);
	*out = rp;
	return 0;
}

const struct dcqcn_params *dcqcn_params(const struct rp *rp)
{
	return &rp->p;
}

static void dcqcn_destroy(struct rp *rp)
{
	free(rp);
}

static void dcqcn_arm(struct rp *rp, struct flow *f, unsigned k, uint64_t delay)
{
	/* (No hostd in the law's unit tests: they run the timers by hand.) */
	if (rp->env.h)
		rp_timer(rp->env.h, f, k, delay);
}

static void dcqcn_out(const struct dcqcn *d, struct rp_out *o)
{
	o->by_ipd = false;
	o->rate_bps = (uint64_t)llround(d->inc.rc);
}

static void dcqcn_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	struct dcqcn *d = dcqcn_of(f);
	double r;

	rp_configured_rate(rp->env.cfg, f, o);
	r = o->by_ipd ? (double)rp->env.link_bps / (1.0 + o->ipd)
	    : o->rate_bps ? (double)o->rate_bps : (double)rp->env.link_bps;
	if (r > (double)rp->env.link_bps)
		r = (double)rp->env.link_bps;
	memset(d, 0, sizeof(*d));
	d->magic = DCQCN_MAGIC;
	qcn_inc_init(&d->inc, r);
	d->alpha = rp->p.alpha0;
	dcqcn_arm(rp, f, DCQCN_T_RATE, 0);
	dcqcn_arm(rp, f, DCQCN_T_ALPHA, 0);
	dcqcn_arm(rp, f, DCQCN_T_DEC, 0);
	dcqcn_out(d, o);
}

static void dcqcn_alpha_arm(struct rp *rp, struct flow *f, struct dcqcn *d)
{
	d->alpha_armed = 1;
	dcqcn_arm(rp, f, DCQCN_T_ALPHA, rp->p.alpha_timer);
}

/* The cut (Zhu et al. §3.3) with alpha as it is: Rt <- Rc (always, or
 * only after an increase step since the last cut: clamp), Rc <-
 * max(Rmin, Rc (1 - alpha / 2)); the increase starts over. */
static void dcqcn_cut(struct rp *rp, struct flow *f, struct dcqcn *d)
{
	bool clamp = rp->p.clamp || d->inc.byte_stage + d->inc.time_stage > 0;

	qcn_inc_decrease(&rp->p.inc, &d->inc, d->inc.rc * (1.0 - d->alpha / 2.0), clamp);
	d->cuts++;
	dcqcn_arm(rp, f, DCQCN_T_RATE, qcn_inc_period(&rp->p.inc, &d->inc));
	if (!rp->p.alpha_periodic) {
		/* Zhu et al. §3.3: the cut used alpha as it was; now alpha
		 * moves toward 1 (unless it took the CNP before the cut), and
		 * decays only after a period without a cut. With a decrease
		 * interval that is once per cut, not per CNP. */
		if (!rp->p.alpha_before_cut)
			d->alpha = (1.0 - rp->p.g) * d->alpha + rp->p.g;
		dcqcn_alpha_arm(rp, f, d);
	}
}

static void dcqcn_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			      struct rp_out *o)
{
	const struct dcqcn_params *p = &rp->p;
	struct dcqcn *d = dcqcn_of(f);

	if (fb->kind != RP_FB_CNP || d->magic != DCQCN_MAGIC)
		return;
	d->cnps++;
	if (f->pinned)
		return;
	if (d->cnps == 1 && p->rate_on_first_cnp > 0) {
		double r = p->rate_on_first_cnp < p->inc.max_rate ? p->rate_on_first_cnp
								  : p->inc.max_rate;

		d->inc.rc = d->inc.rt = r;
	}
	if (p->alpha_periodic) {
		/* Alpha moves on its clock; the first CNP only starts it
		 * (rdma-hw.cc cnp_received_mlx). */
		d->alpha_cnp = d->cnps > 1;
		if (!d->alpha_armed)
			dcqcn_alpha_arm(rp, f, d);
	} else if (p->alpha_before_cut) {
		d->alpha = (1.0 - p->g) * d->alpha + p->g;
	}
	if (p->rate_decrease_interval) {
		/* At most one cut per interval, at its end (the HPCC
		 * simulator's CheckRateDecreaseMlx, the NIC's
		 * rate_reduce_monitor_period). */
		d->dec_pending = 1;
		if (!d->dec_armed) {
			d->dec_armed = 1;
			dcqcn_arm(rp, f, DCQCN_T_DEC, p->rate_decrease_interval);
		}
		dcqcn_out(d, o);
		return;
	}
	/* One cut per CNP, however many marks it stands for. */
	dcqcn_cut(rp, f, d);
	dcqcn_out(d, o);
}

static void dcqcn_on_tx(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len,
			enum rp_limit lim, struct rp_out *o)
{
	struct dcqcn *d = dcqcn_of(f);

	if (d->magic != DCQCN_MAGIC || f->pinned)
		return;
	if (qcn_inc_bytes(&rp->p.inc, &d->inc, len)) {
		/* The timer runs on (the counters are independent) unless the
		 * step released the flow. */
		if (d->inc.stage == QCN_LINE_RATE)
			dcqcn_arm(rp, f, DCQCN_T_RATE, 0);
		dcqcn_out(d, o);
	}
}

static void dcqcn_on_timer(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o)
{
	const struct dcqcn_params *p = &rp->p;
	struct dcqcn *d = dcqcn_of(f);

	if (d->magic != DCQCN_MAGIC || f->pinned)
		return;
	if (timer == DCQCN_T_RATE) {
		qcn_inc_timer(&p->inc, &d->inc);
		dcqcn_arm(rp, f, DCQCN_T_RATE, qcn_inc_period(&p->inc, &d->inc));
		dcqcn_out(d, o);
	} else if (timer == DCQCN_T_ALPHA) {
		d->alpha_armed = 0;
		d->alpha = (1.0 - p->g) * d->alpha + (d->alpha_cnp ? p->g : 0.0);
		d->alpha_cnp = 0;
		d->alpha_decays++;
		if (d->inc.stage != QCN_LINE_RATE || d->alpha > DCQCN_ALPHA_FLOOR || d->dec_pending)
			dcqcn_alpha_arm(rp, f, d);
	} else if (timer == DCQCN_T_DEC) {
		d->dec_armed = 0;
		if (!d->dec_pending)
			return;
		d->dec_pending = 0;
		dcqcn_cut(rp, f, d);
		/* The next cut one interval after this one at the earliest. */
		d->dec_armed = 1;
		dcqcn_arm(rp, f, DCQCN_T_DEC, p->rate_decrease_interval);
		dcqcn_out(d, o);
	}
}

static uint64_t dcqcn_cnp_interval(const struct rp *rp)
{
	return rp->p.cnp_interval;
}

static void dcqcn_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	const struct dcqcn *d = (const struct dcqcn *)f->law_area;

	if (d->magic != DCQCN_MAGIC)
		return;
	jw_u64(w, "rc_bps", (uint64_t)llround(d->inc.rc));
	jw_u64(w, "rt_bps", (uint64_t)llround(d->inc.rt));
	jw_double(w, "alpha", d->alpha);
	jw_str(w, "stage", qcn_inc_stage_name(&d->inc));
	jw_u64(w, "byte_stage", d->inc.byte_stage);
	jw_u64(w, "time_stage", d->inc.time_stage);
	jw_u64(w, "cnps", d->cnps);
	jw_u64(w, "cuts", d->cuts);
	jw_u64(w, "increases", d->inc.increases);
	jw_u64(w, "alpha_decays", d->alpha_decays);
}

/* Per-flow gauges for Prometheus (l2cc_hostd_dcqcn_<metric>). */
static double g_rc(const struct rp *rp, const struct flow *f)
{
	const struct dcqcn *d = (const struct dcqcn *)f->law_area;

	return d->magic == DCQCN_MAGIC ? d->inc.rc / 8 : 0;
}

static double g_rt(const struct rp *rp, const struct flow *f)
{
	const struct dcqcn *d = (const struct dcqcn *)f->law_area;

	return d->magic == DCQCN_MAGIC ? d->inc.rt / 8 : 0;
}

static double g_alpha(const struct rp *rp, const struct flow *f)
{
	const struct dcqcn *d = (const struct dcqcn *)f->law_area;

	return d->magic == DCQCN_MAGIC ? d->alpha : 0;
}

static double g_stage(const struct rp *rp, const struct flow *f)
{
	const struct dcqcn *d = (const struct dcqcn *)f->law_area;

	return d->magic == DCQCN_MAGIC ? d->inc.stage : 0;
}

static const struct rp_gauge dcqcn_gauges[] = {
	{ "current_rate_bytes_per_second", "DCQCN current rate Rc of the flow, bytes/s (Prometheus base unit)", g_rc },
	{ "target_rate_bytes_per_second", "DCQCN target rate Rt of the flow, bytes/s", g_rt },
	{ "alpha_ratio", "DCQCN alpha of the flow (the cut is alpha / 2)", g_alpha },
	{ "stage", "Increase stage: 0 line rate, 1 fast recovery, 2 active, 3 hyper-active", g_stage },
};

const struct rp_ops rp_dcqcn_ops = {
	.name = "dcqcn",
	.help = "DCQCN (Zhu et al. 2015): a CNP cuts Rc by alpha/2 (alpha an EWMA of CNPs, "
		"decaying on a timer); 802.1Qau's fast recovery, active and hyper-active increase; "
		"presets scaled to link_rate",
	.keys = dcqcn_keys,
	.nkeys = sizeof(dcqcn_keys) / sizeof(dcqcn_keys[0]),
	.cfg_size = sizeof(struct dcqcn_cfg),
	.create = dcqcn_create,
	.destroy = dcqcn_destroy,
	.init = dcqcn_init,
	.on_tx = dcqcn_on_tx,
	.on_feedback = dcqcn_on_feedback,
	.on_timer = dcqcn_on_timer,
	.describe = dcqcn_describe,
	.cnp_interval = dcqcn_cnp_interval,
	.gauges = dcqcn_gauges,
	.ngauges = sizeof(dcqcn_gauges) / sizeof(dcqcn_gauges[0]),
};
