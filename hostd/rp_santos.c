// SPDX-License-Identifier: BSD-2-Clause
/*
 * The rate-control laws of Santos, Turner and Janakiraman, "End-to-End
 * Congestion Control for InfiniBand" (Infocom 2003, HPL-2002-359; "Santos"
 * below): FIMD and LIPD (§V-C, §V-D) and the AIMD they compare them with
 * (§VI-B), driven by the source response of Turner, Santos and
 * Janakiraman, "An Approach for Congestion Control in InfiniBand"
 * (HPL-2001-277; "Turner" below, §5): APSN, RPI, RWL, a fixed window.
 *
 * Rmax is the link rate, Rmin = Rmax / rmin_div (256 in the papers).
 * Every flow starts at its configured rate, the link rate unless [rate] or
 * [law] rate/ipd say otherwise (Santos §VI-B: "flows are initialized to the
 * maximum rate limit").
 *
 * Decrease: one per mark on a frame sent after the last decrease (Turner
 * §5.1.3.2: APSN is the seq the next frame will carry, f->seq_next, at the
 * time of the decrease). APSN moves on decreases only, not on increases as
 * Turner's §5.1.3.1 step 3 has it: these laws increase on every unmarked
 * frame, and with a window above one frame moving APSN there would discard
 * the marks of every frame in flight at each ACK. A mark on a frame sent
 * before an increase was sent at a lower rate than the current one, so it
 * still argues for a decrease; one sent before a decrease has been answered.
 *
 * Increase: per unmarked ACKed frame while the flow's last frame waited on
 * its rate (reliable mode, RWL = rate), or per frame sent while rate-limited
 * (unreliable mode, Turner §5.2). A flow limited by neither has shown
 * nothing about the rate and does not increase. The window is fixed (Santos
 * §IV-B: "a fixed window size of one packet"), so a window-limited flow does
 * not increase either: its rate limit is not what holds it back. The window
 * is max(1, [law] window) in reliable mode; raise it when the path holds
 * more than one frame in flight at the link rate.
 *
 * Continuous mode applies f_inc / f_dec to a real rate (law_fn_inc/dec).
 * Discrete mode ([law] discrete) has only the InfiniBand rates
 * Rmax / (1 + ipd) and runs on tables over ipd, built once per (law, m,
 * rmin_div) from the same formulas (Santos §V-D: "lookup tables ... the
 * equations are just needed at design time"): dec[ipd], the ipd after a
 * mark, and u[ipd], the time F_inc takes from Rmin to that rate. RPI is
 * kept in time, as Turner's normalised RPI table is (§5.1.3.1, "the value 1
 * equals the time required to transmit one maximum-size packet"): a frame
 * at ipd i spends (1 + i) frame times at Rmax of it, and the rate steps up
 * whenever the time spent reaches the next rate's u, carrying the rest over.
 * So the discrete rate is always the InfiniBand rate at or just below
 * where the continuous law would be, and recovers in the same time; integer
 * frame counts per ipd would be off by up to half a frame per step (LIPD
 * recovered from Rmin in 116 ms instead of 134). A decrease keeps the
 * fraction of the way to the next rate (Turner: RPI is not re-initialised).
 *
 * Frames count as whole packets, as in the papers (footnotes 8, 9): a flow
 * of frames smaller than its largest recovers in fewer seconds.
 *
 * The three laws share this file: one instance (struct rp) per hostd,
 * which knows its law and keeps the discrete tables for the configuration
 * it was created with.
 */
#include "rp.h"
#include "rp_santos.h"
#include "hostd.h"
#include "json.h"

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SANTOS_MAGIC 0x4a545300u        /* "STJ" + the law in the low byte */

struct santos {
	uint32_t magic;         /* SANTOS_MAGIC | law_fn: the area holds our state */
	uint8_t discrete;       /* the mode rate/ipd/acc are in */
	uint8_t rwl;            /* enum rp_limit of the last frame (Turner §5.1.2 RWL) */
	uint16_t pad;
	uint32_t ipd;           /* discrete: rate = Rmax / (1 + ipd) */
	uint32_t window;        /* frames in flight, reliable mode; 0 otherwise */
	uint32_t apsn;          /* marks on frames before this seq are stale (Turner APSN) */
	uint32_t rpi;           /* frames still to count before the next increase */
	double rate;            /* bit/s (discrete: Rmax / (1 + ipd)) */
	double rmax;            /* the link rate at the last event (describe's ipd) */
	double acc;             /* discrete: frame times at Rmax counted at this ipd */
	uint64_t marks;         /* marked frames learnt of (ACK or CNP) */
	uint64_t stale;         /* marked ACKs/CNPs ignored by APSN */
	uint64_t decreases, increases;
	uint64_t held;          /* frames that did not count: not rate-limited */
	uint64_t resumed;       /* init continued existing state (reload, persistent) */
};
_Static_assert(sizeof(struct santos) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct santos must fit the flow's law area");

struct santos_tab {
	bool valid;
	double m;
	uint32_t n;
	uint16_t dec[LAW_IPD_LEVELS];   /* ipd after a mark */
	double u[LAW_IPD_LEVELS];       /* F_inc's time from Rmin to Rmax / (1 + ipd),
					 * in frame times at Rmax (Trec = n of them) */
};

struct rp {
	enum law_fn fn;
	struct rp_env env;
	struct santos_tab tab;          /* discrete mode, for the configuration in force */
};

/* What an event needs from the configuration, sanitised: a config not made
 * by hd_cfg_load (a test's) may leave m and rmin_div zero. */
struct sp {
	enum law_fn fn;
	double m, rmax, rmin;
	uint32_t n;             /* rmin_div: Rmin = Rmax / n; levels in discrete mode */
	bool discrete, reliable;
	uint32_t window;
};

static void sp_get(const struct rp *rp, struct sp *p)
{
	const struct hd_cfg *c = rp->env.cfg;
	const struct santos_cfg *k = rp->env.keys;

	p->fn = rp->fn;
	p->discrete = k->discrete;
	p->n = k->rmin_div >= 2 ? (k->rmin_div > 65536 ? 65536 : (uint32_t)k->rmin_div) : 256;
	if (p->discrete && p->n > LAW_IPD_LEVELS)
		p->n = LAW_IPD_LEVELS;
	p->m = k->m > 1.0 && isfinite(k->m) ? k->m : 2.0;
	p->rmax = rp->env.link_bps ? (double)rp->env.link_bps : 1.0;
	p->rmin = p->rmax / p->n;
	p->reliable = c->mode == HD_MODE_RELIABLE;
	p->window = p->reliable ? (c->window ? (uint32_t)c->window : 1) : 0;
}

static double clamp(double r, double lo, double hi)
{
	return r < lo ? lo : r > hi ? hi : r;
}

/* ---- the response functions (Santos §V) ---------------------------------- */

double law_fn_dec(enum law_fn fn, double m, double rmin, double rmax, double r)
{
	r = clamp(r, rmin, rmax);
	/* §V-D: one more packet time of inter-packet delay. */
	if (fn == LAW_FN_LIPD)
		return clamp(rmax / (rmax / r + 1.0), rmin, rmax);
	/* §V-C (and AIMD, §VI-B): multiplicative. */
	return clamp(r / m, rmin, rmax);
}

double law_fn_inc(enum law_fn fn, double m, double rmin, double rmax, double r, double frames)
{
	double t_trec, den, v;

	r = clamp(r, rmin, rmax);
	/* t = frames / r (r in frames per second), Trec = 1 / Rmin (Condition 3). */
	t_trec = frames * rmin / r;
	switch (fn) {
	case LAW_FN_FIMD:
		/* §V-C: F_inc^r(t) = r * m^(t / Trec). */
		v = r * pow(m, t_trec);
		break;
	case LAW_FN_LIPD:
		/* §V-D: F_inc^r(t) = Rmax / (Rmax / r - t / Trec). */
		den = rmax / r - t_trec;
		v = den <= 1.0 ? rmax : rmax / den;
		break;
	default:
		/* §VI-B: linear in time at the slope that takes Rmin to
		 * f_dec^-1(Rmin) = m * Rmin in Trec: (m - 1) * Rmin / Trec. */
		v = r + (m - 1.0) * rmin * t_trec;
		break;
	}
	return clamp(v, rmin, rmax);
}

/* ---- discrete mode: the laws as tables over ipd ---------------------------- */

/* Time F_inc takes from Rmin to the rate x * Rmax, in frame times at Rmax. */
static double santos_u(enum law_fn fn, double m, uint32_t n, double x)
{
	switch (fn) {
	case LAW_FN_FIMD:       /* Rmin * m^(t / Trec) = x */
		return n * log(n * x) / log(m);
	case LAW_FN_LIPD:       /* Rmax / (Rmax / Rmin - t / Trec) = x */
		return n * (n - 1.0 / x);
	default:                /* Rmin + (m - 1) * Rmin * t / Trec = x */
		return n * (n * x - 1.0) / (m - 1.0);
	}
}

static const struct santos_tab *santos_tab(struct rp *rp, const struct sp *p)
{
	struct santos_tab *t = &rp->tab;

	if (t->valid && t->m == p->m && t->n == p->n)
		return t;
	for (uint32_t i = 0; i < p->n; i++) {
		double d;

		t->u[i] = santos_u(p->fn, p->m, p->n, 1.0 / (1.0 + i));
		/* The ipd nearest f_dec's rate, and at least one step down:
		 * a mark always costs something (Condition 1). */
		d = p->fn == LAW_FN_LIPD ? i + 1.0 : nearbyint(p->m * (1.0 + i) - 1.0);
		if (d < i + 1.0)
			d = i + 1.0;
		if (d > p->n - 1.0)
			d = p->n - 1.0;
		t->dec[i] = (uint16_t)d;
	}
	t->m = p->m;
	t->n = p->n;
	t->valid = true;
	return t;
}

/* Frames the flow still has to count at its ipd before the next increase. */
static uint32_t santos_rpi(struct rp *rp, const struct sp *p, const struct santos *s)
{
	const struct santos_tab *t;
	double left;

	if (!p->discrete)
		return s->rate < p->rmax ? 1 : 0;
	if (!s->ipd)
		return 0;
	t = santos_tab(rp, p);
	left = ceil((t->u[s->ipd - 1] - t->u[s->ipd] - s->acc) / (s->ipd + 1.0));
	return left < 1 ? 1 : left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
}

/* frames frames counted at the flow's own rate: climb along F_inc. */
static void santos_increase(struct rp *rp, const struct sp *p, struct santos *s,
			    uint64_t frames)
{
	const struct santos_tab *t;

	if (!p->discrete) {
		/* f_inc per frame (Turner §3: N unmarked frames in one ACK act as
		 * N ACKs); stops at Rmax, so the loop is bounded. */
		for (; frames && s->rate < p->rmax; frames--) {
			s->rate = law_fn_inc(p->fn, p->m, p->rmin, p->rmax, s->rate, 1.0);
			s->increases++;
		}
		return;
	}
	t = santos_tab(rp, p);
	while (frames && s->ipd) {
		double d = s->ipd + 1.0, pos = t->u[s->ipd] + s->acc;
		double need = ceil((t->u[s->ipd - 1] - pos) / d - 1e-9);
		uint64_t k = need < 1 ? 1 : need >= (double)frames ? frames : (uint64_t)need;

		pos += (double)k * d;
		frames -= k;
		/* Tolerance: u of a rate reached exactly (FIMD m = 2 from Rmin in
		 * one frame) must not miss it by a rounding error. */
		while (s->ipd && pos >= t->u[s->ipd - 1] - 1e-9 * (1.0 + fabs(pos))) {
			s->ipd--;
			s->increases++;
		}
		s->acc = s->ipd ? fmax(pos - t->u[s->ipd], 0.0) : 0.0;
	}
	s->rate = p->rmax / (1.0 + s->ipd);
}

static void santos_decrease(struct rp *rp, const struct sp *p, struct santos *s)
{
	const struct santos_tab *t;
	uint32_t i, j;
	double frac;

	s->decreases++;
	if (!p->discrete) {
		s->rate = law_fn_dec(p->fn, p->m, p->rmin, p->rmax, s->rate);
		return;
	}
	t = santos_tab(rp, p);
	i = s->ipd;
	j = t->dec[i];
	/* The same share of the way to the next rate; at Rmin a mark takes
	 * the flow back to Rmin itself, as f_dec does. */
	frac = i && j > i ? s->acc / (t->u[i - 1] - t->u[i]) : 0.0;
	s->ipd = j;
	s->acc = frac * (t->u[j - 1] - t->u[j]);
	s->rate = p->rmax / (1.0 + j);
}

/* ---- state and output ---------------------------------------------------- */

static struct santos *santos_area(struct flow *f)
{
	return f->law_state ? f->law_state : (void *)f->law_area;
}

static const struct santos *santos_carea(const struct flow *f)
{
	return f->law_state ? f->law_state : (const void *)f->law_area;
}

/* The InfiniBand rate at or below rate. */
static uint32_t santos_ipd_of(const struct sp *p, double rate)
{
	double ipd = ceil(p->rmax / rate - 1.0 - 1e-9);

	return ipd <= 0 ? 0 : ipd >= p->n - 1.0 ? p->n - 1 : (uint32_t)ipd;
}

/* A flow's first state: its configured rate (Rmax by default). */
static void santos_fresh(const struct rp *rp, const struct sp *p, struct flow *f,
			 struct santos *s)
{
	struct rp_out c;

	memset(s, 0, sizeof(*s));
	s->magic = SANTOS_MAGIC | p->fn;
	rp_configured_rate(rp->env.cfg, f, &c);
	if (c.by_ipd)
		s->rate = p->rmax / (1.0 + c.ipd);
	else
		s->rate = c.rate_bps ? (double)c.rate_bps : p->rmax;
	s->rate = clamp(s->rate, p->rmin, p->rmax);
	s->discrete = p->discrete;
	if (p->discrete) {
		s->ipd = c.by_ipd ? (c.ipd >= p->n ? p->n - 1 : c.ipd) : santos_ipd_of(p, s->rate);
		s->rate = p->rmax / (1.0 + s->ipd);
	}
}

/* Continue a state under the current configuration: the rate (the ipd in
 * discrete mode) and the progress toward the next increase carry over. */
static void santos_resume(struct rp *rp, const struct sp *p, struct santos *s)
{
	if (p->discrete && s->discrete) {
		const struct santos_tab *t = santos_tab(rp, p);

		if (s->ipd >= p->n)
			s->ipd = p->n - 1;
		s->acc = s->ipd ? clamp(s->acc, 0.0, t->u[s->ipd - 1] - t->u[s->ipd]) : 0.0;
		s->rate = p->rmax / (1.0 + s->ipd);
	} else if (p->discrete) {
		s->ipd = santos_ipd_of(p, clamp(s->rate, p->rmin, p->rmax));
		s->acc = 0;
		s->rate = p->rmax / (1.0 + s->ipd);
	} else {
		s->rate = clamp(s->rate, p->rmin, p->rmax);
	}
	s->discrete = p->discrete;
}

/* The flow's state, started or brought to the current mode if need be. */
static struct santos *santos_get(struct rp *rp, struct flow *f, struct sp *p)
{
	struct santos *s = santos_area(f);

	sp_get(rp, p);
	if (s->magic != (SANTOS_MAGIC | rp->fn)) {
		santos_fresh(rp, p, f, s);
		s->apsn = f->seq_next;
	} else if (s->discrete != p->discrete || (p->discrete && s->ipd >= p->n)) {
		santos_resume(rp, p, s);
	}
	s->window = p->window;
	s->rmax = p->rmax;
	return s;
}

static void santos_out(struct rp *rp, const struct sp *p, struct santos *s, struct rp_out *o)
{
	s->rpi = santos_rpi(rp, p, s);
	o->by_ipd = p->discrete;
	o->ipd = p->discrete ? s->ipd : 0;
	o->rate_bps = p->discrete ? 0 : (uint64_t)llround(s->rate);
	if (!p->discrete && !o->rate_bps)
		o->rate_bps = 1;        /* 0 would mean unpaced */
	o->window = s->window;
}

/* ---- events -------------------------------------------------------------- */

static void santos_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	struct santos *s = santos_area(f);
	struct sp p;

	sp_get(rp, &p);
	if (s->magic == (SANTOS_MAGIC | rp->fn)) {
		santos_resume(rp, &p, s);
		s->resumed++;
	} else {
		santos_fresh(rp, &p, f, s);
	}
	/* Sequence numbers and the last frame's limit belong to one flow. */
	s->apsn = f->seq_next;
	s->rwl = RP_LIMIT_NONE;
	s->window = p.window;
	s->rmax = p.rmax;
	santos_out(rp, &p, s, o);
}

static void santos_on_tx(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len,
			 enum rp_limit lim, struct rp_out *o)
{
	struct sp p;
	struct santos *s = santos_get(rp, f, &p);

	s->rwl = (uint8_t)lim;
	/* A rate set from the control socket is the operator's, not ours. */
	if (f->pinned)
		return;
	if (!p.reliable) {
		/* Turner §5.2: RPI counts frames sent while rate-limited. */
		if (lim == RP_LIMIT_RATE)
			santos_increase(rp, &p, s, 1);
		else
			s->held++;
	}
	santos_out(rp, &p, s, o);
}

/* One mark, on the frame with sequence seq: a decrease unless the frame
 * left before the last one (Turner §5.1.3.2). */
static void santos_mark(struct rp *rp, const struct sp *p, struct santos *s, struct flow *f,
			uint32_t seq)
{
	if ((int32_t)(seq - s->apsn) < 0) {
		s->stale++;
		return;
	}
	santos_decrease(rp, p, s);
	s->apsn = f->seq_next;
}

/* Reliable mode: an ACK covering `unmarked` + `marked` frames up to seq.
 * Turner §3: a coalesced ACK is N - 1 unmarked frames, then the marked one
 * (seq). Unmarked frames count only in reliable mode and only for a flow
 * whose last frame waited on its rate (§5.1.3.1). */
static void santos_ack(struct rp *rp, const struct sp *p, struct santos *s, struct flow *f,
		       const struct rp_fb *fb)
{
	if (fb->unmarked) {
		if (p->reliable && s->rwl == RP_LIMIT_RATE)
			santos_increase(rp, p, s, fb->unmarked);
		else
			s->held += fb->unmarked;
	}
	if (fb->marked)
		santos_mark(rp, p, s, f, fb->seq);
}

static void santos_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			       struct rp_out *o)
{
	struct sp p;
	struct santos *s;

	if (fb->kind != RP_FB_ACK && fb->kind != RP_FB_CNP)
		return;         /* not the papers' feedback */
	s = santos_get(rp, f, &p);
	if (fb->kind == RP_FB_ACK)
		s->marks += fb->marked;
	else
		s->marks += fb->marked ? fb->marked : 1;
	if (f->pinned)
		return;
	if (fb->kind == RP_FB_ACK)
		santos_ack(rp, &p, s, f, fb);
	else
		/* Turner §5.2: one decrease per CNP, however many marks it
		 * covers; seq is the last marked frame's. */
		santos_mark(rp, &p, s, f, fb->seq);
	santos_out(rp, &p, s, o);
}

static void santos_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	static const char *const rwl_names[] = { "none", "rate", "window" };
	const struct santos *s = santos_carea(f);

	if ((s->magic & ~0xffu) != SANTOS_MAGIC)
		return;
	jw_str(w, "mode", s->discrete ? "discrete" : "continuous");
	jw_u64(w, "rate_bps", (uint64_t)llround(s->rate));
	if (s->discrete)
		jw_u64(w, "ipd", s->ipd);
	else
		jw_double(w, "ipd", s->rmax / s->rate - 1.0);
	jw_u64(w, "window", s->window);
	jw_u64(w, "rpi", s->rpi);
	jw_u64(w, "apsn", s->apsn);
	jw_str(w, "rwl", s->rwl < 3 ? rwl_names[s->rwl] : "?");
	jw_u64(w, "marks", s->marks);
	jw_u64(w, "stale_marks", s->stale);
	jw_u64(w, "decreases", s->decreases);
	jw_u64(w, "increases", s->increases);
	jw_u64(w, "held", s->held);
	jw_u64(w, "resumed", s->resumed);
}

/* ---- the three laws and their keys ---------------------------------------- */

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct santos_cfg, f), \
	  .size = sizeof(((struct santos_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item santos_keys[] = {
	K("rmin_div", CFG_UINT, rmin_div, "256", 2, 65536,
	  "the lowest rate is link_rate / rmin_div (Rmin = Rmax / 256 in the papers); at most "
	  "256 with discrete = yes"),
	/* A number that need not be whole (the papers' m > 1): the schema has
	 * no real type, so it is text, parsed and checked in santos_check(). */
	K("m", CFG_STR, m_text, "2", 1, 0,
	  "fimd, aimd: a mark divides the rate by m, a number above 1 and at most rmin_div "
	  "(e.g. 2 or 1.5)"),
	K("discrete", CFG_BOOL, discrete, "no", 1, 0,
	  "only the InfiniBand IPD rates link_rate / (1 + ipd), ipd 0 .. rmin_div - 1, the laws "
	  "as tables over ipd; no = any rate in [Rmin, link_rate]"),
};
#undef K
_Static_assert(sizeof(struct santos_cfg) <= HD_LAW_CFG_MAX, "santos_cfg fits [law]'s store");

/* m: a finite number in (1, rmin_div] (a larger m would take a flow at the
 * link rate below Rmin with one mark); discrete has 256 IPD values. */
static int santos_check(void *cfg, char *err, size_t errlen)
{
	struct santos_cfg *k = cfg;
	char *end;
	double m;

	errno = 0;
	m = strtod(k->m_text, &end);
	while (end != k->m_text && isspace((unsigned char)*end))
		end++;
	if (end == k->m_text || *end || errno || !isfinite(m) || m <= 1.0 ||
	    m > (double)k->rmin_div) {
		snprintf(err, errlen, "m = \"%s\", expected a number above 1 and at most rmin_div "
			 "(%llu), e.g. m = 2", k->m_text, (unsigned long long)k->rmin_div);
		return -EINVAL;
	}
	if (k->discrete && k->rmin_div > LAW_IPD_LEVELS) {
		snprintf(err, errlen, "discrete = yes with rmin_div = %llu, expected rmin_div <= %d "
			 "(InfiniBand has %d IPD values)", (unsigned long long)k->rmin_div,
			 LAW_IPD_LEVELS, LAW_IPD_LEVELS);
		return -EINVAL;
	}
	k->m = m;
	return 0;
}

static int santos_create(struct rp **out, const struct rp_env *env, enum law_fn fn)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->fn = fn;
	rp->env = *env;
	*out = rp;
	return 0;
}

static void santos_destroy(struct rp *rp)
{
	free(rp);
}

static int fimd_create(struct rp **out, const struct rp_env *env)
{
	return santos_create(out, env, LAW_FN_FIMD);
}

static int lipd_create(struct rp **out, const struct rp_env *env)
{
	return santos_create(out, env, LAW_FN_LIPD);
}

static int aimd_create(struct rp **out, const struct rp_env *env)
{
	return santos_create(out, env, LAW_FN_AIMD);
}

#define SANTOS_OPS(lname, helptext)                                                     \
	const struct rp_ops rp_##lname##_ops = {                                        \
		.name = #lname,                                                         \
		.help = helptext,                                                       \
		.create = lname##_create,                                               \
		.destroy = santos_destroy,                                              \
		.init = santos_init,                                                    \
		.on_tx = santos_on_tx,                                                  \
		.on_feedback = santos_on_feedback,                                      \
		.describe = santos_describe,                                            \
		.state_size = sizeof(struct santos),                                    \
		.keys = santos_keys,                                                    \
		.nkeys = sizeof(santos_keys) / sizeof(santos_keys[0]),                  \
		.cfg_size = sizeof(struct santos_cfg),                                  \
		.check_keys = santos_check,                                             \
	}

SANTOS_OPS(fimd, "Santos et al. 2003 FIMD: a mark divides the rate by m, an unmarked frame "
		 "multiplies it by m^(Rmin/r): back in 1/Rmin after any mark");
SANTOS_OPS(lipd, "Santos et al. 2003 LIPD: a mark adds one to the inter-packet delay, an "
		 "unmarked frame divides the rate by 1 - Rmin/Rmax: back in 1/Rmin after any mark");
SANTOS_OPS(aimd, "AIMD as Santos et al. 2003 compare it: a mark divides the rate by m, the rate "
		 "grows linearly at the slope that takes Rmin to m*Rmin in 1/Rmin");
