/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostd's per-flow pacer: which flow may send its next frame, and when.
 *
 * Each flow has a virtual clock like switchd's wire clock (wclock.h): the
 * time its next frame may start, with the remainder of the division carried
 * so the long-run rate is exact. A flow is paced either by a rate in bit/s
 * or, as in InfiniBand, by an inter-packet delay relative to the link rate:
 * the gap after a frame is (1 + ipd) times that frame's time at the link
 * rate, i.e. rate = link / (1 + ipd), kept exact even when the quotient is
 * not a whole number of bit/s. Rate 0 means unpaced (always eligible).
 *
 * Backlogged flows wait in a hierarchical timing wheel (8 levels of 256
 * slots with bitmaps, so all of 64-bit time is covered without overflow
 * lists): insert and remove are O(1), pacer_next() is amortised O(1) and
 * flows that become eligible in the same slot are served FIFO. A flow is
 * filed in the slot that starts at or after its eligible time, so it is
 * never returned early; it may be returned up to one slot late, which costs
 * no rate because its clock advances from its own eligible time, not from
 * `now` (a backlogged flow keeps up to burst + one slot of lateness; beyond
 * that its clock is pulled up, like wclock after idle).
 *
 * The uplink is paced separately by a wire clock the caller owns (a struct
 * wclock at the host link rate, with the same per-frame overhead). The two
 * combine like this; ask the pacer only when the wire can take a frame:
 *
 *	while (wclock_ready(&uplink, now) && pacer_next(p, now, &flow) == 1) {
 *		len = send_head(flow);
 *		wclock_charge(&uplink, len);
 *		pacer_done(p, flow, now, len, head_len(flow));  // 0 if now empty
 *	}
 *	sleep until max(pacer_deadline(p), uplink busy ? wclock_next(&uplink) : 0)
 *
 * Flows eligible while the wire is busy wait in FIFO order, so equal flows
 * share a bottleneck uplink equally.
 *
 * Rate lost to a late caller: a flow that waits in the wheel for its own
 * deadline and is noticed (moved to the ready FIFO by a call at `now`)
 * more than burst + one slot after it was due has its clock pulled up by
 * pacer_done() like wclock after a late wake-up: that time beyond the
 * allowance is rate the flow never got, counted per flow (pacer_lost_ns)
 * and in total (pacer_stats.lost_ns). Only a flow that was backlogged
 * counts: the pull-up of pacer_wake() after idle is not a loss, nor is the
 * wait in the ready FIFO behind a busy wire (that is the uplink's share,
 * not lateness: a caller that asks whenever the wire frees notices every
 * deadline within a frame time of the link, less than a burst of two
 * frames forgives). A flow already due when the caller sleeps late waits
 * on the wire: that loss is the uplink wire clock's (wclock.h), not its. All times are in ns from one monotonic
 * clock and must not go backwards between calls. No allocation after
 * pacer_create(), no syscalls.
 */
#ifndef L2CC_HOSTD_PACER_H
#define L2CC_HOSTD_PACER_H

#include <stdbool.h>
#include <stdint.h>

#define PACER_NEVER UINT64_MAX

struct pacer;

struct pacer_stats {
	uint64_t backlogged;    /* flows with a frame to send (woken, not done with 0) */
	uint64_t served;        /* flows returned by pacer_next() */
	uint64_t slots_visited; /* wheel slots drained or cascaded */
	uint64_t cascades;      /* flows moved from a higher wheel level to a lower one */
	uint64_t inserts;       /* flows filed in the wheel or the ready list */
	uint64_t lost_ns;       /* rate lost by backlogged flows noticed late, ns of their clocks */
};

/*
 * Room for flows 0..max_flows-1, all unpaced and idle. slot_ns is the wheel's
 * granularity (e.g. 1000); overhead is the bytes added to every frame on the
 * wire (24 = preamble+SFD+FCS+IFG), as given to the uplink's wclock_init(),
 * so that ipd 0 is exactly the link rate. NULL with errno set on failure.
 */
struct pacer *pacer_create(uint32_t max_flows, uint64_t slot_ns, uint32_t overhead);
void pacer_destroy(struct pacer *p);

/*
 * Pace a flow at rate_bps (0 = unpaced). If the flow is waiting, the wait
 * still ahead of `now` is rescaled to the new rate (a congestion-control law
 * that raises a rate should not wait out the old, longer gap). -EINVAL for
 * a flow out of range.
 */
int pacer_set_rate(struct pacer *p, uint32_t flow, uint64_t rate_bps, uint64_t now);

/*
 * Pace a flow by inter-packet delay (IBA 1.2 §9.11, static rate control):
 * after a frame of L bytes the next may start (1 + ipd) * (L + overhead) *
 * 8 / link_bps seconds later. -EINVAL if link_bps is 0 or the flow is out
 * of range.
 */
int pacer_set_ipd(struct pacer *p, uint32_t flow, uint32_t ipd, uint64_t link_bps,
		  uint64_t now);

/*
 * Bytes beyond one frame that may leave back to back after idle (default 0:
 * one frame). A backlogged flow served late keeps this much plus one slot.
 */
int pacer_set_burst(struct pacer *p, uint32_t flow, uint32_t burst_bytes);

/*
 * Own-gap mode (default off): a frame waits for its own gap before it
 * starts, as in a token bucket, instead of the gap of the frame before it.
 * The long-run rate is the same; what changes is who waits: a short frame
 * that overtakes a long one in the flow's queue (a higher priority, an
 * ACK) waits for its own few bytes' worth, not for the long frame's time
 * (McAlpine 2005 §8: the video "cleanly stole bandwidth" from the DB
 * traffic of its path). After idle the allowance is the burst plus the
 * frame's own gap, so the first frame still goes at once.
 */
int pacer_set_own_gap(struct pacer *p, uint32_t flow, bool on, uint64_t now);

/*
 * The backlogged flow's next frame is now head_len bytes (another frame
 * overtook its head). In own-gap mode a flow waiting for its deadline is
 * filed again by the new frame's gap; one already due stays due. -EINVAL
 * for a bad flow or head_len 0.
 */
int pacer_head(struct pacer *p, uint32_t flow, uint64_t now, uint32_t head_len);

/* The flow's rate in bit/s (link/(1+ipd) rounded down in IPD mode), 0 if unpaced. */
uint64_t pacer_rate(const struct pacer *p, uint32_t flow);

/*
 * When the flow's next frame may start (ns, the carried fraction rounded
 * up). Meaningful for a paced flow that is backlogged.
 */
uint64_t pacer_eligible(const struct pacer *p, uint32_t flow);

/*
 * The flow has a frame (of next_len bytes) to send. No-op if it is already
 * backlogged. -EINVAL for a bad flow or next_len 0.
 */
int pacer_wake(struct pacer *p, uint32_t flow, uint64_t now, uint32_t next_len);

/*
 * The flow returned by pacer_next() sent a frame of sent_len bytes: charge
 * its clock, and file it again if it has another frame (next_len != 0) or
 * make it idle (next_len == 0). -EINVAL if the flow was not being served.
 */
int pacer_done(struct pacer *p, uint32_t flow, uint64_t now, uint32_t sent_len,
	       uint32_t next_len);

/*
 * A flow whose eligible time has come, into *flow: returns 1, and the flow
 * is in service until pacer_done(). Returns 0 if no flow may send at `now`.
 */
int pacer_next(struct pacer *p, uint64_t now, uint32_t *flow);

/*
 * When pacer_next() may next return a flow: <= the last `now` if one is
 * ready, PACER_NEVER if nothing is backlogged, else the earliest eligible
 * time rounded up to a slot. Never late; it may be early (a wake-up that
 * returns nothing) only after a pacer_remove() or a rate change took the
 * earliest flow out of its slot.
 */
uint64_t pacer_deadline(const struct pacer *p);

/* Pacing time the flow lost to late noticing (see above) since it was last
 * reset (pacer_remove); 0 for a flow out of range. */
uint64_t pacer_lost_ns(const struct pacer *p, uint32_t flow);

/* Take the flow out of the scheduler and reset it to unpaced, idle, defaults
 * (its lost time too: the total in pacer_stats keeps it). */
int pacer_remove(struct pacer *p, uint32_t flow);

void pacer_get_stats(const struct pacer *p, struct pacer_stats *st);

#endif
