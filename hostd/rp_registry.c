// SPDX-License-Identifier: BSD-2-Clause
/*
 * The reaction points (rate laws) hostd knows: the one place that lists
 * them (docs/adding-a-scheme.md). The `static` law lives here too: a fixed
 * rate per flow, from the [rate] section matching its destination or from
 * [law] rate/ipd, changed only from the control socket; the baseline every
 * congestion-control law is compared with.
 */
#include "rp.h"
#include "hostd.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern const struct rp_ops rp_fimd_ops, rp_lipd_ops, rp_aimd_ops;
extern const struct rp_ops rp_bcn_ops, rp_qcn_ops;
extern const struct rp_ops rp_dcqcn_ops;
extern const struct rp_ops rp_ibcc_ops;
extern const struct rp_ops rp_prc_ops;

void rp_configured_rate(const struct hd_cfg *cfg, const struct flow *f, struct rp_out *o)
{
	int64_t ipd = cfg->ipd;
	uint64_t rate = cfg->rate;

	if (f->key.type == FLOW_KEY_DST) {
		for (int i = 0; i < cfg->nrates; i++) {
			const struct hd_rate_cfg *r = &cfg->rates[i];

			if (r->vlan == f->key.vid && !memcmp(r->dst, f->key.mac, 6)) {
				rate = r->rate;
				ipd = r->ipd;
				break;
			}
		}
	}
	memset(o, 0, sizeof(*o));
	o->window = (uint32_t)cfg->window;
	if (ipd >= 0) {
		o->by_ipd = true;
		o->ipd = (uint32_t)ipd;
	} else {
		o->rate_bps = rate;
	}
}

struct rp {
	const struct hd_cfg *cfg;
};

static int static_create(struct rp **out, const struct rp_env *env)
{
	struct rp *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return -ENOMEM;
	rp->cfg = env->cfg;
	*out = rp;
	return 0;
}

static void static_destroy(struct rp *rp)
{
	free(rp);
}

static void static_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	rp_configured_rate(rp->cfg, f, o);
}

static const struct rp_ops rp_static_ops = {
	.name = "static",
	.help = "a fixed rate per flow: [rate] by destination, else [law] rate/ipd; "
		"changed only by `l2ccctl set-rate`",
	.create = static_create,
	.destroy = static_destroy,
	.init = static_init,
};

/* rp_names[] in the same order: --help-config lists them so. */
static const struct rp_ops *const rps[] = {
	&rp_static_ops,
	&rp_fimd_ops,
	&rp_lipd_ops,
	&rp_aimd_ops,
	&rp_bcn_ops,
	&rp_qcn_ops,
	&rp_dcqcn_ops,
	&rp_ibcc_ops,
	&rp_prc_ops,
};

const char *const rp_names[] = { "static", "fimd", "lipd", "aimd",
				  "bcn", "qcn", "dcqcn", "ibcc", "prc",
				  NULL };
_Static_assert(sizeof(rps) / sizeof(rps[0]) + 1 == sizeof(rp_names) / sizeof(rp_names[0]),
	       "every law has its name in rp_names[]");

const struct rp_ops *rp_find(const char *name)
{
	for (size_t i = 0; i < sizeof(rps) / sizeof(rps[0]); i++)
		if (!strcmp(rps[i]->name, name))
			return rps[i];
	return NULL;
}
