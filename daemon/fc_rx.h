/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ingress flow control: what we tell the link partner about our receive
 * buffer. The mirror of fc_tx.h, shared by every switchd port and hostd's
 * uplink:
 *  - PAUSE (802.3x) and PFC (802.1Qbb): XOFF when a priority's occupancy
 *    reaches xoff, XON when it is back at or below xon, the XOFF refreshed
 *    at half its pause time while it lasts;
 *  - credits (InfiniBand style, IB spec 1.2.1 §7.9.4): we count the units
 *    received per priority (ABR), reconciled to the partner's own sent count
 *    (FCTBS) at each of its CREDIT messages, and grant
 *    limit = received + room (FCCL); a new grant goes out when the limit
 *    has moved by a step, a smaller change at the next interval, and a
 *    keepalive when nothing changes.
 *
 * Nothing here sends: the owner asks fc_rx_build() for the frames that are
 * due, once per pass, so a burst of releases in one pass costs one CREDIT
 * and one sendto(), not one per frame. A frame that could not be built (no
 * free UMEM frame) stays due and goes out on a later pass.
 */
#ifndef L2CC_FC_RX_H
#define L2CC_FC_RX_H

#include <stdbool.h>
#include <stdint.h>
#include "fc_tx.h"
#include "wire.h"

enum fc_rx_mode { FC_RX_NONE = 0, FC_RX_PAUSE, FC_RX_PFC, FC_RX_CREDIT };

/* How often an unchanged credit grant is repeated (heals a lost update). */
#define FC_RX_CREDIT_KEEPALIVE_NS 50000000ull

struct fc_rx_cfg {
	enum fc_rx_mode mode;
	bool unit_frames;           /* occupancy and credits count frames, not bytes */
	uint64_t xoff, xon;         /* PAUSE/PFC thresholds, in units */
	uint16_t pause_quanta;      /* pause_time of an XOFF */
	uint64_t pause_ns;          /* what pause_quanta mean at the port's rate */
	uint64_t credit_step;       /* grant at once after this many units came free */
	uint64_t credit_interval;   /* ns: a smaller change goes out this late */
};

struct fc_rx_stats {
	uint64_t pause_tx, pfc_tx, credit_tx;
	uint64_t pfc_tx_prio[L2CC_NPRIO];
};

struct fc_rx {
	struct fc_rx_cfg cfg;
	/* PAUSE/PFC: priorities we want held upstream (PAUSE: bit 0 stands for
	 * all), and the state the partner last heard from us. */
	uint8_t xoff_mask, told_mask;
	uint8_t refresh_mask;       /* XOFF refreshes due */
	uint64_t xoff_sent_ns[L2CC_NPRIO];
	/* Credits: units received per priority, and the limits last granted. */
	uint64_t rcvd[L2CC_NPRIO], adv_limit[L2CC_NPRIO];
	uint64_t credit_next_ns, credit_last_ns;
	bool credit_due;
	bool sent_dirty;            /* our sent count moved since the last grant */
	struct fc_rx_stats st;
};

/* Start (or restart after a reload: the state is kept) with cfg at `now`. */
void fc_rx_configure(struct fc_rx *f, const struct fc_rx_cfg *cfg, uint64_t now);

/* A frame of `units` arrived on prio, admitted or not: under credits a
 * dropped frame frees its credit too. */
static inline void fc_rx_count(struct fc_rx *f, int prio, uint64_t units)
{
	f->rcvd[prio] += units;
}

/*
 * Occupancy changed (occ[] of every priority, room[] = units still free per
 * priority): decide XOFF/XON, and whether a credit grant is due now or at
 * the next interval.
 */
void fc_rx_update(struct fc_rx *f, const uint64_t occ[L2CC_NPRIO],
		  const uint64_t room[L2CC_NPRIO], uint64_t now);

/* The partner's CREDIT arrived: reconcile our received count to its sent
 * count (IB: ABR = FCTBS), for the priorities it reports in our unit. */
void fc_rx_credit_in(struct fc_rx *f, const struct wire_credit *c);

/* Our sent count changed (we transmitted under the partner's credits):
 * tell the partner within the interval, so it can reconcile. */
void fc_rx_sent_changed(struct fc_rx *f, uint64_t now);

/* Send a grant now (the partner's first grant needs our count at once). */
static inline void fc_rx_credit_now(struct fc_rx *f) { f->credit_due = true; }

/*
 * The link went down: whatever we told the partner is void (it forgets the
 * pauses it received when its own link goes down), nothing is due, and the
 * credit keepalive stops. Received counts are kept: the partner's next
 * CREDIT reconciles them.
 */
void fc_rx_link_down(struct fc_rx *f);
/* ... and came back at `now`: a credit grant at once (the partner waits for
 * its first), then the caller's fc_rx_update() decides XOFF afresh. */
void fc_rx_link_up(struct fc_rx *f, uint64_t now);

/* Timers at `now`: XOFF refreshes, credit interval and keepalive. */
void fc_rx_timers(struct fc_rx *f, const uint64_t room[L2CC_NPRIO], uint64_t now);

/* When fc_rx_timers() next has something to do; UINT64_MAX for never. */
uint64_t fc_rx_next(const struct fc_rx *f);

/* Is a frame due (fc_rx_build() would build one)? */
static inline bool fc_rx_due(const struct fc_rx *f)
{
	return f->credit_due || f->refresh_mask ||
	       ((f->cfg.mode == FC_RX_PAUSE || f->cfg.mode == FC_RX_PFC) &&
		f->xoff_mask != f->told_mask);
}

/*
 * Build the next frame that is due into buf (from our port's MAC src), with
 * the sent counts of etx in a CREDIT. Returns its length, 0 when nothing is
 * due, or -ENOSPC. Call until it returns 0 (at most one PAUSE/PFC and one
 * CREDIT per call sequence).
 */
int fc_rx_build(struct fc_rx *f, void *buf, size_t buflen, const uint8_t src[6],
		const struct fc_tx *etx, const uint64_t room[L2CC_NPRIO], uint64_t now);

#endif
