// SPDX-License-Identifier: BSD-2-Clause
/*
 * InfiniBand congestion control at the source (InfiniBand Architecture
 * Specification 1.2.1, Annex A10, the channel adapter's CACongestionSetting
 * and CongestionControlTable; Gran, Zahavi, Reinemo, Skeie, Shainer and
 * Lysne 2011, §II.2 — "Gran" below).
 *
 * Each flow holds an index into the congestion control table, its CCTI.
 * A BECN (a CNP for each marked frame it stands for, or an ACK with ECE)
 * raises it by ccti_increase, up to ccti_limit. One timer per priority (the
 * SL's CCTI_Timer) lowers the CCTI of every flow of that priority by one
 * each time it runs out, never below ccti_min — all of them together, the
 * spec's lockstep, not a timer per flow. The timer starts on a BECN and
 * runs while some flow of its priority is above ccti_min.
 *
 * The table's 16-bit entries hold CCT_Shift in bits 15..14 and
 * CCT_Multiplier in 13..0; the inter-packet delay after a frame is its own
 * time times multiplier / 2^shift (Linux hfi1's reading), so a flow at
 * entry e runs at link / (1 + multiplier / 2^shift).
 *
 * A flow's priority (SL) is its key's priority with granularity = prio
 * (SL-level CC: one flow per priority); flows by destination or 5-tuple
 * (QP-level) count as priority 0, since hostd keeps a flow's frames in one
 * queue whatever their PCP.
 */
#include "rp.h"
#include "hostd.h"
#include "json.h"

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IBCC_MAGIC 0x49424343u          /* "IBCC" */
#define IBCC_CCT_MAX 1024               /* 16 blocks of 64 entries (the spec's most) */
#define IBCC_NSL 8
#define IBCC_TIMER_UNIT_NS 1024         /* the spec's CCTI_Timer unit, 1.024 us */
/* The default table: entry i delays i/8 of a frame time (shift 3), 128 entries. */
#define IBCC_LINEAR_SHIFT 3
#define IBCC_LINEAR_N 128

/* [law] keys of law = ibcc: 128 bytes, HD_LAW_CFG_MAX. The table itself is
 * built in the instance (create), from `cct`. */
struct ibcc_law_cfg {
	uint64_t ccti_increase;
	uint64_t ccti_limit;
	uint64_t ccti_min;
	uint64_t timer_ns;              /* derived: ccti_timer in ns */
	char ccti_timer[16];
	char cct[80];
};
_Static_assert(sizeof(struct ibcc_law_cfg) <= HD_LAW_CFG_MAX, "ibcc keys fit [law]'s store");

struct ibcc_flow {
	uint32_t magic;
	uint16_t ccti;
	uint8_t sl;
	uint8_t pad;
	uint64_t becns;                 /* BECNs learnt of (marked frames: CNP or ACK) */
	uint64_t increases;             /* CCTI raised by a BECN */
	uint64_t decreases;             /* CCTI lowered by its priority's timer */
	uint16_t ccti_max;              /* the highest CCTI it reached */
};
_Static_assert(sizeof(struct ibcc_flow) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct ibcc_flow must fit the flow's law area");

struct rp {
	struct rp_env env;
	const struct ibcc_law_cfg *k;
	uint32_t ncct;
	uint16_t cct[IBCC_CCT_MAX];
	bool running[IBCC_NSL];         /* the priority's CCTI_Timer is armed */
	uint64_t ticks[IBCC_NSL];
};

/* ---- the table ----------------------------------------------------------- */

/* `linear[:STEP[:SHIFT]]`, `@FILE`, or entries inline: numbers (0x... or
 * decimal) separated by commas or blanks; a file may have # comments. */
static int ibcc_parse_list(const char *s, uint16_t *cct, uint32_t *n, char *err, size_t errlen,
			   const char *where)
{
	*n = 0;
	while (*s) {
		char *end;
		unsigned long v;

		if (isspace((unsigned char)*s) || *s == ',') {
			s++;
			continue;
		}
		if (*s == '#') {
			while (*s && *s != '\n')
				s++;
			continue;
		}
		errno = 0;
		v = strtoul(s, &end, 0);
		if (end == s || errno || v > 0xffff) {
			snprintf(err, errlen, "cct %s: \"%.12s\" is not a 16-bit entry, expected "
				 "e.g. 0x4010 (shift 1, multiplier 16)", where, s);
			return -EINVAL;
		}
		if (*n == IBCC_CCT_MAX) {
			snprintf(err, errlen, "cct %s: more than %d entries", where, IBCC_CCT_MAX);
			return -EINVAL;
		}
		cct[(*n)++] = (uint16_t)v;
		s = end;
	}
	if (!*n) {
		snprintf(err, errlen, "cct %s: no entries", where);
		return -EINVAL;
	}
	return 0;
}

static int ibcc_cct_build(const char *spec, uint16_t *cct, uint32_t *n, char *err, size_t errlen)
{
	unsigned long step = 1, shift = IBCC_LINEAR_SHIFT;
	char buf[IBCC_CCT_MAX * 8 + 1];
	size_t got;
	FILE *fp;
	int ret;

	if (!strncmp(spec, "linear", 6)) {
		int m = 0;

		if (spec[6] == ':')
			m = sscanf(spec + 7, "%lu:%lu", &step, &shift);
		if ((spec[6] && (spec[6] != ':' || m < 1)) || shift > 3 || step == 0 ||
		    step * (IBCC_LINEAR_N - 1) > 0x3fff) {
			snprintf(err, errlen, "cct = \"%s\", expected linear, linear:STEP or "
				 "linear:STEP:SHIFT (SHIFT 0..3, STEP * 127 < 16384)", spec);
			return -EINVAL;
		}
		for (uint32_t i = 0; i < IBCC_LINEAR_N; i++)
			cct[i] = (uint16_t)(shift << 14 | (i * step));
		*n = IBCC_LINEAR_N;
		return 0;
	}
	if (spec[0] != '@')
		return ibcc_parse_list(spec, cct, n, err, errlen, "inline");
	fp = fopen(spec + 1, "r");
	if (!fp) {
		snprintf(err, errlen, "cct file %s: %s", spec + 1, strerror(errno));
		return -errno;
	}
	got = fread(buf, 1, sizeof(buf) - 1, fp);
	ret = ferror(fp) || !feof(fp) ? -EINVAL : 0;
	fclose(fp);
	if (ret) {
		snprintf(err, errlen, "cct file %s: unreadable or over %zu bytes", spec + 1,
			 sizeof(buf) - 1);
		return ret;
	}
	buf[got] = 0;
	return ibcc_parse_list(buf, cct, n, err, errlen, spec + 1);
}

/* link / (1 + multiplier / 2^shift): the rate at one entry. */
static double ibcc_entry_rate(uint16_t e, double link)
{
	return link / (1.0 + (double)(e & 0x3fff) / (double)(1u << (e >> 14)));
}

/* ---- the keys ---------------------------------------------------------------- */

/* A bare number counts the spec's 1.024 us units; with a unit it is a
 * duration (elsewhere a bare duration means ms: not here). */
static int ibcc_timer_parse(const char *s, uint64_t *ns)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end != s && !*end && !errno && v <= 1000000000ull) {
		*ns = v * IBCC_TIMER_UNIT_NS;
		return 0;
	}
	return cfg_parse_duration(s, ns);
}

static int ibcc_check(void *cfg, char *err, size_t errlen)
{
	struct ibcc_law_cfg *k = cfg;
	uint16_t *cct = malloc(IBCC_CCT_MAX * sizeof(*cct));
	uint32_t n;
	int ret;

	if (!cct)
		return -ENOMEM;
	ret = ibcc_timer_parse(k->ccti_timer, &k->timer_ns);
	if (ret || !k->timer_ns) {
		snprintf(err, errlen, "ccti_timer = \"%s\", expected a number of 1.024 us units "
			 "(e.g. 150) or a duration with its unit (e.g. 500us), above 0",
			 k->ccti_timer);
		ret = -EINVAL;
		goto out;
	}
	ret = ibcc_cct_build(k->cct, cct, &n, err, errlen);
	if (ret)
		goto out;
	if (k->ccti_limit >= n || k->ccti_min > k->ccti_limit) {
		snprintf(err, errlen, "ccti_min %llu, ccti_limit %llu with a table of %u entries: "
			 "expected ccti_min <= ccti_limit <= %u", (unsigned long long)k->ccti_min,
			 (unsigned long long)k->ccti_limit, n, n - 1);
		ret = -EINVAL;
	}
out:
	free(cct);
	return ret;
}

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct ibcc_law_cfg, f), \
	  .size = sizeof(((struct ibcc_law_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item ibcc_keys[] = {
	K("ccti_increase", CFG_UINT, ccti_increase, "1", 0, 1023,
	  "IB spec 1.2.1 A10 CACongestionSetting CCTI_Increase: added to a flow's CCTI per BECN "
	  "(a marked frame a CNP or ACK reports)"),
	K("ccti_limit", CFG_UINT, ccti_limit, "127", 0, IBCC_CCT_MAX - 1,
	  "CongestionControlTable CCTI_Limit: the highest CCTI, at most the table's last index"),
	K("ccti_min", CFG_UINT, ccti_min, "0", 0, IBCC_CCT_MAX - 1,
	  "CACongestionSetting CCTI_Min: flows start here and the timer lowers them no further"),
	K("ccti_timer", CFG_STR, ccti_timer, "150", 1, 0,
	  "CACongestionSetting CCTI_Timer, one per priority (SL): each expiry lowers the CCTI "
	  "of every flow of the priority by one. A bare number is the spec's 1.024 us units "
	  "(150 = 153.6 us); with a unit it is a duration (500us, 5ms) - unlike other "
	  "durations, a bare number is not milliseconds here"),
	K("cct", CFG_STR, cct, "linear", 1, 0,
	  "CongestionControlTable entries (shift bits 15..14, multiplier 13..0; rate = link / "
	  "(1 + multiplier/2^shift)): linear = 128 entries, entry i = i/8 frame times of delay "
	  "(linear:STEP:SHIFT for i*STEP/2^SHIFT); inline numbers (0x0000,0x4001,...); or "
	  "@FILE with one or more per line, # comments"),
};
#undef K

/* ---- events ------------------------------------------------------------------- */

static struct ibcc_flow *ibcc_area(struct flow *f)
{
	return f->law_state ? f->law_state : (void *)f->law_area;
}

static const struct ibcc_flow *ibcc_carea(const struct flow *f)
{
	return f->law_state ? f->law_state : (const void *)f->law_area;
}

static void ibcc_out(const struct rp *rp, const struct flow *f, const struct ibcc_flow *s,
		     struct rp_out *o)
{
	struct rp_out c;
	uint32_t i = s->ccti < rp->ncct ? s->ccti : rp->ncct - 1;
	double r = ibcc_entry_rate(rp->cct[i], (double)rp->env.link_bps);

	rp_configured_rate(rp->env.cfg, f, &c);
	o->by_ipd = false;
	o->ipd = 0;
	o->rate_bps = r >= 1.0 ? (uint64_t)llround(r) : 1;
	o->window = c.window;
}

/* The flow's state, started if it is not ours (a fresh flow, a law change). */
static struct ibcc_flow *ibcc_get(struct rp *rp, struct flow *f)
{
	struct ibcc_flow *s = ibcc_area(f);

	if (s->magic != IBCC_MAGIC) {
		memset(s, 0, sizeof(*s));
		s->magic = IBCC_MAGIC;
		s->ccti = (uint16_t)rp->k->ccti_min;
	}
	s->sl = f->key.type == FLOW_KEY_PRIO && f->key.prio < IBCC_NSL ? f->key.prio : 0;
	if (s->ccti > rp->k->ccti_limit)
		s->ccti = (uint16_t)rp->k->ccti_limit;
	if (s->ccti < rp->k->ccti_min)
		s->ccti = (uint16_t)rp->k->ccti_min;
	return s;
}

/* Arm the priority's timer unless it runs. */
static void ibcc_arm(struct rp *rp, unsigned sl)
{
	if (rp->running[sl] || !rp->env.h)
		return;
	rp->running[sl] = true;
	rp_tick(rp->env.h, sl, rp_now(rp->env.h) + rp->k->timer_ns);
}

static void ibcc_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	struct ibcc_flow *s = ibcc_get(rp, f);

	ibcc_out(rp, f, s, o);
	/* Resumed above ccti_min (a reload, persistent state): the timer
	 * must run to bring it down. */
	if (s->ccti > rp->k->ccti_min)
		ibcc_arm(rp, s->sl);
}

static void ibcc_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			     struct rp_out *o)
{
	struct ibcc_flow *s;
	uint64_t n, c;

	if (fb->kind == RP_FB_CNP)
		n = fb->marked ? fb->marked : 1;
	else if (fb->kind == RP_FB_ACK)
		n = fb->marked;
	else
		return;         /* not InfiniBand's feedback */
	if (!n)
		return;
	s = ibcc_get(rp, f);
	s->becns += n;
	if (f->pinned)
		return;
	c = s->ccti + n * rp->k->ccti_increase;
	c = c > rp->k->ccti_limit ? rp->k->ccti_limit : c;
	if (c != s->ccti) {
		s->increases++;
		s->ccti = (uint16_t)c;
		if (s->ccti > s->ccti_max)
			s->ccti_max = s->ccti;
	}
	ibcc_out(rp, f, s, o);
	if (s->ccti > rp->k->ccti_min)
		ibcc_arm(rp, s->sl);
}

struct ibcc_step {
	struct rp *rp;
	unsigned sl;
	bool above;             /* a flow of the priority is still above ccti_min */
};

static int ibcc_step_flow(void *ctx, struct flow *f)
{
	struct ibcc_step *st = ctx;
	struct rp *rp = st->rp;
	struct ibcc_flow *s = ibcc_area(f);
	struct rp_out o;

	if (s->magic != IBCC_MAGIC || f->pinned)
		return 0;
	s = ibcc_get(rp, f);
	if (s->sl != st->sl || s->ccti <= rp->k->ccti_min)
		return 0;
	s->ccti--;
	s->decreases++;
	o = *rp_current(rp->env.h, f);
	ibcc_out(rp, f, s, &o);
	rp_apply(rp->env.h, f, &o);
	st->above |= s->ccti > rp->k->ccti_min;
	return 0;
}

/* The priority's CCTI_Timer ran out: every flow of it one step down, in
 * lockstep; again later while any is above ccti_min. */
static void ibcc_on_tick(struct rp *rp, unsigned tick, uint64_t now)
{
	struct ibcc_step st = { .rp = rp, .sl = tick };

	if (tick >= IBCC_NSL)
		return;
	rp->running[tick] = false;
	rp->ticks[tick]++;
	rp_foreach(rp->env.h, ibcc_step_flow, &st);
	if (st.above) {
		rp->running[tick] = true;
		rp_tick(rp->env.h, tick, now + rp->k->timer_ns);
	}
}

static void ibcc_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	const struct ibcc_flow *s = ibcc_carea(f);
	uint32_t i;

	if (s->magic != IBCC_MAGIC)
		return;
	i = s->ccti < rp->ncct ? s->ccti : rp->ncct - 1;
	jw_u64(w, "ccti", s->ccti);
	jw_u64(w, "cct_entry", rp->cct[i]);
	jw_u64(w, "rate_bps", (uint64_t)llround(ibcc_entry_rate(rp->cct[i],
								(double)rp->env.link_bps)));
	jw_u64(w, "sl", s->sl);
	jw_u64(w, "becns", s->becns);
	jw_u64(w, "increases", s->increases);
	jw_u64(w, "decreases", s->decreases);
	jw_u64(w, "ccti_max", s->ccti_max);
}

static int ibcc_create(struct rp **out, const struct rp_env *env)
{
	struct rp *rp = calloc(1, sizeof(*rp));
	char err[256];
	int ret;

	if (!rp)
		return -ENOMEM;
	rp->env = *env;
	rp->k = env->keys;
	ret = ibcc_cct_build(rp->k->cct, rp->cct, &rp->ncct, err, sizeof(err));
	if (ret) {
		/* Checked at load; a file changed since is an error now. */
		free(rp);
		return ret;
	}
	*out = rp;
	return 0;
}

static void ibcc_destroy(struct rp *rp)
{
	free(rp);
}

/* Per-flow gauges for Prometheus (l2cc_hostd_ibcc_<metric>); the BECNs
 * are the flow's marks (l2cc_hostd_flow_marks_total). */
static double g_ccti(const struct rp *rp, const struct flow *f)
{
	const struct ibcc_flow *s = ibcc_carea(f);

	return s->magic == IBCC_MAGIC ? s->ccti : 0;
}

static const struct rp_gauge ibcc_gauges[] = {
	{ "ccti", "InfiniBand CC congestion control table index (CCTI) of the flow", g_ccti },
};

const struct rp_ops rp_ibcc_ops = {
	.name = "ibcc",
	.help = "InfiniBand CC (IB spec 1.2.1 A10; Gran et al. 2011 §II.2): a BECN adds "
		"ccti_increase to the flow's CCTI, a per-priority timer lowers every flow of the "
		"priority by one; rate = link / (1 + CCT[CCTI] multiplier / 2^shift)",
	.keys = ibcc_keys,
	.nkeys = sizeof(ibcc_keys) / sizeof(ibcc_keys[0]),
	.cfg_size = sizeof(struct ibcc_law_cfg),
	.check_keys = ibcc_check,
	.create = ibcc_create,
	.destroy = ibcc_destroy,
	.init = ibcc_init,
	.on_feedback = ibcc_on_feedback,
	.on_tick = ibcc_on_tick,
	.describe = ibcc_describe,
	.state_size = sizeof(struct ibcc_flow),
	.gauges = ibcc_gauges,
	.ngauges = sizeof(ibcc_gauges) / sizeof(ibcc_gauges[0]),
};
