/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Path Rate Control (McAlpine 2005) shared by its two halves in hostd: the
 * law at the path's source (rp_prc.c) and the notification point at its
 * egress (np_l2ci.c), which reads the feedback spacing from the same [law]
 * keys. The controller's arithmetic is here as well, so the unit tests pin
 * it against its design without a daemon.
 */
#ifndef L2CC_HOSTD_RP_PRC_H
#define L2CC_HOSTD_RP_PRC_H

#include <stdint.h>

/* The most taus one feedback counts for: a long silence is not a long climb
 * (the egress answers within fb_max while data flows, 5 taus by default). */
#define PRC_S_MAX 10.0

/* [law] keys of law = prc (at most HD_LAW_CFG_MAX bytes). */
struct prc_law_cfg {
	double target;          /* T: the level held, percent of a port buffer */
	double w;               /* weight of the level's change (the D term) */
	double gi, gd;          /* increase and decrease gains */
	double ai, md;          /* additive increase below target (x the host link rate), and
				 * multiplicative decrease above it, per tau */
	uint64_t tau;           /* ns: the time one step's gains are for */
	uint64_t ecn_queue;     /* PRC_ECN: CE on ECT packets of a path queued above this; 0 off */
	double dmax;            /* largest cut per feedback, 0 .. 1 */
	uint64_t rmin_div;      /* Rmin = path speed / rmin_div */
	uint64_t discover_tries;
	uint64_t discover_timeout;      /* ns, per try */
	uint64_t fb_bytes;      /* egress: a FEEDBACK per this many bytes of the path ... */
	uint64_t fb_min, fb_max;        /* ns: ... no closer than fb_min, no further than fb_max */
	uint64_t fb_timeout_gaps;       /* source: no feedback for this many gaps ... */
	uint64_t fb_timeout_rtts;       /* ... or this many min RTTs (the longer): level 0 */
};

/*
 * One feedback step, in percent (level and prev) and bit/s, over dt_ns
 * since the path's previous feedback: with s = dt / tau (1 for a path's
 * first feedback), Fb = (T - L) - w (L - L') / s and, s at most PRC_S_MAX,
 *   Fb >= 0: R += s (Gi Fb/100 + (L < T ? ai : 0)) U, up to path_bps;
 *   Fb <  0: R *= 1 - min(Dmax, s (Gd |Fb|/100 + (L > T ? md : 0))),
 *            down to path_bps / rmin_div.
 * U, the unit of increase, is the same for every path (hostd gives its
 * own link rate): paths of different speeds that share a bottleneck then
 * climb alike and share it equally; an increase in units of the path's
 * own speed gave a path behind a 10:1 slower link a tenth of the others'
 * share at a bottleneck they all cross (the McAlpine system's server 3).
 * Scaling by dt makes the law a rate of change in time, whatever the
 * feedback frequency: the egress answers per bytes, so a fast path hears
 * more often and would otherwise climb faster than a slow one. ai and md
 * keep the rates moving a little around the target, which is what brings
 * paths that share a bottleneck to equal rates (additive increase,
 * multiplicative decrease: Chiu and Jain 1989).
 */
static inline uint64_t prc_step(const struct prc_law_cfg *k, uint64_t rate, uint64_t path_bps,
				uint64_t unit_bps, double level, double prev, uint64_t dt_ns)
{
	double r = (double)rate, cut, rmin = (double)path_bps / (double)k->rmin_div;
	double s = dt_ns && k->tau ? (double)dt_ns / (double)k->tau : 1.0, fb;

	/* The D term is the level's change per tau, however far apart. */
	fb = (k->target - level) - k->w * (level - prev) / (s > 1e-3 ? s : 1e-3);
	if (s > PRC_S_MAX)
		s = PRC_S_MAX;
	if (fb >= 0) {
		r += s * (k->gi * (fb / 100.0) + (level < k->target ? k->ai : 0)) *
		     (double)unit_bps;
		if (r > (double)path_bps)
			r = (double)path_bps;
	} else {
		cut = s * (k->gd * -fb / 100.0 + (level > k->target ? k->md : 0));
		r *= 1.0 - (cut < k->dmax ? cut : k->dmax);
	}
	if (r < rmin)
		r = rmin;
	return r < 1.0 ? 1 : (uint64_t)r;
}

#endif
