/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual output queues: one FIFO per (input port, output port, priority),
 * linked through the per-frame metadata so queueing never allocates. Each
 * output arbitrates round-robin across input ports within a priority, and
 * strict priority (7 highest) or round-robin across priorities.
 */
#ifndef L2CC_VOQ_H
#define L2CC_VOQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "l2cc_shared.h"

#define VOQ_NONE UINT32_MAX
#define VOQ_NPRIO L2CC_NPRIO

enum voq_sched { VOQ_SCHED_STRICT = 0, VOQ_SCHED_RR = 1 };

/*
 * Per-frame metadata, one per UMEM frame index: the switch's one record of
 * a frame it holds. The VOQs link frames through `next` and count `len`;
 * the rest belongs to the switch (addr, flags) and to the congestion point
 * of the frame's output (cp: zeroed when the frame is queued).
 */
struct voq_frame {
	uint64_t addr;          /* descriptor address (the data may start past the frame's base) */
	uint32_t next;          /* next frame in its VOQ */
	uint16_t len;
	uint8_t flags;          /* VOQ_F_* */
	uint8_t cp;             /* the congestion point's own bits for this frame */
};
/* Counted in its input buffer: released when it leaves. */
#define VOQ_F_CHARGED 0x01
/* One of the copies of a flooded frame: the frame is counted in its input
 * buffer once, for all of them, until the last one leaves (switch.c). */
#define VOQ_F_FLOOD 0x02

struct voq_q {
	uint32_t head, tail;
	uint32_t frames;
	uint64_t bytes;
};

struct voq {
	uint32_t nports;
	uint32_t nframes;
	enum voq_sched sched;
	struct voq_frame *f;    /* [nframes] */
	struct voq_q *q;        /* [in][out][prio] */
	uint16_t *rr_in;        /* [out][prio]: next input to serve */
	uint8_t *rr_prio;       /* [out]: next priority to serve (RR scheduling) */
	uint32_t *out_frames;   /* [out][prio]: frames waiting for this output */
	uint64_t *out_bytes;    /* [out][prio] */
	uint32_t *out_total;    /* [out]: frames waiting, all priorities */
	uint64_t *out_total_bytes; /* [out] */
};

int voq_create(struct voq **out, uint32_t nports, uint32_t nframes, enum voq_sched sched);
void voq_destroy(struct voq *v);

static inline struct voq_q *voq_q(const struct voq *v, uint32_t in, uint32_t out, uint32_t prio)
{
	return &v->q[((size_t)in * v->nports + out) * VOQ_NPRIO + prio];
}

void voq_push(struct voq *v, uint32_t in, uint32_t out, uint32_t prio, uint32_t frame,
	      uint16_t len);
/* The metadata of frame index i. */
static inline struct voq_frame *voq_frame(const struct voq *v, uint32_t i) { return &v->f[i]; }

/* Remove and return the head of (in, out, prio); VOQ_NONE if empty. */
uint32_t voq_pop(struct voq *v, uint32_t in, uint32_t out, uint32_t prio);
static inline uint32_t voq_head(const struct voq *v, uint32_t in, uint32_t out, uint32_t prio)
{
	const struct voq_q *q = voq_q(v, in, out, prio);

	return q->frames ? q->head : VOQ_NONE;
}

/* Choose what output `out` sends next among priorities in prio_mask: sets
 * *in and *prio and returns true, or false if nothing eligible waits. The
 * round-robin pointers move only when voq_pop() takes the frame. */
bool voq_select(const struct voq *v, uint32_t out, uint8_t prio_mask, uint32_t *in,
		uint32_t *prio);

/* Take every queued frame (at shutdown); calls fn per frame with its input port. */
void voq_drain(struct voq *v, void (*fn)(void *ctx, uint32_t frame, uint32_t in), void *ctx);

#endif
