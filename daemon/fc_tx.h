/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Egress flow control: what the link partner lets us send. PAUSE/PFC timers
 * per priority (802.3x / 802.1Qbb) and InfiniBand-style credits: the
 * partner's CREDIT messages carry an absolute limit per priority (FCCL), and
 * we count what we sent against it (FCTBS). Every switchd port and hostd's
 * uplink keep one of these; deciding *whether* to honour a kind of message
 * (the configured flow control) is the caller's.
 *
 * Paused time is accounted as it happens, so counters can report the total
 * time a priority was held even while a pause is still running.
 */
#ifndef L2CC_FC_TX_H
#define L2CC_FC_TX_H

#include <stdbool.h>
#include <stdint.h>
#include "wire.h"

#define FC_NPRIO 8

struct fc_tx {
	uint64_t paused_until[FC_NPRIO];
	uint64_t pause_start[FC_NPRIO];  /* 0 = not paused */
	uint64_t paused_acc[FC_NPRIO];   /* ns paused, pauses that have ended */
	bool credit_have;                /* a grant arrived: credits apply */
	uint8_t credit_unit;             /* enum l2cc_credit_unit of the grants */
	uint64_t credit_limit[FC_NPRIO], credit_sent[FC_NPRIO];
	uint64_t pauses, resumes;        /* PAUSE/PFC entries applied (quanta > 0 / = 0) */
	/* The last time a hold could have ended: a pause ran out or was
	 * lifted, a credit grant arrived. A sender that was held resumes its
	 * wire clock from here (wclock_resume), not with a burst. */
	uint64_t resume_ns;
	uint64_t credit_grants;
};

/* Apply a PAUSE (all priorities) or PFC (enabled ones) at link rate_bps. */
void fc_tx_macctrl(struct fc_tx *f, const struct wire_macctrl *mc, uint64_t rate_bps,
		   uint64_t now);
/* The same for one priority, as received at `at`: paused until `until`
 * (0: a resume). For an entry applied later than it came (bpf/, xdp_ctl);
 * counts neither in pauses nor in resumes. */
void fc_tx_pause_until(struct fc_tx *f, int prio, uint64_t at, uint64_t until);
/* Priorities not paused at `now` (settles pauses that ran out). */
uint8_t fc_tx_open_mask(struct fc_tx *f, uint64_t now);
/* Priorities paused at `now`, without settling anything (for reports). */
uint8_t fc_tx_paused_mask(const struct fc_tx *f, uint64_t now);
/* Total ns priority prio has been paused, up to now. */
uint64_t fc_tx_paused_ns(const struct fc_tx *f, int prio, uint64_t now);
/* The longest of fc_tx_paused_ns over priorities (PAUSE stops all at once). */
uint64_t fc_tx_paused_max_ns(const struct fc_tx *f, uint64_t now);
/* When the earliest pause among `prios` runs out; UINT64_MAX if none is paused. */
uint64_t fc_tx_pause_end(const struct fc_tx *f, uint8_t prios);

/*
 * The link went down: pauses from the partner end (their time so far is
 * kept in the paused totals) and its credits are forgotten; after the link
 * comes back, credits apply again from the partner's next first grant.
 */
void fc_tx_link_down(struct fc_tx *f, uint64_t now);

/*
 * A CREDIT from the partner. The first grant (or one in a new unit) starts
 * our sent count at its limit, i.e. nothing available, until the partner
 * has reconciled its received count to ours: its limit may still include
 * frames we never sent. Returns true then: the caller must send its own
 * CREDIT (carrying credit_sent) at once.
 */
bool fc_tx_credit(struct fc_tx *f, const struct wire_credit *c, uint64_t now);

/* Units a frame of len bytes costs in the partner's credit unit. */
static inline uint64_t fc_tx_units(const struct fc_tx *f, uint32_t len)
{
	return f->credit_unit == L2CC_CREDIT_FRAMES ? 1 : len;
}

/* May a frame of len bytes go on prio under credits? (false before the first grant) */
static inline bool fc_tx_credit_ok(const struct fc_tx *f, int prio, uint32_t len)
{
	return f->credit_have &&
	       (int64_t)(f->credit_limit[prio] - f->credit_sent[prio] - fc_tx_units(f, len)) >= 0;
}

/* Charge a frame that is going out to the sent count. */
static inline void fc_tx_credit_charge(struct fc_tx *f, int prio, uint32_t len)
{
	f->credit_sent[prio] += fc_tx_units(f, len);
}

#endif
