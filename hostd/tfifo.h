/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A FIFO of timers on entries of a flow table: (id, generation, deadline).
 * Every entry of one FIFO waits the same delay, so deadlines are in order
 * and the head is always the next due. An entry whose flow has ended (or
 * whose id went to a newer flow) is dropped when it comes up.
 */
#ifndef L2CC_HOSTD_TFIFO_H
#define L2CC_HOSTD_TFIFO_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "flow.h"

struct tfifo {
	uint32_t cap, head, n;
	uint16_t *id, *gen;
	uint64_t *at;
};

static inline int tfifo_init(struct tfifo *q, uint32_t cap)
{
	q->cap = cap;
	q->head = q->n = 0;
	q->id = calloc(cap, sizeof(*q->id));
	q->gen = calloc(cap, sizeof(*q->gen));
	q->at = calloc(cap, sizeof(*q->at));
	return q->id && q->gen && q->at ? 0 : -ENOMEM;
}

static inline void tfifo_fini(struct tfifo *q)
{
	free(q->id);
	free(q->gen);
	free(q->at);
}

static inline bool tfifo_full(const struct tfifo *q) { return q->n == q->cap; }

/* Append (the caller keeps an entry per flow at most, or checks tfifo_full). */
static inline void tfifo_push(struct tfifo *q, uint16_t id, uint16_t gen, uint64_t at)
{
	uint32_t slot = (q->head + q->n) % q->cap;

	q->id[slot] = id;
	q->gen[slot] = gen;
	q->at[slot] = at;
	q->n++;
}

/* The next entry due by now, as its flow in t; entries of flows that have
 * ended since are dropped on the way. NULL when nothing more is due. */
static inline struct flow *tfifo_pop_due(struct tfifo *q, const struct flow_table *t,
					 uint64_t now)
{
	while (q->n && q->at[q->head] <= now) {
		struct flow *f = flow_by_ref(t, q->id[q->head], q->gen[q->head]);

		q->head = (q->head + 1) % q->cap;
		q->n--;
		if (f)
			return f;
	}
	return NULL;
}

static inline uint64_t tfifo_next(const struct tfifo *q)
{
	return q->n ? q->at[q->head] : UINT64_MAX;
}

#endif
