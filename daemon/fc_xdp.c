// SPDX-License-Identifier: BSD-2-Clause
/* Control frames applied in XDP, brought into fc_tx: see fc_xdp.h. */
#include "fc_xdp.h"

#include <string.h>

static void fc_xdp_counts(const struct l2cc_xdp_ctl *o, const struct l2cc_xdp_ctl *c,
			  struct fc_xdp_news *n)
{
	memset(n, 0, sizeof(*n));
	n->frames = c->frames - o->frames;
	n->bytes = c->bytes - o->bytes;
	n->pause_rx = c->pause_rx - o->pause_rx;
	n->pfc_rx = c->pfc_rx - o->pfc_rx;
	n->credit_rx = c->credit_rx - o->credit_rx;
	n->fc_ignored = c->fc_ignored - o->fc_ignored;
	n->malformed = c->malformed - o->malformed;
	n->unsupported = c->unsupported - o->unsupported;
	/* A bad frame is always taken (dropped there); a good one is taken
	 * unless it is a CREDIT whose limits apply, which goes on to the
	 * socket and is counted where it arrives. */
	n->ctrl_frames = n->frames - n->malformed - n->unsupported;
	for (int i = 0; i < L2CC_NPRIO; i++)
		n->pfc_rx_prio[i] = c->pfc_rx_prio[i] - o->pfc_rx_prio[i];
}

static uint64_t fc_xdp_at(uint64_t at, uint64_t now)
{
	return at < now ? at : now;
}

void fc_xdp_apply(struct fc_xdp *x, const struct l2cc_xdp_ctl *c, struct fc_tx *f,
		  uint64_t now, struct fc_xdp_news *n)
{
	const struct l2cc_xdp_ctl *o = &x->last;

	fc_xdp_counts(o, c, n);
	for (int i = 0; i < L2CC_NPRIO; i++) {
		uint64_t at = fc_xdp_at(c->pause_at[i], now), until = c->pause_until[i];

		if (c->pause_n[i] == o->pause_n[i])
			continue;
		/* An end the clamp put before its start is a pause that is over. */
		fc_tx_pause_until(f, i, at, until && until <= at ? at : until);
		if (c->xoff_at[i] != o->xoff_at[i]) {
			n->xoff_mask |= 1u << i;
			n->xoff_at[i] = fc_xdp_at(c->xoff_at[i], now);
		}
	}
	f->pauses += c->pauses - o->pauses;
	f->resumes += c->resumes - o->resumes;
	if (c->credit_n != o->credit_n) {
		struct wire_credit w = {
			.unit = c->credit_unit,
			.prio_mask = c->credit_mask,
			.sent_unit = L2CC_CREDIT_UNIT_NONE,
		};

		memcpy(w.limit, c->credit_limit, sizeof(w.limit));
		n->credit = true;
		n->credit_first = fc_tx_credit(f, &w, fc_xdp_at(c->credit_at, now));
		/* fc_tx_credit counted one grant: the program counted them all. */
		f->credit_grants += c->credit_n - o->credit_n - 1;
	}
	x->last = *c;
	x->seq = c->seq;
}

void fc_xdp_forget(struct fc_xdp *x, const struct l2cc_xdp_ctl *c, struct fc_xdp_news *n)
{
	fc_xdp_counts(&x->last, c, n);
	x->last = *c;
	x->seq = c->seq;
}
