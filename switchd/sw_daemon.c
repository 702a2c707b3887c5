// SPDX-License-Identifier: BSD-2-Clause
/*
 * switchd as a daemon: the datapath core (switch.c) over AF_XDP ports that
 * share one UMEM, the event loop, the control socket. sw_poll() is one
 * pass: reclaim completions, refill fill rings, hand each port's received
 * frames to the core, then let the core transmit.
 */
#define LOG_SUBSYS "switch"
#include "switch_private.h"
#include "drun.h"
#include "link.h"
#include "ifsave.h"
#include "log.h"
#include "loop.h"
#include "wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define SW_RX_BATCH_MAX 256
#define SW_AGE_INTERVAL_NS 1000000000ull

static bool sw_rx_port(struct sw *s, struct sw_port *p)
{
	struct xdp_desc d[SW_RX_BATCH_MAX];
	uint32_t n, i;

	n = xport_rx_peek(p->xp, d, s->cfg->batch);
	for (i = 0; i < n; i++)
		if (!sw_rx_frame(s, p, d[i].addr, d[i].len))
			break;
	xport_rx_done(p->xp, i);
	if (i < n)
		p->st.rx_holds++;
	/* A held ring is not work: sleep until the buffer drains (the RX fd
	 * is edge-triggered, so the frames waiting there do not spin us). */
	return i > 0;
}

/* What the control socket asked for since the last pass. */
static void sw_apply_requests(struct sw *s)
{
	for (uint32_t i = 0; i < s->nreqs; i++) {
		const struct sw_req *r = &s->reqs[i];

		if (r->type == SW_REQ_MARK)
			s->ports[r->port].mark_pending = r->n;
	}
	s->nreqs = 0;
}

/* What netlink said since the last pass (sw_on_link), applied at a pass's
 * start like the control socket's requests. */
static void sw_apply_links(struct sw *s)
{
	s->link_dirty = false;
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		if (p->link_up && (p->link_fell || !p->link_seen)) {
			uint64_t drops = p->st.link_down_drops, flushed = p->st.fdb_flushed;

			sw_port_link(s, p, false);
			pr_warn("port %s (%s): link down (operstate %s): %llu queued frames dropped, "
				"%llu addresses flushed\n", p->cfg->name, p->cfg->ifname,
				lnk_operstate_name(p->operstate),
				(unsigned long long)(p->st.link_down_drops - drops),
				(unsigned long long)(p->st.fdb_flushed - flushed));
		}
		p->link_fell = false;
		if (!p->link_up && p->link_seen) {
			sw_port_link(s, p, true);
			pr_info("port %s (%s): link up\n", p->cfg->name, p->cfg->ifname);
		}
	}
}

bool sw_poll(struct sw *s)
{
	bool work = false;
	int i;

	s->now = loop_now_ns();
	s->loops++;
	if (s->nreqs)
		sw_apply_requests(s);
	if (s->link_dirty)
		sw_apply_links(s);
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		xport_reclaim(p->xp);
		xport_refill(p->xp);
		work |= sw_rx_port(s, p);
	}
	work |= sw_pass(s);
	if (s->now >= s->next_age_ns) {
		fdb_age(s->fdb, s->now);
		s->next_age_ns = s->now + SW_AGE_INTERVAL_NS;
	}
	if (drun_every(&s->next_stats_ns, s->now, s->cfg->stats_interval))
		sw_stats_tick(s);
	return work;
}

uint64_t sw_next_deadline(const struct sw *s)
{
	uint64_t d = sw_core_deadline(s);

	if (s->next_age_ns < d)
		d = s->next_age_ns;
	if (s->cfg->stats_interval && s->next_stats_ns < d)
		d = s->next_stats_ns;
	/* The completion ring does not wake epoll: when the free pool runs
	 * low, come back soon to reclaim what the kernel sent. */
	for (int i = 0; i < s->nports; i++)
		if (s->ports[i].xp->tx_out && s->umem->nfree < s->umem->nframes / 4 &&
		    s->now + 200000 < d)
			d = s->now + 200000;
	return d;
}

/* ---- lifecycle ---------------------------------------------------------- */

static uint32_t sw_frame_room(uint32_t frame_size) { return frame_size - XPORT_UMEM_HEADROOM; }

/* 2048-byte UMEM frames unless a port's MTU (configured, or the
 * interface's) needs 4096. Larger frames need AF_XDP multi-buffer. */
static uint32_t sw_frame_size(const struct sw_cfg *cfg)
{
	if (cfg->frame_size)
		return cfg->frame_size;
	for (int i = 0; i < cfg->nports; i++) {
		int mtu = cfg->ports[i].mtu ? (int)cfg->ports[i].mtu
					    : xport_if_mtu(cfg->ports[i].ifname);

		if (mtu + L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN > (int)sw_frame_room(2048))
			return 4096;
	}
	return 2048;
}

/* lnk's callback, from the event loop between two passes. */
static void sw_on_link(void *ctx, int port, bool up, uint8_t operstate)
{
	struct sw *s = ctx;

	s->ports[port].link_seen = up;
	s->ports[port].link_fell |= !up;
	s->ports[port].operstate = operstate;
	s->link_dirty = true;
}

static void sw_link_readable(void *ctx, int fd, uint32_t events)
{
	struct sw *s = ctx;

	lnk_process(s->lnk);
}

/* Watch the ports' links; each starts in the state the kernel gives now. */
static int sw_link_init(struct sw *s)
{
	int ifindex[SW_MAX_PORTS], err;

	for (int i = 0; i < s->nports; i++)
		ifindex[i] = s->ports[i].xp->ifindex;
	err = lnk_init(&s->lnk, ifindex, s->nports, sw_on_link, s);
	if (err)
		return err;
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		p->link_up = p->link_seen = lnk_up(s->lnk, i);
		p->operstate = lnk_operstate(s->lnk, i);
		sw_xdp_ctl_config(s, p);
		err = xport_ctl_fd(p->xp) < 0 ? 0 :
		      loop_add_fd(s->loop, xport_ctl_fd(p->xp), EPOLLIN, NULL, NULL);
		if (err)
			return err;
		if (!p->link_up)
			pr_warn("port %s (%s): link down at start (operstate %s): it forwards "
				"once the link comes up\n", p->cfg->name, p->cfg->ifname,
				lnk_operstate_name(p->operstate));
	}
	return loop_add_fd(s->loop, lnk_fd(s->lnk), EPOLLIN, sw_link_readable, s);
}

void sw_destroy(struct sw *s)
{
	struct xport **xps;
	struct umem *umem;
	struct loop *loop;
	int nports;

	if (!s)
		return;
	sw_ctl_fini(s);
	if (s->lnk) {
		loop_del_fd(s->loop, lnk_fd(s->lnk));
		lnk_fini(s->lnk);
		s->lnk = NULL;
	}
	for (int i = 0; i < s->nports; i++) {
		if (s->ports[i].ipv6_was >= 0)
			ifsave_ipv6_restore(s->cfg->runtime_dir, s->ports[i].cfg->ifname,
					    s->ports[i].ipv6_was);
		nic_pause_end(&s->ports[i].nic.pause, s->cfg->runtime_dir, s->ports[i].cfg->ifname);
	}
	xps = s->xps;
	umem = s->umem;
	loop = s->loop;
	nports = s->nports;
	/* Frames the core holds go back to the pool, then the sockets go
	 * (before the UMEM they are bound to). */
	sw_core_destroy(s);
	for (int i = 0; xps && i < nports; i++)
		xport_close(xps[i]);
	free(xps);
	umem_destroy(umem);
	loop_destroy(loop);
}

/* Open every port's socket on the shared UMEM (before the core exists: it
 * needs their addresses and MTUs), all zero-copy or all copy (nic.h). */
static int sw_open_ports(struct sw_cfg *cfg, struct umem *umem, struct xport **xps,
			 struct nic_port *np)
{
	const char *names[SW_MAX_PORTS], *ifnames[SW_MAX_PORTS];
	uint32_t queues[SW_MAX_PORTS];
	bool skb[SW_MAX_PORTS];
	char what[256];
	int zc;

	for (int i = 0; i < cfg->nports; i++) {
		struct xport_qsel sel = { .all = true };

		names[i] = cfg->ports[i].name;
		ifnames[i] = cfg->ports[i].ifname;
		/* The queue its first socket binds: where zero-copy is probed. */
		sw_port_rx_queues(&cfg->ports[i], &sel);
		queues[i] = xport_qsel_lowest(&sel);
		skb[i] = cfg->ports[i].xdp_mode == XDP_MODE_SKB;
	}
	const struct xport *fwd_first = NULL;

	zc = nic_zc_plan(cfg->zero_copy, names, ifnames, queues, skb, cfg->nports, np);
	if (zc < 0)
		return zc;
	for (int i = 0; i < cfg->nports; i++) {
		const struct port_cfg *pc = &cfg->ports[i];
		struct xport_opts o = {
			.ring_size = cfg->ring_size,
			.skb_mode = pc->xdp_mode == XDP_MODE_SKB,
			.xdp_auto = pc->xdp_mode == XDP_MODE_AUTO,
			.zero_copy = zc == 1,
			.fallback_pass = false,
			/* One FDB map and devmap per switch: the first port
			 * that forwards in XDP makes them, the others share. */
			.fwd = sw_port_fwd_xdp(cfg, pc),
			.fwd_share = fwd_first,
			.fwd_fdb_max = (uint32_t)cfg->fdb_size,
		};
		int err = sw_port_rx_queues(pc, &o.rxq);

		if (!err)
			err = xport_open(&xps[i], umem, pc->ifname, &o);
		if (err) {
			pr_err("port %s: cannot open %s: %s\n", pc->name, pc->ifname, strerror(-err));
			return err;
		}
		if (o.fwd && !fwd_first)
			fwd_first = xps[i];
		nic_log_port(pc->name, xps[i], &np[i]);
		xport_queues_describe(xps[i], what, sizeof(what));
		if (xps[i]->nq < xps[i]->nq_if)
			pr_warn("port %s (%s): %s\n", pc->name, pc->ifname, what);
		else
			pr_info("port %s (%s): %s\n", pc->name, pc->ifname, what);
	}
	return 0;
}

/* Fill rings beyond the one per port that sw_cfg_umem_need() counts: one
 * more per extra receive queue served. */
static uint32_t sw_extra_fill_frames(const struct sw_cfg *cfg)
{
	uint64_t n = 0;

	for (int i = 0; i < cfg->nports; i++) {
		struct xport_qsel sel;

		if (!sw_port_rx_queues(&cfg->ports[i], &sel))
			n += (xport_rx_sockets(cfg->ports[i].ifname, &sel) - 1) * cfg->ring_size;
	}
	return n > (1u << 20) ? 1u << 20 : (uint32_t)n;
}

/* Once a second: frames lost on queues without a socket get a warning
 * (rate-limited per port by xport_no_socket_watch). */
static void sw_nosock_tick(void *ctx, uint64_t now)
{
	struct sw *s = ctx;
	char name[32];

	for (int i = 0; i < s->nports; i++) {
		snprintf(name, sizeof(name), "port %s", s->ports[i].cfg->name);
		xport_no_socket_watch(s->ports[i].xp, name, now);
	}
	sw_fwd_watch(s);
	loop_timer_set(s->nosock_timer, now + 1000000000ull);
}

int sw_create(struct sw **out, struct sw_cfg *cfg)
{
	uint32_t mtus[SW_MAX_PORTS];
	uint8_t macs[SW_MAX_PORTS][6];
	struct nic_port np[SW_MAX_PORTS];
	struct xport **xps = NULL;
	struct umem *umem = NULL;
	struct loop *loop = NULL;
	struct dp_sink sink;
	struct sw *s = NULL;
	int i, err;

	err = loop_create(&loop);
	if (err)
		goto err;
	err = loop_catch_signals(loop);
	if (err) {
		pr_err("signals: %s\n", strerror(-err));
		goto err;
	}
	err = umem_create(&umem, cfg->umem_frames ? cfg->umem_frames
						  : sw_cfg_umem_need(cfg) + sw_extra_fill_frames(cfg),
			  sw_frame_size(cfg), cfg->ring_size);
	if (err)
		goto err;
	xps = calloc(cfg->nports, sizeof(*xps));
	if (!xps) {
		err = -ENOMEM;
		goto err;
	}
	err = sw_open_ports(cfg, umem, xps, np);
	if (err)
		goto err;
	for (i = 0; i < cfg->nports; i++) {
		memcpy(macs[i], xps[i]->mac, 6);
		mtus[i] = xps[i]->mtu;
	}
	sink = (struct dp_sink){ .ops = &xport_sink_ops, .ctx = xps };
	err = sw_core_create(&s, cfg, umem, &sink, (const uint8_t (*)[6])macs, mtus,
			     loop_now_ns());
	if (err)
		goto err;
	s->xps = xps;
	s->loop = loop;
	xps = NULL;
	loop = NULL;
	for (i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];
		const struct port_cfg *pc = p->cfg;

		p->xp = s->xps[i];
		p->nic = np[i];
		nic_pause_begin(&p->nic.pause, cfg->runtime_dir, pc->name, pc->ifname, pc->nic_pause);
		if (pc->quiet_stack) {
			p->ipv6_was = ifsave_ipv6_off(cfg->runtime_dir, pc->ifname);
			if (p->ipv6_was < 0 && p->ipv6_was != -ENOENT)
				pr_warn("port %s: cannot disable IPv6 on %s: %s\n", pc->name,
					pc->ifname, strerror(-p->ipv6_was));
		}
		if (pc->mtu && pc->mtu > p->xp->mtu)
			pr_warn("port %s: mtu %llu is above %s's MTU %u\n", pc->name,
				(unsigned long long)pc->mtu, pc->ifname, p->xp->mtu);
		if (p->max_frame > sw_frame_room(umem->frame_size)) {
			pr_err("port %s: MTU %u does not fit a %u-byte UMEM frame (%u bytes after "
			       "the kernel's headroom); set mtu = %u or lower the interface MTU\n",
			       pc->name, p->max_frame - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN,
			       umem->frame_size, sw_frame_room(umem->frame_size),
			       sw_frame_room(umem->frame_size) - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN);
			err = -EMSGSIZE;
			goto err_sw;
		}
		/* Every queue's socket wakes the loop; sw_poll takes from all. */
		for (uint32_t q = 0; q < p->xp->nq && !err; q++)
			err = loop_add_fd(s->loop, p->xp->q[q].fd, EPOLLIN | EPOLLET, NULL, NULL);
		if (err)
			goto err_sw;
	}
	err = loop_timer_create(s->loop, sw_nosock_tick, s, &s->nosock_timer);
	if (err)
		goto err_sw;
	loop_timer_set(s->nosock_timer, s->now + 1000000000ull);
	err = sw_link_init(s);
	if (err) {
		pr_err("link events: %s\n", strerror(-err));
		goto err_sw;
	}
	/* After the links are known: a port that is down gets no slot. */
	sw_fwd_attach(s, &sw_fwd_bpf_ops, s);
	sw_fwd_watch(s);
	for (i = 0; i < s->nports; i++)
		if (s->ports[i].fwd_xdp)
			pr_info("port %s (%s): forwarding = xdp: known unicast to another such port "
				"leaves in XDP\n", s->ports[i].cfg->name, s->ports[i].cfg->ifname);
	s->next_age_ns = s->now + SW_AGE_INTERVAL_NS;
	s->next_stats_ns = s->now;
	err = sw_ctl_init(s);
	if (err)
		goto err_sw;
	*out = s;
	return 0;
err_sw:
	sw_destroy(s);
	return err;
err:
	for (i = 0; xps && i < cfg->nports; i++)
		xport_close(xps[i]);
	free(xps);
	umem_destroy(umem);
	loop_destroy(loop);
	return err;
}
