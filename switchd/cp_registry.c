// SPDX-License-Identifier: BSD-2-Clause
/*
 * The congestion points switchd knows: the one place that lists them. A new
 * scheme is a file of its own with a `const struct cp_ops`, declared here
 * and added to the table (docs/adding-a-scheme.md).
 */
#include "cp.h"

#include <stdlib.h>
#include <string.h>

extern const struct cp_ops cp_naive_ops, cp_santos_ops;
extern const struct cp_ops cp_bcn_ops, cp_qcn_ops;
extern const struct cp_ops cp_red_ops;
extern const struct cp_ops cp_ibcc_ops;
extern const struct cp_ops cp_l2ci_ops;

/* "none" is no congestion point at all: ports that name it cost nothing. */
static const struct cp_ops *const cp_table[] = {
	NULL,
	&cp_naive_ops,
	&cp_santos_ops,
	&cp_bcn_ops,
	&cp_qcn_ops,
	&cp_red_ops,
	&cp_ibcc_ops,
	&cp_l2ci_ops,
};

#define CP_N (sizeof(cp_table) / sizeof(cp_table[0]))

const char *const cp_names[] = { "none", "naive", "santos",
				   "bcn", "qcn", "red", "ibcc", "l2ci",
				   NULL };
const char *const cp_port_names[] = { "switch", "none", "naive", "santos",
					"bcn", "qcn", "red", "ibcc", "l2ci",
					NULL };

_Static_assert(sizeof(cp_names) / sizeof(cp_names[0]) == CP_N + 1, "cp_names and cp_table");
_Static_assert(sizeof(cp_port_names) / sizeof(cp_port_names[0]) == CP_N + 2,
	       "cp_port_names is cp_names after \"switch\"");

const struct cp_ops *cp_by_index(int i)
{
	return i >= 0 && (size_t)i < CP_N ? cp_table[i] : NULL;
}

const struct cp_ops *cp_find(const char *name)
{
	for (size_t i = 1; i < CP_N; i++)
		if (!strcmp(cp_table[i]->name, name))
			return cp_table[i];
	return NULL;
}

const uint64_t *cp_ctr_find(const struct cp_ops *ops, const struct cp *cp, uint32_t port,
			    const char *name)
{
	const char *st;

	if (!ops)
		return NULL;
	st = ops->port_stats(cp, port);
	for (size_t k = 0; k < ops->nctrs; k++)
		if (!strcmp(ops->ctrs[k].name, name))
			return (const uint64_t *)(st + ops->ctrs[k].off);
	return NULL;
}

void *cp_new_ports(struct sw *s, size_t head_size, size_t per_port)
{
	uint32_t n = sw_nports(s);
	struct cp_head *h = calloc(1, head_size + (size_t)n * per_port);

	if (h) {
		h->s = s;
		h->nports = n;
	}
	return h;
}

void cp_free(struct cp *cp)
{
	free(cp);
}
