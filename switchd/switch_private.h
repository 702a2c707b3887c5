/* SPDX-License-Identifier: BSD-2-Clause */
/* switchd internals shared by its .c files (datapath, config, control). */
#ifndef L2CC_SWITCH_PRIVATE_H
#define L2CC_SWITCH_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include "switch.h"
#include "cp.h"
#include "dp_sink.h"
#include "fc_rx.h"
#include "fc_tx.h"
#include "fc_xdp.h"
#include "fdb.h"
#include "nic.h"
#include "voq.h"
#include "wclock.h"
#include "xport.h"

struct loop;
struct ctl;
struct tseries;
struct lnk;

/* Why a frame was dropped: one counter each, per port. */
enum sw_drop {
	SW_DROP_MALFORMED = 0,  /* runt, cut VLAN tag, multicast source, bad control body */
	SW_DROP_OVERSIZE,       /* longer than the port's MTU allows */
	SW_DROP_BUFFER_FULL,    /* input buffer full (tail drop) */
	SW_DROP_FILTERED,       /* destination is on the port it came from */
	SW_DROP_LINK_LOCAL,     /* 01:80:C2:00:00:0x we do not speak (STP, LLDP, ...) */
	SW_DROP_FORGED,         /* from a host port: a data tag with FECN set, a CNM, or an
				 * l2cc message no host may send (ctrl_msg.h) */
	SW_DROP_UNSUPPORTED,    /* unknown MAC control opcode or l2cc control type/version */
	SW_DROP_NO_FRAME,       /* no free frame for a control frame (not a frame dropped: a
				 * refusal, as flood_limit and reserve) */
	SW_DROP_CP,             /* dropped at its output by the congestion point (RED) */
	SW_DROP_FLOOD_LIMIT,    /* a flood copy not made: its output has flood_queue copies
				 * waiting (a refusal, not a frame) */
	SW_DROP_RESERVE,        /* a flood copy not made: it would take a frame of the
				 * reserve (a refusal, not a frame) */
	SW_DROP_WATCHDOG,       /* queued for an output in a pause storm (action drop) */
	SW_DROP_STATIC_MAC,     /* its source is another port's by a static FDB entry */
	SW_DROP_MAC_LIMIT,      /* a new source on a port that has mac_limit addresses */
	SW_DROP_MAC_MOVE,       /* a source moving here over mac_move_limit per second */
	SW_DROP_VLAN,           /* a VLAN its input port, or its known output, does not carry */
	SW_DROP_LINK_DOWN,      /* queued for an output whose link went down, for a static
				 * entry's port that is down, or left in a down port's RX ring */
	SW_DROP_MAX
};
extern const char *const sw_drop_names[SW_DROP_MAX];

struct sw_prio_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop_buffer_full;
	uint64_t pfc_rx;
	uint64_t credit_blocked;    /* times a frame waited for credits */
};

/*
 * A port's frame counters close (docs/switchd.md, The frame account): every
 * frame that reached the port past the kernel is in rx_frames once, and
 * ends as link-local control consumed (ctrl_rx_frames), a drop (drop[],
 * where it arrived; the refusals no_frame, flood_limit and reserve count no
 * frame), a flooded frame no output took (flood_unsent), or queued for an
 * output (voq_frames) until it is sent (tx_frames) or dropped. Frames enter
 * a VOQ also as flood copies (flood_tx, of the input) and from the CPU
 * pseudo-port (cpu_tx, of the output), whose drops are its own drop[].
 */
struct sw_port_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop[SW_DROP_MAX];
	/* Well-formed PAUSE, PFC and CREDIT frames received (in rx_frames, in
	 * XDP too): applied, ignored (fc_ignored) or void on a link that is
	 * down. A malformed one is a drop. */
	uint64_t ctrl_rx_frames;
	uint64_t flood_unsent;      /* flooded frames freed unsent: every output refused a copy */
	uint64_t pause_rx, pfc_rx, credit_rx;   /* sent: the port's fc_rx */
	uint64_t fc_ignored;        /* PAUSE/PFC/credit received but not configured */
	uint64_t flood_tx;          /* flood copies made of frames received here (the
				     * frame itself is in rx_frames) */
	uint64_t mac_moves;         /* learned addresses that moved to this port */
	uint64_t rx_holds;          /* passes that left frames in the RX ring: buffer full */
	uint64_t ctrl_tx_frames;    /* PAUSE, PFC, CREDIT built and sent (in tx_frames) */
	uint64_t marked;            /* data frames sent with FECN set by us */
	uint64_t mark_untagged;     /* frames we would have marked but carry no l2cc tag */
	uint64_t buffer_full_events; /* this input buffer became full (any priority) */
	uint64_t cpu_tx;            /* frames the CPU pseudo-port queued for this output */
	uint64_t cpu_drops;         /* ... and refused, never queued: over cpu_share, queue
				     * or pool full */
	uint64_t flood_refused;     /* as output: flood copies refused, flood_queue waiting */
	uint64_t pause_storms;      /* the pause watchdog found a priority in a storm */
	uint64_t pause_storm_restores; /* ... and the storm over */
	uint64_t pause_storm_drops; /* frames for this output the watchdog dropped */
	uint64_t link_down_events, link_up_events; /* the link went down / came back */
	uint64_t link_down_drops;   /* frames queued for this output dropped as its link went down */
	uint64_t fdb_flushed;       /* addresses learnt on it, forgotten as its link went down */
	uint64_t xdp_redirect_errors; /* as output: frames redirected to it in XDP that the
				     * kernel could not send (forwarding = xdp, sw_fwd_watch) */
	struct sw_prio_stats prio[L2CC_NPRIO];
};

struct sw_port {
	const struct sw *sw;        /* the switch it belongs to (for its counters) */
	struct port_cfg *cfg;
	uint32_t idx;
	struct xport *xp;           /* NULL for the CPU pseudo-port and in tests */
	/* The link (sw_port_link): a port that is down neither receives nor
	 * sends, and nothing is queued for it. link_seen is what netlink said
	 * last, applied by the next pass; operstate is the kernel's IF_OPER_*. */
	bool link_up, link_seen;
	bool link_fell;             /* netlink said down since the last pass (a bounce
				     * between two passes is still a down and an up) */
	uint8_t operstate;
	uint8_t mac[6];             /* source of the control frames we build */
	uint32_t if_mtu;            /* the interface's MTU (cfg->mtu 0 means this) */
	struct wclock wc;
	uint32_t max_frame;         /* MTU + header + two VLAN tags */
	int ipv6_was;               /* disable_ipv6 before we set it; -1 = untouched */
	struct nic_port nic;        /* driver, zero-copy, NIC pause: found at start */

	/* Input buffer, per priority, in units of frames or bytes. */
	bool unit_frames;
	uint64_t cap;
	uint64_t occ[L2CC_NPRIO], peak[L2CC_NPRIO];
	uint8_t full_mask;          /* priorities whose input buffer is full */
	uint8_t full_due;           /* priorities that took frames this pass */
	/* Toward the upstream sender: PAUSE/PFC/credits about this buffer. */
	struct fc_rx frx;

	/* Egress: pause received from the peer, credits granted by the peer. */
	struct fc_tx etx;
	struct fc_xdp xctl;         /* what of the XDP program's control state is applied */
	/* Time with frames queued for this output and none sendable for lack
	 * of credits (the credit analogue of paused time). */
	uint64_t credit_stall_start, credit_stall_acc;
	bool fc_held;               /* the last TX pass ended held by flow control */
	/* What held it: priorities with frames that were paused, those that
	 * were out of credits, and the credit grants applied by then. The
	 * next pass tells from these whether the hold is over (sw_hold_over). */
	uint8_t held_paused, held_refused;
	uint64_t held_grants;
	/* Pause watchdog: the priorities paused with frames waiting (timing)
	 * and since when (in a storm: since when the storm is), when a pause
	 * for each last arrived, the priorities in a storm, and when the
	 * watchdog next has something to decide (UINT64_MAX: nothing). */
	uint64_t wd_since[L2CC_NPRIO], wd_last_pause[L2CC_NPRIO];
	uint8_t wd_timing, wd_storm;
	uint64_t wd_next;
	uint8_t blocked;            /* priorities with frames that flow control holds */
	/* CPU-originated frames toward this output: at most cpu_share of its rate. */
	struct wclock cpu_wc;
	/* As output: flood copies waiting for it (at most cfg flood_queue). As
	 * input: flooded frames it holds in its buffer until their last copy
	 * leaves. */
	uint32_t flood_waiting, flood_held;

	/* When this port's transmit pass should run again: the wire clock, a
	 * pause running out, a full TX ring; UINT64_MAX when nothing can go
	 * until a frame or a credit update arrives. Set by each TX pass. */
	uint64_t next_tx_ns;

	/* Frames still to mark on transmit, set by hand (`l2ccctl mark`). */
	uint64_t mark_pending;
	/* The congestion point this port reports to (NULL: marking = none). */
	struct cp *cp;
	const struct cp_ops *cpo;

	/* forwarding = xdp (sw_fwd.c): the port's known unicast may leave in
	 * XDP; refused: its veth peer has no XDP program (sw_fwd_watch), so
	 * frames for it take the daemon. */
	bool fwd_xdp, fwd_refused, fwd_err_init;
	uint64_t fwd_err_base;      /* its kernel's redirect-error count at start */

	struct sw_port_stats st;
};

/*
 * Where the switch keeps the XDP program's copy of its FDB and its devmap
 * (sw_fwd.c): the daemon's BPF maps (sw_fwd_bpf_ops, ctx the struct sw), a
 * unit test's fake. 0 or -errno each.
 */
struct sw_fwd_ops {
	int (*fdb_set)(void *ctx, const struct l2cc_fwd_key *k, uint32_t port);
	int (*fdb_del)(void *ctx, const struct l2cc_fwd_key *k);   /* -ENOENT: was not there */
	/* When the XDP program last saw k as a source (ns, CLOCK_MONOTONIC), 0: never. */
	uint64_t (*fdb_seen)(void *ctx, const struct l2cc_fwd_key *k);
	/* Port's own frames may take the fast path (rx), it has a devmap slot (tx). */
	int (*port)(void *ctx, uint32_t port, bool rx, bool tx);
};
extern const struct sw_fwd_ops sw_fwd_bpf_ops;

/* A change asked for on the control socket, applied by the loop before its
 * next pass: handlers never write the datapath's state themselves. */
enum sw_req_type { SW_REQ_MARK = 1 };
struct sw_req {
	enum sw_req_type type;
	uint32_t port;
	uint64_t n;
};
#define SW_MAX_REQS 16

/* A congestion point in use: its ops and its one instance. */
struct sw_cp {
	const struct cp_ops *ops;
	struct cp *cp;
};

/* A flooded frame: its copies (the original among them) still queued. The
 * frame stays charged to its input buffer until the last one leaves. */
struct sw_flood {
	uint32_t refs;
	uint16_t len;
};

struct sw {
	struct sw_cfg *cfg;
	/* The control socket's `reload` (switchd.c sets it; NULL in tests):
	 * what SIGHUP does, with the outcome in why. */
	int (*reload)(struct sw *s, char *why, size_t whylen);
	const void *reload_args;
	struct umem *umem;
	/* Free frames flood copies may not take: what the fill rings need to
	 * keep receiving and control frames (PAUSE, PFC, CREDIT) to be built,
	 * whatever floods are waiting. */
	uint32_t reserve;
	/* Flooded frames in flight, at most one per frame held: the group of
	 * frame i's copies is flood_of[i], free groups on a stack. */
	struct sw_flood *floods;
	uint32_t *flood_of;
	uint32_t *flood_free, nflood_free;
	/* Ports [0, nports) are the real ones; ports[nports] is the CPU
	 * pseudo-port, an input with no wire (sw_emit). */
	struct sw_port ports[SW_MAX_PORTS + 1];
	struct port_cfg cpu_cfg;    /* the CPU pseudo-port's (its name) */
	/* Frames sw_emit() refused before queueing them, by why: malformed,
	 * filtered (no known output), no_frame (also the output's cpu_drops).
	 * The CPU port's st.drop[] counts only frames it queued that were then
	 * dropped (link_down, congestion_point, pause_watchdog). */
	uint64_t cpu_refused[SW_DROP_MAX];
	struct xport **xps;         /* [nports], the daemon's (NULL in tests) */
	int nports;
	struct dp_sink sink;        /* where frames leave: xport, or a test's */
	struct fdb *fdb;
	/* The XDP fast path (sw_fwd.c); NULL: no port forwards in XDP. */
	const struct sw_fwd_ops *fwd_ops;
	void *fwd_ctx;
	bool fwd_dirty;             /* the map must be told the whole FDB again */
	uint64_t fwd_map_errors;    /* map updates the kernel refused */
	struct voq *voq;            /* also the per-frame metadata (voq_frame) */
	struct sw_cp cps[8];        /* the congestion points in use */
	int ncps;
	uint32_t transit_types;     /* 0x88B6 types some congestion point wants in transit */
	struct loop *loop;
	struct loop_timer *nosock_timer; /* once a second: the no_socket watch */
	struct lnk *lnk;            /* link events (daemon/link.h); NULL in tests */
	bool link_dirty;            /* a port's link_seen changed since the last pass */
	struct ctl *ctl;
	struct tseries *ts;
	struct sw_req reqs[SW_MAX_REQS];
	uint32_t nreqs;
	uint64_t now;
	uint64_t start_ns;
	uint64_t next_stats_ns, next_age_ns;
	uint64_t loops, wakeups;
	bool stop;
};

static inline struct sw_port *sw_cpu_port(struct sw *s) { return &s->ports[s->nports]; }

/* Does the port carry VLAN vid? Untagged and priority-tagged (0) always. */
static inline bool sw_vlan_ok(const struct sw_port *p, uint16_t vid)
{
	return !vid || (p->cfg->vlan_map[vid / 64] >> (vid % 64)) & 1;
}

/* The receive queues a port serves: its `queue` if set, else rx_queues.
 * 0, or -EINVAL for an rx_queues that does not parse. */
int sw_port_rx_queues(const struct port_cfg *p, struct xport_qsel *sel);

/* Datapath (switch.c). */
/*
 * The core without sockets: ports as configured, frames from umem (one made
 * with ring_size 0 will do), leaving through sink. macs[i] and mtus[i] are
 * port i's address and interface MTU. The CPU pseudo-port and the
 * congestion points are set up here. Tests drive it with sw_rx_frame() and
 * sw_pass() at times of their choosing.
 */
int sw_core_create(struct sw **out, struct sw_cfg *cfg, struct umem *umem,
		   const struct dp_sink *sink, const uint8_t (*macs)[6], const uint32_t *mtus,
		   uint64_t now);
void sw_core_destroy(struct sw *s);
/* A frame of port p's (addr, len, in the UMEM) at s->now: false if it must
 * stay where it is (its buffer is full under PAUSE/PFC: the RX ring holds it). */
bool sw_rx_frame(struct sw *s, struct sw_port *p, uint64_t addr, uint32_t len);
/* After a batch of received frames: timers, every port's TX, and whether
 * input buffers became full. True if it sent anything. */
bool sw_pass(struct sw *s);
/*
 * Port p's link went down (up false) or came back, at s->now. Down: its
 * learnt FDB entries are flushed; every frame queued for it, at every input,
 * is dropped and counted (link_down, where it arrived) and gives its input
 * buffer its room back; pauses and credits it received are forgotten, and
 * what it told its peer (XOFF, credits) is void. Frames it received and
 * still holds in its own input buffer are forwarded: they arrived whole and
 * their outputs are up. While down it receives nothing (what its RX ring
 * still holds is dropped, link_down) and sends nothing, and nothing is
 * queued for it. Up: flow control starts afresh (a credit grant at once,
 * XOFF if its buffer is still over it) and it forwards again.
 */
void sw_port_link(struct sw *s, struct sw_port *p, bool up);
void sw_xdp_ctl_config(struct sw *s, struct sw_port *p);
/* When the core next has something due by itself (pacing, pause expiry,
 * flow-control and congestion-point timers); UINT64_MAX for nothing. */
uint64_t sw_core_deadline(const struct sw *s);

/* The daemon: the core over AF_XDP ports, the event loop and the control socket. */
int sw_create(struct sw **out, struct sw_cfg *cfg);
void sw_destroy(struct sw *s);
/* One pass over every port: completions, RX, TX, timers. Returns true if it did work. */
bool sw_poll(struct sw *s);
/* The earliest time something is due (pacing, pause expiry, timers). */
uint64_t sw_next_deadline(const struct sw *s);
/* Total ns the port had data queued and no credits to send any of it. */
uint64_t sw_credit_stall_ns(const struct sw_port *p, uint64_t now);
/* Start the congestion points afresh from the configuration (a reload). */
int sw_cps_reset(struct sw *s);
/* Re-apply per-port settings after a reload (rates, thresholds). */
void sw_port_apply_cfg(struct sw *s, struct sw_port *p);

/* The XDP fast path (sw_fwd.c). Attach: the ports with forwarding = xdp
 * (the configuration's) get their fast path and slot, the map the whole
 * FDB, and the FDB's changes from then on; nothing if no port has it. */
void sw_fwd_attach(struct sw *s, const struct sw_fwd_ops *ops, void *ctx);
/* Port p's link or settings changed: its fast path follows now, the map
 * before the next pass (sw_fwd_resync). */
void sw_fwd_port(struct sw *s, struct sw_port *p);
void sw_fwd_resync(struct sw *s);
/* Frames for p take the daemon (refuse: its peer cannot take redirected
 * frames), or XDP again; logged when it changes. */
void sw_fwd_refuse(struct sw *s, struct sw_port *p, bool refuse);
/* About once a second (and at start, before any frame): whether each port
 * that forwards in XDP has a peer that takes redirected frames, and the
 * kernel's count of those it could not send (the first call takes the
 * baseline). */
void sw_fwd_watch(struct sw *s);

/* Control socket, metrics and time series (sw_ctl.c). */
int sw_ctl_init(struct sw *s);
void sw_ctl_fini(struct sw *s);
void sw_stats_tick(struct sw *s);

#endif
