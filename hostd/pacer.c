// SPDX-License-Identifier: BSD-2-Clause
/*
 * Per-flow pacer: exact per-flow virtual clocks and a hierarchical timing
 * wheel of backlogged flows. See pacer.h for the contract.
 *
 * Wheel: time is counted in ticks of slot_ns; `cur` is the tick up to which
 * every slot has been drained. A flow eligible at tick e > cur goes to level
 * l = (highest bit of e ^ cur) / 8, slot (e >> 8l) & 255: it shares every
 * digit above level l with cur, so every flow at level l is earlier than
 * every flow at level l+1, and within a level no slot wraps around. The
 * earliest slot is therefore the lowest set bit of the lowest non-empty
 * level: three ctz (levels, words of a level, bits of a word). When cur reaches a level-0 slot its flows join the ready
 * FIFO; when it reaches a higher slot its flows are filed again relative to
 * the new cur (a cascade), at most once per level per frame.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pacer.h"

#define WHEEL_BITS   8
#define WHEEL_SLOTS  (1u << WHEEL_BITS)
#define WHEEL_WORDS  (WHEEL_SLOTS / 64)
#define WHEEL_LEVELS 8                  /* 8 * 8 = 64 bits of ticks */
#define LIST_READY   (WHEEL_LEVELS * WHEEL_SLOTS)
#define LIST_NONE    0xffffu
#define NIL          UINT32_MAX

enum { F_IDLE, F_QUEUED, F_SERVING };

struct pflow {
	uint64_t t_next;        /* next frame may start at t_next + rem/den */
	uint64_t rem;
	uint64_t den;           /* rate (bit/s), or link rate in IPD mode; 0 = unpaced */
	uint64_t mult;          /* 1, or 1 + ipd */
	uint64_t burst_ns;
	uint64_t lost_ns;       /* pacing time lost to late noticing (pacer_lost_ns) */
	uint32_t burst_bytes;
	uint32_t head_len;      /* own-gap mode: the next frame's bytes */
	uint32_t next, prev;    /* list links */
	uint16_t list;          /* wheel slot index, LIST_READY or LIST_NONE */
	uint8_t state;
	bool own_gap;           /* a frame waits for its own gap (pacer_set_own_gap) */
};

struct plist {
	uint32_t head, tail;
};

struct pacer {
	uint32_t max_flows;
	uint32_t overhead;
	uint64_t slot_ns;
	uint64_t cur;                   /* ticks */
	uint16_t lmask;                 /* levels with a non-empty slot */
	uint8_t wmask[WHEEL_LEVELS];    /* words of bm with a non-empty slot */
	uint64_t bm[WHEEL_LEVELS][WHEEL_WORDS];         /* non-empty slots */
	uint64_t slot_min[LIST_READY];  /* lower bound on a slot's eligible ticks */
	struct plist lists[LIST_READY + 1];
	struct pacer_stats st;
	struct pflow *f;
};

static void flow_reset(struct pflow *f)
{
	f->t_next = 0;
	f->rem = 0;
	f->den = 0;
	f->mult = 1;
	f->burst_ns = 0;
	f->lost_ns = 0;
	f->burst_bytes = 0;
	f->head_len = 0;
	f->own_gap = false;
	f->next = f->prev = NIL;
	f->list = LIST_NONE;
	f->state = F_IDLE;
}

struct pacer *pacer_create(uint32_t max_flows, uint64_t slot_ns, uint32_t overhead)
{
	struct pacer *p;

	if (!max_flows || !slot_ns || max_flows >= NIL) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->f = calloc(max_flows, sizeof(*p->f));
	if (!p->f) {
		free(p);
		return NULL;
	}
	p->max_flows = max_flows;
	p->slot_ns = slot_ns;
	p->overhead = overhead;
	for (uint32_t i = 0; i <= LIST_READY; i++)
		p->lists[i].head = p->lists[i].tail = NIL;
	for (uint32_t i = 0; i < max_flows; i++)
		flow_reset(&p->f[i]);
	return p;
}

void pacer_destroy(struct pacer *p)
{
	if (!p)
		return;
	free(p->f);
	free(p);
}

/* ---- lists and wheel ----------------------------------------------------- */

static void bm_set(struct pacer *p, unsigned li)
{
	unsigned lv = li / WHEEL_SLOTS, s = li % WHEEL_SLOTS;

	p->bm[lv][s / 64] |= 1ull << (s % 64);
	p->wmask[lv] |= 1u << (s / 64);
	p->lmask |= 1u << lv;
}

static void bm_clear(struct pacer *p, unsigned li)
{
	unsigned lv = li / WHEEL_SLOTS, s = li % WHEEL_SLOTS;

	p->bm[lv][s / 64] &= ~(1ull << (s % 64));
	if (!p->bm[lv][s / 64]) {
		p->wmask[lv] &= ~(1u << (s / 64));
		if (!p->wmask[lv])
			p->lmask &= ~(1u << lv);
	}
}

static void list_append(struct pacer *p, uint16_t li, uint32_t id)
{
	struct plist *l = &p->lists[li];
	struct pflow *f = &p->f[id];

	f->list = li;
	f->next = NIL;
	f->prev = l->tail;
	if (l->tail != NIL)
		p->f[l->tail].next = id;
	else
		l->head = id;
	l->tail = id;
}

static void list_unlink(struct pacer *p, uint32_t id)
{
	struct pflow *f = &p->f[id];
	struct plist *l = &p->lists[f->list];

	if (f->prev != NIL)
		p->f[f->prev].next = f->next;
	else
		l->head = f->next;
	if (f->next != NIL)
		p->f[f->next].prev = f->prev;
	else
		l->tail = f->prev;
	if (f->list < LIST_READY && l->head == NIL)
		bm_clear(p, f->list);
	f->list = LIST_NONE;
	f->next = f->prev = NIL;
}

/* bytes at the flow's pace, in ns times den (divide by den for ns). */
static unsigned __int128 flow_ns_num(const struct pflow *f, uint64_t bytes)
{
	return (unsigned __int128)f->mult * bytes * 8 * 1000000000ull;
}

/* In own-gap mode, the gap a frame of len bytes waits for itself, rounded
 * up (an eligible time, not a charge); else 0. */
static uint64_t flow_own_gap_ns(const struct pacer *p, const struct pflow *f, uint32_t len)
{
	if (!f->own_gap || !f->den)
		return 0;
	return (uint64_t)((flow_ns_num(f, (uint64_t)len + p->overhead) + f->den - 1) / f->den);
}

/*
 * When the flow's next frame may start. The clock t_next has been charged
 * with every frame sent; in own-gap mode the next frame also waits for its
 * own gap, as in a token bucket (a frame goes when the credit for it is
 * there), so over a backlog frame k starts at t0 + the gaps of frames
 * 0..k, the same long-run rate as charging after.
 */
static uint64_t flow_elig(const struct pacer *p, const struct pflow *f)
{
	return f->t_next + (f->rem != 0) + flow_own_gap_ns(p, f, f->head_len);
}

/* File a flow by its eligible time: the ready FIFO if due (true), else the wheel. */
static bool wheel_file(struct pacer *p, uint32_t id)
{
	struct pflow *f = &p->f[id];
	uint64_t e = 0, ns;
	unsigned lv, li;

	if (f->den) {
		/* Round up: the slot must not start before the eligible time. */
		ns = flow_elig(p, f);
		e = ns / p->slot_ns + (ns % p->slot_ns != 0);
	}
	if (e <= p->cur) {
		list_append(p, LIST_READY, id);
		return true;
	}
	lv = (63 - __builtin_clzll(e ^ p->cur)) / WHEEL_BITS;
	li = lv * WHEEL_SLOTS + ((e >> (lv * WHEEL_BITS)) & (WHEEL_SLOTS - 1));
	/* Kept as a lower bound (not raised on removal) so the deadline is exact
	 * for a coarse slot instead of its start, and never late. */
	if (p->lists[li].head == NIL || e < p->slot_min[li])
		p->slot_min[li] = e;
	if (p->lists[li].head == NIL)
		bm_set(p, li);
	list_append(p, li, id);
	return false;
}

static bool wheel_insert(struct pacer *p, uint32_t id)
{
	p->st.inserts++;
	return wheel_file(p, id);
}

/*
 * A flow that waited in the wheel for its own deadline reaches the ready
 * FIFO at now. pacer_done() forgives it burst + one slot of lateness (its
 * clock runs on from its deadline); beyond that its clock is pulled up, and
 * that time is rate it never gets back because we were called late.
 */
static void flow_noticed(struct pacer *p, struct pflow *f, uint64_t now)
{
	/* In own-gap mode due includes the head's gap, and pacer_done()
	 * forgives it with the burst: the same allowance from the clock. */
	uint64_t lag = f->burst_ns + p->slot_ns, due = flow_elig(p, f);

	if (f->den && due + lag < now) {
		f->lost_ns += now - lag - due;
		p->st.lost_ns += now - lag - due;
	}
}

/* Start tick of the earliest non-empty slot; call only when lmask != 0. */
static uint64_t wheel_first(const struct pacer *p, unsigned *lv, unsigned *s)
{
	unsigned l = __builtin_ctz(p->lmask);
	unsigned shift = (l + 1) * WHEEL_BITS;
	uint64_t hi = shift >= 64 ? 0 : p->cur & ~((1ull << shift) - 1);
	unsigned w = __builtin_ctz(p->wmask[l]);

	*lv = l;
	*s = w * 64 + __builtin_ctzll(p->bm[l][w]);
	return hi | ((uint64_t)*s << (l * WHEEL_BITS));
}

/* Drain every slot that starts at or before now's tick, in time order. */
static void wheel_advance(struct pacer *p, uint64_t now)
{
	uint64_t now_tick = now / p->slot_ns;

	while (p->lmask) {
		unsigned lv, s;
		uint64_t start = wheel_first(p, &lv, &s);
		struct plist *l = &p->lists[lv * WHEEL_SLOTS + s];
		uint32_t id;

		if (start > now_tick)
			break;
		p->cur = start;
		p->st.slots_visited++;
		id = l->head;
		l->head = l->tail = NIL;
		bm_clear(p, lv * WHEEL_SLOTS + s);
		while (id != NIL) {
			uint32_t nx = p->f[id].next;
			bool ready = true;

			if (lv) {
				p->st.cascades++;
				ready = wheel_file(p, id);
			} else {
				list_append(p, LIST_READY, id);
			}
			if (ready)
				flow_noticed(p, &p->f[id], now);
			id = nx;
		}
	}
	if (now_tick > p->cur)
		p->cur = now_tick;
}

/* ---- clocks -------------------------------------------------------------- */

/* Advance the clock by one frame's gap, exactly: (mult * bits * 1e9 + rem) / den. */
static void flow_charge(struct pacer *p, struct pflow *f, uint32_t len)
{
	unsigned __int128 num;

	if (!f->den)
		return;
	num = flow_ns_num(f, (uint64_t)len + p->overhead) + f->rem;
	f->t_next += (uint64_t)(num / f->den);
	f->rem = (uint64_t)(num % f->den);
}

/* Credit older than now - lag is forfeit, as in wclock_ready(). */
static void flow_pull_up(struct pflow *f, uint64_t now, uint64_t lag)
{
	if (f->den && f->t_next + lag < now) {
		f->t_next = now - lag;
		f->rem = 0;
	}
}

static void flow_set_burst_ns(struct pflow *f)
{
	f->burst_ns = f->den ? (uint64_t)(flow_ns_num(f, f->burst_bytes) / f->den) : 0;
}

/* A flow waiting in the wheel whose eligible time changed: file it again.
 * One already in the ready FIFO stays (it is due; the clock keeps its rate). */
static void flow_refile(struct pacer *p, uint32_t id, uint64_t now)
{
	struct pflow *f = &p->f[id];

	if (f->state == F_QUEUED && f->list != LIST_READY) {
		/* It was waiting for its deadline: due already, it is noticed now. */
		list_unlink(p, id);
		wheel_advance(p, now);
		if (wheel_insert(p, id))
			flow_noticed(p, f, now);
	}
}

static int flow_set_pace(struct pacer *p, uint32_t id, uint64_t den, uint64_t mult, uint64_t now)
{
	struct pflow *f = &p->f[id];

	if (f->den && den && f->t_next > now) {
		/* Rescale the wait still ahead: ns per bit is mult/den. */
		unsigned __int128 w = (unsigned __int128)(f->t_next - now) * mult * f->den;

		f->t_next = now + (uint64_t)(w / ((unsigned __int128)den * f->mult));
	} else if (!f->den && den && f->t_next < now) {
		f->t_next = now;       /* no schedule was kept while unpaced */
	}
	f->rem = 0;                     /* it was a fraction of the old denominator */
	f->den = den;
	f->mult = mult;
	flow_set_burst_ns(f);
	flow_refile(p, id, now);
	return 0;
}

int pacer_set_rate(struct pacer *p, uint32_t flow, uint64_t rate_bps, uint64_t now)
{
	if (flow >= p->max_flows)
		return -EINVAL;
	return flow_set_pace(p, flow, rate_bps, 1, now);
}

int pacer_set_ipd(struct pacer *p, uint32_t flow, uint32_t ipd, uint64_t link_bps,
		  uint64_t now)
{
	if (flow >= p->max_flows || !link_bps)
		return -EINVAL;
	return flow_set_pace(p, flow, link_bps, (uint64_t)ipd + 1, now);
}

int pacer_set_burst(struct pacer *p, uint32_t flow, uint32_t burst_bytes)
{
	if (flow >= p->max_flows)
		return -EINVAL;
	p->f[flow].burst_bytes = burst_bytes;
	flow_set_burst_ns(&p->f[flow]);
	return 0;
}

int pacer_set_own_gap(struct pacer *p, uint32_t flow, bool on, uint64_t now)
{
	if (flow >= p->max_flows)
		return -EINVAL;
	if (p->f[flow].own_gap != on) {
		p->f[flow].own_gap = on;
		flow_refile(p, flow, now);
	}
	return 0;
}

int pacer_head(struct pacer *p, uint32_t flow, uint64_t now, uint32_t head_len)
{
	struct pflow *f;

	if (flow >= p->max_flows || !head_len)
		return -EINVAL;
	f = &p->f[flow];
	if (f->state != F_QUEUED || f->head_len == head_len)
		return 0;
	f->head_len = head_len;
	if (f->own_gap)
		flow_refile(p, flow, now);
	return 0;
}

uint64_t pacer_rate(const struct pacer *p, uint32_t flow)
{
	if (flow >= p->max_flows)
		return 0;
	return p->f[flow].den / p->f[flow].mult;
}

uint64_t pacer_eligible(const struct pacer *p, uint32_t flow)
{
	if (flow >= p->max_flows)
		return PACER_NEVER;
	return flow_elig(p, &p->f[flow]);
}

/* ---- data path ----------------------------------------------------------- */

int pacer_wake(struct pacer *p, uint32_t flow, uint64_t now, uint32_t next_len)
{
	struct pflow *f;

	if (flow >= p->max_flows || !next_len)
		return -EINVAL;
	f = &p->f[flow];
	if (f->state != F_IDLE)
		return 0;
	f->head_len = next_len;
	/* After idle the flow is owed nothing beyond its burst (in own-gap
	 * mode plus the frame's own gap, so that it goes at once as it
	 * would when charged after). */
	flow_pull_up(f, now, f->burst_ns + flow_own_gap_ns(p, f, next_len));
	wheel_advance(p, now);
	f->state = F_QUEUED;
	p->st.backlogged++;
	wheel_insert(p, flow);
	return 0;
}

int pacer_done(struct pacer *p, uint32_t flow, uint64_t now, uint32_t sent_len,
	       uint32_t next_len)
{
	struct pflow *f;

	if (flow >= p->max_flows || p->f[flow].state != F_SERVING)
		return -EINVAL;
	f = &p->f[flow];
	/*
	 * The frame went at or after its eligible time; the next one is due a
	 * gap after that eligible time, not after `now`, so the slot rounding
	 * (and lateness up to the burst) costs no rate.
	 */
	flow_pull_up(f, now, f->burst_ns + p->slot_ns + flow_own_gap_ns(p, f, sent_len));
	flow_charge(p, f, sent_len);
	f->head_len = next_len;
	if (!next_len) {
		f->state = F_IDLE;
		p->st.backlogged--;
		return 0;
	}
	wheel_advance(p, now);
	f->state = F_QUEUED;
	/* Due already (served late behind a busy wire, or at once): it did
	 * not wait for its deadline, so there is nothing noticed late. */
	wheel_insert(p, flow);
	return 0;
}

int pacer_next(struct pacer *p, uint64_t now, uint32_t *flow)
{
	struct plist *r = &p->lists[LIST_READY];
	uint32_t id;

	wheel_advance(p, now);
	id = r->head;
	if (id == NIL)
		return 0;
	list_unlink(p, id);
	p->f[id].state = F_SERVING;
	p->st.served++;
	*flow = id;
	return 1;
}

uint64_t pacer_deadline(const struct pacer *p)
{
	unsigned lv, s;
	uint64_t start, lo;

	if (p->lists[LIST_READY].head != NIL)
		return p->cur * p->slot_ns;
	if (!p->lmask)
		return PACER_NEVER;
	start = wheel_first(p, &lv, &s);
	lo = p->slot_min[lv * WHEEL_SLOTS + s];
	return (lo > start ? lo : start) * p->slot_ns;
}

uint64_t pacer_lost_ns(const struct pacer *p, uint32_t flow)
{
	return flow < p->max_flows ? p->f[flow].lost_ns : 0;
}

int pacer_remove(struct pacer *p, uint32_t flow)
{
	struct pflow *f;

	if (flow >= p->max_flows)
		return -EINVAL;
	f = &p->f[flow];
	if (f->list != LIST_NONE)
		list_unlink(p, flow);
	if (f->state != F_IDLE)
		p->st.backlogged--;
	flow_reset(f);
	return 0;
}

void pacer_get_stats(const struct pacer *p, struct pacer_stats *st)
{
	*st = p->st;
}
