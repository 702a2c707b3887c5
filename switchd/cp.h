/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Congestion points: the switch side of a congestion-control scheme.
 *
 * A scheme is one ops table in a file of its own (cp_santos.c, ...), listed
 * once in the registry (cp.c), in the manner of linuxptp's servos and
 * lldpd's protocol table. A port names its scheme with `marking = NAME`
 * ([port], default the [switch] setting); the switch makes one instance
 * of each scheme in use and calls it on the events of the ports that named
 * it:
 *  - input side, for the port a frame arrived on: a frame admitted to its
 *    input buffer (admit), the buffer became full (full);
 *  - output side, for the port a frame leaves by: joined or left the
 *    output's VOQs (enqueue/dequeue, with the output's backlog), the output
 *    became blocked or unblocked by flow control (blocked), a frame is about
 *    to be sent (tx: may mark it);
 *  - 0x88B6 control frames in transit of the types it claims (transit: may
 *    rewrite the body in place), for every scheme in use;
 *  - its own timer (next_timer/timer).
 * Every hook is optional; a port with `marking = none` has no instance and
 * costs nothing. Hooks run on the packet path: they never allocate, block
 * or log unthrottled.
 *
 * A scheme sees the switch through the accessors below (never its structs),
 * and may originate a frame toward any MAC with sw_emit(): the CPU
 * pseudo-port, whose frames take the FDB lookup and the VOQs like any
 * input's, at a priority the scheme picks.
 *
 * Its counters are data: a table of per-port counters (struct cp_ctr) that
 * the control socket's `counters`, the time series and the Prometheus
 * metrics (l2cc_switch_<scheme>_<metric>) all read.
 *
 * Its keys are data too: a config.h item table (`keys`) with offsets into a
 * config struct of its own (`cfg_size` bytes, at most SW_CP_CFG_MAX).
 * switchd keeps one such struct per port, filled from the port's [port]
 * section, whose `marking` picks the scheme and therefore the table; keys
 * given in [switch] are the defaults of every port of the [switch]
 * marking. A key of another scheme is a warning, so a sweep that switches
 * schemes can leave them in place. The scheme reads a port's values with
 * sw_port_cp_cfg(), typically in create() (which a reload calls again:
 * mark its keys CFG_LIVE unless they size something for good).
 */
#ifndef L2CC_CP_H
#define L2CC_CP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sw;
struct cp;
struct jw;
struct cfg_item;

/* An output's backlog as a frame joins or leaves its VOQs (after the change). */
struct cp_occ {
	uint32_t frames;        /* of this priority, every input */
	uint64_t bytes;
	uint32_t frames_total;  /* every priority */
	uint64_t bytes_total;
};

/* What to do with a frame about to leave. */
enum cp_verdict {
	CP_PASS = 0,
	CP_MARK,                /* set FECN in its l2cc tag (counted `marked` or `mark_untagged`) */
	CP_DROP,                /* drop it (counted `congestion_point` on its input port) */
};

/* A counter's kind; CP_PER_PRIO or'ed in: one per priority (below). A
 * CP_COUNTER_NS counts nanoseconds: Prometheus has it in seconds. */
enum cp_ctr_kind { CP_COUNTER = 0, CP_GAUGE = 1, CP_COUNTER_NS = 2, CP_PER_PRIO = 0x10 };

/* One per-port counter of a scheme: a uint64_t at `off` in its port stats,
 * or with CP_PER_PRIO in kind an array of L2CC_NPRIO of them, one per
 * priority (the JSON has their sum under name and the array under
 * name_prio, Prometheus a sample per priority with a prio label). */
struct cp_ctr {
	const char *name;       /* key in `counters` and the time series */
	const char *metric;     /* Prometheus: l2cc_switch_<scheme>_<metric> */
	int kind;               /* enum cp_ctr_kind */
	const char *help;
	size_t off;
};

struct cp_ops {
	const char *name;
	const char *help;       /* one line, for --help-config and docs */
	/* One instance for the switch; its ports are those with
	 * sw_port_scheme(s, i) == these ops. */
	int (*create)(struct cp **out, struct sw *s);
	void (*destroy)(struct cp *cp);

	void (*admit)(struct cp *cp, uint32_t in, int prio, uint32_t frame, uint32_t len);
	void (*full)(struct cp *cp, uint32_t in, int prio);
	void (*enqueue)(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ);
	void (*dequeue)(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			const struct cp_occ *occ);
	/* Priorities of out with frames waiting that flow control holds
	 * (paused, or refused for credits), whenever that set changes. */
	void (*blocked)(struct cp *cp, uint32_t out, uint8_t prios);
	/* May also rewrite the frame's bytes in place (same length: IP CE). */
	enum cp_verdict (*tx)(struct cp *cp, uint32_t out, int prio, uint32_t frame,
			      uint8_t *data, uint32_t len);
	/* A forwarded 0x88B6 message of a type in ctrl_types; body points into
	 * the frame and may be rewritten in place (same length). */
	void (*transit)(struct cp *cp, uint32_t in, uint32_t out, int type, uint8_t *body,
			size_t len);
	uint32_t ctrl_types;    /* bit t: transit() wants type t */
	/* Optional: `l2ccctl cp PORT ARGS...` on a port of this scheme (tests
	 * and operators, e.g. pinning a level): key/values into the object the
	 * caller opened; 0, or -errno with what was expected in err. Runs on
	 * the loop's thread, between passes. */
	int (*ctl)(struct cp *cp, uint32_t port, const char *args, struct jw *w, char *err,
		   size_t errlen);
	/* The absolute time timer() wants to run; UINT64_MAX for never. */
	uint64_t (*next_timer)(const struct cp *cp);
	void (*timer)(struct cp *cp, uint64_t now);

	const struct cp_ctr *ctrs;
	size_t nctrs;
	/* The per-port stats struct the counters' offsets are in. */
	const void *(*port_stats)(const struct cp *cp, uint32_t port);

	/* Its per-port keys: offsets into its config struct of cfg_size bytes
	 * (defaults from the items); none when nkeys is 0. */
	const struct cfg_item *keys;
	size_t nkeys;
	size_t cfg_size;
	/* Optional: checks across its keys once a port's are all set (kmin <=
	 * kmax); 0, or -errno with what was expected in err (the load names
	 * the port's section and where it is). */
	int (*check_keys)(void *cfg, char *err, size_t errlen);
};

/*
 * The usual instance: the switch and a zeroed record per port after this
 * head. A scheme puts `struct cp_head h` first in its struct cp and makes
 * it with cp_new_ports() (NULL: no memory); cp_free() is then its destroy.
 */
struct cp_head {
	struct sw *s;
	uint32_t nports;
};
void *cp_new_ports(struct sw *s, size_t head_size, size_t per_port);
void cp_free(struct cp *cp);

/* A port's counter by name (NULL if the scheme has none of that name); a
 * CP_PER_PRIO counter's first element. */
const uint64_t *cp_ctr_find(const struct cp_ops *ops, const struct cp *cp, uint32_t port,
			    const char *name);

/* The registry (cp_registry.c): every scheme, and `none` as NULL ops. */
const struct cp_ops *cp_find(const char *name);
/* Names of every scheme, "none" first, NULL-terminated: [switch] marking. */
extern const char *const cp_names[];
/* "switch" (follow [switch] marking), then cp_names: [port] marking. */
extern const char *const cp_port_names[];
/* The ops of cp_names[i]; NULL for "none". */
const struct cp_ops *cp_by_index(int i);

/* ---- the switch, as a congestion point sees it (switch.c) --------------- */

uint64_t sw_now(const struct sw *s);
uint32_t sw_nports(const struct sw *s);
/* The scheme port i named (NULL for none). */
const struct cp_ops *sw_port_scheme(const struct sw *s, uint32_t port);
const char *sw_port_name(const struct sw *s, uint32_t port);
/* Port port's values of its scheme's keys: the scheme's config struct
 * (cfg_size bytes; zeroed for a scheme without keys). */
const void *sw_port_cp_cfg(const struct sw *s, uint32_t port);
/* Frames waiting for out: every input and priority, or one input's VOQ. */
uint32_t sw_out_frames(const struct sw *s, uint32_t out);
uint32_t sw_voq_frames(const struct sw *s, uint32_t in, uint32_t out, int prio);
uint64_t sw_voq_bytes(const struct sw *s, uint32_t in, uint32_t out, int prio);
/* What a scheme may size its thresholds by: a port's input buffer per
 * priority (buffer, in frames or bytes), its largest frame, its role. */
struct sw_port_geom {
	uint64_t buffer;
	bool buffer_frames;     /* buffer counts frames, not bytes */
	uint32_t max_frame;     /* MTU + Ethernet header + two VLAN tags */
	bool host;              /* role = host: it faces a host adapter */
	uint64_t rate_bps;      /* its emulated link rate; 0 = none (as fast as it goes) */
};
void sw_port_geom(const struct sw *s, uint32_t port, struct sw_port_geom *g);
/* Bytes of the frames sent on port whose emulated wire time has not yet
 * run (the wire clock ahead of now, at the port's rate, per-frame overhead
 * included): what a real port would still be serializing. 0 without a rate. */
uint64_t sw_port_wire_bytes(const struct sw *s, uint32_t port);
/* The frames of VOQ (in, out, prio), head first: first, then next until
 * SW_FRAME_NONE. */
#define SW_FRAME_NONE UINT32_MAX
uint32_t sw_voq_first(const struct sw *s, uint32_t in, uint32_t out, int prio);
uint32_t sw_frame_next(const struct sw *s, uint32_t frame);
/* The scheme's own byte of a queued frame (zero when it was queued). */
uint8_t *sw_frame_cp(struct sw *s, uint32_t frame);
/* A queued frame's bytes and length (to sample it: read only). */
const uint8_t *sw_frame_bytes(const struct sw *s, uint32_t frame, uint32_t *len);
/* A port's MAC address: the source of what a scheme sends about it. */
const uint8_t *sw_port_mac(const struct sw *s, uint32_t port);
/* An output is a root of congestion on prio when flow control does not
 * hold it: not paused and, on a credit link to a switch, with credit for a
 * full-size frame. A blocked output is a victim of congestion further on. */
bool sw_out_is_root(struct sw *s, uint32_t out, int prio);
/* Originate a frame (complete, from the destination MAC on) through the CPU
 * pseudo-port at priority prio: FDB lookup (unknown unicast floods), VOQs,
 * bounded (cpu_queue) and at most cpu_share of each output's rate. 0, or
 * -ENOBUFS (no room or no free frame), -EINVAL (malformed). Counted. */
int sw_emit(struct sw *s, int prio, const void *frame, uint32_t len);

#endif
