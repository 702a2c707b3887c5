// SPDX-License-Identifier: BSD-2-Clause
/*
 * The 802.1Qau reaction point's rate increase, shared by QCN and DCQCN
 * (rp_qcn_inc.h says what each stage does and where the sources differ).
 */
#include "rp_qcn_inc.h"

#include <string.h>

/* Released within this fraction of the ceiling: averaging toward a target
 * at the ceiling would only approach it. */
#define QCN_RELEASE_FRAC 0.999

void qcn_inc_init(struct qcn_inc *s, double r)
{
	memset(s, 0, sizeof(*s));
	s->rc = s->rt = r;
	s->stage = QCN_LINE_RATE;
	s->jit_pm = 1000;
	s->rng = 0x9e3779b9u;
}

/* The next byte cycle's length factor, 850 .. 1150 per mille. */
static void qcn_jitter(const struct qcn_inc_cfg *c, struct qcn_inc *s)
{
	uint32_t x = s->rng ? s->rng : 1;

	if (!c->byte_jitter)
		return;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	s->rng = x;
	s->jit_pm = (uint16_t)(850 + x % 301);
}

void qcn_inc_decrease(const struct qcn_inc_cfg *c, struct qcn_inc *s, double rc_new,
		      bool set_target)
{
	if (set_target)
		s->rt = s->rc;
	s->rc = rc_new < c->rpg_min_rate ? c->rpg_min_rate : rc_new;
	if (s->rc > c->max_rate)
		s->rc = c->max_rate;
	s->bytes = 0;
	s->byte_stage = s->time_stage = 0;
	s->stage = QCN_FAST_RECOVERY;
	qcn_jitter(c, s);
}

/* Fast recovery is over once either counter reached F. */
static bool qcn_past_fr(const struct qcn_inc_cfg *c, const struct qcn_inc *s)
{
	return s->byte_stage >= c->rpg_threshold || s->time_stage >= c->rpg_threshold;
}

/* One step, after the counter that fired (the byte counter when `bytes`)
 * was incremented. */
static void qcn_step(const struct qcn_inc_cfg *c, struct qcn_inc *s, bool bytes)
{
	uint32_t f = c->rpg_threshold;
	uint32_t bs = s->byte_stage, ts = s->time_stage, lo;

	if (c->stage_before) {
		if (bytes)
			bs--;
		else
			ts--;
	}
	lo = bs < ts ? bs : ts;
	/* A target left over from a much higher rate: the first step after a
	 * decrease brings it closer (802.1Qau). */
	if (s->byte_stage + s->time_stage == 1 && s->rt > 10.0 * s->rc)
		s->rt /= 8.0;
	/* Without a byte counter the time counter decides alone. */
	if (!c->rpg_byte_reset ? ts > f : bs >= f && ts >= f) {
		/* i counts the hyper-active steps: 1 at the first */
		uint32_t i = !c->rpg_byte_reset ? ts - f : lo - f + 1;

		s->rt += (c->hai_by_stage ? (double)i : 1.0) * c->rpg_hai_rate;
		s->stage = QCN_HYPER;
	} else if (!c->rpg_byte_reset ? ts == f : bs >= f || ts >= f) {
		s->rt += c->rpg_ai_rate;
		s->stage = QCN_ACTIVE;
	} else {
		s->stage = QCN_FAST_RECOVERY;
	}
	if (s->rt > c->max_rate)
		s->rt = c->max_rate;
	s->rc = (s->rc + s->rt) / 2.0;
	s->increases++;
	if (s->rc >= QCN_RELEASE_FRAC * c->max_rate) {
		s->rc = s->rt = c->max_rate;
		s->stage = QCN_LINE_RATE;
	}
}

bool qcn_inc_bytes(const struct qcn_inc_cfg *c, struct qcn_inc *s, uint32_t len)
{
	uint64_t lim = c->rpg_byte_reset;

	if (s->stage == QCN_LINE_RATE || !lim)
		return false;
	if ((c->halve_after_fr && qcn_past_fr(c, s)) || (c->halve_in_hyper && s->stage == QCN_HYPER))
		lim /= 2;
	if (c->byte_jitter)
		lim = lim * s->jit_pm / 1000;
	s->bytes += len;
	if (s->bytes < lim)
		return false;
	s->bytes = 0;
	qcn_jitter(c, s);
	s->byte_stage++;
	qcn_step(c, s, true);
	return true;
}

void qcn_inc_timer(const struct qcn_inc_cfg *c, struct qcn_inc *s)
{
	if (s->stage == QCN_LINE_RATE)
		return;
	s->time_stage++;
	qcn_step(c, s, false);
}

uint64_t qcn_inc_period(const struct qcn_inc_cfg *c, const struct qcn_inc *s)
{
	if (s->stage == QCN_LINE_RATE)
		return 0;
	return (c->halve_after_fr && qcn_past_fr(c, s)) || (c->halve_in_hyper && s->stage == QCN_HYPER)
	       ? c->rpg_time_reset / 2 : c->rpg_time_reset;
}

const char *qcn_inc_stage_name(const struct qcn_inc *s)
{
	static const char *const names[] = { "line_rate", "fast_recovery", "active", "hyper" };

	return s->stage < 4 ? names[s->stage] : "?";
}
