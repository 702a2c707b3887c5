// SPDX-License-Identifier: BSD-2-Clause
/*
 * The marking policy of Santos, Turner and Janakiraman, "End-to-End
 * Congestion Control for InfiniBand" (Infocom 2003, §IV-B): mark the flows
 * that feed a root of congestion, not those that merely share a buffer
 * with them.
 *
 * When an input buffer becomes full, each output that has a frame in it
 * and is a root (not held by flow control: not paused, with credit for a
 * full-size frame) copies cnt1 — the frames in the switch waiting for it —
 * into its cnt2, and marks its next cnt2 transmissions. An output that
 * becomes blocked is a victim of congestion further on, not its cause: its
 * pending marks are revoked (they would fall on victims).
 *
 * Input side: `full` arms the root outputs. Output side: `tx` spends cnt2,
 * `blocked` revokes it. Outputs of other schemes are never armed.
 */
#include "cp.h"

#include <errno.h>
#include <stddef.h>

extern const struct cp_ops cp_santos_ops;

struct santos_port {
	uint64_t cnt2;          /* as an output: frames still to mark (§IV-B) */
	uint64_t mark_events;   /* as an output: cnt1 copied into cnt2 */
	uint64_t mark_revoked;  /* as an output: cnt2 dropped as it became blocked */
};

struct cp {
	struct cp_head h;
	struct santos_port port[];
};

static int santos_create(struct cp **out, struct sw *s)
{
	*out = cp_new_ports(s, sizeof(struct cp), sizeof(struct santos_port));
	return *out ? 0 : -ENOMEM;
}

/* Each root output with a frame in this buffer marks its next cnt1
 * transmissions, cnt1 = frames in the switch waiting for it: the flows
 * feeding the root are the ones to slow down. */
static void santos_full(struct cp *cp, uint32_t in, int prio)
{
	for (uint32_t o = 0; o < cp->h.nports; o++) {
		struct santos_port *op = &cp->port[o];

		if (sw_port_scheme(cp->h.s, o) != &cp_santos_ops ||
		    !sw_voq_frames(cp->h.s, in, o, prio) || !sw_out_is_root(cp->h.s, o, prio))
			continue;
		op->cnt2 = sw_out_frames(cp->h.s, o);
		op->mark_events++;
	}
}

/* Blocked: a victim now, not a root. */
static void santos_blocked(struct cp *cp, uint32_t out, uint8_t prios)
{
	struct santos_port *op = &cp->port[out];

	if (!prios || !op->cnt2)
		return;
	op->mark_revoked++;
	op->cnt2 = 0;
}

/* The next cnt2 frames sent, tagged or not. */
static enum cp_verdict santos_tx(struct cp *cp, uint32_t out, int prio, uint32_t frame,
				 uint8_t *data, uint32_t len)
{
	struct santos_port *op = &cp->port[out];

	if (!op->cnt2)
		return CP_PASS;
	op->cnt2--;
	return CP_MARK;
}

static const void *santos_port_stats(const struct cp *cp, uint32_t port)
{
	return &cp->port[port];
}

static const struct cp_ctr santos_ctrs[] = {
	{ "mark_events", "mark_events_total", CP_COUNTER,
	  "Times this output, a root of congestion, copied cnt1 (frames waiting for it) into cnt2",
	  offsetof(struct santos_port, mark_events) },
	{ "mark_revoked", "mark_revoked_total", CP_COUNTER,
	  "Times this output's pending marks (cnt2) were revoked as it became blocked",
	  offsetof(struct santos_port, mark_revoked) },
	{ "cnt2", "cnt2_frames", CP_GAUGE,
	  "Marks still to set on this output's next frames (cnt2, Santos et al. 2003 §IV-B)",
	  offsetof(struct santos_port, cnt2) },
};

const struct cp_ops cp_santos_ops = {
	.name = "santos",
	.help = "each root output with frames in a full input buffer marks its next cnt1 "
		"frames, cnt1 = frames waiting for it; blocked outputs revoke (Santos et al. "
		"2003, §IV-B)",
	.create = santos_create,
	.destroy = cp_free,
	.full = santos_full,
	.blocked = santos_blocked,
	.tx = santos_tx,
	.ctrs = santos_ctrs,
	.nctrs = sizeof(santos_ctrs) / sizeof(santos_ctrs[0]),
	.port_stats = santos_port_stats,
};
