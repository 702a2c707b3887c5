/* SPDX-License-Identifier: BSD-2-Clause */
/* switchd internals shared by its .c files (datapath, config, control). */
#ifndef L2CC_SWITCH_PRIVATE_H
#define L2CC_SWITCH_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include "switch.h"
#include "fc_tx.h"
#include "fdb.h"
#include "voq.h"
#include "wclock.h"
#include "xport.h"

struct loop;
struct ctl;
struct tseries;

/* Why a frame was dropped: one counter each, per port. */
enum sw_drop {
	SW_DROP_MALFORMED = 0,  /* runt, cut VLAN tag, multicast source, bad control body */
	SW_DROP_OVERSIZE,       /* longer than the port's MTU allows */
	SW_DROP_BUFFER_FULL,    /* input buffer full (tail drop) */
	SW_DROP_FILTERED,       /* destination is on the port it came from */
	SW_DROP_LINK_LOCAL,     /* 01:80:C2:00:00:0x we do not speak (STP, LLDP, ...) */
	SW_DROP_FORGED,         /* from a host port: a data tag with FECN already set */
	SW_DROP_UNSUPPORTED,    /* unknown MAC control opcode or l2cc control type/version */
	SW_DROP_NO_FRAME,       /* no free frame for a flood copy or a control frame */
	SW_DROP_MAX
};
extern const char *const sw_drop_names[SW_DROP_MAX];

struct sw_prio_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop_buffer_full;
	uint64_t pfc_tx, pfc_rx;
	uint64_t credit_blocked;    /* times a frame waited for credits */
};

struct sw_port_stats {
	uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
	uint64_t drop[SW_DROP_MAX];
	uint64_t pause_tx, pause_rx, pfc_tx, pfc_rx, credit_tx, credit_rx;
	uint64_t fc_ignored;        /* PAUSE/PFC/credit received but not configured */
	uint64_t flood_tx;          /* frames sent as flood copies */
	uint64_t rx_holds;          /* passes that left frames in the RX ring: buffer full */
	uint64_t ctrl_tx_frames;
	uint64_t marked;            /* data frames sent with FECN set by us */
	uint64_t mark_untagged;     /* frames we would have marked but carry no l2cc tag */
	uint64_t buffer_full_events; /* this input buffer became full (any priority) */
	uint64_t mark_events;       /* naive: full events here; santos: cnt1 copied to this output */
	uint64_t mark_revoked;      /* santos: pending marks dropped as this output became blocked */
	struct sw_prio_stats prio[SW_NPRIO];
};

#define SW_CTRLQ 16

struct sw_port {
	struct port_cfg *cfg;
	uint32_t idx;
	struct xport *xp;
	struct wclock wc;
	uint32_t max_frame;         /* MTU + header + two VLAN tags */
	int ipv6_was;               /* disable_ipv6 before we set it; -1 = untouched */

	/* Input buffer, per priority, in units of frames or bytes. */
	bool unit_frames;
	uint64_t cap, xoff, xon;
	uint64_t occ[SW_NPRIO], peak[SW_NPRIO];
	uint64_t pause_ns;          /* what our pause_quanta mean at this port's rate */
	uint8_t xoff_mask;          /* priorities we hold paused upstream (PAUSE: bit 0) */
	uint64_t xoff_sent_ns[SW_NPRIO];

	/* Credit receiver (IB FCCL): units received from the peer per priority,
	 * reconciled to the peer's own sent count (FCTBS) at each of its
	 * messages; we grant limit = rcvd + cap - occ. */
	uint64_t rcvd[SW_NPRIO], adv_limit[SW_NPRIO];
	uint64_t credit_step;
	uint64_t credit_next_ns, credit_last_ns;

	/* Egress: pause received from the peer, credits granted by the peer. */
	struct fc_tx etx;
	/* Time with frames queued for this output and none sendable for lack
	 * of credits (the credit analogue of paused time). */
	uint64_t credit_stall_start, credit_stall_acc;
	bool fc_held;               /* the last TX pass ended held by flow control */

	/* When this port's transmit pass should run again: the wire clock, a
	 * pause running out, a full TX ring; UINT64_MAX when nothing can go
	 * until a frame or a credit update arrives. Set by each TX pass. */
	uint64_t next_tx_ns;

	/* Frames still to mark on transmit, set by hand (`l2ccctl mark`). */
	uint64_t mark_pending;
	/* Santos marking, as an output: frames still to mark (cnt2). */
	uint64_t cnt2;
	int marking;                /* enum mark_policy of this input buffer, resolved */
	uint8_t full_mask;          /* priorities whose input buffer is full */
	uint8_t full_due;           /* priorities that took frames this pass */

	/* Control frames waiting to go out ahead of data (not subject to pause). */
	uint32_t ctrlq[SW_CTRLQ];
	uint16_t ctrl_len[SW_CTRLQ];
	uint32_t ctrl_head, ctrl_n;

	struct sw_port_stats st;
};

struct sw {
	struct sw_cfg *cfg;
	struct umem *umem;
	struct sw_port ports[SW_MAX_PORTS];
	struct xport *xps[SW_MAX_PORTS];
	int nports;
	struct fdb *fdb;
	struct voq *voq;
	uint64_t *faddr;            /* [nframes]: descriptor address of a held frame */
	uint8_t *fcharged;          /* [nframes]: counted in its input buffer (not a flood copy) */
	uint8_t *fmark;             /* [nframes]: mark this frame when it is sent (naive) */
	struct loop *loop;
	struct ctl *ctl;
	struct tseries *ts;
	uint64_t now;
	uint64_t start_ns;
	uint64_t next_stats_ns, next_age_ns;
	uint64_t loops, wakeups;
	bool stop;
};

/* Datapath (switch.c). */
int sw_create(struct sw **out, struct sw_cfg *cfg);
void sw_destroy(struct sw *s);
/* One pass over every port: completions, RX, TX, timers. Returns true if it did work. */
bool sw_poll(struct sw *s);
/* The earliest time something is due (pacing, pause expiry, timers). */
uint64_t sw_next_deadline(const struct sw *s);
/* Total ns the port had data queued and no credits to send any of it. */
uint64_t sw_credit_stall_ns(const struct sw_port *p, uint64_t now);
/* Re-apply per-port settings after a reload (rates, thresholds). */
void sw_port_apply_cfg(struct sw *s, struct sw_port *p);

/* Control socket, metrics and time series (sw_ctl.c). */
int sw_ctl_init(struct sw *s);
void sw_ctl_fini(struct sw *s);
void sw_stats_tick(struct sw *s);

#endif
