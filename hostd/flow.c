// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostd flows (flow.h). Classification reads frames straight off the wire,
 * so every read is bounded by len and multi-byte fields are loaded byte by
 * byte (no alignment in a UMEM). The table is the switch FDB's design
 * (switchd/fdb.c: open addressing, linear probing, at most half full,
 * backward-shift deletion) but its slots hold flow ids, and the flows live in
 * a dense array indexed by id: the id on the wire finds a flow without
 * hashing, and a flow does not move when its neighbours are deleted.
 */
#include "flow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

_Static_assert(sizeof(struct flow_key) == 48, "flow_key must have no implicit padding");
_Static_assert(sizeof(struct flow_key) % 8 == 0, "flow_hash reads the key in words");

#define ETH_P_IPV4      0x0800
#define ETH_P_IPV6      0x86DD
#define IPPROTO_TCP_    6
#define IPPROTO_UDP_    17
#define IPV4_HLEN       20
#define IPV6_HLEN       40
/* An IPv6 header chain longer than this is left unwalked: ports 0. */
#define IPV6_MAX_EXT    8

struct flow_table {
	struct flow *flows;     /* [max_flows], by id; id 0 the default flow */
	uint16_t *slots;        /* [mask + 1]: flow id, FLOW_ID_NONE = empty */
	uint32_t mask;
	uint32_t max_flows;
	uint16_t *free_ids;     /* ring of free ids, oldest freed at free_head */
	uint32_t free_head, free_count;
	uint32_t expire_cursor; /* next id flow_expire examines */
	uint32_t id_end;        /* 1 + the highest id ever in use: where walks stop */
	uint64_t idle_ns;
	uint64_t queue_limit;
	uint32_t nframes;
	struct flow_frame *frames;      /* caller's, or NULL: no queues */
	void (*on_remove)(void *ctx, struct flow *f);
	void *ctx;
	struct flow_table_stats st;
};

/* ---- classification ------------------------------------------------------ */

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool has_ports(uint8_t proto)
{
	return proto == IPPROTO_TCP_ || proto == IPPROTO_UDP_;
}

/* Source and destination port are the first 4 bytes of TCP and UDP. */
static int read_ports(const uint8_t *p, uint32_t len, uint32_t l4, struct flow_key *k)
{
	if (len < l4 + 4)
		return -EINVAL;
	k->sport = get_be16(p + l4);
	k->dport = get_be16(p + l4 + 2);
	return 0;
}

static int key_ipv4(const uint8_t *p, uint32_t len, uint32_t off, struct flow_key *k)
{
	uint32_t ihl;

	if (len < off + IPV4_HLEN || p[off] >> 4 != 4)
		return -EINVAL;
	ihl = (p[off] & 0x0f) * 4u;
	if (ihl < IPV4_HLEN || len < off + ihl)
		return -EINVAL;
	k->type = FLOW_KEY_IP4;
	k->proto = p[off + 9];
	memcpy(k->src, p + off + 12, 4);
	memcpy(k->dst, p + off + 16, 4);
	/* Only the first fragment (offset 0) carries the L4 header. */
	if ((get_be16(p + off + 6) & 0x1fff) || !has_ports(k->proto))
		return 0;
	return read_ports(p, len, off + ihl, k);
}

static int key_ipv6(const uint8_t *p, uint32_t len, uint32_t off, struct flow_key *k)
{
	uint32_t l4 = off + IPV6_HLEN, hl;
	uint8_t nh;

	if (len < off + IPV6_HLEN || p[off] >> 4 != 6)
		return -EINVAL;
	k->type = FLOW_KEY_IP6;
	memcpy(k->src, p + off + 8, 16);
	memcpy(k->dst, p + off + 24, 16);
	nh = p[off + 6];
	for (int i = 0; i < IPV6_MAX_EXT; i++) {
		switch (nh) {
		case 0:         /* hop-by-hop options */
		case 43:        /* routing */
		case 60:        /* destination options */
			if (len < l4 + 2)
				return -EINVAL;
			hl = (p[l4 + 1] + 1u) * 8;
			break;
		case 51:        /* AH: length in 4-byte units, minus 2 */
			if (len < l4 + 2)
				return -EINVAL;
			hl = (p[l4 + 1] + 2u) * 4;
			break;
		case 44:        /* fragment */
			if (len < l4 + 8)
				return -EINVAL;
			if (get_be16(p + l4 + 2) & 0xfff8) {
				/* Not the first fragment: no L4 header here. */
				k->proto = p[l4];
				return 0;
			}
			hl = 8;
			break;
		default:
			goto upper;
		}
		if (len < l4 + hl)
			return -EINVAL;
		nh = p[l4];
		l4 += hl;
	}
	/* Too many extension headers to follow: key on what we have. */
	k->proto = nh;
	return 0;
upper:
	k->proto = nh;
	if (!has_ports(nh))
		return 0;
	return read_ports(p, len, l4, k);
}

static void key_dst(const struct eth_info *ei, struct flow_key *k)
{
	k->type = FLOW_KEY_DST;
	memcpy(k->mac, ei->dst, 6);
	k->vid = ei->vid;
}

int flow_key_from_frame(enum flow_granularity g, const uint8_t *frame, uint32_t len,
			struct flow_key *k)
{
	struct eth_info ei;
	int err;

	memset(k, 0, sizeof(*k));
	err = wire_parse_eth(frame, len, &ei);
	if (err)
		return err;
	switch (g) {
	case FLOW_BY_DST:
		key_dst(&ei, k);
		return 0;
	case FLOW_BY_PRIO:
		k->type = FLOW_KEY_PRIO;
		k->prio = ei.prio;
		return 0;
	case FLOW_BY_5TUPLE:
		if (ei.ethertype == ETH_P_IPV4)
			err = key_ipv4(frame, len, ei.hlen, k);
		else if (ei.ethertype == ETH_P_IPV6)
			err = key_ipv6(frame, len, ei.hlen, k);
		else
			key_dst(&ei, k);
		if (err)
			memset(k, 0, sizeof(*k));
		return err;
	}
	return -EINVAL;
}

/* ---- table --------------------------------------------------------------- */

static uint32_t flow_hash(const struct flow_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = 0x243F6A8885A308D3ull;

	for (size_t i = 0; i < sizeof(*k); i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x9E3779B97F4A7C15ull;
		h ^= h >> 29;
	}
	h ^= h >> 32;
	h *= 0xBF58476D1CE4E5B9ull;
	return (uint32_t)(h >> 32);
}

uint32_t flow_key_hash(const struct flow_key *k)
{
	uint32_t h = flow_hash(k);

	return h ? h : 1;
}

int flow_table_create(struct flow_table **out, const struct flow_table_config *cfg)
{
	struct flow_table *t;
	struct flow *d;
	uint32_t size = 16;

	if (cfg->max_flows < 2 || cfg->max_flows > FLOW_MAX_FLOWS || !cfg->queue_limit ||
	    (cfg->frames && !cfg->nframes))
		return -EINVAL;
	/* At most half full: linear probes stay short. */
	while (size < 2 * cfg->max_flows)
		size <<= 1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->flows = calloc(cfg->max_flows, sizeof(*t->flows));
	t->slots = malloc(size * sizeof(*t->slots));
	t->free_ids = malloc(cfg->max_flows * sizeof(*t->free_ids));
	if (!t->flows || !t->slots || !t->free_ids) {
		flow_table_destroy(t);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < size; i++)
		t->slots[i] = FLOW_ID_NONE;
	t->mask = size - 1;
	t->max_flows = cfg->max_flows;
	t->idle_ns = cfg->idle_ns;
	t->queue_limit = cfg->queue_limit;
	t->nframes = cfg->frames ? cfg->nframes : 0;
	t->frames = cfg->frames;
	t->on_remove = cfg->on_remove;
	t->ctx = cfg->ctx;
	for (uint32_t id = 1; id < cfg->max_flows; id++)
		t->free_ids[t->free_count++] = id;
	t->expire_cursor = 1;

	d = &t->flows[FLOW_ID_DEFAULT];
	d->key.type = FLOW_KEY_DEFAULT;
	d->id = FLOW_ID_DEFAULT;
	d->gen = 1;
	d->in_use = true;
	t->id_end = 1;
	d->q.limit = cfg->queue_limit;
	d->law_state = d->law_area;
	t->st.flows = 1;
	*out = t;
	return 0;
}

void flow_table_destroy(struct flow_table *t)
{
	if (!t)
		return;
	free(t->flows);
	free(t->slots);
	free(t->free_ids);
	free(t);
}

struct flow *flow_lookup(const struct flow_table *t, const struct flow_key *k)
{
	uint32_t h = flow_hash(k);

	for (uint32_t i = h & t->mask;; i = (i + 1) & t->mask) {
		uint16_t id = t->slots[i];
		struct flow *f;

		if (id == FLOW_ID_NONE)
			return NULL;
		f = &t->flows[id];
		if (f->hash == h && !memcmp(&f->key, k, sizeof(*k)))
			return f;
	}
}

int flow_lookup_or_create(struct flow_table *t, const struct flow_key *k, uint64_t now,
			  struct flow **out)
{
	struct flow *f;
	uint32_t h, i;
	uint16_t id, gen;

	if (k->type == FLOW_KEY_DEFAULT)
		return -EINVAL;
	f = flow_lookup(t, k);
	if (f) {
		f->last_seen_ns = now;
		*out = f;
		return 0;
	}
	if (!t->free_count) {
		t->st.full++;
		return -ENOSPC;
	}
	id = t->free_ids[t->free_head];
	t->free_head = (t->free_head + 1) % t->max_flows;
	t->free_count--;

	h = flow_hash(k);
	for (i = h & t->mask; t->slots[i] != FLOW_ID_NONE; i = (i + 1) & t->mask)
		;
	t->slots[i] = id;

	f = &t->flows[id];
	gen = f->gen + 1;
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->hash = h;
	f->id = id;
	f->gen = gen;
	f->in_use = true;
	if (id >= t->id_end)
		t->id_end = id + 1u;
	f->last_seen_ns = now;
	f->q.limit = t->queue_limit;
	f->law_state = f->law_area;
	t->st.flows++;
	t->st.created++;
	*out = f;
	return 1;
}

/* Backward-shift deletion (as switchd/fdb.c): keeps every probe chain
 * unbroken without tombstones, so lookups never slow down under churn. */
static void slot_remove(struct flow_table *t, uint32_t i)
{
	uint32_t j = i;

	t->slots[i] = FLOW_ID_NONE;
	for (;;) {
		uint32_t home;

		j = (j + 1) & t->mask;
		if (t->slots[j] == FLOW_ID_NONE)
			return;
		home = t->flows[t->slots[j]].hash & t->mask;
		/* Leave j where it is if its home lies cyclically in (i, j]. */
		if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->slots[i] = t->slots[j];
		t->slots[j] = FLOW_ID_NONE;
		i = j;
	}
}

static void flow_release(struct flow_table *t, struct flow *f)
{
	uint32_t i;

	if (t->on_remove)
		t->on_remove(t->ctx, f);
	for (i = f->hash & t->mask; t->slots[i] != f->id; i = (i + 1) & t->mask)
		;
	slot_remove(t, i);
	f->in_use = false;
	t->free_ids[(t->free_head + t->free_count) % t->max_flows] = f->id;
	t->free_count++;
	t->st.flows--;
	t->st.removed++;
}

int flow_remove(struct flow_table *t, struct flow *f)
{
	if (f->id == FLOW_ID_DEFAULT)
		return -EPERM;
	if (!f->in_use)
		return -ENOENT;
	if (f->q.frames)
		return -EBUSY;
	flow_release(t, f);
	return 0;
}

static bool flow_idle(const struct flow_table *t, const struct flow *f, uint64_t now)
{
	return f->in_use && !f->pinned && !f->q.frames && now - f->last_seen_ns > t->idle_ns;
}

uint32_t flow_expire(struct flow_table *t, uint64_t now, uint32_t budget)
{
	/* All but the default flow, up to the highest id ever used. */
	uint32_t n = 0, ids = t->id_end - 1;

	if (!t->idle_ns || !ids)
		return 0;
	if (!budget || budget > ids)
		budget = ids;
	while (budget--) {
		struct flow *f = &t->flows[t->expire_cursor];

		if (++t->expire_cursor >= t->id_end)
			t->expire_cursor = 1;
		if (flow_idle(t, f, now)) {
			flow_release(t, f);
			t->st.expired++;
			n++;
		}
	}
	return n;
}

struct flow *flow_by_id(const struct flow_table *t, uint16_t id)
{
	if (id >= t->max_flows || !t->flows[id].in_use)
		return NULL;
	return &t->flows[id];
}

struct flow *flow_by_ref(const struct flow_table *t, uint16_t id, uint16_t gen)
{
	struct flow *f = flow_by_id(t, id);

	return f && f->gen == gen ? f : NULL;
}

struct flow *flow_default(const struct flow_table *t)
{
	return &t->flows[FLOW_ID_DEFAULT];
}

/* ---- per-flow queue ------------------------------------------------------ */

/* The highest lane with frames (lmask != 0). */
static inline int flow_top(const struct flow_queue *q)
{
	return 31 - __builtin_clz(q->lmask);
}

/* The slot of connection `key` in q: its own while it has bytes queued,
 * else the first empty one (claimed), else the last, which the connections
 * beyond FLOW_SUBS - 1 share. */
static unsigned flow_sub_slot(struct flow_queue *q, uint32_t key)
{
	unsigned i, empty = FLOW_SUBS;

	for (i = 0; i < FLOW_SUBS; i++) {
		if (!q->sub_bytes[i]) {
			if (empty == FLOW_SUBS)
				empty = i;
		} else if (q->sub_key[i] == key) {
			return i;
		}
	}
	if (empty == FLOW_SUBS)
		return FLOW_SUBS - 1;
	q->sub_key[empty] = key;
	return empty;
}

int flow_enqueue_sub(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len,
		     int lane, uint32_t sub)
{
	struct flow_queue *q = &f->q;
	unsigned slot = FLOW_SUB_NONE;

	if (frame >= t->nframes || lane < 0 || lane >= FLOW_LANES || len > UINT16_MAX)
		return -EINVAL;
	if (q->bytes + len > q->limit) {
		f->cnt.drops++;
		f->cnt.drop_bytes += len;
		return -ENOBUFS;
	}
	if (sub) {
		slot = flow_sub_slot(q, sub);
		if (q->sub_bytes[slot] + len > FLOW_SUB_ALPHA * (q->limit - q->bytes)) {
			f->cnt.drops++;
			f->cnt.drop_bytes += len;
			return -EDQUOT;
		}
		q->sub_bytes[slot] += len;
	}
	t->frames[frame].next = FLOW_FRAME_NONE;
	t->frames[frame].len = (uint16_t)len;
	t->frames[frame].sub = (uint8_t)slot;
	if (q->lmask & (1u << lane))
		t->frames[q->lt[lane]].next = frame;
	else
		q->lh[lane] = frame;
	q->lt[lane] = frame;
	q->lmask |= (uint16_t)(1u << lane);
	q->head = q->lh[flow_top(q)];
	q->frames++;
	f->q.bytes += len;
	f->cnt.frames_in++;
	f->cnt.bytes_in += len;
	return 0;
}

int flow_enqueue_lane(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len,
		      int lane)
{
	return flow_enqueue_sub(t, f, frame, len, lane, 0);
}

int flow_enqueue(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len)
{
	return flow_enqueue_lane(t, f, frame, len, 0);
}

uint32_t flow_dequeue(struct flow_table *t, struct flow *f, uint64_t now, uint32_t *len)
{
	uint32_t frame, l;

	if (!f->q.frames)
		return FLOW_FRAME_NONE;
	{
		struct flow_queue *q = &f->q;
		int p = flow_top(q);

		frame = q->lh[p];
		q->lh[p] = t->frames[frame].next;
		if (q->lh[p] == FLOW_FRAME_NONE)
			q->lmask &= (uint16_t)~(1u << p);
		q->head = q->lmask ? q->lh[flow_top(q)] : FLOW_FRAME_NONE;
	}
	l = t->frames[frame].len;
	if (t->frames[frame].sub != FLOW_SUB_NONE)
		f->q.sub_bytes[t->frames[frame].sub] -= l;
	f->q.frames--;
	f->q.bytes -= l;
	f->cnt.frames_out++;
	f->cnt.bytes_out += l;
	f->last_seen_ns = now;
	if (len)
		*len = l;
	return frame;
}

uint32_t flow_frame_len(const struct flow_table *t, uint32_t frame)
{
	return frame < t->nframes ? t->frames[frame].len : 0;
}

/* ---- walking ------------------------------------------------------------- */

int flow_foreach(struct flow_table *t, int (*fn)(void *ctx, struct flow *f), void *ctx)
{
	for (uint32_t id = 0; id < t->id_end; id++) {
		int ret;

		if (!t->flows[id].in_use)
			continue;
		ret = fn(ctx, &t->flows[id]);
		if (ret)
			return ret;
	}
	return 0;
}

void flow_table_get_stats(const struct flow_table *t, struct flow_table_stats *st)
{
	*st = t->st;
}

uint32_t flow_table_max_flows(const struct flow_table *t)
{
	return t->max_flows;
}

uint32_t flow_table_id_end(const struct flow_table *t)
{
	return t->id_end;
}
