/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a datapath core's frames leave: the sink. switchd's and hostd's
 * cores take frames as (descriptor address, length) at a time `now` and
 * emit through this table; they never call the AF_XDP rings themselves.
 * xport implements it for the real ports (xport_sink_ops); the unit tests
 * implement it in memory and run the cores in virtual time.
 *
 * Ownership: a frame given to put() belongs to the sink from then on (it
 * goes to a TX ring, or a test records and frees it).
 */
#ifndef L2CC_DP_SINK_H
#define L2CC_DP_SINK_H

#include <stdint.h>

struct dp_sink_ops {
	/* Frames port can take now: a full TX ring takes none. */
	uint32_t (*space)(void *ctx, uint32_t port);
	/* What space() is when nothing waits (a TX ring's size): size - space
	 * is what the port has been given and the wire has not yet taken. */
	uint32_t (*size)(void *ctx, uint32_t port);
	/* Queue a frame the core holds on port. Call only when space() > 0. */
	void (*put)(void *ctx, uint32_t port, uint64_t addr, uint32_t len);
	/* The end of a pass on port: hand what was put to the wire (one
	 * sendto() for the batch). */
	void (*flush)(void *ctx, uint32_t port);
};

struct dp_sink {
	const struct dp_sink_ops *ops;
	void *ctx;
};

static inline uint32_t dp_space(const struct dp_sink *k, uint32_t port)
{
	return k->ops->space(k->ctx, port);
}

static inline uint32_t dp_size(const struct dp_sink *k, uint32_t port)
{
	return k->ops->size(k->ctx, port);
}

static inline void dp_put(const struct dp_sink *k, uint32_t port, uint64_t addr, uint32_t len)
{
	k->ops->put(k->ctx, port, addr, len);
}

static inline void dp_flush(const struct dp_sink *k, uint32_t port)
{
	k->ops->flush(k->ctx, port);
}

#endif
