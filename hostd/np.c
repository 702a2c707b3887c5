// SPDX-License-Identifier: BSD-2-Clause
/* Which notification point a configuration runs (np.h). */
#include "np.h"
#include "hostd.h"

#include <errno.h>
#include <stdlib.h>

extern const struct np_ops np_cnp_ops, np_ack_ops;

/* Reliable mode acknowledges every frame; unreliable mode notifies marks. */
const struct np_ops *np_for(const struct hd_cfg *cfg)
{
	return cfg->mode == HD_MODE_RELIABLE ? &np_ack_ops : &np_cnp_ops;
}

int np_fifo_create(struct np **out, struct hd *h)
{
	struct np *np = calloc(1, sizeof(*np));
	int err;

	if (!np)
		return -ENOMEM;
	np->h = h;
	/* Every peer is in the FIFO at most once: it never fills. */
	err = tfifo_init(&np->fifo, np_max_peers(h));
	if (err) {
		np_fifo_destroy(np);
		return err;
	}
	*out = np;
	return 0;
}

void np_fifo_destroy(struct np *np)
{
	tfifo_fini(&np->fifo);
	free(np);
}

uint64_t np_fifo_next(const struct np *np)
{
	return tfifo_next(&np->fifo);
}
