/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reaction points: the sending host's side of a congestion-control scheme,
 * the rate law. A law is one ops table in a file of its own (rp_santos.c,
 * ...), listed once in the registry (rp_registry.c), in the manner of
 * linuxptp's servos; `[law] law = NAME` picks it. hostd makes one instance
 * (struct rp) and calls it on the events of each flow:
 *
 *   init        a flow was created, restarted after a reload, or resumed
 *               with a previous flow's state ([law] persistent): choose its
 *               rate and window;
 *   on_tx       a frame of the flow left (its seq and length, and what
 *               limited it: its rate, its window, neither);
 *   on_feedback the fabric said something about the flow: one typed record
 *               for every kind (a CNP, an ACK, later a CNM, BCN or L2CI
 *               feedback), so every scheme's feedback comes through one door;
 *   on_timer    one of the flow's timers ran out (rp_timer(): up to
 *               RP_TIMERS per flow, DCQCN needs three);
 *   on_tick     one of the law's own timers ran out (rp_tick(): RP_TICKS of
 *               them, e.g. one per priority to step every flow of that
 *               priority in lockstep, as InfiniBand's CCTI_Timer does).
 * After each flow event hostd applies the law's decision (struct rp_out) to
 * the flow's pacer and window; outside them the law calls rp_apply().
 *
 * A law keeps per-flow state in the flow's law area (FLOW_LAW_WORDS words,
 * zeroed when the flow is created; static_assert that it fits) and may ask
 * for fields in the flow's data tags (tag), or send frames of its own toward
 * the fabric (rp_emit). Events run on the packet path: a law never
 * allocates, blocks or logs unthrottled.
 */
#ifndef L2CC_HOSTD_RP_H
#define L2CC_HOSTD_RP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "flow.h"

struct cfg_item;
struct hd;
struct hd_cfg;
struct jw;
struct rp;
struct wire_tag;

#define RP_TIMERS 4             /* timers per flow */
#define RP_TICKS 8              /* timers of the law's own, e.g. one per priority */

/* What limited a flow's last frame (Turner et al. 2002 §5.1.3: RWL). */
enum rp_limit { RP_LIMIT_NONE = 0, RP_LIMIT_RATE, RP_LIMIT_WINDOW };

/* The law's decision for a flow. */
struct rp_out {
	uint64_t rate_bps;      /* 0 = unpaced (when by_ipd is false) */
	uint32_t ipd;           /* when by_ipd: rate = link / (1 + ipd) */
	bool by_ipd;
	uint32_t window;        /* frames in flight (reliable mode), 0 = no window */
};

/* The kinds of feedback a law may hear. */
enum rp_fb_kind {
	RP_FB_CNP = 1,          /* the receiver's congestion notification (marks seen) */
	RP_FB_ACK,              /* reliable mode: frames acknowledged, some maybe marked */
	RP_FB_CNM,              /* 802.1Qau congestion notification message (a switch's):
				 * QCN's, and BCN's, which travel in the same format */
	RP_FB_BCN,              /* (unused: BCN arrives as RP_FB_CNM) */
	RP_FB_L2CI,             /* L2CI FEEDBACK from the path's egress (McAlpine 2005) */
	RP_FB_L2CI_ECHO,        /* L2CI DISCOVER_ECHO: the path's hops, speed and RTT */
};

/* One piece of feedback; fields a kind does not carry are zero. */
struct rp_fb {
	enum rp_fb_kind kind;
	uint32_t seq;           /* CNP: the last marked frame's; ACK: cumulative */
	uint32_t marked;        /* marked frames it stands for (CNP; ACK: 0 or 1) */
	uint32_t unmarked;      /* ACK: unmarked frames it covers */
	int32_t qntz_fb;        /* CNM: QCN's quantized feedback, 0..63 (0 from BCN) */
	int32_t qoff, qdelta;   /* CNM: Q - Qeq and Q - Qold at the CP, bytes;
				 * both 0 from BCN is BCN(0,0) */
	uint8_t cpid[8];        /* CNM/BCN: the congestion point that sent it */
	uint16_t level;         /* L2CI FEEDBACK: the highest level on the path, 0.01 % */
	uint8_t hop, max_hop;   /* ... hops it travelled back, and the one that set level
				 * (0 = the egress host) */
	uint64_t speed_bps;     /* ... the rate of the port that set it; 0 = not given */
	uint8_t hops;           /* L2CI echo: switches on the path; seq: its DISCOVER's */
	uint64_t path_bps;      /* L2CI echo: the path's slowest link */
	uint64_t rtt_ns;        /* L2CI echo: now - the DISCOVER's send time */
};

/* What a law is created with. */
struct rp_env {
	const struct hd_cfg *cfg;       /* [law] and [rate] */
	const void *keys;               /* the law's own keys (its cfg_size struct) */
	uint64_t link_bps;              /* Rmax: the uplink's rate */
	struct hd *h;                   /* for the services below; NULL in law unit tests */
};

/* A per-flow gauge of a law's: Prometheus l2cc_hostd_<law>_<metric> with
 * the flow's labels (its value from get). */
struct rp_gauge {
	const char *metric;
	const char *help;
	double (*get)(const struct rp *rp, const struct flow *f);
};

struct rp_ops {
	const char *name;
	const char *help;       /* one line, for --help-config and docs */
	/* The law's own [law] keys (config.h items, offsets into a struct of
	 * cfg_size bytes, at most HD_LAW_CFG_MAX), picked by `law = NAME`;
	 * check_keys (optional) checks across them and may fill fields
	 * derived from them: 0, or -errno with what was expected in err. */
	const struct cfg_item *keys;
	size_t nkeys, cfg_size;
	int (*check_keys)(void *cfg, char *err, size_t errlen);
	/* One instance per hostd (and again on each reload). */
	int (*create)(struct rp **out, const struct rp_env *env);
	void (*destroy)(struct rp *rp);
	void (*init)(struct rp *rp, struct flow *f, struct rp_out *o);
	void (*on_tx)(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len,
		      enum rp_limit lim, struct rp_out *o);
	void (*on_feedback)(struct rp *rp, struct flow *f, const struct rp_fb *fb,
			    struct rp_out *o);
	void (*on_timer)(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o);
	void (*on_tick)(struct rp *rp, unsigned tick, uint64_t now);
	/* Fields to set in the flow's next data tag (e.g. L2CC_TAG_RLT and a
	 * CPID); called for every tagged frame when present. */
	void (*tag)(struct rp *rp, const struct flow *f, struct wire_tag *t);
	/* The law's per-flow state as key/value pairs into the JSON object the
	 * caller opened (the control socket's and the time series' "law"). */
	void (*describe)(const struct rp *rp, const struct flow *f, struct jw *w);
	/*
	 * Persistent state across consecutive flows of one key (Santos et al.
	 * 2003 §VI-B.2, [law] persistent = yes): how many bytes at the start of
	 * law_area make the law's state; 0 = nothing worth keeping. hostd
	 * copies them aside when a flow is removed and back into the next flow
	 * of its key before init, which resumes from them. They are opaque to
	 * hostd and hold no pointers.
	 */
	size_t state_size;
	/* Optional: the interval over which this host's receiver coalesces
	 * CNPs (DCQCN's NP: at most one per flow per 50 us, scaled) when
	 * [hostd] cnp_interval is 0; 0 = a CNP per marked frame. */
	uint64_t (*cnp_interval)(const struct rp *rp);
	/* Optional per-flow gauges for the metrics. */
	const struct rp_gauge *gauges;
	size_t ngauges;
	/* Optional: the notification point the law's receivers run (np.h, by
	 * name, e.g. "l2ci"); NULL = by [hostd] mode (cnp or ack). A lab runs
	 * one hostd configuration everywhere, so senders and receivers agree. */
	const char *np;
	/* The law's flows are paths to a destination: granularity must be dst
	 * (checked when the configuration loads). */
	bool per_path;
	/* The pacer's own-gap mode for the law's flows (pacer.h): a frame waits
	 * for its own gap, so a higher priority that overtakes a path's long
	 * frame does not wait out that frame's time at the path's rate. */
	bool pace_own_gap;
	/* Optional: true to leave the flow's next frame with IP CE set when it
	 * is an ECN-capable packet (PRC_ECN: a backed-up path tells its TCP
	 * senders); hostd sets it, keeping the IPv4 checksum valid. */
	bool (*ce)(const struct rp *rp, const struct flow *f);
};

/* The registry (rp_registry.c). */
const struct rp_ops *rp_find(const char *name);
/* Names of every law, NULL-terminated (for --help-config and errors). */
extern const char *const rp_names[];

/*
 * The starting rate configured for a flow: the [rate] section whose dst
 * matches a FLOW_KEY_DST flow, else [law] rate/ipd, and [law] window.
 */
void rp_configured_rate(const struct hd_cfg *cfg, const struct flow *f, struct rp_out *o);

/* ---- what hostd offers a law (hd_path.c) ---------------------------------- */

uint64_t rp_now(const struct hd *h);
/* Run on_timer(timer) for f delay_ns from now (replacing that timer); 0 cancels. */
void rp_timer(struct hd *h, const struct flow *f, unsigned timer, uint64_t delay_ns);
/* Run on_tick(tick) at the absolute time at; 0 cancels. */
void rp_tick(struct hd *h, unsigned tick, uint64_t at);
/* Apply a decision outside the flow's own events (from on_tick). */
void rp_apply(struct hd *h, struct flow *f, const struct rp_out *o);
/* The decision in force for f. */
const struct rp_out *rp_current(const struct hd *h, const struct flow *f);
/* Every flow, as flow_foreach(). */
int rp_foreach(struct hd *h, int (*fn)(void *ctx, struct flow *f), void *ctx);
/* Our host's MAC (the source of what the law sends for it); NULL until
 * hostd has seen a frame from the host. */
const uint8_t *rp_host_mac(const struct hd *h);
/* Send a frame of the law's own (complete, from the destination MAC on)
 * toward the fabric, ahead of data: 0, or -ENOBUFS (queue full, no frame). */
int rp_emit(struct hd *h, const void *frame, uint32_t len);

#endif
