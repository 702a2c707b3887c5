// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostd's datapath core in virtual time, on raw frames: a core made with
 * hd_core_create() over a frame pool without sockets, the host stack's and
 * the switch's frames fed in by hand, time moved by hand, and every frame
 * it emits toward the host (port 0) and the switch (port 1) recorded by an
 * in-memory sink (vt.h). What only the netns tests covered before: tagging
 * and pacing, CNP coalescing, ACKs, the window, the ACK timeout, PAUSE and
 * credits from the switch.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "hdt.h"
#include "../../hostd/rp_cn.h"

/* ---- host -> fabric -------------------------------------------------------- */

/* Data frames leave tagged, with the flow's sequence numbers, at the rate
 * of their [rate] section: 1000-byte frames at 8 Mbit/s are 1 ms apart. */
static void test_hd_core_tag_and_pace(void)
{
	struct hdt t;
	struct wire_tag tag;
	uint64_t t0, t9;
	int n = 0;

	hdt_create(&t, "[rate b]\ndst = 02:00:00:00:00:02\nrate = 8M\n");
	for (int i = 0; i < 20; i++)
		hdt_host(&t, B, 1000 - L2CC_TAG_LEN);
	hdt_run(&t, 100000000);
	CHECK_EQ(hdt_data(&t, 0), 20);
	for (uint32_t i = 0; i < t.k.n; i++) {
		if (t.k.log[i].port != P_UP)
			continue;
		CHECK(wire_tag_read(t.k.log[i].data, t.k.log[i].len, &tag) > 0);
		CHECK_EQ(tag.seq, n);
		CHECK_EQ(t.k.log[i].len, 1000);
		n++;
	}
	/* Past the flow's burst (2 ms), one frame a millisecond. */
	t0 = t.k.log[10].t;
	t9 = t.k.log[19].t;
	CHECK_NEAR((double)(t9 - t0) / 9, 1000000, 2000);
	CHECK_EQ(t.h->st.tagged, 20);
	hdt_destroy(&t);
}

/* The host cannot forge what only hostd writes. */
static void test_hd_core_forged_from_host(void)
{
	struct vt_eth e = { .dst = B, .src = ME, .prio = -1, .len = 200, .tag = true };
	struct hdt t;
	uint32_t l;
	uint64_t addr;

	hdt_create(&t, "");
	addr = vt_frame_make(t.u, &e, &l);
	hd_rx_host_frame(t.h, addr, l);
	hdt_run(&t, 10000000);
	CHECK_EQ(t.h->hst.drop[HD_DROP_FORGED], 1);
	/* nor a CNM (only switches send them, 802.1Qau) */
	e = (struct vt_eth){ .dst = B, .src = ME, .prio = -1, .len = 64,
			     .ethertype = L2CC_ETH_P_CNM };
	addr = vt_frame_make(t.u, &e, &l);
	hd_rx_host_frame(t.h, addr, l);
	hdt_run(&t, 20000000);
	CHECK_EQ(t.h->hst.drop[HD_DROP_FORGED], 2);
	CHECK_EQ(t.k.n, 0);
	hdt_destroy(&t);
}

/* ---- fabric -> host: notifications ---------------------------------------- */

/* Unreliable mode: the first marked frame is answered at once, the marks
 * of the next cnp_interval are coalesced into one CNP at its end naming the
 * last marked frame and how many there were. */
static void test_hd_core_cnp_coalescing(void)
{
	const struct vt_frame *f = NULL;
	struct wire_cnp c;
	struct hdt t;
	size_t blen;
	const uint8_t *body;

	hdt_create(&t, "cnp_interval = 1ms\n");
	hdt_set(&t, 0);
	CHECK(hdt_up_data(&t, B, 7, 100, true));
	hd_pass(t.h);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CNP, &f), 1);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_cnp(body, blen, &c), 0);
	CHECK_EQ(c.flow, 7);
	CHECK_EQ(c.seq, 100);
	CHECK_EQ(c.marked, 1);
	CHECK(f->data[5] == B && f->data[11] == ME);    /* to the sender, from us */
	/* Three more marks within the interval (and an unmarked frame). */
	for (uint32_t i = 1; i <= 4; i++) {
		hdt_set(&t, i * 100000);
		CHECK(hdt_up_data(&t, B, 7, 100 + i, i != 2));
		hd_pass(t.h);
	}
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CNP, NULL), 1);
	hdt_run(&t, 999000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CNP, NULL), 1);
	hdt_run(&t, 1001000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CNP, &f), 2);
	CHECK_EQ(f->t - t.h->start_ns, 1000000);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_cnp(body, blen, &c), 0);
	CHECK_EQ(c.seq, 104);
	CHECK_EQ(c.marked, 3);
	/* Nothing more marked: no more CNPs. */
	hdt_run(&t, 10000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CNP, NULL), 2);
	CHECK_EQ(t.h->st.cnp_tx, 2);
	CHECK_EQ(t.h->st.fecn_rx, 4);
	/* Every data frame reached the host untagged. */
	CHECK_EQ(vt_count(&t.k, 0, P_HOST), 5);
	CHECK_EQ(t.k.log[0].len, 500 - 0);
	hdt_destroy(&t);
}

/* Reliable mode: an ACK per ack_every frames, or ack_delay after the first
 * unacknowledged one; ECE when any frame it covers was marked. */
static void test_hd_core_acks(void)
{
	const struct vt_frame *f = NULL;
	struct wire_ack a;
	struct hdt t;
	const uint8_t *body;
	size_t blen;

	hdt_create(&t, "mode = reliable\nack_every = 3\nack_delay = 200us\n");
	hdt_set(&t, 0);
	for (uint32_t i = 0; i < 3; i++)
		CHECK(hdt_up_data(&t, B, 4, i, i == 1));
	hd_pass(t.h);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_ACK, &f), 1);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_ack(body, blen, &a), 0);
	CHECK_EQ(a.flow, 4);
	CHECK_EQ(a.cum_seq, 2);
	CHECK_EQ(a.frames, 3);
	CHECK(a.flags & L2CC_ACK_ECE);
	/* One more frame: acknowledged at most ack_delay later (the timer
	 * the first frame armed is not restarted), no ECE. */
	hdt_set(&t, 10000);
	CHECK(hdt_up_data(&t, B, 4, 3, false));
	hdt_run(&t, 150000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_ACK, NULL), 1);
	hdt_run(&t, 211000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_ACK, &f), 2);
	CHECK(f->t - t.h->start_ns <= 210000);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_ack(body, blen, &a), 0);
	CHECK_EQ(a.cum_seq, 3);
	CHECK_EQ(a.frames, 1);
	CHECK(!(a.flags & L2CC_ACK_ECE));
	hdt_destroy(&t);
}

/* ---- the window and the ACK timeout ------------------------------------------ */

/* A window of one frame: each frame waits for the ACK of the one before. */
static void test_hd_core_window(void)
{
	struct hdt t;
	struct flow *f;

	hdt_create(&t, "mode = reliable\n[law]\nlaw = lipd\nwindow = 1\n");
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 500);
	hdt_run(&t, 10000000);
	CHECK_EQ(hdt_data(&t, 0), 1);
	CHECK(t.h->st.window_blocked >= 1);
	f = flow_by_id(t.h->flows, 1);
	CHECK(f != NULL);
	CHECK_EQ(t.h->hf[1].parked, HD_PARK_WINDOW);
	/* The ACK of seq 0 lets seq 1 go, and only it. */
	hdt_ack(&t, B, 1, 0, 1, false);
	hdt_run(&t, 20000000);
	CHECK_EQ(hdt_data(&t, 0), 2);
	hdt_ack(&t, B, 1, 1, 1, false);
	hdt_run(&t, 30000000);
	CHECK_EQ(hdt_data(&t, 0), 3);
	CHECK_EQ(t.h->st.ack_timeouts, 0);
	CHECK_EQ(t.h->st.ack_rx, 2);
	hdt_destroy(&t);
}

/* A full window with no ACK gives up after ack_timeout and goes on. */
static void test_hd_core_ack_timeout(void)
{
	struct hdt t;

	hdt_create(&t, "mode = reliable\nack_timeout = 50ms\n[law]\nlaw = lipd\nwindow = 1\n");
	for (int i = 0; i < 2; i++)
		hdt_host(&t, B, 500);
	hdt_run(&t, 49000000);
	CHECK_EQ(hdt_data(&t, 0), 1);
	CHECK_EQ(t.h->st.ack_timeouts, 0);
	hdt_run(&t, 51000000);
	CHECK_EQ(hdt_data(&t, 0), 2);
	CHECK_EQ(t.h->st.ack_timeouts, 1);
	/* The second frame's ACK never comes either: timed out in turn. */
	hdt_host(&t, B, 500);
	hdt_run(&t, 200000000);
	CHECK_EQ(hdt_data(&t, 0), 3);
	CHECK_EQ(t.h->st.ack_timeouts, 2);
	hdt_destroy(&t);
}

/* ---- flow control from the switch ------------------------------------------------ */

static void test_hd_core_pause(void)
{
	uint8_t buf[64], sw[6];
	struct hdt t;
	uint32_t from;

	hdt_create(&t, "link_rate = 10M\n");
	vt_mac(sw, SW);
	/* 100 quanta at 10M: 5.12 ms. */
	hdt_set(&t, 0);
	hdt_up_raw(&t, buf, wire_build_pause(buf, sizeof(buf), sw, 100));
	from = t.k.n;
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 200);
	hdt_run(&t, 5000000);
	CHECK_EQ(hdt_data(&t, from), 0);
	CHECK(t.h->st.fc_blocked >= 1);
	hdt_run(&t, 6000000);
	CHECK_EQ(hdt_data(&t, from), 3);
	CHECK_EQ(t.k.log[from].t - t.h->start_ns, 5120000);
	hdt_destroy(&t);
}

/*
 * Wire time lost on the uplink, pacing time lost by a flow. A 10M uplink
 * with an unpaced flow's backlog: passes on time lose nothing; one 200 ms
 * late loses 200 ms less the wire's burst, exactly. A flow paced at half
 * the link leaves the wire idle between its frames: a pass 200 ms after
 * its deadline loses no wire time, but the flow loses what it was overdue
 * less its burst and a slot; once it has been idle, lateness costs it
 * nothing.
 */
static void test_hd_core_wire_lost(void)
{
	const uint64_t d = 200000000ull;
	/* Two fabric frames (1522 B) at 5M, and the wheel's slot. */
	const uint64_t lag = 3044ull * 8 * 1000000000 / 5000000 + 1000;
	uint64_t elig, lost;
	struct flow *f;
	struct hdt t;

	hdt_create(&t, "link_rate = 10M\n");
	for (int i = 0; i < 40; i++)
		hdt_host(&t, B, 1000);
	hdt_run(&t, 10000000);
	CHECK(t.h->wc.backlog);
	CHECK_EQ(t.h->wc.lost_ns, 0);
	t.h->now = t.h->next_tx_ns + d;
	hd_pass(t.h);
	CHECK_EQ(t.h->wc.lost_ns, d - t.h->wc.burst_ns);
	CHECK_EQ(t.h->wc.late_events, 1);
	hdt_destroy(&t);

	hdt_create(&t, "link_rate = 10M\n[rate b]\ndst = 02:00:00:00:00:02\nrate = 5M\n");
	CHECK_EQ(t.cfg.slot, 1000);
	for (int i = 0; i < 40; i++)
		hdt_host(&t, B, 1000);
	hdt_run(&t, 20000000);
	f = flow_by_id(t.h->flows, 1);
	CHECK(f && f->q.frames > 10);
	if (!f) {
		hdt_destroy(&t);
		return;
	}
	CHECK_EQ(hd_pace_lost_ns(t.h, f), 0);
	/* Its next frame is not due yet; the wire, twice as fast, is free. */
	elig = pacer_eligible(t.h->pacer, f->id);
	CHECK(elig > t.h->now);
	CHECK_EQ(t.h->next_tx_ns, pacer_deadline(t.h->pacer));
	CHECK(!t.h->wc.backlog);
	t.h->now = t.h->next_tx_ns + d;
	hd_pass(t.h);
	CHECK_EQ(t.h->wc.lost_ns, 0);
	CHECK_EQ(hd_pace_lost_ns(t.h, f), t.h->now - lag - elig);
	/* Drained on time, quiet for half a second, then one more frame. */
	hdt_run(&t, t.h->now - t.h->start_ns + 200000000);
	CHECK_EQ(f->q.frames, 0);
	lost = hd_pace_lost_ns(t.h, f);
	hdt_set(&t, t.h->now - t.h->start_ns + 500000000);
	hdt_host(&t, B, 1000);
	hdt_run(&t, t.h->now - t.h->start_ns + 10000000);
	CHECK_EQ(hd_pace_lost_ns(t.h, f), lost);
	CHECK_EQ(t.h->wc.lost_ns, 0);
	hdt_destroy(&t);
}

/* Credits: nothing before a grant; the first grant is answered at once with
 * our count; then frames up to the limit; a keepalive carries our count. */
static void test_hd_core_credits(void)
{
	struct wire_credit c = { .unit = L2CC_CREDIT_BYTES, .prio_mask = 0xff,
				 .sent_unit = L2CC_CREDIT_UNIT_NONE };
	const struct vt_frame *f = NULL;
	struct wire_credit mine;
	uint8_t buf[200], sw[6];
	struct hdt t;
	const uint8_t *body;
	size_t blen;

	hdt_create(&t, "flow_control = credit\n");
	vt_mac(sw, SW);
	for (int i = 0; i < 4; i++)
		hdt_host(&t, B, 482);                   /* 500 bytes tagged */
	hdt_run(&t, 1000000);
	CHECK_EQ(hdt_data(&t, 0), 0);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, NULL), 0);
	for (int i = 0; i < 8; i++)
		c.limit[i] = 100000;
	hdt_up_raw(&t, buf, wire_build_credit(buf, sizeof(buf), sw, &c));
	hdt_run(&t, 1001000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, &f), 1);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_credit(body, blen, &mine), 0);
	CHECK_EQ(mine.sent_unit, L2CC_CREDIT_BYTES);
	CHECK_EQ(mine.sent[0], 100000);                 /* counted from the grant */
	CHECK_EQ(hdt_data(&t, 0), 0);
	/* Room for two frames. */
	for (int i = 0; i < 8; i++)
		c.limit[i] = 101000;
	c.sent_unit = L2CC_CREDIT_BYTES;
	hdt_up_raw(&t, buf, wire_build_credit(buf, sizeof(buf), sw, &c));
	hdt_run(&t, 2000000);
	CHECK_EQ(hdt_data(&t, 0), 2);
	/* Our sent count moved: within credit_interval (1 ms) the switch hears. */
	hdt_run(&t, 3100000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, &f), 2);
	body = hdt_body(f, &blen);
	CHECK_EQ(wire_parse_credit(body, blen, &mine), 0);
	CHECK_EQ(mine.sent[0], 101000);
	/* Then only the keepalive, 50 ms after the last one. */
	{
		uint64_t last = f->t - t.h->start_ns;

		hdt_run(&t, last + FC_RX_CREDIT_KEEPALIVE_NS - 100000);
		CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, NULL), 2);
		hdt_run(&t, last + FC_RX_CREDIT_KEEPALIVE_NS + 100000);
		CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, &f), 3);
		CHECK_EQ(f->t - t.h->start_ns, last + FC_RX_CREDIT_KEEPALIVE_NS);
	}
	hdt_destroy(&t);
}

/* ---- BCN, from the switch's CNMs (Lu et al. 2006) -------------------------- */

/* A CNM from congestion point `cp` (the last CPID byte) about the logged
 * data frame `sample`, with Qoff and Qdelta in 64-octet units. */
static void hdt_cnm(struct hdt *t, uint32_t sample, uint8_t cp, int16_t qoff, int16_t qdelta)
{
	struct wire_cnm c = { .cpid = { 2, 0, 0, 0, 0, 0x77, 1, cp }, .qoffset = qoff,
			      .qdelta = qdelta };
	uint8_t buf[160], me[6], sw[6];

	vt_mac(me, ME);
	vt_mac(sw, 0x77);
	CHECK_EQ(wire_cnm_encap(&c, t->k.log[sample].data, t->k.log[sample].len), 0);
	hdt_up_raw(t, buf, wire_build_cnm(buf, sizeof(buf), me, sw, -1, &c));
}

/* The tag of the last data frame on the uplink. */
static void hdt_last_tag(struct hdt *t, struct wire_tag *tag)
{
	memset(tag, 0, sizeof(*tag));
	for (uint32_t i = t->k.n; i-- > 0;)
		if (t->k.log[i].port == P_UP && vt_ethertype(&t->k.log[i]) == L2CC_ETH_P_DATA_TAG) {
			CHECK(wire_tag_read(t->k.log[i].data, t->k.log[i].len, tag) > 0);
			return;
		}
	CHECK(!"no data frame");
}

/* Event by event, at 100M (Ru = 1e6 * 100M/10G = 1e4, Rmin = 1M): a
 * decrease R *= 1 - Gd |Fb| ties the flow to that CP (RLT + CPID in its
 * tags); an increase from another CP changes nothing, one from its CP adds
 * Gi Fb Ru; at the link rate the tie goes. */
static void test_hd_core_bcn_events(void)
{
	struct wire_tag tag;
	struct hdt t;
	double r, fb;

	hdt_create(&t, "[law]\nlaw = bcn\n");
	hdt_host(&t, B, 482);
	hdt_run(&t, 1000000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 100000000);
	hdt_last_tag(&t, &tag);
	CHECK(!(tag.flags & L2CC_TAG_RLT));

	/* Qoff 47 units (3008 B), Qdelta 0: Fb = -3008/1500 cells */
	hdt_cnm(&t, 0, 5, 47, 0);
	fb = rp_bcn_fb(47 * 64, 0, 2, 1500);
	CHECK_NEAR(fb, -3008.0 / 1500, 1e-12);
	r = 1e8 * (1 - -fb / 128);
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), r, 1.5);
	hdt_host(&t, B, 482);
	hdt_run(&t, 2000000);
	hdt_last_tag(&t, &tag);
	CHECK(tag.flags & L2CC_TAG_RLT);
	CHECK_EQ(tag.cpid[7], 5);

	/* Qoff -10 units, Qdelta 2 units: Fb = (640 - 2 128)/1500 > 0 */
	fb = rp_bcn_fb(-640, 128, 2, 1500);
	CHECK_NEAR(fb, 384.0 / 1500, 1e-12);
	hdt_cnm(&t, 0, 6, -10, 2);              /* another CP: ignored */
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), r, 1.5);
	hdt_cnm(&t, 0, 5, -10, 2);              /* ours: R += 4 Fb 1e4 */
	r += 4 * fb * 1e4;
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), r, 1.5);

	/* A rate pinned by hand (l2ccctl set-rate) is the law's no more. */
	{
		struct flow *f = flow_by_id(t.h->flows, 1);
		double before = (double)pacer_rate(t.h->pacer, 1);

		CHECK(f != NULL);
		if (f) {
			CHECK_EQ(hd_set_flow_rate(t.h, f, 7000000, -1), 0);
			hdt_cnm(&t, 0, 5, 1000, 0);
			CHECK_EQ(pacer_rate(t.h->pacer, 1), 7000000);
			f->pinned = false;
			CHECK_EQ(hd_set_flow_rate(t.h, f, (uint64_t)before, -1), 0);
			f->pinned = false;
		}
	}
	/* Decreases floor at Rmin = link / 100 */
	for (int i = 0; i < 100; i++)
		hdt_cnm(&t, 0, 6, 1000, 1000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 1000000);
	/* Now tied to CP 6; a large increase from it reaches the link rate
	 * and unties the flow. */
	hdt_cnm(&t, 0, 6, -32000, -32000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 100000000);
	hdt_host(&t, B, 482);
	hdt_run(&t, 400000000);
	hdt_last_tag(&t, &tag);
	CHECK(!(tag.flags & L2CC_TAG_RLT));
	hdt_destroy(&t);
}

/* BCN(0,0) stops the flow for a random time in [stop/2, 3 stop/2), then it
 * goes on at Rmin; SI-1 adds I T every T meanwhile not. SI-1 with I given
 * (1e5 bit/s per second): +100 bit/s each ms. */
static void test_hd_core_bcn_stop_and_si(void)
{
	struct hdt t;
	uint64_t r0, rs, stop;

	hdt_create(&t, "[law]\nlaw = bcn\nsi = 1\nsi_period = 1ms\nsi_rate = 100k\nstop = 2ms\n");
	hdt_host(&t, B, 482);
	hdt_run(&t, 1000000);
	hdt_cnm(&t, 0, 5, 200, 0);             /* Fb = -12800/1500: R *= 1 - 0.0667 */
	r0 = pacer_rate(t.h->pacer, 1);
	CHECK(r0 < 94000000 && r0 > 93000000);
	hdt_run(&t, 1000000 + 10000000);        /* ten SI steps */
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), (double)r0 + 1000, 110);
	hdt_cnm(&t, 0, 5, 0, 0);                /* severe */
	stop = t.h->now;
	/* "R = 0": one cell per stop, the stop 1 .. 3 ms */
	rs = pacer_rate(t.h->pacer, 1);
	CHECK(rs <= 8 * 1500 * 1000000000ull / 1000000 && rs > 8 * 1500 * 1000000000ull / 3000000);
	hdt_run(&t, stop - t.h->start_ns + 999000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), rs);        /* still stopped at 1 ms */
	hdt_run(&t, stop - t.h->start_ns + 3001000);
	/* Rmin, then SI-1 steps since */
	CHECK(pacer_rate(t.h->pacer, 1) >= 1000000 && pacer_rate(t.h->pacer, 1) <= 1000300);
	hdt_destroy(&t);
}

/* ---- QCN, from the switch's CNMs (IEEE 802.1Qau) ------------------------- */

/* A CNM with QntzFb fb about the logged data frame `sample`. */
static void hdt_cnm_fb(struct hdt *t, uint32_t sample, uint8_t fb)
{
	struct wire_cnm c = { .cpid = { 2, 0, 0, 0, 0, 0x77, 1, 0 }, .qntz_fb = fb,
			      .qoffset = 10, .qdelta = 1 };
	uint8_t buf[160], me[6], sw[6];

	vt_mac(me, ME);
	vt_mac(sw, 0x77);
	CHECK_EQ(wire_cnm_encap(&c, t->k.log[sample].data, t->k.log[sample].len), 0);
	hdt_up_raw(t, buf, wire_build_cnm(buf, sizeof(buf), me, sw, -1, &c));
}

/* The cut: CR *= 1 - QntzFb/128, at least MinDecFac (50%); TR <- CR unless
 * no increase event came since the last cut (a burst of CNMs keeps the
 * target); the timer's fast recovery halves the distance to TR. */
static void test_hd_core_qcn_events(void)
{
	struct hdt t;
	double cr, tr;

	CHECK_NEAR(rp_qcn_cut(32, 1.0 / 128, 0.5), 0.75, 1e-12);
	CHECK_NEAR(rp_qcn_cut(63, 1.0 / 128, 0.5), 65.0 / 128, 1e-12);
	CHECK_NEAR(rp_qcn_cut(63, 1.0 / 64, 0.5), 0.5, 1e-12);
	hdt_create(&t, "[law]\nlaw = qcn\nrpg_time_reset = 10ms\nrpg_byte_reset = 100000\n");
	hdt_host(&t, B, 482);
	hdt_run(&t, 1000000);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 100000000);
	hdt_cnm_fb(&t, 0, 32);
	cr = 75e6;
	tr = 100e6;
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), cr, 1.5);
	hdt_cnm_fb(&t, 0, 63);                  /* before any increase: TR kept */
	cr *= 65.0 / 128;
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), cr, 1.5);
	hdt_run(&t, 1000000 + 10000000 + 100000);       /* the timer: fast recovery */
	cr = (cr + tr) / 2;
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), cr, 1.5);
	hdt_cnm_fb(&t, 0, 8);                   /* after an event: TR <- CR */
	tr = cr;
	cr *= 1 - 8.0 / 128;
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), cr, 1.5);
	hdt_run(&t, 11100000 + 10000000 + 100000);
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), (cr + tr) / 2, 1.5);
	hdt_destroy(&t);
}

/* ---- the reaction-point services --------------------------------------------- */

/* A law of the test's own: every service once. */
struct tlaw {
	struct hd *h;
	int inits, txs, timers[RP_TIMERS], ticks, fbs[8];
	uint32_t last_len;
	struct rp_fb last_fb;
};

static struct tlaw tl;

static int tl_create(struct rp **out, const struct rp_env *env)
{
	tl.h = env->h;
	*out = (struct rp *)&tl;
	return 0;
}
static void tl_destroy(struct rp *rp) {}
static void tl_init(struct rp *rp, struct flow *f, struct rp_out *o)
{
	tl.inits++;
	o->rate_bps = 10000000;
	if (f->id)
		rp_timer(tl.h, f, 2, 5000000);  /* timer 2 in 5 ms */
}
static void tl_on_tx(struct rp *rp, struct flow *f, uint32_t seq, uint32_t len, enum rp_limit lim,
		     struct rp_out *o)
{
	tl.txs++;
	tl.last_len = len;
}
static void tl_on_feedback(struct rp *rp, struct flow *f, const struct rp_fb *fb, struct rp_out *o)
{
	tl.fbs[fb->kind]++;
	tl.last_fb = *fb;
	o->rate_bps = 5000000;
}
static void tl_on_timer(struct rp *rp, struct flow *f, unsigned timer, struct rp_out *o)
{
	tl.timers[timer]++;
	o->rate_bps = 20000000;
	rp_tick(tl.h, 3, rp_now(tl.h) + 1000000);
}
static int tl_halve(void *ctx, struct flow *f)
{
	struct rp_out o = *rp_current(tl.h, f);

	o.rate_bps /= 2;
	rp_apply(tl.h, f, &o);
	return 0;
}
static void tl_on_tick(struct rp *rp, unsigned tick, uint64_t now)
{
	uint8_t frame[60] = { 0 };

	tl.ticks++;
	rp_foreach(tl.h, tl_halve, NULL);
	vt_mac(frame, B);
	vt_mac(frame + 6, ME);
	frame[12] = 0x88;
	frame[13] = 0xb6;
	CHECK_EQ(rp_emit(tl.h, frame, sizeof(frame)), 0);
}
static void tl_tag(struct rp *rp, const struct flow *f, struct wire_tag *t)
{
	t->flags |= L2CC_TAG_RLT;
	memset(t->cpid, 0xcd, sizeof(t->cpid));
}

static const struct rp_ops tl_ops = {
	.name = "test", .create = tl_create, .destroy = tl_destroy, .init = tl_init,
	.on_tx = tl_on_tx, .on_feedback = tl_on_feedback, .on_timer = tl_on_timer,
	.on_tick = tl_on_tick, .tag = tl_tag,
};

static void test_hd_core_rp_services(void)
{
	struct rp_env env = { 0 };
	struct wire_tag tag;
	struct flow *f;
	struct hdt t;
	int emitted = 0;

	hdt_create(&t, "");
	memset(&tl, 0, sizeof(tl));
	t.h->rpo->destroy(t.h->rp);
	env.h = t.h;
	tl_create(&t.h->rp, &env);
	t.h->rpo = &tl_ops;
	hdt_set(&t, 0);
	hdt_host(&t, B, 482);
	hdt_run(&t, 1000000);
	f = flow_by_id(t.h->flows, 1);
	CHECK(f != NULL);
	CHECK_EQ(tl.inits, 1);
	CHECK_EQ(tl.txs, 1);
	CHECK_EQ(tl.last_len, 500);                     /* on_tx has the frame's length */
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 10000000);
	/* The tag carries what the law asked for. */
	CHECK(wire_tag_read(t.k.log[0].data, t.k.log[0].len, &tag) > 0);
	CHECK(tag.flags & L2CC_TAG_RLT);
	CHECK_EQ(tag.cpid[7], 0xcd);
	/* Feedback through one door, typed. */
	hdt_ack(&t, B, 1, 0, 1, true);
	hd_pass(t.h);
	CHECK_EQ(tl.fbs[RP_FB_ACK], 1);
	CHECK_EQ(tl.last_fb.marked, 1);
	CHECK_EQ(tl.last_fb.unmarked, 0);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 5000000);
	/* A switch's CNM about a frame of flow 1 (its first data frame,
	 * sampled): consumed, to the law as RP_FB_CNM with Qoff/Qdelta in
	 * bytes; one about an untagged frame names no flow; a cut one is bad. */
	{
		struct wire_cnm c = { .qntz_fb = 17, .cpid = { 2, 0, 0, 0, 0, 0x77, 3, 0 },
				      .qoffset = -2, .qdelta = 5 };
		uint8_t buf[160], me[6], cp[6];
		uint64_t to_host = t.h->hst.tx_frames;
		int n;

		vt_mac(me, ME);
		vt_mac(cp, 0x77);
		CHECK_EQ(wire_cnm_encap(&c, t.k.log[0].data, t.k.log[0].len), 0);
		n = wire_build_cnm(buf, sizeof(buf), me, cp, -1, &c);
		hdt_up_raw(&t, buf, n);
		CHECK_EQ(tl.fbs[RP_FB_CNM], 1);
		CHECK_EQ(tl.last_fb.qntz_fb, 17);
		CHECK_EQ(tl.last_fb.qoff, -128);
		CHECK_EQ(tl.last_fb.qdelta, 320);
		CHECK_EQ(tl.last_fb.cpid[6], 3);
		CHECK_EQ(tl.last_fb.seq, 0);
		CHECK_EQ(t.h->st.cnm_rx, 1);
		CHECK_EQ(f->cnt.cnm_in, 1);
		hdt_up_raw(&t, buf, 40);
		CHECK_EQ(t.h->st.cnm_bad, 1);
		c.msdu[1] = 0x00;               /* the sample was not l2cc-tagged */
		hdt_up_raw(&t, buf, wire_build_cnm(buf, sizeof(buf), me, cp, -1, &c));
		CHECK_EQ(t.h->st.cnm_unknown, 1);
		CHECK_EQ(tl.fbs[RP_FB_CNM], 1);
		hd_pass(t.h);
		CHECK_EQ(t.h->hst.tx_frames, to_host);  /* none reached the host */
	}
	/* Timer 2 at 5 ms, then tick 3 a millisecond later: every flow halved
	 * and a frame of the law's own on the uplink. */
	hdt_run(&t, 4900000);
	CHECK_EQ(tl.timers[2], 0);
	hdt_run(&t, 5100000);
	CHECK_EQ(tl.timers[2], 1);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 20000000);
	hdt_run(&t, 6100000);
	CHECK_EQ(tl.ticks, 1);
	CHECK_EQ(pacer_rate(t.h->pacer, 1), 10000000);
	for (uint32_t i = 0; i < t.k.n; i++)
		emitted += t.k.log[i].port == P_UP && t.k.log[i].len == 60 &&
			   vt_ethertype(&t.k.log[i]) == L2CC_ETH_P_CTRL;
	CHECK_EQ(emitted, 1);
	/* A removed flow's timers go with it. */
	rp_timer(t.h, f, 1, 1000000);
	CHECK_EQ(t.h->ntimers, 1);
	t.h->rpo = &tl_ops;
	f->last_seen_ns = 0;
	flow_expire(t.h->flows, t.h->now + 100000000000ull, 0);
	CHECK_EQ(t.h->ntimers, 0);
	hdt_destroy(&t);
}

/* ---- pcp_from_dscp ---------------------------------------------------------- */

/* An IPv4 (ethertype 0x0800, tos) or IPv6 (0x86DD, traffic class) frame
 * from the host, 300 bytes, its IP header's first bytes set; at `headroom`
 * into its UMEM frame (the kernel's is XPORT_UMEM_HEADROOM). */
static void pcp_host(struct hdt *t, bool v6, uint8_t tclass, int prio, uint32_t headroom)
{
	struct vt_eth e = { .dst = B, .src = ME, .prio = prio, .len = 300,
			    .ethertype = v6 ? 0x86DD : 0x0800 };
	uint32_t l, off = prio >= 0 ? 18 : 14;
	uint64_t addr = vt_frame_make(t->u, &e, &l);
	uint8_t *p = umem_data(t->u, addr);

	if (v6) {
		p[off] = (uint8_t)(0x60 | tclass >> 4);
		p[off + 1] = (uint8_t)(tclass << 4);
	} else {
		p[off] = 0x45;
		p[off + 1] = tclass;
	}
	p[off + 9] = 0xab;	/* a byte to find again */
	if (headroom != XPORT_UMEM_HEADROOM) {
		uint64_t a2 = addr - XPORT_UMEM_HEADROOM + headroom;

		memmove(umem_data(t->u, a2), p, l);
		addr = a2;
	}
	hd_rx_host_frame(t->h, addr, l);
}

/* The frames on the uplink, in order: logged frame i. */
static const struct vt_frame *pcp_up(struct hdt *t, int i)
{
	for (uint32_t k = 0; k < t->k.n; k++)
		if (t->k.log[k].port == P_UP && !i--)
			return &t->k.log[k];
	return NULL;
}

/* With pcp_from_dscp, an untagged IP frame of DSCP class N (not 0) leaves
 * as DA SA 8100 (PCP N, VID 0) 88B5 <l2cc tag> <its ethertype> <its IP
 * header unchanged>; class 0, frames tagged already, non-IP frames and a
 * frame without the headroom leave as they came (only the l2cc tag
 * added); without the key nothing is given a priority. */
static void test_hd_core_pcp_from_dscp(void)
{
	static const struct { bool v6; uint8_t tc; int prio; uint32_t room; int pcp; } c[] = {
		{ false, 0xa0, -1, XPORT_UMEM_HEADROOM, 5 },	/* CS5: TOS 160 */
		{ false, 0xb8, -1, XPORT_UMEM_HEADROOM, 5 },	/* EF (46): class 5 */
		{ true, 0x60, -1, XPORT_UMEM_HEADROOM, 3 },	/* IPv6 CS3 */
		{ false, 0x1c, -1, XPORT_UMEM_HEADROOM, -1 },	/* AF12 (12): class 0 */
		{ false, 0xe0, 2, XPORT_UMEM_HEADROOM, 2 },	/* tagged: its own PCP stays */
		{ false, 0xa0, -1, L2CC_TAG_LEN + 3, -1 },	/* no room for both tags */
	};
	const size_t n = sizeof(c) / sizeof(c[0]);
	struct hdt t;

	hdt_create(&t, "pcp_from_dscp = yes\n");
	/* One at a time: queued together, the path would send its higher
	 * priorities first. */
	for (size_t i = 0; i < n; i++) {
		pcp_host(&t, c[i].v6, c[i].tc, c[i].prio, c[i].room);
		hdt_run(&t, (i + 1) * 10000000);
	}
	hdt_run(&t, 100000000);
	CHECK_EQ(t.h->st.pcp_tagged, 3);
	CHECK_EQ(t.h->st.tagged, n);
	for (size_t i = 0; i < n; i++) {
		const struct vt_frame *f = pcp_up(&t, (int)i);
		const uint8_t *d;
		struct eth_info ei;
		uint32_t ip;

		CHECK(f != NULL);
		if (!f)
			break;
		d = f->data;
		CHECK_EQ(wire_parse_eth(d, f->len, &ei), 0);
		CHECK_EQ(ei.ethertype, L2CC_ETH_P_DATA_TAG);
		CHECK_EQ(ei.ntags, c[i].pcp >= 0 ? 1 : 0);
		CHECK_EQ(f->len, 300 + L2CC_TAG_LEN + (c[i].pcp >= 0 && c[i].prio < 0 ? 4 : 0));
		if (c[i].pcp >= 0) {
			CHECK_EQ(d[12], 0x81);
			CHECK_EQ(d[13], 0x00);
			CHECK_EQ(ei.prio, c[i].pcp);
			CHECK_EQ(ei.vid, 0);
		}
		/* The MACs moved intact, the l2cc tag's inner type and the IP
		 * header are the frame's own. */
		CHECK_EQ(d[5], B);
		CHECK_EQ(d[11], ME);
		ip = ei.hlen + L2CC_TAG_LEN;
		CHECK_EQ(d[ip - 2], c[i].v6 ? 0x86 : 0x08);
		CHECK_EQ(d[ip - 1], c[i].v6 ? 0xDD : 0x00);
		CHECK_EQ(d[ip + 1], c[i].v6 ? (uint8_t)(c[i].tc << 4) : c[i].tc);
		CHECK_EQ(d[ip + 9], 0xab);
	}
	hdt_destroy(&t);

	/* Without the key: no priority tag. */
	hdt_create(&t, "");
	pcp_host(&t, false, 0xa0, -1, XPORT_UMEM_HEADROOM);
	hdt_run(&t, 10000000);
	CHECK_EQ(t.h->st.pcp_tagged, 0);
	CHECK(pcp_up(&t, 0) && pcp_up(&t, 0)->len == 300 + L2CC_TAG_LEN &&
	      pcp_up(&t, 0)->data[12] == 0x88);
	hdt_destroy(&t);
}

/* The receiving side: a frame with the priority tag and the l2cc tag
 * reaches the host with the l2cc tag stripped and the priority tag kept
 * (Linux takes VID 0 as untagged, 802.1Q's priority tagging). */
static void test_hd_core_pcp_rx(void)
{
	struct vt_eth e = { .dst = ME, .src = B, .prio = 5, .len = 300, .tag = true, .flow = 3 };
	struct hdt t;
	uint32_t l;
	uint64_t addr;
	const struct vt_frame *f = NULL;

	hdt_create(&t, "pcp_from_dscp = yes\n");
	addr = vt_frame_make(t.u, &e, &l);
	CHECK(hd_rx_up_frame(t.h, addr, l));
	hdt_run(&t, 1000000);
	for (uint32_t k = 0; k < t.k.n; k++)
		if (t.k.log[k].port == P_HOST)
			f = &t.k.log[k];
	CHECK(f != NULL);
	if (f) {
		CHECK_EQ(f->len, 300);
		CHECK_EQ(f->data[12], 0x81);
		CHECK_EQ(f->data[14] >> 5, 5);
		CHECK_EQ(f->data[16], 0x08);
		CHECK_EQ(f->data[17], 0x00);
	}
	CHECK_EQ(t.h->st.stripped, 1);
	hdt_destroy(&t);
}

/* ---- who may send a notification: the message table's rule -------------- */

/* Take over the law with the test law (its feedback counted in tl). */
static void tl_install(struct hdt *t)
{
	struct rp_env env = { 0 };

	memset(&tl, 0, sizeof(tl));
	t->h->rpo->destroy(t->h->rp);
	env.h = t->h;
	tl_create(&t->h->rp, &env);
	t->h->rpo = &tl_ops;
}

/* A control message of a type from src to dst (vt_mac ids) up the uplink:
 * built by the table's encoder, its destination then written as given
 * (so a link-local type can be sent unicast, the wrong way). */
static void hdt_msg(struct hdt *t, int type, int dst, int src, const union ctrl_msg *m)
{
	const struct ctrl_type *ct = ctrl_type_of(type);
	uint8_t buf[256], d[6], sa[6];
	int n;

	vt_mac(d, (uint8_t)dst);
	vt_mac(sa, (uint8_t)src);
	n = ct->encode(buf, sizeof(buf), d, sa, m);
	CHECK(n > 0);
	if (n <= 0)
		return;
	memcpy(buf, d, 6);
	hdt_up_raw(t, buf, n);
}

/*
 * Every type of the table, by who may send it. Our flow 1 sends to B.
 * Peer types (CNP, ACK, DISCOVER_ECHO, FEEDBACK) reach the law only to our
 * host and from B; from C, or to another host, they are ignored. DISCOVER
 * (from a path's source) only to our host. CREDIT only link-local: the
 * same message unicast is dropped.
 */
static void test_hd_core_ctrl_senders(void)
{
	static const int fb_kind[] = {
		[L2CC_CTRL_CNP] = RP_FB_CNP, [L2CC_CTRL_ACK] = RP_FB_ACK,
		[L2CC_CTRL_DISCOVER_ECHO] = RP_FB_L2CI_ECHO, [L2CC_CTRL_FEEDBACK] = RP_FB_L2CI,
	};
	uint8_t ll[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
	struct hdt t;
	int seen = 0;

	hdt_create(&t, "");
	tl_install(&t);
	hdt_set(&t, 0);
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 482);
	hdt_run(&t, 10000000);
	CHECK_EQ(hdt_data(&t, 0), 3);
	for (size_t i = 0; i < ctrl_ntypes; i++) {
		const struct ctrl_type *ct = &ctrl_types[i];
		union ctrl_msg m = *ct->sample;
		uint64_t before;
		int kind = ct->type < (int)(sizeof(fb_kind) / sizeof(fb_kind[0]))
			   ? fb_kind[ct->type] : 0;

		printf("    %s\n", ct->name);
		switch (ct->sender) {
		case CTRL_BY_PEER:
			CHECK(kind != 0);
			m.cnp.flow = 1;         /* flow is the first field of each */
			if (ct->type == L2CC_CTRL_ACK) {
				m.ack.cum_seq = 0;
				m.ack.frames = 1;
			}
			if (ct->type == L2CC_CTRL_FEEDBACK)
				m.fb.seq = 1;
			hdt_msg(&t, ct->type, ME, C, &m);       /* not the peer */
			hdt_msg(&t, ct->type, C, B, &m);        /* not to our host */
			CHECK_EQ(tl.fbs[kind], 0);
			hdt_msg(&t, ct->type, ME, B, &m);
			CHECK_EQ(tl.fbs[kind], 1);
			seen++;
			break;
		case CTRL_BY_SOURCE:
			before = t.h->st.discover_rx;
			hdt_msg(&t, ct->type, C, B, &m);
			CHECK_EQ(t.h->st.discover_rx, before);
			hdt_msg(&t, ct->type, ME, C, &m);
			CHECK_EQ(t.h->st.discover_rx, before + 1);
			seen++;
			break;
		case CTRL_BY_PARTNER:
			CHECK(ct->link_local);
			before = t.h->st.credit_rx;
			hdt_msg(&t, ct->type, ME, SW, &m);
			CHECK_EQ(t.h->st.credit_rx, before);
			{
				uint8_t buf[256], sa[6];
				int n;

				vt_mac(sa, SW);
				n = ct->encode(buf, sizeof(buf), ll, sa, &m);
				CHECK(n > 0 && !memcmp(buf, ll, 6));
				if (n > 0)
					hdt_up_raw(&t, buf, n);
			}
			CHECK_EQ(t.h->st.credit_rx, before + 1);
			seen++;
			break;
		default:
			/* A switch's message: hostd cannot tell the switch from
			 * what it forwards; switchd keeps hosts from sending it. */
			break;
		}
	}
	CHECK_EQ(seen, (int)ctrl_ntypes);
	CHECK_EQ(t.h->st.notify_forged, 4);
	hdt_destroy(&t);
}

/* The peer of a flow not keyed by destination is where its frames went
 * (granularity prio here, 5tuple alike): a CNP from elsewhere is ignored,
 * until the flow's frames go to more than one address. */
static void test_hd_core_notify_peer_by_prio(void)
{
	union ctrl_msg m = { .cnp = { .flow = 1, .seq = 0, .marked = 1 } };
	struct hdt t;

	hdt_create(&t, "granularity = prio\n");
	tl_install(&t);
	hdt_host(&t, B, 482);
	hdt_run(&t, 1000000);
	CHECK_EQ(hdt_data(&t, 0), 1);
	CHECK(flow_by_id(t.h->flows, 1) != NULL);
	CHECK(t.h->flows && flow_by_id(t.h->flows, 1)->key.type == FLOW_KEY_PRIO);
	hdt_msg(&t, L2CC_CTRL_CNP, ME, C, &m);
	CHECK_EQ(tl.fbs[RP_FB_CNP], 0);
	CHECK_EQ(t.h->st.notify_forged, 1);
	hdt_msg(&t, L2CC_CTRL_CNP, ME, B, &m);
	CHECK_EQ(tl.fbs[RP_FB_CNP], 1);
	/* To C as well: no one peer, only the destination is checked. */
	hdt_host(&t, C, 482);
	hdt_run(&t, 2000000);
	CHECK_EQ(hdt_data(&t, 0), 2);
	hdt_msg(&t, L2CC_CTRL_CNP, ME, C, &m);
	CHECK_EQ(tl.fbs[RP_FB_CNP], 2);
	hdt_msg(&t, L2CC_CTRL_CNP, B, C, &m);
	CHECK_EQ(tl.fbs[RP_FB_CNP], 2);
	CHECK_EQ(t.h->st.notify_forged, 2);
	hdt_destroy(&t);
}

/* A UDP/IPv4 frame from the host to dst, its connection named by sport. */
static void hdt_host_udp(struct hdt *t, int dst, uint32_t len, uint16_t sport)
{
	struct vt_eth e = { .dst = (uint8_t)dst, .src = ME, .prio = -1, .len = len };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);
	uint8_t *ip = umem_data(t->u, addr) + 14;

	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 10, ip[15] = 1;
	ip[16] = 10, ip[19] = 2;
	ip[20] = (uint8_t)(sport >> 8), ip[21] = (uint8_t)sport;
	ip[22] = 0x12, ip[23] = 0xb7;
	hd_rx_host_frame(t->h, addr, l);
}

/* One SL's flow (granularity prio) at 8M with a 20000-byte queue: 20
 * frames of one connection, then 5 of another. First come, first served,
 * the first fills the queue and the second's are dropped (queue_full);
 * with subflow_share the first holds at most what is free (half the
 * queue, `subflow_share` drops) and the second gets in beside it. */
static void test_hd_core_subflow_share(void)
{
	static const char *const conf[] = {
		"granularity = prio\nqueue = 20000\n[law]\nrate = 8M\n",
		"granularity = prio\nqueue = 20000\nsubflow_share = yes\n[law]\nrate = 8M\n",
	};
	struct hdt t;

	for (int share = 0; share < 2; share++) {
		struct flow *f;

		hdt_create(&t, conf[share]);
		for (int i = 0; i < 20; i++)
			hdt_host_udp(&t, B, 1000, 1000);
		for (int i = 0; i < 5; i++)
			hdt_host_udp(&t, B, 1000, 2000);
		f = flow_by_id(t.h->flows, 1);
		CHECK(f != NULL);
		if (f) {
			/* What the flow's burst sent at once left room behind it. */
			uint64_t sent = f->cnt.frames_out, queued = f->q.frames;

			CHECK_EQ(sent + queued + f->cnt.drops, 25);
			CHECK_EQ(t.h->hst.drop[HD_DROP_SUBFLOW_SHARE] + t.h->hst.drop[HD_DROP_QUEUE_FULL],
				 f->cnt.drops);
			if (share) {
				CHECK_EQ(t.h->hst.drop[HD_DROP_QUEUE_FULL], 0);
				CHECK_EQ(t.h->hst.drop[HD_DROP_SUBFLOW_SHARE], 10 - sent);
				CHECK_EQ(queued, 15 - sent);
			} else {
				CHECK_EQ(t.h->hst.drop[HD_DROP_SUBFLOW_SHARE], 0);
				CHECK_EQ(t.h->hst.drop[HD_DROP_QUEUE_FULL], 5);
				CHECK_EQ(queued, 20);
			}
		}
		hdt_destroy(&t);
	}
}

/* An ACK counts for no more frames than are in flight, and one for a
 * frame not yet sent is ignored: a forged count of 2^32 - 1 once made an
 * AIMD flow with rmin_div 65536 step for seconds. */
static void test_hd_core_ack_clamp(void)
{
	struct hdt t;

	hdt_create(&t, "");
	tl_install(&t);
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 482);
	hdt_run(&t, 10000000);
	CHECK_EQ(hdt_data(&t, 0), 3);
	hdt_ack(&t, B, 1, 5, 1, false);                 /* seq 5 never went */
	CHECK_EQ(tl.fbs[RP_FB_ACK], 0);
	CHECK_EQ(t.h->st.notify_forged, 1);
	hdt_ack(&t, B, 1, 1, 0xffffffffu, true);
	CHECK_EQ(tl.fbs[RP_FB_ACK], 1);
	CHECK_EQ(tl.last_fb.unmarked + tl.last_fb.marked, 3);
	CHECK_EQ(tl.last_fb.marked, 1);
	CHECK_EQ(t.h->st.ack_clamped, 1);
	/* Two of three acknowledged: one is left in flight. */
	hdt_ack(&t, B, 1, 2, 7, false);
	CHECK_EQ(tl.last_fb.unmarked, 1);
	CHECK_EQ(t.h->st.ack_clamped, 2);
	hdt_ack(&t, B, 1, 2, 1, false);
	CHECK_EQ(tl.last_fb.unmarked, 0);
	hdt_destroy(&t);
}

/* ---- link events ------------------------------------------------------------- */

/* The frames a port got in the sink's log since `from`. */
static uint32_t hdt_on(struct hdt *t, uint32_t from, int port)
{
	return vt_count(&t->k, from, (uint32_t)port);
}

/*
 * The uplink goes down with 20 frames queued behind a 335 ms PAUSE: they
 * are dropped and counted at the host port, the pool gets them back, and
 * while it is down what the host sends is dropped and nothing leaves. Back
 * up, the PAUSE is forgotten and the flow goes on at its own rate (8M: one
 * 1000-byte frame a millisecond, not 20 at once). The host port down:
 * frames from the fabric for the host are dropped; back up, delivered.
 */
static void test_hd_core_link_down(void)
{
	uint8_t buf[64], sw[6];
	uint32_t from;
	struct hdt t;

	hdt_create(&t, "[rate b]\ndst = 02:00:00:00:00:02\nrate = 8M\n");
	vt_mac(sw, SW);
	hdt_set(&t, 0);
	hdt_up_raw(&t, buf, wire_build_pause(buf, sizeof(buf), sw, 65535));
	from = t.k.n;
	for (int i = 0; i < 20; i++)
		hdt_host(&t, B, 1000 - L2CC_TAG_LEN);
	hdt_run(&t, 5000000);
	CHECK_EQ(hdt_data(&t, from), 0);
	CHECK_EQ(t.u->held, 20);

	hd_port_link(t.h, P_UP, false);
	CHECK_EQ(t.h->ust.link_down_events, 1);
	CHECK_EQ(t.h->hst.drop[HD_DROP_LINK_DOWN], 20);
	CHECK_EQ(t.u->held, 0);
	CHECK_EQ(fc_tx_paused_mask(&t.h->etx, t.h->now), 0);
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 1000 - L2CC_TAG_LEN);
	CHECK_EQ(t.h->hst.drop[HD_DROP_LINK_DOWN], 23);
	CHECK(hdt_up_data(&t, B, 7, 0, false));
	CHECK_EQ(t.h->ust.drop[HD_DROP_LINK_DOWN], 1);
	hdt_run(&t, 100000000);
	CHECK_EQ(hdt_on(&t, from, P_UP), 0);
	CHECK_EQ(hdt_on(&t, from, P_HOST), 0);
	CHECK_EQ(t.u->held, 0);

	hd_port_link(t.h, P_UP, true);
	CHECK_EQ(t.h->ust.link_up_events, 1);
	from = t.k.n;
	for (int i = 0; i < 20; i++)
		hdt_host(&t, B, 1000 - L2CC_TAG_LEN);
	hdt_run(&t, 110000000);
	CHECK(hdt_data(&t, from) >= 8);
	CHECK(hdt_data(&t, from) <= 14);
	hdt_run(&t, 200000000);
	CHECK_EQ(hdt_data(&t, from), 20);

	hd_port_link(t.h, P_HOST, false);
	CHECK_EQ(t.h->hst.link_down_events, 1);
	from = t.k.n;
	CHECK(hdt_up_data(&t, B, 7, 0, false));
	CHECK_EQ(t.h->ust.drop[HD_DROP_LINK_DOWN], 2);
	hd_port_link(t.h, P_HOST, true);
	CHECK(hdt_up_data(&t, B, 7, 1, false));
	hdt_run(&t, 201000000);
	CHECK_EQ(hdt_on(&t, from, P_HOST), 1);
	hdt_destroy(&t);
}

/* Frames the sink saw on the uplink from `from` to a link-local address
 * (ll) or to another. */
static uint32_t hdt_up_frames(struct hdt *t, uint32_t from, bool ll)
{
	uint32_t n = 0;

	for (uint32_t i = from; i < t->k.n; i++)
		n += t->k.log[i].port == P_UP && wire_is_link_local(t->k.log[i].data) == ll;
	return n;
}

/*
 * The uplink's two ends of the frame account (docs/hostd.md, Counters):
 * ctrl_rx_frames counts the well-formed PAUSE, PFC and CREDIT from the
 * switch, applied, taken in XDP or void on a link that is down, and
 * ctrl_tx_frames the CREDITs we built; what is left of rx_frames and
 * tx_frames is every frame that crossed the fabric, the bad control frames
 * (drops) among them.
 */
static void test_hd_core_uplink_ctrl(void)
{
	struct wire_credit c = { .unit = L2CC_CREDIT_BYTES, .prio_mask = 0xff,
				 .sent_unit = L2CC_CREDIT_UNIT_NONE };
	struct l2cc_xdp_ctl xctl = { 0 };
	struct xport xp = { .ctl = &xctl };
	uint8_t buf[200], sw[6], me[6], b[6];
	uint16_t q[8] = { 0 };
	struct hdt t;
	int len;

	hdt_create(&t, "link_rate = 10M\n");
	vt_mac(sw, SW);
	vt_mac(me, ME);
	vt_mac(b, B);
	hdt_set(&t, 0);
	for (int i = 0; i < 3; i++)
		hdt_host(&t, B, 200);
	hdt_run(&t, 1000000);
	/* Control that is well formed: a PAUSE, a PFC, two CREDITs (the
	 * first grant asks for ours at once). */
	hdt_up_raw(&t, buf, wire_build_pause(buf, sizeof(buf), sw, 0));
	hdt_up_raw(&t, buf, wire_build_pfc(buf, sizeof(buf), sw, 0x01, q));
	for (int i = 0; i < 8; i++)
		c.limit[i] = 100000;
	hdt_up_raw(&t, buf, wire_build_credit(buf, sizeof(buf), sw, &c));
	hdt_up_raw(&t, buf, wire_build_credit(buf, sizeof(buf), sw, &c));
	/* Not: a PAUSE cut short, one of another opcode, LLDP, a CNP and a
	 * data frame from B. */
	len = wire_build_pause(buf, sizeof(buf), sw, 100);
	hdt_up_raw(&t, buf, L2CC_ETH_HLEN + 2);
	buf[L2CC_ETH_HLEN + 1] = 0x03;
	hdt_up_raw(&t, buf, len);
	buf[5] = 0x0e;
	buf[12] = 0x88;
	buf[13] = 0xcc;
	hdt_up_raw(&t, buf, len);
	hdt_up_raw(&t, buf, wire_build_cnp(buf, sizeof(buf), me, b,
					   &(struct wire_cnp){ .flow = 9, .marked = 1 }));
	CHECK(hdt_up_data(&t, B, 7, 0, false));
	hdt_run(&t, 2000000);
	CHECK_EQ(t.h->ust.ctrl_rx_frames, 4);
	CHECK_EQ(t.h->ust.rx_frames - t.h->ust.ctrl_rx_frames, 5);
	CHECK_EQ(t.h->ust.drop[HD_DROP_BAD_CTRL], 1);
	CHECK_EQ(t.h->ust.drop[HD_DROP_UNSUPPORTED], 1);
	CHECK_EQ(t.h->ust.drop[HD_DROP_LINK_LOCAL], 1);
	CHECK(t.h->ust.ctrl_tx_frames >= 1);

	/* Taken in the uplink's XDP program: a PAUSE and a malformed one. */
	t.h->up = &xp;
	hd_xdp_ctl_config(t.h);
	xctl.seq += 2;
	xctl.frames += 2;
	xctl.pause_rx++;
	xctl.malformed++;
	hdt_run(&t, 3000000);
	CHECK_EQ(t.h->ust.ctrl_rx_frames, 5);
	CHECK_EQ(t.h->ust.rx_frames - t.h->ust.ctrl_rx_frames, 6);
	CHECK_EQ(t.h->ust.drop[HD_DROP_BAD_CTRL], 2);
	t.h->up = NULL;

	/* The link down: a PAUSE still is control (void), data a drop. */
	hd_port_link(t.h, P_UP, false);
	hdt_up_raw(&t, buf, wire_build_pause(buf, sizeof(buf), sw, 100));
	CHECK(hdt_up_data(&t, B, 7, 1, false));
	CHECK_EQ(t.h->ust.ctrl_rx_frames, 6);
	CHECK_EQ(t.h->ust.rx_frames - t.h->ust.ctrl_rx_frames, 7);
	CHECK_EQ(t.h->ust.drop[HD_DROP_LINK_DOWN], 1);
	CHECK_EQ(fc_tx_paused_mask(&t.h->etx, t.h->now), 0);
	hd_port_link(t.h, P_UP, true);
	hdt_run(&t, 100000000);

	/* What went up: our CREDITs, and the rest (the host's 3 frames). */
	CHECK_EQ(t.h->ust.ctrl_tx_frames, hdt_up_frames(&t, 0, true));
	CHECK_EQ(t.h->ust.ctrl_tx_frames, (uint64_t)hdt_ctrl(&t, 0, L2CC_CTRL_CREDIT, NULL));
	CHECK_EQ(t.h->ust.tx_frames - t.h->ust.ctrl_tx_frames, hdt_up_frames(&t, 0, false));
	CHECK_EQ(hdt_up_frames(&t, 0, false), 3);
	CHECK_EQ(t.h->hst.ctrl_rx_frames + t.h->hst.ctrl_tx_frames, 0);
	hdt_destroy(&t);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_hd_core_tag_and_pace);
	RUN(test_hd_core_forged_from_host);
	RUN(test_hd_core_pcp_from_dscp);
	RUN(test_hd_core_pcp_rx);
	RUN(test_hd_core_cnp_coalescing);
	RUN(test_hd_core_acks);
	RUN(test_hd_core_window);
	RUN(test_hd_core_ack_timeout);
	RUN(test_hd_core_pause);
	RUN(test_hd_core_wire_lost);
	RUN(test_hd_core_credits);
	RUN(test_hd_core_rp_services);
	RUN(test_hd_core_bcn_events);
	RUN(test_hd_core_bcn_stop_and_si);
	RUN(test_hd_core_qcn_events);
	RUN(test_hd_core_ctrl_senders);
	RUN(test_hd_core_notify_peer_by_prio);
	RUN(test_hd_core_subflow_share);
	RUN(test_hd_core_ack_clamp);
	RUN(test_hd_core_link_down);
	RUN(test_hd_core_uplink_ctrl);
	return check_summary();
}
