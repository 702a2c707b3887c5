// SPDX-License-Identifier: BSD-2-Clause
#include "voq.h"

#include <errno.h>
#include <stdlib.h>

int voq_create(struct voq **out, uint32_t nports, uint32_t nframes, enum voq_sched sched)
{
	size_t nq = (size_t)nports * nports * VOQ_NPRIO;
	struct voq *v;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->nports = nports;
	v->nframes = nframes;
	v->sched = sched;
	v->f = calloc(nframes, sizeof(*v->f));
	v->q = calloc(nq, sizeof(*v->q));
	v->rr_in = calloc((size_t)nports * VOQ_NPRIO, sizeof(*v->rr_in));
	v->rr_prio = calloc(nports, sizeof(*v->rr_prio));
	v->out_frames = calloc((size_t)nports * VOQ_NPRIO, sizeof(*v->out_frames));
	v->out_bytes = calloc((size_t)nports * VOQ_NPRIO, sizeof(*v->out_bytes));
	v->out_total = calloc(nports, sizeof(*v->out_total));
	v->out_total_bytes = calloc(nports, sizeof(*v->out_total_bytes));
	if (!v->f || !v->q || !v->rr_in || !v->rr_prio || !v->out_frames ||
	    !v->out_bytes || !v->out_total || !v->out_total_bytes) {
		voq_destroy(v);
		return -ENOMEM;
	}
	*out = v;
	return 0;
}

void voq_destroy(struct voq *v)
{
	if (!v)
		return;
	free(v->f);
	free(v->q);
	free(v->rr_in);
	free(v->rr_prio);
	free(v->out_frames);
	free(v->out_bytes);
	free(v->out_total);
	free(v->out_total_bytes);
	free(v);
}

void voq_push(struct voq *v, uint32_t in, uint32_t out, uint32_t prio, uint32_t frame,
	      uint16_t len)
{
	struct voq_q *q = voq_q(v, in, out, prio);
	size_t op = (size_t)out * VOQ_NPRIO + prio;

	v->f[frame].next = VOQ_NONE;
	v->f[frame].len = len;
	if (q->frames)
		v->f[q->tail].next = frame;
	else
		q->head = frame;
	q->tail = frame;
	q->frames++;
	q->bytes += len;
	v->out_frames[op]++;
	v->out_bytes[op] += len;
	v->out_total[out]++;
	v->out_total_bytes[out] += len;
}

uint32_t voq_pop(struct voq *v, uint32_t in, uint32_t out, uint32_t prio)
{
	struct voq_q *q = voq_q(v, in, out, prio);
	size_t op = (size_t)out * VOQ_NPRIO + prio;
	uint32_t frame;

	if (!q->frames)
		return VOQ_NONE;
	frame = q->head;
	q->head = v->f[frame].next;
	q->frames--;
	q->bytes -= v->f[frame].len;
	v->out_frames[op]--;
	v->out_bytes[op] -= v->f[frame].len;
	v->out_total[out]--;
	v->out_total_bytes[out] -= v->f[frame].len;
	v->rr_in[op] = (in + 1) % v->nports;
	if (v->sched == VOQ_SCHED_RR)
		v->rr_prio[out] = (prio + VOQ_NPRIO - 1) % VOQ_NPRIO;
	return frame;
}

static bool voq_pick_input(const struct voq *v, uint32_t out, uint32_t prio, uint32_t *in)
{
	uint32_t start = v->rr_in[(size_t)out * VOQ_NPRIO + prio];

	for (uint32_t k = 0; k < v->nports; k++) {
		uint32_t i = (start + k) % v->nports;

		if (voq_q(v, i, out, prio)->frames) {
			*in = i;
			return true;
		}
	}
	return false;
}

bool voq_select(const struct voq *v, uint32_t out, uint8_t prio_mask, uint32_t *in,
		uint32_t *prio)
{
	uint32_t first = v->sched == VOQ_SCHED_RR ? v->rr_prio[out] : VOQ_NPRIO - 1;

	if (!v->out_total[out])
		return false;
	/* Walk priorities downward from `first` (7 for strict), wrapping for RR. */
	for (uint32_t k = 0; k < VOQ_NPRIO; k++) {
		uint32_t p = (first + VOQ_NPRIO - k) % VOQ_NPRIO;

		if (!(prio_mask & (1u << p)) || !v->out_frames[(size_t)out * VOQ_NPRIO + p])
			continue;
		if (voq_pick_input(v, out, p, in)) {
			*prio = p;
			return true;
		}
	}
	return false;
}

void voq_drain(struct voq *v, void (*fn)(void *ctx, uint32_t frame, uint32_t in), void *ctx)
{
	for (uint32_t in = 0; in < v->nports; in++)
		for (uint32_t out = 0; out < v->nports; out++)
			for (uint32_t p = 0; p < VOQ_NPRIO; p++) {
				uint32_t f;

				while ((f = voq_pop(v, in, out, p)) != VOQ_NONE)
					fn(ctx, f, in);
			}
}
