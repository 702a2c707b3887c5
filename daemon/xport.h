/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * AF_XDP ports over one shared UMEM.
 *
 * A daemon creates one umem; every port it opens binds an AF_XDP socket to
 * each receive queue it serves (by default every RX queue of the interface:
 * a NIC with RSS spreads its traffic over them, and the XDP program drops
 * what arrives on a queue without a socket), all on that umem, each with its
 * own fill and completion ring (the kernel requires one pair per
 * device/queue). Because all ports share the buffer, forwarding moves a
 * descriptor from one port's RX ring to another's TX ring; bytes are never
 * copied by us.
 *
 * A port transmits on one socket only, its first queue's. The daemon is one
 * thread, so more TX rings would buy no parallelism, only a sendto() per
 * ring per pass; and the order in which the egress scheduler and the wire
 * clock release a port's frames is its order on the wire only if one ring
 * carries them (a NIC drains its TX queues independently).
 *
 * Frame ownership is exact. A frame (identified by its index) is in exactly
 * one of: the free pool, a fill ring, an RX ring (not yet taken), the daemon
 * (a queue or a frame being built), a TX ring, a completion ring. The umem
 * counts the first and the per-port fill/tx counters count the kernel-owned
 * ones (a port's fill_out is the sum over its queues), so
 * `free + Σfill + Σtx + held == nframes` always; xport_check() verifies it,
 * down to each queue.
 *
 * Each port attaches bpf/l2cc_xdp.bpf.c through a BPF link, so the program
 * goes away with the process even after SIGKILL. A program of ours left
 * attached the old way (netlink) is removed at start; a foreign one is
 * refused.
 */
#ifndef L2CC_XPORT_H
#define L2CC_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xdp/xsk.h>
#include "dp_sink.h"
#include "l2cc_shared.h"

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

/* The receive queues a port serves (`rx_queues`, switchd's `queue`). */
struct xport_qsel {
	bool all;               /* every RX queue the interface has */
	uint32_t first;         /* else, if not 0: queues 0..first-1 (all there are if fewer) */
	uint64_t mask;          /* else: exactly these (bit q = queue q) */
};

/* "all", a count N (queues 0..N-1), or a list of queues and ranges with a
 * comma or a dash in it ("0,2", "1-3", "2-2" for queue 2 alone), every
 * queue below L2CC_XSKMAP_MAX. 0 or -EINVAL. */
int xport_qsel_parse(const char *s, struct xport_qsel *sel);
/* One queue, switchd's `queue = Q`. */
static inline struct xport_qsel xport_qsel_one(uint32_t q)
{
	return (struct xport_qsel){ .mask = 1ull << q };
}
/* The lowest queue sel picks (the one a port transmits on, and probes). */
static inline uint32_t xport_qsel_lowest(const struct xport_qsel *sel)
{
	return sel->all || sel->first || !sel->mask ? 0 : (uint32_t)__builtin_ctzll(sel->mask);
}
/* Receive queues of an interface: ETHTOOL_GCHANNELS (rx + combined), else
 * the count of /sys/class/net/IF/queues/rx-*; -errno if neither answers. */
int xport_if_rx_queues(const char *ifname);
/* The queues sel picks on an interface with nq_if RX queues (bit q = queue
 * q): 0 with *mask set, or -ERANGE when sel names a queue the interface
 * does not have (*mask then holds those). */
int xport_qsel_resolve(const struct xport_qsel *sel, uint32_t nq_if, uint64_t *mask);
/* Sockets xport_open() would bind on ifname for sel (for sizing a UMEM
 * before the ports exist); 1 when the interface cannot tell. */
uint32_t xport_rx_sockets(const char *ifname, const struct xport_qsel *sel);

struct xport_opts {
	struct xport_qsel rxq;  /* the receive queues to bind a socket to */
	uint32_t ring_size;     /* rx, tx, fill and completion ring size (power of 2) */
	bool skb_mode;          /* XDP generic mode instead of native */
	bool xdp_auto;          /* native, else generic (skb) if the driver refuses (xdp_mode = auto) */
	bool zero_copy;         /* bind XDP_ZEROCOPY (nic.h decides, for the whole UMEM), else XDP_COPY */
	bool fallback_pass;     /* frames without a socket go to the stack, not dropped */
	/* switchd's forwarding = xdp (bpf/l2cc_shared.h, "pure-XDP
	 * forwarding"): the program's fast path is compiled in (rodata), off
	 * until xport_fwd_port() turns it on. Its FDB and devmap are one per
	 * switch: the first such port makes them (fwd_fdb_max entries, 0 = the
	 * default), later ones name it in fwd_share and reuse its maps. */
	bool fwd;
	const struct xport *fwd_share;
	uint32_t fwd_fdb_max;
};

struct ring_buffer;

struct xport_xdp_stats {
	uint64_t rx_dropped, rx_invalid_descs, tx_invalid_descs;
	uint64_t rx_ring_full, rx_fill_ring_empty_descs, tx_ring_empty_descs;
	uint64_t prog_rx, prog_redirect, prog_no_socket, prog_runt;
	uint64_t prog_ctrl;     /* control frames consumed in XDP (xdp_ctl) */
};

/* One receive queue's socket. Each has its own fill and completion ring;
 * only the port's TX socket (q[0]) has a TX ring, so only its completion
 * ring ever returns anything. */
struct xport_rxq {
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq;
	int fd;
	uint32_t queue;         /* the interface's RX queue index */
	uint32_t fill_out;      /* frames in this queue's fill ring or RX ring */
	uint32_t peeked;        /* descriptors the current peek looked at here */
};

struct xport {
	char ifname[16];        /* IFNAMSIZ */
	int ifindex;
	uint8_t mac[6];
	uint32_t mtu;
	struct umem *umem;
	struct xport_rxq *q;    /* the sockets, by ascending queue; q[0] transmits */
	uint32_t nq;            /* sockets */
	uint32_t nq_if;         /* RX queues the interface has */
	uint64_t qmask;         /* the queues served (bit q = queue q) */
	uint32_t rx_next;       /* the socket the next peek starts at (fairness) */
	uint32_t fill_next;     /* the fill ring the next refill starts at */
	bool fallback_pass;     /* what happens on the other queues: the stack gets them */
	uint32_t peek_first;    /* during a peek: the socket it started at */
	struct xsk_ring_prod tx;  /* q[0]'s TX ring */
	int fd;                 /* q[0]'s socket: TX kicks */
	uint32_t ring_size;
	uint32_t fill_out;      /* frames in the fill rings or RX rings (Σ q[i].fill_out) */
	uint32_t tx_out;        /* frames in the TX ring or completion ring */
	uint32_t tx_pending;    /* submitted to TX but not yet kicked with sendto() */
	uint64_t kick_errors;
	uint64_t kicks;         /* sendto() calls on the TX ring: frames per kick = tx/kicks */
	struct l2cc_xdp_bpf *skel;
	bool fwd;               /* the fast path is in the program (xport_opts.fwd) */
	int link_fd;            /* BPF link: closing it detaches the program */
	/* Control frames applied in XDP: the mmapped xdp_ctl (NULL: the
	 * daemon applies them itself) and the bell that wakes it. */
	struct l2cc_xdp_ctl *ctl;
	size_t ctl_len;
	struct ring_buffer *ctl_rb;
	/* The no_socket watch (xport_no_socket_watch). */
	uint64_t nosock_seen, nosock_warned, nosock_warn_ns;
	/* What xport_open obtained, for the start log, l2ccctl and metrics. */
	bool xdp_skb;           /* attached in generic (skb) mode */
	bool zero_copy;         /* the sockets are zero-copy (getsockopt XDP_OPTIONS) */
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

/* What the port does with the interface's queues, for the start-up log:
 * "4 rx queues, a socket on each", "4 rx queues, socket on queue 0 only:
 * queues 1-3 drop (no_socket)". */
void xport_queues_describe(const struct xport *p, char *buf, size_t len);
/* "0-3,5" for the queues in mask ("" for none). */
void xport_queues_fmt(uint64_t mask, char *buf, size_t len);

/* Keep the fill rings topped up from the free pool (starting at a different
 * queue each time, so a short pool is shared). Returns frames added. */
uint32_t xport_refill(struct xport *p);
/* Move completed TX frames back to the free pool. Returns frames reclaimed. */
uint32_t xport_reclaim(struct xport *p);
/*
 * Look at up to max received descriptors without taking them, from the
 * port's queues in turn: as many as the first has, then the next, ... The
 * first queue looked at moves on by one with every peek, so with all of
 * them busy each gets the whole batch in its turn: a port still gives at
 * most max frames per pass, whichever queues they came by. Returns count.
 */
uint32_t xport_rx_peek(struct xport *p, struct xdp_desc *descs, uint32_t max);
/* After a peek: the daemon now holds the first `taken` of what it returned;
 * the rest stay in their RX rings, to be peeked again (a full input buffer
 * holds them there, as a link's headroom would). */
void xport_rx_done(struct xport *p, uint32_t taken);
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

/*
 * Control frames applied in XDP (struct l2cc_xdp_ctl in l2cc_shared.h).
 * xport_ctl_config() sets what the program takes (L2CC_XDPC_*; 0: nothing,
 * every frame goes to the sockets) and the rate a pause quantum is timed
 * at. xport_ctl_read() copies the program's state when it has moved past
 * *seq_seen (true; *seq_seen updated), without a system call when it has
 * not. xport_ctl_fd() becomes readable when a frame was applied (-1: the
 * program keeps no state, the daemon applies control frames itself).
 */
void xport_ctl_config(struct xport *p, uint32_t flags, uint64_t rate_bps);
bool xport_ctl_read(struct xport *p, struct l2cc_xdp_ctl *snap, uint64_t *seq_seen);
int xport_ctl_fd(const struct xport *p);
static inline bool xport_ctl_on(const struct xport *p) { return p && p->ctl; }

/* Frames the XDP program dropped (or passed) on the port's queues without a
 * socket: L2CC_XDP_NO_SOCKET, 0 without a program. */
uint64_t xport_no_socket(const struct xport *p);
/* Per receive queue of the interface (q < nq_if, at most L2CC_XSKMAP_MAX):
 * frames the program saw and those it found no socket for. 0 or -errno. */
int xport_queue_stats(const struct xport *p, uint32_t q, uint64_t *rx, uint64_t *no_socket);
/* Called about once a second: a warning in the log (at most one per port
 * every XPORT_NOSOCK_WARN_NS) when no_socket grew since the last look;
 * name is the daemon's for the port. */
#define XPORT_NOSOCK_WARN_NS 10000000000ull
void xport_no_socket_watch(struct xport *p, const char *name, uint64_t now);

/* The fast path's maps (xport_opts.fwd), -1 on a port without it. */
int xport_fwd_fdb_fd(const struct xport *p);
int xport_fwd_devs_fd(const struct xport *p);
/* Set this port's fwd_port[0]; 0 or -errno. */
int xport_fwd_port(struct xport *p, const struct l2cc_fwd_port *pc);
/* Its fast-path counters (enum l2cc_fwd_stat), summed over CPUs; zeros without. */
int xport_fwd_stats(const struct xport *p, uint64_t st[L2CC_FWD_STAT_MAX]);
/* Frames the kernel failed to hand to the interface's peer after an XDP
 * redirect to it (veth: its ethtool tx_queue_N_xdp_xmit_errors, frames a
 * veth refuses while its peer has no XDP program); -errno if it keeps no
 * such count. The control path only: a few system calls. */
int xport_xdp_xmit_errors(const struct xport *p, uint64_t *n);

/* Does the interface's veth peer (in whatever namespace) have an XDP
 * program, which a veth needs to take XDP-redirected frames? 1 or 0;
 * -EOPNOTSUPP for an interface that is not a veth, -errno if netlink
 * cannot tell. The control path only. */
int xport_peer_xdp(const struct xport *p);
/* An interface's link (a veth's peer index, in the peer's namespace; its
 * own index if it has none) and its MAC, from netlink and ioctl rather than
 * /sys/class/net, which shows the namespace sysfs was mounted in, not the
 * thread's (l2ccd runs daemons of several namespaces). -errno on error. */
int xport_if_link(const char *ifname);
int xport_if_mac(const char *ifname, uint8_t mac[6]);

/* Verify frame conservation across the umem and its ports; 0 or -EUCLEAN. */
int xport_check(const struct umem *u, struct xport *const *ports, int nports);

#endif
