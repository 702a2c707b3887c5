/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AF_XDP ports over one shared UMEM.
 *
 * A daemon creates one umem; every port it opens binds an AF_XDP socket to
 * (ifname, queue) on that umem, with its own fill and completion ring (the
 * kernel requires one pair per device/queue). Because all ports share the
 * buffer, forwarding moves a descriptor from one port's RX ring to another's
 * TX ring; bytes are never copied by us.
 *
 * Frame ownership is exact. A frame (identified by its index) is in exactly
 * one of: the free pool, a fill ring, an RX ring (not yet taken), the daemon
 * (a queue or a frame being built), a TX ring, a completion ring. The umem
 * counts the first and the per-port fill/tx counters count the kernel-owned
 * ones, so `free + Σfill + Σtx + held == nframes` always; xport_check()
 * verifies it.
 *
 * Each port attaches bpf/l2cc_xdp.bpf.c through a BPF link, so the program
 * goes away with the process even after SIGKILL. A program of ours left
 * attached the old way (netlink) is removed at start; a foreign one is
 * refused.
 */
#ifndef L2CC_XPORT_H
#define L2CC_XPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <xdp/xsk.h>
#include "dp_sink.h"

/* The kernel places received data XDP_PACKET_HEADROOM (256) bytes into
 * each UMEM frame: a 2048-byte frame holds at most 1792 bytes of packet,
 * and a frame we build ourselves may use that room for a tag. */
#define XPORT_UMEM_HEADROOM 256

struct umem {
	void *area;
	struct xsk_umem *xu;
	uint32_t frame_size;
	uint32_t frame_shift;
	uint32_t nframes;
	uint32_t nfree;
	uint32_t *free;         /* stack of free frame indices */
	uint32_t held;          /* frames owned by the daemon (queues, building) */
	/* Fill/completion rings made with the umem; libxdp copies them into the
	 * first port's own fq/cq, so only xsk_umem__create() sees these. */
	struct xsk_ring_prod fq0;
	struct xsk_ring_cons cq0;
};

struct xport_opts {
	uint32_t queue;
	uint32_t ring_size;     /* rx, tx, fill and completion ring size (power of 2) */
	bool skb_mode;          /* XDP generic mode instead of native */
	bool xdp_auto;          /* native, else generic (skb) if the driver refuses (xdp_mode = auto) */
	bool zero_copy;         /* bind XDP_ZEROCOPY (nic.h decides, for the whole UMEM), else XDP_COPY */
	bool fallback_pass;     /* frames without a socket go to the stack, not dropped */
};

struct xport_xdp_stats {
	uint64_t rx_dropped, rx_invalid_descs, tx_invalid_descs;
	uint64_t rx_ring_full, rx_fill_ring_empty_descs, tx_ring_empty_descs;
	uint64_t prog_rx, prog_redirect, prog_no_socket, prog_runt;
};

struct xport {
	char ifname[16];        /* IFNAMSIZ */
	int ifindex;
	uint8_t mac[6];
	uint32_t mtu;
	struct umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	int fd;
	uint32_t ring_size;
	uint32_t fill_out;      /* frames in the fill ring or RX ring */
	uint32_t tx_out;        /* frames in the TX ring or completion ring */
	uint32_t tx_pending;    /* submitted to TX but not yet kicked with sendto() */
	uint64_t kick_errors;
	struct l2cc_xdp_bpf *skel;
	int link_fd;            /* BPF link: closing it detaches the program */
	/* What xport_open obtained, for the start log, l2ccctl and metrics. */
	bool xdp_skb;           /* attached in generic (skb) mode */
	bool zero_copy;         /* the socket is zero-copy (getsockopt XDP_OPTIONS) */
	int native_err;         /* xdp_auto: why native attach failed (-errno), else 0 */
};

static inline uint32_t umem_idx(const struct umem *u, uint64_t addr)
{
	return (uint32_t)(addr >> u->frame_shift);
}
static inline uint64_t umem_addr(const struct umem *u, uint32_t idx)
{
	return (uint64_t)idx << u->frame_shift;
}
static inline void *umem_data(const struct umem *u, uint64_t addr)
{
	return xsk_umem__get_data(u->area, addr);
}

/* Take a frame from the free pool for the daemon's own use: frame index, or -1. */
static inline int64_t umem_alloc(struct umem *u)
{
	if (!u->nfree)
		return -1;
	u->held++;
	return u->free[--u->nfree];
}
/* Return a frame the daemon holds to the free pool. */
static inline void umem_free(struct umem *u, uint32_t idx)
{
	u->held--;
	u->free[u->nfree++] = idx;
}

/* A UMEM of nframes frames of frame_size (2048 or 4096) bytes, registered
 * for AF_XDP with fill/completion rings of ring_size. ring_size 0 makes a
 * plain frame pool that no socket can use: the unit tests run the
 * datapath cores on one. */
int umem_create(struct umem **out, uint32_t nframes, uint32_t frame_size, uint32_t ring_size);
/* Delete the umem; all its ports must be closed first. */
void umem_destroy(struct umem *u);

/* MTU of an interface by name, or -errno. */
int xport_if_mtu(const char *ifname);
/* Write /proc/sys/net/ipv6/conf/IF/disable_ipv6 = value; the old value, or
 * -errno (-ENOENT without IPv6). Daemons turn IPv6 off on the interfaces
 * they own so the kernel's own router solicitations and MLD reports do not
 * leave them, and restore it on exit. */
int xport_if_ipv6_disable(const char *ifname, int value);

int xport_open(struct xport **out, struct umem *u, const char *ifname,
	       const struct xport_opts *o);
void xport_close(struct xport *p);

/* Keep the fill ring topped up from the free pool. Returns frames added. */
uint32_t xport_refill(struct xport *p);
/* Move completed TX frames back to the free pool. Returns frames reclaimed. */
uint32_t xport_reclaim(struct xport *p);
/* Look at up to max received descriptors without taking them. Returns count. */
uint32_t xport_rx_peek(struct xport *p, struct xdp_desc *descs, uint32_t max);
/* After a peek of `peeked`: the daemon now holds the first `taken`; the rest
 * stay in the RX ring, to be peeked again (a full input buffer holds them
 * there, as a link's headroom would). */
void xport_rx_done(struct xport *p, uint32_t taken, uint32_t peeked);
/* Free space in the TX ring. */
static inline uint32_t xport_tx_space(struct xport *p)
{
	return xsk_prod_nb_free(&p->tx, p->ring_size);
}
/* Queue one frame the daemon holds for transmission (call xport_tx_space first). */
static inline void xport_tx_one(struct xport *p, uint64_t addr, uint32_t len)
{
	uint32_t idx = 0;

	if (!xsk_ring_prod__reserve(&p->tx, 1, &idx))
		return; /* caller checked xport_tx_space(): cannot happen */
	xsk_ring_prod__tx_desc(&p->tx, idx)->addr = addr;
	xsk_ring_prod__tx_desc(&p->tx, idx)->len = len;
	xsk_ring_prod__tx_desc(&p->tx, idx)->options = 0;
	xsk_ring_prod__submit(&p->tx, 1);
	p->umem->held--;
	p->tx_out++;
	p->tx_pending++;
}
/* Tell the kernel to send what is in the TX ring. Copy mode sends at most 32
 * frames per sendto(), so this loops over the batch; -EAGAIN/-ENOBUFS mean
 * "try again later" and are not errors. */
int xport_kick(struct xport *p);

/* The sink (dp_sink.h) over an array of ports: ctx is a struct xport **,
 * port an index into it. */
extern const struct dp_sink_ops xport_sink_ops;

int xport_xdp_stats(struct xport *p, struct xport_xdp_stats *st);
struct jw;
/* The XDP statistics as a JSON object named key (control socket replies). */
void xport_xdp_stats_emit(struct jw *w, const char *key, struct xport *p);

/* Verify frame conservation across the umem and its ports; 0 or -EUCLEAN. */
int xport_check(const struct umem *u, struct xport *const *ports, int nports);

#endif
