// SPDX-License-Identifier: BSD-2-Clause
/* Counters declared once: see ctrs.h. */
#include "ctrs.h"
#include "json.h"
#include "prom.h"

#include <stdio.h>

static uint64_t ctr_get(const struct ctr *c, const void *obj, uint64_t now)
{
	return c->get ? c->get(obj, now) : *(const uint64_t *)((const char *)obj + c->off);
}

void ctr_json(struct jw *w, const struct ctr *t, size_t n, const void *obj, uint64_t now,
	      bool ts)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].json && (!ts || (t[i].flags & CTR_TS)))
			jw_u64(w, t[i].json, ctr_get(&t[i], obj, now));
}

void ctr_prom(struct jw *w, const char *prefix, const struct ctr *t, size_t n,
	      const void *const *objs, const char *const *labels, size_t nobj, uint64_t now)
{
	char name[128];

	for (size_t i = 0; i < n; i++) {
		if (!t[i].metric)
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, t[i].metric);
		prom_family(w, name, t[i].kind == CTR_GAUGE ? "gauge" : "counter", t[i].help);
		for (size_t k = 0; k < nobj; k++) {
			uint64_t v = ctr_get(&t[i], objs[k], now);

			if (t[i].flags & CTR_NS)
				prom_sample_double(w, name, labels[k], v / 1e9);
			else
				prom_sample_u64(w, name, labels[k], v);
		}
	}
}
