// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostd as a daemon: the datapath core (hd_path.c) over two AF_XDP ports
 * that share one UMEM (the host stack's veth peer and the uplink), the
 * event loop and the control socket. hd_poll() is one pass: reclaim
 * completions, refill the fill rings, hand each port's received frames to
 * the core, then let the core run its timers and transmit.
 */
#define LOG_SUBSYS "hostd"
#include "hostd_private.h"
#include "drun.h"
#include "link.h"
#include "ifsave.h"
#include "log.h"
#include "loop.h"
#include "wire.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define HD_RX_BATCH_MAX 256

static bool hd_rx_up(struct hd *h)
{
	struct xdp_desc d[HD_RX_BATCH_MAX];
	uint32_t n, i;

	n = xport_rx_peek(h->up, d, (uint32_t)h->cfg->batch);
	for (i = 0; i < n; i++)
		if (!hd_rx_up_frame(h, d[i].addr, d[i].len))
			break;
	xport_rx_done(h->up, i);
	/* The host port's ring is full: what is left waits in the uplink's
	 * RX ring for it to drain (hd_next_deadline comes back for it). */
	h->up_held = i < n;
	if (h->up_held)
		h->st.rx_holds++;
	return i > 0;
}

static bool hd_rx_host(struct hd *h)
{
	struct xdp_desc d[HD_RX_BATCH_MAX];
	uint32_t n;

	n = xport_rx_peek(h->host, d, (uint32_t)h->cfg->batch);
	for (uint32_t i = 0; i < n; i++)
		hd_rx_host_frame(h, d[i].addr, d[i].len);
	xport_rx_done(h->host, n);
	return n > 0;
}

/* What the control socket asked for since the last pass. */
static void hd_apply_requests(struct hd *h)
{
	for (uint32_t i = 0; i < h->nreqs; i++) {
		const struct hd_req *r = &h->reqs[i];
		struct flow *f = flow_by_ref(h->flows, r->flow, r->gen);

		/* The flow may have ended since: nothing to set. */
		if (r->type == HD_REQ_SET_RATE && f)
			hd_set_flow_rate(h, f, r->rate_bps, r->ipd);
	}
	h->nreqs = 0;
}

/* What netlink said since the last pass (hd_on_link). */
static void hd_apply_links(struct hd *h)
{
	static const char *const name[2] = { "host port", "uplink" };

	h->link_dirty = false;
	for (int i = 0; i < 2; i++) {
		const char *ifname = i == HD_PORT_UP ? h->cfg->uplink : h->cfg->host_port;

		if (h->link_up[i] && (h->link_fell[i] || !h->link_seen[i])) {
			uint64_t d = h->hst.drop[HD_DROP_LINK_DOWN];

			hd_port_link(h, i, false);
			pr_warn("%s %s: link down (operstate %s)%s\n", name[i], ifname,
				lnk_operstate_name(h->operstate[i]),
				i == HD_PORT_UP ? ": the flows' queues are dropped, nothing is sent "
						  "until it comes back" : ": frames for the host are dropped");
			if (i == HD_PORT_UP)
				pr_info("uplink %s: %llu queued frames dropped\n", ifname,
					(unsigned long long)(h->hst.drop[HD_DROP_LINK_DOWN] - d));
		}
		h->link_fell[i] = false;
		if (!h->link_up[i] && h->link_seen[i]) {
			hd_port_link(h, i, true);
			pr_info("%s %s: link up\n", name[i], ifname);
		}
	}
}

bool hd_poll(struct hd *h)
{
	bool work = false;

	h->now = loop_now_ns();
	h->loops++;
	if (h->nreqs)
		hd_apply_requests(h);
	if (h->link_dirty)
		hd_apply_links(h);
	xport_reclaim(h->host);
	xport_reclaim(h->up);
	xport_refill(h->host);
	xport_refill(h->up);
	work |= hd_rx_up(h);
	work |= hd_rx_host(h);
	work |= hd_pass(h);
	if (drun_every(&h->next_stats_ns, h->now, h->cfg->stats_interval))
		hd_stats_tick(h);
	return work;
}

uint64_t hd_next_deadline(const struct hd *h)
{
	uint64_t d = hd_core_deadline(h);

	if (h->cfg->stats_interval && h->next_stats_ns < d)
		d = h->next_stats_ns;
	/* Completions do not wake epoll: come back to reclaim when low. */
	if ((h->up->tx_out || h->host->tx_out) && h->umem->nfree < h->umem->nframes / 4 &&
	    h->now + 200000 < d)
		d = h->now + 200000;
	/* Frames held in the uplink ring wait for the host ring to drain. */
	if (h->up_held && h->now + 50000 < d)
		d = h->now + 50000;
	return d;
}

/* ---- lifecycle ---------------------------------------------------------- */

static unsigned int hd_iflink(const char *ifname)
{
	int link = xport_if_link(ifname);

	return link > 0 ? (unsigned int)link : 0;
}

/*
 * MTU of the host stack's interface: the veth peer of host_port when it is
 * in our namespace, else host_port's own MTU. iflink is an index in the
 * peer's namespace, so the interface with that index here is the peer only
 * if its own iflink points back at host_port.
 */
static int hd_host_mtu(const char *host_port, char *peer, size_t peerlen)
{
	unsigned int self = if_nametoindex(host_port), link = hd_iflink(host_port);
	char name[IF_NAMESIZE];

	if (link && link != self && if_indextoname(link, name) && hd_iflink(name) == self) {
		snprintf(peer, peerlen, "%s", name);
		return xport_if_mtu(name);
	}
	snprintf(peer, peerlen, "%s", host_port);
	return xport_if_mtu(host_port);
}

static uint32_t hd_frame_size(const struct hd_cfg *cfg)
{
	int mtu = xport_if_mtu(cfg->uplink);

	if (cfg->frame_size)
		return (uint32_t)cfg->frame_size;
	return mtu + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN > 2048 - XPORT_UMEM_HEADROOM ? 4096 : 2048;
}

/* lnk's callback, from the event loop between two passes; ports are
 * indexed as the sink's (HD_PORT_HOST, HD_PORT_UP). */
static void hd_on_link(void *ctx, int port, bool up, uint8_t operstate)
{
	struct hd *h = ctx;

	h->link_seen[port] = up;
	h->link_fell[port] |= !up;
	h->operstate[port] = operstate;
	h->link_dirty = true;
}

static void hd_link_readable(void *ctx, int fd, uint32_t events)
{
	struct hd *h = ctx;

	lnk_process(h->lnk);
}

static int hd_link_init(struct hd *h)
{
	int ifindex[2] = { [HD_PORT_HOST] = h->host->ifindex, [HD_PORT_UP] = h->up->ifindex };
	int err = lnk_init(&h->lnk, ifindex, 2, hd_on_link, h);

	if (err)
		return err;
	for (int i = 0; i < 2; i++) {
		h->link_up[i] = h->link_seen[i] = lnk_up(h->lnk, i);
		h->operstate[i] = lnk_operstate(h->lnk, i);
		if (i == HD_PORT_UP) {
			hd_xdp_ctl_config(h);
			err = xport_ctl_fd(h->up) < 0 ? 0 :
			      loop_add_fd(h->loop, xport_ctl_fd(h->up), EPOLLIN, NULL, NULL);
			if (err)
				return err;
		}
		if (!h->link_up[i])
			pr_warn("%s: link down at start (operstate %s): forwarding once it comes up\n",
				i == HD_PORT_UP ? h->cfg->uplink : h->cfg->host_port,
				lnk_operstate_name(h->operstate[i]));
	}
	return loop_add_fd(h->loop, lnk_fd(h->lnk), EPOLLIN, hd_link_readable, h);
}

void hd_destroy(struct hd *h)
{
	struct xport *host, *up;
	struct umem *umem;
	struct loop *loop;

	if (!h)
		return;
	hd_ctl_fini(h);
	if (h->lnk) {
		loop_del_fd(h->loop, lnk_fd(h->lnk));
		lnk_fini(h->lnk);
		h->lnk = NULL;
	}
	ifsave_ipv6_restore(h->cfg->runtime_dir, h->cfg->host_port, h->ipv6_host);
	ifsave_ipv6_restore(h->cfg->runtime_dir, h->cfg->uplink, h->ipv6_up);
	nic_pause_end(&h->nic[HD_PORT_HOST].pause, h->cfg->runtime_dir, h->cfg->host_port);
	nic_pause_end(&h->nic[HD_PORT_UP].pause, h->cfg->runtime_dir, h->cfg->uplink);
	host = h->host;
	up = h->up;
	umem = h->umem;
	loop = h->loop;
	/* Frames the core holds go back to the pool, then the sockets go
	 * (before the UMEM they are bound to). */
	hd_core_destroy(h);
	xport_close(host);
	xport_close(up);
	umem_destroy(umem);
	loop_destroy(loop);
}

static int hd_open_port(const struct hd_cfg *cfg, struct umem *umem, struct xport **xp,
			const char *ifname, const char *what, bool zero_copy)
{
	struct xport_opts o = {
		.ring_size = (uint32_t)cfg->ring_size,
		.skb_mode = cfg->xdp_mode == HD_XDP_SKB,
		.xdp_auto = cfg->xdp_mode == HD_XDP_AUTO,
		.zero_copy = zero_copy,
	};
	char desc[256];
	int err = xport_qsel_parse(cfg->rx_queues, &o.rxq);

	if (!err)
		err = xport_open(xp, umem, ifname, &o);
	if (err) {
		pr_err("cannot open %s: %s\n", ifname, strerror(-err));
		return err;
	}
	xport_queues_describe(*xp, desc, sizeof(desc));
	if ((*xp)->nq < (*xp)->nq_if)
		pr_warn("%s %s: %s\n", what, ifname, desc);
	else
		pr_info("%s %s: %s\n", what, ifname, desc);
	return 0;
}

/* Fill rings for the receive queues past the first of each port. */
static uint32_t hd_extra_fill_frames(const struct hd_cfg *cfg)
{
	struct xport_qsel sel;
	uint64_t n;

	if (xport_qsel_parse(cfg->rx_queues, &sel))
		return 0;
	n = (uint64_t)(xport_rx_sockets(cfg->host_port, &sel) - 1 +
		       xport_rx_sockets(cfg->uplink, &sel) - 1) * cfg->ring_size;
	return n > (1u << 20) ? 1u << 20 : (uint32_t)n;
}

/* Once a second: frames lost on queues without a socket get a warning
 * (rate-limited per port by xport_no_socket_watch). */
static void hd_nosock_tick(void *ctx, uint64_t now)
{
	struct hd *h = ctx;

	xport_no_socket_watch(h->host, "host_port", now);
	xport_no_socket_watch(h->up, "uplink", now);
	loop_timer_set(h->nosock_timer, now + 1000000000ull);
}

/* Both ports zero-copy or both copy: they share one UMEM (nic.h). */
static int hd_zc_plan(const struct hd_cfg *cfg, struct nic_port *np)
{
	const char *names[2] = { "host_port", "uplink" };
	const char *ifnames[2] = { cfg->host_port, cfg->uplink };
	struct xport_qsel sel = { .all = true };
	uint32_t queues[2];
	bool skb = cfg->xdp_mode == HD_XDP_SKB;

	/* Probed where each port's first socket binds. */
	xport_qsel_parse(cfg->rx_queues, &sel);
	queues[0] = queues[1] = xport_qsel_lowest(&sel);
	const bool skbs[2] = { skb, skb };

	return nic_zc_plan(cfg->zero_copy, names, ifnames, queues, skbs, 2, np);
}

int hd_create(struct hd **out, struct hd_cfg *cfg)
{
	struct xport *ports[2] = { NULL, NULL };
	struct nic_port np[2];
	struct hd_ports_info pi = { 0 };
	struct umem *umem = NULL;
	struct loop *loop = NULL;
	struct dp_sink sink;
	struct hd *h = NULL;
	char peer[IF_NAMESIZE];
	int err, host_mtu, up_mtu;
	bool zc;
	uint32_t nframes, room;

	up_mtu = xport_if_mtu(cfg->uplink);
	host_mtu = hd_host_mtu(cfg->host_port, peer, sizeof(peer));
	if (up_mtu < 0 || host_mtu < 0) {
		err = up_mtu < 0 ? up_mtu : host_mtu;
		pr_err("%s: %s\n", up_mtu < 0 ? cfg->uplink : cfg->host_port, strerror(-err));
		return err;
	}
	if (cfg->tag && host_mtu + L2CC_TAG_LEN > up_mtu) {
		pr_err("the host's MTU (%s: %d) leaves no room for the %d-byte l2cc tag on the "
		       "uplink %s (MTU %d): set `ip link set %s mtu %d`, or raise the uplink's "
		       "and the fabric's MTU to %d (or set tag = no)\n",
		       peer, host_mtu, L2CC_TAG_LEN, cfg->uplink, up_mtu, peer,
		       up_mtu - L2CC_TAG_LEN, host_mtu + L2CC_TAG_LEN);
		return -EMSGSIZE;
	}
	pi.host_mtu = (uint32_t)host_mtu;
	pi.host_mac_known = strcmp(peer, cfg->host_port) && !xport_if_mac(peer, pi.host_mac);
	pi.max_frame = (uint32_t)up_mtu + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN;
	err = loop_create(&loop);
	if (err)
		goto err;
	err = loop_catch_signals(loop);
	if (err)
		goto err;
	/* Fill and TX rings of both ports, the FIFOs, and the flows' queues:
	 * by default room for 8192 more frames (16 MB at 2K), shared. */
	nframes = cfg->umem_frames ? (uint32_t)cfg->umem_frames
				   : (uint32_t)(4 * cfg->ring_size + cfg->pass_queue +
						HD_NOTIFY_CAP + 16 + 8192) +
					     hd_extra_fill_frames(cfg);
	err = umem_create(&umem, nframes, hd_frame_size(cfg), (uint32_t)cfg->ring_size);
	if (err) {
		pr_err("UMEM of %u frames: %s\n", nframes, strerror(-err));
		goto err;
	}
	room = umem->frame_size - XPORT_UMEM_HEADROOM;
	if (pi.max_frame > room) {
		pr_err("uplink %s: MTU %d does not fit a %u-byte UMEM frame; lower it to %u\n",
		       cfg->uplink, up_mtu, umem->frame_size,
		       room - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN);
		err = -EMSGSIZE;
		goto err;
	}
	err = hd_zc_plan(cfg, np);
	if (err < 0)
		goto err;
	zc = err == 1;
	err = hd_open_port(cfg, umem, &ports[HD_PORT_HOST], cfg->host_port, "host_port", zc);
	if (err)
		goto err;
	nic_log_port("host_port", ports[HD_PORT_HOST], &np[HD_PORT_HOST]);
	err = hd_open_port(cfg, umem, &ports[HD_PORT_UP], cfg->uplink, "uplink", zc);
	if (err)
		goto err;
	nic_log_port("uplink", ports[HD_PORT_UP], &np[HD_PORT_UP]);
	memcpy(pi.up_mac, ports[HD_PORT_UP]->mac, 6);
	/* The sink's ports are h->xps, filled in once the core exists. */
	sink = (struct dp_sink){ .ops = &xport_sink_ops, .ctx = NULL };
	err = hd_core_create(&h, cfg, umem, &sink, &pi, loop_now_ns());
	if (err)
		goto err;
	h->xps[HD_PORT_HOST] = h->host = ports[HD_PORT_HOST];
	h->xps[HD_PORT_UP] = h->up = ports[HD_PORT_UP];
	h->sink.ctx = h->xps;
	h->loop = loop;
	loop = NULL;
	/* The kernel's own IPv6 chatter on our ports would reach the host
	 * stack or the switch as if someone had sent it. */
	h->ipv6_host = ifsave_ipv6_off(cfg->runtime_dir, cfg->host_port);
	h->ipv6_up = ifsave_ipv6_off(cfg->runtime_dir, cfg->uplink);
	memcpy(h->nic, np, sizeof(np));
	nic_pause_begin(&h->nic[HD_PORT_HOST].pause, cfg->runtime_dir, "host_port", cfg->host_port,
			cfg->nic_pause);
	nic_pause_begin(&h->nic[HD_PORT_UP].pause, cfg->runtime_dir, "uplink", cfg->uplink,
			cfg->nic_pause);
	/* Every queue's socket wakes the loop; hd_poll takes from all. */
	err = 0;
	for (uint32_t q = 0; q < h->host->nq && !err; q++)
		err = loop_add_fd(h->loop, h->host->q[q].fd, EPOLLIN | EPOLLET, NULL, NULL);
	for (uint32_t q = 0; q < h->up->nq && !err; q++)
		err = loop_add_fd(h->loop, h->up->q[q].fd, EPOLLIN | EPOLLET, NULL, NULL);
	if (!err)
		err = loop_timer_create(h->loop, hd_nosock_tick, h, &h->nosock_timer);
	if (err)
		goto err_h;
	loop_timer_set(h->nosock_timer, h->now + 1000000000ull);
	err = hd_link_init(h);
	if (err) {
		pr_err("link events: %s\n", strerror(-err));
		goto err_h;
	}
	h->next_stats_ns = h->now;
	err = hd_ctl_init(h);
	if (err)
		goto err_h;
	pr_info("%s -> %s at %llu bit/s, host MTU %d (%s), uplink MTU %d\n",
		cfg->host_port, cfg->uplink, (unsigned long long)cfg->link_rate, host_mtu, peer,
		up_mtu);
	*out = h;
	return 0;
err_h:
	hd_destroy(h);
	return err;
err:
	xport_close(ports[HD_PORT_HOST]);
	xport_close(ports[HD_PORT_UP]);
	umem_destroy(umem);
	loop_destroy(loop);
	return err;
}
