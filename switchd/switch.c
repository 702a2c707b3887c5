// SPDX-License-Identifier: BSD-2-Clause
/*
 * The switchd datapath core: take a frame from a port, classify, learn,
 * admit it into the input buffer (per port and priority), queue it in a
 * VOQ, and transmit from each output at its emulated line rate, honouring
 * PAUSE/PFC/credits from the peer and generating them toward it. The
 * congestion point of each port (cp.h) sees the events on the way.
 *
 * The core never touches a socket: frames arrive through sw_rx_frame() and
 * leave through the sink (dp_sink.h), and `now` is whatever the caller set,
 * so the unit tests run it in virtual time. sw_daemon.c binds it to AF_XDP
 * ports. Nothing here allocates or logs unthrottled; frames move as
 * descriptors.
 */
#define LOG_SUBSYS "switch"
#include "switch_private.h"
#include "ctrl_msg.h"
#include "log.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sw_drop_names[SW_DROP_MAX] = {
	[SW_DROP_MALFORMED] = "malformed",
	[SW_DROP_OVERSIZE] = "oversize",
	[SW_DROP_BUFFER_FULL] = "buffer_full",
	[SW_DROP_FILTERED] = "filtered",
	[SW_DROP_LINK_LOCAL] = "link_local",
	[SW_DROP_FORGED] = "forged",
	[SW_DROP_UNSUPPORTED] = "unsupported",
	[SW_DROP_NO_FRAME] = "no_frame",
	[SW_DROP_CP] = "congestion_point",
	[SW_DROP_FLOOD_LIMIT] = "flood_limit",
	[SW_DROP_RESERVE] = "reserve",
	[SW_DROP_WATCHDOG] = "pause_watchdog",
	[SW_DROP_STATIC_MAC] = "static_mac",
	[SW_DROP_MAC_LIMIT] = "mac_limit",
	[SW_DROP_MAC_MOVE] = "mac_move",
	[SW_DROP_VLAN] = "vlan",
	[SW_DROP_LINK_DOWN] = "link_down",
};

_Static_assert(SW_MAX_PORTS <= FDB_MAX_PORTS, "the FDB keeps per-port limits for every port");

static const char *const sw_wd_action_names[] = { "drop", "forward", "alert" };

static inline struct voq_frame *sw_frame(const struct sw *s, uint32_t idx)
{
	return voq_frame(s->voq, idx);
}

static inline void *sw_frame_data(const struct sw *s, uint32_t idx)
{
	return umem_data(s->umem, sw_frame(s, idx)->addr);
}

static inline uint64_t sw_units(const struct sw_port *p, uint32_t len)
{
	return p->unit_frames ? 1 : len;
}

/* Units still free in each priority's input buffer: what credits grant. */
static void sw_room(const struct sw_port *p, uint64_t room[L2CC_NPRIO])
{
	/* (A reload may have shrunk the buffer below what it holds.) */
	for (int i = 0; i < L2CC_NPRIO; i++)
		room[i] = p->cap > p->occ[i] ? p->cap - p->occ[i] : 0;
}

static void sw_put(struct sw *s, struct sw_port *p, uint32_t idx, uint32_t len)
{
	dp_put(&s->sink, p->idx, sw_frame(s, idx)->addr, len);
	wclock_charge(&p->wc, len);
	p->st.tx_frames++;
	p->st.tx_bytes += len;
}

/* ---- flow control toward the upstream sender ----------------------------- */

/* After occupancy changed: XOFF/XON for PAUSE and PFC, credit grants. The
 * frames themselves are built in the port's next TX pass (sw_tx_ctrl). */
static void sw_fc_update(struct sw *s, struct sw_port *p)
{
	uint64_t room[L2CC_NPRIO];

	if (p->frx.cfg.mode == FC_RX_NONE)
		return;
	sw_room(p, room);
	fc_rx_update(&p->frx, p->occ, room, s->now);
}

/* Send what flow control has due (PAUSE/PFC, CREDIT), ahead of data and
 * not subject to PAUSE: a paused port must still be able to pause its own
 * upstream. One frame carries every change since the last pass. */
static uint32_t sw_tx_ctrl(struct sw *s, struct sw_port *p, uint32_t space)
{
	uint64_t room[L2CC_NPRIO];
	uint32_t sent = 0;

	sw_room(p, room);
	while (fc_rx_due(&p->frx) && space && wclock_ready(&p->wc, s->now)) {
		int64_t idx = umem_alloc(s->umem);
		int len;

		if (idx < 0) {
			p->st.drop[SW_DROP_NO_FRAME]++;
			break;  /* still due: the next pass tries again */
		}
		sw_frame(s, idx)->addr = umem_addr(s->umem, idx);
		len = fc_rx_build(&p->frx, sw_frame_data(s, idx), s->umem->frame_size, p->mac,
				  &p->etx, room, s->now);
		if (len <= 0) {
			umem_free(s->umem, idx);
			break;
		}
		sw_put(s, p, idx, len);
		p->st.ctrl_tx_frames++;
		space--;
		sent++;
	}
	return sent;
}

/* ---- input buffer --------------------------------------------------------- */

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

/* A frame left the input buffer of (p, prio). */
static void sw_release(struct sw *s, struct sw_port *p, int prio, uint32_t len, bool charged)
{
	if (charged)
		p->occ[prio] -= sw_units(p, len);
	if (p->full_mask & (1u << prio))
		sw_full_check(s, p, prio);
	sw_fc_update(s, p);
}

static void sw_drop_frame(struct sw *s, struct sw_port *p, uint32_t idx, enum sw_drop why)
{
	p->st.drop[why]++;
	umem_free(s->umem, idx);
}

/* Edge-detect "the buffer is full": no room for another full-size frame.
 * The port's congestion point hears of it (the marking of Infocom 2003,
 * HPL-2002-359 §IV acts then; other schemes may not care). */
static void sw_full_check(struct sw *s, struct sw_port *p, int prio)
{
	uint8_t bit = 1u << prio;
	uint64_t room = p->cap > p->occ[prio] ? p->cap - p->occ[prio] : 0;
	uint64_t need = sw_units(p, p->max_frame);

	if (room < need) {
		if (!(p->full_mask & bit)) {
			p->full_mask |= bit;
			p->st.buffer_full_events++;
			if (p->cpo && p->cpo->full)
				p->cpo->full(p->cp, p->idx, prio);
		}
	} else {
		p->full_mask &= ~bit;
	}
}

/* ---- receive ------------------------------------------------------------ */

/* A well-formed PAUSE or PFC from the peer: to our egress, if configured. */
static void sw_rx_macctrl(struct sw *s, struct sw_port *p, const struct wire_macctrl *mc)
{
	if (mc->opcode == L2CC_MACCTRL_PAUSE) {
		p->st.pause_rx++;
		if (p->cfg->fc != FC_PAUSE) {
			p->st.fc_ignored++;
			return;
		}
	} else {
		p->st.pfc_rx++;
		for (int i = 0; i < L2CC_NPRIO; i++)
			if (mc->class_enable & (1u << i))
				p->st.prio[i].pfc_rx++;
		if (p->cfg->fc != FC_PFC) {
			p->st.fc_ignored++;
			return;
		}
	}
	/* A storm lasts until no pause has come for the restoration time. */
	for (int i = 0; i < L2CC_NPRIO; i++)
		if (mc->opcode == L2CC_MACCTRL_PAUSE ? mc->quanta[0] != 0
		    : (mc->class_enable & (1u << i)) && mc->quanta[i])
			p->wd_last_pause[i] = s->now;
	fc_tx_macctrl(&p->etx, mc, p->cfg->rate, s->now);
}

static void sw_rx_credit(struct sw *s, struct sw_port *p, const struct wire_credit *c,
			 bool xdp_applied)
{
	/* Counted, and its limits applied, by the XDP program: what is left
	 * is ours as receiver, in order behind the frames it followed. */
	if (xdp_applied) {
		fc_rx_credit_in(&p->frx, c);
		sw_fc_update(s, p);
		return;
	}
	p->st.credit_rx++;
	if (p->cfg->fc != FC_CREDIT) {
		p->st.fc_ignored++;
		return;
	}
	/* As receiver: the partner's sent count is our received count. */
	fc_rx_credit_in(&p->frx, c);
	/* As sender: a host cannot grant credits (we never wait for them
	 * toward a host); from a switch, the first grant needs our CREDIT
	 * back so the partner reconciles to our count. */
	if (p->cfg->role != ROLE_HOST && fc_tx_credit(&p->etx, c, s->now))
		fc_rx_credit_now(&p->frx);
	sw_fc_update(s, p);
}

/* What a link-local frame is: flow control we speak, well formed (a PAUSE
 * or PFC in *mc, a CREDIT in *m), or a drop for *why. */
enum sw_ll { SW_LL_DROP = 0, SW_LL_MACCTRL, SW_LL_CREDIT };

static enum sw_ll sw_ll_parse(const struct eth_info *ei, const uint8_t *frame, uint32_t len,
			      struct wire_macctrl *mc, union ctrl_msg *m, enum sw_drop *why)
{
	const uint8_t *pl = frame + ei->hlen;
	size_t plen = len - ei->hlen;
	int r;

	if (ei->ethertype == L2CC_ETH_P_MACCTRL) {
		r = wire_parse_macctrl(pl, plen, mc);
		*why = r == -EOPNOTSUPP ? SW_DROP_UNSUPPORTED : SW_DROP_MALFORMED;
		return r ? SW_LL_DROP : SW_LL_MACCTRL;
	}
	if (ei->ethertype != L2CC_ETH_P_CTRL) {
		*why = SW_DROP_LINK_LOCAL;
		return SW_LL_DROP;
	}
	/* Only link-local types are the switch's to take (CREDIT). */
	r = ctrl_decode(pl, plen, m);
	*why = r == -EINVAL ? SW_DROP_MALFORMED : SW_DROP_UNSUPPORTED;
	return r == L2CC_CTRL_CREDIT ? SW_LL_CREDIT : SW_LL_DROP;
}

/*
 * A frame to 01:80:C2:00:00:0x: consumed here, never forwarded. Flow
 * control that is well formed is control received (ctrl_rx_frames)
 * whatever then becomes of it, applied, ignored, or void on a link that is
 * down: what the partner sent as control. Anything else is a drop (on a
 * down link: link_down).
 */
static void sw_rx_link_local(struct sw *s, struct sw_port *p, const struct eth_info *ei,
			     const uint8_t *frame, uint32_t len)
{
	struct wire_macctrl mc;
	union ctrl_msg m;
	enum sw_drop why;
	enum sw_ll k = sw_ll_parse(ei, frame, len, &mc, &m, &why);

	if (k == SW_LL_DROP) {
		p->st.drop[p->link_up ? why : SW_DROP_LINK_DOWN]++;
		return;
	}
	p->st.ctrl_rx_frames++;
	if (!p->link_up)
		return;
	if (k == SW_LL_MACCTRL)
		sw_rx_macctrl(s, p, &mc);
	else
		/* The mark is the XDP program's only where it runs: with
		 * xdp_control off, one that came from the wire is the
		 * sender's, and means nothing. */
		sw_rx_credit(s, p, &m.credit, p->cfg->xdp_control &&
					      wire_credit_xdp_applied(frame + ei->hlen,
								      len - ei->hlen));
}

/* A forwarded 0x88B6 message a congestion point wants to see (and may
 * rewrite in place) on its way from in to out. */
static void sw_transit(struct sw *s, uint32_t in, uint32_t out, uint8_t *frame, uint32_t len,
		       const struct eth_info *ei)
{
	const uint8_t *body;
	size_t blen;
	int type = wire_parse_ctrl(frame + ei->hlen, len - ei->hlen, &body, &blen);

	if (type <= 0 || type >= 32 || !(s->transit_types & (1u << type)))
		return;
	for (int i = 0; i < s->ncps; i++)
		if (s->cps[i].ops->transit && (s->cps[i].ops->ctrl_types & (1u << type)))
			s->cps[i].ops->transit(s->cps[i].cp, in, out, type,
					       frame + (body - frame), blen);
}

static void sw_occ(const struct sw *s, uint32_t out, int prio, struct cp_occ *o)
{
	size_t op = (size_t)out * VOQ_NPRIO + prio;

	o->frames = s->voq->out_frames[op];
	o->bytes = s->voq->out_bytes[op];
	o->frames_total = s->voq->out_total[out];
	o->bytes_total = s->voq->out_total_bytes[out];
}

static void sw_enqueue(struct sw *s, struct sw_port *in, uint32_t out, int prio,
		       uint32_t idx, uint32_t len, uint8_t flags)
{
	struct voq_frame *f = sw_frame(s, idx);
	struct sw_port *op = &s->ports[out];

	f->flags = flags;
	f->cp = 0;
	voq_push(s->voq, in->idx, out, prio, idx, len);
	/* The output may have gone to sleep with nothing to send. */
	if (op->next_tx_ns > s->now)
		op->next_tx_ns = s->now;
	if (op->cpo && op->cpo->enqueue) {
		struct cp_occ o;

		sw_occ(s, out, prio, &o);
		op->cpo->enqueue(op->cp, out, prio, idx, &o);
	}
}

/* Frame idx left output p's queue (its congestion point hears of it). */
static void sw_dequeued(struct sw *s, struct sw_port *p, int prio, uint32_t idx)
{
	if (p->cpo && p->cpo->dequeue) {
		struct cp_occ o;

		sw_occ(s, p->idx, prio, &o);
		p->cpo->dequeue(p->cp, p->idx, prio, idx, &o);
	}
}

/* Unknown unicast, broadcast, multicast: a copy to every other port. The
 * original frame goes to the first port that takes one; copies are new
 * frames (flooding is rare, and it keeps every frame in exactly one place).
 * The frame counts once in its input buffer, as one frame would in a
 * shared-memory switch, until its last copy leaves (sw_leave): a host that
 * floods toward a slow or paused output fills its own buffer, not the pool.
 * Two bounds keep the pool for what must not wait: an output takes at most
 * flood_queue copies, and a copy never takes one of the reserve's frames. */
static void sw_flood(struct sw *s, struct sw_port *p, int prio, uint32_t idx, uint32_t len,
		     uint16_t vid)
{
	const void *src = sw_frame_data(s, idx);
	uint32_t g = s->flood_free[--s->nflood_free];
	bool placed = false, others = false, down = false;

	s->floods[g] = (struct sw_flood){ .refs = 0, .len = (uint16_t)len };
	for (int o = 0; o < s->nports; o++) {
		struct sw_port *op = &s->ports[o];
		int64_t c = idx;

		/* A VLAN's broadcast domain is the ports that carry it. */
		if ((uint32_t)o == p->idx || !sw_vlan_ok(op, vid))
			continue;
		if (!op->link_up) {
			down = true;
			continue;
		}
		others = true;
		if (op->flood_waiting >= s->cfg->flood_queue) {
			p->st.drop[SW_DROP_FLOOD_LIMIT]++;
			op->st.flood_refused++;
			continue;
		}
		if (placed) {
			if (s->umem->nfree <= s->reserve) {
				p->st.drop[SW_DROP_RESERVE]++;
				continue;
			}
			c = umem_alloc(s->umem);
			sw_frame(s, c)->addr = umem_addr(s->umem, c);
			memcpy(sw_frame_data(s, c), src, len);
			p->st.flood_tx++;
		}
		s->flood_of[c] = g;
		s->floods[g].refs++;
		op->flood_waiting++;
		sw_enqueue(s, p, o, prio, c, len, VOQ_F_FLOOD);
		placed = true;
	}
	if (placed) {
		p->flood_held++;
		return;
	}
	/* Nowhere to go: a one-port switch, or every output refused it (the
	 * refusals counted there, the frame here). */
	s->flood_free[s->nflood_free++] = g;
	sw_release(s, p, prio, len, true);
	if (others) {
		p->st.flood_unsent++;
		umem_free(s->umem, idx);
	} else {
		sw_drop_frame(s, p, idx, down ? SW_DROP_LINK_DOWN : SW_DROP_FILTERED);
	}
}

/* A queued frame of input ip left output `out` (sent or dropped): its
 * input buffer gets its room back, for a flood copy only with the last. */
static void sw_leave(struct sw *s, struct sw_port *ip, uint32_t out, int prio, uint32_t idx,
		     uint32_t len)
{
	uint8_t flags = sw_frame(s, idx)->flags;

	if (flags & VOQ_F_FLOOD) {
		uint32_t g = s->flood_of[idx];

		s->ports[out].flood_waiting--;
		if (--s->floods[g].refs)
			return;
		len = s->floods[g].len;
		s->flood_free[s->nflood_free++] = g;
		ip->flood_held--;
	}
	sw_release(s, ip, prio, len, flags & (VOQ_F_CHARGED | VOQ_F_FLOOD));
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

/* A unicast l2cc message from a host port that its type's row says no
 * host sends (a switch's type, a link-local type sent unicast). A type not
 * in the table (a later version) goes on as data: its receiver decides. */
static bool sw_ctrl_forged(const uint8_t *frame, uint32_t len, const struct eth_info *ei)
{
	const struct ctrl_type *t;
	const uint8_t *body;
	size_t blen;
	int type = wire_parse_ctrl(frame + ei->hlen, len - ei->hlen, &body, &blen);

	t = type > 0 ? ctrl_type_of(type) : NULL;
	return t && !ctrl_sender_ok(t, true, false);
}

bool sw_rx_frame(struct sw *s, struct sw_port *p, uint64_t addr, uint32_t len)
{
	uint32_t idx = umem_idx(s->umem, addr);
	uint8_t *frame = umem_data(s->umem, addr);
	struct eth_info ei;
	int out, prio;
	bool bad;

	sw_frame(s, idx)->addr = addr;
	bad = wire_parse_eth(frame, len, &ei) != 0;
	if (p->link_up && !bad && !wire_is_link_local(ei.dst) && sw_rx_hold(p, ei.prio, len))
		return false;
	p->st.rx_frames++;
	p->st.rx_bytes += len;
	if (bad) {
		sw_drop_frame(s, p, idx, p->link_up ? SW_DROP_MALFORMED : SW_DROP_LINK_DOWN);
		return true;
	}
	if (wire_is_link_local(ei.dst)) {
		sw_rx_link_local(s, p, &ei, frame, len);
		umem_free(s->umem, idx);
		return true;
	}
	if (!p->link_up) {
		/* In the RX ring from before the link went down (or held
		 * there by a full buffer): a down link delivers nothing. */
		sw_drop_frame(s, p, idx, SW_DROP_LINK_DOWN);
		return true;
	}
	prio = ei.prio;
	p->st.prio[prio].rx_frames++;
	p->st.prio[prio].rx_bytes += len;
	/* Counted whether it is admitted or not: a dropped frame frees credit. */
	fc_rx_count(&p->frx, prio, sw_units(p, len));
	if (len > p->max_frame || wire_is_multicast(ei.src)) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, len > p->max_frame ? SW_DROP_OVERSIZE
							    : SW_DROP_MALFORMED);
		return true;
	}
	/* FECN is the switches' to set and CNMs theirs to send (802.1Qau):
	 * from a host port, either is a forgery; so is an l2cc message the
	 * message table says a host may not send (checked at the edge, once),
	 * and any l2cc frame from a plain host (l2cc_host = no): with no hostd
	 * behind the port, a CNP or a tag from it can only be made up. */
	if (p->cfg->role == ROLE_HOST &&
	    ((!p->cfg->l2cc_host && (ei.ethertype == L2CC_ETH_P_CTRL ||
				     ei.ethertype == L2CC_ETH_P_DATA_TAG)) ||
	     (ei.ethertype == L2CC_ETH_P_DATA_TAG && len > ei.hlen + 1u &&
	      (frame[ei.hlen + 1] & L2CC_TAG_FECN)) || ei.ethertype == L2CC_ETH_P_CNM ||
	     (ei.ethertype == L2CC_ETH_P_CTRL && sw_ctrl_forged(frame, len, &ei)))) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_FORGED);
		return true;
	}
	/* A VLAN this port does not carry: dropped before it can teach the
	 * FDB anything or be flooded into that VLAN. */
	if (!sw_vlan_ok(p, ei.vid)) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_VLAN);
		return true;
	}
	/* A source the FDB refuses is not let in: one that a static entry
	 * places elsewhere (a host taking another's address), one over the
	 * port's address limit or move rate (a host filling the table or
	 * flapping addresses). A full table still forwards (and floods). */
	out = fdb_learn(s->fdb, ei.src, ei.vid, p->idx, s->now);
	if (out == 1)
		p->st.mac_moves++;
	if (out == -EPERM || out == -EDQUOT || out == -EBUSY) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, out == -EPERM ? SW_DROP_STATIC_MAC
				       : out == -EDQUOT ? SW_DROP_MAC_LIMIT : SW_DROP_MAC_MOVE);
		return true;
	}
	out = wire_is_multicast(ei.dst) ? -ENOENT : fdb_lookup(s->fdb, ei.dst, ei.vid, s->now);
	if (out == (int)p->idx) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_FILTERED);
		return true;
	}
	if (out >= 0 && !sw_vlan_ok(&s->ports[out], ei.vid)) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_VLAN);
		return true;
	}
	/* Learnt entries of a down port are gone; a static one still names it. */
	if (out >= 0 && !s->ports[out].link_up) {
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_LINK_DOWN);
		return true;
	}
	if (!sw_admit(p, prio, len)) {
		/* No room for this frame proves the buffer full now: judged at
		 * once, since this pass's transmissions may drain it before the
		 * deferred check (no flow control, a burst in one RX batch). */
		sw_full_check(s, p, prio);
		p->st.prio[prio].drop_buffer_full++;
		sw_fc_update(s, p);
		sw_drop_frame(s, p, idx, SW_DROP_BUFFER_FULL);
		return true;
	}
	if (p->cpo && p->cpo->admit)
		p->cpo->admit(p->cp, p->idx, prio, idx, len);
	if (out >= 0) {
		if (s->transit_types && ei.ethertype == L2CC_ETH_P_CTRL)
			sw_transit(s, p->idx, out, frame, len, &ei);
		sw_enqueue(s, p, out, prio, idx, len, VOQ_F_CHARGED);
	} else {
		sw_flood(s, p, prio, idx, len, ei.vid);
	}
	/* Whether the buffer became full is judged after this pass's
	 * transmissions (sw_pass): a frame whose output was free has left
	 * by then, as it would have cut through a hardware switch. */
	p->full_due |= 1u << prio;
	sw_fc_update(s, p);
	return true;
}

/* ---- transmit ----------------------------------------------------------- */

/* Priorities among prios with frames waiting for p. */
static uint8_t sw_waiting(const struct sw *s, const struct sw_port *p, uint8_t prios)
{
	uint8_t waiting = 0;

	for (int i = 0; i < L2CC_NPRIO; i++)
		if ((prios & (1u << i)) && s->voq->out_frames[(size_t)p->idx * VOQ_NPRIO + i])
			waiting |= 1u << i;
	return waiting;
}

/* The priorities flow control holds with frames waiting changed. */
static void sw_set_blocked(struct sw *s, struct sw_port *p, uint8_t blocked)
{
	if (blocked == p->blocked)
		return;
	p->blocked = blocked;
	if (p->cpo && p->cpo->blocked)
		p->cpo->blocked(p->cp, p->idx, blocked);
}

/* ---- pause watchdog ------------------------------------------------------ */

static inline void sw_min(uint64_t *d, uint64_t t)
{
	if (t < *d)
		*d = t;
}

/*
 * SONiC's PFC watchdog, for PAUSE and PFC: a priority of output p that has
 * been paused with frames waiting for the detection time (pause_watchdog)
 * is in a storm, a peer that will not take frames however long we wait;
 * left alone, the frames for it fill the input buffers they came from and
 * pause innocent senders in turn. In a storm the port stops honouring that
 * priority's pauses and drops its queue (or sends it anyway: forward; or
 * only counts and logs: alert), until no pause has arrived for the
 * restoration time. Returns the priorities whose pauses are ignored now.
 */
static uint8_t sw_watchdog(struct sw *s, struct sw_port *p, uint8_t open)
{
	const struct port_cfg *c = p->cfg;
	uint8_t waiting;

	/* Every pass of every port comes here: nothing paused, nothing
	 * timed, no storm is the case to make cheap. */
	if (open == 0xff && !p->wd_storm && !p->wd_timing)
		return 0;
	p->wd_next = UINT64_MAX;
	if (!c->pause_watchdog || (c->fc != FC_PAUSE && c->fc != FC_PFC) ||
	    (c->role == ROLE_SWITCH && !c->pause_watchdog_switch)) {
		p->wd_storm = p->wd_timing = 0;     /* (turned off by a reload) */
		return 0;
	}
	waiting = sw_waiting(s, p, (uint8_t)~open);
	for (int i = 0; i < L2CC_NPRIO; i++) {
		uint8_t bit = 1u << i;

		if (p->wd_storm & bit) {
			/* wd_since: when the storm began (below). */
			uint64_t end = (p->wd_last_pause[i] > p->wd_since[i] ? p->wd_last_pause[i]
					: p->wd_since[i]) + c->pause_watchdog_restore;

			if (s->now < end) {
				sw_min(&p->wd_next, end);
				continue;
			}
			p->wd_storm &= ~bit;
			p->wd_timing &= ~bit;
			p->st.pause_storm_restores++;
			pr_info_rl("port %s priority %d: no pause for %llu ms, pause storm over\n",
				   c->name, i, (unsigned long long)(c->pause_watchdog_restore / 1000000));
		}
		if (!(waiting & bit)) {
			p->wd_timing &= ~bit;
			continue;
		}
		if (!(p->wd_timing & bit)) {
			p->wd_timing |= bit;
			p->wd_since[i] = s->now;
		}
		if (s->now - p->wd_since[i] < c->pause_watchdog) {
			sw_min(&p->wd_next, p->wd_since[i] + c->pause_watchdog);
			continue;
		}
		/* The restoration time counts from the storm's start if the
		 * last pause came before it: one long pause (65535 quanta at
		 * 10M is 3.4 s) may be older than the restoration time when
		 * the storm is found, and the storm would end at once (a
		 * wake-up in the past) and be found again and again. */
		p->wd_storm |= bit;
		p->st.pause_storms++;
		sw_min(&p->wd_next, (p->wd_last_pause[i] > s->now ? p->wd_last_pause[i] : s->now) +
			c->pause_watchdog_restore);
		pr_warn_rl("port %s priority %d: paused for %llu ms with %u frames waiting: pause "
			   "storm, action %s until no pause for %llu ms\n", c->name, i,
			   (unsigned long long)((s->now - p->wd_since[i]) / 1000000),
			   s->voq->out_frames[(size_t)p->idx * VOQ_NPRIO + i],
			   sw_wd_action_names[c->pause_watchdog_action],
			   (unsigned long long)(c->pause_watchdog_restore / 1000000));
		p->wd_since[i] = s->now;        /* from now on: when the storm began */
	}
	return c->pause_watchdog_action == SW_WD_ALERT ? 0 : p->wd_storm;
}

/* Action drop: every frame queued for p in the stormed priorities goes, and
 * the input buffers they held get their room back. */
static void sw_watchdog_drop(struct sw *s, struct sw_port *p, uint8_t prios)
{
	for (int prio = 0; prio < L2CC_NPRIO; prio++) {
		if (!(prios & (1u << prio)))
			continue;
		for (uint32_t in = 0; in < s->voq->nports; in++) {
			uint32_t idx;

			while ((idx = voq_pop(s->voq, in, p->idx, prio)) != VOQ_NONE) {
				sw_dequeued(s, p, prio, idx);
				sw_leave(s, &s->ports[in], p->idx, prio, idx, sw_frame(s, idx)->len);
				sw_drop_frame(s, &s->ports[in], idx, SW_DROP_WATCHDOG);
				p->st.pause_storm_drops++;
			}
		}
	}
}

/* ---- link events ----------------------------------------------------------- */

/* Every frame queued for output p, at every input and priority, goes: the
 * input buffers they held get their room back (and send XON upstream if
 * they had sent XOFF). */
static void sw_link_drain(struct sw *s, struct sw_port *p)
{
	for (uint32_t in = 0; in < s->voq->nports; in++) {
		for (int prio = 0; prio < L2CC_NPRIO; prio++) {
			uint32_t idx;

			while ((idx = voq_pop(s->voq, in, p->idx, prio)) != VOQ_NONE) {
				sw_dequeued(s, p, prio, idx);
				sw_leave(s, &s->ports[in], p->idx, prio, idx, sw_frame(s, idx)->len);
				sw_drop_frame(s, &s->ports[in], idx, SW_DROP_LINK_DOWN);
				p->st.link_down_drops++;
			}
		}
	}
}

void sw_port_link(struct sw *s, struct sw_port *p, bool up)
{
	if (up == p->link_up)
		return;
	p->link_up = up;
	sw_xdp_ctl_config(s, p);
	if (up) {
		p->st.link_up_events++;
		fc_rx_link_up(&p->frx, s->now);
		sw_fc_update(s, p);
		/* The wire was idle: no burst for the time it was down. */
		wclock_resume(&p->wc, s->now);
		p->next_tx_ns = s->now;
		sw_fwd_port(s, p);
		return;
	}
	p->st.link_down_events++;
	p->st.fdb_flushed += fdb_flush_port(s->fdb, p->idx);
	/* Its statics leave the XDP map too (the next pass). */
	sw_fwd_port(s, p);
	sw_link_drain(s, p);
	fc_tx_link_down(&p->etx, s->now);
	fc_rx_link_down(&p->frx);
	if (p->credit_stall_start) {
		p->credit_stall_acc += s->now - p->credit_stall_start;
		p->credit_stall_start = 0;
	}
	p->wd_storm = p->wd_timing = 0;
	p->wd_next = UINT64_MAX;
	p->fc_held = false;
	wclock_backlog(&p->wc, false);  /* down is not late: nothing waits for it */
	p->full_due = 0;
	sw_set_blocked(s, p, 0);
	p->next_tx_ns = UINT64_MAX;
}

/* Set FECN in a frame leaving p if its congestion point (or `mark` by
 * hand) wants it. Only tagged frames can carry a mark; the others are
 * counted. A frame the congestion point marks does not use up a mark by
 * hand; a mark by hand is used up only by a frame that carries it. A
 * CP_DROP is returned for the caller to carry out. */
static enum cp_verdict sw_mark(struct sw *s, struct sw_port *p, int prio, uint32_t idx,
			       uint32_t len)
{
	uint8_t *data = sw_frame_data(s, idx);
	enum cp_verdict v = CP_PASS;
	int err;

	if (p->cpo && p->cpo->tx)
		v = p->cpo->tx(p->cp, p->idx, prio, idx, data, len);
	if (v == CP_DROP || (v != CP_MARK && !p->mark_pending))
		return v;
	err = wire_tag_set_fecn(data, len);
	if (!err)
		p->st.marked++;
	else
		p->st.mark_untagged++;
	if (v != CP_MARK && !err)
		p->mark_pending--;
	return v;
}

/* The XDP program's counts of the control frames it took, into ours. */
static void sw_xdp_ctl_news(struct sw_port *p, const struct fc_xdp_news *n)
{
	p->st.rx_frames += n->frames;
	p->st.rx_bytes += n->bytes;
	p->st.ctrl_rx_frames += n->ctrl_frames;
	p->st.pause_rx += n->pause_rx;
	p->st.pfc_rx += n->pfc_rx;
	for (int i = 0; i < L2CC_NPRIO; i++)
		p->st.prio[i].pfc_rx += n->pfc_rx_prio[i];
	p->st.credit_rx += n->credit_rx;
	p->st.fc_ignored += n->fc_ignored;
	p->st.drop[SW_DROP_MALFORMED] += n->malformed;
	p->st.drop[SW_DROP_UNSUPPORTED] += n->unsupported;
}

/* PAUSE/PFC and credit limits the XDP program took since the last pass,
 * applied before we decide what may go (sw_rx_macctrl's and sw_rx_credit's
 * work for frames that never reach the ring). One load when nothing came. */
static void sw_xdp_ctl(struct sw *s, struct sw_port *p)
{
	struct l2cc_xdp_ctl snap;
	struct fc_xdp_news n;

	if (!xport_ctl_on(p->xp) || !xport_ctl_read(p->xp, &snap, &p->xctl.seq))
		return;
	if (!p->link_up) {
		fc_xdp_forget(&p->xctl, &snap, &n);
		sw_xdp_ctl_news(p, &n);
		return;
	}
	fc_xdp_apply(&p->xctl, &snap, &p->etx, s->now, &n);
	sw_xdp_ctl_news(p, &n);
	for (int i = 0; i < L2CC_NPRIO; i++)
		if ((n.xoff_mask & (1u << i)) && n.xoff_at[i] > p->wd_last_pause[i])
			p->wd_last_pause[i] = n.xoff_at[i];
	if (n.credit_first)
		fc_rx_credit_now(&p->frx);
}

/* What the XDP program takes on this port (L2CC_XDPC_*), after a change of
 * configuration or link. */
void sw_xdp_ctl_config(struct sw *s, struct sw_port *p)
{
	const struct port_cfg *c = p->cfg;
	uint32_t f = 0;

	if (!xport_ctl_on(p->xp))
		return;
	if (c->xdp_control)
		f = L2CC_XDPC_ON | (p->link_up ? L2CC_XDPC_UP : 0) |
		    (c->fc == FC_PAUSE ? L2CC_XDPC_PAUSE : 0) |
		    (c->fc == FC_PFC ? L2CC_XDPC_PFC : 0) |
		    (c->fc == FC_CREDIT ? L2CC_XDPC_CREDIT : 0) |
		    /* A host cannot grant credits (sw_rx_credit). */
		    (c->role != ROLE_HOST ? L2CC_XDPC_LIMITS : 0);
	xport_ctl_config(p->xp, f, c->rate);
	/* Before a link goes down: what the program took so far is counted,
	 * not applied (fc_tx_link_down voids it). */
	if (!p->link_up)
		sw_xdp_ctl(s, p);
}

/*
 * Is the hold the last pass ended in over: a priority it had paused is open,
 * or a credit grant came since it refused one? Until then the output waits
 * on its partner, and a late pass is not lost wire time. (A grant too small
 * for the head frame still counts as the end: the one case where lateness
 * is counted while the partner held the wire.)
 */
static bool sw_hold_over(const struct sw_port *p, uint8_t open)
{
	return (p->held_paused & open) ||
	       (p->held_refused && p->etx.credit_grants != p->held_grants);
}

static bool sw_tx_port(struct sw *s, struct sw_port *p)
{
	uint32_t space = dp_space(&s->sink, p->idx), sent;
	bool credit_refused = false, sent_data = false, backlog = false;
	uint8_t open, mask, refused = 0, storm;

	p->next_tx_ns = UINT64_MAX;
	sw_xdp_ctl(s, p);
	if (!p->link_up)
		return false;
	open = fc_tx_open_mask(&p->etx, s->now);
	/* Held by flow control at the end of the last pass: the wire resumes
	 * when the hold ended, without a burst for the held time. Before
	 * anything asks the wire (our control frames too): a pull-up then is
	 * lost wire time only if the hold is over. */
	if (p->fc_held) {
		wclock_resume(&p->wc, p->etx.resume_ns < s->now ? p->etx.resume_ns : s->now);
		if (!sw_hold_over(p, open))
			wclock_backlog(&p->wc, false);
		p->fc_held = false;
	}
	sent = sw_tx_ctrl(s, p, space);
	space -= sent;
	storm = sw_watchdog(s, p, open);
	if (storm && p->cfg->pause_watchdog_action == SW_WD_DROP)
		sw_watchdog_drop(s, p, storm);
	open = mask = open | storm;
	/* Paused with frames waiting: a victim now, not a root. */
	sw_set_blocked(s, p, sw_waiting(s, p, (uint8_t)~open));
	while (s->voq->out_total[p->idx] && space && mask && wclock_ready(&p->wc, s->now)) {
		uint32_t in, prio, idx, len;
		struct sw_port *ip;

		if (!voq_select(s->voq, p->idx, mask, &in, &prio))
			break;
		idx = voq_head(s->voq, in, p->idx, prio);
		len = sw_frame(s, idx)->len;
		/* Toward a host nothing waits for credits: a host grants none. */
		if (p->cfg->fc == FC_CREDIT && p->cfg->role == ROLE_SWITCH) {
			if (!fc_tx_credit_ok(&p->etx, prio, len)) {
				credit_refused = true;
				refused |= 1u << prio;
				p->st.prio[prio].credit_blocked++;
				mask &= ~(1u << prio);
				sw_set_blocked(s, p, p->blocked | (1u << prio));
				continue;
			}
			fc_tx_credit_charge(&p->etx, prio, len);
		}
		voq_pop(s->voq, in, p->idx, prio);
		sw_dequeued(s, p, prio, idx);
		ip = &s->ports[in];
		if (sw_mark(s, p, prio, idx, len) == CP_DROP) {
			/* Counted where it arrived, as every drop is; the
			 * wire stays free for the next frame. */
			sw_leave(s, ip, p->idx, prio, idx, len);
			sw_drop_frame(s, ip, idx, SW_DROP_CP);
			continue;
		}
		sw_put(s, p, idx, len);
		sent_data = true;
		p->st.prio[prio].tx_frames++;
		p->st.prio[prio].tx_bytes += len;
		sw_leave(s, ip, p->idx, prio, idx, len);
		space--;
		sent++;
	}
	sw_set_blocked(s, p, sw_waiting(s, p, (uint8_t)(~open | refused)));
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
	if (fc_rx_due(&p->frx) || s->voq->out_total[p->idx]) {
		if (!space) {
			p->next_tx_ns = s->now + 20000; /* the kernel drains the ring soon */
			backlog = fc_rx_due(&p->frx) || sw_waiting(s, p, mask);
		} else if (fc_rx_due(&p->frx) ||
			 voq_select(s->voq, p->idx, mask, &(uint32_t){ 0 }, &(uint32_t){ 0 })) {
			p->next_tx_ns = wclock_next(&p->wc); /* eligible: waits for the wire */
			backlog = true;
		} else {
			/* Paused: until the pause runs out. Out of credits:
			 * until a credit update arrives, which wakes us as it
			 * reaches our socket. With xdp_control the XDP program
			 * applied its limits first and rings no bell for it (a
			 * second wake-up per update); should our receive ring
			 * be full, the update is applied but never arrives:
			 * look again in a millisecond while stalled. */
			p->next_tx_ns = fc_tx_pause_end(&p->etx, sw_waiting(s, p, (uint8_t)~mask));
			/* Backlogged if the hold's end will be known: a pause
			 * runs out at its time, a grant's arrival is when it
			 * came (the XDP program's timestamp; a grant parsed
			 * here is timed when we read it, so lateness in
			 * noticing it is not seen). */
			backlog = p->next_tx_ns != UINT64_MAX || refused;
			if (credit_refused && p->cfg->xdp_control && p->next_tx_ns > s->now + 1000000)
				p->next_tx_ns = s->now + 1000000;
			p->fc_held = true;
			p->held_paused = sw_waiting(s, p, (uint8_t)~open);
			p->held_refused = refused;
			p->held_grants = p->etx.credit_grants;
		}
	}
	wclock_backlog(&p->wc, backlog);
	return sent > 0;
}

/* ---- timers and the pass -------------------------------------------------- */

static void sw_port_timers(struct sw *s, struct sw_port *p)
{
	uint64_t room[L2CC_NPRIO];

	if (p->frx.cfg.mode == FC_RX_NONE || !p->link_up || s->now < fc_rx_next(&p->frx))
		return;
	sw_room(p, room);
	fc_rx_timers(&p->frx, room, s->now);
}

bool sw_pass(struct sw *s)
{
	bool work = false;
	int i;

	if (s->fwd_dirty)
		sw_fwd_resync(s);
	for (i = 0; i < s->ncps; i++) {
		const struct sw_cp *c = &s->cps[i];

		if (c->ops->timer && c->ops->next_timer(c->cp) <= s->now)
			c->ops->timer(c->cp, s->now);
	}
	for (i = 0; i < s->nports; i++) {
		sw_port_timers(s, &s->ports[i]);
		work |= sw_tx_port(s, &s->ports[i]);
	}
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		/* Releases by later ports' passes made credits due here: one
		 * grant for all of them, in this pass rather than the next. */
		if (p->link_up && fc_rx_due(&p->frx) && sw_tx_ctrl(s, p, dp_space(&s->sink, p->idx)))
			work = true;
		dp_flush(&s->sink, p->idx);
		while (p->full_due) {
			int prio = __builtin_ctz(p->full_due);

			p->full_due &= p->full_due - 1;
			sw_full_check(s, p, prio);
		}
	}
	return work;
}

uint64_t sw_credit_stall_ns(const struct sw_port *p, uint64_t now)
{
	return p->credit_stall_acc + (p->credit_stall_start ? now - p->credit_stall_start : 0);
}

/* When the core next has something to do by itself (not counting frames
 * that arrive). */
uint64_t sw_core_deadline(const struct sw *s)
{
	uint64_t d = UINT64_MAX;

	for (int i = 0; i < s->ncps; i++)
		if (s->cps[i].ops->next_timer)
			sw_min(&d, s->cps[i].ops->next_timer(s->cps[i].cp));
	for (int i = 0; i < s->nports; i++) {
		const struct sw_port *p = &s->ports[i];

		if (!p->link_up)
			continue;   /* nothing to send, nothing to tell its peer */
		sw_min(&d, p->next_tx_ns);
		sw_min(&d, p->wd_next);
		if (p->frx.cfg.mode != FC_RX_NONE)
			sw_min(&d, fc_rx_next(&p->frx));
	}
	return d;
}

/* ---- the CPU pseudo-port --------------------------------------------------- */

int sw_emit(struct sw *s, int prio, const void *frame, uint32_t len)
{
	struct sw_port *cpu = sw_cpu_port(s), *op;
	struct eth_info ei;
	int64_t idx;
	int out;

	if (prio < 0 || prio >= L2CC_NPRIO || wire_parse_eth(frame, len, &ei) ||
	    wire_is_multicast(ei.dst) || len > s->umem->frame_size) {
		s->cpu_refused[SW_DROP_MALFORMED]++;
		return -EINVAL;
	}
	/* A notification is for a sender whose frame we just saw, so its
	 * address is learnt; one for an address we do not know is dropped,
	 * not flooded to every host. */
	out = fdb_lookup(s->fdb, ei.dst, ei.vid, s->now);
	if (out < 0) {
		s->cpu_refused[SW_DROP_FILTERED]++;
		return -ENOBUFS;
	}
	op = &s->ports[out];
	if (!op->link_up || !wclock_ready(&op->cpu_wc, s->now) || !sw_admit(cpu, prio, len)) {
		op->st.cpu_drops++;
		return -ENOBUFS;
	}
	idx = umem_alloc(s->umem);
	if (idx < 0) {
		cpu->occ[prio] -= sw_units(cpu, len);
		op->st.cpu_drops++;
		s->cpu_refused[SW_DROP_NO_FRAME]++;
		return -ENOBUFS;
	}
	wclock_charge(&op->cpu_wc, len);
	sw_frame(s, idx)->addr = umem_addr(s->umem, idx);
	memcpy(sw_frame_data(s, idx), frame, len);
	cpu->st.rx_frames++;
	cpu->st.rx_bytes += len;
	op->st.cpu_tx++;
	sw_enqueue(s, cpu, out, prio, idx, len, VOQ_F_CHARGED);
	return 0;
}

/* ---- what a congestion point may see (cp.h) ------------------------------- */

uint64_t sw_now(const struct sw *s) { return s->now; }
uint32_t sw_nports(const struct sw *s) { return s->nports; }
const struct cp_ops *sw_port_scheme(const struct sw *s, uint32_t port)
{
	return s->ports[port].cpo;
}
const char *sw_port_name(const struct sw *s, uint32_t port) { return s->ports[port].cfg->name; }
const void *sw_port_cp_cfg(const struct sw *s, uint32_t port) { return s->ports[port].cfg->cp_cfg; }
uint32_t sw_out_frames(const struct sw *s, uint32_t out) { return s->voq->out_total[out]; }

uint32_t sw_voq_frames(const struct sw *s, uint32_t in, uint32_t out, int prio)
{
	return voq_q(s->voq, in, out, prio)->frames;
}

uint64_t sw_voq_bytes(const struct sw *s, uint32_t in, uint32_t out, int prio)
{
	return voq_q(s->voq, in, out, prio)->bytes;
}

void sw_port_geom(const struct sw *s, uint32_t port, struct sw_port_geom *g)
{
	const struct sw_port *p = &s->ports[port];

	g->buffer = p->cap;
	g->buffer_frames = p->unit_frames;
	g->max_frame = p->max_frame;
	g->host = p->cfg->role == ROLE_HOST;
	g->rate_bps = p->cfg->rate;
}

uint64_t sw_port_wire_bytes(const struct sw *s, uint32_t port)
{
	const struct wclock *c = &s->ports[port].wc;

	if (!c->rate_bps || c->t_free <= s->now)
		return 0;
	return (uint64_t)((double)(c->t_free - s->now) * (double)c->rate_bps / 8e9);
}

uint32_t sw_voq_first(const struct sw *s, uint32_t in, uint32_t out, int prio)
{
	return voq_head(s->voq, in, out, prio);
}

uint32_t sw_frame_next(const struct sw *s, uint32_t frame)
{
	return sw_frame(s, frame)->next;
}

uint8_t *sw_frame_cp(struct sw *s, uint32_t frame) { return &sw_frame(s, frame)->cp; }

const uint8_t *sw_frame_bytes(const struct sw *s, uint32_t frame, uint32_t *len)
{
	*len = sw_frame(s, frame)->len;
	return sw_frame_data(s, frame);
}

const uint8_t *sw_port_mac(const struct sw *s, uint32_t port) { return s->ports[port].mac; }

bool sw_out_is_root(struct sw *s, uint32_t out, int prio)
{
	struct sw_port *o = &s->ports[out];

	if (o->blocked || !(fc_tx_open_mask(&o->etx, s->now) & (1u << prio)))
		return false;
	return o->cfg->fc != FC_CREDIT || o->cfg->role != ROLE_SWITCH ||
	       fc_tx_credit_ok(&o->etx, prio, o->max_frame);
}

/* ---- configuration ------------------------------------------------------------ */

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
	struct fc_rx_cfg fc = { 0 };
	uint64_t burst, headroom;

	p->max_frame = (c->mtu ? c->mtu : p->if_mtu) + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN;
	sw_xdp_ctl_config(s, p);
	/* The address limits are for host ports: a switch port carries the
	 * fabric's addresses, and a topology change moves many at once. */
	s->fdb->port_limit[p->idx] = c->role == ROLE_HOST ? (uint32_t)c->mac_limit : 0;
	s->fdb->move_limit[p->idx] = c->role == ROLE_HOST ? (uint32_t)c->mac_move_limit : 0;
	burst = c->burst ? c->burst : wclock_default_burst(c->rate, p->max_frame);
	wclock_init(&p->wc, c->rate, burst, c->wire_overhead);
	wclock_init(&p->cpu_wc, c->rate * s->cfg->cpu_share / 100, 4ull * p->max_frame,
		    c->wire_overhead);
	p->unit_frames = c->buffer.frames;
	p->cap = c->buffer.n;
	/* Room needed above XOFF: what the peer may already have in flight when
	 * the PAUSE reaches it (its burst and the frame on the wire), the PAUSE
	 * frame's own wait behind a frame on our side, and what arrives while
	 * we are not running: on a shared CPU, frames wait in our RX ring. */
	headroom = burst + 2ull * p->max_frame + c->rate / 8 * c->reaction_time / 1000000000ull;
	if (p->unit_frames)
		headroom = (headroom + p->max_frame - 1) / p->max_frame;
	fc.mode = c->fc == FC_PAUSE ? FC_RX_PAUSE : c->fc == FC_PFC ? FC_RX_PFC
		: c->fc == FC_CREDIT ? FC_RX_CREDIT : FC_RX_NONE;
	fc.unit_frames = p->unit_frames;
	if (c->xoff.set)
		fc.xoff = sw_qty_units(p, &c->xoff);
	else
		fc.xoff = p->cap > headroom ? p->cap - headroom : (p->cap + 1) / 2;
	if (c->xon.set) {
		fc.xon = sw_qty_units(p, &c->xon);
	} else {
		uint64_t gap = p->unit_frames ? 2 : 2ull * p->max_frame;

		fc.xon = fc.xoff > gap ? fc.xoff - gap : 0;
	}
	fc.pause_quanta = (uint16_t)c->pause_quanta;
	fc.pause_ns = wire_quanta_to_ns(c->pause_quanta, c->rate);
	/* Advertise credits after an eighth of the buffer is freed (at least
	 * one unit); small buffers get an update per frame, as IB does. */
	fc.credit_step = p->cap / 8 ? p->cap / 8 : 1;
	fc.credit_interval = c->credit_interval;
	fc_rx_configure(&p->frx, &fc, s->now);
	/* Largest frame and VLANs of its fast path (forwarding = xdp). */
	sw_fwd_port(s, p);
	if ((c->fc == FC_PAUSE || c->fc == FC_PFC) && p->cap <= headroom)
		pr_info("port %s: buffer (%llu %s) is not above the PAUSE headroom (%llu): "
			"XOFF at half the buffer; frames arriving when it is full wait in the "
			"RX ring (rx_holds)\n",
			c->name, (unsigned long long)p->cap, p->unit_frames ? "frames" : "bytes",
			(unsigned long long)headroom);
}

/* ---- lifecycle of the core ------------------------------------------------------ */

/* Each port's congestion point: one instance per scheme in use. */
static int sw_cps_create(struct sw *s)
{
	for (int i = 0; i < s->nports; i++) {
		const struct port_cfg *c = s->ports[i].cfg;
		int m = c->marking == SW_MARK_SWITCH ? s->cfg->marking : c->marking - 1;

		s->ports[i].cpo = cp_by_index(m);
	}
	for (int i = 0; i < s->nports; i++) {
		const struct cp_ops *ops = s->ports[i].cpo;
		struct sw_cp *c = NULL;
		int err;

		if (!ops)
			continue;
		for (int k = 0; k < s->ncps; k++)
			if (s->cps[k].ops == ops)
				c = &s->cps[k];
		if (!c) {
			if (s->ncps == (int)(sizeof(s->cps) / sizeof(s->cps[0])))
				return -E2BIG;
			c = &s->cps[s->ncps];
			err = ops->create(&c->cp, s);
			if (err) {
				pr_err("congestion point %s: %s\n", ops->name, strerror(-err));
				return err;
			}
			c->ops = ops;
			s->ncps++;
			s->transit_types |= ops->ctrl_types;
		}
		s->ports[i].cp = c->cp;
	}
	return 0;
}

static void sw_cps_destroy(struct sw *s)
{
	for (int i = 0; i < s->ncps; i++)
		s->cps[i].ops->destroy(s->cps[i].cp);
	s->ncps = 0;
	s->transit_types = 0;
	for (int i = 0; i < s->nports; i++) {
		s->ports[i].cp = NULL;
		s->ports[i].cpo = NULL;
	}
}

int sw_cps_reset(struct sw *s)
{
	int err;

	sw_cps_destroy(s);
	/* Frames keep the flags of the old scheme in their cp byte. */
	for (uint32_t i = 0; i < s->voq->nframes; i++)
		sw_frame(s, i)->cp = 0;
	err = sw_cps_create(s);
	if (err)
		sw_cps_destroy(s);
	return err;
}

static void sw_voq_free(void *ctx, uint32_t frame, uint32_t in)
{
	struct sw *s = ctx;

	umem_free(s->umem, frame);
}

void sw_core_destroy(struct sw *s)
{
	if (!s)
		return;
	sw_cps_destroy(s);
	if (s->voq)
		voq_drain(s->voq, sw_voq_free, s);
	voq_destroy(s->voq);
	fdb_destroy(s->fdb);
	free(s->floods);
	free(s->flood_of);
	free(s->flood_free);
	free(s);
}

int sw_core_create(struct sw **out, struct sw_cfg *cfg, struct umem *umem,
		   const struct dp_sink *sink, const uint8_t (*macs)[6], const uint32_t *mtus,
		   uint64_t now)
{
	struct sw_port *cpu;
	struct sw *s;
	int i, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = cfg;
	s->umem = umem;
	s->sink = *sink;
	s->nports = cfg->nports;
	s->now = s->start_ns = now;
	err = fdb_create(&s->fdb, cfg->fdb_size, cfg->fdb_aging);
	if (err)
		goto err;
	/* One more input than ports: the CPU pseudo-port. */
	err = voq_create(&s->voq, cfg->nports + 1, umem->nframes, cfg->sched);
	if (err)
		goto err;
	/* Each flooded frame in flight holds at least one UMEM frame. */
	s->floods = calloc(umem->nframes, sizeof(*s->floods));
	s->flood_of = calloc(umem->nframes, sizeof(*s->flood_of));
	s->flood_free = calloc(umem->nframes, sizeof(*s->flood_free));
	if (!s->floods || !s->flood_of || !s->flood_free) {
		err = -ENOMEM;
		goto err;
	}
	for (uint32_t g = 0; g < umem->nframes; g++)
		s->flood_free[g] = umem->nframes - 1 - g;
	s->nflood_free = umem->nframes;
	/* As hostd keeps: a ring's worth of frames to refill the fill rings,
	 * and the few control frames each port may be building (the 16 per
	 * port of sw_cfg_umem_need); never more than half a small pool. */
	s->reserve = (uint32_t)cfg->ring_size + 16u * (uint32_t)cfg->nports;
	if (s->reserve > umem->nframes / 2)
		s->reserve = umem->nframes / 2;
	for (i = 0; i < cfg->nports; i++) {
		struct sw_port *p = &s->ports[i];

		p->sw = s;
		p->cfg = &cfg->ports[i];
		p->idx = i;
		p->ipv6_was = -1;
		p->wd_next = UINT64_MAX;
		p->link_up = p->link_seen = true;
		p->operstate = 6;   /* IF_OPER_UP, until the daemon reads the kernel's */
		memcpy(p->mac, macs[i], 6);
		p->if_mtu = mtus[i];
		sw_port_apply_cfg(s, p);
	}
	/* The CPU pseudo-port: an input of cpu_queue frames at every priority,
	 * no wire, no flow control. */
	cpu = sw_cpu_port(s);
	cpu->sw = s;
	cpu->idx = cfg->nports;
	cpu->cfg = &s->cpu_cfg;
	snprintf(s->cpu_cfg.name, sizeof(s->cpu_cfg.name), "cpu");
	cpu->unit_frames = true;
	cpu->cap = cfg->cpu_queue;
	cpu->max_frame = s->umem->frame_size;
	cpu->ipv6_was = -1;
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
	err = sw_cps_create(s);
	if (err)
		goto err;
	*out = s;
	return 0;
err:
	sw_core_destroy(s);
	return err;
}
