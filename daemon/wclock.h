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
};

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

static inline bool wclock_ready(struct wclock *c, uint64_t now)
{
	if (!c->rate_bps)
		return true;
	if (c->t_free + c->burst_ns < now) {
		/* After idle the old schedule's fraction means nothing. */
		c->t_free = now - c->burst_ns;
		c->rem = 0;
	}
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
 * starts no earlier than t; lateness after t is still caught up as usual.
 */
static inline void wclock_resume(struct wclock *c, uint64_t t)
{
	if (c->t_free < t) {
		c->t_free = t;
		c->rem = 0;
	}
}

/* When the wire can take the next frame (meaningful when not ready): a
 * remainder of a nanosecond counts, as in wclock_ready(). */
static inline uint64_t wclock_next(const struct wclock *c) { return c->t_free + (c->rem != 0); }

/* Serialisation time of `bytes` at this rate, in ns (0 if unlimited). */
uint64_t wclock_tx_ns(const struct wclock *c, uint32_t bytes);

#endif
