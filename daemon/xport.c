// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "xport"
#include "xport.h"
#include "nic.h"
#include "json.h"
#include "log.h"
#include "l2cc_shared.h"
#include "l2cc_xdp.skel.h"

#include <dirent.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

int umem_create(struct umem **out, uint32_t nframes, uint32_t frame_size, uint32_t ring_size)
{
	struct xsk_umem_config cfg = {
		.fill_size = ring_size,
		.comp_size = ring_size,
		.frame_size = frame_size,
		.frame_headroom = 0,
		.flags = 0,
	};
	size_t len = (size_t)nframes * frame_size;
	struct umem *u;
	uint32_t i;
	int err;

	if (frame_size != 2048 && frame_size != 4096)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->frame_size = frame_size;
	u->frame_shift = frame_size == 2048 ? 11 : 12;
	u->nframes = nframes;
	u->free = calloc(nframes, sizeof(*u->free));
	if (!u->free) {
		err = -ENOMEM;
		goto err_free;
	}
	u->area = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (u->area == MAP_FAILED) {
		err = -errno;
		pr_err("umem: mmap %zu bytes: %s\n", len, strerror(-err));
		goto err_free;
	}
	err = ring_size ? xsk_umem__create(&u->xu, u->area, len, &u->fq0, &u->cq0, &cfg) : 0;
	if (err) {
		pr_err("umem: create (%u frames of %u bytes): %s\n", nframes, frame_size,
		       strerror(-err));
		goto err_unmap;
	}
	/* Highest index on top, so frames are handed out from the start of the area. */
	for (i = 0; i < nframes; i++)
		u->free[i] = nframes - 1 - i;
	u->nfree = nframes;
	*out = u;
	return 0;

err_unmap:
	munmap(u->area, len);
err_free:
	free(u->free);
	free(u);
	return err;
}

void umem_destroy(struct umem *u)
{
	if (!u)
		return;
	if (u->xu)
		xsk_umem__delete(u->xu);
	munmap(u->area, (size_t)u->nframes * u->frame_size);
	free(u->free);
	free(u);
}

/* Remove a stale l2cc program attached by netlink (a BPF link would have
 * died with its process). A foreign program is left alone and refused. */
static int xport_clear_stale(const char *ifname, int ifindex)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	__u32 prog_id = 0;
	int fd, err;

	err = bpf_xdp_query_id(ifindex, 0, &prog_id);
	if (err || !prog_id)
		return 0;
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0 && errno == ENOENT)
		return 0; /* gone in the meantime */
	if (fd < 0) {
		/* Opening a program by id takes CAP_SYS_ADMIN, which the systemd
		 * units do not grant: without it ours and a foreign one look the
		 * same, and the attach would only say EBUSY. */
		err = -errno;
		pr_err("%s: an XDP program (id %u) is attached and cannot be inspected (%s; "
		       "that takes CAP_SYS_ADMIN): detach it first (ip link set dev %s xdp off)\n",
		       ifname, prog_id, strerror(-err), ifname);
		return -EBUSY;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	close(fd);
	if (err)
		return -errno;
	if (strcmp(info.name, L2CC_XDP_PROG_NAME)) {
		pr_err("%s: XDP program \"%s\" (id %u) is attached and is not ours; "
		       "detach it first (ip link set dev %s xdp off)\n",
		       ifname, info.name, prog_id, ifname);
		return -EBUSY;
	}
	pr_info("%s: removing stale %s program (id %u) left by an earlier run\n",
		ifname, info.name, prog_id);
	/* Detach in the mode it was attached in: flags 0 means the driver's
	 * mode on a device that has one (veth does), which leaves a generic
	 * (skb) mode program in place and reports success. */
	for (int i = 0; i < 2; i++) {
		__u32 mode = i ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE, id = 0;

		if (bpf_xdp_query_id(ifindex, (int)mode, &id) || id != prog_id)
			continue;
		err = bpf_xdp_detach(ifindex, (int)mode, NULL);
		return err ? err : 0;
	}
	return bpf_xdp_detach(ifindex, 0, NULL);
}

int xport_if_mtu(const char *ifname)
{
	struct ifreq ifr = {};
	int err = nic_ioctl(ifname, SIOCGIFMTU, &ifr);

	return err ? err : ifr.ifr_mtu;
}

static int xport_link_info(struct xport *p)
{
	struct ifreq ifr = {};
	int s, err = 0;

	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memcpy(ifr.ifr_name, p->ifname, sizeof(ifr.ifr_name));
	if (ioctl(s, SIOCGIFMTU, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	p->mtu = ifr.ifr_mtu;
	if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto out;
	}
	memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
out:
	close(s);
	return err;
}

int xport_qsel_parse(const char *s, struct xport_qsel *sel)
{
	const char *t = s;
	char *end;

	*sel = (struct xport_qsel){ 0 };
	if (!strcmp(s, "all")) {
		sel->all = true;
		return 0;
	}
	if (!strpbrk(s, ",-")) {
		unsigned long n = strtoul(s, &end, 10);

		if (*s < '0' || *s > '9' || *end || n < 1 || n > L2CC_XSKMAP_MAX)
			return -EINVAL;
		sel->first = (uint32_t)n;
		return 0;
	}
	while (*t) {
		unsigned long a, b;

		if (*t < '0' || *t > '9')
			return -EINVAL;
		a = b = strtoul(t, &end, 10);
		if (*end == '-') {
			t = end + 1;
			if (*t < '0' || *t > '9')
				return -EINVAL;
			b = strtoul(t, &end, 10);
		}
		if (a > b || b >= L2CC_XSKMAP_MAX)
			return -EINVAL;
		for (unsigned long q = a; q <= b; q++)
			sel->mask |= 1ull << q;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -EINVAL;
		t = end;
	}
	return sel->mask ? 0 : -EINVAL;
}

static uint64_t xport_low_mask(uint32_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

int xport_qsel_resolve(const struct xport_qsel *sel, uint32_t nq_if, uint64_t *mask)
{
	uint64_t have = xport_low_mask(nq_if < L2CC_XSKMAP_MAX ? nq_if : L2CC_XSKMAP_MAX);

	if (sel->all) {
		*mask = have;
		return 0;
	}
	if (sel->first) {
		*mask = xport_low_mask(sel->first) & have;
		return 0;
	}
	*mask = sel->mask & ~have;
	if (*mask)
		return -ERANGE;
	*mask = sel->mask;
	return 0;
}

uint32_t xport_rx_sockets(const char *ifname, const struct xport_qsel *sel)
{
	int nq = xport_if_rx_queues(ifname);
	uint64_t mask;

	if (nq <= 0 || xport_qsel_resolve(sel, (uint32_t)nq, &mask) || !mask)
		return 1;
	return (uint32_t)__builtin_popcountll(mask);
}

/* /sys/class/net/IF/queues/rx-*: the kernel's real_num_rx_queues. */
static int xport_sys_rx_queues(const char *ifname)
{
	char path[96];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "rx-", 3);
	closedir(d);
	return n ? n : -ENOENT;
}

int xport_if_rx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { .ifr_data = (char *)&ch };
	int n = 0;

	/* A NIC counts its queue pairs as combined channels, veth its queues
	 * as rx; a driver may have both. */
	if (!nic_ioctl(ifname, SIOCETHTOOL, &ifr))
		n = (int)(ch.rx_count + ch.combined_count);
	return n > 0 ? n : xport_sys_rx_queues(ifname);
}

void xport_queues_fmt(uint64_t mask, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int q = 0; q < 64 && off < len; q++) {
		int e = q;

		if (!(mask & (1ull << q)))
			continue;
		while (e < 63 && (mask & (1ull << (e + 1))))
			e++;
		off += (size_t)snprintf(buf + off, len - off, e > q ? "%s%d-%d" : "%s%d",
					off ? "," : "", q, e);
		q = e;
	}
}

void xport_queues_describe(const struct xport *p, char *buf, size_t len)
{
	uint64_t rest = xport_low_mask(p->nq_if) & ~p->qmask;
	char served[128], other[160];
	int n;

	n = snprintf(buf, len, "%u rx queue%s, ", p->nq_if, p->nq_if == 1 ? "" : "s");
	if (n < 0 || (size_t)n >= len)
		return;
	if (!rest && p->nq_if <= 64) {
		snprintf(buf + n, len - (size_t)n, p->nq_if == 1 ? "a socket on it" : "a socket on each");
		return;
	}
	xport_queues_fmt(p->qmask, served, sizeof(served));
	xport_queues_fmt(rest, other, sizeof(other));
	if (p->nq_if > 64) /* the XSKMAP has no slot past 63 */
		snprintf(other + strlen(other), sizeof(other) - strlen(other), "%s64-%u",
			 other[0] ? "," : "", p->nq_if - 1);
	snprintf(buf + n, len - (size_t)n, "socket%s on queue%s %s%s: queue%s %s %s (no_socket)",
		 p->nq > 1 ? "s" : "", p->nq > 1 ? "s" : "", served, p->nq > 1 ? "" : " only",
		 strpbrk(other, ",-") ? "s" : "", other,
		 p->fallback_pass ? "go to the kernel stack" : "drop");
}

/* One socket on queue qid of the port, into p->q[i], registered in the
 * XSKMAP; q[0] also gets the port's TX ring. */
static int xport_open_queue(struct xport *p, uint32_t i, uint32_t qid,
			    const struct xsk_socket_config *cfg)
{
	struct xport_rxq *q = &p->q[i];
	int err, key = (int)qid;

	q->queue = qid;
	q->fd = -1;
	/* A socket on this queue that just closed (a daemon restarting on its
	 * interfaces, systemd's Restart=) is freed by the kernel in deferred
	 * work: its queue stays busy for a few milliseconds. */
	for (int tries = 0;; tries++) {
		err = xsk_socket__create_shared(&q->xsk, p->ifname, qid, p->umem->xu, &q->rx,
						i ? NULL : &p->tx, &q->fq, &q->cq, cfg);
		if (err != -EBUSY || tries == 50)
			break;
		usleep(20000);
	}
	if (err) {
		q->xsk = NULL;
		pr_err("%s: AF_XDP socket on queue %u: %s\n", p->ifname, qid, strerror(-err));
		return err;
	}
	q->fd = xsk_socket__fd(q->xsk);
	err = bpf_map_update_elem(bpf_map__fd(p->skel->maps.xsks_map), &key, &q->fd, 0);
	if (err) {
		err = -errno;
		pr_err("%s: insert socket of queue %u into XSKMAP: %s\n", p->ifname, qid,
		       strerror(-err));
	}
	return err;
}

static void xport_close_queues(struct xport *p)
{
	for (uint32_t i = p->nq; i-- > 0;)
		if (p->q[i].xsk)
			xsk_socket__delete(p->q[i].xsk);
	free(p->q);
	p->q = NULL;
	p->nq = 0;
}

static int xport_ctl_open(struct xport *p);
static void xport_ctl_close(struct xport *p);

/* Before load: the fast path in, and the switch's shared maps reused. */
static int xport_fwd_prepare(struct xport *p, const struct xport_opts *o)
{
	struct l2cc_xdp_bpf *sk = p->skel;
	int err = 0;

	sk->rodata->cfg_fwd = 1;
	p->fwd = true;
	if (o->fwd_share && o->fwd_share->fwd) {
		err = bpf_map__reuse_fd(sk->maps.fwd_fdb, xport_fwd_fdb_fd(o->fwd_share));
		if (!err)
			err = bpf_map__reuse_fd(sk->maps.fwd_devs, xport_fwd_devs_fd(o->fwd_share));
	} else if (o->fwd_fdb_max) {
		err = bpf_map__set_max_entries(sk->maps.fwd_fdb, o->fwd_fdb_max);
	}
	if (err)
		pr_err("%s: share the XDP forwarding maps: %s\n", p->ifname, strerror(-err));
	return err;
}

int xport_open(struct xport **out, struct umem *u, const char *ifname,
	       const struct xport_opts *o)
{
	struct xsk_socket_config cfg = {
		.rx_size = o->ring_size,
		.tx_size = o->ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = 0,
		/* Only the UMEM's first socket passes these: the others bind with
		 * XDP_SHARED_UMEM and take its mode (nic.h). */
		.bind_flags = (o->zero_copy ? XDP_ZEROCOPY : XDP_COPY) | XDP_USE_NEED_WAKEUP,
	};
	struct xdp_options xo = {};
	socklen_t xolen = sizeof(xo);
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	struct xport *p;
	int err, nq_if, prog_fd;
	uint64_t mask;

	if (strlen(ifname) >= sizeof(p->ifname)) {
		pr_err("%s: interface name longer than %zu characters\n", ifname,
		       sizeof(p->ifname) - 1);
		return -ENAMETOOLONG;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p->ifname, ifname, strlen(ifname) + 1);
	p->umem = u;
	p->ring_size = o->ring_size;
	p->fd = -1;
	p->link_fd = -1;
	p->fallback_pass = o->fallback_pass;
	p->ifindex = if_nametoindex(ifname);
	if (!p->ifindex) {
		err = -errno;
		pr_err("%s: no such interface\n", ifname);
		goto err_free;
	}
	err = xport_link_info(p);
	if (err) {
		pr_err("%s: read MTU/MAC: %s\n", ifname, strerror(-err));
		goto err_free;
	}
	err = xport_clear_stale(ifname, p->ifindex);
	if (err)
		goto err_free;
	nq_if = xport_if_rx_queues(ifname);
	if (nq_if < 0) {
		err = nq_if;
		pr_err("%s: count the receive queues: %s\n", ifname, strerror(-err));
		goto err_free;
	}
	p->nq_if = (uint32_t)nq_if;
	err = xport_qsel_resolve(&o->rxq, p->nq_if, &mask);
	if (err) {
		char bad[160];

		xport_queues_fmt(mask, bad, sizeof(bad));
		pr_err("%s: has %u rx queue%s (0-%u), no queue %s\n", ifname, p->nq_if,
		       p->nq_if == 1 ? "" : "s", p->nq_if - 1, bad);
		goto err_free;
	}
	p->qmask = mask;
	p->q = calloc((size_t)__builtin_popcountll(mask), sizeof(*p->q));
	if (!p->q) {
		err = -ENOMEM;
		goto err_free;
	}

	p->skel = l2cc_xdp_bpf__open();
	if (!p->skel) {
		err = -errno;
		pr_err("%s: open XDP program: %s\n", ifname, strerror(-err));
		goto err_free;
	}
	p->skel->rodata->cfg_fallback = o->fallback_pass ? L2CC_XDP_FALLBACK_PASS
							 : L2CC_XDP_FALLBACK_DROP;
	err = o->fwd ? xport_fwd_prepare(p, o) : 0;
	if (!err)
		err = l2cc_xdp_bpf__load(p->skel);
	if (err) {
		pr_err("%s: load XDP program: %s\n", ifname, strerror(-err));
		goto err_skel;
	}
	/* Without it the daemon applies control frames itself, as before. */
	err = xport_ctl_open(p);
	if (err)
		pr_warn("%s: XDP control state: %s; control frames go to the daemon\n",
			ifname, strerror(-err));
	/* Ascending queues: q[0], the TX socket, is the lowest served. */
	for (uint32_t qid = 0; qid < 64; qid++) {
		if (!(mask & (1ull << qid)))
			continue;
		err = xport_open_queue(p, p->nq++, qid, &cfg);
		if (err)
			goto err_xsk;
	}
	p->fd = p->q[0].fd;
	/* One mode for all: the sockets after the UMEM's first take its own. */
	p->zero_copy = !getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &xo, &xolen) &&
		       (xo.flags & XDP_OPTIONS_ZEROCOPY);
	/* Fill the rings and put the sockets in the map before attaching, so
	 * the first frames find both a socket and buffers to land in. */
	xport_refill(p);
	/* Attach after the socket is in the map, so no frame meets an empty slot
	 * on a port that is meant to be ours. */
	prog_fd = bpf_program__fd(p->skel->progs.l2cc_xdp);
	p->xdp_skb = o->skb_mode;
	lopts.flags = o->skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	err = bpf_link_create(prog_fd, p->ifindex, BPF_XDP, &lopts);
	if (err < 0 && o->xdp_auto && !o->skb_mode) {
		/* A driver without native XDP (or refusing this MTU) still runs
		 * the program in generic mode, after the stack's skb is built. */
		p->native_err = -errno;
		p->xdp_skb = true;
		lopts.flags = XDP_FLAGS_SKB_MODE;
		err = bpf_link_create(prog_fd, p->ifindex, BPF_XDP, &lopts);
	}
	if (err < 0) {
		err = -errno;
		pr_err("%s: attach XDP program (%s mode): %s%s%s\n", ifname,
		       p->xdp_skb ? "skb" : "native", strerror(-err),
		       p->native_err ? "; native mode: " : "",
		       p->native_err ? strerror(-p->native_err) : "");
		goto err_xsk;
	}
	p->link_fd = err;
	*out = p;
	return 0;

err_xsk:
	xport_close_queues(p);
	xport_ctl_close(p);
err_skel:
	l2cc_xdp_bpf__destroy(p->skel);
err_free:
	free(p->q);
	free(p);
	return err;
}

void xport_close(struct xport *p)
{
	if (!p)
		return;
	/* Detach first so no frame is steered at a socket that is going away. */
	if (p->link_fd >= 0)
		close(p->link_fd);
	xport_close_queues(p);
	xport_ctl_close(p);
	l2cc_xdp_bpf__destroy(p->skel);
	free(p);
}

/* The socket after k, round the port's queues. */
static inline uint32_t xport_qnext(const struct xport *p, uint32_t k)
{
	return k + 1 >= p->nq ? 0 : k + 1;
}

/* Top up one queue's fill ring from the free pool. */
static uint32_t xport_refill_queue(struct xport *p, struct xport_rxq *q)
{
	struct umem *u = p->umem;
	uint32_t want, idx, i;

	want = xsk_prod_nb_free(&q->fq, p->ring_size);
	if (want > u->nfree)
		want = u->nfree;
	if (!want)
		return 0;
	if (xsk_ring_prod__reserve(&q->fq, want, &idx) != want)
		return 0;
	for (i = 0; i < want; i++)
		*xsk_ring_prod__fill_addr(&q->fq, idx + i) = umem_addr(u, u->free[--u->nfree]);
	xsk_ring_prod__submit(&q->fq, want);
	q->fill_out += want;
	p->fill_out += want;
	/* Copy mode never sets need_wakeup on the fill ring, but a driver in
	 * native zero-copy mode would: honour it either way. */
	if (xsk_ring_prod__needs_wakeup(&q->fq))
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return want;
}

uint32_t xport_refill(struct xport *p)
{
	uint32_t n = 0, i, k;

	if (!p->nq)
		return 0;
	/* When the pool runs short, the first ring served takes it all: a
	 * different one first each time. */
	k = p->fill_next;
	for (i = 0; i < p->nq; i++, k = xport_qnext(p, k))
		n += xport_refill_queue(p, &p->q[k]);
	p->fill_next = xport_qnext(p, p->fill_next);
	return n;
}

uint32_t xport_reclaim(struct xport *p)
{
	struct umem *u = p->umem;
	struct xsk_ring_cons *cq;
	uint32_t n, idx, i;

	/* Only q[0] transmits: the other completion rings stay empty. */
	if (!p->nq)
		return 0;
	cq = &p->q[0].cq;
	n = xsk_ring_cons__peek(cq, p->ring_size, &idx);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		u->free[u->nfree++] = umem_idx(u, *xsk_ring_cons__comp_addr(cq, idx + i));
	xsk_ring_cons__release(cq, n);
	p->tx_out -= n;
	return n;
}

uint32_t xport_rx_peek(struct xport *p, struct xdp_desc *descs, uint32_t max)
{
	uint32_t n = 0, i, k, got, idx;

	if (!p->nq)
		return 0;
	k = p->peek_first = p->rx_next;
	for (i = 0; i < p->nq; i++, k = xport_qnext(p, k)) {
		struct xport_rxq *q = &p->q[k];

		got = n < max ? xsk_ring_cons__peek(&q->rx, max - n, &idx) : 0;
		q->peeked = got;
		while (got--) {
			descs[n] = *xsk_ring_cons__rx_desc(&q->rx, idx++);
			/* In copy mode the kernel wrote the frame on the CPU that
			 * received it: the daemon's first read of its headers is a
			 * cache miss (perf: most of the parse's time was that one
			 * load). Asking for every frame of the batch now overlaps
			 * the misses instead of taking them one after another. */
			__builtin_prefetch(umem_data(p->umem, descs[n].addr));
			n++;
		}
	}
	p->rx_next = xport_qnext(p, p->rx_next);
	return n;
}

void xport_rx_done(struct xport *p, uint32_t taken)
{
	uint32_t i, k = p->peek_first, t;

	/* The peek's descriptors are the queues' in the order it visited
	 * them: the daemon took a prefix. */
	for (i = 0; i < p->nq; i++, k = xport_qnext(p, k)) {
		struct xport_rxq *q = &p->q[k];

		if (!q->peeked)
			continue;
		t = taken < q->peeked ? taken : q->peeked;
		if (q->peeked > t)
			xsk_ring_cons__cancel(&q->rx, q->peeked - t);
		if (t) {
			xsk_ring_cons__release(&q->rx, t);
			q->fill_out -= t;
			p->fill_out -= t;
			p->umem->held += t;
		}
		taken -= t;
		q->peeked = 0;
	}
}

int xport_kick(struct xport *p)
{
	uint32_t queued;
	int i;

	if (!p->tx_pending)
		return 0;
	/* Copy mode transmits at most 32 frames per sendto(), so a batch takes a
	 * few calls; the ring's consumer index says how far the kernel got. */
	for (i = 0; i < 64; i++) {
		queued = p->ring_size - xsk_prod_nb_free(&p->tx, p->ring_size);
		if (!queued || !xsk_ring_prod__needs_wakeup(&p->tx))
			break;
		p->kicks++;
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS || errno == EBUSY ||
			    errno == ENETDOWN)
				break;
			p->kick_errors++;
			return -errno;
		}
	}
	p->tx_pending = p->ring_size - xsk_prod_nb_free(&p->tx, p->ring_size);
	return 0;
}

static uint32_t xport_sink_space(void *ctx, uint32_t port)
{
	return xport_tx_space(((struct xport **)ctx)[port]);
}

static uint32_t xport_sink_size(void *ctx, uint32_t port)
{
	return ((struct xport **)ctx)[port]->ring_size;
}

static void xport_sink_put(void *ctx, uint32_t port, uint64_t addr, uint32_t len)
{
	xport_tx_one(((struct xport **)ctx)[port], addr, len);
}

static void xport_sink_flush(void *ctx, uint32_t port)
{
	struct xport *p = ((struct xport **)ctx)[port];

	if (p->tx_pending)
		xport_kick(p);
}

const struct dp_sink_ops xport_sink_ops = {
	.space = xport_sink_space,
	.size = xport_sink_size,
	.put = xport_sink_put,
	.flush = xport_sink_flush,
};

/* The XDP program's counters summed over the interface's queue slots and
 * CPUs: one batch lookup (the program keeps no separate totals, so each
 * frame costs it one map lookup). Only the slots of the queues the
 * interface had at start, and the last (queues past the map) when it has
 * that many: the time series reads this every tick, and all 65 slots of a
 * one-queue veth were most of an idle daemon's tick. q >= 0: that slot only. */
static int xport_qstat_sum(const struct xport *p, int q, uint64_t tot[L2CC_XDP_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), fd, err = 0;
	const uint32_t nslot = L2CC_XSKMAP_MAX + 1, vsz = sizeof(struct l2cc_xdp_qstat);
	uint32_t nq = p->nq_if && p->nq_if < L2CC_XSKMAP_MAX ? p->nq_if : nslot;
	uint32_t n = q < 0 ? nq : 1, count = n, *keys;
	struct l2cc_xdp_qstat *vals;
	__u32 out_batch;

	memset(tot, 0, sizeof(uint64_t) * L2CC_XDP_STAT_MAX);
	if (!p->skel)
		return -ENOTCONN;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	_Static_assert(sizeof(struct l2cc_xdp_qstat) % 8 == 0, "per-CPU values are 8-aligned");
	fd = bpf_map__fd(p->skel->maps.xdp_qstats);
	keys = calloc(n, sizeof(*keys));
	vals = calloc((size_t)n * ncpu, vsz);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	if (q >= 0) {
		keys[0] = (uint32_t)q;
		if (bpf_map_lookup_elem(fd, &keys[0], vals))
			err = -errno;
	} else if (bpf_map_lookup_batch(fd, NULL, &out_batch, keys, vals, &count, NULL) &&
		   errno != ENOENT) {
		/* No batch ops: one slot at a time. */
		err = 0;
		for (uint32_t k = 0; k < n && !err; k++) {
			keys[k] = k;
			if (bpf_map_lookup_elem(fd, &keys[k], vals + (size_t)k * ncpu))
				err = -errno;
		}
		count = n;
	}
	for (size_t i = 0; !err && i < (size_t)count * ncpu; i++)
		for (int f = 0; f < L2CC_XDP_STAT_MAX; f++)
			tot[f] += vals[i].cnt[f];
out:
	free(keys);
	free(vals);
	return err;
}

int xport_xdp_stats(struct xport *p, struct xport_xdp_stats *st)
{
	uint64_t tot[L2CC_XDP_STAT_MAX];
	int err = p->nq ? 0 : -ENOTCONN;

	memset(st, 0, sizeof(*st));
	/* The kernel keeps these per socket: the port's are the sum. */
	for (uint32_t i = 0; i < p->nq; i++) {
		struct xdp_statistics xs = {};
		socklen_t optlen = sizeof(xs);

		if (getsockopt(p->q[i].fd, SOL_XDP, XDP_STATISTICS, &xs, &optlen)) {
			err = -errno;
			continue;
		}
		st->rx_dropped += xs.rx_dropped;
		st->rx_invalid_descs += xs.rx_invalid_descs;
		st->tx_invalid_descs += xs.tx_invalid_descs;
		st->rx_ring_full += xs.rx_ring_full;
		st->rx_fill_ring_empty_descs += xs.rx_fill_ring_empty_descs;
		st->tx_ring_empty_descs += xs.tx_ring_empty_descs;
	}
	if (!xport_qstat_sum(p, -1, tot)) {
		st->prog_rx = tot[L2CC_XDP_RX];
		st->prog_redirect = tot[L2CC_XDP_REDIRECT];
		st->prog_no_socket = tot[L2CC_XDP_NO_SOCKET];
		st->prog_runt = tot[L2CC_XDP_RUNT];
		st->prog_ctrl = tot[L2CC_XDP_CTRL];
	}
	return err;
}

uint64_t xport_no_socket(const struct xport *p)
{
	uint64_t tot[L2CC_XDP_STAT_MAX];

	if (xport_qstat_sum(p, -1, tot))
		return 0;
	return tot[L2CC_XDP_NO_SOCKET];
}

int xport_queue_stats(const struct xport *p, uint32_t q, uint64_t *rx, uint64_t *no_socket)
{
	uint64_t tot[L2CC_XDP_STAT_MAX];
	int err;

	*rx = *no_socket = 0;
	if (!p->skel || q >= L2CC_XSKMAP_MAX)
		return -EINVAL;
	err = xport_qstat_sum(p, (int)q, tot);
	if (!err) {
		*rx = tot[L2CC_XDP_RX];
		*no_socket = tot[L2CC_XDP_NO_SOCKET];
	}
	return err;
}

/* ---- control frames applied in XDP ---------------------------------------- */

static void xport_ctl_close(struct xport *p)
{
	if (p->ctl_rb)
		ring_buffer__free(p->ctl_rb);
	p->ctl_rb = NULL;
	if (p->ctl)
		munmap((void *)p->ctl, p->ctl_len);
	p->ctl = NULL;
}

static int xport_bell_rang(void *ctx, void *data, size_t len)
{
	return 0;
}

static int xport_ctl_open(struct xport *p)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m;

	p->ctl_len = (sizeof(struct l2cc_xdp_ctl) + (size_t)pg - 1) & ~((size_t)pg - 1);
	m = mmap(NULL, p->ctl_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(p->skel->maps.xdp_ctl), 0);
	if (m == MAP_FAILED)
		return -errno;
	p->ctl = m;
	p->ctl_rb = ring_buffer__new(bpf_map__fd(p->skel->maps.xdp_ctl_bell),
				     xport_bell_rang, NULL, NULL);
	if (!p->ctl_rb) {
		int err = -errno;

		xport_ctl_close(p);
		return err;
	}
	return 0;
}

int xport_ctl_fd(const struct xport *p)
{
	return p->ctl ? bpf_map__fd(p->skel->maps.xdp_ctl_bell) : -1;
}

void xport_ctl_config(struct xport *p, uint32_t flags, uint64_t rate_bps)
{
	if (!p->ctl)
		return;
	/* Each field is read once per frame by XDP; a frame between the two
	 * stores sees the new flags with the old rate, which only a reload
	 * changes. */
	__atomic_store_n(&p->ctl->rate_bps, rate_bps, __ATOMIC_RELAXED);
	__atomic_store_n(&p->ctl->flags, flags, __ATOMIC_RELEASE);
}

bool xport_ctl_read(struct xport *p, struct l2cc_xdp_ctl *snap, uint64_t *seq_seen)
{
	volatile struct l2cc_xdp_ctl *c = p->ctl;

	if (!c)
		return false;
	/* Empty the bell first, so a frame applied after the seq read below
	 * rings it again. (A unit test's port has the state and no bell.) */
	if (p->ctl_rb)
		ring_buffer__consume(p->ctl_rb);
	/*
	 * The seqcount reader: XDP on another CPU bumps seq to odd, writes,
	 * and bumps it to even, both with full-barrier atomics. Reading seq
	 * (acquire), the fields, then seq again after an acquire fence, and
	 * taking the copy only when both reads agree and are even, gives a
	 * snapshot of one moment; a torn one is read again (XDP holds its
	 * lock for a few dozen instructions). Nothing new: one load.
	 */
	for (int tries = 0; tries < 64; tries++) {
		uint64_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE), s2;

		if (s1 == *seq_seen)
			return false;
		if (s1 & 1)
			continue;
		memcpy(snap, (const void *)c, sizeof(*snap));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
		if (s1 == s2) {
			snap->seq = s1;
			*seq_seen = s1;
			return true;
		}
	}
	return false;
}

void xport_no_socket_watch(struct xport *p, const char *name, uint64_t now)
{
	uint64_t n = xport_no_socket(p);
	char rest[160];

	if (n == p->nosock_seen)
		return;
	p->nosock_seen = n;
	if (p->nosock_warn_ns && now - p->nosock_warn_ns < XPORT_NOSOCK_WARN_NS)
		return;
	xport_queues_fmt(xport_low_mask(p->nq_if) & ~p->qmask, rest, sizeof(rest));
	pr_warn("%s (%s): %llu frame%s arrived on receive queues without a socket since %s "
		"(%llu in all; unserved queues: %s): they were %s; serve every queue with "
		"rx_queues = all, or steer the traffic away from them (ethtool -X %s)\n", name,
		p->ifname, (unsigned long long)(n - p->nosock_warned),
		n - p->nosock_warned == 1 ? "" : "s",
		p->nosock_warn_ns ? "the last warning" : "start", (unsigned long long)n,
		rest[0] ? rest : "none", p->fallback_pass ? "passed to the kernel" : "dropped",
		p->ifname);
	p->nosock_warned = n;
	p->nosock_warn_ns = now;
}

int xport_check(const struct umem *u, struct xport *const *ports, int nports)
{
	uint64_t sum = (uint64_t)u->nfree + u->held;
	int i;

	for (i = 0; i < nports; i++) {
		const struct xport *p = ports[i];
		uint64_t fill = 0;

		if (!p)
			continue;
		/* Each queue's ring holds its own frames: the port's count is
		 * their sum, or a frame went astray between two rings. */
		for (uint32_t k = 0; k < p->nq; k++)
			fill += p->q[k].fill_out;
		if (p->nq && fill != p->fill_out) {
			pr_err("frame conservation broken: %s's queues hold %llu frames in fill/RX "
			       "rings, the port counts %u\n", p->ifname, (unsigned long long)fill,
			       p->fill_out);
			return -EUCLEAN;
		}
		sum += p->fill_out + p->tx_out;
	}
	if (sum != u->nframes) {
		pr_err("frame conservation broken: free %u + held %u + ports = %llu != %u\n",
		       u->nfree, u->held, (unsigned long long)sum, u->nframes);
		return -EUCLEAN;
	}
	return 0;
}

/* Read or write /proc/sys/net/ipv6/conf/IF/disable_ipv6: the old value, or -errno. */
int xport_if_ipv6_disable(const char *ifname, int value)
{
	char path[96];
	FILE *f;
	int old = -1;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	f = fopen(path, "r+");
	if (!f)
		return -errno;
	if (fscanf(f, "%d", &old) != 1)
		old = -1;
	rewind(f);
	fprintf(f, "%d\n", value);
	if (fclose(f))
		return -errno;
	return old;
}

void xport_xdp_stats_emit(struct jw *w, const char *key, struct xport *p)
{
	struct xport_xdp_stats xs;

	xport_xdp_stats(p, &xs);
	jw_obj_begin(w, key);
	jw_u64(w, "rx_dropped", xs.rx_dropped);
	jw_u64(w, "rx_invalid_descs", xs.rx_invalid_descs);
	jw_u64(w, "tx_invalid_descs", xs.tx_invalid_descs);
	jw_u64(w, "rx_ring_full", xs.rx_ring_full);
	jw_u64(w, "rx_fill_ring_empty_descs", xs.rx_fill_ring_empty_descs);
	jw_u64(w, "tx_ring_empty_descs", xs.tx_ring_empty_descs);
	jw_u64(w, "prog_rx", xs.prog_rx);
	jw_u64(w, "prog_redirect", xs.prog_redirect);
	jw_u64(w, "prog_no_socket", xs.prog_no_socket);
	jw_u64(w, "prog_runt", xs.prog_runt);
	jw_u64(w, "prog_ctrl", xs.prog_ctrl);
	jw_u64(w, "kick_errors", p->kick_errors);
	jw_u64(w, "rx_queues", p->nq_if);
	jw_u64(w, "rx_queues_served", p->nq);
	/* Per queue of the interface: how RSS spreads the traffic, and
	 * where it finds no socket. */
	jw_arr_begin(w, "queues");
	for (uint32_t q = 0; q < p->nq_if && q < L2CC_XSKMAP_MAX; q++) {
		uint64_t rx, nosock;

		xport_queue_stats(p, q, &rx, &nosock);
		jw_obj_begin(w, NULL);
		jw_u64(w, "queue", q);
		jw_bool(w, "socket", !!(p->qmask & (1ull << q)));
		jw_u64(w, "rx", rx);
		jw_u64(w, "no_socket", nosock);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
}

/* ---- the fast path (forwarding = xdp) ------------------------------------- */

int xport_fwd_fdb_fd(const struct xport *p)
{
	return p && p->fwd ? bpf_map__fd(p->skel->maps.fwd_fdb) : -1;
}

int xport_fwd_devs_fd(const struct xport *p)
{
	return p && p->fwd ? bpf_map__fd(p->skel->maps.fwd_devs) : -1;
}

int xport_fwd_port(struct xport *p, const struct l2cc_fwd_port *pc)
{
	uint32_t zero = 0;

	if (!p->fwd)
		return -EOPNOTSUPP;
	return bpf_map_update_elem(bpf_map__fd(p->skel->maps.fwd_port), &zero, pc, 0) ? -errno : 0;
}

/* Sum over CPUs of a per-CPU array's u64 value at key (the fast path's
 * fwd_stats: one slot per counter). */
static int xport_percpu_u64(int map_fd, uint32_t key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u64 *vals;

	*sum = 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, vals))
		err = -errno;
	for (int i = 0; !err && i < ncpu; i++)
		*sum += vals[i];
	free(vals);
	return err;
}

int xport_fwd_stats(const struct xport *p, uint64_t st[L2CC_FWD_STAT_MAX])
{
	int err = 0;

	memset(st, 0, sizeof(*st) * L2CC_FWD_STAT_MAX);
	if (!p->fwd)
		return 0;
	for (uint32_t k = 0; k < L2CC_FWD_STAT_MAX && !err; k++)
		err = xport_percpu_u64(bpf_map__fd(p->skel->maps.fwd_stats), k, &st[k]);
	return err;
}

int xport_xdp_xmit_errors(const struct xport *p, uint64_t *n)
{
	struct ethtool_sset_info *ssi = NULL;
	struct ethtool_gstrings *gs = NULL;
	struct ethtool_stats *es = NULL;
	struct ifreq ifr = {};
	uint32_t cnt = 0;
	int fd, err = 0;
	bool found = false;

	*n = 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", p->ifname);
	ssi = calloc(1, sizeof(*ssi) + sizeof(uint32_t));
	if (!ssi) {
		err = -ENOMEM;
		goto out;
	}
	ssi->cmd = ETHTOOL_GSSET_INFO;
	ssi->sset_mask = 1ull << ETH_SS_STATS;
	ifr.ifr_data = (void *)ssi;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto out;
	}
	cnt = ssi->sset_mask ? ssi->data[0] : 0;
	gs = calloc(1, sizeof(*gs) + (size_t)cnt * ETH_GSTRING_LEN);
	es = calloc(1, sizeof(*es) + (size_t)cnt * sizeof(uint64_t));
	if (!gs || !es) {
		err = -ENOMEM;
		goto out;
	}
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = cnt;
	ifr.ifr_data = (void *)gs;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto out;
	}
	es->cmd = ETHTOOL_GSTATS;
	es->n_stats = cnt;
	ifr.ifr_data = (void *)es;
	if (ioctl(fd, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto out;
	}
	/* veth: tx_queue_<n>_xdp_xmit_errors, one per queue. */
	for (uint32_t i = 0; i < cnt && i < es->n_stats; i++) {
		char name[ETH_GSTRING_LEN + 1];
		size_t l;

		memcpy(name, gs->data + (size_t)i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = '\0';
		l = strlen(name);
		if (!strncmp(name, "tx_queue_", 9) && l > 16 &&
		    !strcmp(name + l - 16, "_xdp_xmit_errors")) {
			*n += es->data[i];
			found = true;
		}
	}
	if (!found)
		err = -EOPNOTSUPP;
out:
	free(ssi);
	free(gs);
	free(es);
	close(fd);
	return err;
}

/* One RTM_GETLINK of ifindex (in the namespace netnsid names, -1: ours);
 * the attributes of the reply in tb[] (pointers into buf). 0 or -errno. */
static int xport_nl_getlink(int fd, int ifindex, int netnsid, char *buf, size_t len,
			    struct rtattr *tb[IFLA_MAX + 1])
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		char attrs[16];
	} req = {};
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct rtattr *rta;
	ssize_t n;
	int alen;

	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.ifi.ifi_family = AF_UNSPEC;
	req.ifi.ifi_index = ifindex;
	if (netnsid >= 0) {
		rta = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.nh.nlmsg_len));
		rta->rta_type = IFLA_TARGET_NETNSID;
		rta->rta_len = RTA_LENGTH(sizeof(int32_t));
		memcpy(RTA_DATA(rta), &netnsid, sizeof(int32_t));
		req.nh.nlmsg_len = NLMSG_ALIGN(req.nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	}
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, len, 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(nh, (size_t)n))
		return -EPROTO;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(nh);

		return e->error ? e->error : -EPROTO;
	}
	if (nh->nlmsg_type != RTM_NEWLINK)
		return -EPROTO;
	memset(tb, 0, sizeof(*tb) * (IFLA_MAX + 1));
	alen = (int)IFLA_PAYLOAD(nh);
	for (rta = IFLA_RTA(NLMSG_DATA(nh)); RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen))
		if (rta->rta_type <= IFLA_MAX)
			tb[rta->rta_type] = rta;
	return 0;
}

/* The nested attribute type of rta, or NULL. */
static struct rtattr *xport_nested(struct rtattr *rta, unsigned short type)
{
	int len = (int)RTA_PAYLOAD(rta);

	for (struct rtattr *a = RTA_DATA(rta); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == type)
			return a;
	return NULL;
}

int xport_if_link(const char *ifname)
{
	struct rtattr *tb[IFLA_MAX + 1];
	char buf[16384];
	int fd, err, index = (int)if_nametoindex(ifname);

	if (!index)
		return -errno;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	err = xport_nl_getlink(fd, index, -1, buf, sizeof(buf), tb);
	/* No IFLA_LINK: the device is its own link (sysfs's iflink says the same). */
	if (!err && tb[IFLA_LINK])
		memcpy(&index, RTA_DATA(tb[IFLA_LINK]), sizeof(index));
	close(fd);
	return err ? err : index;
}

int xport_if_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = {};
	int err = nic_ioctl(ifname, SIOCGIFHWADDR, &ifr);

	if (!err)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return err;
}

int xport_peer_xdp(const struct xport *p)
{
	struct rtattr *tb[IFLA_MAX + 1], *kind, *at;
	char buf[16384];
	int fd, err, peer, netnsid = -1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	err = xport_nl_getlink(fd, p->ifindex, -1, buf, sizeof(buf), tb);
	if (err)
		goto out;
	kind = tb[IFLA_LINKINFO] ? xport_nested(tb[IFLA_LINKINFO], IFLA_INFO_KIND) : NULL;
	if (!kind || strcmp(RTA_DATA(kind), "veth") || !tb[IFLA_LINK]) {
		err = -EOPNOTSUPP;
		goto out;
	}
	memcpy(&peer, RTA_DATA(tb[IFLA_LINK]), sizeof(peer));
	if (tb[IFLA_LINK_NETNSID])
		memcpy(&netnsid, RTA_DATA(tb[IFLA_LINK_NETNSID]), sizeof(netnsid));
	err = xport_nl_getlink(fd, peer, netnsid, buf, sizeof(buf), tb);
	if (err)
		goto out;
	at = tb[IFLA_XDP] ? xport_nested(tb[IFLA_XDP], IFLA_XDP_ATTACHED) : NULL;
	err = at && *(uint8_t *)RTA_DATA(at) != XDP_ATTACHED_NONE;
out:
	close(fd);
	return err;
}
