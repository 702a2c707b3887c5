// SPDX-License-Identifier: BSD-2-Clause
/*
 * The L2CI notification point: this host as the destination (the egress)
 * of other hosts' paths (McAlpine 2005, §5 Method 4).
 *  - A DISCOVER for our host is echoed at once (DISCOVER_ECHO, the body as
 *    the switches left it), so the source learns hops, path speed and RTT.
 *  - Every path whose data reaches us gets a FEEDBACK per fb_bytes of it
 *    (8 KB: the paper's "about 1 % of the bandwidth"), no closer than
 *    fb_min, and at least every fb_max while the path is active (data
 *    within L2CI_IDLE_GAPS fb_max): a slow path must hear as often as a
 *    fast one, or it would climb back slower than it was cut. It leaves
 *    with our own level, which each switch on the way back raises to its
 *    own when that is higher. Ours is the receiver's own backlog
 *    (McAlpine §5: the egress starts the level at its receive buffer's
 *    fill): the host port's TX ring over its size, full while frames wait
 *    in the uplink's ring for a host that does not take them, so a
 *    receiver bottleneck reaches the source as a switch's would.
 * A path is the sender's flow, as the data tag names it; the spacing keys
 * are the law's ([law] prc, hostd/rp_prc.h): a lab runs one configuration.
 */
#include "np.h"
#include "hostd.h"
#include "rp_prc.h"

#include <string.h>

/* A path with no data for this many fb_max is idle: no more feedback. */
#define L2CI_IDLE_GAPS 20

struct l2ci_peer {
	uint64_t last_ns;           /* our last FEEDBACK for the path */
	uint64_t data_ns;           /* its last data frame */
	uint32_t bytes;             /* data since our last FEEDBACK */
	uint32_t seq;               /* FEEDBACKs sent for the path */
	bool timer;                 /* queued in the FIFO */
};
_Static_assert(sizeof(struct l2ci_peer) <= NP_AREA_WORDS * sizeof(uint64_t),
	       "struct l2ci_peer must fit the peer's np_area");

static struct l2ci_peer *l2ci_of(struct hd_peer *p)
{
	return (struct l2ci_peer *)p->np_area;
}

static const struct prc_law_cfg *l2ci_keys(const struct np *np)
{
	return (const struct prc_law_cfg *)np_cfg(np->h)->law_cfg;
}

static void l2ci_send(struct np *np, struct hd_peer *p, uint64_t now)
{
	struct l2ci_peer *c = l2ci_of(p);
	union ctrl_msg m = { .fb = { .flow = p->flow, .seq = ++c->seq,
				     .level = np_host_backlog(np->h),
				     .speed_mbps = wire_speed_mbps(np_cfg(np->h)->link_rate) } };

	memcpy(m.fb.setter, p->dst, 6);
	c->bytes = 0;
	c->last_ns = now;
	np_send(np->h, p, L2CC_CTRL_FEEDBACK, &m);
}

/* The path's timer runs every fb_max / 2 while it is active: a FEEDBACK
 * is then never more than fb_max after the last. (FIFO: every push is
 * now + the same delay, so the times are in order.) */
static void l2ci_arm(struct np *np, const struct flow *pf, struct l2ci_peer *c, uint64_t now)
{
	c->timer = true;
	tfifo_push(&np->fifo, pf->id, pf->gen, now + l2ci_keys(np)->fb_max / 2);
}

static void l2ci_on_data(struct np *np, struct hd_peer *p, const struct flow *pf,
			 const struct wire_tag *t, uint32_t len, bool marked)
{
	const struct prc_law_cfg *k = l2ci_keys(np);
	struct l2ci_peer *c = l2ci_of(p);
	uint64_t now = np_now(np->h), since = now - c->last_ns;

	c->bytes = c->bytes + len < c->bytes ? UINT32_MAX : c->bytes + len;
	c->data_ns = now;
	if ((c->bytes >= k->fb_bytes && since >= k->fb_min) || since >= k->fb_max || !c->seq)
		l2ci_send(np, p, now);
	if (!c->timer)
		l2ci_arm(np, pf, c, now);
}

static void l2ci_on_timer(struct np *np, uint64_t now)
{
	const struct prc_law_cfg *k = l2ci_keys(np);
	struct flow *pf;

	while ((pf = tfifo_pop_due(&np->fifo, np_peers(np->h), now))) {
		struct hd_peer *p = np_peer(np->h, pf);
		struct l2ci_peer *c = l2ci_of(p);

		c->timer = false;
		if (now - c->data_ns > L2CI_IDLE_GAPS * k->fb_max)
			continue;       /* idle: the next data frame starts it again */
		if (now - c->last_ns >= k->fb_max / 2 && now - c->last_ns >= k->fb_min)
			l2ci_send(np, p, now);
		l2ci_arm(np, pf, c, now);
	}
}

/* A DISCOVER for our host: straight back to its source. */
static void l2ci_on_ctrl(struct np *np, const uint8_t src[6], const uint8_t dst[6], int type,
			 const union ctrl_msg *m)
{
	if (type == L2CC_CTRL_DISCOVER)
		np_send_to(np->h, src, dst, L2CC_CTRL_DISCOVER_ECHO, m);
}

const struct np_ops np_l2ci_ops = {
	.name = "l2ci",
	.help = "L2CI egress: echo DISCOVERs at once, a FEEDBACK per fb_bytes of each path's "
		"data, at least fb_min apart and at most fb_max while the path is active",
	.every_frame = true,
	.create = np_fifo_create,
	.destroy = np_fifo_destroy,
	.on_data = l2ci_on_data,
	.on_ctrl = l2ci_on_ctrl,
	.next_timer = np_fifo_next,
	.on_timer = l2ci_on_timer,
};
