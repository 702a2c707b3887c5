// SPDX-License-Identifier: BSD-2-Clause
/*
 * InfiniBand congestion control at the switch (InfiniBand Architecture
 * Specification 1.2.1, Annex A10, the switch's SwitchCongestionSetting;
 * Gran, Zahavi, Reinemo, Skeie, Shainer and Lysne, "On the Relation
 * Between Congestion Control, Switch Arbitration and Fairness", 2011 —
 * "Gran" below, §II.1 for the switch): each output port and priority (the VL) has a congestion
 * state, and while it is in it the frames it sends are eligible for a FECN.
 *
 * Entering: the occupancy compared (threshold_mode: the largest VOQ of
 * any one input toward this output, or the sum over inputs) goes above
 * the high threshold while the output is a root of congestion — not held
 * by flow control, with credit for a full frame (Gran §II.1) — or whatever
 * flow control does when victim_mask is set (Gran §II.1 footnote 1:
 * ports that face host adapters). Leaving: the occupancy falls to the low threshold,
 * thr_high - hysteresis; hysteresis 0 is the single-threshold switch whose
 * unfairness Gran §IV shows (the newest flow keeps the largest share). An
 * output that becomes a victim (blocked) leaves at once unless victim_mask
 * is set: a victim never marks (Gran §II.1).
 *
 * Root is judged over the backlog, not the instant: a backlog that built
 * while flow control held the output is a victim's until it has drained to
 * the low threshold, even at the moments a credit lets one frame out. A
 * software switch gets its credits back one frame at a time from a
 * congested neighbour, and "has credit now" would make the output toward
 * it a root at each of them (it marked tens of frames a second in the
 * netns test before this rule).
 *
 * Thresholds. `threshold` T (A10 SwitchCongestionSetting Threshold; Gran §II.1)
 * is 0..15: 0 never marks, 1 the highest threshold, 15 the lowest. It is a
 * fill ratio of the buffer that holds what is compared: a VOQ lives in its
 * input's buffer, so VOQ (in, out) crosses at in's buffer * (16 - T) / 16,
 * T being the output's. Inputs with unequal buffers get unequal
 * thresholds; sizing them all from the output's own input buffer made a
 * threshold unreachable for a small input and far too low for a large one.
 * A buffer counted in frames is that many of its port's largest frames,
 * and that input's VOQs count every frame as one largest frame too, so
 * each comparison is in its buffer's own unit. The sum of threshold_mode
 * common spans inputs: its threshold is taken from the smallest port's
 * input buffer, so that any one VOQ alone can cross it (Gran §IV-C).
 *
 * Marking. Every frame sent while congested is eligible unless shorter
 * than packet_size (Packet_Size); each eligible frame is marked
 * with probability 1 / (marking_rate + 1) from a seeded generator
 * (Marking_Rate, Gran §II.1: "the mean number of eligible packets sent
 * between packets actually being marked"), so marking_rate 0 marks every eligible frame.
 *
 * Input side: nothing. Output side: enqueue/dequeue/blocked keep the state,
 * tx marks. The input of each frame (for the marks-per-input counter) is
 * found by which VOQ toward this output changed, against a copy of their
 * frame counts: the hooks do not say, and no core change is needed for it.
 */
#include "cp.h"
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define IBCC_MAX_IN 65          /* SW_MAX_PORTS and the CPU pseudo-port */
#define IBCC_NPRIO 8

extern const struct cp_ops cp_ibcc_ops;

enum ibcc_mode { IBCC_MODE_VOQ = 0, IBCC_MODE_COMMON };
enum ibcc_victim { IBCC_VICTIM_AUTO = 0, IBCC_VICTIM_NO, IBCC_VICTIM_YES };

/* The per-port keys (sw_port_cp_cfg). */
struct ibcc_cfg {
	uint64_t threshold;
	struct cfg_qty hysteresis;
	int threshold_mode;     /* enum ibcc_mode */
	uint64_t marking_rate;
	uint64_t packet_size;
	int victim_mask;        /* enum ibcc_victim */
	uint64_t seed;
};

struct ibcc_vl {
	bool cong;
	bool held;              /* flow control held it since the backlog was at thr_low */
	uint64_t last_ns;       /* while congested: time in state counted up to here */
	uint32_t occ_frames;    /* the output's backlog of this priority (last hook) */
};

struct ibcc_port {
	/* From the keys and the inputs' buffers, at create. */
	uint64_t thr_high[IBCC_MAX_IN], thr_low[IBCC_MAX_IN];   /* per input's VOQ, bytes */
	uint64_t thr_high_c, thr_low_c; /* threshold_mode common: the sum's, bytes */
	bool common, victim;
	uint64_t mr, packet_size;
	uint64_t rng;
	uint32_t last_in;               /* input of the frame just dequeued (tx's) */
	struct ibcc_vl vl[IBCC_NPRIO];
	uint32_t voqn[IBCC_NPRIO][IBCC_MAX_IN]; /* frames per VOQ toward this output */
	/* Counters, summed over priorities. */
	uint64_t congested;             /* gauge: bit p = priority p in the state */
	uint64_t cong_ns;               /* time in the state (each priority's added) */
	uint64_t entries, eligible, marked;
	uint64_t in_marked;             /* as an input: its frames marked by an ibcc output */
	uint64_t thr_high_g, thr_low_g; /* gauges of the thresholds, bytes */
};

/* An input's buffer, in the unit its VOQs are compared in. */
struct ibcc_in {
	uint64_t buf;                   /* bytes (frames x max_frame when counted in frames) */
	uint32_t max_frame;
	bool frames;                    /* buffer counts frames: its VOQs too */
};

struct cp {
	struct cp_head h;
	uint32_t nin;                   /* inputs: the ports and the CPU pseudo-port */
	uint64_t min_buf;               /* the smallest port's input buffer (common mode) */
	struct ibcc_in in[IBCC_MAX_IN];
	struct ibcc_port port[];
};

/* splitmix64: a seeded stream per port, no state shared with anything. */
static uint64_t ibcc_rand(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The high and low thresholds in a buffer of buf bytes whose largest frame
 * is max_frame (the hysteresis key may count frames). */
static void ibcc_thr(const struct ibcc_cfg *k, uint64_t buf, uint32_t max_frame,
		     uint64_t *hi, uint64_t *lo)
{
	uint64_t hyst;

	if (!k->threshold) {
		*hi = *lo = UINT64_MAX;
		return;
	}
	*hi = buf * (16 - k->threshold) / 16;
	/* Unset: a little over 3 frames (Gran Fig. 7: "a bit more than 3 MTU"). */
	if (!k->hysteresis.set)
		hyst = 7ull * max_frame / 2;
	else
		hyst = k->hysteresis.frames ? k->hysteresis.n * max_frame : k->hysteresis.n;
	*lo = *hi > hyst ? *hi - hyst : 0;
}

static void ibcc_port_setup(struct cp *cp, uint32_t i)
{
	struct ibcc_port *op = &cp->port[i];
	const struct ibcc_cfg *k = sw_port_cp_cfg(cp->h.s, i);
	struct sw_port_geom g;

	sw_port_geom(cp->h.s, i, &g);
	for (uint32_t in = 0; in < cp->nin; in++)
		ibcc_thr(k, cp->in[in].buf, cp->in[in].max_frame, &op->thr_high[in],
			 &op->thr_low[in]);
	ibcc_thr(k, cp->min_buf, g.max_frame, &op->thr_high_c, &op->thr_low_c);
	op->common = k->threshold_mode == IBCC_MODE_COMMON;
	op->victim = k->victim_mask == IBCC_VICTIM_YES ||
		     (k->victim_mask == IBCC_VICTIM_AUTO && g.host);
	op->mr = k->marking_rate;
	op->packet_size = k->packet_size;
	op->rng = k->seed * 0x100000001b3ull + i;
	op->last_in = UINT32_MAX;
	/* Gauges: the thresholds of the smallest port buffer — the sum's in
	 * common mode, the lowest of the inputs' in voq mode. */
	op->thr_high_g = k->threshold ? op->thr_high_c : 0;
	op->thr_low_g = k->threshold ? op->thr_low_c : 0;
	/* A reload finds frames queued: start the copy from what is there. */
	for (int p = 0; p < IBCC_NPRIO; p++)
		for (uint32_t in = 0; in < cp->nin; in++)
			op->voqn[p][in] = sw_voq_frames(cp->h.s, in, i, p);
}

static int ibcc_create(struct cp **out, struct sw *s)
{
	struct cp *cp = cp_new_ports(s, sizeof(struct cp), sizeof(struct ibcc_port));

	if (!cp)
		return -ENOMEM;
	cp->nin = sw_nports(s) + 1;
	if (cp->nin > IBCC_MAX_IN)
		cp->nin = IBCC_MAX_IN;
	cp->min_buf = UINT64_MAX;
	for (uint32_t in = 0; in < cp->nin; in++) {
		struct sw_port_geom g;

		sw_port_geom(s, in, &g);
		cp->in[in].max_frame = g.max_frame;
		cp->in[in].frames = g.buffer_frames;
		cp->in[in].buf = g.buffer_frames ? g.buffer * g.max_frame : g.buffer;
		/* The ports' buffers, not the CPU pseudo-port's (the last input). */
		if (in + 1 < cp->nin && cp->in[in].buf < cp->min_buf)
			cp->min_buf = cp->in[in].buf;
	}
	for (uint32_t i = 0; i < cp->h.nports; i++)
		if (sw_port_scheme(s, i) == &cp_ibcc_ops)
			ibcc_port_setup(cp, i);
	*out = cp;
	return 0;
}

/* Where the compared occupancy stands: above the high threshold (enter),
 * at or below the low one (leave). */
struct ibcc_lvl {
	bool above, low;
};

/* The input whose VOQ toward out changed by dir (+1 joined, -1 left), and
 * where the occupancy compared stands while at it: each VOQ against its
 * own input's thresholds (voq), or their sum against the sum's (common). */
static uint32_t ibcc_scan(struct cp *cp, uint32_t out, int prio, int dir, struct ibcc_lvl *l)
{
	struct ibcc_port *op = &cp->port[out];
	uint32_t found = UINT32_MAX;
	uint64_t sum = 0;

	l->above = false;
	l->low = true;
	for (uint32_t in = 0; in < cp->nin; in++) {
		uint32_t n = sw_voq_frames(cp->h.s, in, out, prio);
		uint64_t v;

		if (n != op->voqn[prio][in]) {
			if (found == UINT32_MAX && (dir > 0) == (n > op->voqn[prio][in]))
				found = in;
			op->voqn[prio][in] = n;
		}
		if (!n)
			continue;
		v = cp->in[in].frames ? (uint64_t)n * cp->in[in].max_frame
				      : sw_voq_bytes(cp->h.s, in, out, prio);
		sum += v;
		if (v > op->thr_high[in])
			l->above = true;
		if (v > op->thr_low[in])
			l->low = false;
	}
	if (op->common) {
		l->above = sum > op->thr_high_c;
		l->low = sum <= op->thr_low_c;
	}
	return found;
}

static void ibcc_leave(struct ibcc_port *op, int prio, uint64_t now)
{
	struct ibcc_vl *v = &op->vl[prio];

	op->cong_ns += now - v->last_ns;
	v->cong = false;
	op->congested &= ~(1ull << prio);
}

/* Enter or leave the state on the occupancy compared (Gran §II.1, §IV-B). */
static void ibcc_eval(struct cp *cp, uint32_t out, int prio, const struct ibcc_lvl *l)
{
	struct ibcc_port *op = &cp->port[out];
	struct ibcc_vl *v = &op->vl[prio];
	uint64_t now = sw_now(cp->h.s);

	if (l->low)
		v->held = false;
	if (v->cong) {
		op->cong_ns += now - v->last_ns;
		v->last_ns = now;
		if (l->low)
			ibcc_leave(op, prio, now);
	} else if (l->above &&
		   (op->victim || (!v->held && sw_out_is_root(cp->h.s, out, prio)))) {
		v->cong = true;
		v->last_ns = now;
		op->entries++;
		op->congested |= 1ull << prio;
	}
}

static void ibcc_change(struct cp *cp, uint32_t out, int prio, const struct cp_occ *occ,
			int dir)
{
	struct ibcc_port *op = &cp->port[out];
	struct ibcc_lvl l;
	uint32_t in;

	if (prio < 0 || prio >= IBCC_NPRIO)
		return;
	op->vl[prio].occ_frames = occ->frames;
	in = ibcc_scan(cp, out, prio, dir, &l);
	if (dir < 0)
		op->last_in = in;
	ibcc_eval(cp, out, prio, &l);
}

static void ibcc_enqueue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			 const struct cp_occ *occ)
{
	ibcc_change(cp, out, prio, occ, +1);
}

static void ibcc_dequeue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			 const struct cp_occ *occ)
{
	ibcc_change(cp, out, prio, occ, -1);
}

/* Blocked: a victim leaves the state (unless victim_mask); unblocked, it
 * may enter on what is queued now. */
static void ibcc_blocked(struct cp *cp, uint32_t out, uint8_t prios)
{
	struct ibcc_port *op = &cp->port[out];

	for (int p = 0; p < IBCC_NPRIO; p++) {
		struct ibcc_lvl l;

		if (prios & (1u << p))
			op->vl[p].held = true;
		if ((prios & (1u << p)) && !op->victim) {
			if (op->vl[p].cong)
				ibcc_leave(op, p, sw_now(cp->h.s));
			continue;
		}
		if (op->vl[p].cong || !op->vl[p].occ_frames)
			continue;
		ibcc_scan(cp, out, p, 0, &l);
		ibcc_eval(cp, out, p, &l);
	}
}

static enum cp_verdict ibcc_tx(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			       uint8_t *data, uint32_t len)
{
	struct ibcc_port *op = &cp->port[out];
	uint32_t in = op->last_in;

	op->last_in = UINT32_MAX;
	if (prio < 0 || prio >= IBCC_NPRIO || !op->vl[prio].cong || len < op->packet_size)
		return CP_PASS;
	op->eligible++;
	if (op->mr && ibcc_rand(&op->rng) % (op->mr + 1))
		return CP_PASS;
	op->marked++;
	if (in < cp->h.nports)
		cp->port[in].in_marked++;
	return CP_MARK;
}

static const void *ibcc_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

static const struct cp_ctr ibcc_ctrs[] = {
	{ "congested", "congested_prios", CP_GAUGE,
	  "Priorities (VLs) of this output in the congestion state now, a mask (bit p = priority p)",
	  offsetof(struct ibcc_port, congested) },
	{ "congested_ns", "congested_seconds_total", CP_COUNTER_NS,
	  "Time this output spent in the congestion state, each priority's time added",
	  offsetof(struct ibcc_port, cong_ns) },
	{ "entries", "congestion_entries_total", CP_COUNTER,
	  "Times a priority of this output entered the congestion state",
	  offsetof(struct ibcc_port, entries) },
	{ "eligible", "eligible_frames_total", CP_COUNTER,
	  "Frames this output sent while congested and at least packet_size long",
	  offsetof(struct ibcc_port, eligible) },
	{ "fecn_marked", "fecn_marked_frames_total", CP_COUNTER,
	  "Eligible frames this output marked (FECN), each with probability 1/(marking_rate+1)",
	  offsetof(struct ibcc_port, marked) },
	{ "in_marked", "input_marked_frames_total", CP_COUNTER,
	  "Frames that came in by this port and were marked by an ibcc output",
	  offsetof(struct ibcc_port, in_marked) },
	{ "thr_high", "threshold_high_bytes", CP_GAUGE,
	  "This output's high threshold in the smallest port's input buffer, buffer*(16-threshold)/16 (0: threshold 0, never marks)",
	  offsetof(struct ibcc_port, thr_high_g) },
	{ "thr_low", "threshold_low_bytes", CP_GAUGE,
	  "This output's low threshold, the high one minus hysteresis (never below 0)",
	  offsetof(struct ibcc_port, thr_low_g) },
};

static const char *const ibcc_mode_names[] = { "voq", "common", NULL };
static const char *const ibcc_victim_names[] = { "auto", "no", "yes", NULL };

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct ibcc_cfg, f), \
	  .size = sizeof(((struct ibcc_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }
#define KE(k, f, d, n, h) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct ibcc_cfg, f), .def = d, .names = n, \
	  .help = h, .reload = CFG_LIVE }

static const struct cfg_item ibcc_keys[] = {
	K("threshold", CFG_UINT, threshold, "8", 0, 15,
	  "IB spec 1.2.1 A10 SwitchCongestionSetting Threshold (Gran §II.1): 0 = never mark, 1 = highest .. 15 = lowest; a "
	  "VOQ toward this output crosses at buffer * (16 - threshold) / 16, buffer = its input's "
	  "buffer per priority (frames count as that port's largest frame); common: the smallest "
	  "port buffer's"),
	K("hysteresis", CFG_QTY, hysteresis, NULL, 0, 0,
	  "low threshold = high threshold - hysteresis, bytes or <n>frames; 0 = one threshold "
	  "(the unfair switch of Gran et al. 2011 §IV); unset = 3.5 of the port's largest frames "
	  "(Gran Fig. 7: a bit more than 3 MTU)"),
	KE("threshold_mode", threshold_mode, "voq", ibcc_mode_names,
	   "what crosses the thresholds: voq = any one input's VOQ toward this output, common = "
	   "the sum over inputs (Gran §IV-C; its threshold is the smallest port buffer's, so one VOQ "
	   "can cross it)"),
	K("marking_rate", CFG_UINT, marking_rate, "1", 0, 65535,
	  "IB spec 1.2.1 A10 SwitchCongestionSetting Marking_Rate: each eligible frame is marked with probability "
	  "1/(marking_rate+1); 0 = every one (Gran: MR 1, and 10 in Fig. 12)"),
	K("packet_size", CFG_SIZE, packet_size, "0", 0, 65535,
	  "IB spec 1.2.1 A10 SwitchCongestionSetting Packet_Size, in bytes here: shorter frames are "
	  "never marked; 0 = any. The spec and opensm.conf (cc_sw_cong_setting_packet_size) count "
	  "64-byte credits: multiply a value copied from there by 64 (8 there = 512 here)"),
	KE("victim_mask", victim_mask, "auto", ibcc_victim_names,
	   "IB spec 1.2.1 A10 SwitchCongestionSetting Victim_Mask (Gran §II.1): yes = enter the congestion state also while flow "
	   "control holds this output (a victim); auto = yes on role = host ports, which face "
	   "host adapters, no elsewhere"),
	K("seed", CFG_UINT, seed, "1", 0, UINT32_MAX,
	  "seed of the generator that picks the marked frames (per port, reproducible)"),
};
#undef K
#undef KE
_Static_assert(sizeof(struct ibcc_cfg) <= 256, "ibcc_cfg fits SW_CP_CFG_MAX");

const struct cp_ops cp_ibcc_ops = {
	.name = "ibcc",
	.help = "InfiniBand CC (IB spec 1.2.1 A10; Gran et al. 2011 §II): an output priority "
		"above its threshold while a root (or victim_mask) is congested until below "
		"threshold - hysteresis; its frames are marked with probability 1/(marking_rate+1)",
	.create = ibcc_create,
	.destroy = cp_free,
	.enqueue = ibcc_enqueue,
	.dequeue = ibcc_dequeue,
	.blocked = ibcc_blocked,
	.tx = ibcc_tx,
	.ctrs = ibcc_ctrs,
	.nctrs = sizeof(ibcc_ctrs) / sizeof(ibcc_ctrs[0]),
	.port_stats = ibcc_port_stats,
	.keys = ibcc_keys,
	.nkeys = sizeof(ibcc_keys) / sizeof(ibcc_keys[0]),
	.cfg_size = sizeof(struct ibcc_cfg),
};
