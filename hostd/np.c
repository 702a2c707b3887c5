// SPDX-License-Identifier: BSD-2-Clause
/* Which notification point a configuration runs (np.h). */
#include "np.h"
#include "hostd.h"

extern const struct np_ops np_cnp_ops, np_ack_ops;

/* Reliable mode acknowledges every frame; unreliable mode notifies marks. */
const struct np_ops *np_for(const struct hd_cfg *cfg)
{
	return cfg->mode == HD_MODE_RELIABLE ? &np_ack_ops : &np_cnp_ops;
}
