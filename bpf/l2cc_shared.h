/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel/user ABI of l2cc: map value layouts and wire constants that both
 * the XDP programs in bpf/ and the daemons see. Fixed-width types only, so the
 * same bytes mean the same thing on both sides. This is the only copy.
 */
#ifndef L2CC_SHARED_H
#define L2CC_SHARED_H

#include <linux/types.h>

/* ---- Ethernet ---------------------------------------------------------- */
#define L2CC_ETH_ALEN        6
#define L2CC_ETH_HLEN        14
#define L2CC_VLAN_HLEN       4
#define L2CC_ETH_MIN_FRAME   60    /* without FCS: shorter frames are runts */
#define L2CC_NPRIO           8     /* 802.1Q PCP values */

#define L2CC_ETH_P_8021Q     0x8100
#define L2CC_ETH_P_8021AD    0x88A8
#define L2CC_ETH_P_MACCTRL   0x8808 /* 802.3 MAC control: PAUSE and PFC */
#define L2CC_ETH_P_DATA_TAG  0x88B5 /* IEEE local experimental 1: l2cc data tag */
#define L2CC_ETH_P_CTRL      0x88B6 /* IEEE local experimental 2: l2cc control */
#define L2CC_ETH_P_CNTAG     0x22E9 /* 802.1Qau CN-TAG */
#define L2CC_ETH_P_CNM       0x22E7 /* 802.1Qau congestion notification message */

#define L2CC_MACCTRL_PAUSE   0x0001 /* 802.3 Annex 31B */
#define L2CC_MACCTRL_PFC     0x0101 /* 802.1Qbb */

/* Version carried in every 0x88B5/0x88B6 header (docs/wire-formats.md). */
#define L2CC_WIRE_VERSION    1

/* 0x88B6 control message types. */
enum l2cc_ctrl_type {
	L2CC_CTRL_CREDIT = 1,   /* switch-to-switch absolute credit limits */
	L2CC_CTRL_CNP = 2,      /* receiving hostd -> sending hostd: BECN for a flow */
	L2CC_CTRL_ACK = 3,      /* reliable mode: coalesced cumulative ACK + ECN echo */
	L2CC_CTRL_DISCOVER = 4, /* L2CI: source hostd -> path destination, switches update */
	L2CC_CTRL_DISCOVER_ECHO = 5, /* L2CI: destination hostd -> source, what it collected */
	L2CC_CTRL_FEEDBACK = 6, /* L2CI: path egress hostd -> source, switches max-aggregate */
};

/* ---- on-wire structures (network byte order; docs/wire-formats.md) ----- */

/* 802.3 MAC control body after the ethertype: PAUSE uses quanta[0] only. */
struct l2cc_macctrl {
	__be16 opcode;
	__be16 class_enable;    /* PFC: bit i = priority i; PAUSE: the 2-byte pause_time */
	__be16 quanta[8];       /* PFC timers; for PAUSE only the first 2 bytes above count */
} __attribute__((packed));

/* Header of every 0x88B6 control message. */
struct l2cc_ctrl_hdr {
	__u8   version;         /* L2CC_WIRE_VERSION */
	__u8   type;            /* enum l2cc_ctrl_type */
	__be16 length;          /* bytes of body after this header */
} __attribute__((packed));

/* Credit unit carried in a CREDIT message. */
enum l2cc_credit_unit { L2CC_CREDIT_BYTES = 0, L2CC_CREDIT_FRAMES = 1 };

/* sent_unit when the sender of a CREDIT message has no counts to report. */
#define L2CC_CREDIT_UNIT_NONE 0xff

/*
 * CREDIT body: both ends of a credit link send it, periodically and when
 * their buffer frees up, and each message speaks for both directions (the
 * InfiniBand FCCL/FCTBS scheme, IB spec vol. 1 sec. 7.9.4):
 *  - limit[p] (FCCL): the total number of units the peer may have sent to us
 *    on priority p, mod 2^64 = what we have received + what our buffer has
 *    free. Absolute, so an update that is lost is superseded by the next.
 *  - sent[p] (FCTBS): the total number of units we have sent to the peer on
 *    priority p, counted in the unit of the peer's limits (sent_unit). The
 *    message follows those frames on the wire, so the peer sets its received
 *    count to sent[p]: frames lost on the way, or a restart of either end,
 *    cannot leak or invent credits.
 */
struct l2cc_credit {
	__u8   unit;            /* enum l2cc_credit_unit of limit[] (our buffer) */
	__u8   prio_mask;       /* bit p: limit[p] and sent[p] are valid */
	__u8   sent_unit;       /* unit of sent[], or L2CC_CREDIT_UNIT_NONE */
	__u8   reserved;
	__be64 limit[8];
	__be64 sent[8];
} __attribute__((packed));

/*
 * 0x88B5 data tag. hostd inserts it into data frames of congestion-controlled
 * flows, after the MAC addresses and any 802.1Q/802.1ad tags (so switches
 * still read the priority from the outer tag), and strips it before the
 * receiving host stack sees the frame:
 *   DA SA [8100 TCI] 88B5 <struct l2cc_data_tag> <payload of inner_type>
 * Switches may set FECN and never clear it.
 */
struct l2cc_data_tag {
	__u8   version;         /* L2CC_WIRE_VERSION */
	__u8   flags;           /* L2CC_TAG_* */
	__be16 flow;            /* the sending hostd's flow id: names the flow in CNP/ACK */
	__be32 seq;             /* per-flow sequence number */
	__u8   cpid[8];         /* BCN rate-limited tag: congestion point id (L2CC_TAG_RLT) */
	__be16 inner_type;      /* ethertype of the encapsulated payload */
} __attribute__((packed));

#define L2CC_TAG_FECN        0x01 /* congestion experienced (set by switches) */
#define L2CC_TAG_RLT         0x02 /* cpid holds the rate-limiting congestion point */
/* Bytes hostd adds to a frame: 0x88B5 takes the place of the original
 * ethertype, which moves into inner_type, so a tagged frame is exactly the
 * tag's size longer. The host stack's MTU must leave this much room below
 * the fabric's MTU. */
#define L2CC_TAG_LEN         ((int)sizeof(struct l2cc_data_tag))

/* CNP body (0x88B6 type L2CC_CTRL_CNP), sent by the receiving hostd to the
 * sender's MAC when data frames of a flow arrive with FECN set. */
struct l2cc_cnp {
	__be16 flow;            /* flow id from the marked frames' tag */
	__be16 reserved;
	__be32 seq;             /* sequence number of the (last) marked frame */
	__be32 marked;          /* marked frames this CNP stands for (coalescing) */
} __attribute__((packed));

/* ACK body (0x88B6 type L2CC_CTRL_ACK), reliable mode: cumulative, coalesced.
 * An ACK covering N frames of which any was marked counts as N-1 unmarked
 * and one marked (Santos/Turner reliable mode). */
struct l2cc_ack {
	__be16 flow;
	__u8   flags;           /* L2CC_ACK_ECE: a covered frame carried FECN */
	__u8   reserved;
	__be32 cum_seq;         /* every frame up to and including this one arrived */
	__be32 frames;          /* frames this ACK covers */
} __attribute__((packed));

#define L2CC_ACK_ECE         0x01

/*
 * L2CI (McAlpine 2005, "Method 4"): the three messages of Path Rate
 * Control. They always travel priority-tagged at L2CC_L2CI_PCP (802.1Q,
 * VID 0) so that strict-priority switches never hold them behind data:
 *   DA SA 8100 <PCP 7, VID 0> 88B6 <l2cc_ctrl_hdr> <body>
 * A path is named by the source hostd's flow id for it (granularity dst:
 * one flow per destination MAC); the other end only echoes it.
 *
 * DISCOVER / DISCOVER_ECHO body: the source sends it in front of the first
 * frame of a path with hops 0 and path_bps = its own link rate; every
 * switch adds one hop and lowers path_bps to its egress port's rate; the
 * destination's hostd sends the same body back at once as DISCOVER_ECHO,
 * which switches leave alone. t_tx comes back unchanged: min RTT.
 */
struct l2cc_discover {
	__be16 flow;            /* the source's flow id for the path */
	__u8   hops;            /* switches passed (saturates at 255) */
	__u8   flags;           /* none defined: zero, kept */
	__be32 seq;             /* attempt number, echoed */
	__be64 path_bps;        /* slowest link on the way, bit/s */
	__be64 t_tx;            /* the source's send time, ns, echoed */
} __attribute__((packed));

/*
 * FEEDBACK body: the path's egress (the destination's hostd) sends it to
 * the source every few KB of the path's data with its own level and link
 * speed; every switch on the way back adds one hop and, if its level for
 * the output the frame arrived on (the path's forward egress) is higher,
 * writes its level, max_hop = its hop, setter = that port's MAC and
 * speed = that port's rate: max-aggregation. The source's rate law takes
 * its increase in units of speed, so every path through one congested port
 * climbs alike whatever its own links (0: not given, the source's link).
 */
struct l2cc_feedback {
	__be16 flow;            /* the source's flow id for the path */
	__u8   hop;             /* switches passed since the egress (saturates) */
	__u8   max_hop;         /* hop of the point that set level; 0 = the egress */
	__be32 seq;             /* per path, from the egress */
	__be16 level;           /* congestion level, units of 0.01 % of a port's
				 * buffer, saturating at 65535 (levels over 100 %
				 * pass intact up to 655.35 %) */
	__be16 speed;           /* rate of the port (or egress host link) that set
				 * level, Mbit/s, saturating at 65535; 0 = not given */
	__u8   setter[6];       /* MAC of the port (or egress host) that set level */
} __attribute__((packed));

#define L2CC_L2CI_PCP        7     /* priority every L2CI message travels at */
#define L2CC_L2CI_LEVEL_MAX  65535 /* level is 16 bits of 0.01 % */

/*
 * 802.1Qau congestion notification message (CNM, EtherType 0x22E7), as a
 * switch's congestion point sends it to the source of a sampled frame:
 *   DA = the sampled frame's SA, SA = the CP's port MAC, [8100 TCI] 22E7
 *   <struct l2cc_cnm> <encapsulated MSDU, 0..64 bytes>
 * The MSDU is the sampled frame from its EtherType after DA, SA and VLAN
 * tags, so an l2cc-tagged frame's MSDU starts 88B5 <struct l2cc_data_tag>:
 * that is how a hostd finds the flow a CNM is about.
 */
struct l2cc_cnm {
	__be16 ver_fb;          /* version (15..12, 0), reserved (11..6), QntzFb (5..0) */
	__u8   cpid[8];         /* congestion point id: switch MAC, port, priority */
	__be16 qoffset;         /* signed, units of L2CC_CNM_QUNIT octets */
	__be16 qdelta;          /* signed, same unit */
	__be16 encap_prio;      /* sampled frame's priority in bits 15..13 */
	__u8   encap_da[6];     /* sampled frame's DA */
	__be16 encap_len;       /* sampled frame's MSDU length */
} __attribute__((packed));

#define L2CC_CNM_VERSION     0
#define L2CC_CNM_MSDU_MAX    64  /* encapsulated MSDU bytes at most */
#define L2CC_CNM_QUNIT       64  /* octets per unit of qoffset and qdelta */
#define L2CC_CNM_FB_MAX      63  /* QntzFb is 6 bits */

/* ---- XDP program ------------------------------------------------------- */

/* Counters kept by bpf/l2cc_xdp.bpf.c, per receive queue and per CPU
 * (struct l2cc_xdp_qstat). */
enum l2cc_xdp_stat {
	L2CC_XDP_RX = 0,         /* frames seen */
	L2CC_XDP_REDIRECT,       /* handed to the AF_XDP socket */
	L2CC_XDP_NO_SOCKET,      /* no socket bound for this queue: fallback verdict */
	L2CC_XDP_RUNT,           /* shorter than an Ethernet header: dropped */
	L2CC_XDP_CTRL,           /* control frame consumed here (xdp_ctl) */
	L2CC_XDP_STAT_MAX,
};

/* Per receive queue, per CPU (xdp_qstats, keyed by the rx queue index;
 * slot L2CC_XSKMAP_MAX takes every queue above): how the interface spreads
 * traffic over its queues, and which of them found no socket. The port's
 * totals are the sum over slots and CPUs: one map lookup per frame. */
struct l2cc_xdp_qstat {
	__u64 cnt[L2CC_XDP_STAT_MAX]; /* enum l2cc_xdp_stat */
};

/* Verdict when no AF_XDP socket is bound for the receive queue. */
enum l2cc_xdp_fallback {
	L2CC_XDP_FALLBACK_DROP = 0, /* a switch port: nothing for the kernel stack */
	L2CC_XDP_FALLBACK_PASS = 1,
};

/* Program names, so a daemon can recognise (and clean up) a stale one of ours. */
#define L2CC_XDP_PROG_NAME   "l2cc_xdp"

/* xsks_map in bpf/l2cc_xdp.bpf.c is keyed by rx queue index: queues per port. */
#define L2CC_XSKMAP_MAX      64

/* ---- control frames applied in XDP (xdp_ctl) ------------------------- */

/*
 * PAUSE/PFC and CREDIT messages from the link partner are applied by
 * bpf/l2cc_xdp.bpf.c to xdp_ctl (an mmapable one-entry array per port) as
 * they arrive, so a receive ring the daemon holds (a full buffer) does not
 * hold them: the daemon reads the state before it transmits. The daemon
 * writes the configuration fields; XDP writes the rest under xdp_ctl_lock
 * (several receive queues may run the program at once) with seq odd while
 * it writes, and the daemon reads them as a seqcount reader.
 */
#define L2CC_XDPC_ON         0x01  /* take control frames here (else all to the socket) */
#define L2CC_XDPC_UP         0x02  /* the daemon's link is up: a down one takes nothing */
#define L2CC_XDPC_PAUSE      0x04  /* PAUSE is honoured (else counted, ignored) */
#define L2CC_XDPC_PFC        0x08  /* PFC is honoured */
#define L2CC_XDPC_CREDIT     0x10  /* CREDIT is taken (else counted, ignored) */
#define L2CC_XDPC_LIMITS     0x20  /* its limits bind us: the partner may grant
				    * (a switch's host port: not) */

struct l2cc_xdp_ctl {
	/* Written by the daemon, read by XDP. */
	__u32 flags;            /* L2CC_XDPC_* */
	__u32 reserved;
	__u64 rate_bps;         /* the port's rate: 512 bit times per pause quantum */

	/* Written by XDP. */
	__u64 seq;              /* odd while XDP writes; moves on every frame taken */
	__u64 frames, bytes;    /* frames consumed here (not redirected), their bytes */
	__u64 pause_rx, pfc_rx, credit_rx; /* well-formed ones received */
	__u64 fc_ignored;       /* ... of a kind the port does not honour */
	__u64 malformed;        /* truncated or invalid: dropped */
	__u64 unsupported;      /* another MAC control opcode or wire version: dropped */
	__u64 pfc_rx_prio[L2CC_NPRIO]; /* PFC frames enabling priority p */
	/* PAUSE/PFC as fc_tx applies them, per priority: the latest entry
	 * (a later one supersedes it; its time is what the daemon applies). */
	__u64 pauses, resumes;  /* entries applied with quanta > 0 / = 0 */
	__u64 pause_n[L2CC_NPRIO];     /* entries applied to priority p */
	__u64 pause_at[L2CC_NPRIO];    /* the latest's arrival, CLOCK_MONOTONIC ns */
	__u64 pause_until[L2CC_NPRIO]; /* its end (at + quanta), 0 for a resume */
	__u64 xoff_at[L2CC_NPRIO];     /* the latest with quanta > 0 */
	/* CREDIT, the partner's limits (FCCL): absolute, the latest counts.
	 * The frame itself still goes to the socket: our received count is
	 * reconciled to its sent counts (FCTBS) in order with the data
	 * frames it follows on the wire. */
	__u64 credit_n;         /* grants applied */
	__u64 credit_at;
	__u8  credit_unit;      /* enum l2cc_credit_unit of the latest */
	__u8  credit_mask;      /* priorities granted since the unit last changed */
	__u8  reserved2[6];
	__u64 credit_limit[L2CC_NPRIO];
};

/* Written by XDP into a CREDIT's reserved byte (ignored on receipt) when
 * it applied the limits: the daemon then only reconciles the sent counts. */
#define L2CC_CREDIT_XDP_APPLIED 0x58

/*
 * bpf/xdp_fwd.bpf.c, the pure-XDP baseline: tx_port maps an ingress ifindex
 * (key, __u32) to an egress ifindex (value, __u32).
 */
#define L2CC_XDP_FWD_PROG_NAME  "xdp_fwd"
#define L2CC_XDP_PASS_PROG_NAME "xdp_pass"
#define L2CC_XDP_FWD_MAX_PORTS  64


/* ---- pure-XDP forwarding (switchd, forwarding = xdp) -------------------- */

/*
 * Known unicast between two switchd ports with forwarding = xdp leaves by
 * the egress port's devmap slot without reaching the daemon
 * (docs/xdp-forwarding.md). switchd keeps both shared maps: fwd_fdb from
 * its own FDB (switchd/fdb.c learns and ages; entries only for ports that
 * forward in XDP, are up and carry the VLAN), fwd_devs with the ifindex of
 * each such port at its port index. One of each per switch: the first
 * port's program creates them, the others reuse their fds.
 */
#define L2CC_FWD_MAX_PORTS   64    /* fwd_devs slots: switchd's port index */
#define L2CC_FWD_FDB_DEFAULT 4096  /* fwd_fdb entries unless set before load */

/* fwd_fdb key: the MAC and the (outer) VLAN id, 0 untagged. */
struct l2cc_fwd_key {
	__u8   mac[6];
	__u16  vid;             /* host order, 0..4095 */
};

/* fwd_fdb value. */
struct l2cc_fwd_entry {
	__u32  port;            /* switchd's port index = fwd_devs slot */
	__u32  pad;
	__u64  seen_ns;         /* bpf_ktime_get_ns() when XDP last saw it as a
				 * source on its port (about once a second): the
				 * daemon's aging refreshes its entry from it */
};

/* fwd_port[0] of each port's program: what switchd set for that port. */
struct l2cc_fwd_port {
	__u32  port;            /* this port's index */
	__u32  on;              /* 0: every frame to the daemon (link down, starting) */
	__u32  max_len;         /* longer frames go to the daemon (oversize) */
	__u32  pad;
	__u64  vlans[4096 / 64]; /* bit v: the port carries VLAN v (0 always) */
};

/* Per-CPU counters of the fast path, per port's program (fwd_stats). */
enum l2cc_fwd_stat {
	L2CC_FWD_FORWARDED = 0,  /* redirected to the egress port in XDP */
	L2CC_FWD_NO_SLOT,        /* the egress port had no devmap slot: to the daemon */
	L2CC_FWD_DAEMON,         /* left for the daemon: unknown or group DA, source not
				  * known on this port, control frame, other VLAN, oversize */
	L2CC_FWD_STAT_MAX,
};

/* Refresh an entry's seen_ns at most this often (a write per frame would
 * bounce its cache line between CPUs). */
#define L2CC_FWD_SEEN_NS     1000000000ull

#endif /* L2CC_SHARED_H */
