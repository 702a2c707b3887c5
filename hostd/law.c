// SPDX-License-Identifier: BSD-2-Clause
/*
 * The rate-control law registry (the papers' laws are in law_santos.c)
 * and the `static` law: a fixed rate per flow, from the [rate] section
 * matching its destination or from [law] rate/ipd, changed only from the
 * control socket. It is the baseline every congestion-control law is
 * compared with, and what the hostd issue's "static 50M toward h2" test
 * uses.
 */
#include "law.h"
#include "hostd.h"

#include <string.h>

void law_configured_rate(const struct hd_cfg *cfg, const struct flow *f, struct law_out *o)
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

static void static_init(const struct law_env *e, struct flow *f, struct law_out *o)
{
	law_configured_rate(e->cfg, f, o);
}

static const struct law_ops law_static = {
	.name = "static",
	.help = "a fixed rate per flow: [rate] by destination, else [law] rate/ipd; "
		"changed only by `l2ccctl set-rate`",
	.init = static_init,
};

/* law_names[] in the same order: --help-config lists them so. */
static const struct law_ops *const laws[] = {
	&law_static,
	&law_fimd,
	&law_lipd,
	&law_aimd,
};

const char *const law_names[] = { "static", "fimd", "lipd", "aimd", NULL };
_Static_assert(sizeof(laws) / sizeof(laws[0]) + 1 == sizeof(law_names) / sizeof(law_names[0]),
	       "every law has its name in law_names[]");

const struct law_ops *law_find(const char *name)
{
	for (size_t i = 0; i < sizeof(laws) / sizeof(laws[0]); i++)
		if (!strcmp(laws[i]->name, name))
			return laws[i];
	return NULL;
}
