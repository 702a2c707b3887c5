/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostd flows: classification of a frame to a flow key, a table of flows with
 * small stable ids, and a per-flow FIFO of frames bounded in bytes.
 *
 * Granularity (config `granularity`) is the InfiniBand choice between
 * QP-level (one flow per destination or per connection) and SL-level (one
 * flow per priority) congestion control (gran-…-2011; IB spec 1.2.1 A10).
 *
 * The table is allocated once by flow_table_create(); nothing on the packet
 * path allocates. Every flow has an id in 0..max_flows-1 that the data tag
 * carries on the wire and that CNPs and ACKs name, so flow_by_id() is O(1) and
 * says when an id is not in use: a CNP or ACK for a flow that does not exist
 * must change nothing.
 *
 * Id 0 is the shared default flow (FLOW_ID_DEFAULT). It exists for the whole
 * life of the table, has no key, never expires and is never returned by a
 * lookup. When flow_lookup_or_create() says -ENOSPC (every other id in use)
 * the caller puts the frame on the default flow, so a full table degrades to
 * one shared queue and rate instead of dropping traffic.
 *
 * Ids are reused oldest-freed first, so an id comes back only after every other
 * free id has been handed out: a late CNP for a removed flow is then very
 * unlikely to hit a new flow with the same id. Callers that keep references
 * across events (a timing wheel) hold (id, gen) and use flow_by_ref().
 *
 * Per-flow state of other modules (pacer, tagger) can live in arrays indexed
 * by flow id; the rate-control law has its own area in struct flow.
 */
#ifndef L2CC_HOSTD_FLOW_H
#define L2CC_HOSTD_FLOW_H

#include <stdbool.h>
#include <stdint.h>

enum flow_granularity {
	FLOW_BY_DST = 0,        /* destination MAC + VLAN id (default; QP-level by peer) */
	FLOW_BY_5TUPLE,         /* IP addresses, protocol, ports (QP-level by connection) */
	FLOW_BY_PRIO,           /* 802.1Q PCP only (SL-level) */
};

enum flow_key_type {
	FLOW_KEY_DEFAULT = 0,   /* the default flow; never produced by classification */
	FLOW_KEY_DST,
	FLOW_KEY_IP4,
	FLOW_KEY_IP6,
	FLOW_KEY_PRIO,
	FLOW_KEY_PEER,          /* a remote sender's flow (receiver side): mac = its
				 * source MAC, vid, sport = its flow id; built by the
				 * caller, never by classification */
};

/*
 * A flow key. Fixed layout without implicit padding and zeroed before it is
 * filled, so two keys are equal exactly when memcmp() says so. Ports are in
 * host byte order; addresses as on the wire (IPv4 in the first 4 bytes).
 */
struct flow_key {
	uint8_t  type;          /* enum flow_key_type */
	uint8_t  proto;         /* IP4/IP6: upper-layer protocol (after IPv6 ext headers) */
	uint8_t  prio;          /* PRIO: 802.1Q PCP of the outer tag, 0 when untagged */
	uint8_t  pad;
	uint16_t vid;           /* DST: outer VLAN id, 0 when untagged */
	uint16_t sport;         /* IP4/IP6: TCP/UDP ports, 0 for other protocols and */
	uint16_t dport;         /*   for fragments after the first */
	uint8_t  mac[6];        /* DST: destination MAC */
	uint8_t  src[16];       /* IP4/IP6: source address */
	uint8_t  dst[16];       /* IP4/IP6: destination address */
};

/*
 * Classify a frame. FLOW_BY_DST: destination MAC and outer VLAN id.
 * FLOW_BY_5TUPLE: IPv4 or IPv6 (after up to two VLAN tags; IPv6 extension
 * headers are walked) source and destination address, protocol and TCP/UDP
 * ports; other protocols and non-first fragments have ports 0. A frame that is
 * not IP (ARP, LLDP, ...) falls back to the FLOW_BY_DST key (k->type says
 * which), so it still lands in a flow toward its destination.
 * FLOW_BY_PRIO: the outer PCP alone, 0 when untagged.
 * Never reads past len. 0, or -EINVAL if the frame is too short for the headers
 * the granularity needs (or an IP header is malformed, or g is unknown): the
 * caller counts it and passes or drops the frame.
 */
int flow_key_from_frame(enum flow_granularity g, const uint8_t *frame, uint32_t len,
			struct flow_key *k);

#define FLOW_ID_DEFAULT   0
#define FLOW_ID_NONE      UINT16_MAX
#define FLOW_MAX_FLOWS    65535u          /* FLOW_ID_NONE is not an id */
#define FLOW_FRAME_NONE   UINT32_MAX
#define FLOW_LAW_WORDS    16              /* 128 bytes of law state per flow */

/* The daemon extends this (control socket, metrics, time series). */
struct flow_counters {
	uint64_t frames_in, bytes_in;   /* queued from the host stack */
	uint64_t frames_out, bytes_out; /* taken from the queue toward the uplink */
	uint64_t drops, drop_bytes;     /* refused: queue at its byte limit or the
					 * connection at its share of it (host edge), or
					 * dropped from it as the uplink went down */
	uint64_t marks;                 /* congestion marks learnt of (CNP, ACK ECE) */
	uint64_t cnp_in, cnp_out;
	uint64_t ack_in, ack_out;
	uint64_t cnm_in;                /* 802.1Qau CNMs (BCN, QCN) about the flow */
};

/* A flow's queue: FIFO lanes served highest first, two per 802.1Q
 * priority p: 2p + 1 for its pure TCP ACKs, 2p for the rest. A path of
 * several priorities sends its higher ones first (McAlpine 2005 §8, video
 * and IPC ahead of the DB traffic on the same path), and within a
 * priority the ACKs of the other direction's connections do not wait
 * behind a rate-limited window of data. */
#define FLOW_LANES 16
/* A flow that aggregates connections (granularity dst or prio) can share its
 * queue among them (flow_enqueue_sub): each of the first FLOW_SUBS - 1
 * connections with frames queued has a slot counting its bytes, the rest
 * share the last one. */
#define FLOW_SUBS 8
#define FLOW_SUB_NONE 0xff      /* a frame queued without a connection slot */
/* A connection may hold at most FLOW_SUB_ALPHA times the queue's free bytes
 * (Choudhury-Hahne's dynamic threshold, as hostd's frame pool): alone it
 * fills half the queue; n backlogged ones settle at an equal 1/(n + 1)
 * each. A larger alpha leaves less free and lets the connection whose
 * frames arrive first after each departure win the last slot more often
 * (alpha 4: 0.42 against 0.58 when one always arrives first, alpha 1: 0.50). */
#define FLOW_SUB_ALPHA 1
struct flow_queue {
	uint32_t head;          /* the frame to send next; meaningful when frames > 0 */
	uint32_t frames;
	uint64_t bytes;
	uint64_t limit;         /* bytes; flow_enqueue refuses what would exceed it */
	uint16_t lmask;         /* bit l: lane l has frames */
	uint32_t lh[FLOW_LANES], lt[FLOW_LANES];        /* per lane: head and tail */
	uint32_t sub_key[FLOW_SUBS];    /* a connection's key (flow_enqueue_sub), while */
	uint32_t sub_bytes[FLOW_SUBS];  /*   its slot has bytes queued */
};

struct flow {
	struct flow_key key;
	uint64_t last_seen_ns;  /* last frame classified to or sent from this flow */
	uint32_t hash;          /* of key (internal) */
	uint16_t id;
	uint16_t gen;           /* changes every time the id is given to a new flow */
	bool in_use;
	bool pinned;            /* flow_expire() leaves it (CLI-set rate, law not recovered) */
	uint32_t seq_next;      /* next data-tag sequence number (the tagger advances it) */
	struct flow_queue q;
	struct flow_counters cnt;
	/* Rate-control law state: points at law_area (zeroed when the flow is
	 * created) unless the law points it elsewhere. */
	void *law_state;
	uint64_t law_area[FLOW_LAW_WORDS] __attribute__((aligned(16)));
};

struct flow_table;

/*
 * Per-frame metadata, one per UMEM frame index, owned by the caller: the
 * flow queues link frames through `next` and count `len`; `addr` is the
 * caller's (the frame's descriptor address). hostd's one record of a frame.
 */
struct flow_frame {
	uint64_t addr;
	uint32_t next;
	uint16_t len;           /* a UMEM frame holds at most 4096 bytes */
	uint8_t sub;            /* its connection's slot in its flow's queue, FLOW_SUB_NONE */
	uint8_t pad;
};

struct flow_table_config {
	uint32_t max_flows;             /* ids 0..max_flows-1, 2..FLOW_MAX_FLOWS, incl. default */
	uint64_t idle_ns;               /* remove flows idle this long; 0 = never */
	uint64_t queue_limit;           /* per-flow queue bound in bytes (> 0), f->q.limit */
	uint32_t nframes;               /* frame indices are 0..nframes-1 */
	struct flow_frame *frames;      /* [nframes], caller-owned; NULL for a table
					 * whose flows never queue (flow_enqueue refuses) */
	/* Called just before a flow is removed (flow_remove or flow_expire), so its
	 * owner can drop references (timer entries, law state). May be NULL. */
	void (*on_remove)(void *ctx, struct flow *f);
	void *ctx;
};

struct flow_table_stats {
	uint32_t flows;                 /* in use, the default flow included */
	uint64_t created, removed;      /* removed includes expired */
	uint64_t expired;
	uint64_t full;                  /* flow_lookup_or_create said -ENOSPC */
};

/* 0, -EINVAL on a bad config, -ENOMEM. The default flow (id 0) exists at once. */
int flow_table_create(struct flow_table **out, const struct flow_table_config *cfg);
/* Frees the table; frames still queued are the caller's (drain first). */
void flow_table_destroy(struct flow_table *t);

/* The flow with this key, or NULL. Does not refresh it. */
struct flow *flow_lookup(const struct flow_table *t, const struct flow_key *k);
/* Find or create the flow for k and refresh its last_seen_ns to now.
 * 0 if found, 1 if created (new id, zeroed counters and law area, queue limit
 * from the config), -ENOSPC if the table is full (counted; use flow_default),
 * -EINVAL for a FLOW_KEY_DEFAULT key. */
int flow_lookup_or_create(struct flow_table *t, const struct flow_key *k, uint64_t now,
			  struct flow **out);
/* Remove a flow: 0, -EBUSY if its queue is not empty, -EPERM for the default
 * flow, -ENOENT if not in use. on_remove is called first. */
int flow_remove(struct flow_table *t, struct flow *f);
/*
 * Remove idle flows: empty queue, not pinned, now - last_seen_ns > idle_ns.
 * Examines at most `budget` ids (0 = all of them), resuming where the last call
 * stopped, so a caller on a timer bounds the work per tick; a full sweep takes
 * max_flows / budget calls. Returns how many flows it removed.
 */
uint32_t flow_expire(struct flow_table *t, uint64_t now, uint32_t budget);

/* O(1). The flow with this id if it is in use, else NULL (also for the ids out
 * of range): a CNP or ACK naming it is then counted and ignored by the caller. */
struct flow *flow_by_id(const struct flow_table *t, uint16_t id);
/* As flow_by_id, and NULL too if the id was given to another flow since gen. */
struct flow *flow_by_ref(const struct flow_table *t, uint16_t id, uint16_t gen);
struct flow *flow_default(const struct flow_table *t);
static inline void flow_touch(struct flow *f, uint64_t now) { f->last_seen_ns = now; }

/* Append frame to f's queue: 0, or -ENOBUFS if q.bytes + len would exceed
 * q.limit (counted in f->cnt.drops/drop_bytes; the frame stays the caller's to
 * free), -EINVAL for a frame index >= nframes. A frame must be in one queue at
 * most: the `next` links are shared. */
int flow_enqueue(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len);
/* The same in lane 0..FLOW_LANES-1 (2 x priority, + 1 for a pure ACK):
 * behind the frames of its lane, ahead of every lower lane's. */
int flow_enqueue_lane(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len,
		      int lane);
/* The same, sharing f's queue among the connections in it: `sub` names the
 * frame's connection (a hash of its 5-tuple, flow_key_hash; 0 = no sharing,
 * as flow_enqueue_lane). -EDQUOT (counted as a drop too) when the
 * connection already holds FLOW_SUB_ALPHA times the queue's free bytes, so
 * backlogged connections get about equal shares of the queue, and a FIFO
 * serves them equally, instead of first come, first served: an HCA serves
 * the QPs of one SL in turn under the SL's one rate (IB CC at SL level,
 * Gran et al. 2011 §II). */
int flow_enqueue_sub(struct flow_table *t, struct flow *f, uint32_t frame, uint32_t len,
		     int lane, uint32_t sub);
/* A key's hash (never 0): flow_enqueue_sub's name for a connection. */
uint32_t flow_key_hash(const struct flow_key *k);
/* Take the head of f's queue, its highest priority's oldest frame (FLOW_FRAME_NONE if empty), its length in *len if
 * len is not NULL. Refreshes last_seen_ns: a flow that was paused for long is
 * not forgotten the moment its queue drains. */
uint32_t flow_dequeue(struct flow_table *t, struct flow *f, uint64_t now, uint32_t *len);
/* Length of a queued frame (as given to flow_enqueue). */
uint32_t flow_frame_len(const struct flow_table *t, uint32_t frame);
static inline uint32_t flow_head(const struct flow *f)
{
	return f->q.frames ? f->q.head : FLOW_FRAME_NONE;
}

/* Call fn for every flow in use in id order (the default flow first); stops
 * when fn returns non-zero and returns that value. fn may remove the flow it
 * is given, no other. */
int flow_foreach(struct flow_table *t, int (*fn)(void *ctx, struct flow *f), void *ctx);

void flow_table_get_stats(const struct flow_table *t, struct flow_table_stats *st);
uint32_t flow_table_max_flows(const struct flow_table *t);
/* 1 + the highest id ever in use: a walk over the flows by id stops there
 * (the time series walks them every 10 ms; max_flows is 4096 and more,
 * a lab's hosts use a handful). */
uint32_t flow_table_id_end(const struct flow_table *t);

#endif
