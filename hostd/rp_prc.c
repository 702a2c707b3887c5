// SPDX-License-Identifier: BSD-2-Clause
/*
 * Path Rate Control at the source: the host side of McAlpine, Wadekar,
 * Gupta, Sharma, Lakshmanan and Kwok, "Congestion control for switched
 * Ethernet" (2005), §5 (Method 4) and §8. A flow is a path (granularity dst):
 *
 *  DISCOVERING  a DISCOVER goes out in front of the path's first frame
 *               (rp_emit, ahead of data) and is retried discover_tries
 *               times, discover_timeout apart; meanwhile the path runs at
 *               our own link rate. The echo brings hops, the path speed
 *               (its slowest link) and the RTT: ACTIVE, R = path speed.
 *  NO_L2CI      no echo after the last try: something on the path does not
 *               speak L2CI; the path keeps its configured (static) rate.
 *  ACTIVE       each FEEDBACK carries the highest level on the path (the
 *               percent of a port buffer that frames for the path's egress
 *               take, at its most congested point) and runs one step of
 *               the controller below.
 *
 * The paper gives the protocol and the results, not the law (§10: "the
 * details of the feedback messaging control and the dynamic ingress rate
 * control" are left out). Ours, after the spec notes: hold the most
 * congested point's level at the target T, the paper's one stated knob
 * ("a queue depth target for equilibrium"), with a P+D step per feedback,
 *   Fb = (T - L) - w (L - L'),
 *   Fb >= 0: R += Gi (Fb/100) U (to path_bps at most; U the speed of the
 *            port that set L, as the FEEDBACK says, else our link rate),
 *   Fb <  0: R *= 1 - min(Dmax, Gd |Fb|/100) (to path_bps/rmin_div at least),
 * the shape of BCN's (Bergamasco 2005) and QCN's feedback Fb = -(Q_off +
 * w Q_delta), in levels rather than bytes. Additive increase in one unit
 * for every path through the congested port (its speed, whatever each
 * path's own links) and multiplicative decrease make paths that share a
 * bottleneck converge to equal rates (Chiu and Jain); the derivative term
 * damps the overshoot a feedback delay of an RTT brings. Every gain is a
 * key; docs/l2ci.md has the step response behind the defaults.
 *
 * A path that stops hearing feedback while it sends (max(fb_timeout_gaps
 * feedback gaps, fb_timeout_rtts min RTTs)) steps as if its level were 0:
 * the feedback path is broken or the egress is idle, and PAUSE remains the
 * fail-safe. The state persists across flows of a path ([law] persistent):
 * a path once discovered is not discovered again.
 */
#include "rp.h"
#include "rp_prc.h"
#include "hostd.h"
#include "json.h"
#include "wire.h"

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRC_MAGIC 0x50524331u           /* "PRC1" */

enum prc_state { PRC_DISCOVERING = 1, PRC_ACTIVE, PRC_NO_L2CI };
static const char *const prc_state_names[] = { "?", "discovering", "active", "no-l2ci" };

enum { PRC_T_DISCOVER = 0, PRC_T_FEEDBACK = 1 };

struct prc_flow {
	uint32_t magic;
	uint8_t state;          /* enum prc_state */
	uint8_t hops;
	uint8_t tries;          /* DISCOVERs sent for the current discovery */
	uint8_t max_hop;        /* of the last feedback: who set its level */
	uint64_t rate;          /* bit/s */
	uint64_t path_bps;
	uint64_t unit_bps;      /* the last feedback's setter's speed; 0: not given */
	uint64_t min_rtt_ns;
	uint64_t last_fb_ns;
	uint64_t fb_gap_ns;     /* mean gap between feedbacks (EWMA 1/8) */
	uint64_t last_tx_ns;
	uint32_t disc_seq;
	uint32_t fb_seq;        /* last feedback's (from the egress) */
	uint64_t fb_rx;
	uint64_t fb_timeouts;
	uint16_t level, prev;   /* 0.01 %: the last feedback's, and the one before */
	bool fb_armed;
};
_Static_assert(sizeof(struct prc_flow) <= FLOW_LAW_WORDS * sizeof(uint64_t),
	       "struct prc_flow must fit the flow's law area");

struct rp {
	struct rp_env env;
	const struct prc_law_cfg *k;
	uint64_t discover_tx;
};

static struct prc_flow *prc_area(struct flow *f)
{
	return f->law_state ? f->law_state : (void *)f->law_area;
}

static const struct prc_flow *prc_carea(const struct flow *f)
{
	return f->law_state ? f->law_state : (const void *)f->law_area;
}

static void prc_out(const struct rp *rp, const struct flow *f, const struct prc_flow *s,
		    struct rp_out *o)
{
	struct rp_out c;

	rp_configured_rate(rp->env.cfg, f, &c);
	if (s->state == PRC_NO_L2CI) {
		*o = c;
		return;
	}
	o->by_ipd = false;
	o->ipd = 0;
	o->rate_bps = s->rate;
	o->window = c.window;
}

/* Send the path's DISCOVER (again): 0, or -errno and it is retried later. */
static int prc_discover(struct rp *rp, struct flow *f, struct prc_flow *s)
{
	const uint8_t *me = rp->env.h ? rp_host_mac(rp->env.h) : NULL;
	struct wire_discover d = {
		.flow = f->id, .seq = ++s->disc_seq, .path_bps = rp->env.link_bps,
		.t_tx = rp->env.h ? rp_now(rp->env.h) : 0,
	};
	uint8_t buf[64];
	int len;

	s->tries++;
	if (rp->env.h)
		rp_timer(rp->env.h, f, PRC_T_DISCOVER, rp->k->discover_timeout);
	if (!me)
		return -EAGAIN;
	len = wire_build_discover(buf, sizeof(buf), f->key.mac, me, L2CC_CTRL_DISCOVER, &d);
	if (len < 0)
		return len;
	rp->discover_tx++;
	return rp_emit(rp->env.h, buf, (uint32_t)len);
}

static void prc_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	struct prc_flow *s = prc_area(f);

	if (s->magic != PRC_MAGIC) {
		memset(s, 0, sizeof(*s));
		s->magic = PRC_MAGIC;
		s->rate = rp->env.link_bps;
		s->path_bps = rp->env.link_bps;
	}
	s->fb_armed = false;
	/* A path needs its destination's MAC; and a resumed path that is
	 * active or known not to speak L2CI is not discovered again. */
	if (f->key.type != FLOW_KEY_DST || !rp->env.link_bps) {
		s->state = PRC_NO_L2CI;
	} else if (s->state != PRC_ACTIVE && s->state != PRC_NO_L2CI) {
		s->state = PRC_DISCOVERING;
		s->tries = 0;
		prc_discover(rp, f, s);
	}
	prc_out(rp, f, s, o);
}

static void prc_on_tx(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len,
		      enum rp_limit lim, struct rp_out *o)
{
	struct prc_flow *s = prc_area(f);

	s->last_tx_ns = rp->env.h ? rp_now(rp->env.h) : 0;
	/* A path sending without feedback must notice that it hears none. */
	if (s->state == PRC_ACTIVE && !s->fb_armed && rp->env.h) {
		s->fb_armed = true;
		rp_timer(rp->env.h, f, PRC_T_FEEDBACK, s->fb_gap_ns ? s->fb_gap_ns : rp->k->fb_max);
	}
}

/* How long without feedback before the path steps as if at level 0. */
static uint64_t prc_fb_timeout(const struct rp *rp, const struct prc_flow *s)
{
	uint64_t gap = s->fb_gap_ns ? s->fb_gap_ns : rp->k->fb_max;
	uint64_t a = gap * rp->k->fb_timeout_gaps, b = s->min_rtt_ns * rp->k->fb_timeout_rtts;

	return a > b ? a : b;
}

/* U: the speed of the port that set the last feedback's level, else our link. */
static uint64_t prc_unit(const struct rp *rp, const struct prc_flow *s)
{
	return s->unit_bps ? s->unit_bps : rp->env.link_bps;
}

/* A step at `level`, dt_ns after the path's previous one (0: the first). */
static void prc_step_level(struct rp *rp, struct flow *f, struct prc_flow *s, uint16_t level,
			   uint64_t dt_ns)
{
	s->prev = s->level;
	s->level = level;
	if (f->pinned)
		return;
	s->rate = prc_step(rp->k, s->rate, s->path_bps, prc_unit(rp, s), s->level / 100.0,
			   s->prev / 100.0, dt_ns);
}

static void prc_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			    struct rp_out *o)
{
	struct prc_flow *s = prc_area(f);
	uint64_t now = rp->env.h ? rp_now(rp->env.h) : 0, gap;

	if (s->magic != PRC_MAGIC)
		return;
	if (fb->kind == RP_FB_L2CI_ECHO) {
		if (!s->min_rtt_ns || fb->rtt_ns < s->min_rtt_ns)
			s->min_rtt_ns = fb->rtt_ns;
		/* Only the answer to the discovery under way starts the path. */
		if (s->state != PRC_DISCOVERING || fb->seq != s->disc_seq)
			return;
		s->state = PRC_ACTIVE;
		s->hops = fb->hops;
		s->path_bps = fb->path_bps;
		s->rate = fb->path_bps;
		if (rp->env.h)
			rp_timer(rp->env.h, f, PRC_T_DISCOVER, 0);
	} else if (fb->kind == RP_FB_L2CI) {
		/* Feedback before the echo (the echo was lost or is late) still
		 * says how full the path is: take it at the speed we know. */
		if (s->state == PRC_NO_L2CI)
			return;
		/* Older than one already taken (reordered on the way). */
		if (s->fb_rx && (int32_t)(fb->seq - s->fb_seq) <= 0)
			return;
		gap = s->fb_rx && now > s->last_fb_ns ? now - s->last_fb_ns : 0;
		if (gap)
			s->fb_gap_ns = s->fb_gap_ns ? s->fb_gap_ns - s->fb_gap_ns / 8 + gap / 8 : gap;
		s->fb_rx++;
		s->fb_seq = fb->seq;
		s->last_fb_ns = now;
		s->max_hop = fb->max_hop;
		s->unit_bps = fb->speed_bps;
		prc_step_level(rp, f, s, fb->level, gap);
		if (rp->env.h) {
			s->fb_armed = true;
			rp_timer(rp->env.h, f, PRC_T_FEEDBACK, prc_fb_timeout(rp, s));
		}
	} else {
		return;         /* not L2CI's */
	}
	prc_out(rp, f, s, o);
}

static void prc_on_timer(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o)
{
	struct prc_flow *s = prc_area(f);
	uint64_t now = rp->env.h ? rp_now(rp->env.h) : 0, to;

	if (s->magic != PRC_MAGIC)
		return;
	if (timer == PRC_T_DISCOVER) {
		if (s->state != PRC_DISCOVERING)
			return;
		if (s->tries < rp->k->discover_tries) {
			prc_discover(rp, f, s);
			return;
		}
		/* No L2CI on the path: its static rate, counted in its state. */
		s->state = PRC_NO_L2CI;
	} else if (timer == PRC_T_FEEDBACK) {
		s->fb_armed = false;
		if (s->state != PRC_ACTIVE)
			return;
		to = prc_fb_timeout(rp, s);
		/* Silent while idle is no news; silent while sending is. */
		if (now - s->last_fb_ns < to || now - s->last_tx_ns >= to) {
			if (now - s->last_tx_ns < to && rp->env.h) {
				s->fb_armed = true;
				rp_timer(rp->env.h, f, PRC_T_FEEDBACK, s->last_fb_ns + to - now);
			}
			return;
		}
		s->fb_timeouts++;
		prc_step_level(rp, f, s, 0, now - s->last_fb_ns);
		s->last_fb_ns = now;
		s->fb_armed = true;
		if (rp->env.h)
			rp_timer(rp->env.h, f, PRC_T_FEEDBACK, to);
	} else {
		return;
	}
	prc_out(rp, f, s, o);
}

static void prc_describe(const struct rp *rp, const struct flow *f, struct jw *w)
{
	const struct prc_flow *s = prc_carea(f);

	if (s->magic != PRC_MAGIC)
		return;
	jw_str(w, "state", prc_state_names[s->state < 4 ? s->state : 0]);
	jw_u64(w, "hops", s->hops);
	jw_u64(w, "path_bps", s->path_bps);
	jw_u64(w, "unit_bps", prc_unit(rp, s));
	jw_u64(w, "rate_bps", s->state == PRC_NO_L2CI && rp->env.h ?
				      rp_current(rp->env.h, f)->rate_bps : s->rate);
	jw_double(w, "min_rtt_us", s->min_rtt_ns / 1e3);
	jw_double(w, "level_pct", s->level / 100.0);
	jw_u64(w, "level_hop", s->max_hop);
	/* The same counted from us: switch 1 is ours, 0 is the egress host. */
	jw_u64(w, "level_at", s->max_hop && s->max_hop <= s->hops ? s->hops + 1u - s->max_hop : 0);
	jw_u64(w, "feedback", s->fb_rx);
	jw_u64(w, "feedback_timeouts", s->fb_timeouts);
	jw_u64(w, "discover_tries", s->tries);
}

static int prc_create(struct rp **out, const struct rp_env *env)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->env = *env;
	rp->k = env->keys;
	*out = rp;
	return 0;
}

static void prc_destroy(struct rp *rp)
{
	free(rp);
}

static double g_level(const struct rp *rp, const struct flow *f)
{
	const struct prc_flow *s = prc_carea(f);

	return s->magic == PRC_MAGIC ? s->level / 10000.0 : 0;
}

static double g_hops(const struct rp *rp, const struct flow *f)
{
	const struct prc_flow *s = prc_carea(f);

	return s->magic == PRC_MAGIC ? s->hops : 0;
}

static double g_rtt(const struct rp *rp, const struct flow *f)
{
	const struct prc_flow *s = prc_carea(f);

	return s->magic == PRC_MAGIC ? s->min_rtt_ns / 1e9 : 0;
}

static double g_state(const struct rp *rp, const struct flow *f)
{
	const struct prc_flow *s = prc_carea(f);

	return s->magic == PRC_MAGIC ? s->state : 0;
}

static const struct rp_gauge prc_gauges[] = {
	{ "level_ratio", "Highest congestion level on the path, from its last L2CI feedback "
	  "(share of a port buffer)", g_level },
	{ "hops", "Switches on the path (L2CI discover)", g_hops },
	{ "min_rtt_seconds", "Smallest discover round trip of the path", g_rtt },
	{ "state", "Path state: 1 discovering, 2 active, 3 no-l2ci (static rate)", g_state },
};

/* PRC_ECN (McAlpine 2005 §8): a path whose queue here is backed up marks
 * its ECN-capable packets, so TCP senders slow before the queue drops. */
static bool prc_ce(const struct rp *rp, const struct flow *f)
{
	return rp->k->ecn_queue && f->q.bytes > rp->k->ecn_queue;
}

static int prc_check(void *cfg, char *err, size_t errlen)
{
	struct prc_law_cfg *k = cfg;

	if (k->fb_min > k->fb_max) {
		snprintf(err, errlen, "fb_min is above fb_max, expected fb_min <= fb_max");
		return -EINVAL;
	}
	return 0;
}

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct prc_law_cfg, f), \
	  .size = sizeof(((struct prc_law_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item prc_keys[] = {
	K("target", CFG_REAL, target, "25", 0, 1000,
	  "prc: T, the level held at the path's most congested point, percent of a port buffer "
	  "(McAlpine 2005 §8: \"a queue depth target for equilibrium\"; higher = more queue "
	  "and delay, lower = queues run dry)"),
	K("w", CFG_REAL, w, "3", 0, 100,
	  "prc: weight of the level's change since the last feedback, the derivative term of "
	  "Fb = (T - L) - w (L - L')"),
	K("gi", CFG_REAL, gi, "0.05", 0, 10,
	  "prc: increase gain: Fb >= 0 adds gi * Fb/100 * this host's link rate (the rate never "
	  "above the path speed)"),
	K("gd", CFG_REAL, gd, "0.5", 0, 10,
	  "prc: decrease gain: Fb < 0 cuts the rate by gd * |Fb|/100 (at most dmax)"),
	K("dmax", CFG_REAL, dmax, "0.5", 0, 1, "prc: largest cut per feedback, 0 .. 1"),
	K("ai", CFG_REAL, ai, "0.002", 0, 1,
	  "prc: additive increase per tau while the level is below target, times this host's link "
	  "rate "
	  "(with md: what brings paths sharing a bottleneck to equal rates)"),
	K("md", CFG_REAL, md, "0.01", 0, 1,
	  "prc: multiplicative decrease per tau while the level is above target"),
	K("tau", CFG_DURATION, tau, "1ms", 0, 60000000000LL,
	  "prc: the time one step's gains stand for; a feedback dt after the last counts dt/tau "
	  "steps, so fast and slow paths change at the same pace; 0 = every "
	  "feedback one step; one feedback counts for 10 taus at most"),
	K("rmin_div", CFG_UINT, rmin_div, "256", 1, 1 << 30,
	  "prc: the lowest rate is the path speed / rmin_div"),
	K("discover_tries", CFG_UINT, discover_tries, "3", 1, 255,
	  "prc: DISCOVERs sent before the path is taken to have no L2CI (static rate)"),
	K("discover_timeout", CFG_DURATION, discover_timeout, "50ms", 1000, 60000000000LL,
	  "prc: wait for an echo this long per DISCOVER"),
	K("fb_bytes", CFG_SIZE, fb_bytes, "8K", 64, 1LL << 30,
	  "prc, at the path's egress: a FEEDBACK per this many bytes of the path's data (8K: "
	  "about 1 % of the bandwidth in 64-byte frames, the paper's figure)"),
	K("fb_min", CFG_DURATION, fb_min, "100us", 0, 60000000000LL,
	  "prc, at the egress: FEEDBACKs of a path at least this far apart"),
	K("fb_max", CFG_DURATION, fb_max, "5ms", 1000, 60000000000LL,
	  "prc, at the egress: while the path's data arrives, a FEEDBACK at least this often"),
	K("fb_timeout_gaps", CFG_UINT, fb_timeout_gaps, "4", 1, 1000,
	  "prc: a sending path that hears no feedback for this many mean feedback gaps (or "
	  "fb_timeout_rtts min RTTs, the longer) steps as if its level were 0"),
	K("fb_timeout_rtts", CFG_UINT, fb_timeout_rtts, "8", 0, 1000,
	  "prc: the same in min RTTs (from the discover)"),
	K("ecn_queue", CFG_SIZE, ecn_queue, "0", 0, 1LL << 30,
	  "prc: PRC_ECN (McAlpine 2005 §8): while a path's queue at this host holds more than "
	  "this many bytes, its ECN-capable IP packets leave with CE set (the hosts' TCP must "
	  "ask for ECN: tcp_ecn); 0 = off"),
};
#undef K

const struct rp_ops rp_prc_ops = {
	.name = "prc",
	.help = "Path Rate Control (McAlpine 2005): discover the path's hops and speed, then "
		"hold its most congested point's level at target with a P+D step per L2CI "
		"feedback",
	.keys = prc_keys,
	.nkeys = sizeof(prc_keys) / sizeof(prc_keys[0]),
	.cfg_size = sizeof(struct prc_law_cfg),
	.check_keys = prc_check,
	.create = prc_create,
	.destroy = prc_destroy,
	.init = prc_init,
	.on_tx = prc_on_tx,
	.on_feedback = prc_on_feedback,
	.on_timer = prc_on_timer,
	.describe = prc_describe,
	.state_size = sizeof(struct prc_flow),
	.gauges = prc_gauges,
	.ngauges = sizeof(prc_gauges) / sizeof(prc_gauges[0]),
	.np = "l2ci",
	.per_path = true,
	/* §8: within a path the video and IPC "cleanly stole bandwidth" from
	 * the DB traffic: a video frame does not wait out the gap of the DB
	 * frame sent before it (a frame at a slow path's rate, tens of ms at
	 * the lab's scale), only its own. */
	.pace_own_gap = true,
	.ce = prc_ce,
};
