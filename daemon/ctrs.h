/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters declared once. A daemon describes each of its scalar counters in
 * a table row: the key the control socket's `counters` and the time series
 * show, the Prometheus family it becomes, its kind and help, and how to read
 * it from the object it belongs to (a port, the daemon, a flow). The same
 * table writes the JSON and the metrics, so the two cannot drift.
 *
 * Metric names follow Prometheus' rules, documented once here for every
 * daemon and scheme to follow:
 *   l2cc_<daemon>_[<scheme>_]<what>_<unit>[_total]
 * base units (`_seconds`, `_bytes`; counts of things name the thing:
 * `_frames`), `_total` on counters only. A value kept in nanoseconds (the
 * JSON's `_ns` keys, exact integers) is exported in seconds (CTR_NS).
 * `promtool check metrics` passes on both daemons' output
 * (tests/netns/test_l2ci.sh, t_metrics; test_switch_xdpfwd.sh for switchd).
 */
#ifndef L2CC_CTRS_H
#define L2CC_CTRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jw;

enum ctr_kind { CTR_COUNTER = 0, CTR_GAUGE };

#define CTR_TS   0x01   /* in the time series too, not only in `counters` */
#define CTR_NS   0x02   /* nanoseconds: the metric is in seconds */

struct ctr {
	const char *json;       /* key in `counters` (and the time series); NULL: metric only */
	const char *metric;     /* family after the daemon's prefix; NULL: JSON only */
	enum ctr_kind kind;
	uint8_t flags;          /* CTR_* */
	const char *help;
	/* How to read it: get(obj, now), or, without get, the uint64_t at
	 * offset off in obj (a stats struct's field: CTR_FIELD). */
	uint64_t (*get)(const void *obj, uint64_t now);
	size_t off;
};

/* A row read by get(obj, now). */
#define CTR_GET(json_, metric_, kind_, flags_, help_, get_) \
	{ .json = (json_), .metric = (metric_), .kind = (kind_), .flags = (flags_), .help = (help_), \
	  .get = (get_) }

/* A row for a uint64_t field of struct T. */
#define CTR_FIELD(T, f, metric_, kind_, flags_, help_) \
	{ .json = #f, .metric = (metric_), .kind = (kind_), .flags = (flags_), .help = (help_), \
	  .off = offsetof(T, f) }

/* The rows of t (ts: only those with CTR_TS) as keys of the JSON object the
 * caller opened, read from obj at now. */
void ctr_json(struct jw *w, const struct ctr *t, size_t n, const void *obj, uint64_t now,
	      bool ts);

/*
 * Every row of t with a metric as one family each, prefix + metric, with a
 * sample per object: objs[i] labelled labels[i] (already escaped, e.g.
 * switch="s1",port="p1").
 */
void ctr_prom(struct jw *w, const char *prefix, const struct ctr *t, size_t n,
	      const void *const *objs, const char *const *labels, size_t nobj, uint64_t now);

#endif
