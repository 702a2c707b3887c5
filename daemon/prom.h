/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Prometheus text exposition format (version 0.0.4) written into a struct jw
 * with jw_raw(): the metrics command builds its reply with these and the
 * control server's HTTP listener serves it as text/plain.
 *
 * Write each family as prom_family() once, followed by all its samples; the
 * format requires a family's samples to be contiguous.
 */
#ifndef L2CC_PROM_H
#define L2CC_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

/* "# HELP name help" and "# TYPE name type"; type is "counter" or "gauge".
 * help is escaped (backslash, newline) as the format requires. */
void prom_family(struct jw *w, const char *name, const char *type, const char *help);

/* "name{labels} v" or, when labels is NULL or "", "name v". labels is
 * inserted verbatim (e.g. port="p1",prio="0"): escape values that do not
 * come from a fixed set with prom_label_escape(). */
void prom_sample_u64(struct jw *w, const char *name, const char *labels, uint64_t v);
/* As above; NaN, +Inf and -Inf are written the way Prometheus spells them. */
void prom_sample_double(struct jw *w, const char *name, const char *labels, double v);

/* The main loop's families (drun.h): prefix "l2cc_switch_" or "l2cc_hostd_",
 * then loop_passes_total and wakeups_total, one sample each with labels. */
void prom_loop(struct jw *w, const char *prefix, const char *labels, uint64_t passes,
	       uint64_t wakeups);

/* l2cc_build_info{version="..."} 1: which build serves these metrics
 * (daemon/version.h), one family for every daemon, as Prometheus' own
 * *_build_info. */
void prom_build_info(struct jw *w);

/* Escape a label value (\\, \", \n) into dst of size n, always NUL-terminated.
 * Returns the escaped length, or -ENOSPC if it was truncated (never in the
 * middle of an escape). */
int prom_label_escape(char *dst, size_t n, const char *src);

#endif
