// SPDX-License-Identifier: BSD-2-Clause
/* Egress flow control state: see fc_tx.h. */
#include "fc_tx.h"

/* Fold a pause that has run out into the accumulated paused time. */
static void fc_settle(struct fc_tx *f, int prio, uint64_t now)
{
	if (f->pause_start[prio] && f->paused_until[prio] <= now) {
		f->paused_acc[prio] += f->paused_until[prio] - f->pause_start[prio];
		f->pause_start[prio] = 0;
		if (f->paused_until[prio] > f->resume_ns)
			f->resume_ns = f->paused_until[prio];
	}
}

void fc_tx_pause_until(struct fc_tx *f, int prio, uint64_t at, uint64_t until)
{
	fc_settle(f, prio, at);
	if (!until) {
		if (f->pause_start[prio]) {
			f->paused_acc[prio] += at - f->pause_start[prio];
			f->pause_start[prio] = 0;
			f->resume_ns = at;
		}
		f->paused_until[prio] = 0;
		return;
	}
	if (!f->pause_start[prio])
		f->pause_start[prio] = at;
	f->paused_until[prio] = until;
}

static void fc_pause(struct fc_tx *f, int prio, uint16_t quanta, uint64_t rate, uint64_t now)
{
	fc_tx_pause_until(f, prio, now, quanta ? now + wire_quanta_to_ns(quanta, rate) : 0);
	if (quanta)
		f->pauses++;
	else
		f->resumes++;
}

void fc_tx_macctrl(struct fc_tx *f, const struct wire_macctrl *mc, uint64_t rate_bps,
		   uint64_t now)
{
	for (int i = 0; i < FC_NPRIO; i++) {
		if (mc->opcode == L2CC_MACCTRL_PAUSE)
			fc_pause(f, i, mc->quanta[0], rate_bps, now);
		else if (mc->class_enable & (1u << i))
			fc_pause(f, i, mc->quanta[i], rate_bps, now);
	}
}

uint8_t fc_tx_open_mask(struct fc_tx *f, uint64_t now)
{
	uint8_t mask = 0xff;

	for (int i = 0; i < FC_NPRIO; i++) {
		if (!f->pause_start[i])
			continue;
		fc_settle(f, i, now);
		if (f->pause_start[i])
			mask &= ~(1u << i);
	}
	return mask;
}

uint8_t fc_tx_paused_mask(const struct fc_tx *f, uint64_t now)
{
	uint8_t mask = 0;

	for (int i = 0; i < FC_NPRIO; i++)
		if (f->pause_start[i] && f->paused_until[i] > now)
			mask |= 1u << i;
	return mask;
}

uint64_t fc_tx_paused_ns(const struct fc_tx *f, int prio, uint64_t now)
{
	uint64_t t = f->paused_acc[prio];

	if (f->pause_start[prio]) {
		uint64_t end = f->paused_until[prio] < now ? f->paused_until[prio] : now;

		t += end - f->pause_start[prio];
	}
	return t;
}

uint64_t fc_tx_paused_max_ns(const struct fc_tx *f, uint64_t now)
{
	uint64_t max = 0;

	for (int i = 0; i < FC_NPRIO; i++) {
		uint64_t t = fc_tx_paused_ns(f, i, now);

		if (t > max)
			max = t;
	}
	return max;
}

uint64_t fc_tx_pause_end(const struct fc_tx *f, uint8_t prios)
{
	uint64_t t = UINT64_MAX;

	for (int i = 0; i < FC_NPRIO; i++)
		if ((prios & (1u << i)) && f->pause_start[i] && f->paused_until[i] < t)
			t = f->paused_until[i];
	return t;
}

void fc_tx_link_down(struct fc_tx *f, uint64_t now)
{
	for (int i = 0; i < FC_NPRIO; i++) {
		fc_settle(f, i, now);
		if (f->pause_start[i]) {
			f->paused_acc[i] += now - f->pause_start[i];
			f->pause_start[i] = 0;
		}
		f->paused_until[i] = 0;
		f->credit_limit[i] = f->credit_sent[i] = 0;
	}
	f->credit_have = false;
	f->resume_ns = now;
}

bool fc_tx_credit(struct fc_tx *f, const struct wire_credit *c, uint64_t now)
{
	f->credit_grants++;
	f->resume_ns = now;
	if (!f->credit_have || c->unit != f->credit_unit) {
		f->credit_have = true;
		f->credit_unit = c->unit;
		for (int i = 0; i < FC_NPRIO; i++)
			f->credit_sent[i] = f->credit_limit[i] = c->limit[i];
		return true;
	}
	for (int i = 0; i < FC_NPRIO; i++)
		if (c->prio_mask & (1u << i))
			f->credit_limit[i] = c->limit[i];
	return false;
}
