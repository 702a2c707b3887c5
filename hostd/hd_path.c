// SPDX-License-Identifier: BSD-2-Clause
/*
 * The hostd datapath. Two AF_XDP ports over one UMEM:
 *
 *   host stack eth0 ─veth─ host_port [hostd] uplink ─veth─ switch
 *
 * Host -> fabric: classify each frame to a flow, queue it (bounded in bytes:
 * the host edge, where overflow is counted), and let the pacer pick which
 * flow may send when the uplink's wire clock and the switch's flow control
 * (PAUSE/PFC/credits) allow; tag data frames on the way out. ARP, ND,
 * broadcast and multicast bypass the flows (a small FIFO, untagged).
 *
 * Fabric -> host: consume PAUSE/PFC/CREDIT and CNP/ACK, strip tags, note
 * FECN marks and answer them with CNPs (or ACKs in reliable mode), deliver
 * the rest to the host stack unchanged.
 *
 * This is the core: frames come in through hd_rx_host_frame() and
 * hd_rx_up_frame() and leave through the sink (dp_sink.h) at the time the
 * caller set, so the unit tests run it in virtual time; hd_daemon.c binds
 * it to the AF_XDP ports. Nothing here allocates after hd_core_create() or
 * logs unthrottled; frames move as descriptors and the tag is inserted into
 * the UMEM headroom in place.
 */
#define LOG_SUBSYS "hostd"
#include "hostd_private.h"
#include "ctrl_msg.h"
#include "log.h"
#include "loop.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HD_CREDIT_INTERVAL_NS 1000000ull
#define HD_EXPIRE_INTERVAL_NS 100000000ull  /* a sweep of 1024 flows per 400 ms */
#define HD_EXPIRE_BUDGET 256
/* Saved law state (persistent = yes) is forgotten after this long unused. */
#define HD_SAVED_IDLE_NS 60000000000ull

const char *const hd_drop_names[HD_DROP_MAX] = {
	[HD_DROP_MALFORMED] = "malformed",
	[HD_DROP_OVERSIZE] = "oversize",
	[HD_DROP_QUEUE_FULL] = "queue_full",
	[HD_DROP_PASS_FULL] = "pass_full",
	[HD_DROP_NO_FRAME] = "no_frame",
	[HD_DROP_FORGED] = "forged",
	[HD_DROP_LINK_LOCAL] = "link_local",
	[HD_DROP_BAD_TAG] = "bad_tag",
	[HD_DROP_BAD_CTRL] = "bad_ctrl",
	[HD_DROP_UNSUPPORTED] = "unsupported",
	[HD_DROP_LINK_DOWN] = "link_down",
	[HD_DROP_SUBFLOW_SHARE] = "subflow_share",
};

/* ---- small fixed containers -------------------------------------------- */

static int fring_init(struct hd_fring *r, uint32_t cap)
{
	r->cap = cap;
	r->idx = calloc(cap, sizeof(*r->idx));
	r->len = calloc(cap, sizeof(*r->len));
	return r->idx && r->len ? 0 : -ENOMEM;
}

static void fring_fini(struct hd_fring *r)
{
	free(r->idx);
	free(r->len);
}

static bool fring_push(struct hd_fring *r, uint32_t idx, uint32_t len)
{
	uint32_t slot;

	if (r->n == r->cap)
		return false;
	slot = (r->head + r->n) % r->cap;
	r->idx[slot] = idx;
	r->len[slot] = (uint16_t)len;
	r->n++;
	return true;
}

static void fring_pop(struct hd_fring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

/* ---- law timers: a binary min-heap of (flow id, timer) on tat[] ---------- */

/* Timer k of flow id is slot id * RP_TIMERS + k. */
static inline uint32_t tslot(uint32_t id, unsigned k) { return id * RP_TIMERS + k; }

static void heap_swap(struct hd *h, uint32_t a, uint32_t b)
{
	uint32_t t = h->theap[a];

	h->theap[a] = h->theap[b];
	h->theap[b] = t;
	h->tpos[h->theap[a]] = a + 1;
	h->tpos[h->theap[b]] = b + 1;
}

static uint64_t heap_key(const struct hd *h, uint32_t i)
{
	return h->tat[h->theap[i]];
}

static void heap_fix(struct hd *h, uint32_t i)
{
	while (i && heap_key(h, (i - 1) / 2) > heap_key(h, i)) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->ntimers && heap_key(h, l) < heap_key(h, m))
			m = l;
		if (r < h->ntimers && heap_key(h, r) < heap_key(h, m))
			m = r;
		if (m == i)
			return;
		heap_swap(h, i, m);
		i = m;
	}
}

static void timer_cancel(struct hd *h, uint32_t slot)
{
	uint32_t pos = h->tpos[slot];

	if (!pos)
		return;
	h->tpos[slot] = 0;
	h->tat[slot] = 0;
	if (--h->ntimers == pos - 1)
		return;
	h->theap[pos - 1] = h->theap[h->ntimers];
	h->tpos[h->theap[pos - 1]] = pos;
	heap_fix(h, pos - 1);
}

static void timer_set(struct hd *h, uint32_t slot, uint64_t at)
{
	uint32_t pos = h->tpos[slot];

	h->tat[slot] = at;
	if (!pos) {
		h->theap[h->ntimers] = slot;
		h->tpos[slot] = ++h->ntimers;
		pos = h->ntimers;
	}
	heap_fix(h, pos - 1);
}

/* ---- flows and laws ----------------------------------------------------- */

static bool hd_paced(const struct rp_out *o)
{
	return o->by_ipd || o->rate_bps;
}

/* Apply a law's decision to the pacer. */
static void hd_apply_out(struct hd *h, struct flow *f, const struct rp_out *o)
{
	struct hd_flow *x = &h->hf[f->id];

	if (o->by_ipd != x->out.by_ipd || o->ipd != x->out.ipd || o->rate_bps != x->out.rate_bps) {
		uint64_t rate = o->by_ipd ? h->cfg->link_rate / (1 + o->ipd) : o->rate_bps;
		uint64_t burst = 2ull * h->max_frame;
		uint64_t timed = rate / 8 * (h->cfg->flow_burst / 1000) / 1000000;

		if (o->by_ipd)
			pacer_set_ipd(h->pacer, f->id, o->ipd, h->cfg->link_rate, h->now);
		else
			pacer_set_rate(h->pacer, f->id, o->rate_bps, h->now);
		/* As the uplink's wire clock: a backlogged flow served late
		 * (hostd wakes 0.1-1 ms after a deadline on a shared CPU)
		 * keeps that lateness up to its burst instead of losing it,
		 * so its long-run rate stays exact. 500 us lost 1-2% of a
		 * 50M flow beside a busy one; 2 ms keeps it within 0.5%. */
		if (timed > burst)
			burst = timed;
		pacer_set_burst(h->pacer, f->id, (uint32_t)(burst > UINT32_MAX ? UINT32_MAX : burst));
	}
	x->out = *o;
}

static void hd_flow_init(struct hd *h, struct flow *f)
{
	struct rp_out o = { 0 };

	memset(&h->hf[f->id], 0, sizeof(h->hf[f->id]));
	h->rpo->init(h->rp, f, &o);
	/* The pacer's slot is fresh (idle, unpaced): force the first apply. */
	h->hf[f->id].out.rate_bps = o.rate_bps + 1;
	pacer_set_own_gap(h->pacer, f->id, h->rpo->pace_own_gap, h->now);
	hd_apply_out(h, f, &o);
}

int hd_set_flow_rate(struct hd *h, struct flow *f, uint64_t rate_bps, int64_t ipd)
{
	struct rp_out o = h->hf[f->id].out;

	if (ipd > 65535)
		return -ERANGE;
	o.by_ipd = ipd >= 0;
	o.ipd = ipd >= 0 ? (uint32_t)ipd : 0;
	o.rate_bps = ipd >= 0 ? 0 : rate_bps;
	hd_apply_out(h, f, &o);
	f->pinned = true;
	return 0;
}

/* [law] persistent: keep the law's state of a flow that goes away under
 * its key, for the key's next flow (Infocom 2003, HPL-2002-359 §VI-B.2). */
static void hd_law_save(struct hd *h, const struct flow *f)
{
	struct flow *sv;

	if (!h->saved || !h->rpo->state_size || f->key.type == FLOW_KEY_DEFAULT)
		return;
	if (flow_lookup_or_create(h->saved, &f->key, h->now, &sv) < 0)
		return; /* store full: the next flow starts afresh */
	memcpy(sv->law_area, f->law_area, h->rpo->state_size);
	h->st.law_saves++;
}

/* Before a new flow's init: its key's saved state, if any. */
static void hd_law_restore(struct hd *h, struct flow *f)
{
	struct flow *sv;

	if (!h->saved || !h->rpo->state_size)
		return;
	sv = flow_lookup(h->saved, &f->key);
	if (!sv)
		return;
	memcpy(f->law_area, sv->law_area, h->rpo->state_size);
	flow_remove(h->saved, sv);
	h->st.law_resumes++;
}

static void hd_flow_removed(void *ctx, struct flow *f)
{
	struct hd *h = ctx;

	hd_law_save(h, f);
	for (unsigned k = 0; k < RP_TIMERS; k++)
		timer_cancel(h, tslot(f->id, k));
	pacer_remove(h->pacer, f->id);
}

/* The law's instance for the configuration in force (made anew on a
 * reload: its keys may have changed). */
static int hd_rp_create(struct hd *h)
{
	struct rp_env env = { .cfg = h->cfg, .keys = h->cfg->law_cfg, .link_bps = h->cfg->link_rate,
			      .h = h };
	const struct rp_ops *ops = rp_find(h->cfg->law);
	struct rp *rp;
	int err;

	if (!ops)
		return -EINVAL;
	err = ops->create(&rp, &env);
	if (err)
		return err;
	if (h->rp)
		h->rpo->destroy(h->rp);
	h->rpo = ops;
	h->rp = rp;
	return 0;
}

void hd_apply_cfg(struct hd *h)
{
	const struct hd_cfg *c = h->cfg;
	uint64_t burst = c->burst ? c->burst : wclock_default_burst(c->link_rate, h->max_frame);
	uint32_t max_flows = flow_table_max_flows(h->flows);
	struct fc_rx_cfg fc = {
		/* We grant credits (unlimited) once the switch grants us some. */
		.mode = c->fc == HD_FC_AUTO || c->fc == HD_FC_CREDIT ? FC_RX_CREDIT : FC_RX_NONE,
		.credit_interval = HD_CREDIT_INTERVAL_NS,
	};
	int err;

	wclock_init(&h->wc, c->link_rate, burst, (uint32_t)c->wire_overhead);
	fc_rx_configure(&h->frx, &fc, h->now);
	hd_xdp_ctl_config(h);
	err = hd_rp_create(h);
	if (err) {
		pr_err("law %s: %s%s\n", c->law, strerror(-err),
		       h->rp ? " (keeping the running one)" : "");
		if (!h->rp)
			return;
	}
	/* Flows follow the configuration unless the control socket set them. */
	for (uint32_t id = 0; id < max_flows; id++) {
		struct flow *f = flow_by_id(h->flows, (uint16_t)id);
		struct rp_out o = { 0 };

		if (!f || f->pinned)
			continue;
		h->rpo->init(h->rp, f, &o);
		hd_apply_out(h, f, &o);
	}
}

/* ---- what a law may ask of hostd (rp.h) ------------------------------------ */

uint64_t rp_now(const struct hd *h) { return h->now; }

void rp_timer(struct hd *h, const struct flow *f, unsigned timer, uint64_t delay_ns)
{
	if (timer >= RP_TIMERS)
		return;
	if (delay_ns)
		timer_set(h, tslot(f->id, timer), h->now + delay_ns);
	else
		timer_cancel(h, tslot(f->id, timer));
}

void rp_tick(struct hd *h, unsigned tick, uint64_t at)
{
	if (tick < RP_TICKS)
		h->tick_at[tick] = at;
}

void rp_apply(struct hd *h, struct flow *f, const struct rp_out *o)
{
	hd_apply_out(h, f, o);
}

const struct rp_out *rp_current(const struct hd *h, const struct flow *f)
{
	return &h->hf[f->id].out;
}

int rp_foreach(struct hd *h, int (*fn)(void *ctx, struct flow *f), void *ctx)
{
	return flow_foreach(h->flows, fn, ctx);
}

/* ---- uplink transmit ---------------------------------------------------- */

static bool hd_honour_pause(const struct hd *h)
{
	return h->cfg->fc == HD_FC_AUTO || h->cfg->fc == HD_FC_PAUSE;
}

static bool hd_honour_pfc(const struct hd *h)
{
	return h->cfg->fc == HD_FC_AUTO || h->cfg->fc == HD_FC_PFC;
}

/* Explicit `credit` waits for the first grant; `auto` obeys credits once
 * the switch has granted some. */
static bool hd_credits_apply(const struct hd *h)
{
	return h->cfg->fc == HD_FC_CREDIT || (h->cfg->fc == HD_FC_AUTO && h->etx.credit_have);
}

static bool hd_can_send(const struct hd *h, uint8_t open, int prio, uint32_t len)
{
	if (!(open & (1u << prio)))
		return false;
	return !hd_credits_apply(h) || fc_tx_credit_ok(&h->etx, prio, len);
}

static void hd_send_up(struct hd *h, uint64_t addr, uint32_t len, int prio, bool data)
{
	dp_put(&h->sink, HD_PORT_UP, addr, len);
	wclock_charge(&h->wc, len);
	if (data && hd_credits_apply(h)) {
		fc_tx_credit_charge(&h->etx, prio, len);
		/* The switch reconciles to our sent count: tell it soon. */
		fc_rx_sent_changed(&h->frx, h->now);
	}
	h->ust.tx_frames++;
	h->ust.tx_bytes += len;
}

static int hd_frame_prio(const struct hd *h, uint32_t idx, uint32_t len)
{
	struct eth_info ei;

	if (wire_parse_eth(umem_data(h->umem, h->frames[idx].addr), len, &ei))
		return 0;
	return ei.prio;
}

static void hd_park(struct hd *h, struct flow *f, int prio)
{
	struct hd_flow *x = &h->hf[f->id];

	x->parked = (uint8_t)(prio + 1);
	x->park_next = FLOW_ID_NONE;
	if (h->parked_mask & (1u << prio))
		h->hf[h->park_tail[prio]].park_next = f->id;
	else
		h->park_head[prio] = f->id;
	h->park_tail[prio] = f->id;
	h->parked_mask |= 1u << prio;
}

/* A parked flow whose head frame may go now, taken off its list, and the
 * priority it waited on in *prio; or NULL. */
static struct flow *hd_unpark(struct hd *h, uint8_t open, int *prio)
{
	for (int p = 0; p < L2CC_NPRIO; p++) {
		struct flow *f;
		uint32_t id;

		if (!(h->parked_mask & open & (1u << p)))
			continue;
		id = h->park_head[p];
		f = flow_by_id(h->flows, (uint16_t)id);
		if (!f || !hd_can_send(h, open, p, flow_frame_len(h->flows, flow_head(f)) +
					     (h->cfg->tag ? L2CC_TAG_LEN : 0)))
			continue;
		h->park_head[p] = h->hf[id].park_next;
		if (h->park_head[p] == FLOW_ID_NONE)
			h->parked_mask &= ~(1u << p);
		h->hf[id].parked = 0;
		*prio = p;
		return f;
	}
	return NULL;
}

/* Reliable mode: the law's window (frames sent and not yet acknowledged). */
static bool hd_window_full(const struct hd *h, const struct flow *f)
{
	const struct hd_flow *x = &h->hf[f->id];

	return x->out.window && h->cfg->tag && h->cfg->mode == HD_MODE_RELIABLE &&
	       f->seq_next - x->acked_next >= x->out.window;
}

/* A flow parked on its full window may send again: it queues behind the
 * priority of its head frame. */
static void hd_window_release(struct hd *h, struct flow *f)
{
	uint32_t head = flow_head(f);

	hd_park(h, f, hd_frame_prio(h, head, flow_frame_len(h->flows, head)));
}

/* A full window waits for ACKs, but not for ever: the fabric is lossless,
 * yet a receiver hostd that restarted never acknowledges what it lost. One
 * entry per flow; ack_timeout is the same for all, so the FIFO is in order. */
static void hd_window_timer(struct hd *h, struct flow *f)
{
	struct hd_flow *x = &h->hf[f->id];

	/* Entries of flows that ended stay until their deadline, so a table
	 * that churns could fill the FIFO: then this wait goes untimed, and
	 * the flow's next one tries again. */
	if (x->win_timer || !h->cfg->ack_timeout || h->win_fifo.n == h->win_fifo.cap)
		return;
	x->win_timer = true;
	x->win_acked = x->acked_next;
	tfifo_push(&h->win_fifo, f->id, f->gen, h->now + h->cfg->ack_timeout);
}

/* Send the head of flow f (in service in the pacer): tag, transmit, and
 * file the flow again with the pacer. */
static void hd_send_flow(struct hd *h, struct flow *f, int prio)
{
	struct hd_flow *x = &h->hf[f->id];
	uint32_t len, idx = flow_dequeue(h->flows, f, h->now, &len);
	uint64_t addr = h->frames[idx].addr;
	uint32_t next = f->q.frames ? flow_frame_len(h->flows, flow_head(f)) : 0;
	enum rp_limit lim = x->window_waited ? RP_LIMIT_WINDOW
			  : next && hd_paced(&x->out) ? RP_LIMIT_RATE : RP_LIMIT_NONE;
	uint32_t seq = f->seq_next;

	/* The law's ECN for a backed-up flow (before the tag: the IP header
	 * is then where wire_ip_set_ce looks first). */
	if (h->rpo->ce && h->rpo->ce(h->rp, f) &&
	    !wire_ip_set_ce(umem_data(h->umem, addr), len))
		h->st.ce_set++;
	if (h->cfg->tag) {
		uint8_t *frame = umem_data(h->umem, addr);
		struct wire_tag t = { .flow = f->id, .seq = seq };
		uint32_t headroom = (uint32_t)(addr - umem_addr(h->umem, idx));

		/* Fields the law wants its flows to carry (a congestion point's id). */
		if (h->rpo->tag)
			h->rpo->tag(h->rp, f, &t);
		/* Frames that cannot carry a tag (802.3 length field, more
		 * than two VLAN tags) go untagged: they cannot be marked. */
		if (!wire_tag_insert(&frame, &len, headroom, &t)) {
			addr -= L2CC_TAG_LEN;
			/* Its CNPs and ACKs may come only from where it went. */
			if (!f->seq_next)
				memcpy(x->peer, frame, 6);
			else if (memcmp(x->peer, frame, 6))
				x->many_peers = true;
			f->seq_next++;
			h->st.tagged++;
		}
	}
	hd_send_up(h, addr, len, prio, true);
	x->last_limit = lim;
	x->window_waited = false;
	if (h->rpo->on_tx) {
		struct rp_out o = x->out;

		h->rpo->on_tx(h->rp, f, seq, len, lim, &o);
		hd_apply_out(h, f, &o);
	}
	pacer_done(h->pacer, f->id, h->now, len, next);
}

/* Our CREDIT, when fc_rx has one due: link-local, not subject to PAUSE,
 * ahead of everything else. */
static uint32_t hd_tx_credit(struct hd *h, uint32_t space)
{
	uint32_t sent = 0;

	while (h->etx.credit_have && fc_rx_due(&h->frx) && space && wclock_ready(&h->wc, h->now)) {
		int64_t idx = umem_alloc(h->umem);
		int len;

		if (idx < 0) {
			h->ust.drop[HD_DROP_NO_FRAME]++;
			break;  /* still due: the next pass tries again */
		}
		h->frames[idx].addr = umem_addr(h->umem, (uint32_t)idx);
		len = fc_rx_build(&h->frx, umem_data(h->umem, h->frames[idx].addr),
				  h->umem->frame_size, h->mac_up, &h->etx, NULL, h->now);
		if (len <= 0) {
			umem_free(h->umem, (uint32_t)idx);
			break;
		}
		hd_send_up(h, h->frames[idx].addr, (uint32_t)len, 0, false);
		h->st.credit_tx++;
		h->ust.ctrl_tx_frames++;
		space--;
		sent++;
	}
	return sent;
}

/* Send one frame from a FIFO (CNPs/ACKs, or pass-through) if flow control
 * lets it; sets its priority's bit in *blocked otherwise. */
static bool hd_tx_fifo(struct hd *h, struct hd_fring *r, uint8_t open, uint8_t *blocked)
{
	uint32_t idx = r->idx[r->head], len = r->len[r->head];
	int prio = hd_frame_prio(h, idx, len);

	if (*blocked & (1u << prio))
		return false;
	if (!hd_can_send(h, open, prio, len)) {
		*blocked |= 1u << prio;
		return false;
	}
	hd_send_up(h, h->frames[idx].addr, len, prio, true);
	fring_pop(r);
	return true;
}

/* PAUSE/PFC and credit limits the uplink's XDP program took since the last
 * pass, applied before we decide what may go (hd_rx_macctrl's and
 * hd_rx_credit's work for frames that never reach the ring). One load
 * when nothing came. */
static void hd_xdp_ctl(struct hd *h)
{
	struct l2cc_xdp_ctl snap;
	struct fc_xdp_news n;

	if (!xport_ctl_on(h->up) || !xport_ctl_read(h->up, &snap, &h->xctl.seq))
		return;
	if (h->link_up[HD_PORT_UP])
		fc_xdp_apply(&h->xctl, &snap, &h->etx, h->now, &n);
	else
		fc_xdp_forget(&h->xctl, &snap, &n);
	h->ust.rx_frames += n.frames;
	h->ust.rx_bytes += n.bytes;
	h->ust.ctrl_rx_frames += n.ctrl_frames;
	h->st.pause_rx += n.pause_rx;
	h->st.pfc_rx += n.pfc_rx;
	h->st.credit_rx += n.credit_rx;
	h->st.fc_ignored += n.fc_ignored;
	h->ust.drop[HD_DROP_BAD_CTRL] += n.malformed;
	h->ust.drop[HD_DROP_UNSUPPORTED] += n.unsupported;
	if (n.credit_first)
		fc_rx_credit_now(&h->frx);
}

/* What the uplink's XDP program takes (L2CC_XDPC_*), after a change of
 * configuration or link; the host port's takes nothing. */
void hd_xdp_ctl_config(struct hd *h)
{
	const struct hd_cfg *c = h->cfg;
	uint32_t f = 0;

	if (!xport_ctl_on(h->up))
		return;
	if (c->xdp_control)
		f = L2CC_XDPC_ON | L2CC_XDPC_LIMITS |
		    (h->link_up[HD_PORT_UP] ? L2CC_XDPC_UP : 0) |
		    (hd_honour_pause(h) ? L2CC_XDPC_PAUSE : 0) |
		    (hd_honour_pfc(h) ? L2CC_XDPC_PFC : 0) |
		    (c->fc == HD_FC_AUTO || c->fc == HD_FC_CREDIT ? L2CC_XDPC_CREDIT : 0);
	xport_ctl_config(h->up, f, c->link_rate);
	/* Before the link goes down: what the program took so far is
	 * counted, not applied (fc_tx_link_down voids it). */
	if (!h->link_up[HD_PORT_UP])
		hd_xdp_ctl(h);
}

/*
 * When the uplink's wire next frees, will it have a frame to send at once?
 * Our CREDIT, a CNP/ACK or pass-through frame, a flow due by then, or a
 * parked flow whose priority is open (without credits: under credits an
 * open parked priority is one out of them). A flow paced below the link
 * leaves the wire idle between its frames: not a backlog.
 */
static bool hd_wire_backlogged(const struct hd *h, uint8_t open)
{
	return (h->etx.credit_have && fc_rx_due(&h->frx)) || h->notify.n || h->pass.n ||
	       pacer_deadline(h->pacer) <= wclock_next(&h->wc) ||
	       ((h->parked_mask & open) && !hd_credits_apply(h));
}

static bool hd_tx_up(struct hd *h)
{
	uint32_t space = dp_space(&h->sink, HD_PORT_UP), sent;
	uint8_t open = 0xff, blocked = 0;
	bool more = false, backlog = false;

	h->next_tx_ns = UINT64_MAX;
	if (hd_honour_pause(h) || hd_honour_pfc(h))
		open = fc_tx_open_mask(&h->etx, h->now);
	/* As switchd: a wire held by flow control resumes without a burst,
	 * and its lateness is lost wire time only once the hold is over (a
	 * priority it paused is open, or a grant came); before our CREDIT
	 * asks the wire. */
	if (h->fc_held) {
		wclock_resume(&h->wc, h->etx.resume_ns < h->now ? h->etx.resume_ns : h->now);
		if (!(h->held_paused & open) &&
		    !(h->held_refused && h->etx.credit_grants != h->held_grants))
			wclock_backlog(&h->wc, false);
		h->fc_held = false;
	}
	sent = hd_tx_credit(h, space);
	space -= sent;
	while (space && wclock_ready(&h->wc, h->now)) {
		struct flow *f;
		uint32_t id, len;
		int prio;

		/* Notifications first: a CNP late is a rate cut late. */
		if (h->notify.n && hd_tx_fifo(h, &h->notify, open, &blocked))
			goto sent;
		if (h->pass.n && hd_tx_fifo(h, &h->pass, open, &blocked)) {
			h->st.pass_frames++;
			goto sent;
		}
		f = h->parked_mask ? hd_unpark(h, open, &prio) : NULL;
		if (f) {
			hd_send_flow(h, f, prio);
			goto sent;
		}
		if (pacer_next(h->pacer, h->now, &id) != 1)
			break;
		f = flow_by_id(h->flows, (uint16_t)id);
		if (!f || !f->q.frames) {
			/* Cannot happen: removal takes a flow out of the pacer. */
			if (f)
				pacer_done(h->pacer, id, h->now, 0, 0);
			continue;
		}
		len = flow_frame_len(h->flows, flow_head(f));
		prio = hd_frame_prio(h, flow_head(f), len);
		if (hd_window_full(h, f)) {
			/* Keeps its turn in the pacer; an ACK moves it on. */
			h->hf[id].parked = HD_PARK_WINDOW;
			h->hf[id].last_limit = RP_LIMIT_WINDOW;
			h->hf[id].window_waited = true;
			h->st.window_blocked++;
			hd_window_timer(h, f);
			continue;
		}
		if (!hd_can_send(h, open, prio, len + (h->cfg->tag ? L2CC_TAG_LEN : 0))) {
			/* Paused or out of credits: the flow keeps its turn and
			 * waits on its priority, other priorities go on. */
			hd_park(h, f, prio);
			h->st.fc_blocked++;
			continue;
		}
		hd_send_flow(h, f, prio);
sent:
		space--;
		sent++;
	}
	more = (h->etx.credit_have && fc_rx_due(&h->frx)) || h->notify.n || h->pass.n ||
	       h->parked_mask || pacer_deadline(h->pacer) != PACER_NEVER;
	if (more) {
		if (!space) {
			h->next_tx_ns = h->now + 20000; /* the kernel drains the ring soon */
			backlog = hd_wire_backlogged(h, open);
		} else if (!wclock_ready(&h->wc, h->now)) {
			h->next_tx_ns = wclock_next(&h->wc);
			backlog = hd_wire_backlogged(h, open);
		} else {
			uint8_t held = (uint8_t)(h->parked_mask | blocked);
			uint64_t t = pacer_deadline(h->pacer);

			/* Parked and blocked frames wait for a pause to run
			 * out, or for a credit update (which wakes us). */
			h->next_tx_ns = t;
			t = fc_tx_pause_end(&h->etx, held);
			if (t < h->next_tx_ns)
				h->next_tx_ns = t;
			h->fc_held = held != 0;
			/* Flows not yet due leave the wire idle; a hold is a
			 * backlog when its end will be known: a pause runs
			 * out, a grant's arrival is timed (switchd's rule). */
			h->held_paused = held & (uint8_t)~open;
			h->held_refused = held & open;
			h->held_grants = h->etx.credit_grants;
			backlog = t != UINT64_MAX || h->held_refused;
		}
	}
	wclock_backlog(&h->wc, backlog);
	return sent > 0;
}

/* ---- control frames we originate ----------------------------------------- */

static void *hd_ctrl_begin(struct hd *h, struct hd_fring *r, int64_t *idx)
{
	if (r->n == r->cap || !h->link_up[HD_PORT_UP])
		return NULL;
	*idx = umem_alloc(h->umem);
	if (*idx < 0)
		return NULL;
	h->frames[*idx].addr = umem_addr(h->umem, (uint32_t)*idx);
	return umem_data(h->umem, h->frames[*idx].addr);
}

static bool hd_ctrl_commit(struct hd *h, struct hd_fring *r, int64_t idx, int len)
{
	if (len < 0) {
		umem_free(h->umem, (uint32_t)idx);
		return false;
	}
	fring_push(r, (uint32_t)idx, (uint32_t)len);
	return true;
}

const uint8_t *rp_host_mac(const struct hd *h)
{
	return h->host_mac_known ? h->host_mac : NULL;
}

int rp_emit(struct hd *h, const void *frame, uint32_t len)
{
	int64_t idx;
	void *buf;

	if (len > h->max_frame || len < L2CC_ETH_HLEN) {
		h->st.notify_drops++;
		return -EINVAL;
	}
	buf = hd_ctrl_begin(h, &h->notify, &idx);
	if (!buf) {
		h->st.notify_drops++;
		return -ENOBUFS;
	}
	memcpy(buf, frame, len);
	hd_ctrl_commit(h, &h->notify, idx, (int)len);
	return 0;
}

/* ---- what a notification point may ask of hostd (np.h) ---------------------- */

uint64_t np_now(const struct hd *h) { return h->now; }
const struct hd_cfg *np_cfg(const struct hd *h) { return h->cfg; }
uint64_t np_cnp_interval(const struct hd *h)
{
	if (h->cfg->cnp_interval || !h->rpo->cnp_interval)
		return h->cfg->cnp_interval;
	return h->rpo->cnp_interval(h->rp);
}
const struct flow_table *np_peers(const struct hd *h) { return h->peers; }
struct hd_peer *np_peer(struct hd *h, const struct flow *pf) { return &h->pr[pf->id]; }
uint32_t np_max_peers(const struct hd *h) { return flow_table_max_flows(h->peers); }

uint16_t np_host_backlog(const struct hd *h)
{
	uint64_t ring = dp_size(&h->sink, HD_PORT_HOST), used;

	if (!h->link_up[HD_PORT_HOST] || !ring)
		return 0;
	if (h->up_held)
		return 10000;
	/* What this pass put and has not flushed yet is on its way, not
	 * waiting: only what the kernel has been given and not taken counts. */
	used = ring - dp_space(&h->sink, HD_PORT_HOST);
	used = used > h->host_unflushed ? used - h->host_unflushed : 0;
	return (uint16_t)(used * 10000 / ring);
}

int np_send_to(struct hd *h, const uint8_t dst[6], const uint8_t src[6], int type,
	       const union ctrl_msg *m)
{
	const struct ctrl_type *t = ctrl_type_of(type);
	int64_t idx;
	void *buf = t ? hd_ctrl_begin(h, &h->notify, &idx) : NULL;
	int len;

	if (!buf) {
		h->st.notify_drops++;
		return t ? -ENOBUFS : -EINVAL;
	}
	len = t->encode(buf, h->umem->frame_size, dst, src, m);
	if (!hd_ctrl_commit(h, &h->notify, idx, len)) {
		h->st.notify_drops++;
		return len;
	}
	if (type == L2CC_CTRL_DISCOVER_ECHO)
		h->st.echo_tx++;
	else if (type == L2CC_CTRL_FEEDBACK)
		h->st.feedback_tx++;
	return 0;
}

int np_send(struct hd *h, struct hd_peer *p, int type, const union ctrl_msg *m)
{
	int err = np_send_to(h, p->src, p->dst, type, m);

	if (err)
		return err;
	if (type == L2CC_CTRL_CNP) {
		p->cnp_tx++;
		h->st.cnp_tx++;
	} else if (type == L2CC_CTRL_ACK) {
		p->ack_tx++;
		h->st.ack_tx++;
	}
	return 0;
}

/* ---- fabric -> host ------------------------------------------------------ */

/* A well-formed PAUSE or PFC from the switch: to our egress, if honoured. */
static void hd_rx_macctrl(struct hd *h, const struct wire_macctrl *mc)
{
	if (mc->opcode == L2CC_MACCTRL_PAUSE ? (h->st.pause_rx++, !hd_honour_pause(h))
					     : (h->st.pfc_rx++, !hd_honour_pfc(h))) {
		h->st.fc_ignored++;
		return;
	}
	fc_tx_macctrl(&h->etx, mc, h->cfg->link_rate, h->now);
}

static void hd_rx_credit(struct hd *h, const struct wire_credit *c, bool xdp_applied)
{
	/* Counted, and its limits applied, by the XDP program: what is left
	 * is ours as receiver, in order behind the frames it followed. */
	if (xdp_applied) {
		fc_rx_credit_in(&h->frx, c);
		return;
	}
	h->st.credit_rx++;
	if (h->cfg->fc != HD_FC_AUTO && h->cfg->fc != HD_FC_CREDIT) {
		h->st.fc_ignored++;
		return;
	}
	/* As receiver of the switch's frames: take its count as ours. */
	fc_rx_credit_in(&h->frx, c);
	/* The first grant needs our count back at once: the switch gives
	 * nothing more until it has reconciled to it. */
	if (fc_tx_credit(&h->etx, c, h->now))
		fc_rx_credit_now(&h->frx);
}

/* Feedback about one of our flows, to its law. */
static void hd_feedback(struct hd *h, struct flow *f, const struct rp_fb *fb)
{
	struct rp_out o = h->hf[f->id].out;

	if (!h->rpo->on_feedback)
		return;
	h->rpo->on_feedback(h->rp, f, fb, &o);
	hd_apply_out(h, f, &o);
}

/*
 * Whether a message of this type may come with these addresses, by the
 * message table's rule for its sender: link-local from the link partner;
 * a host's message to our host's MAC, and one about a flow of ours (f)
 * from that flow's peer, the address its data went to. A flow whose
 * frames went to several addresses (by priority) has no one peer: only
 * the destination is checked. A switch's message comes up our uplink
 * from the switch itself, which is all hostd can tell.
 */
static bool hd_ctrl_allowed(const struct hd *h, const struct eth_info *ei, int type,
			    const struct flow *f)
{
	const struct ctrl_type *t = ctrl_type_of(type);
	const struct hd_flow *x;

	if (t->link_local || t->sender == CTRL_BY_PARTNER)
		return t->link_local && wire_is_link_local(ei->dst);
	if (wire_is_link_local(ei->dst) ||
	    (h->host_mac_known && memcmp(ei->dst, h->host_mac, 6)))
		return false;
	if (t->sender != CTRL_BY_PEER)
		return true;
	if (!f)
		return false;
	if (f->key.type == FLOW_KEY_DST)
		return !memcmp(f->key.mac, ei->src, 6);
	x = &h->hf[f->id];
	return f->seq_next && (x->many_peers || !memcmp(x->peer, ei->src, 6));
}

/* A CNP or ACK for one of our flows, from its peer to our host. */
static void hd_rx_notify(struct hd *h, const struct eth_info *ei, int type,
			 const union ctrl_msg *m)
{
	struct rp_fb fb = { 0 };
	struct flow *f;

	if (type == L2CC_CTRL_CNP) {
		h->st.cnp_rx++;
		f = flow_by_id(h->flows, m->cnp.flow);
		if (!f) {
			h->st.cnp_unknown++;
			return;
		}
		if (!hd_ctrl_allowed(h, ei, type, f)) {
			h->st.notify_forged++;
			return;
		}
		f->cnt.cnp_in++;
		f->cnt.marks += m->cnp.marked;
		fb.kind = RP_FB_CNP;
		fb.seq = m->cnp.seq;
		fb.marked = m->cnp.marked;
		hd_feedback(h, f, &fb);
	} else if (type == L2CC_CTRL_ACK) {
		struct hd_flow *x;
		uint32_t in_flight;

		h->st.ack_rx++;
		f = flow_by_id(h->flows, m->ack.flow);
		if (!f) {
			h->st.ack_unknown++;
			return;
		}
		x = &h->hf[f->id];
		/* An ACK of a frame not yet sent is not from the receiver. */
		if (!hd_ctrl_allowed(h, ei, type, f) ||
		    (int32_t)(m->ack.cum_seq + 1 - f->seq_next) > 0) {
			h->st.notify_forged++;
			return;
		}
		fb.kind = RP_FB_ACK;
		fb.seq = m->ack.cum_seq;
		wire_ack_count(&m->ack, &fb.unmarked, &fb.marked);
		/* A law may step once per frame acknowledged: never for more
		 * frames than are out (one forged count of 2^32 would hold the
		 * datapath for seconds). */
		in_flight = f->seq_next - x->acked_next;
		if (m->ack.frames > in_flight) {
			h->st.ack_clamped++;
			fb.marked = fb.marked < in_flight ? fb.marked : in_flight;
			fb.unmarked = in_flight - fb.marked;
		}
		f->cnt.ack_in++;
		f->cnt.marks += fb.marked;
		if ((int32_t)(m->ack.cum_seq + 1 - x->acked_next) > 0)
			x->acked_next = m->ack.cum_seq + 1;
		hd_feedback(h, f, &fb);
		if (x->parked == HD_PARK_WINDOW && !hd_window_full(h, f))
			hd_window_release(h, f);
	}
}

/* An 802.1Qau CNM from a switch's congestion point (BCN or QCN) about a
 * frame we sent: the flow is named by the l2cc tag in its encapsulated
 * MSDU. Consumed here, never given to the host. Qoff and Qdelta reach the
 * law in bytes. */
static void hd_rx_cnm(struct hd *h, const struct eth_info *ei, const uint8_t *frame,
		      uint32_t len)
{
	struct rp_fb fb = { .kind = RP_FB_CNM };
	struct wire_cnm c;
	struct wire_tag t;
	struct flow *f;

	if (wire_parse_cnm(frame + ei->hlen, len - ei->hlen, &c)) {
		h->st.cnm_bad++;
		return;
	}
	/* About a frame our host sent (the CNM goes to its SA), to a
	 * destination our flow has: a flow id alone may have been reused. */
	if ((h->host_mac_known && memcmp(ei->dst, h->host_mac, 6)) ||
	    wire_cnm_tag(&c, &t) || !(f = flow_by_id(h->flows, t.flow)) ||
	    (f->key.type == FLOW_KEY_DST && memcmp(f->key.mac, c.encap_da, 6))) {
		h->st.cnm_unknown++;
		return;
	}
	h->st.cnm_rx++;
	f->cnt.cnm_in++;
	fb.seq = t.seq;
	fb.qntz_fb = c.qntz_fb;
	fb.qoff = c.qoffset * L2CC_CNM_QUNIT;
	fb.qdelta = c.qdelta * L2CC_CNM_QUNIT;
	memcpy(fb.cpid, c.cpid, sizeof(fb.cpid));
	hd_feedback(h, f, &fb);
}

/* Messages between a path's two hosts: a DISCOVER (we are its destination) goes to
 * the notification point, which echoes it; DISCOVER_ECHO and FEEDBACK
 * (we are its source) go to the law of the flow they name. Only with the
 * path's own addresses: to our host, from the flow's destination — a flow
 * id alone is 16 bits anyone on the fabric could guess. */
static void hd_rx_path(struct hd *h, const struct eth_info *ei, int type,
		       const union ctrl_msg *m)
{
	struct rp_fb fb = { 0 };
	struct flow *f;

	if (type == L2CC_CTRL_DISCOVER) {
		if (!hd_ctrl_allowed(h, ei, type, NULL)) {
			h->st.path_msg_unknown++;
			return;
		}
		h->st.discover_rx++;
		if (h->npo->on_ctrl)
			h->npo->on_ctrl(h->np, ei->src, ei->dst, type, m);
		return;
	}
	f = flow_by_id(h->flows, type == L2CC_CTRL_FEEDBACK ? m->fb.flow : m->disc.flow);
	if (!f || f->key.type != FLOW_KEY_DST || !hd_ctrl_allowed(h, ei, type, f)) {
		h->st.path_msg_unknown++;
		return;
	}
	if (type == L2CC_CTRL_FEEDBACK) {
		h->st.feedback_rx++;
		fb.kind = RP_FB_L2CI;
		fb.seq = m->fb.seq;
		fb.level = m->fb.level;
		fb.speed_bps = (uint64_t)m->fb.speed_mbps * 1000000;
		fb.hop = m->fb.hop;
		fb.max_hop = m->fb.max_hop;
	} else {
		h->st.echo_rx++;
		fb.kind = RP_FB_L2CI_ECHO;
		fb.seq = m->disc.seq;
		fb.hops = m->disc.hops;
		fb.path_bps = m->disc.path_bps;
		fb.rtt_ns = h->now > m->disc.t_tx ? h->now - m->disc.t_tx : 0;
	}
	hd_feedback(h, f, &fb);
}

/* An l2cc control message (0x88B6) to an address that is not link-local:
 * CNP or ACK from a receiving hostd, the L2CI messages (unicast to our
 * host). The CREDIT, link-local, is hd_rx_link_local's; one sent unicast
 * (or a CNP to the link-local address) is not one we take. */
static void hd_rx_ctrl(struct hd *h, const struct eth_info *ei, const uint8_t *frame,
		       uint32_t len)
{
	union ctrl_msg m;
	int type = ctrl_decode(frame + ei->hlen, len - ei->hlen, &m);

	if (type < 0) {
		h->ust.drop[type == -EINVAL ? HD_DROP_BAD_CTRL : HD_DROP_UNSUPPORTED]++;
		return;
	}
	/* Sent the wrong way (a CNP to the link-local address, a CREDIT
	 * unicast): not one we take, by the table's rule for its sender. */
	if (ctrl_type_of(type)->link_local != wire_is_link_local(ei->dst)) {
		h->ust.drop[HD_DROP_UNSUPPORTED]++;
		return;
	}
	if (type == L2CC_CTRL_DISCOVER || type == L2CC_CTRL_DISCOVER_ECHO ||
	    type == L2CC_CTRL_FEEDBACK)
		hd_rx_path(h, ei, type, &m);
	else
		hd_rx_notify(h, ei, type, &m);
}

/* A tagged frame from a remote sender: keep its flow as a peer and let
 * the notification point answer it. */
static void hd_rx_tagged(struct hd *h, const struct eth_info *ei, const struct wire_tag *t,
			 uint32_t len)
{
	bool marked = t->flags & L2CC_TAG_FECN;
	struct flow_key k = { .type = FLOW_KEY_PEER, .vid = ei->vid, .sport = t->flow };
	struct hd_peer *p;
	struct flow *pf;
	int r;

	if (h->host_mac_known && memcmp(ei->dst, h->host_mac, 6)) {
		h->st.not_ours++;
		return;
	}
	if (marked)
		h->st.fecn_rx++;
	if (!marked && !h->npo->every_frame)
		return;
	memcpy(k.mac, ei->src, 6);
	r = flow_lookup_or_create(h->peers, &k, h->now, &pf);
	if (r < 0) {
		h->st.notify_drops++;
		return;
	}
	p = &h->pr[pf->id];
	if (r == 1) {
		memset(p, 0, sizeof(*p));
		memcpy(p->src, ei->src, 6);
		p->flow = t->flow;
		p->vid = ei->vid;
	}
	/* Answer from the address the sender used for us (our host's MAC). */
	memcpy(p->dst, ei->dst, 6);
	if (p->have_seq && t->seq != p->next_seq)
		h->st.seq_gaps++;
	p->have_seq = true;
	p->next_seq = t->seq + 1;
	p->frames++;
	if (marked)
		p->marked++;
	h->npo->on_data(h->np, p, pf, t, len, marked);
}

/*
 * Link-local frames (01:80:C2:00:00:0x): consumed here. Flow control that
 * is well formed (PAUSE, PFC, CREDIT) is control received (ctrl_rx_frames)
 * whatever then becomes of it, applied, ignored, or void on an uplink
 * that is down: what the switch sent as control. Anything else is a drop
 * (on a down uplink: link_down), as the switch counts it (switch.c).
 */
static void hd_rx_link_local(struct hd *h, const struct eth_info *ei, const uint8_t *frame,
			     uint32_t len)
{
	const uint8_t *pl = frame + ei->hlen;
	size_t plen = len - ei->hlen;
	enum hd_drop why = HD_DROP_LINK_LOCAL;
	struct wire_macctrl mc;
	union ctrl_msg m;
	int r, kind = 0;    /* 1 PAUSE/PFC, 2 CREDIT */

	if (ei->ethertype == L2CC_ETH_P_MACCTRL) {
		r = wire_parse_macctrl(pl, plen, &mc);
		why = r == -EOPNOTSUPP ? HD_DROP_UNSUPPORTED : HD_DROP_BAD_CTRL;
		kind = r ? 0 : 1;
	} else if (ei->ethertype == L2CC_ETH_P_CTRL) {
		/* The only link-local type, by the message table, is CREDIT. */
		r = ctrl_decode(pl, plen, &m);
		why = r == -EINVAL ? HD_DROP_BAD_CTRL : HD_DROP_UNSUPPORTED;
		kind = r == L2CC_CTRL_CREDIT ? 2 : 0;
	}
	if (!kind) {
		h->ust.drop[h->link_up[HD_PORT_UP] ? why : HD_DROP_LINK_DOWN]++;
		return;
	}
	h->ust.ctrl_rx_frames++;
	if (!h->link_up[HD_PORT_UP])
		return;
	if (kind == 1)
		hd_rx_macctrl(h, &mc);
	else
		/* The mark is the XDP program's only where it runs: with
		 * xdp_control off, one that came from the wire is the
		 * sender's, and means nothing. */
		hd_rx_credit(h, &m.credit, h->cfg->xdp_control && wire_credit_xdp_applied(pl, plen));
}

bool hd_rx_up_frame(struct hd *h, uint64_t addr, uint32_t len)
{
	uint32_t idx = umem_idx(h->umem, addr);
	uint8_t *frame = umem_data(h->umem, addr);
	bool up = h->link_up[HD_PORT_UP], bad, deliver;
	struct eth_info ei;

	bad = wire_parse_eth(frame, len, &ei) != 0;
	deliver = !bad && !wire_is_link_local(ei.dst) && ei.ethertype != L2CC_ETH_P_CTRL &&
		  ei.ethertype != L2CC_ETH_P_CNM;
	if (up && deliver && h->link_up[HD_PORT_HOST] && !dp_space(&h->sink, HD_PORT_HOST))
		return false;
	h->ust.rx_frames++;
	h->ust.rx_bytes += len;
	if (bad) {
		h->ust.drop[up ? HD_DROP_MALFORMED : HD_DROP_LINK_DOWN]++;
		umem_free(h->umem, idx);
		return true;
	}
	if (wire_is_link_local(ei.dst)) {
		hd_rx_link_local(h, &ei, frame, len);
		umem_free(h->umem, idx);
		return true;
	}
	if (!up) {
		/* In the ring from before the link went down. */
		h->ust.drop[HD_DROP_LINK_DOWN]++;
		umem_free(h->umem, idx);
		return true;
	}
	/* What the switch sent us, for our CREDIT messages' counts. */
	fc_rx_count(&h->frx, ei.prio, len);
	if (!deliver) {
		if (ei.ethertype == L2CC_ETH_P_CNM)
			hd_rx_cnm(h, &ei, frame, len);
		else
			hd_rx_ctrl(h, &ei, frame, len);
		umem_free(h->umem, idx);
		return true;
	}
	if (!h->link_up[HD_PORT_HOST]) {
		/* No host to give it to (and no mark to answer for it). */
		h->ust.drop[HD_DROP_LINK_DOWN]++;
		umem_free(h->umem, idx);
		return true;
	}
	if (ei.ethertype == L2CC_ETH_P_DATA_TAG) {
		struct wire_tag t;
		uint8_t *f2 = frame;
		int err = wire_tag_strip(&f2, &len, &t);

		if (err) {
			h->ust.drop[err == -EPROTO ? HD_DROP_UNSUPPORTED : HD_DROP_BAD_TAG]++;
			umem_free(h->umem, idx);
			return true;
		}
		addr += (uint64_t)(f2 - frame);
		h->st.stripped++;
		hd_rx_tagged(h, &ei, &t, len);
	}
	dp_put(&h->sink, HD_PORT_HOST, addr, len);
	h->host_unflushed++;
	h->hst.tx_frames++;
	h->hst.tx_bytes += len;
	return true;
}

/* ---- host -> fabric ------------------------------------------------------ */

/*
 * pcp_from_dscp: the DSCP class (its top three bits, the class selector)
 * of an untagged IPv4/IPv6 frame becomes an 802.1Q priority tag (VID 0,
 * PCP = the class) in front of its ethertype, written into the UMEM
 * headroom as the l2cc tag is: the MACs move 4 bytes back. Frames of
 * class 0, tagged ones and others are left alone. A frame whose headroom
 * cannot take this tag and the l2cc tag is left alone too (its priority
 * is then 0, as without the key). The new address and length on a tag.
 */
static bool hd_pcp_from_dscp(struct hd *h, uint32_t idx, const struct eth_info *ei,
			     uint64_t *addr, uint32_t *len)
{
	uint8_t *p = umem_data(h->umem, *addr), cls;
	uint32_t headroom = (uint32_t)(*addr - umem_addr(h->umem, idx));

	if (ei->ntags || *len < ei->hlen + 2u)
		return false;
	if (ei->ethertype == 0x0800 && (p[ei->hlen] >> 4) == 4)
		cls = p[ei->hlen + 1] >> 5;
	else if (ei->ethertype == 0x86DD && (p[ei->hlen] >> 4) == 6)
		cls = (p[ei->hlen] & 0x0f) >> 1;
	else
		return false;
	if (!cls || headroom < L2CC_VLAN_HLEN + (h->cfg->tag ? L2CC_TAG_LEN : 0))
		return false;
	memmove(p - L2CC_VLAN_HLEN, p, 2 * L2CC_ETH_ALEN);
	p -= L2CC_VLAN_HLEN;
	p[12] = 0x81;
	p[13] = 0x00;
	p[14] = (uint8_t)(cls << 5);	/* PCP, DEI 0, VID 0 */
	p[15] = 0;
	*addr -= L2CC_VLAN_HLEN;
	*len += L2CC_VLAN_HLEN;
	return true;
}

/* The frame's connection for flow_enqueue_sub: 0 (no sharing) unless
 * subflow_share is on and a flow can hold several connections. */
static uint32_t hd_subflow(const struct hd *h, const uint8_t *frame, uint32_t len)
{
	struct flow_key k;

	if (!h->cfg->subflow_share || h->cfg->granularity == FLOW_BY_5TUPLE ||
	    flow_key_from_frame(FLOW_BY_5TUPLE, frame, len, &k))
		return 0;
	return flow_key_hash(&k);
}

/* ARP, IPv6 neighbour discovery, broadcast and multicast bypass the flows. */
static bool hd_is_pass(const struct eth_info *ei, const uint8_t *frame, uint32_t len)
{
	if (wire_is_multicast(ei->dst) || ei->ethertype == 0x0806)
		return true;
	if (ei->ethertype == 0x86DD && len >= ei->hlen + 41u) {
		uint8_t nh = frame[ei->hlen + 6], type = frame[ei->hlen + 40];

		return nh == 58 && type >= 133 && type <= 137;
	}
	return false;
}

void hd_rx_host_frame(struct hd *h, uint64_t addr, uint32_t len)
{
	uint32_t idx = umem_idx(h->umem, addr);
	const uint8_t *frame = umem_data(h->umem, addr);
	uint32_t tag = h->cfg->tag ? L2CC_TAG_LEN : 0, avail;
	enum hd_drop why;
	struct flow_key k;
	struct eth_info ei;
	struct flow *f = NULL;
	bool was_idle;
	int r;

	h->frames[idx].addr = addr;
	h->hst.rx_frames++;
	h->hst.rx_bytes += len;
	/* A host port that is down gives only what its ring held from
	 * before; toward an uplink that is down nothing can go. */
	if (!h->link_up[HD_PORT_HOST] || !h->link_up[HD_PORT_UP]) {
		why = HD_DROP_LINK_DOWN;
		goto drop;
	}
	if (wire_parse_eth(frame, len, &ei) || wire_is_multicast(ei.src)) {
		why = HD_DROP_MALFORMED;
		goto drop;
	}
	if (wire_is_link_local(ei.dst)) {
		why = HD_DROP_LINK_LOCAL;
		goto drop;
	}
	if (!h->host_mac_known || memcmp(ei.src, h->host_mac, 6)) {
		memcpy(h->host_mac, ei.src, 6);
		h->host_mac_known = true;
	}
	/* Only hostd writes tags and notifications, and only switches send
	 * CNMs: the host cannot forge them. */
	if (ei.ethertype == L2CC_ETH_P_DATA_TAG || ei.ethertype == L2CC_ETH_P_CTRL ||
	    ei.ethertype == L2CC_ETH_P_CNM) {
		why = HD_DROP_FORGED;
		goto drop;
	}
	if (hd_is_pass(&ei, frame, len)) {
		why = len > h->max_frame ? HD_DROP_OVERSIZE : HD_DROP_PASS_FULL;
		if (len > h->max_frame || !fring_push(&h->pass, idx, len))
			goto drop;
		return;
	}
	if (h->cfg->pcp_from_dscp && hd_pcp_from_dscp(h, idx, &ei, &addr, &len)) {
		h->frames[idx].addr = addr;
		frame = umem_data(h->umem, addr);
		h->st.pcp_tagged++;
		/* its priority is the new tag's: the flow queues it there */
		ei.prio = frame[14] >> 5;
	}
	if (len + tag > h->max_frame) {
		why = HD_DROP_OVERSIZE;
		goto drop;
	}
	r = flow_key_from_frame(h->cfg->granularity, frame, len, &k);
	if (!r)
		r = flow_lookup_or_create(h->flows, &k, h->now, &f);
	if (r < 0) {
		f = flow_default(h->flows);
		flow_touch(f, h->now);
		h->st.unclassified++;
	} else if (r == 1) {
		hd_law_restore(h, f);
		hd_flow_init(h, f);
	}
	/* The shared pool keeps one ring's worth of frames to refill the RX
	 * rings (a host that outruns its flows' rates must not starve the
	 * fabric side), and above that a dynamic threshold (Choudhury-Hahne):
	 * a flow may hold at most as many frames as are still free, so n
	 * backlogged flows share the pool about equally instead of first
	 * come, first served. */
	avail = h->umem->nfree > h->reserve ? h->umem->nfree - h->reserve : 0;
	if (f->q.frames >= avail) {
		why = HD_DROP_NO_FRAME;
		goto drop;
	}
	was_idle = !f->q.frames;
	r = flow_enqueue_sub(h->flows, f, idx, len,
			     2 * ei.prio + (h->cfg->ack_first && wire_tcp_pure_ack(frame, len)),
			     hd_subflow(h, frame, len));
	if (r) {
		why = r == -EDQUOT ? HD_DROP_SUBFLOW_SHARE : HD_DROP_QUEUE_FULL;
		goto drop;
	}
	if (was_idle)
		pacer_wake(h->pacer, f->id, h->now, len);
	else if (h->rpo->pace_own_gap)
		/* A higher priority may have overtaken the head: in own-gap
		 * mode it waits for its own gap, not the old head's. */
		pacer_head(h->pacer, f->id, h->now, flow_frame_len(h->flows, flow_head(f)));
	return;
drop:
	h->hst.drop[why]++;
	umem_free(h->umem, idx);
}

/* ---- link events --------------------------------------------------------- */

/* Every frame of a FIFO goes back to the pool; how many. */
static uint32_t hd_fring_drop(struct hd *h, struct hd_fring *r)
{
	uint32_t n = r->n;

	while (r->n) {
		umem_free(h->umem, r->idx[r->head]);
		fring_pop(r);
	}
	return n;
}

/* The uplink went down: nothing queued for it can go. */
static void hd_uplink_down(struct hd *h)
{
	for (uint32_t id = 0; id < flow_table_id_end(h->flows); id++) {
		struct flow *f = flow_by_id(h->flows, (uint16_t)id);
		struct hd_flow *x;
		struct rp_out o;
		uint32_t idx, len;

		if (!f)
			continue;
		x = &h->hf[id];
		while ((idx = flow_dequeue(h->flows, f, h->now, &len)) != FLOW_FRAME_NONE) {
			/* Dropped, not sent. */
			f->cnt.frames_out--;
			f->cnt.bytes_out -= len;
			f->cnt.drops++;
			f->cnt.drop_bytes += len;
			h->hst.drop[HD_DROP_LINK_DOWN]++;
			umem_free(h->umem, idx);
		}
		/* The pacer forgets its backlog (and its slot's rate: applied
		 * again as the law has it); what was in flight is lost with
		 * the link, so the window opens. The pacing time it lost is
		 * the flow's, and stays (hd_pace_lost_ns). */
		x->pace_lost_ns += pacer_lost_ns(h->pacer, id);
		pacer_remove(h->pacer, id);
		o = x->out;
		x->out.rate_bps = o.rate_bps + 1;
		hd_apply_out(h, f, &o);
		x->parked = 0;
		x->window_waited = false;
		x->acked_next = f->seq_next;
	}
	h->parked_mask = 0;
	h->hst.drop[HD_DROP_LINK_DOWN] += hd_fring_drop(h, &h->pass);
	h->st.notify_drops += hd_fring_drop(h, &h->notify);
	fc_tx_link_down(&h->etx, h->now);
	fc_rx_link_down(&h->frx);
	h->fc_held = false;
	wclock_backlog(&h->wc, false);  /* down is not late: nothing waits for it */
	h->up_held = false;
	h->next_tx_ns = UINT64_MAX;
}

void hd_port_link(struct hd *h, int port, bool up)
{
	struct hd_port_stats *ps = port == HD_PORT_UP ? &h->ust : &h->hst;

	if (up == h->link_up[port])
		return;
	h->link_up[port] = up;
	if (port == HD_PORT_UP)
		hd_xdp_ctl_config(h);
	if (!up) {
		ps->link_down_events++;
		if (port == HD_PORT_UP)
			hd_uplink_down(h);
		return;
	}
	ps->link_up_events++;
	if (port == HD_PORT_UP) {
		fc_rx_link_up(&h->frx, h->now);
		wclock_resume(&h->wc, h->now);
		h->next_tx_ns = h->now;
	}
}

/* ---- timers ------------------------------------------------------------- */

static void hd_timers(struct hd *h)
{
	struct flow *f;

	if (h->npo->next_timer(h->np) <= h->now)
		h->npo->on_timer(h->np, h->now);
	while ((f = tfifo_pop_due(&h->win_fifo, h->flows, h->now))) {
		struct hd_flow *x = &h->hf[f->id];

		x->win_timer = false;
		if (x->parked != HD_PARK_WINDOW)
			continue;
		if (x->acked_next != x->win_acked) {
			/* ACKs came, and the window filled again: wait afresh. */
			hd_window_timer(h, f);
			continue;
		}
		/* Nothing acknowledged for ack_timeout: those frames are gone. */
		h->st.ack_timeouts++;
		x->acked_next = f->seq_next;
		hd_window_release(h, f);
	}
	while (h->ntimers && h->tat[h->theap[0]] <= h->now) {
		uint32_t slot = h->theap[0], id = slot / RP_TIMERS;
		struct rp_out o;

		f = flow_by_id(h->flows, (uint16_t)id);
		timer_cancel(h, slot);
		if (!f || !h->rpo->on_timer)
			continue;
		o = h->hf[id].out;
		h->rpo->on_timer(h->rp, f, slot % RP_TIMERS, &o);
		hd_apply_out(h, f, &o);
	}
	for (unsigned k = 0; k < RP_TICKS; k++) {
		if (!h->tick_at[k] || h->tick_at[k] > h->now)
			continue;
		h->tick_at[k] = 0;
		if (h->rpo->on_tick)
			h->rpo->on_tick(h->rp, k, h->now);
	}
	/* Our CREDIT: keepalive, and our sent count when it moved. */
	if (hd_credits_apply(h) && h->etx.credit_have && h->now >= fc_rx_next(&h->frx))
		fc_rx_timers(&h->frx, NULL, h->now);
	if (h->now >= h->next_expire_ns) {
		flow_expire(h->flows, h->now, h->expire_budget);
		flow_expire(h->peers, h->now, h->expire_budget);
		if (h->saved)
			flow_expire(h->saved, h->now, h->expire_budget);
		h->next_expire_ns = h->now + h->expire_interval;
	}
}

bool hd_pass(struct hd *h)
{
	bool work;

	hd_timers(h);
	hd_xdp_ctl(h);
	work = h->link_up[HD_PORT_UP] && hd_tx_up(h);
	dp_flush(&h->sink, HD_PORT_UP);
	dp_flush(&h->sink, HD_PORT_HOST);
	h->host_unflushed = 0;
	return work;
}

static inline void hd_min(uint64_t *d, uint64_t t)
{
	if (t < *d)
		*d = t;
}

/* Anything for flow_expire() to look at: a flow or peer besides the
 * default ones, or a saved law state. */
static bool hd_may_expire(const struct hd *h)
{
	struct flow_table_stats st;

	flow_table_get_stats(h->flows, &st);
	if (st.flows > 1)
		return true;
	flow_table_get_stats(h->peers, &st);
	if (st.flows > 1)
		return true;
	if (h->saved) {
		flow_table_get_stats(h->saved, &st);
		if (st.flows > 1)
			return true;
	}
	return false;
}

uint64_t hd_core_deadline(const struct hd *h)
{
	/* An idle hostd with nothing to forget sleeps through the expiry
	 * interval (a short flow_idle would otherwise wake it every
	 * flow_idle/4); the next frame makes a flow and re-arms it. */
	uint64_t d = hd_may_expire(h) ? h->next_expire_ns : UINT64_MAX;

	hd_min(&d, h->next_tx_ns);
	hd_min(&d, h->npo->next_timer(h->np));
	hd_min(&d, tfifo_next(&h->win_fifo));
	if (h->ntimers)
		hd_min(&d, h->tat[h->theap[0]]);
	for (unsigned k = 0; k < RP_TICKS; k++)
		if (h->tick_at[k])
			hd_min(&d, h->tick_at[k]);
	if (h->etx.credit_have && hd_credits_apply(h))
		hd_min(&d, fc_rx_next(&h->frx));
	return d;
}

/* ---- lifecycle of the core ------------------------------------------------ */

void hd_core_destroy(struct hd *h)
{
	struct hd_fring *rings[] = { &h->notify, &h->pass };

	if (!h)
		return;
	/* Frames queued in flows and FIFOs go back to the pool. */
	if (h->flows) {
		for (uint32_t id = 0; id < flow_table_id_end(h->flows); id++) {
			struct flow *f = flow_by_id(h->flows, (uint16_t)id);
			uint32_t idx;

			while (f && (idx = flow_dequeue(h->flows, f, h->now, NULL)) != FLOW_FRAME_NONE)
				umem_free(h->umem, idx);
		}
	}
	for (size_t i = 0; i < sizeof(rings) / sizeof(rings[0]); i++) {
		while (rings[i]->n && h->umem) {
			umem_free(h->umem, rings[i]->idx[rings[i]->head]);
			fring_pop(rings[i]);
		}
		fring_fini(rings[i]);
	}
	flow_table_destroy(h->flows);
	flow_table_destroy(h->peers);
	flow_table_destroy(h->saved);
	pacer_destroy(h->pacer);
	if (h->np)
		h->npo->destroy(h->np);
	tfifo_fini(&h->win_fifo);
	if (h->rp)
		h->rpo->destroy(h->rp);
	free(h->theap);
	free(h->tpos);
	free(h->tat);
	free(h->hf);
	free(h->pr);
	free(h->frames);
	free(h);
}

int hd_core_create(struct hd **out, struct hd_cfg *cfg, struct umem *umem,
		   const struct dp_sink *sink, const struct hd_ports_info *pi, uint64_t now)
{
	uint32_t max_flows = (uint32_t)cfg->max_flows, nframes = umem->nframes;
	struct flow_table_config ft = { 0 };
	struct hd *h;
	int err;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->cfg = cfg;
	h->umem = umem;
	h->sink = *sink;
	h->ipv6_host = h->ipv6_up = -1;
	h->now = h->start_ns = now;
	h->max_frame = pi->max_frame;
	h->host_mtu = pi->host_mtu;
	h->link_up[HD_PORT_HOST] = h->link_seen[HD_PORT_HOST] = true;
	h->link_up[HD_PORT_UP] = h->link_seen[HD_PORT_UP] = true;
	h->operstate[HD_PORT_HOST] = h->operstate[HD_PORT_UP] = 6;  /* IF_OPER_UP */
	h->host_mac_known = pi->host_mac_known;
	memcpy(h->host_mac, pi->host_mac, 6);
	memcpy(h->mac_up, pi->up_mac, 6);
	h->reserve = (uint32_t)cfg->ring_size;
	h->frames = calloc(nframes, sizeof(*h->frames));
	h->hf = calloc(max_flows, sizeof(*h->hf));
	h->pr = calloc(max_flows, sizeof(*h->pr));
	h->theap = calloc((size_t)max_flows * RP_TIMERS, sizeof(*h->theap));
	h->tpos = calloc((size_t)max_flows * RP_TIMERS, sizeof(*h->tpos));
	h->tat = calloc((size_t)max_flows * RP_TIMERS, sizeof(*h->tat));
	if (!h->frames || !h->hf || !h->pr || !h->theap || !h->tpos || !h->tat) {
		err = -ENOMEM;
		goto err;
	}
	err = fring_init(&h->notify, HD_NOTIFY_CAP) ?:
	      fring_init(&h->pass, (uint32_t)cfg->pass_queue) ?:
	      tfifo_init(&h->win_fifo, 2 * max_flows);
	if (err)
		goto err;
	ft.max_flows = max_flows;
	ft.idle_ns = cfg->flow_idle;
	ft.queue_limit = cfg->queue;
	ft.nframes = nframes;
	ft.frames = h->frames;
	ft.on_remove = hd_flow_removed;
	ft.ctx = h;
	err = flow_table_create(&h->flows, &ft);
	if (err)
		goto err;
	/* Peers and saved law states have no queues. */
	ft.frames = NULL;
	ft.on_remove = NULL;
	err = flow_table_create(&h->peers, &ft);
	if (err)
		goto err;
	h->npo = np_for(cfg);
	err = h->npo->create(&h->np, h);
	if (err)
		goto err;

	/* A flow ends flow_idle after its last frame: check often enough
	 * that short idle times (ON/OFF sources, where each ON period is a
	 * flow) end flows within a quarter of it, sweeping every id then. */
	h->expire_interval = HD_EXPIRE_INTERVAL_NS;
	h->expire_budget = HD_EXPIRE_BUDGET;
	if (cfg->flow_idle && cfg->flow_idle / 4 < h->expire_interval) {
		h->expire_interval = cfg->flow_idle / 4 > 100000 ? cfg->flow_idle / 4 : 100000;
		h->expire_budget = 0;
	}
	h->pacer = pacer_create(max_flows, cfg->slot, (uint32_t)cfg->wire_overhead);
	if (!h->pacer) {
		err = -errno;
		goto err;
	}
	/* The law (hd_apply_cfg makes it), then the store persistence needs. */
	hd_apply_cfg(h);
	if (!h->rp) {
		err = -EINVAL;
		goto err;
	}
	if (cfg->persistent && h->rpo->state_size) {
		ft.idle_ns = HD_SAVED_IDLE_NS;
		err = flow_table_create(&h->saved, &ft);
		if (err)
			goto err;
	}
	hd_flow_init(h, flow_default(h->flows));
	h->next_expire_ns = h->now + h->expire_interval;
	h->next_tx_ns = UINT64_MAX;
	*out = h;
	return 0;
err:
	hd_core_destroy(h);
	return err;
}
