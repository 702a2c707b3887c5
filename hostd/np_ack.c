// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ACK notification point (reliable mode; Turner et al., HPL-2001-277
 * §3, §5.1): every data frame is acknowledged,
 * one ACK per ack_every frames of a flow or at most ack_delay after the
 * first frame not yet acknowledged, whichever is first. An ACK carries the
 * cumulative sequence number, the number of frames it covers and ECE if
 * any of them was marked (the sender's law counts it as N - 1 unmarked and
 * one marked).
 */
#include "np.h"
#include "hostd.h"

struct ack_peer {
	uint32_t frames;            /* covered by the ACK being built */
	uint32_t seq;               /* the last of them */
	bool ece;                   /* one of them was marked */
	bool timer;                 /* queued in the FIFO */
};
_Static_assert(sizeof(struct ack_peer) <= NP_AREA_WORDS * sizeof(uint64_t),
	       "struct ack_peer must fit the peer's np_area");

static struct ack_peer *ack_of(struct hd_peer *p)
{
	return (struct ack_peer *)p->np_area;
}

static void ack_send(struct np *np, struct hd_peer *p)
{
	struct ack_peer *a = ack_of(p);
	union ctrl_msg m = { .ack = { .flow = p->flow, .flags = a->ece ? L2CC_ACK_ECE : 0,
				      .cum_seq = a->seq, .frames = a->frames } };

	a->frames = 0;
	a->ece = false;
	np_send(np->h, p, L2CC_CTRL_ACK, &m);
}

static void ack_on_data(struct np *np, struct hd_peer *p, const struct flow *pf,
			const struct wire_tag *t, uint32_t len, bool marked)
{
	struct ack_peer *a = ack_of(p);
	const struct hd_cfg *cfg = np_cfg(np->h);

	a->frames++;
	a->seq = t->seq;
	a->ece |= marked;
	if (a->frames >= cfg->ack_every) {
		ack_send(np, p);
	} else if (!a->timer) {
		/* The timer is not restarted by the ACKs ack_every sends: the
		 * next one may go earlier than ack_delay after its first frame. */
		a->timer = true;
		tfifo_push(&np->fifo, pf->id, pf->gen, np_now(np->h) + cfg->ack_delay);
	}
}

static void ack_on_timer(struct np *np, uint64_t now)
{
	struct flow *pf;

	while ((pf = tfifo_pop_due(&np->fifo, np_peers(np->h), now))) {
		struct hd_peer *p = np_peer(np->h, pf);

		ack_of(p)->timer = false;
		if (ack_of(p)->frames)
			ack_send(np, p);
	}
}

const struct np_ops np_ack_ops = {
	.name = "ack",
	.help = "an ACK per ack_every frames or within ack_delay, ECE if any was marked "
		"(reliable mode)",
	.every_frame = true,
	.create = np_fifo_create,
	.destroy = np_fifo_destroy,
	.on_data = ack_on_data,
	.next_timer = np_fifo_next,
	.on_timer = ack_on_timer,
};
