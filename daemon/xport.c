// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "xport"
#include "xport.h"
#include "nic.h"
#include "json.h"
#include "log.h"
#include "l2cc_shared.h"
#include "l2cc_xdp.skel.h"

#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
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
	int err, key, prog_fd;

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

	p->skel = l2cc_xdp_bpf__open();
	if (!p->skel) {
		err = -errno;
		pr_err("%s: open XDP program: %s\n", ifname, strerror(-err));
		goto err_free;
	}
	p->skel->rodata->cfg_fallback = o->fallback_pass ? L2CC_XDP_FALLBACK_PASS
							 : L2CC_XDP_FALLBACK_DROP;
	err = l2cc_xdp_bpf__load(p->skel);
	if (err) {
		pr_err("%s: load XDP program: %s\n", ifname, strerror(-err));
		goto err_skel;
	}
	/* A socket on this queue that just closed (a daemon restarting on its
	 * interfaces, systemd's Restart=) is freed by the kernel in deferred
	 * work: its queue stays busy for a few milliseconds. */
	for (int tries = 0;; tries++) {
		err = xsk_socket__create_shared(&p->xsk, ifname, o->queue, u->xu, &p->rx, &p->tx,
						&p->fq, &p->cq, &cfg);
		if (err != -EBUSY || tries == 50)
			break;
		usleep(20000);
	}
	if (err) {
		pr_err("%s: AF_XDP socket on queue %u: %s\n", ifname, o->queue, strerror(-err));
		goto err_skel;
	}
	p->fd = xsk_socket__fd(p->xsk);
	p->zero_copy = !getsockopt(p->fd, SOL_XDP, XDP_OPTIONS, &xo, &xolen) &&
		       (xo.flags & XDP_OPTIONS_ZEROCOPY);
	key = o->queue;
	err = bpf_map_update_elem(bpf_map__fd(p->skel->maps.xsks_map), &key, &p->fd, 0);
	if (err) {
		err = -errno;
		pr_err("%s: insert socket into XSKMAP: %s\n", ifname, strerror(-err));
		goto err_xsk;
	}
	/* Fill the ring and put the socket in the map before attaching, so the
	 * first frames find both a socket and buffers to land in. */
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
	xsk_socket__delete(p->xsk);
err_skel:
	l2cc_xdp_bpf__destroy(p->skel);
err_free:
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
	xsk_socket__delete(p->xsk);
	l2cc_xdp_bpf__destroy(p->skel);
	free(p);
}

uint32_t xport_refill(struct xport *p)
{
	struct umem *u = p->umem;
	uint32_t want, idx, i;

	want = xsk_prod_nb_free(&p->fq, p->ring_size);
	if (want > u->nfree)
		want = u->nfree;
	if (!want)
		return 0;
	if (xsk_ring_prod__reserve(&p->fq, want, &idx) != want)
		return 0;
	for (i = 0; i < want; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = umem_addr(u, u->free[--u->nfree]);
	xsk_ring_prod__submit(&p->fq, want);
	p->fill_out += want;
	/* Copy mode never sets need_wakeup on the fill ring, but a driver in
	 * native zero-copy mode would: honour it either way. */
	if (xsk_ring_prod__needs_wakeup(&p->fq))
		recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return want;
}

uint32_t xport_reclaim(struct xport *p)
{
	struct umem *u = p->umem;
	uint32_t n, idx, i;

	n = xsk_ring_cons__peek(&p->cq, p->ring_size, &idx);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		u->free[u->nfree++] = umem_idx(u, *xsk_ring_cons__comp_addr(&p->cq, idx + i));
	xsk_ring_cons__release(&p->cq, n);
	p->tx_out -= n;
	return n;
}

uint32_t xport_rx_peek(struct xport *p, struct xdp_desc *descs, uint32_t max)
{
	uint32_t n, idx, i;

	n = xsk_ring_cons__peek(&p->rx, max, &idx);
	for (i = 0; i < n; i++)
		descs[i] = *xsk_ring_cons__rx_desc(&p->rx, idx + i);
	return n;
}

void xport_rx_done(struct xport *p, uint32_t taken, uint32_t peeked)
{
	if (peeked > taken)
		xsk_ring_cons__cancel(&p->rx, peeked - taken);
	if (!taken)
		return;
	xsk_ring_cons__release(&p->rx, taken);
	p->fill_out -= taken;
	p->umem->held += taken;
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
	.put = xport_sink_put,
	.flush = xport_sink_flush,
};

int xport_xdp_stats(struct xport *p, struct xport_xdp_stats *st)
{
	struct xdp_statistics xs = {};
	socklen_t optlen = sizeof(xs);
	int ncpu, map_fd, i, k, err = 0;
	__u64 *vals;

	memset(st, 0, sizeof(*st));
	if (getsockopt(p->fd, SOL_XDP, XDP_STATISTICS, &xs, &optlen) == 0) {
		st->rx_dropped = xs.rx_dropped;
		st->rx_invalid_descs = xs.rx_invalid_descs;
		st->tx_invalid_descs = xs.tx_invalid_descs;
		st->rx_ring_full = xs.rx_ring_full;
		st->rx_fill_ring_empty_descs = xs.rx_fill_ring_empty_descs;
		st->tx_ring_empty_descs = xs.tx_ring_empty_descs;
	} else {
		err = -errno;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return err;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	map_fd = bpf_map__fd(p->skel->maps.xdp_stats);
	for (k = 0; k < L2CC_XDP_STAT_MAX; k++) {
		__u64 sum = 0;

		if (bpf_map_lookup_elem(map_fd, &k, vals))
			continue;
		for (i = 0; i < ncpu; i++)
			sum += vals[i];
		switch (k) {
		case L2CC_XDP_RX: st->prog_rx = sum; break;
		case L2CC_XDP_REDIRECT: st->prog_redirect = sum; break;
		case L2CC_XDP_NO_SOCKET: st->prog_no_socket = sum; break;
		case L2CC_XDP_RUNT: st->prog_runt = sum; break;
		}
	}
	free(vals);
	return err;
}

int xport_check(const struct umem *u, struct xport *const *ports, int nports)
{
	uint64_t sum = (uint64_t)u->nfree + u->held;
	int i;

	for (i = 0; i < nports; i++)
		if (ports[i])
			sum += ports[i]->fill_out + ports[i]->tx_out;
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
	jw_u64(w, "kick_errors", p->kick_errors);
	jw_obj_end(w);
}
