/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Control frames applied in XDP (bpf/l2cc_xdp.bpf.c, struct l2cc_xdp_ctl):
 * what changed in the program's state since the daemon last looked, applied
 * to the port's fc_tx through the same functions a frame parsed in
 * userspace goes through, and the program's counters as increments for the
 * daemon's own (pause_rx, fc_ignored, drops, ...), which keep their meaning.
 *
 * The program keeps the latest PAUSE/PFC entry per priority and the latest
 * credit limits: entries that superseded one another between two looks
 * count in every counter, but only the latest is replayed (at its arrival
 * time), so a pause and resume both in between add nothing to the paused
 * time. The daemon looks before every transmit pass, and the program rings
 * it awake (xport_ctl_fd) when something changed.
 */
#ifndef L2CC_FC_XDP_H
#define L2CC_FC_XDP_H

#include <stdbool.h>
#include <stdint.h>
#include "fc_tx.h"
#include "l2cc_shared.h"

struct fc_xdp {
	uint64_t seq;                   /* the program's seq last applied */
	struct l2cc_xdp_ctl last;       /* and its state then */
};

/* Increments since the last look, for the daemon's counters. */
struct fc_xdp_news {
	uint64_t frames, bytes;         /* consumed in XDP: never reach the ring */
	/* Of those, the well-formed PAUSE/PFC/CREDIT (applied or ignored): the
	 * rest are malformed or unsupported, dropped. */
	uint64_t ctrl_frames;
	uint64_t pause_rx, pfc_rx, credit_rx, fc_ignored, malformed, unsupported;
	uint64_t pfc_rx_prio[L2CC_NPRIO];
	uint8_t xoff_mask;              /* priorities with a new XOFF ... */
	uint64_t xoff_at[L2CC_NPRIO];   /* ... and when (at most now) */
	bool credit;                    /* a grant was applied */
	bool credit_first;              /* fc_tx_credit() said: send ours at once */
};

/*
 * Apply snap (a snapshot newer than x->last) to f at now; the news in *n.
 * Times from the program are CLOCK_MONOTONIC (bpf_ktime_get_ns), the
 * daemon's clock; one a little later than the pass's now counts as now.
 */
void fc_xdp_apply(struct fc_xdp *x, const struct l2cc_xdp_ctl *snap, struct fc_tx *f,
		  uint64_t now, struct fc_xdp_news *n);

/*
 * Take snap as seen without applying its state (counters still come as
 * news): the link went down, and whatever the partner said before is void
 * (fc_tx_link_down).
 */
void fc_xdp_forget(struct fc_xdp *x, const struct l2cc_xdp_ctl *snap, struct fc_xdp_news *n);

#endif
