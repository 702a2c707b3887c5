// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for daemon/fc_xdp.c: the XDP program's control state (struct
 * l2cc_xdp_ctl, written here by hand as bpf/l2cc_xdp.bpf.c would) brought
 * into fc_tx, and its counters as increments.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fc_xdp.h"

#define MS 1000000ull

/* An XOFF on prio at `at` lasting dur, as the program records it. */
static void xoff(struct l2cc_xdp_ctl *c, int prio, uint64_t at, uint64_t dur)
{
	c->seq += 2;
	c->pause_n[prio]++;
	c->pause_at[prio] = c->xoff_at[prio] = at;
	c->pause_until[prio] = at + dur;
	c->pauses++;
}

static void xon(struct l2cc_xdp_ctl *c, int prio, uint64_t at)
{
	c->seq += 2;
	c->pause_n[prio]++;
	c->pause_at[prio] = at;
	c->pause_until[prio] = 0;
	c->resumes++;
}

static void test_pause_at_arrival(void)
{
	struct fc_xdp x = { 0 };
	struct l2cc_xdp_ctl c = { 0 };
	struct fc_xdp_news n;
	struct fc_tx f = { 0 };

	/* Came at 10 ms while the ring was held; applied at 12 ms. */
	xoff(&c, 3, 10 * MS, 5 * MS);
	c.pfc_rx = 1;
	c.pfc_rx_prio[3] = 1;
	c.frames = 1;
	c.bytes = 60;
	fc_xdp_apply(&x, &c, &f, 12 * MS, &n);
	CHECK_EQ(fc_tx_open_mask(&f, 12 * MS), 0xff & ~(1u << 3));
	CHECK_EQ(fc_tx_pause_end(&f, 1u << 3), 15 * MS);
	CHECK_EQ(fc_tx_paused_ns(&f, 3, 12 * MS), 2 * MS);
	CHECK_EQ(n.pfc_rx, 1);
	CHECK_EQ(n.pfc_rx_prio[3], 1);
	CHECK_EQ(n.frames, 1);
	CHECK_EQ(n.ctrl_frames, 1);
	CHECK_EQ(n.bytes, 60);
	CHECK_EQ(n.xoff_mask, 1u << 3);
	CHECK_EQ(n.xoff_at[3], 10 * MS);
	CHECK_EQ(f.pauses, 1);
	CHECK_EQ(x.seq, c.seq);

	/* Nothing new: the same snapshot again changes nothing. */
	fc_xdp_apply(&x, &c, &f, 13 * MS, &n);
	CHECK_EQ(n.pfc_rx, 0);
	CHECK_EQ(n.xoff_mask, 0);
	CHECK_EQ(f.pauses, 1);

	/* The XON at 13 ms ends it there, not when we look. */
	xon(&c, 3, 13 * MS);
	fc_xdp_apply(&x, &c, &f, 14 * MS, &n);
	CHECK_EQ(fc_tx_open_mask(&f, 14 * MS), 0xff);
	CHECK_EQ(fc_tx_paused_ns(&f, 3, 14 * MS), 3 * MS);
	CHECK_EQ(f.resumes, 1);
	CHECK_EQ(f.resume_ns, 13 * MS);
	CHECK_EQ(n.xoff_mask, 0);
}

static void test_pause_from_the_future(void)
{
	struct fc_xdp x = { 0 };
	struct l2cc_xdp_ctl c = { 0 };
	struct fc_xdp_news n;
	struct fc_tx f = { 0 };

	/* The pass's clock was read before the frame came: it counts as now. */
	xoff(&c, 0, 20 * MS, 1 * MS);
	fc_xdp_apply(&x, &c, &f, 19 * MS, &n);
	CHECK_EQ(fc_tx_paused_ns(&f, 0, 19 * MS), 0);
	CHECK_EQ(fc_tx_pause_end(&f, 1), 21 * MS);
	CHECK_EQ(n.xoff_at[0], 19 * MS);
}

static void test_credit(void)
{
	struct fc_xdp x = { 0 };
	struct l2cc_xdp_ctl c = { 0 };
	struct fc_xdp_news n;
	struct fc_tx f = { 0 };

	c.seq = 2;
	c.credit_rx = c.credit_n = 1;
	c.credit_unit = L2CC_CREDIT_BYTES;
	c.credit_mask = 0xff;
	c.credit_limit[1] = 5000;
	fc_xdp_apply(&x, &c, &f, 1 * MS, &n);
	CHECK(n.credit);
	CHECK(n.credit_first);            /* the first grant: ours goes out at once */
	CHECK(f.credit_have);
	CHECK(!fc_tx_credit_ok(&f, 1, 1000));
	CHECK_EQ(n.credit_rx, 1);

	/* Two grants between two looks: the latest limit, both counted. */
	c.seq = 6;
	c.credit_rx = c.credit_n = 3;
	c.credit_limit[1] = 9000;
	fc_xdp_apply(&x, &c, &f, 2 * MS, &n);
	CHECK(!n.credit_first);
	CHECK(fc_tx_credit_ok(&f, 1, 4000));
	CHECK(!fc_tx_credit_ok(&f, 1, 4001));
	CHECK_EQ(f.credit_grants, 3);
	CHECK_EQ(n.credit_rx, 2);
}

static void test_forget(void)
{
	struct fc_xdp x = { 0 };
	struct l2cc_xdp_ctl c = { 0 };
	struct fc_xdp_news n;
	struct fc_tx f = { 0 };

	/* Taken just before the link went down: counted, never applied. */
	xoff(&c, 0, 1 * MS, 5 * MS);
	c.pause_rx = 1;
	c.malformed = 2;
	c.frames = 3;
	fc_xdp_forget(&x, &c, &n);
	CHECK_EQ(n.pause_rx, 1);
	CHECK_EQ(n.malformed, 2);
	CHECK_EQ(n.ctrl_frames, 1);
	CHECK_EQ(fc_tx_open_mask(&f, 2 * MS), 0xff);
	fc_xdp_apply(&x, &c, &f, 3 * MS, &n);
	CHECK_EQ(fc_tx_open_mask(&f, 3 * MS), 0xff);
	CHECK_EQ(n.pause_rx, 0);
}

/* The frames taken in XDP that were control (the daemon's ctrl_rx_frames)
 * and those that were not (dropped, by reason): what the frame account of
 * a port needs. A CREDIT whose limits apply goes on to the socket: counted
 * where it arrives, not here. */
static void test_ctrl_frames(void)
{
	struct fc_xdp x = { 0 };
	struct l2cc_xdp_ctl c = { 0 };
	struct fc_xdp_news n;
	struct fc_tx f = { 0 };

	/* A PAUSE applied, a PFC and a CREDIT ignored (not configured), two
	 * cut short, one of another opcode: six taken, three of them control. */
	xoff(&c, 0, 1 * MS, 5 * MS);
	c.pause_rx = 1;
	c.pfc_rx = 1;
	c.credit_rx = 1;
	c.fc_ignored = 2;
	c.malformed = 2;
	c.unsupported = 1;
	c.frames = 6;
	fc_xdp_apply(&x, &c, &f, 2 * MS, &n);
	CHECK_EQ(n.frames, 6);
	CHECK_EQ(n.ctrl_frames, 3);
	CHECK_EQ(n.ctrl_frames + n.malformed + n.unsupported, n.frames);
	/* A CREDIT applied: counted as received, not taken. */
	c.seq += 2;
	c.credit_rx++;
	c.credit_n++;
	c.credit_mask = 0xff;
	fc_xdp_apply(&x, &c, &f, 3 * MS, &n);
	CHECK_EQ(n.credit_rx, 1);
	CHECK_EQ(n.frames, 0);
	CHECK_EQ(n.ctrl_frames, 0);
}

int main(void)
{
	RUN(test_pause_at_arrival);
	RUN(test_pause_from_the_future);
	RUN(test_credit);
	RUN(test_forget);
	RUN(test_ctrl_frames);
	return check_summary();
}
