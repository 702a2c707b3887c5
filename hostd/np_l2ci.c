// SPDX-License-Identifier: BSD-2-Clause
/*
 * The L2CI notification point: this host as the destination (the egress)
 * of other hosts' paths (McAlpine 2005, §6 Method 4).
 *  - A DISCOVER for our host is echoed at once (DISCOVER_ECHO, the body as
 *    the switches left it), so the source learns hops, path speed and RTT.
 *  - Every path whose data reaches us gets a FEEDBACK per fb_bytes of it
 *    (8 KB: the paper's "about 1 % of the bandwidth"), no closer than
 *    fb_min and, while its data arrives, at least every fb_max. It leaves
 *    with our own level, which each switch on the way back raises to its
 *    own when that is higher. Ours is 0: hostd hands frames to the host as
 *    they come, with no queue of its own between the fabric and the host
 *    (a held host ring is counted as rx_holds, not as congestion).
 * A path is the sender's flow, as the data tag names it; the spacing keys
 * are the law's ([law] prc, hostd/rp_prc.h): a lab runs one configuration.
 */
#include "np.h"
#include "hostd.h"
#include "rp_prc.h"

#include <string.h>

struct l2ci_peer {
	uint64_t last_ns;           /* our last FEEDBACK for the path */
	uint32_t bytes;             /* data since then */
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
	union ctrl_msg m = { .fb = { .flow = p->flow, .seq = ++c->seq, .level = 0 } };

	memcpy(m.fb.setter, p->dst, 6);
	c->bytes = 0;
	c->last_ns = now;
	np_send(np->h, p, L2CC_CTRL_FEEDBACK, &m);
}

static void l2ci_on_data(struct np *np, struct hd_peer *p, const struct flow *pf,
			 const struct wire_tag *t, uint32_t len, bool marked)
{
	const struct prc_law_cfg *k = l2ci_keys(np);
	struct l2ci_peer *c = l2ci_of(p);
	uint64_t now = np_now(np->h), since = now - c->last_ns;

	c->bytes = c->bytes + len < c->bytes ? UINT32_MAX : c->bytes + len;
	if ((c->bytes >= k->fb_bytes && since >= k->fb_min) || since >= k->fb_max || !c->seq) {
		l2ci_send(np, p, now);
	} else if (!c->timer) {
		/* The path's last bytes before it goes quiet get their
		 * feedback within fb_max too. */
		c->timer = true;
		tfifo_push(&np->fifo, pf->id, pf->gen, now + k->fb_max);
	}
}

static void l2ci_on_timer(struct np *np, uint64_t now)
{
	const struct prc_law_cfg *k = l2ci_keys(np);
	struct flow *pf;

	while ((pf = tfifo_pop_due(&np->fifo, np_peers(np->h), now))) {
		struct hd_peer *p = np_peer(np->h, pf);
		struct l2ci_peer *c = l2ci_of(p);

		c->timer = false;
		if (!c->bytes)
			continue;
		if (now - c->last_ns >= k->fb_min) {
			l2ci_send(np, p, now);
		} else {
			c->timer = true;
			tfifo_push(&np->fifo, pf->id, pf->gen, now + k->fb_max);
		}
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
		"data (within fb_min .. fb_max)",
	.every_frame = true,
	.create = np_fifo_create,
	.destroy = np_fifo_destroy,
	.on_data = l2ci_on_data,
	.on_ctrl = l2ci_on_ctrl,
	.next_timer = np_fifo_next,
	.on_timer = l2ci_on_timer,
};
