// SPDX-License-Identifier: BSD-2-Clause
/*
 * The switchd datapath: receive on every port, classify, learn, admit into
 * the input buffer (per port and priority), queue in a VOQ, and transmit from
 * each output at its emulated line rate, honouring PAUSE/PFC/credits from the
 * peer and generating them toward it. Nothing here allocates or logs
 * unthrottled; frames move as descriptors.
 */
#define LOG_SUBSYS "switch"
#include "switch_private.h"
#include "log.h"
#include "loop.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define SW_RX_BATCH_MAX 256
#define SW_AGE_INTERVAL_NS 1000000000ull
#define SW_CREDIT_KEEPALIVE_NS 50000000ull

const char *const sw_drop_names[SW_DROP_MAX] = {
	[SW_DROP_MALFORMED] = "malformed",
	[SW_DROP_OVERSIZE] = "oversize",
	[SW_DROP_BUFFER_FULL] = "buffer_full",
	[SW_DROP_FILTERED] = "filtered",
	[SW_DROP_LINK_LOCAL] = "link_local",
	[SW_DROP_FORGED] = "forged",
	[SW_DROP_UNSUPPORTED] = "unsupported",
	[SW_DROP_NO_FRAME] = "no_frame",
};

/* ---- control frames ----------------------------------------------------- */

/* Queue a control frame built by the caller into a fresh umem frame. */
static void *sw_ctrl_begin(struct sw *s, struct sw_port *p, int64_t *idx)
{
	if (p->ctrl_n == SW_CTRLQ) {
		p->st.drop[SW_DROP_NO_FRAME]++;
		return NULL;
	}
	*idx = umem_alloc(s->umem);
	if (*idx < 0) {
		p->st.drop[SW_DROP_NO_FRAME]++;
		return NULL;
	}
	s->faddr[*idx] = umem_addr(s->umem, *idx);
	return umem_data(s->umem, s->faddr[*idx]);
}

static void sw_tx_frame(struct sw *s, struct sw_port *p, uint32_t idx, uint32_t len)
{
	xport_tx_one(p->xp, s->faddr[idx], len);
	wclock_charge(&p->wc, len);
	p->st.tx_frames++;
	p->st.tx_bytes += len;
}

/* Move queued control frames into the TX ring as far as the wire allows. */
static uint32_t sw_tx_ctrl(struct sw *s, struct sw_port *p)
{
	uint32_t space = xport_tx_space(p->xp), sent = 0;

	while (p->ctrl_n && space && wclock_ready(&p->wc, s->now)) {
		sw_tx_frame(s, p, p->ctrlq[p->ctrl_head], p->ctrl_len[p->ctrl_head]);
		p->st.ctrl_tx_frames++;
		p->ctrl_head = (p->ctrl_head + 1) % SW_CTRLQ;
		p->ctrl_n--;
		space--;
		sent++;
	}
	return sent;
}

static void sw_ctrl_commit(struct sw *s, struct sw_port *p, int64_t idx, int len)
{
	uint32_t slot;

	if (len < 0) {
		umem_free(s->umem, idx);
		return;
	}
	slot = (p->ctrl_head + p->ctrl_n) % SW_CTRLQ;
	p->ctrlq[slot] = idx;
	p->ctrl_len[slot] = len;
	p->ctrl_n++;
	/* Out now, not after the rest of the RX batch: every frame the peer
	 * sends before it sees a PAUSE or a credit limit needs headroom. */
	if (sw_tx_ctrl(s, p))
		xport_kick(p->xp);
}

static bool sw_send_pause(struct sw *s, struct sw_port *p, uint8_t prio_mask, bool on)
{
	uint16_t q = on ? p->cfg->pause_quanta : 0;
	int64_t idx;
	void *buf;
	int len;

	buf = sw_ctrl_begin(s, p, &idx);
	if (!buf)
		return false;
	if (p->cfg->fc == FC_PFC) {
		uint16_t quanta[SW_NPRIO] = { 0 };

		for (int i = 0; i < SW_NPRIO; i++)
			if (prio_mask & (1u << i))
				quanta[i] = q;
		len = wire_build_pfc(buf, s->umem->frame_size, p->xp->mac, prio_mask, quanta);
		for (int i = 0; i < SW_NPRIO; i++)
			if (prio_mask & (1u << i))
				p->st.prio[i].pfc_tx++;
		p->st.pfc_tx++;
	} else {
		len = wire_build_pause(buf, s->umem->frame_size, p->xp->mac, q);
		p->st.pause_tx++;
	}
	sw_ctrl_commit(s, p, idx, len);
	return len > 0;
}

static inline uint64_t sw_credit_limit(const struct sw_port *p, int prio)
{
	return p->rcvd[prio] + p->cap - p->occ[prio];
}

static void sw_send_credit(struct sw *s, struct sw_port *p)
{
	struct wire_credit c = {
		.unit = p->unit_frames ? L2CC_CREDIT_FRAMES : L2CC_CREDIT_BYTES,
		.prio_mask = 0xff,
		.sent_unit = p->etx.credit_have ? p->etx.credit_unit : L2CC_CREDIT_UNIT_NONE,
	};
	int64_t idx;
	void *buf;
	int len;

	buf = sw_ctrl_begin(s, p, &idx);
	if (!buf)
		return;
	for (int i = 0; i < SW_NPRIO; i++) {
		c.limit[i] = sw_credit_limit(p, i);
		c.sent[i] = p->etx.credit_sent[i];
	}
	len = wire_build_credit(buf, s->umem->frame_size, p->xp->mac, &c);
	sw_ctrl_commit(s, p, idx, len);
	if (len < 0)
		return;
	memcpy(p->adv_limit, c.limit, sizeof(p->adv_limit));
	p->st.credit_tx++;
	p->credit_last_ns = s->now;
}

/* Grant more as soon as an eighth of the buffer has come free; a smaller
 * change goes out with the next credit_interval tick, which is armed only
 * then (an idle link is refreshed by the keepalive alone). */
static void sw_credit_check(struct sw *s, struct sw_port *p)
{
	bool changed = false;

	for (int i = 0; i < SW_NPRIO; i++) {
		if (sw_credit_limit(p, i) - p->adv_limit[i] >= p->credit_step) {
			sw_send_credit(s, p);
			return;
		}
		changed |= sw_credit_limit(p, i) != p->adv_limit[i];
	}
	if (changed && p->credit_next_ns > s->now + p->cfg->credit_interval)
		p->credit_next_ns = s->now + p->cfg->credit_interval;
}

/* ---- input buffer and flow control toward the upstream sender ----------- */

static inline uint64_t sw_units(const struct sw_port *p, uint32_t len)
{
	return p->unit_frames ? 1 : len;
}

/* After occupancy changed: XOFF/XON for pause and PFC, credit updates. */
static void sw_fc_update(struct sw *s, struct sw_port *p, int prio)
{
	switch (p->cfg->fc) {
	case FC_PAUSE: {
		bool over = false, under = true;

		for (int i = 0; i < SW_NPRIO; i++) {
			if (p->occ[i] >= p->xoff)
				over = true;
			if (p->occ[i] > p->xon)
				under = false;
		}
		if (over && !p->xoff_mask) {
			if (sw_send_pause(s, p, 0xff, true)) {
				p->xoff_mask = 1;
				p->xoff_sent_ns[0] = s->now;
			}
		} else if (p->xoff_mask && under) {
			if (sw_send_pause(s, p, 0xff, false))
				p->xoff_mask = 0;
		}
		break;
	}
	case FC_PFC: {
		uint8_t bit = 1u << prio;

		if (p->occ[prio] >= p->xoff && !(p->xoff_mask & bit)) {
			if (sw_send_pause(s, p, bit, true)) {
				p->xoff_mask |= bit;
				p->xoff_sent_ns[prio] = s->now;
			}
		} else if ((p->xoff_mask & bit) && p->occ[prio] <= p->xon) {
			if (sw_send_pause(s, p, bit, false))
				p->xoff_mask &= ~bit;
		}
		break;
	}
	case FC_CREDIT:
		sw_credit_check(s, p);
		break;
	default:
		break;
	}
}

/* Try to take room for a frame in the input buffer of (p, prio). */
static bool sw_admit(struct sw_port *p, int prio, uint32_t len)
{
	uint64_t u = sw_units(p, len);

	if (p->occ[prio] + u > p->cap)
		return false;
	p->occ[prio] += u;
	if (p->occ[prio] > p->peak[prio])
		p->peak[prio] = p->occ[prio];
	return true;
}

static void sw_full_check(struct sw *s, struct sw_port *p, int prio);

/* A data frame left the input buffer of (p, prio). */
static void sw_release(struct sw *s, struct sw_port *p, int prio, uint32_t len, bool charged)
{
	if (charged)
		p->occ[prio] -= sw_units(p, len);
	if (p->full_mask & (1u << prio))
		sw_full_check(s, p, prio);
	sw_fc_update(s, p, prio);
}

static void sw_drop_frame(struct sw *s, struct sw_port *p, uint32_t idx, enum sw_drop why)
{
	p->st.drop[why]++;
	umem_free(s->umem, idx);
}

/* ---- receive ------------------------------------------------------------ */

static void sw_rx_macctrl(struct sw *s, struct sw_port *p, const uint8_t *pl, size_t len)
{
	struct wire_macctrl mc;
	int err = wire_parse_macctrl(pl, len, &mc);

	if (err) {
		p->st.drop[err == -EOPNOTSUPP ? SW_DROP_UNSUPPORTED : SW_DROP_MALFORMED]++;
		return;
	}
	if (mc.opcode == L2CC_MACCTRL_PAUSE) {
		p->st.pause_rx++;
		if (p->cfg->fc != FC_PAUSE) {
			p->st.fc_ignored++;
			return;
		}
	} else {
		p->st.pfc_rx++;
		for (int i = 0; i < SW_NPRIO; i++)
			if (mc.class_enable & (1u << i))
				p->st.prio[i].pfc_rx++;
		if (p->cfg->fc != FC_PFC) {
			p->st.fc_ignored++;
			return;
		}
	}
	fc_tx_macctrl(&p->etx, &mc, p->cfg->rate, s->now);
}

static void sw_rx_credit(struct sw *s, struct sw_port *p, const uint8_t *body, size_t len)
{
	uint8_t unit = p->unit_frames ? L2CC_CREDIT_FRAMES : L2CC_CREDIT_BYTES;
	struct wire_credit c;

	if (wire_parse_credit(body, len, &c)) {
		p->st.drop[SW_DROP_MALFORMED]++;
		return;
	}
	p->st.credit_rx++;
	if (p->cfg->fc != FC_CREDIT) {
		p->st.fc_ignored++;
		return;
	}
	/* As receiver: every frame the peer counted before this message has
	 * reached us or is lost; take its count as ours (IB: ABR = FCTBS). */
	if (c.sent_unit == unit)
		for (int i = 0; i < SW_NPRIO; i++)
			if (c.prio_mask & (1u << i))
				p->rcvd[i] = c.sent[i];
	/* As sender: a host cannot grant credits (we never wait for them
	 * toward a host); from a switch, the first grant needs our CREDIT
	 * back so the partner reconciles to our count. */
	if (p->cfg->role == ROLE_HOST)
		return;
	if (fc_tx_credit(&p->etx, &c, s->now)) {
		sw_send_credit(s, p);
		return;
	}
	sw_credit_check(s, p);
}

/* A frame to 01:80:C2:00:00:0x: consumed here, never forwarded. */
static void sw_rx_link_local(struct sw *s, struct sw_port *p, const struct eth_info *ei,
			     const uint8_t *frame, uint32_t len)
{
	const uint8_t *pl = frame + ei->hlen;
	size_t plen = len - ei->hlen;

	if (ei->ethertype == L2CC_ETH_P_MACCTRL) {
		sw_rx_macctrl(s, p, pl, plen);
	} else if (ei->ethertype == L2CC_ETH_P_CTRL) {
		const uint8_t *body;
		size_t blen;
		int type = wire_parse_ctrl(pl, plen, &body, &blen);

		if (type < 0) {
			p->st.drop[type == -EPROTO ? SW_DROP_UNSUPPORTED : SW_DROP_MALFORMED]++;
		} else if (type == L2CC_CTRL_CREDIT) {
			sw_rx_credit(s, p, body, blen);
		} else {
			p->st.drop[SW_DROP_UNSUPPORTED]++;
		}
	} else {
		p->st.drop[SW_DROP_LINK_LOCAL]++;
	}
}

/* ---- congestion marking (Santos, Turner and Janakiraman 2003, §IV) ------- */

/* An output is a root of congestion for prio when it is not blocked: not
 * paused and, on a credit link to a switch, with credit for a full frame.
 * A blocked output is a victim of congestion further on, not its cause. */
static bool sw_is_root(struct sw *s, struct sw_port *o, int prio)
{
	if (!(fc_tx_open_mask(&o->etx, s->now) & (1u << prio)))
		return false;
	return o->cfg->fc != FC_CREDIT || o->cfg->role != ROLE_SWITCH ||
	       fc_tx_credit_ok(&o->etx, prio, o->max_frame);
}

/* The input buffer of (p, prio) has just become full. */
static void sw_mark_full(struct sw *s, struct sw_port *p, int prio)
{
	if (p->marking == MARK_NAIVE) {
		/* Mark every data frame in this buffer, whatever its output. */
		for (int o = 0; o < s->nports; o++) {
			const struct voq_q *q = voq_q(s->voq, p->idx, o, prio);
			uint32_t f = q->frames ? q->head : VOQ_NONE;

			for (uint32_t n = 0; n < q->frames; n++, f = s->voq->next[f])
				s->fmark[f] = 1;
		}
		p->st.mark_events++;
	} else if (p->marking == MARK_SANTOS) {
		/* Each root output with a frame in this buffer marks its next
		 * cnt1 transmissions, cnt1 = frames in the switch waiting for
		 * it: the flows feeding the root are the ones to slow down. */
		for (int o = 0; o < s->nports; o++) {
			struct sw_port *op = &s->ports[o];

			if (!voq_q(s->voq, p->idx, o, prio)->frames || !sw_is_root(s, op, prio))
				continue;
			op->cnt2 = s->voq->out_total[o];
			op->st.mark_events++;
		}
	}
}

/* Edge-detect "the buffer is full": no room for another full-size frame. */
static void sw_full_check(struct sw *s, struct sw_port *p, int prio)
{
	uint8_t bit = 1u << prio;
	uint64_t room = p->cap - p->occ[prio], need = sw_units(p, p->max_frame);

	if (room < need) {
		if (!(p->full_mask & bit)) {
			p->full_mask |= bit;
			p->st.buffer_full_events++;
			if (p->marking != MARK_NONE)
				sw_mark_full(s, p, prio);
		}
	} else {
		p->full_mask &= ~bit;
	}
}

static void sw_enqueue(struct sw *s, struct sw_port *in, uint32_t out, int prio,
		       uint32_t idx, uint32_t len, bool charged)
{
	s->fcharged[idx] = charged;
	s->fmark[idx] = 0;
	voq_push(s->voq, in->idx, out, prio, idx, len);
}

/* Unknown unicast, broadcast, multicast: a copy to every other port. The
 * original frame goes to the first port; copies are new frames (flooding is
 * rare, and it keeps every frame in exactly one place). Only the original
 * counts in the input buffer, as one frame would in a real switch. */
static void sw_flood(struct sw *s, struct sw_port *p, int prio, uint32_t idx, uint32_t len)
{
	const void *src = umem_data(s->umem, s->faddr[idx]);
	bool placed = false;

	for (int o = 0; o < s->nports; o++) {
		int64_t c;

		if ((uint32_t)o == p->idx)
			continue;
		if (!placed) {
			sw_enqueue(s, p, o, prio, idx, len, true);
			placed = true;
			continue;
		}
		c = umem_alloc(s->umem);
		if (c < 0) {
			p->st.drop[SW_DROP_NO_FRAME]++;
			continue;
		}
		s->faddr[c] = umem_addr(s->umem, c);
		memcpy(umem_data(s->umem, s->faddr[c]), src, len);
		sw_enqueue(s, p, o, prio, c, len, false);
		p->st.flood_tx++;
	}
	if (!placed) {
		/* A one-port switch: nowhere to go. */
		sw_release(s, p, prio, len, true);
		sw_drop_frame(s, p, idx, SW_DROP_FILTERED);
	}
}

/* With PAUSE or PFC, a frame that finds its buffer full stays in the RX
 * ring instead of being dropped. The PAUSE went out at XOFF; what arrives
 * after it is what the peer sent before it stopped, plus what piled up
 * while this daemon waited for a CPU, which no fixed headroom covers on a
 * shared machine. The ring is the wire those frames are still on. */
static bool sw_rx_hold(const struct sw_port *p, int prio, uint32_t len)
{
	return (p->cfg->fc == FC_PAUSE || p->cfg->fc == FC_PFC) &&
	       p->occ[prio] + sw_units(p, len) > p->cap;
}

/* Returns false if the frame stays in the RX ring (see sw_rx_hold). */
static bool sw_rx_frame(struct sw *s, struct sw_port *p, uint64_t addr, uint32_t len)
{
	uint32_t idx = umem_idx(s->umem, addr);
	const uint8_t *frame = umem_data(s->umem, addr);
	struct eth_info ei;
	int out, prio;
	bool bad;

	bad = wire_parse_eth(frame, len, &ei) != 0;
	if (!bad && !wire_is_link_local(ei.dst) && sw_rx_hold(p, ei.prio, len))
		return false;
	s->faddr[idx] = addr;
	p->st.rx_frames++;
	p->st.rx_bytes += len;
	if (bad) {
		sw_drop_frame(s, p, idx, SW_DROP_MALFORMED);
		return true;
	}
	if (wire_is_link_local(ei.dst)) {
		sw_rx_link_local(s, p, &ei, frame, len);
		umem_free(s->umem, idx);
		return true;
	}
	prio = ei.prio;
	p->st.prio[prio].rx_frames++;
	p->st.prio[prio].rx_bytes += len;
	/* Counted whether it is admitted or not: a dropped frame frees credit. */
	p->rcvd[prio] += sw_units(p, len);
	if (len > p->max_frame || wire_is_multicast(ei.src)) {
		sw_fc_update(s, p, prio);
		sw_drop_frame(s, p, idx, len > p->max_frame ? SW_DROP_OVERSIZE
							    : SW_DROP_MALFORMED);
		return true;
	}
	/* FECN is the switches' to set: a host that sends it set forges a mark. */
	if (p->cfg->role == ROLE_HOST && ei.ethertype == L2CC_ETH_P_DATA_TAG &&
	    len > ei.hlen + 1u && (frame[ei.hlen + 1] & L2CC_TAG_FECN)) {
		sw_fc_update(s, p, prio);
		sw_drop_frame(s, p, idx, SW_DROP_FORGED);
		return true;
	}
	fdb_learn(s->fdb, ei.src, ei.vid, p->idx, s->now);
	out = wire_is_multicast(ei.dst) ? -ENOENT : fdb_lookup(s->fdb, ei.dst, ei.vid, s->now);
	if (out == (int)p->idx) {
		sw_fc_update(s, p, prio);
		sw_drop_frame(s, p, idx, SW_DROP_FILTERED);
		return true;
	}
	if (!sw_admit(p, prio, len)) {
		/* No room for this frame proves the buffer full now: judged at
		 * once, since this pass's transmissions may drain it before the
		 * deferred check (no flow control, a burst in one RX batch). */
		sw_full_check(s, p, prio);
		p->st.prio[prio].drop_buffer_full++;
		sw_fc_update(s, p, prio);
		sw_drop_frame(s, p, idx, SW_DROP_BUFFER_FULL);
		return true;
	}
	if (out >= 0)
		sw_enqueue(s, p, out, prio, idx, len, true);
	else
		sw_flood(s, p, prio, idx, len);
	/* Whether the buffer became full is judged after this pass's
	 * transmissions (sw_poll): a frame whose output was free has left
	 * by then, as it would have cut through a hardware switch. */
	p->full_due |= 1u << prio;
	sw_fc_update(s, p, prio);
	return true;
}

static bool sw_rx_port(struct sw *s, struct sw_port *p)
{
	struct xdp_desc d[SW_RX_BATCH_MAX];
	uint32_t n, i;

	n = xport_rx_peek(p->xp, d, s->cfg->batch);
	for (i = 0; i < n; i++)
		if (!sw_rx_frame(s, p, d[i].addr, d[i].len))
			break;
	xport_rx_done(p->xp, i, n);
	if (i < n)
		p->st.rx_holds++;
	/* A held ring is not work: sleep until the buffer drains (the RX fd
	 * is edge-triggered, so the frames waiting there do not spin us). */
	return i > 0;
}

/* ---- transmit ----------------------------------------------------------- */

/* When the data backlog of p can move next, given that the pass stopped
 * with `blocked` priorities unable to send (paused or out of credits). */
static uint64_t sw_blocked_until(const struct sw *s, const struct sw_port *p, uint8_t blocked)
{
	uint8_t waiting = 0;

	for (int i = 0; i < SW_NPRIO; i++)
		if ((blocked & (1u << i)) && s->voq->out_frames[(size_t)p->idx * VOQ_NPRIO + i])
			waiting |= 1u << i;
	/* Paused: until the pause runs out. Out of credits: until a credit
	 * update arrives, which wakes the loop by itself. */
	return fc_tx_pause_end(&p->etx, waiting);
}

/* Set FECN in a frame leaving p, if a policy (or `mark` by hand) wants it.
 * Only tagged frames can carry a mark; the others are counted. */
static void sw_mark(struct sw *s, struct sw_port *p, uint32_t idx, uint32_t len)
{
	bool want = s->fmark[idx] || p->cnt2 || p->mark_pending;
	int err;

	if (!want)
		return;
	err = wire_tag_set_fecn(umem_data(s->umem, s->faddr[idx]), len);
	if (!err)
		p->st.marked++;
	else
		p->st.mark_untagged++;
	if (s->fmark[idx])
		s->fmark[idx] = 0;
	else if (p->cnt2)
		p->cnt2--;      /* the next cnt2 frames sent, tagged or not */
	else if (!err)
		p->mark_pending--;
}

/* Santos: an output that becomes blocked is no longer a root: its pending
 * marks would fall on flows that are victims, not causes. */
static void sw_revoke(struct sw_port *p)
{
	if (!p->cnt2)
		return;
	p->st.mark_revoked++;
	p->cnt2 = 0;
}

static bool sw_tx_port(struct sw *s, struct sw_port *p)
{
	uint32_t space = xport_tx_space(p->xp);
	bool credit_refused = false, sent_data = false;
	uint32_t sent = 0;
	uint8_t mask;

	p->next_tx_ns = UINT64_MAX;
	/* Control frames first: MAC control is not subject to PAUSE, and a
	 * paused port must still be able to pause its own upstream. */
	sent = sw_tx_ctrl(s, p);
	space -= sent;
	mask = fc_tx_open_mask(&p->etx, s->now);
	/* Paused with frames waiting: a victim now, not a root. */
	for (int i = 0; p->cnt2 && mask != 0xff && i < SW_NPRIO; i++)
		if (!(mask & (1u << i)) && s->voq->out_frames[(size_t)p->idx * VOQ_NPRIO + i])
			sw_revoke(p);
	/* Held by flow control at the end of the last pass: the wire resumes
	 * when the hold ended, without a burst for the held time. */
	if (p->fc_held) {
		wclock_resume(&p->wc, p->etx.resume_ns < s->now ? p->etx.resume_ns : s->now);
		p->fc_held = false;
	}
	while (s->voq->out_total[p->idx] && space && mask && wclock_ready(&p->wc, s->now)) {
		uint32_t in, prio, idx, len;
		struct sw_port *ip;

		if (!voq_select(s->voq, p->idx, mask, &in, &prio))
			break;
		idx = voq_head(s->voq, in, p->idx, prio);
		len = s->voq->len[idx];
		/* Toward a host nothing waits for credits: a host grants none. */
		if (p->cfg->fc == FC_CREDIT && p->cfg->role == ROLE_SWITCH) {
			if (!fc_tx_credit_ok(&p->etx, prio, len)) {
				credit_refused = true;
				sw_revoke(p);
				p->st.prio[prio].credit_blocked++;
				mask &= ~(1u << prio);
				continue;
			}
			fc_tx_credit_charge(&p->etx, prio, len);
		}
		voq_pop(s->voq, in, p->idx, prio);
		sw_mark(s, p, idx, len);
		ip = &s->ports[in];
		sw_tx_frame(s, p, idx, len);
		sent_data = true;
		p->st.prio[prio].tx_frames++;
		p->st.prio[prio].tx_bytes += len;
		sw_release(s, ip, prio, len, s->fcharged[idx]);
		space--;
		sent++;
	}
	/* Stalled on credits: data queued, the wire free, and every priority
	 * that has frames was refused for credits in this pass. */
	{
		bool stalled = s->voq->out_total[p->idx] && space && !sent_data &&
			       credit_refused;

		if (stalled && !p->credit_stall_start)
			p->credit_stall_start = s->now;
		else if (!stalled && p->credit_stall_start) {
			p->credit_stall_acc += s->now - p->credit_stall_start;
			p->credit_stall_start = 0;
		}
	}
	if (p->ctrl_n || s->voq->out_total[p->idx]) {
		if (!space)
			p->next_tx_ns = s->now + 20000; /* the kernel drains the ring soon */
		else if (p->ctrl_n ||
			 voq_select(s->voq, p->idx, mask, &(uint32_t){ 0 }, &(uint32_t){ 0 }))
			p->next_tx_ns = wclock_next(&p->wc); /* eligible: waits for the wire */
		else {
			p->next_tx_ns = sw_blocked_until(s, p, (uint8_t)~mask);
			p->fc_held = true;
		}
	}
	if (p->xp->tx_pending)
		xport_kick(p->xp);
	return sent > 0;
}

/* ---- timers ------------------------------------------------------------- */

static void sw_port_timers(struct sw *s, struct sw_port *p)
{
	/* Refresh an XOFF before the peer's pause timer runs out. */
	if (p->xoff_mask && (p->cfg->fc == FC_PAUSE || p->cfg->fc == FC_PFC)) {
		for (int i = 0; i < SW_NPRIO; i++) {
			if (!(p->xoff_mask & (1u << i)))
				continue;
			if (s->now - p->xoff_sent_ns[i] >= p->pause_ns / 2 &&
			    sw_send_pause(s, p, p->cfg->fc == FC_PFC ? 1u << i : 0xff, true))
				p->xoff_sent_ns[i] = s->now;
		}
	}
	if (p->cfg->fc == FC_CREDIT && s->now >= p->credit_next_ns) {
		bool changed = false, due;

		for (int i = 0; i < SW_NPRIO; i++)
			changed |= sw_credit_limit(p, i) != p->adv_limit[i];
		due = changed || s->now - p->credit_last_ns >= SW_CREDIT_KEEPALIVE_NS;
		if (due)
			sw_send_credit(s, p);
		/* Sent (or nothing new to grant): sleep until the keepalive;
		 * sw_credit_check() arms the interval again on a change. Due
		 * but not sent (no free frame): retry at the interval. */
		if (p->credit_last_ns == s->now || !due)
			p->credit_next_ns = p->credit_last_ns + SW_CREDIT_KEEPALIVE_NS;
		else
			p->credit_next_ns = s->now + p->cfg->credit_interval;
	}
}

bool sw_poll(struct sw *s)
{
	bool work = false;
	int i;

	s->now = loop_now_ns();
	s->loops++;
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		xport_reclaim(p->xp);
		xport_refill(p->xp);
		work |= sw_rx_port(s, p);
	}
	for (i = 0; i < s->nports; i++) {
		sw_port_timers(s, &s->ports[i]);
		work |= sw_tx_port(s, &s->ports[i]);
	}
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		while (p->full_due) {
			int prio = __builtin_ctz(p->full_due);

			p->full_due &= p->full_due - 1;
			sw_full_check(s, p, prio);
		}
	}
	if (s->now >= s->next_age_ns) {
		fdb_age(s->fdb, s->now);
		s->next_age_ns = s->now + SW_AGE_INTERVAL_NS;
	}
	if (s->cfg->stats_interval && s->now >= s->next_stats_ns) {
		sw_stats_tick(s);
		s->next_stats_ns += s->cfg->stats_interval;
		if (s->next_stats_ns < s->now)
			s->next_stats_ns = s->now + s->cfg->stats_interval;
	}
	return work;
}

static inline void sw_min(uint64_t *d, uint64_t t)
{
	if (t < *d)
		*d = t;
}

uint64_t sw_credit_stall_ns(const struct sw_port *p, uint64_t now)
{
	return p->credit_stall_acc + (p->credit_stall_start ? now - p->credit_stall_start : 0);
}

uint64_t sw_next_deadline(const struct sw *s)
{
	uint64_t d = s->next_age_ns;
	int i;

	if (s->cfg->stats_interval)
		sw_min(&d, s->next_stats_ns);
	for (i = 0; i < s->nports; i++) {
		const struct sw_port *p = &s->ports[i];

		sw_min(&d, p->next_tx_ns);
		if (p->cfg->fc == FC_CREDIT)
			sw_min(&d, p->credit_next_ns);
		if (p->xoff_mask)
			for (int k = 0; k < SW_NPRIO; k++)
				if (p->xoff_mask & (1u << k))
					sw_min(&d, p->xoff_sent_ns[k] + p->pause_ns / 2);
		/* The completion ring does not wake epoll: when the free pool
		 * runs low, come back soon to reclaim what the kernel sent. */
		if (p->xp->tx_out && s->umem->nfree < s->umem->nframes / 4)
			sw_min(&d, s->now + 200000);
	}
	return d;
}

/* ---- lifecycle ---------------------------------------------------------- */

static uint64_t sw_qty_units(const struct sw_port *p, const struct cfg_qty *q)
{
	if (q->frames == p->unit_frames)
		return q->n;
	/* Thresholds in the other unit than the buffer: convert with full frames. */
	return q->frames ? q->n * p->max_frame : (q->n + p->max_frame - 1) / p->max_frame;
}

void sw_port_apply_cfg(struct sw *s, struct sw_port *p)
{
	const struct port_cfg *c = p->cfg;
	uint64_t burst = c->burst, headroom;

	p->max_frame = (c->mtu ? c->mtu : p->xp->mtu) + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN;
	if (!burst) {
		/* Two frames, or 500 us of line rate: a daemon that wakes late
		 * (a shared CPU) catches up that much, so the long-run rate stays
		 * exact; and at high rates sends are batched, not one per timer. */
		burst = 2ull * p->max_frame;
		if (c->rate / 8 / 2000 > burst)
			burst = c->rate / 8 / 2000;
	}
	wclock_init(&p->wc, c->rate, burst, c->wire_overhead);
	p->marking = c->marking == PORT_MARK_SWITCH ? s->cfg->marking : c->marking;
	p->unit_frames = c->buffer.frames;
	p->cap = c->buffer.n;
	/* Room needed above XOFF: what the peer may already have in flight when
	 * the PAUSE reaches it (its burst and the frame on the wire), the PAUSE
	 * frame's own wait behind a frame on our side, and what arrives while
	 * we are not running: on a shared CPU, frames wait in our RX ring. */
	headroom = burst + 2ull * p->max_frame + c->rate / 8 * c->reaction_time / 1000000000ull;
	if (p->unit_frames)
		headroom = (headroom + p->max_frame - 1) / p->max_frame;
	if (c->xoff.set)
		p->xoff = sw_qty_units(p, &c->xoff);
	else
		p->xoff = p->cap > headroom ? p->cap - headroom : (p->cap + 1) / 2;
	if (c->xon.set) {
		p->xon = sw_qty_units(p, &c->xon);
	} else {
		uint64_t gap = p->unit_frames ? 2 : 2ull * p->max_frame;

		p->xon = p->xoff > gap ? p->xoff - gap : 0;
	}
	if (p->xon >= p->xoff)
		p->xon = p->xoff ? p->xoff - 1 : 0;
	p->pause_ns = wire_quanta_to_ns(c->pause_quanta, c->rate);
	/* Advertise credits after an eighth of the buffer is freed (at least
	 * one unit); small buffers get an update per frame, as IB does. */
	p->credit_step = p->cap / 8 ? p->cap / 8 : 1;
	if ((c->fc == FC_PAUSE || c->fc == FC_PFC) && p->cap <= headroom)
		pr_info("port %s: buffer (%llu %s) is not above the PAUSE headroom (%llu): "
			"XOFF at half the buffer; frames arriving when it is full wait in the "
			"RX ring (rx_holds)\n",
			c->name, (unsigned long long)p->cap, p->unit_frames ? "frames" : "bytes",
			(unsigned long long)headroom);
}

static void sw_voq_free(void *ctx, uint32_t frame, uint32_t in)
{
	struct sw *s = ctx;

	umem_free(s->umem, frame);
}

void sw_destroy(struct sw *s)
{
	int i;

	if (!s)
		return;
	sw_ctl_fini(s);
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		while (p->ctrl_n) {
			umem_free(s->umem, p->ctrlq[p->ctrl_head]);
			p->ctrl_head = (p->ctrl_head + 1) % SW_CTRLQ;
			p->ctrl_n--;
		}
		if (p->ipv6_was >= 0)
			xport_if_ipv6_disable(p->cfg->ifname, p->ipv6_was);
		xport_close(p->xp);
	}
	if (s->voq)
		voq_drain(s->voq, sw_voq_free, s);
	voq_destroy(s->voq);
	fdb_destroy(s->fdb);
	umem_destroy(s->umem);
	loop_destroy(s->loop);
	free(s->faddr);
	free(s->fcharged);
	free(s->fmark);
	free(s);
}

/* Frames for the shared umem: every port's fill and TX rings, plus what its
 * input buffers can hold (a byte budget counted in minimum-size frames,
 * bounded so a large buffer does not pin gigabytes). */
static uint32_t sw_umem_frames(const struct sw_cfg *cfg)
{
	uint64_t n = 64;

	if (cfg->umem_frames)
		return cfg->umem_frames;
	for (int i = 0; i < cfg->nports; i++) {
		const struct cfg_qty *b = &cfg->ports[i].buffer;
		uint64_t per_prio = b->frames ? b->n : (b->n + L2CC_ETH_MIN_FRAME - 1) /
							   L2CC_ETH_MIN_FRAME;
		uint64_t buf = per_prio * SW_NPRIO;

		if (buf > 4096 && per_prio <= 4096)
			buf = 4096;
		else if (buf > 4096)
			buf = per_prio;
		n += 2 * cfg->ring_size + buf + SW_CTRLQ;
	}
	return n > (1u << 20) ? 1u << 20 : (uint32_t)n;
}

/* The kernel places received data XDP_PACKET_HEADROOM (256) bytes into each
 * UMEM frame, so a frame of 2048 holds at most 1792 bytes of packet. */
#define SW_UMEM_HEADROOM 256

static uint32_t sw_frame_room(uint32_t frame_size) { return frame_size - SW_UMEM_HEADROOM; }

/* 2048-byte UMEM frames unless a port's MTU (configured, or the
 * interface's) needs 4096. Larger frames need AF_XDP multi-buffer. */
static uint32_t sw_frame_size(const struct sw_cfg *cfg)
{
	if (cfg->frame_size)
		return cfg->frame_size;
	for (int i = 0; i < cfg->nports; i++) {
		int mtu = cfg->ports[i].mtu ? (int)cfg->ports[i].mtu
					    : xport_if_mtu(cfg->ports[i].ifname);

		if (mtu + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN > (int)sw_frame_room(2048))
			return 4096;
	}
	return 2048;
}

int sw_create(struct sw **out, struct sw_cfg *cfg)
{
	uint32_t nframes = sw_umem_frames(cfg);
	struct sw *s;
	int i, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	s->now = s->start_ns = loop_now_ns();
	err = loop_create(&s->loop);
	if (err)
		goto err;
	err = loop_catch_signals(s->loop);
	if (err) {
		pr_err("signals: %s\n", strerror(-err));
		goto err;
	}
	s->faddr = calloc(nframes, sizeof(*s->faddr));
	s->fcharged = calloc(nframes, sizeof(*s->fcharged));
	s->fmark = calloc(nframes, sizeof(*s->fmark));
	if (!s->faddr || !s->fcharged || !s->fmark) {
		err = -ENOMEM;
		goto err;
	}
	err = umem_create(&s->umem, nframes, sw_frame_size(cfg), cfg->ring_size);
	if (err)
		goto err;
	err = fdb_create(&s->fdb, cfg->fdb_size, cfg->fdb_aging);
	if (err)
		goto err;
	err = voq_create(&s->voq, cfg->nports, nframes, cfg->sched);
	if (err)
		goto err;
	for (i = 0; i < cfg->nports; i++) {
		struct port_cfg *pc = &cfg->ports[i];
		struct sw_port *p = &s->ports[i];
		struct xport_opts o = {
			.queue = pc->queue,
			.ring_size = cfg->ring_size,
			.skb_mode = pc->xdp_mode == XDP_MODE_SKB,
			.fallback_pass = false,
		};

		p->cfg = pc;
		p->idx = i;
		p->ipv6_was = -1;
		err = xport_open(&p->xp, s->umem, pc->ifname, &o);
		if (err) {
			pr_err("port %s: cannot open %s: %s\n", pc->name, pc->ifname, strerror(-err));
			goto err;
		}
		s->xps[i] = p->xp;
		s->nports = i + 1;
		if (pc->quiet_stack) {
			p->ipv6_was = xport_if_ipv6_disable(pc->ifname, 1);
			if (p->ipv6_was < 0 && p->ipv6_was != -ENOENT)
				pr_warn("port %s: cannot disable IPv6 on %s: %s\n", pc->name,
					pc->ifname, strerror(-p->ipv6_was));
		}
		if (pc->mtu && pc->mtu > p->xp->mtu)
			pr_warn("port %s: mtu %llu is above %s's MTU %u\n", pc->name,
				(unsigned long long)pc->mtu, pc->ifname, p->xp->mtu);
		sw_port_apply_cfg(s, p);
		if (p->max_frame > sw_frame_room(s->umem->frame_size)) {
			pr_err("port %s: MTU %u does not fit a %u-byte UMEM frame (%u bytes after "
			       "the kernel's headroom); set mtu = %u or lower the interface MTU\n",
			       pc->name, p->max_frame - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN,
			       s->umem->frame_size, sw_frame_room(s->umem->frame_size),
			       sw_frame_room(s->umem->frame_size) - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN);
			err = -EMSGSIZE;
			goto err;
		}
		p->credit_next_ns = s->now;
		err = loop_add_fd(s->loop, p->xp->fd, EPOLLIN | EPOLLET, NULL, NULL);
		if (err)
			goto err;
	}
	for (i = 0; i < cfg->nstatic; i++) {
		const struct fdb_static_cfg *st = &cfg->statics[i];
		int port = -1;

		for (int k = 0; k < cfg->nports; k++)
			if (!strcmp(cfg->ports[k].name, st->port))
				port = k;
		err = port < 0 ? -ENOENT : fdb_add_static(s->fdb, st->mac, st->vlan, port);
		if (err) {
			pr_err("static fdb entry for port %s: %s\n", st->port, strerror(-err));
			goto err;
		}
	}
	s->next_age_ns = s->now + SW_AGE_INTERVAL_NS;
	s->next_stats_ns = s->now;
	err = sw_ctl_init(s);
	if (err)
		goto err;
	*out = s;
	return 0;
err:
	sw_destroy(s);
	return err;
}
