/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rate-control laws: how a flow's rate (and window) reacts to what the
 * fabric tells the sender. A law is a table of function pointers; hostd
 * calls it on the events of a flow and applies what it leaves in the
 * flow's `struct law_out` (the pacer's rate or IPD, the window).
 *
 * Events (Turner et al. 2002 §5, Santos et al. 2003 §IV):
 *   init    a flow was created (or restarted): choose the starting rate;
 *   on_tx   a frame of the flow left, and what limited it (rate, window,
 *           neither): unreliable mode counts RPI down per rate-limited frame;
 *   on_ack  reliable mode: an ACK covering `unmarked` + `marked` frames up to
 *           cum_seq (a coalesced ACK counts as N-1 unmarked and 1 marked);
 *   on_cnp  unreliable mode: a CNP naming the flow and the last marked seq;
 *   on_timer the law's own timer (law_out.timer_ns after `now`), if it set one.
 *
 * Laws keep their per-flow state in the flow's law area (FLOW_LAW_WORDS
 * words, zeroed at creation; static_assert the state fits). They never
 * allocate and never block; they may read the law_env (link rate, config).
 */
#ifndef L2CC_HOSTD_LAW_H
#define L2CC_HOSTD_LAW_H

#include <stdbool.h>
#include <stdint.h>
#include "flow.h"

struct hd_cfg;

/* What limited a flow's last frame (Turner §5.1.3 RWL). */
enum law_limit { LAW_LIMIT_NONE = 0, LAW_LIMIT_RATE, LAW_LIMIT_WINDOW };

/* The law's decision for a flow; hostd applies it after every event. */
struct law_out {
	uint64_t rate_bps;      /* 0 = unpaced (when by_ipd is false) */
	uint32_t ipd;           /* when by_ipd: rate = link / (1 + ipd) */
	bool by_ipd;
	uint32_t window;        /* frames in flight, 0 = no window */
	uint64_t timer_ns;      /* call on_timer this long from now; 0 = no timer */
};

struct law_env {
	const struct hd_cfg *cfg;
	uint64_t link_bps;      /* Rmax */
	uint64_t now;
};

struct law_ops {
	const char *name;
	const char *help;
	void (*init)(const struct law_env *e, struct flow *f, struct law_out *o);
	void (*on_tx)(const struct law_env *e, struct flow *f, uint32_t seq, enum law_limit lim,
		      struct law_out *o);
	void (*on_ack)(const struct law_env *e, struct flow *f, uint32_t cum_seq,
		       uint32_t unmarked, uint32_t marked, struct law_out *o);
	void (*on_cnp)(const struct law_env *e, struct flow *f, uint32_t seq, uint32_t marked,
		       struct law_out *o);
	void (*on_timer)(const struct law_env *e, struct flow *f, struct law_out *o);
};

/* The law by name, or NULL. */
const struct law_ops *law_find(const char *name);
/* Names of every law, NULL-terminated (for --help-config and errors). */
extern const char *const law_names[];

/*
 * The starting rate configured for a flow: the [rate] section whose dst
 * matches a FLOW_KEY_DST flow, else [law] rate/ipd. Shared by every law.
 */
void law_configured_rate(const struct hd_cfg *cfg, const struct flow *f, struct law_out *o);

#endif
