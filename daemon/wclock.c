// SPDX-License-Identifier: BSD-2-Clause
#include "wclock.h"

void wclock_init(struct wclock *c, uint64_t rate_bps, uint64_t burst_bytes, uint32_t overhead)
{
	c->rate_bps = rate_bps;
	c->overhead = overhead;
	c->t_free = 0;
	c->rem = 0;
	c->burst_ns = rate_bps ? burst_bytes * 8 * 1000000000ull / rate_bps : 0;
}

uint64_t wclock_tx_ns(const struct wclock *c, uint32_t bytes)
{
	if (!c->rate_bps)
		return 0;
	return (uint64_t)(bytes + c->overhead) * 8 * 1000000000ull / c->rate_bps;
}
