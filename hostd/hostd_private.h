/* SPDX-License-Identifier: BSD-2-Clause */
/* hostd internals shared by its .c files (datapath, config, control). */
#ifndef L2CC_HOSTD_PRIVATE_H
#define L2CC_HOSTD_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include "hostd.h"
#include "dp_sink.h"
#include "fc_rx.h"
#include "fc_tx.h"
#include "fc_xdp.h"
#include "flow.h"
#include "nic.h"
#include "np.h"
#include "rp.h"
#include "tfifo.h"
#include "pacer.h"
#include "wclock.h"
#include "xport.h"

struct loop;
struct ctl;
struct tseries;
struct lnk;

#define HD_PARK_WINDOW 0xff
#define HD_NOTIFY_CAP 512           /* CNPs/ACKs waiting for the uplink */

/* The sink's ports (dp_sink.h): toward the host stack, toward the switch. */
enum { HD_PORT_HOST = 0, HD_PORT_UP = 1 };

/* Why a frame was dropped: one counter each, per port (host = from the host
 * stack, up = from the fabric). */
enum hd_drop {
	HD_DROP_MALFORMED = 0,  /* runt, cut VLAN tag, multicast source */
	HD_DROP_OVERSIZE,       /* does not fit the fabric's MTU once tagged */
	HD_DROP_QUEUE_FULL,     /* host edge: the flow's queue is at its byte limit */
	HD_DROP_PASS_FULL,      /* host edge: the ARP/ND/broadcast queue is full */
	HD_DROP_NO_FRAME,       /* free UMEM frames ran low (host edge) or none for a CNP/ACK */
	HD_DROP_FORGED,         /* from the host: a 0x88B5 tag, 0x88B6 control frame or CNM */
	HD_DROP_LINK_LOCAL,     /* 01:80:C2:00:00:0x we do not speak (or from the host) */
	HD_DROP_BAD_TAG,        /* from the fabric: malformed l2cc data tag */
	HD_DROP_BAD_CTRL,       /* malformed l2cc control message or MAC control frame */
	HD_DROP_UNSUPPORTED,    /* unknown control type, version or MAC control opcode */
	HD_DROP_LINK_DOWN,      /* host: queued for (or sent toward) an uplink that is down;
				 * up: for a host port that is down; either: left in the
				 * RX ring of a port that is down */
	HD_DROP_SUBFLOW_SHARE,  /* host edge: its connection holds its share of the flow's
				 * queue (subflow_share) */
	HD_DROP_MAX
};
extern const char *const hd_drop_names[HD_DROP_MAX];

/*
 * A port's frames, all kinds. On the uplink, the link-local control among
 * them: ctrl_rx_frames, the well-formed PAUSE, PFC and CREDIT from the
 * switch (applied, ignored as not honoured, or void on a link that is
 * down; taken in XDP too), and ctrl_tx_frames, the CREDITs we built. So
 * rx_frames - ctrl_rx_frames are the frames the fabric delivered, and
 * tx_frames - ctrl_tx_frames those we sent into it (data, pass-through,
 * CNP, ACK, DISCOVER, ECHO, FEEDBACK): the two ends of the frame account
 * (docs/hostd.md, Uplink frames). Both stay 0 on the host port.
 */
struct hd_port_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t ctrl_rx_frames, ctrl_tx_frames;
	uint64_t drop[HD_DROP_MAX];
	uint64_t link_down_events, link_up_events; /* the port's link went down / came back */
};

struct hd_stats {
	/* flow control from the switch */
	uint64_t pause_rx, pfc_rx, credit_rx, credit_tx;   /* credit_tx: our counts (fc_rx) */
	uint64_t fc_ignored;        /* PAUSE/PFC/credit received but not honoured (config) */
	uint64_t fc_blocked;        /* times a flow's head frame waited on PAUSE/PFC/credits */
	uint64_t window_blocked;    /* times a flow waited for ACKs: its window was full */
	uint64_t ack_timeouts;      /* windows given up on after ack_timeout without an ACK */
	/* host -> fabric */
	uint64_t tagged;            /* data frames sent with a tag */
	uint64_t pass_frames;       /* ARP/ND/broadcast/multicast passed through untagged */
	uint64_t pcp_tagged;        /* pcp_from_dscp: frames given an 802.1p priority tag */
	uint64_t unclassified;      /* frames put on the default flow: table full or no key */
	/* fabric -> host */
	uint64_t stripped;          /* tagged frames delivered untagged to the host */
	uint64_t fecn_rx;           /* of those, marked (FECN) */
	uint64_t seq_gaps;          /* a peer flow's sequence jumped (lost or reordered) */
	uint64_t not_ours;          /* tagged frames for another host (flooded): not answered */
	uint64_t rx_holds;          /* passes that left frames in the uplink ring: host ring full */
	/* notifications */
	uint64_t cnp_tx, cnp_rx, ack_tx, ack_rx;
	uint64_t cnp_unknown, ack_unknown; /* naming a flow that does not exist: ignored */
	uint64_t notify_forged;     /* CNP/ACK not to our host, not from the flow's peer,
				     * or acknowledging frames never sent: ignored */
	uint64_t ack_clamped;       /* ACKs covering more frames than were in flight */
	uint64_t cnm_rx;            /* 802.1Qau CNMs from a switch, handed to the law */
	uint64_t cnm_unknown;       /* CNMs about no flow of ours (untagged sample, gone flow) */
	uint64_t cnm_bad;           /* CNMs that do not decode (another version, cut short) */
	uint64_t discover_rx;       /* DISCOVERs for our host (the np answers them) */
	uint64_t echo_tx, echo_rx;
	uint64_t feedback_tx, feedback_rx;
	uint64_t path_msg_unknown;  /* DISCOVER/ECHO/FEEDBACK for another host, or naming
				     * no path of ours from its destination (ignored) */
	uint64_t ce_set;            /* IP CE set on ECN-capable packets leaving (the law's) */
	uint64_t notify_drops;      /* CNP/ACK not sent: control queue full or no frame */
	uint64_t law_saves, law_resumes; /* [law] persistent: states kept, and taken up again */
};

/* hostd's own state of a (sender-side) flow, indexed by flow id. */
struct hd_flow {
	struct rp_out out;          /* the law's current decision, as applied */
	enum rp_limit last_limit;   /* what limited its last frame */
	uint32_t acked_next;        /* reliable: first seq not yet acknowledged */
	uint8_t peer[6];            /* where its tagged frames went: who may answer */
	bool many_peers;            /* they went to more than one (a PRIO flow) */
	uint8_t parked;             /* 0, 1 + the priority it waits on (paused/credits),
				     * or HD_PARK_WINDOW (its window is full) */
	bool window_waited;         /* its next frame waited on the window (RWL) */
	uint32_t park_next;         /* link in that priority's parked list */
	bool win_timer;             /* queued in the ACK-timeout FIFO */
	uint32_t win_acked;         /* acked_next when that timer was armed */
	uint64_t rate_bytes;        /* bytes_out at the last time-series line (for rates) */
	uint64_t pace_lost_ns;      /* pacing time lost before the pacer last forgot the
				     * flow (a link down): hd_pace_lost_ns() adds the rest */
};

/* A small ring of frames (index, length) owned by the daemon. */
struct hd_fring {
	uint32_t cap, head, n;
	uint32_t *idx;
	uint16_t *len;
};

/* A change asked for on the control socket, applied by the loop before its
 * next pass: handlers never write the datapath's state themselves. */
enum hd_req_type { HD_REQ_SET_RATE = 1 };
struct hd_req {
	enum hd_req_type type;
	uint16_t flow, gen;         /* the flow, as it was when asked */
	uint64_t rate_bps;
	int64_t ipd;                /* >= 0: pace by IPD instead */
};
#define HD_MAX_REQS 16

struct hd {
	struct hd_cfg *cfg;
	/* The control socket's `reload` (hostd.c sets it; NULL in tests):
	 * what SIGHUP does, with the outcome in why. */
	int (*reload)(struct hd *h, char *why, size_t whylen);
	const void *reload_args;
	const struct rp_ops *rpo;   /* the law ([law] law) and its instance */
	struct rp *rp;
	struct umem *umem;
	struct xport *host, *up;    /* the daemon's (NULL in tests) */
	struct xport *xps[2];       /* the same, as the sink's ports */
	struct dp_sink sink;        /* where frames leave: HD_PORT_HOST, HD_PORT_UP */
	struct flow_frame *frames;  /* [nframes]: each frame's address, queue link, length */
	uint32_t reserve;           /* free frames kept for the fill rings */
	uint32_t max_frame;         /* largest frame the uplink may send (fabric MTU + headers) */
	uint32_t host_mtu;          /* MTU of the host stack's interface */
	int ipv6_host, ipv6_up;     /* disable_ipv6 before we set it; -1 = untouched */
	struct nic_port nic[2];     /* [HD_PORT_HOST], [HD_PORT_UP]: found at start */
	/* The host stack's MAC (its eth0): read at start when the veth peer is
	 * in our namespace, and learnt from what the host sends. Only frames
	 * addressed to it are answered with CNPs/ACKs: a switch floods unknown
	 * unicast to every host, and an answer from a host that was not the
	 * destination would name someone else's address. */
	uint8_t host_mac[6];
	bool host_mac_known;
	uint8_t mac_up[6];          /* the uplink port's own address */

	/* Uplink egress: wire clock at link_rate, flow control from the switch. */
	struct wclock wc;
	struct fc_tx etx;
	struct fc_xdp xctl;         /* what of the uplink XDP program's control state is applied */
	uint64_t next_tx_ns;
	bool fc_held;               /* the last TX pass ended held by flow control */
	/* What held it (as switchd's): priorities with frames paused, those
	 * open but out of credits, and the grants applied by then. */
	uint8_t held_paused, held_refused;
	uint64_t held_grants;
	bool up_held;               /* the last RX pass left frames in the uplink ring */
	uint32_t host_unflushed;    /* frames put on the host port since its last flush */
	/* Credit receiver side: what we counted from the switch, so our CREDIT
	 * messages carry a sent count it can reconcile to (we grant unlimited:
	 * everything goes on to the host at once). */
	struct fc_rx frx;

	/* Flows (sender side) and their pacer. */
	struct flow_table *flows;
	struct hd_flow *hf;         /* [max_flows] */
	struct pacer *pacer;
	uint32_t park_head[L2CC_NPRIO], park_tail[L2CC_NPRIO];
	uint8_t parked_mask;        /* priorities with parked flows */
	/* The law's timers: RP_TIMERS per flow, slot = id * RP_TIMERS + k,
	 * a min-heap of slots on tat[]; and its own ticks. */
	uint32_t *theap;            /* slots in heap order */
	uint32_t *tpos;             /* [slots]: position in the heap + 1, 0 = absent */
	uint64_t *tat;              /* [slots]: deadline */
	uint32_t ntimers;
	uint64_t tick_at[RP_TICKS]; /* 0 = not set */

	/* [law] persistent: law state of removed flows, by key, for the
	 * same key's next flow (a flow table used as a bounded keyed store;
	 * its entries expire after HD_SAVED_IDLE_NS). */
	struct flow_table *saved;

	/* Peers (receiver side) and the notification point that answers them. */
	struct flow_table *peers;
	struct hd_peer *pr;         /* [max_flows] */
	const struct np_ops *npo;
	struct np *np;
	struct tfifo win_fifo;      /* flows waiting on a full window (ack_timeout) */

	/* Frames waiting for the uplink outside the flows. */
	struct hd_fring notify;     /* CNP/ACK: priority 0, ahead of data */
	struct hd_fring pass;       /* ARP/ND/broadcast/multicast from the host */

	struct hd_port_stats hst, ust; /* host port, uplink */
	struct hd_stats st;

	/* The ports' links (hd_port_link), by HD_PORT_*: as applied, and what
	 * netlink said last (applied by the next pass); the kernel's IF_OPER_*. */
	bool link_up[2], link_seen[2];
	bool link_fell[2];          /* netlink said down since the last pass */
	uint8_t operstate[2];
	bool link_dirty;
	struct lnk *lnk;            /* link events (daemon/link.h); NULL in tests */

	struct loop *loop;
	struct loop_timer *nosock_timer; /* once a second: the no_socket watch */
	struct ctl *ctl;
	struct tseries *ts;
	struct hd_req reqs[HD_MAX_REQS];
	uint32_t nreqs;
	uint64_t now, start_ns, last_stats_ns;
	uint64_t next_stats_ns, next_expire_ns;
	uint64_t expire_interval;   /* ns between flow-expiry sweeps */
	uint32_t expire_budget;     /* ids per sweep; 0 = all */
	uint64_t loops, wakeups;
	bool stop;
};

/* What the core needs to know of the ports (the daemon reads it off them). */
struct hd_ports_info {
	uint32_t max_frame;         /* largest frame the uplink may send */
	uint32_t host_mtu;          /* the host stack's interface MTU */
	bool host_mac_known;
	uint8_t host_mac[6];
	uint8_t up_mac[6];          /* the uplink's own: source of our CREDITs */
};

/* Datapath core (hd_path.c): no sockets, time set by the caller. */
/*
 * The core over umem (one made with ring_size 0 will do), emitting through
 * sink, at time now. Tests drive it with hd_rx_up_frame(),
 * hd_rx_host_frame() and hd_pass() at times of their choosing.
 */
int hd_core_create(struct hd **out, struct hd_cfg *cfg, struct umem *umem,
		   const struct dp_sink *sink, const struct hd_ports_info *pi, uint64_t now);
void hd_core_destroy(struct hd *h);
/* A frame from the switch (addr, len in the UMEM): false if it must stay in
 * the uplink's RX ring (the host port cannot take it now). */
bool hd_rx_up_frame(struct hd *h, uint64_t addr, uint32_t len);
/* A frame from the host stack. */
void hd_rx_host_frame(struct hd *h, uint64_t addr, uint32_t len);
/* Timers, then the uplink's TX; flushes both ports. True if it sent anything. */
bool hd_pass(struct hd *h);
/* When the core next has something due by itself; UINT64_MAX for nothing. */
uint64_t hd_core_deadline(const struct hd *h);
/*
 * Port `port` (HD_PORT_HOST or HD_PORT_UP) went down (up false) or came
 * back, at h->now. The uplink down: every flow's queued frames, the
 * pass-through FIFO and the CNPs/ACKs waiting are dropped and counted
 * (link_down on the host port; notify_drops), the pacer forgets the flows'
 * backlog (their rates stay), frames in flight are given up (a reliable
 * window opens), pauses and credits from the switch are forgotten; while it
 * is down, what the host sends is dropped (link_down) and nothing is paced
 * or sent. The host port down: frames from the fabric for the host are
 * dropped (link_down on the uplink); notifications are still answered. A
 * port that is down receives nothing: what its RX ring still holds is
 * dropped. Up: the uplink starts afresh (a credit grant at once).
 */
void hd_port_link(struct hd *h, int port, bool up);

/* The daemon (hd_daemon.c): the core over AF_XDP ports. */
int hd_create(struct hd **out, struct hd_cfg *cfg);
void hd_destroy(struct hd *h);
/* One pass: completions, RX on both ports, TX, timers. True if it did work. */
bool hd_poll(struct hd *h);
/* The earliest time something is due (pacing, pause expiry, timers). */
uint64_t hd_next_deadline(const struct hd *h);
/* Apply settings that may change at run time (link rate, burst, rates of
 * flows that follow the configuration). */
void hd_apply_cfg(struct hd *h);
void hd_xdp_ctl_config(struct hd *h);
/* Set a flow's rate from the control socket (rate_bps, or ipd if by_ipd);
 * pins the flow so it does not expire. 0 or -errno. */
int hd_set_flow_rate(struct hd *h, struct flow *f, uint64_t rate_bps, int64_t ipd);

/* Pacing time the flow lost to hostd noticing its deadlines late (pacer.h),
 * over its life. */
static inline uint64_t hd_pace_lost_ns(const struct hd *h, const struct flow *f)
{
	return h->hf[f->id].pace_lost_ns + pacer_lost_ns(h->pacer, f->id);
}

/* Control socket, metrics and time series (hd_ctl.c). */
int hd_ctl_init(struct hd *h);
void hd_ctl_fini(struct hd *h);
void hd_stats_tick(struct hd *h);

#endif
