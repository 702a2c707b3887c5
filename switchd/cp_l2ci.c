// SPDX-License-Identifier: BSD-2-Clause
/*
 * L2CI, the switch side of McAlpine, Wadekar, Gupta, Sharma, Lakshmanan and
 * Kwok, "Congestion control for switched Ethernet" (2005), §5 "Method 4":
 * a switch neither samples nor marks data. It only updates two kinds of
 * control frame as they pass through it (cp_ops.transit):
 *  - DISCOVER, on its way from a path's source to its destination: one more
 *    hop, and the path's speed lowered to the rate of the port it leaves by
 *    (a port with no emulated rate leaves it alone);
 *  - FEEDBACK, on its way back from the path's egress to the source: one
 *    more hop, and the frame's congestion level raised to this switch's
 *    level for the port the frame arrived on (max-aggregation), naming this
 *    hop and port as the one that set it. Feedback travels the forward path
 *    in reverse (a symmetric L2 tree), so the port it arrives on is the
 *    path's forward egress here.
 * The level of an output is the paper's Method 2 definition: the percent of
 * the port's buffer that frames waiting for it take (it can pass 100 % when
 * the inputs' buffers are shared), summed over priorities since a switch
 * sees its queues as a whole (`level_prios` picks which), in 0.01 % units.
 * It is instantaneous, as the paper has it (the source's controller does
 * the filtering, hostd/rp_prc.c), and counts the frame still on the wire
 * (l2ci_level says why).
 *
 * Tests and operators may pin a port's level (`l2ccctl cp PORT level P`):
 * the spec's line check forces 10/70/30 % on three switches.
 */
#include "cp.h"
#include "config.h"
#include "json.h"
#include "wire.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct l2ci_cfg {
	uint64_t level_buffer;  /* bytes (or frames) that make 100 %; 0 = the port's buffer */
	uint64_t level_prios;   /* bit p: priority p's backlog counts */
};

struct l2ci_port {
	/* counters (cp_ctr) */
	uint64_t discover;      /* DISCOVERs sent on by this port */
	uint64_t feedback;      /* FEEDBACKs that arrived on it (about this output) */
	uint64_t feedback_set;  /* ... whose level this output's replaced */
	uint64_t level;         /* the output's level now, 0.01 % */
	uint64_t forced;        /* 1 while its level is pinned */
	/* state */
	uint64_t bytes[L2CC_NPRIO];     /* backlog per priority, from enqueue/dequeue */
	uint32_t frames[L2CC_NPRIO];
	uint64_t base;          /* what 100 % is, in the unit below */
	bool base_frames;
	uint8_t prios;
	int32_t pin;            /* forced level in 0.01 %, or -1 */
};

struct cp {
	struct cp_head h;
	struct l2ci_port port[];
};

extern const struct cp_ops cp_l2ci_ops;

static bool l2ci_ours(const struct cp *cp, uint32_t port)
{
	return port < cp->h.nports && sw_port_scheme(cp->h.s, port) == &cp_l2ci_ops;
}

static int l2ci_create(struct cp **out, struct sw *s)
{
	struct cp *cp = cp_new_ports(s, sizeof(struct cp), sizeof(struct l2ci_port));

	if (!cp)
		return -ENOMEM;
	for (uint32_t i = 0; i < cp->h.nports; i++) {
		struct l2ci_port *p = &cp->port[i];
		const struct l2ci_cfg *c;
		struct sw_port_geom g;

		p->pin = -1;
		if (!l2ci_ours(cp, i))
			continue;
		c = sw_port_cp_cfg(s, i);
		sw_port_geom(s, i, &g);
		p->base = c->level_buffer ? c->level_buffer : g.buffer;
		p->base_frames = g.buffer_frames;
		p->prios = (uint8_t)c->level_prios;
		if (!p->base)
			p->base = 1;
	}
	*out = cp;
	return 0;
}

/* The level of output `out` in 0.01 % of its buffer, saturating at 16 bits:
 * its queues, and the frame its emulated wire is still sending. A frame
 * leaves a real port's buffer as it is serialized, not all at once when it
 * starts; counted at the start instead, the level drops a frame at each
 * departure and climbs back with arrivals, and a FEEDBACK that an egress
 * sends on a path's own data (per fb_bytes) passes here just after one of
 * that path's frames left: it read the level about half a frame (0.3 % of a
 * 256K buffer) below the FEEDBACKs sent on the egress's timer. That was
 * enough to hold one of four equal paths at 36M and the others at 21M
 * (docs/l2ci.md, "Equilibrium at N = 4"): the path fast enough to hear per bytes
 * heard less congestion. The wire's part is continuous in time, so where
 * in a frame's departure a FEEDBACK passes no longer matters. */
static uint16_t l2ci_level(const struct cp *cp, uint32_t out)
{
	const struct l2ci_port *p = &cp->port[out];
	uint64_t used = 0, wire, l;

	if (p->pin >= 0)
		return (uint16_t)p->pin;
	for (int q = 0; q < L2CC_NPRIO; q++)
		if (p->prios & (1u << q))
			used += p->base_frames ? p->frames[q] : p->bytes[q];
	wire = sw_port_wire_bytes(cp->h.s, out) * 10000;
	if (p->base_frames) {
		struct sw_port_geom g;

		sw_port_geom(cp->h.s, out, &g);
		wire /= g.max_frame ? g.max_frame : 1;
	}
	l = (used * 10000 + wire) / p->base;
	return l > L2CC_L2CI_LEVEL_MAX ? L2CC_L2CI_LEVEL_MAX : (uint16_t)l;
}

static void l2ci_occ(struct cp *cp, uint32_t out, int prio, const struct cp_occ *occ)
{
	struct l2ci_port *p = &cp->port[out];

	p->bytes[prio] = occ->bytes;
	p->frames[prio] = occ->frames;
	p->level = l2ci_level(cp, out);
}

static void l2ci_enqueue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			 const struct cp_occ *occ)
{
	l2ci_occ(cp, out, prio, occ);
}

static void l2ci_dequeue(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			 const struct cp_occ *occ)
{
	l2ci_occ(cp, out, prio, occ);
}

static void l2ci_transit(struct cp *cp, uint32_t in, uint32_t out, int type, uint8_t *body,
			 size_t len)
{
	struct sw_port_geom g;

	if (type == L2CC_CTRL_DISCOVER) {
		if (out >= cp->h.nports)
			return;
		sw_port_geom(cp->h.s, out, &g);
		if (!wire_discover_transit(body, len, g.rate_bps))
			cp->port[out].discover++;
	} else if (type == L2CC_CTRL_FEEDBACK) {
		/* A port of another scheme (or the CPU) has no level to give:
		 * the hop still counts, so hop numbers stay positions. */
		uint16_t level = l2ci_ours(cp, in) ? l2ci_level(cp, in) : 0;
		int r;

		g.rate_bps = 0;
		if (level)
			sw_port_geom(cp->h.s, in, &g);
		r = wire_feedback_transit(body, len, level,
					  sw_port_mac(cp->h.s, in < cp->h.nports ? in : out), g.rate_bps);

		if (r >= 0 && in < cp->h.nports) {
			cp->port[in].feedback++;
			cp->port[in].feedback_set += (uint64_t)r;
		}
	}
}

/* `l2ccctl cp PORT level PERCENT|off`: pin the port's level (tests). */
static int l2ci_ctl(struct cp *cp, uint32_t port, const char *args, struct jw *w, char *err,
		    size_t errlen)
{
	struct l2ci_port *p = &cp->port[port];
	char what[16], val[32];
	double pct;
	char *end;

	if (sscanf(args, "%15s %31s", what, val) != 2 || strcmp(what, "level")) {
		snprintf(err, errlen, "usage: level PERCENT|off (0 .. 655.35)");
		return -EINVAL;
	}
	if (!strcmp(val, "off")) {
		p->pin = -1;
	} else {
		pct = strtod(val, &end);
		if (end == val || *end || !(pct >= 0 && pct <= 655.35)) {
			snprintf(err, errlen, "level \"%s\": expected a percent 0 .. 655.35 or off",
				 val);
			return -EINVAL;
		}
		p->pin = (int32_t)(pct * 100 + 0.5);
	}
	p->forced = p->pin >= 0;
	p->level = l2ci_level(cp, port);
	jw_u64(w, "level", p->level);
	jw_bool(w, "forced", p->forced);
	return 0;
}

static const void *l2ci_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

static const struct cp_ctr l2ci_ctrs[] = {
	{ "l2ci_discover", "discover_total", CP_COUNTER,
	  "L2CI DISCOVERs that left by this port (path speed lowered to its rate)",
	  offsetof(struct l2ci_port, discover) },
	{ "l2ci_feedback", "feedback_total", CP_COUNTER,
	  "L2CI FEEDBACKs that arrived on this port: about it as a path's forward egress",
	  offsetof(struct l2ci_port, feedback) },
	{ "l2ci_feedback_set", "feedback_set_total", CP_COUNTER,
	  "L2CI FEEDBACKs whose level this output's level replaced (it was the highest so far)",
	  offsetof(struct l2ci_port, feedback_set) },
	{ "l2ci_level", "level_permyriad", CP_GAUGE,
	  "Congestion level of this output: its backlog in 0.01 % of its buffer",
	  offsetof(struct l2ci_port, level) },
	{ "l2ci_level_forced", "level_forced", CP_GAUGE,
	  "1 while the output's level is pinned by `l2ccctl cp PORT level`",
	  offsetof(struct l2ci_port, forced) },
};

#define K(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct l2ci_cfg, f), \
	  .size = sizeof(((struct l2ci_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  .reload = CFG_LIVE }

static const struct cfg_item l2ci_keys[] = {
	K("level_buffer", CFG_SIZE, level_buffer, "0", 0, 1LL << 40,
	  "l2ci: the backlog that makes a level of 100 % (bytes, or frames on a port that "
	  "counts frames); 0 = the port's input buffer per priority (McAlpine 2005, Method 2: "
	  "percent of the per-port buffer)"),
	K("level_prios", CFG_UINT, level_prios, "0xff", 1, 0xff,
	  "l2ci: bit p set = priority p's backlog counts in the level (0xff: all, the paper's "
	  "aggregated view; 0x7f leaves out the L2CI frames' own priority 7)"),
};
#undef K

const struct cp_ops cp_l2ci_ops = {
	.name = "l2ci",
	.help = "L2CI (McAlpine 2005, Method 4): DISCOVER counts hops and lowers the path "
		"speed to each egress rate; FEEDBACK carries the highest output level on the "
		"path (percent of the port buffer) back to the source",
	.create = l2ci_create,
	.destroy = cp_free,
	.enqueue = l2ci_enqueue,
	.dequeue = l2ci_dequeue,
	.transit = l2ci_transit,
	.ctrl_types = (1u << L2CC_CTRL_DISCOVER) | (1u << L2CC_CTRL_FEEDBACK),
	.ctl = l2ci_ctl,
	.ctrs = l2ci_ctrs,
	.nctrs = sizeof(l2ci_ctrs) / sizeof(l2ci_ctrs[0]),
	.port_stats = l2ci_port_stats,
	.keys = l2ci_keys,
	.nkeys = sizeof(l2ci_keys) / sizeof(l2ci_keys[0]),
	.cfg_size = sizeof(struct l2ci_cfg),
};
