// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ibcc congestion point (switchd/cp_ibcc.c) in virtual time, on the
 * plug-in seam: switchd's core without sockets (the harness of
 * test_switch_core.c), frames fed in, time moved by hand. Pinned here:
 * entering the congestion state above the high threshold and leaving it at
 * the low one (and at the single threshold with hysteresis 0), root vs
 * victim and victim_mask, threshold_mode voq vs common, thresholds sized
 * by each input's own buffer when buffers differ, packet_size, the
 * marked fraction 1/(marking_rate+1) over 1e5 eligible frames, and the
 * marks counted per input port.
 *
 * Each test's mutant in tests/unit/mutants.sh breaks the rule it checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "log.h"
#include "swt.h"

/*
 * p0 and p3: inputs from hosts A and C. p1: toward host R (role host).
 * p2: toward a switch with V behind it, credit flow control and no credits
 * yet (a victim). Buffers of 16 frames: threshold 8 puts the high
 * threshold at 8 frames (occupancy counts frames as the largest frame).
 */
static const int ib_hosts[][2] = { { H_A, 0 }, { H_R, 1 }, { H_V, 2 }, { H_C, 3 } };

static const char *ib_conf(const char *sw, const char *p1, const char *p2)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf),
		 "[switch]\nfdb_aging = 0\nmarking = ibcc\n%s%s"
		 "[port p0]\nrate = 10M\nbuffer = 16frames\n"
		 "[port p1]\nrate = 10M\nbuffer = 16frames\n%s"
		 "[port p2]\nrate = 10M\nbuffer = 16frames\nflow_control = credit\nrole = switch\n%s"
		 "[port p3]\nrate = 10M\nbuffer = 16frames\n",
		 strstr(sw, "marking_rate") ? "" : "marking_rate = 0\n", sw, p1, p2);
	return buf;
}

static void ib_send(struct swt *t, int port, int src, int dst, int n, uint32_t len)
{
	for (int i = 0; i < n; i++)
		CHECK(swt_rx(t, port, (struct vt_eth){ .dst = (uint8_t)dst, .src = (uint8_t)src,
							.prio = -1, .len = len, .tag = true,
							.flow = (uint16_t)src, .seq = (uint32_t)i }));
}

/* The FECN of each data frame p sent since log index from, in order. */
static int ib_fecns(struct swt *t, uint32_t from, int p, int *out, int max)
{
	int n = 0;

	for (uint32_t i = from; i < t->k.n && n < max; i++)
		if ((int)t->k.log[i].port == p && vt_ethertype(&t->k.log[i]) == L2CC_ETH_P_DATA_TAG)
			out[n++] = vt_fecn(&t->k.log[i]);
	return n;
}

static void ib_pause(struct swt *t, int p, uint16_t quanta)
{
	uint8_t buf[64];
	int len = wire_build_pause(buf, sizeof(buf), (const uint8_t[6]){ 2, 0, 0, 0, 0, 0x66 },
				   quanta);

	swt_rx_raw(t, p, buf, len);
}

/* Twelve frames queued at once for R: entered at the ninth (above 8
 * frames), left when a departure takes the VOQ to the low threshold; with
 * marking_rate 0 every frame sent in between is marked. */
static void ib_enter_leave(const char *p1extra, int want_marked)
{
	struct swt t;
	int fecn[32], n;

	swt_create(&t, ib_conf("", p1extra, ""));
	swt_learn(&t, ib_hosts, 4);
	ib_send(&t, 0, H_A, H_R, 8, 1500);
	CHECK_EQ(swt_cp(&t, 1, "congested"), 0);        /* at 8 frames: not above */
	ib_send(&t, 0, H_A, H_R, 1, 1500);
	CHECK_EQ(swt_cp(&t, 1, "congested"), want_marked > 0);  /* priority 0's bit */
	CHECK_EQ(swt_cp(&t, 1, "entries"), want_marked > 0);
	ib_send(&t, 0, H_A, H_R, 3, 1500);
	swt_run(&t, 200000000);
	n = ib_fecns(&t, 0, 1, fecn, 32);
	CHECK_EQ(n, 12);
	/* The k-th frame leaves 11 - k behind: marked while that is above
	 * the low threshold. */
	for (int k = 0; k < n; k++)
		CHECK_EQ(fecn[k], k < want_marked);
	CHECK_EQ(swt_cp(&t, 1, "congested"), 0);
	CHECK_EQ(swt_cp(&t, 1, "entries"), want_marked > 0);
	CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), want_marked);
	CHECK_EQ(swt_cp(&t, 1, "eligible"), want_marked);
	CHECK_EQ(t.s->ports[1].st.marked, want_marked);
	CHECK_EQ(swt_cp(&t, 1, "congested_ns") > 0, want_marked > 0);
	swt_destroy(&t);
}

static void test_ibcc_enter_leave(void)
{
	/* Low threshold 8 - 4 = 4 frames: left as the 8th frame leaves 4. */
	ib_enter_leave("hysteresis = 4frames\n", 7);
	/* In bytes: 3 frames' worth and one byte more leaves below 5 frames. */
	{
		char h[64];

		snprintf(h, sizeof(h), "hysteresis = %u\n", 3 * (1500 + 22) + 1);
		ib_enter_leave(h, 7);
	}
	/* One threshold: left as soon as the VOQ is back at 8. */
	ib_enter_leave("hysteresis = 0\n", 3);
	/* Threshold 0 never marks. */
	ib_enter_leave("threshold = 0\n", 0);
}

/* The default hysteresis is 3.5 largest frames: the low threshold 4.5. */
static void test_ibcc_defaults(void)
{
	struct swt t;

	swt_create(&t, ib_conf("", "", ""));
	CHECK_EQ(swt_cp(&t, 1, "thr_high"), 8 * 1522);
	CHECK_EQ(swt_cp(&t, 1, "thr_low"), 8 * 1522 - 7 * 1522 / 2);
	swt_destroy(&t);
	swt_create(&t, ib_conf("threshold = 15\n", "hysteresis = 30frames\n", ""));
	CHECK_EQ(swt_cp(&t, 1, "thr_high"), 16 * 1522 / 16);
	CHECK_EQ(swt_cp(&t, 1, "thr_low"), 0);
	swt_destroy(&t);
}

/* A held output (paused, or a switch port without credits) is a victim:
 * it enters only with victim_mask, which auto sets on host ports. */
static void test_ibcc_root_victim(void)
{
	static const struct { const char *p1, *p2; int e1, e2; } cases[] = {
		{ "flow_control = pause\nvictim_mask = no\n", "", 0, 0 },
		{ "flow_control = pause\n", "", 1, 0 },                 /* auto: host port */
		{ "flow_control = pause\nvictim_mask = yes\n", "victim_mask = yes\n", 1, 1 },
		{ "flow_control = pause\nvictim_mask = no\n", "victim_mask = no\n", 0, 0 },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct swt t;
		uint32_t from;
		int fecn[32], n, marked = 0;

		swt_create(&t, ib_conf("", cases[c].p1, cases[c].p2));
		swt_learn(&t, ib_hosts, 4);
		ib_pause(&t, 1, 65535);
		swt_at(&t, 0);
		ib_send(&t, 0, H_A, H_R, 12, 1500);
		ib_send(&t, 3, H_C, H_V, 12, 1500);
		swt_run(&t, 10000000);
		CHECK_EQ(swt_cp(&t, 1, "entries"), cases[c].e1);
		CHECK_EQ(swt_cp(&t, 2, "entries"), cases[c].e2);
		CHECK_EQ(swt_cp(&t, 1, "congested"), cases[c].e1);
		if (cases[c].e1 || c != 0) {
			swt_destroy(&t);
			continue;
		}
		/* Resumed: the 12 frames built up while it was held, a victim's
		 * backlog: still not entered as they drain. Fresh frames on
		 * the free output then make it a root that enters and marks;
		 * the victim behind p2 still marks nothing. */
		from = t.k.n;
		ib_pause(&t, 1, 0);
		swt_run(&t, 200000000);
		CHECK_EQ(swt_cp(&t, 1, "entries"), 0);
		CHECK_EQ(ib_fecns(&t, from, 1, fecn, 32), 12);
		CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), 0);
		from = t.k.n;
		ib_send(&t, 0, H_A, H_R, 12, 1500);
		swt_run(&t, 400000000);
		CHECK_EQ(swt_cp(&t, 1, "entries"), 1);
		n = ib_fecns(&t, from, 1, fecn, 32);
		CHECK_EQ(n, 12);
		for (int k = 0; k < n; k++)
			marked += fecn[k] == 1;
		CHECK(marked >= 1);
		CHECK_EQ(swt_cp(&t, 2, "fecn_marked"), 0);
		CHECK_EQ(t.s->ports[2].st.marked, 0);
		swt_destroy(&t);
	}
}

/* voq: one input's VOQ must cross; common: the sum over inputs. */
static void test_ibcc_threshold_mode(void)
{
	static const char *const modes[] = { "threshold_mode = voq\n", "threshold_mode = common\n" };

	for (int m = 0; m < 2; m++) {
		struct swt t;

		swt_create(&t, ib_conf("", modes[m], ""));
		swt_learn(&t, ib_hosts, 4);
		ib_send(&t, 0, H_A, H_R, 6, 1500);
		ib_send(&t, 3, H_C, H_R, 6, 1500);
		CHECK_EQ(swt_cp(&t, 1, "entries"), m);
		swt_run(&t, 200000000);
		CHECK_EQ(swt_cp(&t, 1, "fecn_marked") > 0, m);
		swt_destroy(&t);
	}
}

/*
 * Inputs with unequal buffers: a VOQ crosses at a fill ratio of its own
 * input's buffer (Gran §II.1), not of the output's. p0 holds 32 frames,
 * p3 8, the output p1 16; threshold 8 puts A's VOQ at 16 frames and C's at
 * 4 (sized from p1's buffer both would be 8: A's crossing far too early,
 * and with a smaller input C's reachable only after most of its buffer).
 * common: the sum against the smallest port buffer's (8 frames: 4).
 */
static const char *ib_unequal_conf(const char *mode)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "[switch]\nfdb_aging = 0\nmarking = ibcc\nmarking_rate = 0\n"
		 "[port p0]\nrate = 10M\nbuffer = 32frames\n"
		 "[port p1]\nrate = 10M\nbuffer = 16frames\n%s"
		 "[port p2]\nrate = 10M\nbuffer = 16frames\nflow_control = credit\nrole = switch\n"
		 "[port p3]\nrate = 10M\nbuffer = 8frames\n", mode);
	return buf;
}

static void test_ibcc_unequal_buffers(void)
{
	struct swt t;

	/* A's VOQ (32-frame input): not above 16 frames at 16, above at 17. */
	swt_create(&t, ib_unequal_conf(""));
	swt_learn(&t, ib_hosts, 4);
	CHECK_EQ(swt_cp(&t, 1, "thr_high"), 4 * 1522);  /* the smallest buffer's */
	ib_send(&t, 0, H_A, H_R, 16, 1500);
	CHECK_EQ(swt_cp(&t, 1, "entries"), 0);
	ib_send(&t, 0, H_A, H_R, 1, 1500);
	CHECK_EQ(swt_cp(&t, 1, "entries"), 1);
	swt_destroy(&t);

	/* C's VOQ (8-frame input): above 4 frames at 5; leaves at the low
	 * threshold, 4 - 3.5 = 0.5 frames: as its last frame is sent. */
	swt_create(&t, ib_unequal_conf(""));
	swt_learn(&t, ib_hosts, 4);
	ib_send(&t, 3, H_C, H_R, 4, 1500);
	CHECK_EQ(swt_cp(&t, 1, "entries"), 0);
	ib_send(&t, 3, H_C, H_R, 1, 1500);
	CHECK_EQ(swt_cp(&t, 1, "entries"), 1);
	swt_run(&t, 200000000);
	CHECK_EQ(swt_cp(&t, 1, "congested"), 0);
	CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), 4);      /* frames 1..4 leave >= 1 behind */
	swt_destroy(&t);

	/* common: 3 of A's and 2 of C's, 5 frames in all, above the sum's 4;
	 * in voq mode neither VOQ is above its own threshold. */
	for (int m = 0; m < 2; m++) {
		swt_create(&t, ib_unequal_conf(m ? "threshold_mode = common\n" : ""));
		swt_learn(&t, ib_hosts, 4);
		ib_send(&t, 0, H_A, H_R, 3, 1500);
		ib_send(&t, 3, H_C, H_R, 2, 1500);
		CHECK_EQ(swt_cp(&t, 1, "entries"), m);
		swt_destroy(&t);
	}
}

/* Frames shorter than packet_size are never marked (nor eligible). */
static void test_ibcc_packet_size(void)
{
	struct swt t;
	uint32_t big = 0, small_marked = 0, big_marked = 0;

	swt_create(&t, ib_conf("", "packet_size = 1000\nhysteresis = 8frames\n", ""));
	swt_learn(&t, ib_hosts, 4);
	for (int i = 0; i < 12; i++)
		ib_send(&t, 0, H_A, H_R, 1, i % 2 ? 200 : 1500);
	swt_run(&t, 200000000);
	for (uint32_t i = 0; i < t.k.n; i++) {
		const struct vt_frame *f = &t.k.log[i];

		if (f->port != 1 || vt_ethertype(f) != L2CC_ETH_P_DATA_TAG)
			continue;
		if (f->len < 1000)
			small_marked += vt_fecn(f) == 1;
		else {
			big++;
			big_marked += vt_fecn(f) == 1;
		}
	}
	CHECK_EQ(big, 6);
	CHECK_EQ(small_marked, 0);
	CHECK(big_marked >= 3);
	CHECK_EQ(swt_cp(&t, 1, "eligible"), big_marked);
	CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), big_marked);
	swt_destroy(&t);
}

/* Over 1e5 eligible frames the marked fraction is 1/(MR+1) within 2%. */
static void ib_fraction(int mr)
{
	char sw[64];
	struct swt t;
	struct sw_port *p1;
	uint8_t data[64] = { 0 };
	int marks = 0;
	const int n = 100000;

	snprintf(sw, sizeof(sw), "marking_rate = %d\n", mr);
	swt_create(&t, ib_conf(sw, "flow_control = pause\nvictim_mask = yes\n", ""));
	swt_learn(&t, ib_hosts, 4);
	ib_pause(&t, 1, 65535);
	swt_at(&t, 0);
	ib_send(&t, 0, H_A, H_R, 12, 1500);
	swt_at(&t, 1000);
	p1 = &t.s->ports[1];
	CHECK_EQ(swt_cp(&t, 1, "congested"), 1);
	/* The seam itself: the frames an output in the state sends. */
	for (int i = 0; i < n; i++)
		marks += p1->cpo->tx(p1->cp, 1, 0, 0, data, 1500) == CP_MARK;
	CHECK_EQ(swt_cp(&t, 1, "eligible"), n);
	CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), marks);
	CHECK_NEAR((double)marks / n, 1.0 / (mr + 1), 0.02 / (mr + 1));
	printf("    marking_rate %d: %d of %d marked (%.4f, 1/(MR+1) = %.4f)\n", mr, marks, n,
	       (double)marks / n, 1.0 / (mr + 1));
	swt_destroy(&t);
}

static void test_ibcc_marking_rate(void)
{
	ib_fraction(1);
	ib_fraction(10);
}

/* Marks are counted on the input each marked frame came in by. */
static void test_ibcc_marks_per_input(void)
{
	struct swt t;
	int from_a = 0, from_c = 0;

	swt_create(&t, ib_conf("marking_rate = 1\n", "threshold_mode = common\n", ""));
	swt_learn(&t, ib_hosts, 4);
	ib_send(&t, 0, H_A, H_R, 8, 1500);
	ib_send(&t, 3, H_C, H_R, 8, 1500);
	swt_run(&t, 300000000);
	for (uint32_t i = 0; i < t.k.n; i++) {
		const struct vt_frame *f = &t.k.log[i];

		if (f->port != 1 || vt_fecn(f) != 1)
			continue;
		from_a += f->data[11] == H_A;
		from_c += f->data[11] == H_C;
	}
	CHECK(from_a > 0 && from_c > 0);
	CHECK_EQ(swt_cp(&t, 0, "in_marked"), from_a);
	CHECK_EQ(swt_cp(&t, 3, "in_marked"), from_c);
	CHECK_EQ(swt_cp(&t, 1, "fecn_marked"), from_a + from_c);
	CHECK_EQ(swt_cp(&t, 1, "in_marked"), 0);
	swt_destroy(&t);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_ibcc_enter_leave);
	RUN(test_ibcc_defaults);
	RUN(test_ibcc_root_victim);
	RUN(test_ibcc_threshold_mode);
	RUN(test_ibcc_unequal_buffers);
	RUN(test_ibcc_packet_size);
	RUN(test_ibcc_marking_rate);
	RUN(test_ibcc_marks_per_input);
	return check_summary();
}
