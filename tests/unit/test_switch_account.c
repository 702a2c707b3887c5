// SPDX-License-Identifier: BSD-2-Clause
/*
 * The frame account of switchd's core (docs/switchd.md, The frame account;
 * scripts/l2cc/account.py reads it from `counters`). Over any interval:
 *
 *   Σ ports (rx_frames - ctrl_rx_frames) + Σ cpu_tx + Σ flood_tx
 *     = Σ ports (tx_frames - ctrl_tx_frames)
 *       + Σ frame drops, ports and the CPU pseudo-port (every reason but
 *         the refusals no_frame, flood_limit, reserve, which count no frame)
 *       + Σ flood_unsent + Δ Σ voq_frames
 *
 * Every counter and queue is 0 when the core starts, so the account since
 * the start must close at every instant; the test checks it at many, in a
 * run that sends frames down every path: unicast, floods (one that no
 * output takes), broadcast, QCN CNMs from the CPU pseudo-port, PAUSE, PFC
 * and CREDIT received (applied, ignored, malformed, on a link that is
 * down, taken in XDP) and sent, buffer-full drops, and a link going down
 * with frames queued for it, the CPU's among them. Its mutants in
 * tests/unit/mutants.sh leave one counter out and the account no longer
 * closes.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "swt.h"

/*
 * p0: host A (PAUSE toward it; QCN's CNMs go back to it). p1: host B, no
 * flow control, a 2-frame buffer (tail drops). p2: switch S, credits both
 * ways (host C is behind it). p3: host V, which pauses the switch, and the
 * QCN congestion point of that output. flood_queue 2: floods soon find
 * every output refusing a copy.
 */
#define ACCT_CONF \
	"[switch]\nfdb_aging = 0\ncpu_share = 100\nflood_queue = 2\n" \
	"[port p0]\nrate = 10M\nbuffer = 64frames\nflow_control = pause\npause_watchdog = 0\n" \
	"[port p1]\nrate = 10M\nbuffer = 2frames\n" \
	"[port p2]\nrate = 10M\nbuffer = 8frames\nflow_control = credit\nrole = switch\n" \
	"[port p3]\nrate = 10M\nbuffer = 4frames\nflow_control = pause\npause_watchdog = 0\n" \
	"marking = qcn\nset_point = 4000\nmin_sample_base = 15000\n"

static const uint8_t peer[6] = { 2, 0, 0, 0, 0, 0x66 };

/* The drop reasons that count refusals, not frames (account.py: SW_REFUSALS). */
static bool acct_refusal(int why)
{
	return why == SW_DROP_NO_FRAME || why == SW_DROP_FLOOD_LIMIT || why == SW_DROP_RESERVE;
}

static uint64_t acct_drops(const struct sw_port *p)
{
	uint64_t n = 0;

	for (int r = 0; r < SW_DROP_MAX; r++)
		if (!acct_refusal(r))
			n += p->st.drop[r];
	return n;
}

/* The account since the start: what came in less what went out or is
 * still queued. 0 when it closes. */
static int64_t acct_residual(const struct sw *s)
{
	int64_t in = 0, out = 0;

	for (int i = 0; i < s->nports; i++) {
		const struct sw_port *p = &s->ports[i];

		in += (int64_t)(p->st.rx_frames - p->st.ctrl_rx_frames + p->st.cpu_tx +
				p->st.flood_tx);
		out += (int64_t)(p->st.tx_frames - p->st.ctrl_tx_frames + acct_drops(p) +
				 p->st.flood_unsent + s->voq->out_total[i]);
	}
	return in - out - (int64_t)acct_drops(&s->ports[s->nports]);
}

/* The account closes now, and what it rests on agrees with what the test
 * saw: the CPU queued what the outputs say it did, and the pool holds
 * exactly the queued frames (none freed or kept uncounted). */
#define ACCT_CHECK(t) do {                                                   \
	uint64_t _cpu = 0, _q = 0;                                           \
	for (int _i = 0; _i < (t)->s->nports; _i++) {                        \
		_cpu += (t)->s->ports[_i].st.cpu_tx;                         \
		_q += (t)->s->voq->out_total[_i];                             \
	}                                                                    \
	CHECK_EQ(acct_residual((t)->s), 0);                                  \
	CHECK_EQ(sw_cpu_port((t)->s)->st.rx_frames, _cpu);                   \
	CHECK_EQ((t)->u->held, _q);                                          \
} while (0)

/* A data frame from host src on port p: true if taken (not left in the ring). */
static bool acct_data(struct swt *t, int p, int dst, int src, uint32_t len)
{
	return swt_rx(t, p, (struct vt_eth){ .dst = (uint8_t)dst, .src = (uint8_t)src,
					     .prio = -1, .len = len });
}

static void acct_pause(struct swt *t, int p, uint16_t quanta)
{
	uint8_t buf[64];

	swt_rx_raw(t, p, buf, wire_build_pause(buf, sizeof(buf), peer, quanta));
}

static void acct_credit(struct swt *t, int p, uint64_t limit, bool bad_unit)
{
	struct wire_credit c = { .unit = L2CC_CREDIT_FRAMES, .prio_mask = 0xff,
				 .sent_unit = L2CC_CREDIT_UNIT_NONE };
	uint8_t buf[200];
	int len;

	for (int i = 0; i < L2CC_NPRIO; i++)
		c.limit[i] = limit;
	len = wire_build_credit(buf, sizeof(buf), peer, &c);
	if (bad_unit)
		buf[L2CC_ETH_HLEN + sizeof(struct l2cc_ctrl_hdr)] = 7;  /* struct l2cc_credit.unit */
	swt_rx_raw(t, p, buf, len);
}

/* Frames of ethertype et (0x8808, 0x88B6) the sink saw on port p. */
static uint64_t acct_sent(const struct swt *t, int p, uint16_t et)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < t->k.n; i++)
		n += (int)t->k.log[i].port == p && vt_ethertype(&t->k.log[i]) == et;
	return n;
}

static void test_account_closes(void)
{
	static const int hosts[][2] = { { H_A, 0 }, { H_B, 1 }, { H_C, 2 }, { H_V, 3 } };
	struct l2cc_xdp_ctl xctl = { 0 };
	struct xport xp = { .ctl = &xctl };
	struct sw_port *p0, *p1, *p2, *p3;
	uint64_t tx = 0, cpu_down;
	uint8_t buf[128];
	uint16_t q[8] = { 100 };
	struct swt t;
	int len;

	swt_create(&t, ACCT_CONF);
	p0 = &t.s->ports[0];
	p1 = &t.s->ports[1];
	p2 = &t.s->ports[2];
	p3 = &t.s->ports[3];
	ACCT_CHECK(&t);

	/* Broadcasts: each host is learnt, copies to the others; those for S
	 * wait for its first grant, two at most, the rest refused. */
	for (int i = 0; i < 4; i++)
		CHECK(acct_data(&t, hosts[i][1], 0xff, hosts[i][0], 60));
	ACCT_CHECK(&t);
	swt_run(&t, 1000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p2->flood_waiting, 2);
	CHECK(p0->st.flood_tx + p1->st.flood_tx + p3->st.flood_tx > 0);
	CHECK(p3->st.drop[SW_DROP_FLOOD_LIMIT] > 0);

	/* V pauses p3, B's TX ring is full: A's unknown unicast floods fill
	 * p1's and p3's flood queues, and from the third on no output takes
	 * a copy (p2's is still full): freed unsent. */
	acct_pause(&t, 3, 65535);
	t.k.cap[1] = 0;
	for (int i = 0; i < 6; i++)
		CHECK(acct_data(&t, 0, 0x77, H_A, 60));
	swt_run(&t, 2000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p0->st.flood_unsent, 4);
	CHECK_EQ(p3->flood_waiting, 2);
	CHECK_EQ(p1->flood_waiting, 2);

	/* Control frames: a PFC and a CREDIT from A, which p0 ignores (it
	 * speaks PAUSE), are control received; a PAUSE cut short, one of
	 * another opcode, LLDP and an l2cc CNP sent link-local are drops. */
	swt_rx_raw(&t, 0, buf, wire_build_pfc(buf, sizeof(buf), peer, 0x01, q));
	acct_credit(&t, 0, 10, false);
	len = wire_build_pause(buf, sizeof(buf), peer, 100);
	swt_rx_raw(&t, 0, buf, L2CC_ETH_HLEN + 2);
	buf[L2CC_ETH_HLEN + 1] = 0x03;
	swt_rx_raw(&t, 0, buf, len);
	buf[5] = 0x0e;
	buf[12] = 0x88;
	buf[13] = 0xcc;
	swt_rx_raw(&t, 0, buf, len);
	len = wire_build_cnp(buf, sizeof(buf), peer, peer, &(struct wire_cnp){ .marked = 1 });
	CHECK(len > 0);
	memcpy(buf, (const uint8_t[6]){ 0x01, 0x80, 0xc2, 0, 0, 0x01 }, 6);
	swt_rx_raw(&t, 0, buf, len);
	/* S's first grant (our count starts at its limit, and our CREDIT goes
	 * back at once), a second that lets the copies waiting for S go, and
	 * one with a unit that does not exist. */
	acct_credit(&t, 2, 100, false);
	acct_credit(&t, 2, 200, false);
	acct_credit(&t, 2, 300, true);
	swt_run(&t, 3000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p0->st.ctrl_rx_frames, 2);
	CHECK_EQ(p0->st.fc_ignored, 2);
	CHECK_EQ(p0->st.drop[SW_DROP_MALFORMED], 1);
	CHECK_EQ(p0->st.drop[SW_DROP_UNSUPPORTED], 2);
	CHECK_EQ(p0->st.drop[SW_DROP_LINK_LOCAL], 1);
	CHECK_EQ(p2->st.ctrl_rx_frames, 2);
	CHECK_EQ(p2->st.drop[SW_DROP_MALFORMED], 1);
	CHECK_EQ(p3->st.ctrl_rx_frames, 1);
	CHECK_EQ(p2->flood_waiting, 0);
	CHECK(p2->st.ctrl_tx_frames >= 1);

	/* QCN: A's 1000-byte frames queue for V, which holds p3 paused; the
	 * congestion point's CNMs for A queue at p0, whose TX ring is full. */
	t.k.cap[0] = 0;
	for (int i = 0; i < 60; i++) {
		acct_data(&t, 0, H_V, H_A, 1000);
		swt_run(&t, 4000000 + (uint64_t)(i + 1) * 1000000);
		ACCT_CHECK(&t);
	}
	CHECK(swt_cp(&t, 3, "cnm") > 0);
	CHECK(p0->st.cpu_tx > 0);
	CHECK_EQ(p0->st.cpu_tx, (uint64_t)swt_cp(&t, 3, "cnm"));

	/* B's 2-frame buffer, no flow control: its third frame for V on is
	 * dropped at the tail. */
	for (int i = 0; i < 5; i++)
		CHECK(acct_data(&t, 1, H_V, H_B, 100));
	swt_run(&t, 70000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p1->st.drop[SW_DROP_BUFFER_FULL], 3);

	/* p0's link goes down with the CNMs queued for it: the CPU's drops. */
	t.s->now = t.s->start_ns + 71000000;
	sw_port_link(t.s, p0, false);
	ACCT_CHECK(&t);
	cpu_down = sw_cpu_port(t.s)->st.drop[SW_DROP_LINK_DOWN];
	CHECK_EQ(cpu_down, p0->st.cpu_tx);
	CHECK_EQ(p0->st.link_down_drops, cpu_down);
	/* While it is down: data and a runt are dropped, a PAUSE is control
	 * received (void: a down link delivers nothing). */
	CHECK(acct_data(&t, 0, H_B, H_A, 100));
	acct_pause(&t, 0, 100);
	wire_build_pause(buf, sizeof(buf), peer, 100);
	swt_rx_raw(&t, 0, buf, 10);
	swt_run(&t, 72000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p0->st.ctrl_rx_frames, 3);
	CHECK_EQ(p0->st.drop[SW_DROP_LINK_DOWN], 2);

	/* Control frames taken in p1's XDP program (a PAUSE p1 ignores, two
	 * malformed) reach the counters at p1's next pass. */
	p1->xp = &xp;
	sw_xdp_ctl_config(t.s, p1);
	xctl.seq += 2;
	xctl.frames += 3;
	xctl.bytes += 180;
	xctl.pause_rx++;
	xctl.fc_ignored++;
	xctl.malformed += 2;
	swt_at(&t, 73000000);
	ACCT_CHECK(&t);
	CHECK_EQ(p1->st.ctrl_rx_frames, 1);
	CHECK_EQ(p1->st.drop[SW_DROP_MALFORMED], 2);
	p1->xp = NULL;

	/* Everything drains: V resumes, the rings take frames, p0 is back. */
	t.k.cap[0] = t.k.cap[1] = 64;
	t.s->now = t.s->start_ns + 74000000;
	sw_port_link(t.s, p0, true);
	acct_pause(&t, 3, 0);
	swt_run(&t, 1000000000);
	ACCT_CHECK(&t);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(t.s->voq->out_total[i], 0);

	/* What the sink saw is what the ports say they sent. */
	CHECK_EQ(t.k.lost, 0);
	for (int i = 0; i < 4; i++) {
		tx += t.s->ports[i].st.tx_frames;
		CHECK_EQ(t.s->ports[i].st.ctrl_tx_frames,
			 acct_sent(&t, i, L2CC_ETH_P_MACCTRL) + acct_sent(&t, i, L2CC_ETH_P_CTRL));
	}
	CHECK_EQ(tx, t.k.n);
	CHECK(p0->st.ctrl_tx_frames > 0);       /* XOFF toward A, then XON */
	swt_destroy(&t);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);    /* the headroom notes of small buffers */
	RUN(test_account_closes);
	return check_summary();
}
