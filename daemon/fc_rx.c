// SPDX-License-Identifier: BSD-2-Clause
/* Ingress flow control state: see fc_rx.h. */
#include "fc_rx.h"

#include <errno.h>
#include <string.h>

/* What a room of NULL grants: we hand everything on at once (hostd). A
 * finite number keeps the arithmetic plain. */
#define FC_RX_UNLIMITED (1ull << 40)

void fc_rx_configure(struct fc_rx *f, const struct fc_rx_cfg *cfg, uint64_t now)
{
	bool first = !f->cfg.mode && !f->credit_next_ns;

	f->cfg = *cfg;
	if (f->cfg.xon >= f->cfg.xoff)
		f->cfg.xon = f->cfg.xoff ? f->cfg.xoff - 1 : 0;
	if (!f->cfg.credit_step)
		f->cfg.credit_step = 1;
	if (first)
		f->credit_next_ns = now;
}

static inline uint64_t fc_rx_limit(const struct fc_rx *f, const uint64_t *room, int prio)
{
	return f->rcvd[prio] + (room ? room[prio] : FC_RX_UNLIMITED);
}

static bool fc_rx_pausing(const struct fc_rx *f)
{
	return f->cfg.mode == FC_RX_PAUSE || f->cfg.mode == FC_RX_PFC;
}

/* Grant at once after a step; a smaller change at the next interval. */
static void fc_rx_credit_check(struct fc_rx *f, const uint64_t *room, uint64_t now)
{
	bool changed = false;

	for (int i = 0; i < L2CC_NPRIO; i++) {
		uint64_t lim = fc_rx_limit(f, room, i);

		if (lim - f->adv_limit[i] >= f->cfg.credit_step) {
			f->credit_due = true;
			return;
		}
		changed |= lim != f->adv_limit[i];
	}
	if (changed && f->credit_next_ns > now + f->cfg.credit_interval)
		f->credit_next_ns = now + f->cfg.credit_interval;
}

void fc_rx_update(struct fc_rx *f, const uint64_t occ[L2CC_NPRIO],
		  const uint64_t room[L2CC_NPRIO], uint64_t now)
{
	switch (f->cfg.mode) {
	case FC_RX_PAUSE: {
		bool over = false, under = true;

		for (int i = 0; i < L2CC_NPRIO; i++) {
			over |= occ[i] >= f->cfg.xoff;
			under &= occ[i] <= f->cfg.xon;
		}
		if (over)
			f->xoff_mask = 1;
		else if (under)
			f->xoff_mask = 0;
		break;
	}
	case FC_RX_PFC:
		for (int i = 0; i < L2CC_NPRIO; i++) {
			if (occ[i] >= f->cfg.xoff)
				f->xoff_mask |= 1u << i;
			else if (occ[i] <= f->cfg.xon)
				f->xoff_mask &= ~(1u << i);
		}
		break;
	case FC_RX_CREDIT:
		fc_rx_credit_check(f, room, now);
		break;
	default:
		break;
	}
}

void fc_rx_credit_in(struct fc_rx *f, const struct wire_credit *c)
{
	uint8_t unit = f->cfg.unit_frames ? L2CC_CREDIT_FRAMES : L2CC_CREDIT_BYTES;

	/* Every frame the partner counted before this message has reached us
	 * or is lost: take its count as ours. */
	if (c->sent_unit != unit)
		return;
	for (int i = 0; i < L2CC_NPRIO; i++)
		if (c->prio_mask & (1u << i))
			f->rcvd[i] = c->sent[i];
}

void fc_rx_sent_changed(struct fc_rx *f, uint64_t now)
{
	f->sent_dirty = true;
	if (f->credit_next_ns > now + f->cfg.credit_interval)
		f->credit_next_ns = now + f->cfg.credit_interval;
}

void fc_rx_link_down(struct fc_rx *f)
{
	f->xoff_mask = f->told_mask = f->refresh_mask = 0;
	f->credit_due = false;
	f->sent_dirty = false;
	f->credit_next_ns = UINT64_MAX;
}

void fc_rx_link_up(struct fc_rx *f, uint64_t now)
{
	f->credit_next_ns = now;
	if (f->cfg.mode == FC_RX_CREDIT)
		f->credit_due = true;
}

void fc_rx_timers(struct fc_rx *f, const uint64_t room[L2CC_NPRIO], uint64_t now)
{
	if (fc_rx_pausing(f)) {
		/* Refresh an XOFF before the partner's pause timer runs out. */
		for (int i = 0; i < L2CC_NPRIO; i++)
			if ((f->told_mask & (1u << i)) && (f->xoff_mask & (1u << i)) &&
			    now - f->xoff_sent_ns[i] >= f->cfg.pause_ns / 2)
				f->refresh_mask |= 1u << i;
	}
	if (f->cfg.mode == FC_RX_CREDIT && now >= f->credit_next_ns) {
		bool changed = false;

		/* With unlimited room (NULL) a moving limit is no news; what
		 * the partner needs then is our sent count, and
		 * fc_rx_sent_changed() armed this timer for it. */
		for (int i = 0; room && i < L2CC_NPRIO; i++)
			changed |= fc_rx_limit(f, room, i) != f->adv_limit[i];
		changed |= f->sent_dirty;
		if (changed || now - f->credit_last_ns >= FC_RX_CREDIT_KEEPALIVE_NS)
			f->credit_due = true;
		/* Sleep until the keepalive; a change arms the interval again.
		 * A grant that cannot be built keeps credit_due and is tried
		 * on every pass until it goes. */
		f->credit_next_ns = f->credit_last_ns + FC_RX_CREDIT_KEEPALIVE_NS;
		if (f->credit_next_ns <= now)
			f->credit_next_ns = now + FC_RX_CREDIT_KEEPALIVE_NS;
	}
}

uint64_t fc_rx_next(const struct fc_rx *f)
{
	uint64_t d = UINT64_MAX;

	/* A refresh already due (refresh_mask) waits for the port's TX pass,
	 * which knows when it can send (a full TX ring, the wire clock):
	 * its time has passed and would wake the loop at once, again and
	 * again, for as long as the frame cannot go. */
	if (fc_rx_pausing(f)) {
		for (int i = 0; i < L2CC_NPRIO; i++) {
			uint64_t t = f->xoff_sent_ns[i] + f->cfg.pause_ns / 2;

			if ((f->told_mask & f->xoff_mask & ~f->refresh_mask & (1u << i)) && t < d)
				d = t;
		}
	}
	if (f->cfg.mode == FC_RX_CREDIT && f->credit_next_ns < d)
		d = f->credit_next_ns;
	return d;
}

static int fc_rx_build_pause(struct fc_rx *f, void *buf, size_t buflen, const uint8_t src[6],
			     uint64_t now)
{
	uint8_t change = f->xoff_mask ^ f->told_mask, on, send;
	int len;

	if (f->cfg.mode == FC_RX_PAUSE) {
		/* One state for every priority: bit 0 stands for it. */
		change &= 1;
		if (!change && !(f->refresh_mask & 1))
			return 0;
		on = f->xoff_mask & 1;
		len = wire_build_pause(buf, buflen, src, on ? f->cfg.pause_quanta : 0);
		if (len < 0)
			return len;
		f->st.pause_tx++;
		send = 1;
	} else {
		uint16_t quanta[L2CC_NPRIO] = { 0 };

		send = change | (f->refresh_mask & f->xoff_mask);
		if (!send)
			return 0;
		for (int i = 0; i < L2CC_NPRIO; i++)
			if (send & f->xoff_mask & (1u << i))
				quanta[i] = f->cfg.pause_quanta;
		len = wire_build_pfc(buf, buflen, src, send, quanta);
		if (len < 0)
			return len;
		f->st.pfc_tx++;
		for (int i = 0; i < L2CC_NPRIO; i++)
			if (send & (1u << i))
				f->st.pfc_tx_prio[i]++;
	}
	for (int i = 0; i < L2CC_NPRIO; i++)
		if (send & f->xoff_mask & (1u << i))
			f->xoff_sent_ns[i] = now;
	f->told_mask = (f->told_mask & ~send) | (f->xoff_mask & send);
	f->refresh_mask &= ~send;
	return len;
}

static int fc_rx_build_credit(struct fc_rx *f, void *buf, size_t buflen, const uint8_t src[6],
			      const struct fc_tx *etx, const uint64_t *room, uint64_t now)
{
	struct wire_credit c = {
		.unit = f->cfg.unit_frames ? L2CC_CREDIT_FRAMES : L2CC_CREDIT_BYTES,
		.prio_mask = 0xff,
		.sent_unit = etx->credit_have ? etx->credit_unit : L2CC_CREDIT_UNIT_NONE,
	};
	int len;

	for (int i = 0; i < L2CC_NPRIO; i++) {
		c.limit[i] = fc_rx_limit(f, room, i);
		c.sent[i] = etx->credit_sent[i];
	}
	len = wire_build_credit(buf, buflen, src, &c);
	if (len < 0)
		return len;
	memcpy(f->adv_limit, c.limit, sizeof(f->adv_limit));
	f->st.credit_tx++;
	f->credit_last_ns = now;
	f->credit_due = false;
	f->sent_dirty = false;
	f->credit_next_ns = now + FC_RX_CREDIT_KEEPALIVE_NS;
	return len;
}

int fc_rx_build(struct fc_rx *f, void *buf, size_t buflen, const uint8_t src[6],
		const struct fc_tx *etx, const uint64_t room[L2CC_NPRIO], uint64_t now)
{
	if (fc_rx_pausing(f)) {
		int len = fc_rx_build_pause(f, buf, buflen, src, now);

		if (len)
			return len;
	}
	if (f->credit_due)
		return fc_rx_build_credit(f, buf, buflen, src, etx, room, now);
	return 0;
}
