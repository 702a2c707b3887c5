// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ibcc law (hostd/rp_ibcc.c) in hostd's core, in virtual time (the
 * harness of test_hostd_core.c, hdt.h): the rate a flow is paced at for a
 * CCT entry, link / (1 + multiplier / 2^shift), within 1%; N BECNs raise
 * the CCTI by N * ccti_increase up to ccti_limit; the per-priority
 * CCTI_Timer lowers every flow of its priority together, one step per
 * expiry, down to ccti_min, and priorities have timers of their own.
 *
 * Each test's mutant in tests/unit/mutants.sh breaks the rule it checks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hdt.h"
#include "json.h"
#include "log.h"

#define LINK 100e6

/* A CNP from peer `from` for our flow id: `marked` BECNs. */
static void ib_cnp(struct hdt *t, int from, uint16_t flow, uint32_t marked)
{
	struct wire_cnp c = { .flow = flow, .seq = 0, .marked = marked };
	uint8_t buf[128], me[6], src[6];

	vt_mac(me, ME);
	vt_mac(src, (uint8_t)from);
	hdt_up_raw(t, buf, wire_build_cnp(buf, sizeof(buf), me, src, &c));
}

/* A value of the law's describe of flow id (-1 if absent). */
static long long ib_law(struct hdt *t, uint16_t id, const char *key)
{
	char buf[32];
	const char *v = hdt_law_text(t, flow_by_id(t->h->flows, id), key, buf, sizeof(buf));

	return v ? strtoll(v, NULL, 10) : -1;
}

/* The host stack sends a frame of len bytes to dst at priority prio. */
static void ib_host(struct hdt *t, int dst, int prio, uint32_t len)
{
	struct vt_eth e = { .dst = (uint8_t)dst, .src = ME, .prio = prio, .len = len };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);

	hd_rx_host_frame(t->h, addr, l);
}

/* The rate the uplink shows for the frames to dst from the 40th (past the
 * flow's burst: 2 ms at its rate) to the last of n: bits after the first
 * over the time. */
static double ib_measure(struct hdt *t, int dst, int n)
{
	uint32_t from = t->k.n, first = UINT32_MAX, last = 0;
	uint64_t bits = 0;
	int k = 0;

	for (int i = 0; i < n; i++)
		ib_host(t, dst, -1, 1000 - L2CC_TAG_LEN);
	hdt_run(t, (t->h->now - t->h->start_ns) + 2000000000ull);
	for (uint32_t i = from; i < t->k.n; i++) {
		const struct vt_frame *f = &t->k.log[i];

		if (f->port != P_UP || vt_ethertype(f) != L2CC_ETH_P_DATA_TAG || f->data[5] != dst)
			continue;
		if (++k < 40)
			continue;
		if (first == UINT32_MAX)
			first = i;
		else
			bits += 8ull * f->len;
		last = i;
	}
	CHECK_EQ(k, n);
	if (first == UINT32_MAX || last == first)
		return 0;
	return bits * 1e9 / (double)(t->k.log[last].t - t->k.log[first].t);
}

/* One flow to B, its CCTI set to `ccti` by one BECN of that increase. */
static void ib_rate_at(const char *keys, unsigned ccti, double want)
{
	char conf[512];
	struct hdt t;
	double r;

	snprintf(conf, sizeof(conf), "[law]\nlaw = ibcc\nccti_timer = 10s\nccti_increase = %u\n%s",
		 ccti, keys);
	hdt_create(&t, conf);
	ib_host(&t, B, -1, 100);
	hdt_run(&t, 1000000);
	if (ccti)
		ib_cnp(&t, B, 1, 1);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), ccti);
	r = ib_measure(&t, B, 160);
	CHECK_NEAR(r / want, 1.0, 0.01);
	if (r / want < 0.99 || r / want > 1.01)
		printf("    ccti %u: measured %.0f bit/s, want %.0f\n", ccti, r, want);
	hdt_destroy(&t);
}

/* The pacer holds each entry's rate within 1%: the default linear table
 * (entry i = i/8 frame times: link * 8 / (8 + i)) and a table inline. */
static void test_ibcc_cct_rate(void)
{
	static const unsigned idx[] = { 0, 1, 8, 24, 56, 127 };

	for (size_t i = 0; i < sizeof(idx) / sizeof(idx[0]); i++)
		ib_rate_at("", idx[i], LINK * 8 / (8 + idx[i]));
	/* Shift 1, multiplier 1: 1/2 frame time; shift 0, multiplier 3: 3. */
	ib_rate_at("cct = 0, 0x4001, 3\nccti_limit = 2\n", 1, LINK / 1.5);
	ib_rate_at("cct = 0, 0x4001, 3\nccti_limit = 2\n", 2, LINK / 4);
	ib_rate_at("cct = linear:2:0\n", 5, LINK / 11);
}

/* N BECNs add N * ccti_increase, never past ccti_limit. */
static void test_ibcc_becns(void)
{
	struct hdt t;

	hdt_create(&t, "[law]\nlaw = ibcc\nccti_timer = 10s\nccti_increase = 3\nccti_limit = 20\n");
	ib_host(&t, B, -1, 100);
	hdt_run(&t, 1000000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 0);
	for (int i = 0; i < 4; i++)
		ib_cnp(&t, B, 1, 1);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 12);
	/* A CNP standing for two marked frames is two BECNs. */
	ib_cnp(&t, B, 1, 2);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 18);
	CHECK_EQ(ib_law(&t, 1, "becns"), 6);
	ib_cnp(&t, B, 1, 1);
	ib_cnp(&t, B, 1, 1);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 20);
	CHECK_EQ(ib_law(&t, 1, "ccti_max"), 20);
	CHECK_EQ(ib_law(&t, 1, "becns"), 8);
	hdt_destroy(&t);

	/* Reliable mode: an ACK with ECE is one BECN, one without none. */
	hdt_create(&t, "mode = reliable\n[law]\nlaw = ibcc\nccti_timer = 10s\n"
		       "ccti_increase = 2\n");
	ib_host(&t, B, -1, 100);
	hdt_run(&t, 1000000);
	hdt_ack(&t, B, 1, 0, 1, true);
	hdt_ack(&t, B, 1, 0, 1, false);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 2);
	CHECK_EQ(ib_law(&t, 1, "becns"), 1);
	hdt_destroy(&t);
}

/*
 * Lockstep: flows to B and C, both priority 0. B's BECNs arrive at 0 and
 * start the timer (ccti_timer = 100 units, 102.4 us); C's arrive half a
 * period later. Each expiry lowers both by one: C's first step comes half
 * a period after its BECN, as one timer for the priority has it (a timer
 * of its own would wait a whole period). ccti_min 1 holds C there; the
 * timer stops once every flow is at ccti_min.
 */
static void test_ibcc_lockstep(void)
{
	const uint64_t P = 100 * 1024;
	struct hdt t;
	uint64_t t0;

	hdt_create(&t, "[law]\nlaw = ibcc\nccti_timer = 100\nccti_min = 1\n");
	ib_host(&t, B, -1, 100);
	ib_host(&t, C, -1, 100);
	hdt_run(&t, 1000000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 1);         /* flows start at ccti_min */
	t0 = t.h->now - t.h->start_ns;
	for (int i = 0; i < 4; i++)
		ib_cnp(&t, B, 1, 1);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 5);
	hdt_run(&t, t0 + P / 2);
	ib_cnp(&t, C, 2, 1);
	ib_cnp(&t, C, 2, 1);
	hd_pass(t.h);
	CHECK_EQ(ib_law(&t, 2, "ccti"), 3);
	hdt_run(&t, t0 + P - 1000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 5);
	CHECK_EQ(ib_law(&t, 2, "ccti"), 3);
	hdt_run(&t, t0 + P + 1000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 4);
	CHECK_EQ(ib_law(&t, 2, "ccti"), 2);
	hdt_run(&t, t0 + 2 * P + 1000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 3);
	CHECK_EQ(ib_law(&t, 2, "ccti"), 1);
	hdt_run(&t, t0 + 10 * P + 1000);
	CHECK_EQ(ib_law(&t, 1, "ccti"), 1);
	CHECK_EQ(ib_law(&t, 2, "ccti"), 1);
	CHECK_EQ(ib_law(&t, 1, "decreases"), 4);
	CHECK_EQ(ib_law(&t, 2, "decreases"), 2);
	CHECK_EQ(t.h->tick_at[0], 0);               /* stopped: all at ccti_min */
	/* The rate follows: back at ccti_min's entry (1/8 frame time). */
	CHECK_NEAR((double)pacer_rate(t.h->pacer, 1), LINK * 8 / 9, LINK * 0.001);
	hdt_destroy(&t);
}

/* SL level (granularity = prio): a priority's timer steps its own flows
 * only; the timer's unit with a duration. */
static void test_ibcc_timer_per_priority(void)
{
	const uint64_t P = 200000;
	struct hdt t;
	uint64_t t0;
	struct flow *f0, *f3;
	struct flow_key k = { .type = FLOW_KEY_PRIO };

	hdt_create(&t, "granularity = prio\n[law]\nlaw = ibcc\nccti_timer = 200us\n");
	ib_host(&t, B, 0, 100);
	ib_host(&t, B, 3, 100);
	hdt_run(&t, 1000000);
	k.prio = 0;
	f0 = flow_lookup(t.h->flows, &k);
	k.prio = 3;
	f3 = flow_lookup(t.h->flows, &k);
	CHECK(f0 && f3);
	if (!f0 || !f3) {
		hdt_destroy(&t);
		return;
	}
	CHECK_EQ(ib_law(&t, f3->id, "sl"), 3);
	t0 = t.h->now - t.h->start_ns;
	ib_cnp(&t, B, f0->id, 4);
	hd_pass(t.h);
	hdt_run(&t, t0 + P / 2);
	ib_cnp(&t, B, f3->id, 4);
	hd_pass(t.h);
	hdt_run(&t, t0 + P + 1000);
	CHECK_EQ(ib_law(&t, f0->id, "ccti"), 3);
	CHECK_EQ(ib_law(&t, f3->id, "ccti"), 4);    /* its own timer: not yet */
	hdt_run(&t, t0 + P + P / 2 + 1000);
	CHECK_EQ(ib_law(&t, f0->id, "ccti"), 3);
	CHECK_EQ(ib_law(&t, f3->id, "ccti"), 3);
	hdt_destroy(&t);
}

/* The keys: ccti_timer's bare number and units, the table's forms and
 * their errors. */
static void test_ibcc_keys(void)
{
	static const struct { const char *text; int ok; uint64_t timer_ns; } cases[] = {
		{ "ccti_timer = 150\n", 1, 150 * 1024 },
		{ "ccti_timer = 500us\n", 1, 500000 },
		{ "ccti_timer = 5ms\n", 1, 5000000 },
		{ "ccti_timer = 0\n", 0, 0 },
		{ "ccti_timer = soon\n", 0, 0 },
		{ "cct = 0,0x4001,3\nccti_limit = 2\n", 1, 150 * 1024 },
		{ "cct = 0,0x4001,3\n", 0, 0 },             /* ccti_limit 127 past the table */
		{ "cct = 0,0x10000\nccti_limit = 1\n", 0, 0 },
		{ "cct = linear:200:0\n", 0, 0 },           /* 200 * 127 > 14 bits */
		{ "ccti_min = 5\nccti_limit = 4\n", 0, 0 },
		{ "cct = @/nonexistent/cct\n", 0, 0 },
	};
	char path[] = "/tmp/l2cc-ibcc-XXXXXX", cct[] = "/tmp/l2cc-cct-XXXXXX", err[512], text[512];
	struct hd_cfg cfg;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char p[sizeof(path)];
		int ret;

		memcpy(p, path, sizeof(path));
		snprintf(text, sizeof(text), "[hostd]\nhost_port = cc0\nuplink = up0\n"
			 "[law]\nlaw = ibcc\n%s", cases[i].text);
		CHECK_EQ(vt_conf_file(p, text), 0);
		ret = hd_cfg_load(&cfg, p, NULL, 0, err, sizeof(err));
		unlink(p);
		CHECK_EQ(ret == 0, cases[i].ok);
		if (ret == 0 && cases[i].ok)
			/* timer_ns: after the three counts in rp_ibcc.c's key struct */
			CHECK_EQ(*(const uint64_t *)(cfg.law_cfg + 24), cases[i].timer_ns);
		if ((ret == 0) != cases[i].ok)
			printf("    %s-> %d %s\n", cases[i].text, ret, err);
	}
	/* A table from a file, with comments. */
	CHECK_EQ(vt_conf_file(cct, "# shift 0\n0 1 2\n0x4003 # shift 1\n"), 0);
	snprintf(text, sizeof(text), "cct = @%s\nccti_limit = 3\n", cct);
	{
		char conf[512];
		struct hdt t;

		snprintf(conf, sizeof(conf), "[law]\nlaw = ibcc\nccti_timer = 10s\n"
			 "ccti_increase = 3\n%s", text);
		hdt_create(&t, conf);
		ib_host(&t, B, -1, 100);
		hdt_run(&t, 1000000);
		ib_cnp(&t, B, 1, 1);
		hd_pass(t.h);
		CHECK_EQ(ib_law(&t, 1, "cct_entry"), 0x4003);
		CHECK_EQ(ib_law(&t, 1, "rate_bps"), (long long)(LINK / 2.5));
		hdt_destroy(&t);
	}
	unlink(cct);
}

int main(void)
{
	log_set_level(LOG_LVL_WARN);
	RUN(test_ibcc_cct_rate);
	RUN(test_ibcc_becns);
	RUN(test_ibcc_lockstep);
	RUN(test_ibcc_timer_per_priority);
	RUN(test_ibcc_keys);
	return check_summary();
}
