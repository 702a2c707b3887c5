// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion points that notify the source: BCN (Lu et al., "Congestion
 * control in networks with no congestion drops", Allerton 2006, §II) and
 * the IEEE 802.1Qau QCN congestion point that grew out of it (802.1Qau-2010,
 * the congestion point of clause 32; defaults from the IEEE8021-CN-MIB).
 *
 * Both watch the output's backlog per priority (the VOQs that feed it, in
 * bytes), sample the frames that join it, and answer a sample with an
 * 802.1Qau congestion notification message (CNM, docs/wire-formats.md) to
 * the sampled frame's source through the switch's own frame origination
 * (sw_emit). Qold is the backlog at the previous sample of that output and
 * priority, and moves only at samples.
 *
 *  - bcn samples each arrival with probability sample_p. Above qsc it sends
 *    BCN(0,0) (severe); above qeq BCN(Qoff, Qδ) (decrease); below qeq
 *    BCN(Qoff, Qδ) (increase) only to a frame whose l2cc tag carries the
 *    rate-limited flag with this CP's id, i.e. a source this CP slowed.
 *    The reaction point computes Fb = −(Qoff + w·Qδ).
 *  - qcn computes Fb = −(Qoff + w·Qδ) itself and sends a CNM only for
 *    Fb < 0, with QntzFb = −Fb·63 / (Qeq·(2w+1)) (6 bits, saturating).
 *    Sampling is by bytes: the next sample after min_sample_base /
 *    (1 + QntzFb/8) bytes of arrivals (150, 75, 50, ... 18.75 KB), each
 *    jittered by a uniform factor in [0.85, 1.15].
 *
 * CNMs travel at cnm_priority (in an 802.1Q tag with the sample's VID, 0
 * for an untagged sample) and are never sampled themselves. The CPID
 * is the port's MAC, the port's index and the priority (8 bytes). Queue
 * quantities may be given in frames: a frame counts as the port's largest
 * (MTU + Ethernet header + two VLAN tags), the backlog being in bytes.
 */
#include "cp_qcn.h"
#include "cp.h"
#include "config.h"
#include "wire.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

extern const struct cp_ops cp_bcn_ops, cp_qcn_ops;

/* Keys of both schemes, one struct: each table names the fields it uses. */
struct cn_cfg {
	struct cfg_qty qeq;             /* bcn qeq / qcn set_point */
	struct cfg_qty qsc;             /* bcn: severe-congestion threshold; 0 = none */
	struct cfg_qty min_sample_base; /* qcn */
	double sample_p;                /* bcn */
	double w;                       /* qcn feedback_weight */
	uint64_t cnm_priority;
	uint64_t seed;
};

struct cn_port {
	/* per priority: this output's queue as the CP sees it */
	uint64_t qold[L2CC_NPRIO];        /* backlog at the previous sample, bytes */
	int64_t to_sample[L2CC_NPRIO];    /* qcn: bytes of arrivals until the next sample */
	uint64_t rng;                   /* xorshift64*, seeded per port */
	/* counters, per priority (CP_PER_PRIO) */
	uint64_t samples[L2CC_NPRIO];
	uint64_t cnm_decrease[L2CC_NPRIO];
	uint64_t cnm_increase[L2CC_NPRIO];
	uint64_t cnm_severe[L2CC_NPRIO];
	uint64_t cnm_lost[L2CC_NPRIO];    /* built but refused by the CPU port (its bounds) */
	uint64_t qntz_fb_sum[L2CC_NPRIO]; /* qcn: sum of QntzFb sent (mean = sum / decrease) */
};

struct cp {
	struct cp_head h;
	const struct cp_ops *ops;
	struct cn_port port[];
};

static int cn_create(struct cp **out, struct sw *s, const struct cp_ops *ops)
{
	struct cp *cp = cp_new_ports(s, sizeof(struct cp), sizeof(struct cn_port));

	if (!cp)
		return -ENOMEM;
	cp->ops = ops;
	for (uint32_t i = 0; i < cp->h.nports; i++) {
		const struct cn_cfg *k = sw_port_cp_cfg(s, i);

		/* splitmix64 of seed and port: distinct, never-zero states */
		uint64_t z = k->seed + 0x9e3779b97f4a7c15ull * (i + 1);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		cp->port[i].rng = (z ^ (z >> 31)) | 1;
	}
	*out = cp;
	return 0;
}

static int bcn_create(struct cp **out, struct sw *s) { return cn_create(out, s, &cp_bcn_ops); }
static int qcn_create(struct cp **out, struct sw *s) { return cn_create(out, s, &cp_qcn_ops); }

/* Uniform in [0, 1): xorshift64* (no allocation, no syscall, seeded). */
static double cn_uniform(struct cn_port *p)
{
	uint64_t x = p->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	p->rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

/* A queue quantity in bytes: frames count as the port's largest. */
static uint64_t cn_bytes(const struct cp *cp, uint32_t port, const struct cfg_qty *q)
{
	struct sw_port_geom g;

	if (!q->frames)
		return q->n;
	sw_port_geom(cp->h.s, port, &g);
	return q->n * g.max_frame;
}

/* Bytes to 64-octet units, saturated to 16 bits, away from zero so that a
 * nonzero offset never reads as BCN(0,0). */
static int16_t cn_units(int64_t bytes)
{
	int64_t u = bytes >= 0 ? (bytes + L2CC_CNM_QUNIT - 1) / L2CC_CNM_QUNIT
			       : -((-bytes + L2CC_CNM_QUNIT - 1) / L2CC_CNM_QUNIT);

	return u > INT16_MAX ? INT16_MAX : u < INT16_MIN ? INT16_MIN : (int16_t)u;
}

/* This CP's id: the port's MAC, the port's index, the priority. */
static void cn_cpid(const struct cp *cp, uint32_t out, int prio, uint8_t cpid[8])
{
	memcpy(cpid, sw_port_mac(cp->h.s, out), 6);
	cpid[6] = (uint8_t)out;
	cpid[7] = (uint8_t)prio;
}

/* Send a CNM about the sampled frame to its source; false if it could not
 * go (the CPU port's bounds, an unknown source: counted as lost). */
static bool cn_send(struct cp *cp, uint32_t out, int prio, const uint8_t *frame, uint32_t len,
		    const struct eth_info *ei, uint8_t qntz_fb, int16_t qoff, int16_t qdelta)
{
	const struct cn_cfg *k = sw_port_cp_cfg(cp->h.s, out);
	uint8_t buf[L2CC_ETH_HLEN + L2CC_VLAN_HLEN + sizeof(struct l2cc_cnm) + L2CC_CNM_MSDU_MAX];
	struct wire_cnm c;
	int n = -EINVAL;

	memset(&c, 0, sizeof(c));
	c.qntz_fb = qntz_fb;
	cn_cpid(cp, out, prio, c.cpid);
	c.qoffset = qoff;
	c.qdelta = qdelta;
	/* 802.1Qau: the CNM keeps the sample's VLAN, at the CNM's priority;
	 * an untagged sample's CNM is priority-tagged (VID 0), so the next
	 * switch and the host queue it at cnm_priority too, not behind the
	 * congestion it reports. */
	if (wire_cnm_encap(&c, frame, len) == 0)
		n = wire_build_cnm(buf, sizeof(buf), ei->src, sw_port_mac(cp->h.s, out),
				   (int)(k->cnm_priority << 13 | ei->vid), &c);
	if (n <= 0 || sw_emit(cp->h.s, (int)k->cnm_priority, buf, (uint32_t)n) != 0) {
		cp->port[out].cnm_lost[prio]++;
		return false;
	}
	return true;
}

/* The frame that joined the output, if it may be sampled: not a CNM (they
 * are never sampled), from a unicast source. NULL otherwise. */
static const uint8_t *cn_sample_frame(struct cp *cp, uint32_t frame, uint32_t *len,
				      struct eth_info *ei)
{
	const uint8_t *d = sw_frame_bytes(cp->h.s, frame, len);

	if (wire_parse_eth(d, *len, ei) || ei->ethertype == L2CC_ETH_P_CNM ||
	    wire_is_multicast(ei->src))
		return NULL;
	return d;
}

/* ---- BCN ------------------------------------------------------------------ */

static void bcn_enqueue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ)
{
	const struct cn_cfg *k = sw_port_cp_cfg(cp->h.s, out);
	struct cn_port *p = &cp->port[out];
	uint64_t q = occ->bytes, qeq, qsc;
	const uint8_t *d;
	struct eth_info ei;
	struct wire_tag t;
	int64_t qoff, qdelta;
	uint8_t cpid[8];
	uint32_t len;

	if (cn_uniform(p) >= k->sample_p || !(d = cn_sample_frame(cp, frame, &len, &ei)))
		return;
	p->samples[prio]++;
	qeq = cn_bytes(cp, out, &k->qeq);
	qsc = cn_bytes(cp, out, &k->qsc);
	qoff = (int64_t)q - (int64_t)qeq;
	qdelta = (int64_t)q - (int64_t)p->qold[prio];
	p->qold[prio] = q;
	if (qsc && q > qsc) {
		if (cn_send(cp, out, prio, d, len, &ei, 0, 0, 0))
			p->cnm_severe[prio]++;
	} else if (q > qeq) {
		if (cn_send(cp, out, prio, d, len, &ei, 0, cn_units(qoff), cn_units(qdelta)))
			p->cnm_decrease[prio]++;
	} else if (q < qeq && wire_tag_read(d, len, &t) >= 0 && (t.flags & L2CC_TAG_RLT) &&
		   (cn_cpid(cp, out, prio, cpid), !memcmp(t.cpid, cpid, sizeof(cpid)))) {
		/* Only to a source this CP rate-limits (its RLT names us). */
		if (cn_send(cp, out, prio, d, len, &ei, 0, cn_units(qoff), cn_units(qdelta)))
			p->cnm_increase[prio]++;
	}
}

/* ---- QCN ------------------------------------------------------------------ */

/* QntzFb of a feedback Fb < 0: |Fb| over its largest magnitude Qeq·(2w+1)
 * (Qoff = Qeq, Qδ = Qeq), in 63rds, saturating at 63. */
uint8_t cp_qcn_qntz_fb(int64_t fb, uint64_t qeq, double w)
{
	double x;

	if (fb >= 0 || !qeq)
		return 0;
	x = (double)-fb * 63.0 / ((double)qeq * (2 * w + 1));
	return x >= 63 ? 63 : (uint8_t)x;
}

static void qcn_enqueue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ)
{
	const struct cn_cfg *k = sw_port_cp_cfg(cp->h.s, out);
	struct cn_port *p = &cp->port[out];
	uint64_t q = occ->bytes, qeq, base;
	const uint8_t *d;
	struct eth_info ei;
	int64_t qoff, qdelta, fb;
	uint8_t fbq;
	uint32_t len;

	(void)sw_frame_bytes(cp->h.s, frame, &len);
	p->to_sample[prio] -= len;
	if (p->to_sample[prio] > 0 || !(d = cn_sample_frame(cp, frame, &len, &ei)))
		return;
	p->samples[prio]++;
	qeq = cn_bytes(cp, out, &k->qeq);
	qoff = (int64_t)q - (int64_t)qeq;
	qdelta = (int64_t)q - (int64_t)p->qold[prio];
	p->qold[prio] = q;
	fb = -(qoff + (int64_t)(k->w * (double)qdelta));
	fbq = cp_qcn_qntz_fb(fb, qeq, k->w);
	/* The next sample comes sooner the harder the congestion. */
	base = cn_bytes(cp, out, &k->min_sample_base) / (1 + fbq / 8);
	p->to_sample[prio] = (int64_t)((double)base * (0.85 + 0.3 * cn_uniform(p)));
	/* A feedback that quantises to 0 would cut by nothing: not sent. */
	if (fbq && cn_send(cp, out, prio, d, len, &ei, fbq, cn_units(qoff), cn_units(qdelta))) {
		p->cnm_decrease[prio]++;
		p->qntz_fb_sum[prio] += fbq;
	}
}

/* ---- tables ----------------------------------------------------------------- */

static const void *cn_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

#define PRIO_CTR(name, f, metric, help) \
	{ name, metric, CP_COUNTER | CP_PER_PRIO, help, offsetof(struct cn_port, f) }

static const struct cp_ctr bcn_ctrs[] = {
	PRIO_CTR("samples", samples, "samples_total", "Arrivals to this output sampled (probability sample_p)"),
	PRIO_CTR("cnm_decrease", cnm_decrease, "cnm_decrease_total",
		 "BCN(Qoff, Qdelta) sent with the queue above qeq (Lu et al. 2006 §II)"),
	PRIO_CTR("cnm_increase", cnm_increase, "cnm_increase_total",
		 "BCN(Qoff, Qdelta) sent below qeq to a source this CP rate-limits"),
	PRIO_CTR("cnm_severe", cnm_severe, "cnm_severe_total", "BCN(0,0) sent with the queue above qsc"),
	PRIO_CTR("cnm_lost", cnm_lost, "cnm_lost_total",
		 "Notifications built but refused by the CPU port (cpu_queue, cpu_share, unknown source)"),
};

static const struct cp_ctr qcn_ctrs[] = {
	PRIO_CTR("samples", samples, "samples_total",
		 "Arrivals to this output sampled (every min_sample_base / (1 + QntzFb/8) bytes)"),
	PRIO_CTR("cnm", cnm_decrease, "cnm_total", "CNMs sent (Fb < 0, 802.1Qau)"),
	PRIO_CTR("qntz_fb_sum", qntz_fb_sum, "qntz_fb_sum_total", "Sum of the QntzFb sent (mean = this / cnm)"),
	PRIO_CTR("cnm_lost", cnm_lost, "cnm_lost_total",
		 "CNMs built but refused by the CPU port (cpu_queue, cpu_share, unknown source)"),
};
#undef PRIO_CTR

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct cn_cfg, f), \
	  .size = sizeof(((struct cn_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item bcn_keys[] = {
	K("qeq", CFG_QTY, qeq, "16frames", 1, 0,
	  "equilibrium queue Qeq the CP holds the output's backlog at (Lu et al. 2006: 16 "
	  "packets of 1500 B)"),
	K("qsc", CFG_QTY, qsc, "0", 1, 0,
	  "severe-congestion threshold Qsc > Qeq: above it a sample gets BCN(0,0); 0 = never "
	  "(the paper gives no value and simulates none)"),
	K("sample_p", CFG_REAL, sample_p, "0.01", 0, 1,
	  "probability P that an arrival is sampled (Lu et al. 2006: 0.01)"),
	K("cnm_priority", CFG_UINT, cnm_priority, "6", 0, 7,
	  "priority notifications travel at (802.1Qau cnmPriority, default 6)"),
	K("seed", CFG_UINT, seed, "1", 1, 0, "seed of the sampling generator (runs repeat)"),
};

static const struct cfg_item qcn_keys[] = {
	K("set_point", CFG_QTY, qeq, "26000", 1, 0,
	  "Qeq, the queue the CP holds the output's backlog at (cpQueueSizeSetPoint, 802.1Qau "
	  "MIB default 26000 octets)"),
	K("feedback_weight", CFG_REAL, w, "2", 0, 64,
	  "w in Fb = -(Qoff + w Qdelta) (802.1Qau: 2; the MIB's cpFeedbackWeight holds its "
	  "log2 + 1)"),
	K("min_sample_base", CFG_QTY, min_sample_base, "150000", 1, 0,
	  "bytes of arrivals between samples with no congestion; divided by 1 + QntzFb/8 "
	  "under it (cpMinSampleBase, MIB default 150000 octets)"),
	K("cnm_priority", CFG_UINT, cnm_priority, "6", 0, 7,
	  "priority CNMs travel at (802.1Qau cnmPriority, default 6)"),
	K("seed", CFG_UINT, seed, "1", 1, 0, "seed of the sampling jitter (runs repeat)"),
};
#undef K
_Static_assert(sizeof(struct cn_cfg) <= 256, "cn_cfg fits SW_CP_CFG_MAX");

static int bcn_check(void *cfg, char *err, size_t errlen)
{
	const struct cn_cfg *k = cfg;

	if (k->qsc.n && k->qsc.frames == k->qeq.frames && k->qsc.n <= k->qeq.n) {
		snprintf(err, errlen, "qsc must be above qeq (or 0 for none)");
		return -EINVAL;
	}
	if (!k->qeq.n) {
		snprintf(err, errlen, "qeq is 0, expected a queue the CP can hold (e.g. 16frames)");
		return -EINVAL;
	}
	return 0;
}

static int qcn_check(void *cfg, char *err, size_t errlen)
{
	const struct cn_cfg *k = cfg;

	if (!k->qeq.n || !k->min_sample_base.n) {
		snprintf(err, errlen, "set_point and min_sample_base must be above 0");
		return -EINVAL;
	}
	return 0;
}

const struct cp_ops cp_bcn_ops = {
	.name = "bcn",
	.help = "sample arrivals to an output with probability sample_p; send BCN(Qoff, Qdelta) "
		"above qeq, BCN(0,0) above qsc, and below qeq only to sources tagged with this "
		"CP's id, as 802.1Qau CNMs (Lu et al. 2006, §II)",
	.create = bcn_create,
	.destroy = cp_free,
	.enqueue = bcn_enqueue,
	.ctrs = bcn_ctrs,
	.nctrs = sizeof(bcn_ctrs) / sizeof(bcn_ctrs[0]),
	.port_stats = cn_port_stats,
	.keys = bcn_keys,
	.nkeys = sizeof(bcn_keys) / sizeof(bcn_keys[0]),
	.cfg_size = sizeof(struct cn_cfg),
	.check_keys = bcn_check,
};

const struct cp_ops cp_qcn_ops = {
	.name = "qcn",
	.help = "the 802.1Qau congestion point: Fb = -(Qoff + w Qdelta) at byte-based samples, a "
		"CNM with the 6-bit QntzFb to the sampled frame's source when Fb < 0 (IEEE "
		"802.1Qau-2010)",
	.create = qcn_create,
	.destroy = cp_free,
	.enqueue = qcn_enqueue,
	.ctrs = qcn_ctrs,
	.nctrs = sizeof(qcn_ctrs) / sizeof(qcn_ctrs[0]),
	.port_stats = cn_port_stats,
	.keys = qcn_keys,
	.nkeys = sizeof(qcn_keys) / sizeof(qcn_keys[0]),
	.cfg_size = sizeof(struct cn_cfg),
	.check_keys = qcn_check,
};
