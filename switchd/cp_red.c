// SPDX-License-Identifier: BSD-2-Clause
/*
 * RED on an output queue per priority (Floyd and Jacobson 1993), as the
 * congestion point of DCQCN (Zhu et al., SIGCOMM 2015, §3.1: ECN marking
 * with Kmin, Kmax, Pmax on the egress queue) and of the lossy and IP-ECN
 * baselines.
 *
 * The marking probability of a frame leaving output `out` at priority
 * `prio` follows the output's backlog q of that priority (bytes, every
 * input's VOQ): 0 up to kmin, linear from 0 to pmax between kmin and kmax,
 * 1 above kmax. q is the instantaneous backlog left behind the frame
 * (w_q = 0, DCQCN: the reference simulators decide at dequeue on the
 * egress queue after the frame left it) or classic RED's average
 * avg <- (1 - w_q) avg + w_q q, updated at each arrival (enqueue). The
 * idle-time correction of the 1993 paper is left out: a RED output of the
 * testbed's experiments is congested, and its average is read only when
 * a frame leaves.
 *
 * A frame chosen by the seeded generator (one stream per port) gets the
 * port's action: fecn sets FECN in its l2cc tag (DCQCN over the l2cc
 * fabric), ce sets CE in its IPv4/IPv6 header if the packet is
 * ECN-capable (the IPv4 checksum kept valid; a Not-ECT packet is passed or
 * dropped as not_ect says, RFC 3168 §7), drop drops it (the lossy
 * baseline). Counters per port and priority.
 */
#include "cp.h"
#include "config.h"
#include "cp_red.h"
#include "l2cc_shared.h"
#include "wire.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern const struct cp_ops cp_red_ops;

enum red_action { RED_FECN = 0, RED_CE, RED_DROP };
enum red_not_ect { RED_NOT_ECT_PASS = 0, RED_NOT_ECT_DROP };

struct red_cfg {
	uint64_t kmin, kmax;            /* bytes */
	double pmax, wq;
	int action;                     /* enum red_action */
	int not_ect;                    /* enum red_not_ect */
	uint64_t seed;
};

struct red_port {
	double avg[L2CC_NPRIO];         /* w_q > 0: the averaged backlog, bytes */
	uint64_t q[L2CC_NPRIO];         /* the backlog the next tx decides on */
	uint64_t rng;
	/* Counters, per priority (CP_PER_PRIO). */
	uint64_t marked[L2CC_NPRIO];    /* chosen by RED, action fecn */
	uint64_t ce_set[L2CC_NPRIO];    /* chosen, action ce: left with CE */
	uint64_t not_ect[L2CC_NPRIO];   /* chosen, action ce, not ECN-capable */
	uint64_t dropped[L2CC_NPRIO];   /* chosen and dropped (drop; ce with not_ect = drop) */
	uint64_t avg_bytes[L2CC_NPRIO]; /* gauge: the average (w_q > 0) or the last backlog */
};

struct cp {
	struct cp_head h;
	struct red_port port[];
};

/* The marking probability at backlog q (bytes): 0 to kmin, pmax at kmax,
 * linear between, 1 above kmax. */
double red_probability(uint64_t kmin, uint64_t kmax, double pmax, double q)
{
	if (q <= (double)kmin)
		return 0.0;
	if (q > (double)kmax)
		return 1.0;
	return pmax * (q - (double)kmin) / (double)(kmax - kmin);
}

/* SplitMix64: seeds every port's stream apart from one seed. */
static uint64_t red_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* xorshift64*: a uniform number in [0, 1). */
static double red_uniform(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

static const struct red_cfg *red_cfg_of(const struct cp *cp, uint32_t port)
{
	return sw_port_cp_cfg(cp->h.s, port);
}

static int red_create(struct cp **out, struct sw *s)
{
	struct cp *cp = cp_new_ports(s, sizeof(struct cp), sizeof(struct red_port));

	if (!cp)
		return -ENOMEM;
	for (uint32_t i = 0; i < cp->h.nports; i++) {
		uint64_t x;

		if (sw_port_scheme(s, i) != &cp_red_ops)
			continue;
		x = red_cfg_of(cp, i)->seed + i;
		cp->port[i].rng = red_splitmix(&x);
		if (!cp->port[i].rng)
			cp->port[i].rng = 1;    /* xorshift's one fixed point */
	}
	*out = cp;
	return 0;
}

/* Classic RED averages the backlog each arrival sees. */
static void red_enqueue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ)
{
	const struct red_cfg *c = red_cfg_of(cp, out);
	struct red_port *rp = &cp->port[out];

	if (c->wq <= 0.0)
		return;
	rp->avg[prio] = (1.0 - c->wq) * rp->avg[prio] + c->wq * (double)occ->bytes;
	rp->avg_bytes[prio] = (uint64_t)rp->avg[prio];
}

/* DCQCN decides on the egress backlog after the frame left (tx follows). */
static void red_dequeue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ)
{
	struct red_port *rp = &cp->port[out];

	rp->q[prio] = occ->bytes;
	if (red_cfg_of(cp, out)->wq <= 0.0)
		rp->avg_bytes[prio] = occ->bytes;
}

static enum cp_verdict red_tx(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			      uint8_t *data, uint32_t len)
{
	const struct red_cfg *c = red_cfg_of(cp, out);
	struct red_port *rp = &cp->port[out];
	double q = c->wq > 0.0 ? rp->avg[prio] : (double)rp->q[prio];
	double p = red_probability(c->kmin, c->kmax, c->pmax, q);
	int err;

	if (p <= 0.0 || (p < 1.0 && red_uniform(&rp->rng) >= p))
		return CP_PASS;
	switch (c->action) {
	case RED_FECN:
		rp->marked[prio]++;
		return CP_MARK;
	case RED_CE:
		err = wire_ip_set_ce(data, len);
		if (!err || err == -EALREADY) {
			rp->ce_set[prio]++;
			return CP_PASS;
		}
		rp->not_ect[prio]++;
		if (c->not_ect == RED_NOT_ECT_PASS)
			return CP_PASS;
		rp->dropped[prio]++;
		return CP_DROP;
	default:
		rp->dropped[prio]++;
		return CP_DROP;
	}
}

static const void *red_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

static const struct cp_ctr red_ctrs[] = {
	{ "red_marked", "marked_frames_total", CP_COUNTER | CP_PER_PRIO,
	  "Frames RED chose on this output with action fecn (FECN set if tagged)",
	  offsetof(struct red_port, marked) },
	{ "red_ce_set", "ce_set_frames_total", CP_COUNTER | CP_PER_PRIO,
	  "Frames RED chose on this output with action ce that left with IP CE set",
	  offsetof(struct red_port, ce_set) },
	{ "red_not_ect", "not_ect_frames_total", CP_COUNTER | CP_PER_PRIO,
	  "Frames RED chose on this output with action ce that were not ECN-capable IP",
	  offsetof(struct red_port, not_ect) },
	{ "red_dropped", "dropped_frames_total", CP_COUNTER | CP_PER_PRIO,
	  "Frames RED dropped on this output (action drop, or ce with not_ect = drop)",
	  offsetof(struct red_port, dropped) },
	{ "red_qavg", "queue_bytes", CP_GAUGE | CP_PER_PRIO,
	  "The backlog RED decides on: its average (w_q > 0) or the last one a frame left behind",
	  offsetof(struct red_port, avg_bytes) },
};

/* ---- keys ---------------------------------------------------------------- */

static const char *const red_action_names[] = { "fecn", "ce", "drop", NULL };
static const char *const red_not_ect_names[] = { "pass", "drop", NULL };

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct red_cfg, f), \
	  .size = sizeof(((struct red_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }
#define KE(k, f, d, n, h) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct red_cfg, f), .def = d, .names = n, \
	  .help = h, .reload = CFG_LIVE }

static const struct cfg_item red_keys[] = {
	K("kmin", CFG_SIZE, kmin, "5K", 0, 1LL << 32,
	  "red: no frame is chosen while the output's backlog (this priority) is at most kmin "
	  "(DCQCN paper: 5 KB)"),
	K("kmax", CFG_SIZE, kmax, "200K", 0, 1LL << 32,
	  "red: the probability reaches pmax at kmax, and every frame is chosen above it "
	  "(DCQCN paper: 200 KB)"),
	K("pmax", CFG_REAL, pmax, "0.01", 0, 1,
	  "red: the probability at kmax, 0 .. 1 (DCQCN paper: 0.01)"),
	K("w_q", CFG_REAL, wq, "0", 0, 1,
	  "red: weight of the averaged backlog, 0 .. 1; 0 = the instantaneous backlog (DCQCN), "
	  "e.g. 0.002 for classic RED"),
	KE("action", action, "fecn", red_action_names,
	   "red: what a chosen frame gets: fecn (FECN in its l2cc tag), ce (IP CE on ECN-capable "
	   "IPv4/IPv6), drop"),
	KE("not_ect", not_ect, "drop", red_not_ect_names,
	   "red, action ce: a chosen packet that is not ECN-capable is dropped (RFC 3168) or passed"),
	K("seed", CFG_UINT, seed, "1", 0, INT64_MAX,
	  "red: seed of the random choices (each port its own stream from it)"),
};
#undef K
#undef KE

static int red_check(void *cfg, char *err, size_t errlen)
{
	struct red_cfg *c = cfg;

	if (c->kmin >= c->kmax) {
		snprintf(err, errlen, "kmin = %llu is not below kmax = %llu, expected kmin < kmax",
			 (unsigned long long)c->kmin, (unsigned long long)c->kmax);
		return -EINVAL;
	}
	return 0;
}

const struct cp_ops cp_red_ops = {
	.name = "red",
	.help = "RED on each output queue per priority: probability 0 to kmin, linear to pmax "
		"at kmax, 1 above, on the instantaneous (DCQCN, Zhu et al. 2015) or averaged "
		"(w_q) backlog; action fecn, ce (IP ECN) or drop",
	.create = red_create,
	.destroy = cp_free,
	.enqueue = red_enqueue,
	.dequeue = red_dequeue,
	.tx = red_tx,
	.ctrs = red_ctrs,
	.nctrs = sizeof(red_ctrs) / sizeof(red_ctrs[0]),
	.port_stats = red_port_stats,
	.keys = red_keys,
	.nkeys = sizeof(red_keys) / sizeof(red_keys[0]),
	.cfg_size = sizeof(struct red_cfg),
	.check_keys = red_check,
};
