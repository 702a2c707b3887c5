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
 *
 * init is also called on a flow that already has state: after a reload
 * (hd_apply_cfg: new [law] keys apply to the running flows) and, with
 * [law] persistent = yes, on a new flow whose law area hostd has just
 * filled with the state a previous flow of the same key left (see
 * state_size). A law that keeps state recognises its own (a magic word)
 * and resumes it; a zeroed area starts afresh.
 */
#ifndef L2CC_HOSTD_LAW_H
#define L2CC_HOSTD_LAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "flow.h"

struct hd_cfg;
struct jw;

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
	/*
	 * Optional: the law's per-flow state as key/value pairs into the JSON
	 * object the caller has opened (the control socket's and the time
	 * series' "law" object of a flow). Reads only the law area.
	 */
	void (*describe)(const struct flow *f, struct jw *w);
	/*
	 * Persistent state across consecutive flows of one key (Santos et al.
	 * 2003 §VI-B.2, [law] persistent = yes): how many bytes at the start of
	 * law_area make the law's state; 0 = nothing worth keeping. The contract:
	 *  - when a flow is removed (expired, or by the control socket), hostd
	 *    copies law_area[0 .. state_size) aside under the flow's key;
	 *  - when a flow with that key is created again, hostd copies the bytes
	 *    back into its (zeroed) law_area *before* calling init;
	 *  - init resumes from them: the rate and the increase progress carry
	 *    over, what belonged to the old flow (sequence numbers: APSN; what
	 *    limited its last frame) starts afresh, as it does after a reload.
	 * The bytes are opaque to hostd and hold no pointers; law_state must
	 * point at law_area for a law that sets state_size.
	 */
	size_t state_size;
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

/*
 * The laws of Santos, Turner and Janakiraman (Infocom 2003, §V-VI) with the
 * source response of Turner et al. (HPL-2001-277, §5): hostd/law_santos.c.
 */
extern const struct law_ops law_fimd, law_lipd, law_aimd;

/* InfiniBand's IPD is 8 bits: discrete mode has at most this many rates,
 * Rmax / (1 + ipd) for ipd 0 .. LAW_IPD_LEVELS - 1 ([law] rmin_div). */
#define LAW_IPD_LEVELS 256

/*
 * The response functions themselves, for the tests and for anyone checking
 * the laws against the paper. Rates in any one unit (r, rmin, rmax alike);
 * every result is clamped to [rmin, rmax].
 *
 * law_fn_dec: f_dec(r), the rate after a mark.
 *   FIMD, AIMD  max(r / m, Rmin)                          (§V-C)
 *   LIPD        max(Rmax / (Rmax / r + 1), Rmin)          (§V-D: ipd + 1)
 * law_fn_inc: F_inc^r(t), the rate a time t after the rate was r, with no
 *   mark in between, t given as `frames` frame times at rate r (t = frames / r,
 *   Trec = 1 / Rmin); with frames = 1 it is f_inc(r), the increase per
 *   unmarked ACK (§V-B: f_inc(r) = min(F_inc^r(1 / r), Rmax)):
 *   FIMD  r * m^(t / Trec)                  f_inc = min(r * m^(Rmin / r), Rmax)
 *   LIPD  Rmax / (Rmax / r - t / Trec)      f_inc = min(r / (1 - Rmin / Rmax), Rmax)
 *   AIMD  r + (m - 1) * Rmin * t / Trec     f_inc = min(r + (m - 1) * Rmin^2 / r, Rmax)
 * AIMD's slope is the largest a recovery time of 1 / Rmin allows at Rmin
 * (§VI-B): one ACK at Rmin takes it back to f_dec^-1(Rmin) = m * Rmin.
 */
enum law_fn { LAW_FN_FIMD = 0, LAW_FN_LIPD, LAW_FN_AIMD };
double law_fn_dec(enum law_fn fn, double m, double rmin, double rmax, double r);
double law_fn_inc(enum law_fn fn, double m, double rmin, double rmax, double r, double frames);

#endif
