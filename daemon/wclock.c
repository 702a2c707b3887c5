// SPDX-License-Identifier: BSD-2-Clause
#include "wclock.h"

void wclock_init(struct wclock *c, uint64_t rate_bps, uint64_t burst_bytes, uint32_t overhead)
{
	c->rate_bps = rate_bps;
	c->overhead = overhead;
	c->t_free = 0;
	c->rem = 0;
	c->burst_ns = rate_bps ? burst_bytes * 8 * 1000000000ull / rate_bps : 0;
	/* t_free 0 makes the next ready() a pull-up: a fresh schedule, not a late one. */
	c->backlog = false;
}

void wclock_rebase(struct wclock *c, uint64_t now)
{
	/*
	 * Backlogged, the wire could have started its next frame at
	 * wclock_next() and kept going; catching up from now - burst, the
	 * time in between is what it never carried. Idle, nothing was
	 * waiting: the pull-up only forgets an old schedule.
	 */
	if (c->backlog) {
		uint64_t lost = now - c->burst_ns - wclock_next(c);

		if (lost) {
			c->lost_ns += lost;
			c->late_events++;
			if (lost > c->lost_max_ns)
				c->lost_max_ns = lost;
		}
	}
	c->t_free = now - c->burst_ns;
	c->rem = 0;
}

uint64_t wclock_tx_ns(const struct wclock *c, uint32_t bytes)
{
	if (!c->rate_bps)
		return 0;
	return (uint64_t)(bytes + c->overhead) * 8 * 1000000000ull / c->rate_bps;
}
