// SPDX-License-Identifier: BSD-2-Clause
/*
 * The CNP notification point (unreliable mode; Turner et al., HPL-2001-277
 * §5.2): a frame that arrives marked (FECN) is
 * answered with a CNP to its sender naming the flow and the last marked
 * sequence number. With cnp_interval > 0 at most one CNP per peer per
 * interval: the first mark is answered at once, the marks that follow
 * within the interval go out together at its end, counted in `marked`.
 * The interval is [hostd] cnp_interval, or the law's when that is 0 (a law
 * whose receiver coalesces by design, rp_ops.cnp_interval).
 */
#include "np.h"
#include "hostd.h"

struct cnp_peer {
	uint64_t last_cnp_ns;
	uint32_t marks_pending;
	uint32_t mark_seq;          /* seq of the last marked frame not yet notified */
	bool timer;                 /* queued in the FIFO */
};
_Static_assert(sizeof(struct cnp_peer) <= NP_AREA_WORDS * sizeof(uint64_t),
	       "struct cnp_peer must fit the peer's np_area");

static struct cnp_peer *cnp_of(struct hd_peer *p)
{
	return (struct cnp_peer *)p->np_area;
}

static void cnp_send(struct np *np, struct hd_peer *p)
{
	struct cnp_peer *c = cnp_of(p);
	union ctrl_msg m = { .cnp = { .flow = p->flow, .seq = c->mark_seq,
				      .marked = c->marks_pending } };

	c->marks_pending = 0;
	c->last_cnp_ns = np_now(np->h);
	np_send(np->h, p, L2CC_CTRL_CNP, &m);
}

static void cnp_on_data(struct np *np, struct hd_peer *p, const struct flow *pf,
			const struct wire_tag *t, uint32_t len, bool marked)
{
	struct cnp_peer *c = cnp_of(p);
	uint64_t interval = np_cnp_interval(np->h), now = np_now(np->h);

	if (!marked)
		return;
	c->marks_pending++;
	c->mark_seq = t->seq;
	if (!interval || now - c->last_cnp_ns >= interval || !p->cnp_tx) {
		cnp_send(np, p);
	} else if (!c->timer) {
		c->timer = true;
		tfifo_push(&np->fifo, pf->id, pf->gen, c->last_cnp_ns + interval);
	}
}

static void cnp_on_timer(struct np *np, uint64_t now)
{
	struct flow *pf;

	while ((pf = tfifo_pop_due(&np->fifo, np_peers(np->h), now))) {
		struct hd_peer *p = np_peer(np->h, pf);

		cnp_of(p)->timer = false;
		if (cnp_of(p)->marks_pending)
			cnp_send(np, p);
	}
}

const struct np_ops np_cnp_ops = {
	.name = "cnp",
	.help = "a CNP to the sender for marked frames, at most one per cnp_interval "
		"(unreliable mode)",
	.every_frame = false,
	.create = np_fifo_create,
	.destroy = np_fifo_destroy,
	.on_data = cnp_on_data,
	.next_timer = np_fifo_next,
	.on_timer = cnp_on_timer,
};
