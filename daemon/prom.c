// SPDX-License-Identifier: BSD-2-Clause
#include "prom.h"
#include "version.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void prom_family(struct jw *w, const char *name, const char *type, const char *help)
{
	const char *p;

	jw_raw(w, "# HELP %s ", name);
	for (p = help ? help : ""; *p; p++) {
		if (*p == '\\')
			jw_raw(w, "\\\\");
		else if (*p == '\n')
			jw_raw(w, "\\n");
		else
			jw_raw(w, "%c", *p);
	}
	jw_raw(w, "\n# TYPE %s %s\n", name, type);
}

static void prom_name(struct jw *w, const char *name, const char *labels)
{
	if (labels && *labels)
		jw_raw(w, "%s{%s} ", name, labels);
	else
		jw_raw(w, "%s ", name);
}

void prom_sample_u64(struct jw *w, const char *name, const char *labels, uint64_t v)
{
	prom_name(w, name, labels);
	jw_raw(w, "%" PRIu64 "\n", v);
}

void prom_sample_double(struct jw *w, const char *name, const char *labels, double v)
{
	prom_name(w, name, labels);
	if (isnan(v))
		jw_raw(w, "NaN\n");
	else if (isinf(v))
		jw_raw(w, "%cInf\n", v > 0 ? '+' : '-');
	else
		/* 15 digits round-trip any decimal a human would write (0.1
		 * stays 0.1) while keeping large byte counters exact. */
		jw_raw(w, "%.15g\n", v);
}

int prom_label_escape(char *dst, size_t n, const char *src)
{
	size_t len = 0;

	if (n == 0)
		return -ENOSPC;
	for (; *src; src++) {
		char a = *src, b = 0;
		size_t need;

		if (a == '\\' || a == '"') {
			b = a;
			a = '\\';
		} else if (a == '\n') {
			a = '\\';
			b = 'n';
		}
		need = b ? 2 : 1;
		if (len + need >= n) {
			dst[len] = '\0';
			return -ENOSPC;
		}
		dst[len++] = a;
		if (b)
			dst[len++] = b;
	}
	dst[len] = '\0';
	return (int)len;
}

void prom_build_info(struct jw *w)
{
	char v[160], labels[192];

	prom_label_escape(v, sizeof(v), l2cc_version);
	snprintf(labels, sizeof(labels), "version=\"%s\"", v);
	prom_family(w, "l2cc_build_info", "gauge",
		    "Always 1: the version of the build serving these metrics (git describe)");
	prom_sample_u64(w, "l2cc_build_info", labels, 1);
}

void prom_loop(struct jw *w, const char *prefix, const char *labels, uint64_t passes,
	       uint64_t wakeups)
{
	static const struct { const char *name, *help; } f[] = {
		{ "loop_passes_total", "Passes of the main loop (each serves every port once)" },
		{ "wakeups_total", "Times the daemon slept in epoll and woke again (per frame: "
				   "what being woken costs a hop)" },
	};
	char name[64];

	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s%s", prefix, f[i].name);
		prom_family(w, name, "counter", f[i].help);
		prom_sample_u64(w, name, labels, i ? wakeups : passes);
	}
}
