// SPDX-License-Identifier: BSD-2-Clause
/* Which notification point a configuration runs (np.h). */
#include "np.h"
#include "hostd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"

extern const struct np_ops np_cnp_ops, np_ack_ops, np_l2ci_ops;

static const struct np_ops *const np_table[] = { &np_cnp_ops, &np_ack_ops, &np_l2ci_ops };

/* The law's own, else: reliable mode acknowledges every frame; unreliable
 * mode notifies marks. */
const struct np_ops *np_for(const struct hd_cfg *cfg)
{
	const struct rp_ops *law = rp_find(cfg->law);

	if (law && law->np)
		for (size_t i = 0; i < sizeof(np_table) / sizeof(np_table[0]); i++)
			if (!strcmp(np_table[i]->name, law->np))
				return np_table[i];
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
