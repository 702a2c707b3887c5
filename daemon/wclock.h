/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual wire clock: what makes a veth behave like a link of a given rate.
 * t_free is the time the emulated wire finishes the last frame it was given.
 * A frame may start when t_free <= now; starting it advances t_free by its
 * serialisation time, kept exact with the remainder of the division so the
 * long-run rate is the configured one to the bit. After idle, t_free is
 * pulled up to now - burst: at most `burst` worth of frames leave back to
 * back, which lets the daemon batch sends without exceeding the rate over
 * any window by more than the burst.
 *
 * The same pull-up is where the emulation fails: a daemon that wakes late
 * (starved of CPU) while its output still had frames catches up at most
 * `burst`, and the rest of the late time the link carried nothing it should
 * have. The clock cannot tell that from idle time by itself, so the caller
 * says at the end of each pass whether the output is backlogged
 * (wclock_backlog: frames it would send, waiting only on this clock or on
 * a flow-control hold with a known end); a pull-up that finds it backlogged
 * counts the time beyond the burst in lost_ns (wire time lost), one
 * late_event, and the largest single loss in lost_max_ns. That accounting
 * lives in the rare pull-up only (wclock_rebase): the fast path is the same
 * compare as before.
 */
#ifndef L2CC_WCLOCK_H
#define L2CC_WCLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct wclock {
	uint64_t rate_bps;      /* 0 = unlimited */
	uint64_t burst_ns;
	uint64_t t_free;
	uint64_t rem;           /* remainder of bits*1e9 / rate, carried */
	uint32_t overhead;      /* bytes added per frame (24 = preamble+SFD+FCS+IFG) */
	bool backlog;           /* the caller's: backlogged at the end of its last pass */
	/* Wire time lost (counters: wclock_init keeps them). */
	uint64_t lost_ns;       /* late beyond the burst while backlogged, in total */
	uint64_t late_events;   /* pull-ups that found the output backlogged */
	uint64_t lost_max_ns;   /* the largest of those losses */
};

/* Rate, burst and overhead; the schedule starts afresh and the caller's
 * backlog is forgotten (the next pass is not a late one), while the loss
 * counters are kept: a reload changes the rate, not what was lost. */
void wclock_init(struct wclock *c, uint64_t rate_bps, uint64_t burst_bytes, uint32_t overhead);

/*
 * The burst both daemons give a wire by default: two frames, or 500 us of
 * line rate. A daemon that wakes late (a shared CPU) catches up that much,
 * so the long-run rate stays exact; and at high rates sends are batched,
 * not one per timer.
 */
static inline uint64_t wclock_default_burst(uint64_t rate_bps, uint32_t max_frame)
{
	uint64_t burst = 2ull * max_frame;

	return rate_bps / 8 / 2000 > burst ? rate_bps / 8 / 2000 : burst;
}

/* When the wire can take the next frame (meaningful when not ready): a
 * remainder of a nanosecond counts, as in wclock_ready(). */
static inline uint64_t wclock_next(const struct wclock *c) { return c->t_free + (c->rem != 0); }

/* The pull-up of wclock_ready() (call only when t_free + burst_ns < now),
 * with the loss accounting. Out of line: it is the rare path. */
void wclock_rebase(struct wclock *c, uint64_t now);

static inline bool wclock_ready(struct wclock *c, uint64_t now)
{
	if (!c->rate_bps)
		return true;
	/* After idle (or a late wake-up) the old schedule's fraction means nothing. */
	if (c->t_free + c->burst_ns < now)
		wclock_rebase(c, now);
	/* The true free time is t_free + rem/rate: a remainder means not yet. */
	return c->t_free + (c->rem != 0) <= now;
}

/* Charge one frame of `bytes` to the wire. Call only when wclock_ready(). */
static inline void wclock_charge(struct wclock *c, uint32_t bytes)
{
	uint64_t num;

	if (!c->rate_bps)
		return;
	num = (uint64_t)(bytes + c->overhead) * 8 * 1000000000ull + c->rem;
	c->t_free += num / c->rate_bps;
	c->rem = num % c->rate_bps;
}

/*
 * The wire was held by flow control (PAUSE, PFC, no credits) until t. A
 * held wire sends nothing, and that time is not idle time it may make up
 * for with a burst: a real link resumes at line rate. So the next frame
 * starts no earlier than t; lateness after t is still caught up as usual
 * (and, backlogged, counted as lost beyond the burst).
 */
static inline void wclock_resume(struct wclock *c, uint64_t t)
{
	if (c->t_free < t) {
		c->t_free = t;
		c->rem = 0;
	}
}

/*
 * At the end of a pass: does the output still have frames it would send,
 * waiting only on this clock, a full TX ring or a flow-control hold whose
 * end will be known (a pause that runs out, a credit whose arrival is
 * timestamped)? Then a late next pass is lost wire time; otherwise
 * (nothing queued, or held with no end in sight) it is idle time. A caller
 * that finds at the start of its next pass that the hold is still on says
 * false again before it asks wclock_ready().
 */
static inline void wclock_backlog(struct wclock *c, bool backlogged) { c->backlog = backlogged; }

/* Serialisation time of `bytes` at this rate, in ns (0 if unlimited). */
uint64_t wclock_tx_ns(const struct wclock *c, uint32_t bytes);

#endif
