// SPDX-License-Identifier: BSD-2-Clause
/*
 * Naive marking, the baseline of Santos, Turner and Janakiraman, "End-to-End
 * Congestion Control for InfiniBand" (Infocom 2003, §IV-A): when an input
 * buffer becomes full, every data frame in it is marked (FECN) as it
 * leaves, whatever its output. Frames that share the buffer with the
 * congested flows are marked too, which is the unfairness the paper's
 * own policy (cp_santos.c) removes.
 *
 * Input side: `full` flags the buffer's frames. Output side: `tx` marks a
 * flagged frame. Both sides are this scheme's when every port names it
 * (the usual `[switch] marking = naive`); a frame flagged here that leaves
 * by a port of another scheme is not marked.
 */
#include "cp.h"

#include <errno.h>
#include <stddef.h>

#define NAIVE_FLAG 0x01         /* in the frame's cp byte: mark it when it leaves */

struct naive_port {
	uint64_t mark_events;   /* this input buffer became full: its frames flagged */
};

struct cp {
	struct cp_head h;
	struct naive_port port[];
};

static int naive_create(struct cp **out, struct sw *s)
{
	*out = cp_new_ports(s, sizeof(struct cp), sizeof(struct naive_port));
	return *out ? 0 : -ENOMEM;
}

/* Flag every frame of this buffer, whatever its output. */
static void naive_full(struct cp *cp, uint32_t in, int prio)
{
	for (uint32_t o = 0; o < cp->h.nports; o++)
		for (uint32_t f = sw_voq_first(cp->h.s, in, o, prio); f != SW_FRAME_NONE;
		     f = sw_frame_next(cp->h.s, f))
			*sw_frame_cp(cp->h.s, f) |= NAIVE_FLAG;
	cp->port[in].mark_events++;
}

static enum cp_verdict naive_tx(struct cp *cp, uint32_t out, int prio, uint32_t frame,
				uint8_t *data, uint32_t len)
{
	uint8_t *b = sw_frame_cp(cp->h.s, frame);

	if (!(*b & NAIVE_FLAG))
		return CP_PASS;
	*b &= ~NAIVE_FLAG;
	return CP_MARK;
}

static const void *naive_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

static const struct cp_ctr naive_ctrs[] = {
	{ "mark_events", "mark_events_total", CP_COUNTER,
	  "Times this input buffer became full and every frame in it was flagged for marking",
	  offsetof(struct naive_port, mark_events) },
};

const struct cp_ops cp_naive_ops = {
	.name = "naive",
	.help = "mark every data frame in an input buffer that becomes full, whatever its "
		"output (Santos et al. 2003, §IV-A)",
	.create = naive_create,
	.destroy = cp_free,
	.full = naive_full,
	.tx = naive_tx,
	.ctrs = naive_ctrs,
	.nctrs = sizeof(naive_ctrs) / sizeof(naive_ctrs[0]),
	.port_stats = naive_port_stats,
};
