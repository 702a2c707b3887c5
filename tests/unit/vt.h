/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Virtual-time harness for the datapath cores: a frame pool without
 * AF_XDP (umem_create with ring_size 0), an in-memory sink that records
 * every frame a core emits (port, time, bytes) and gives the frame back to
 * the pool, and builders for the raw frames the tests feed in.
 */
#ifndef L2CC_TEST_VT_H
#define L2CC_TEST_VT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <unistd.h>

#include "dp_sink.h"
#include "l2cc_shared.h"
#include "wire.h"
#include "xport.h"

#define VT_MAX_PORTS 8
#define VT_MAX_LOG 4096
#define VT_FRAME_MAX 2048

struct vt_frame {
	uint32_t port;
	uint64_t t;
	uint32_t len;
	uint8_t data[VT_FRAME_MAX];
};

struct vt_sink {
	struct umem *umem;
	const uint64_t *now;            /* the core's clock, for the log */
	uint32_t cap[VT_MAX_PORTS];     /* frames a port takes per flush; 0 = none */
	uint32_t queued[VT_MAX_PORTS];  /* put since the last flush */
	uint32_t flushes[VT_MAX_PORTS];
	struct vt_frame *log;
	uint32_t n;                     /* frames in the log */
	uint32_t lost;                  /* frames past VT_MAX_LOG (counted, not kept) */
};

static uint32_t vt_space(void *ctx, uint32_t port)
{
	struct vt_sink *k = ctx;

	return k->cap[port] - k->queued[port];
}

static uint32_t vt_size(void *ctx, uint32_t port)
{
	return ((struct vt_sink *)ctx)->cap[port];
}

static void vt_put(void *ctx, uint32_t port, uint64_t addr, uint32_t len)
{
	struct vt_sink *k = ctx;
	uint32_t idx = umem_idx(k->umem, addr);

	k->queued[port]++;
	if (k->n < VT_MAX_LOG) {
		struct vt_frame *f = &k->log[k->n++];

		f->port = port;
		f->t = *k->now;
		f->len = len > VT_FRAME_MAX ? VT_FRAME_MAX : len;
		memcpy(f->data, umem_data(k->umem, addr), f->len);
	} else {
		k->lost++;
	}
	umem_free(k->umem, idx);
}

static void vt_flush(void *ctx, uint32_t port)
{
	struct vt_sink *k = ctx;

	if (k->queued[port])
		k->flushes[port]++;
	k->queued[port] = 0;
}

static const struct dp_sink_ops vt_sink_ops = {
	.space = vt_space,
	.size = vt_size,
	.put = vt_put,
	.flush = vt_flush,
};

static inline void vt_sink_init(struct vt_sink *k, struct umem *u, const uint64_t *now)
{
	memset(k, 0, sizeof(*k));
	k->umem = u;
	k->now = now;
	for (int i = 0; i < VT_MAX_PORTS; i++)
		k->cap[i] = 64;
	k->log = calloc(VT_MAX_LOG, sizeof(*k->log));
}

static inline void vt_sink_fini(struct vt_sink *k)
{
	free(k->log);
}

static inline struct dp_sink vt_sink(struct vt_sink *k)
{
	return (struct dp_sink){ .ops = &vt_sink_ops, .ctx = k };
}

/* Frames the sink saw on port since log index `from`, and the last one. */
static inline uint32_t vt_count(const struct vt_sink *k, uint32_t from, uint32_t port)
{
	uint32_t n = 0;

	for (uint32_t i = from; i < k->n; i++)
		n += k->log[i].port == port;
	return n;
}

/* Ethertype of a logged frame (after VLAN tags). */
static inline uint16_t vt_ethertype(const struct vt_frame *f)
{
	struct eth_info ei;

	return wire_parse_eth(f->data, f->len, &ei) ? 0 : ei.ethertype;
}

static inline void vt_mac(uint8_t mac[6], uint8_t id)
{
	static const uint8_t base[6] = { 0x02, 0, 0, 0, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = id;
}

struct vt_eth {
	uint8_t dst, src;       /* vt_mac ids */
	int prio;               /* -1: untagged; else an 802.1Q tag with this PCP */
	uint16_t vid;           /* that tag's VLAN id (with prio >= 0) */
	uint16_t ethertype;     /* 0 = IPv4 */
	uint32_t len;           /* frame length before any l2cc tag */
	bool tag;               /* add the l2cc data tag (flow, seq) */
	uint16_t flow;
	uint32_t seq;
};

/*
 * A frame taken from the pool as a received frame would be: its data starts
 * XPORT_UMEM_HEADROOM into the UMEM frame (where the kernel puts it), with
 * an l2cc tag inserted into that headroom when e->tag. Returns its
 * descriptor address and sets *len; 0 with *len 0 if the pool is empty.
 */
static inline uint64_t vt_frame_make(struct umem *u, const struct vt_eth *e, uint32_t *len)
{
	int64_t idx = umem_alloc(u);
	uint64_t addr;
	uint8_t *p;
	uint32_t off = 12, l;

	*len = 0;
	if (idx < 0)
		return 0;
	addr = umem_addr(u, (uint32_t)idx) + XPORT_UMEM_HEADROOM;
	p = umem_data(u, addr);
	l = e->len ? e->len : 100;
	memset(p, 0, l);
	vt_mac(p, e->dst);
	vt_mac(p + 6, e->src);
	if (e->prio >= 0) {
		p[12] = 0x81;
		p[13] = 0x00;
		p[14] = (uint8_t)(e->prio << 5 | (e->vid >> 8 & 0x0f));
		p[15] = (uint8_t)e->vid;
		off = 16;
	}
	p[off] = (e->ethertype ? e->ethertype : 0x0800) >> 8;
	p[off + 1] = (e->ethertype ? e->ethertype : 0x0800) & 0xff;
	if (e->tag) {
		struct wire_tag t = { .flow = e->flow, .seq = e->seq };

		if (wire_tag_insert(&p, &l, XPORT_UMEM_HEADROOM, &t) == 0)
			addr -= L2CC_TAG_LEN;
	}
	*len = l;
	return addr;
}

/* Is the logged frame's l2cc tag marked (FECN)? -1 if it has none. */
static inline int vt_fecn(const struct vt_frame *f)
{
	struct wire_tag t;

	if (wire_tag_read(f->data, f->len, &t) < 0)
		return -1;
	return (t.flags & L2CC_TAG_FECN) ? 1 : 0;
}

/* Write a configuration's text to a fresh file named from tmpl (ending in
 * XXXXXX, changed in place): 0 or -errno. The caller unlinks it. */
static inline int vt_conf_file(char *tmpl, const char *text)
{
	int fd = mkstemp(tmpl), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -EIO;
	close(fd);
	return ret;
}

#endif
