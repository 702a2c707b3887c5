// SPDX-License-Identifier: BSD-2-Clause
/*
 * Path Rate Control (hostd/rp_prc.c) and the L2CI egress (hostd/np_l2ci.c)
 * in hostd's core, in virtual time (hdt.h), and the controller's step
 * (hostd/rp_prc.h) against its design. Pinned here:
 *  - a new path's DISCOVER leaves ahead of its first data frame, at PCP 7,
 *    with hops 0 and our link rate; the echo makes the path active at the
 *    path speed, with its hops and RTT; no echo after discover_tries tries
 *    leaves the path at its static rate (no-l2ci);
 *  - one controller step: Fb = (T - L) - w (L - L'), the increase and
 *    the capped cut, Rmin; and a fluid model of N paths through one
 *    bottleneck driven only by that step settles at the target level with
 *    equal shares and a busy link (the spec's equilibrium check 4);
 *  - a FEEDBACK for our path steps its rate; one from another address
 *    than the path's destination does not (forged);
 *  - a path that sends and hears no feedback steps as if at level 0;
 *  - with [law] persistent, a path that comes back resumes as it was;
 *  - PRC_ECN: CE on the ECN-capable packets of a backed-up path;
 *  - as a path's egress: a DISCOVER is echoed unchanged at once; FEEDBACK
 *    per fb_bytes, at least fb_min apart, at most fb_max apart while the
 *    path is active, none once it is idle.
 *
 * Each test's mutant in tests/unit/mutants.sh breaks the rule it checks.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdt.h"
#include "json.h"
#include "log.h"
#include "../../hostd/rp_prc.h"

#define PRC_CONF "granularity = dst\ntag = yes\n[law]\nlaw = prc\n"

/* Our flow toward host id dst, or NULL. */
static struct flow *prc_flow(struct hdt *t, int dst)
{
	uint8_t mac[6];

	vt_mac(mac, (uint8_t)dst);
	for (uint32_t id = 0; id < 64; id++) {
		struct flow *f = flow_by_id(t->h->flows, (uint16_t)id);

		if (f && f->key.type == FLOW_KEY_DST && !memcmp(f->key.mac, mac, 6))
			return f;
	}
	return NULL;
}

/* A value of the law's describe of f: a number, or the state as 1
 * discovering, 2 active, 3 no-l2ci; -1 if absent. */
static double prc_law(struct hdt *t, const struct flow *f, const char *key)
{
	static const char *const states[] = { "?", "discovering", "active", "no-l2ci" };
	char buf[32];
	const char *v = hdt_law_text(t, f, key, buf, sizeof(buf));

	if (!v)
		return -1;
	for (int i = 1; i < 4; i++)
		if (!strcmp(v, states[i]))
			return i;
	return strtod(v, NULL);
}

static uint64_t prc_rate(struct hdt *t, const struct flow *f)
{
	return f ? rp_current(t->h, f)->rate_bps : 0;
}

/* An echo of our DISCOVER (its body as sent, hops and speed as given)
 * from host id `from`. */
static void prc_echo(struct hdt *t, int from, const struct vt_frame *disc, uint8_t hops,
		     uint64_t bps)
{
	struct wire_discover d;
	uint8_t buf[128], me[6], src[6];
	size_t blen;
	const uint8_t *body = hdt_body(disc, &blen);

	CHECK_EQ(wire_parse_discover(body, blen, &d), 0);
	d.hops = hops;
	d.path_bps = bps;
	vt_mac(me, ME);
	vt_mac(src, (uint8_t)from);
	hdt_up_raw(t, buf, wire_build_discover(buf, sizeof(buf), me, src,
					       L2CC_CTRL_DISCOVER_ECHO, &d));
}

/* A FEEDBACK from host `from`, its level set by a port of speed_mbps (0:
 * not given). */
static void prc_feedback_speed(struct hdt *t, int from, uint16_t flow, uint32_t seq,
			       uint16_t level, uint16_t speed_mbps)
{
	struct wire_feedback fb = { .flow = flow, .seq = seq, .level = level, .hop = 3,
				    .max_hop = 2, .speed_mbps = speed_mbps };
	uint8_t buf[128], me[6], src[6];

	vt_mac(me, ME);
	vt_mac(src, (uint8_t)from);
	hdt_up_raw(t, buf, wire_build_feedback(buf, sizeof(buf), me, src, &fb));
}

static void prc_feedback(struct hdt *t, int from, uint16_t flow, uint32_t seq, uint16_t level)
{
	prc_feedback_speed(t, from, flow, seq, level, 0);
}

/* The index in the log of the first frame on the uplink of ethertype et. */
static int prc_first(struct hdt *t, uint16_t et)
{
	for (uint32_t i = 0; i < t->k.n; i++)
		if (t->k.log[i].port == P_UP && vt_ethertype(&t->k.log[i]) == et)
			return (int)i;
	return -1;
}

static void test_prc_discover(void)
{
	const struct vt_frame *disc = NULL;
	const uint8_t *body;
	struct wire_discover d;
	struct eth_info ei;
	struct hdt t;
	struct flow *f;
	size_t blen;

	hdt_create(&t, PRC_CONF);
	hdt_host(&t, B, 1000);
	hdt_run(&t, 1000000);
	f = prc_flow(&t, B);
	CHECK(f != NULL);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, &disc), 1);
	/* Ahead of the path's first frame, at L2CI's priority. */
	CHECK(prc_first(&t, L2CC_ETH_P_CTRL) >= 0);
	CHECK(prc_first(&t, L2CC_ETH_P_CTRL) < prc_first(&t, L2CC_ETH_P_DATA_TAG));
	CHECK_EQ(wire_parse_eth(disc->data, disc->len, &ei), 0);
	CHECK_EQ(ei.prio, L2CC_L2CI_PCP);
	body = hdt_body(disc, &blen);
	CHECK_EQ(wire_parse_discover(body, blen, &d), 0);
	CHECK_EQ(d.flow, f->id);
	CHECK_EQ(d.hops, 0);
	CHECK_EQ(d.path_bps, 100000000);
	CHECK_EQ(prc_law(&t, f, "state"), 1);
	CHECK_EQ(prc_rate(&t, f), 100000000);

	/* 3 hops, 10M, 2 ms later: active at 10M. */
	hdt_set(&t, 3000000);
	prc_echo(&t, B, disc, 3, 10000000);
	CHECK_EQ(t.h->st.echo_rx, 1);
	CHECK_EQ(prc_law(&t, f, "state"), 2);
	CHECK_EQ(prc_law(&t, f, "hops"), 3);
	CHECK_EQ(prc_law(&t, f, "path_bps"), 10000000);
	CHECK(fabs(prc_law(&t, f, "min_rtt_us") - 3000) < 1);
	CHECK_EQ(prc_rate(&t, f), 10000000);
	/* No second DISCOVER for a path that answered. */
	hdt_run(&t, 500000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, NULL), 1);
	hdt_destroy(&t);
}

static void test_prc_no_l2ci(void)
{
	struct hdt t;
	struct flow *f;

	hdt_create(&t, PRC_CONF "rate = 7M\n");
	hdt_host(&t, B, 1000);
	hdt_run(&t, 1000000);
	f = prc_flow(&t, B);
	CHECK_EQ(prc_law(&t, f, "state"), 1);
	hdt_run(&t, 120000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, NULL), 3);
	CHECK_EQ(prc_law(&t, f, "state"), 1);
	hdt_run(&t, 160000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, NULL), 3);
	CHECK_EQ(prc_law(&t, f, "state"), 3);
	CHECK_EQ(prc_rate(&t, f), 7000000);
	hdt_destroy(&t);
}

/* One step, by hand: T 25, w 3, Gi 0.05, Gd 0.5, Dmax 0.5, Rmin path/256. */
static void test_prc_step(void)
{
	const struct prc_law_cfg k = { .target = 25, .w = 3, .gi = 0.05, .gd = 0.5, .dmax = 0.5,
				       .rmin_div = 256 };
	const uint64_t P = 100000000;

	/* L = L' = 10: Fb = 15, R += 0.05 * 0.15 * P = 0.75M */
	CHECK_EQ(prc_step(&k, 50000000, P, P, 10, 10, 0), 50750000);
	/* L = 10 falling from 20: Fb = 15 + 30 = 45: R += 2.25M */
	CHECK_EQ(prc_step(&k, 50000000, P, P, 10, 20, 0), 52250000);
	/* capped at the path speed */
	CHECK_EQ(prc_step(&k, P - 1, P, P, 0, 0, 0), P);
	/* L = L' = 45: Fb = -20, cut 10 % */
	CHECK_EQ(prc_step(&k, 50000000, P, P, 45, 45, 0), 45000000);
	/* L = 45 rising from 35: Fb = -20 - 30 = -50, cut 25 % */
	CHECK_EQ(prc_step(&k, 40000000, P, P, 45, 35, 0), 30000000);
	/* a cut of more than Dmax is Dmax */
	CHECK_EQ(prc_step(&k, 40000000, P, P, 300, 100, 0), 20000000);
	/* never below Rmin */
	CHECK_EQ(prc_step(&k, 400000, P, P, 300, 100, 0), P / 256);
	/* at the target and still: nothing changes */
	CHECK_EQ(prc_step(&k, 12345678, P, P, 25, 25, 0), 12345678);
	/* The increase is in units of U whatever the path's speed: a 10M
	 * path climbs as a 100M one does (to its own speed at most). */
	CHECK_EQ(prc_step(&k, 1000000, P / 10, P, 10, 10, 0), 1750000);
	CHECK_EQ(prc_step(&k, 9900000, P / 10, P, 10, 10, 0), P / 10);

	/* The floor terms: ai below the target, md above it. */
	{
		struct prc_law_cfg k2 = k;

		k2.ai = 0.002;
		k2.md = 0.01;
		CHECK_EQ(prc_step(&k2, 50000000, P, P, 10, 10, 0), 50950000);
		CHECK_EQ(prc_step(&k2, 50000000, P, P, 45, 45, 0), 44500000);
		CHECK_EQ(prc_step(&k2, 12345678, P, P, 25, 25, 0), 12345678);
		/* dt = 3 tau: three steps' worth, and the D term per tau
		 * (L 10 from 40 over 3 tau: Fb = 15 + 3 * 30 / 3 = 45, so
		 * 3 * (0.05 * 0.45 + 0.002) of the path). */
		k2.tau = 1000000;
		CHECK_EQ(prc_step(&k2, 50000000, P, P, 10, 10, 3000000), 52850000);
		CHECK_EQ(prc_step(&k2, 50000000, P, P, 10, 40, 3000000), 57350000);
		/* ... but never more than PRC_S_MAX of them */
		CHECK_EQ(prc_step(&k2, 50000000, P, P, 10, 10, 100000000),
			 prc_step(&k2, 50000000, P, P, 10, 10, 10000000));
	}
}

/*
 * The step response of the design, in a fluid model: n paths of speed C
 * into one bottleneck of rate C with a buffer B; each path hears a
 * FEEDBACK per fb_bytes of its data, carrying the level as it was one
 * feedback delay (an RTT) earlier. Path i joins at i * 200 ms at full
 * speed (the echo's R = path speed), so the late ones must win their share
 * from the early ones; over the last second the level's mean must be
 * within T +- T/2, utilisation >= 95 % and Jain's index >= 0.95.
 */
static double AI = 0.002, GD = 0.5, W = 3, GI = 0.05, MD = 0.01, TAU = 1e6;
static FILE *TRACE;             /* --trace: the model's time series as CSV */

static void prc_model(int n, double target, double *mean_level, double *util, double *jain)
{
	long step = 0;

	const struct prc_law_cfg k = { .target = target, .w = W, .gi = GI, .gd = GD, .ai = AI,
				       .md = MD, .tau = (uint64_t)TAU,
				       .dmax = 0.5, .rmin_div = 256, .fb_bytes = 8192 };
	const double C = 10e6, B = 100e3, dt = 10e-6, T = 5.0;
	enum { HIST = 100 };                    /* the feedback delay, 1 ms, in steps of dt */
	double q = 0, lvl[HIST] = { 0 }, sent[16] = { 0 }, acc[16] = { 0 };
	double out = 0, lsum = 0, cnt = 0, prev[16] = { 0 }, seen = 0, last[16] = { 0 };
	uint64_t r[16];
	int h = 0;

	for (int i = 0; i < n; i++)
		r[i] = (uint64_t)C;
	for (double t = 0; t < T; t += dt) {
		double in = 0;

		for (int i = 0; i < n; i++) {
			double b = t >= i * 0.2 ? (double)r[i] / 8 * dt : 0;

			in += b;
			acc[i] += b;
			if (t >= T - 1)
				sent[i] += b;
		}
		q += in;
		out = q < C / 8 * dt ? q : C / 8 * dt;
		q -= out;
		lvl[h] = q / B * 100;
		h = (h + 1) % HIST;
		seen = lvl[h];                  /* the oldest: one delay ago */
		for (int i = 0; i < n; i++) {
			/* the egress: per fb_bytes, or fb_max (5 ms) of data */
			if (t < i * 0.2 || (acc[i] < k.fb_bytes && t - last[i] < 5e-3))
				continue;
			acc[i] = 0;
			r[i] = prc_step(&k, r[i], (uint64_t)C, (uint64_t)C, seen, prev[i],
					(uint64_t)((t - last[i]) * 1e9));
			prev[i] = seen;
			last[i] = t;
		}
		if (TRACE && step++ % 100 == 0) {
			fprintf(TRACE, "%.4f,%.3f", t, q / B * 100);
			for (int i = 0; i < n; i++)
				fprintf(TRACE, ",%.0f", t >= i * 0.2 ? (double)r[i] : 0.0);
			fprintf(TRACE, "\n");
		}
		if (t >= T - 1) {
			lsum += q / B * 100;
			cnt++;
			*util += out;
		}
	}
	*mean_level = lsum / cnt;
	*util = *util / (C / 8 * 1.0);
	{
		double s = 0, s2 = 0;

		for (int i = 0; i < n; i++) {
			s += sent[i];
			s2 += sent[i] * sent[i];
		}
		*jain = s * s / (n * s2);
	}
}

static void test_prc_step_response(void)
{
	static const int ns[] = { 2, 4, 8 };
	static const double targets[] = { 10, 25, 50 };

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(targets) / sizeof(targets[0]); b++) {
			double lvl = 0, util = 0, jain = 0, T = targets[b];

			prc_model(ns[a], T, &lvl, &util, &jain);
			printf("    n %d T %2.0f: level %.1f %%, util %.3f, Jain %.3f\n", ns[a], T,
			       lvl, util, jain);
			CHECK(lvl >= T / 2 && lvl <= T * 1.5);
			CHECK(util >= 0.95);
			CHECK(jain >= 0.95);
		}
}

/* Our path to B, discovered: 2 hops, 50M. */
static struct flow *prc_active(struct hdt *t)
{
	const struct vt_frame *disc = NULL;

	hdt_host(t, B, 1000);
	hdt_run(t, 1000000);
	CHECK_EQ(hdt_ctrl(t, 0, L2CC_CTRL_DISCOVER, &disc), 1);
	if (disc)
		prc_echo(t, B, disc, 2, 50000000);
	return prc_flow(t, B);
}

static void test_prc_feedback(void)
{
	uint64_t r0, r1;
	struct hdt t;
	struct flow *f;

	hdt_create(&t, PRC_CONF);
	f = prc_active(&t);
	if (!f)
		goto out;
	r0 = prc_rate(&t, f);
	CHECK_EQ(r0, 50000000);
	/* 45 % where the target is 25: the first cut is Dmax, 50 % (Fb =
	 * -20 - 3 * 45, since the level before it was 0); the next, at a
	 * steady 45 %, 10 % + md 1 %. */
	prc_feedback(&t, B, f->id, 1, 4500);
	r1 = prc_rate(&t, f);
	CHECK_EQ(r1, r0 / 2);
	CHECK_EQ(prc_law(&t, f, "level_hop"), 2);
	prc_feedback(&t, B, f->id, 2, 4500);
	CHECK_EQ(prc_rate(&t, f), r1 / 100 * 89);
	/* The same again (seq 2 repeated) is not taken twice. */
	prc_feedback(&t, B, f->id, 2, 4500);
	CHECK_EQ(prc_rate(&t, f), r1 / 100 * 89);
	CHECK_EQ(prc_law(&t, f, "feedback"), 2);
	/* From C, naming our path to B: forged, ignored and counted. */
	prc_feedback(&t, C, f->id, 3, 60000);
	CHECK_EQ(t.h->st.path_msg_unknown, 1);
	CHECK_EQ(prc_rate(&t, f), r1 / 100 * 89);
	CHECK_EQ(t.h->st.feedback_rx, 3);
out:
	hdt_destroy(&t);
}

/* The increase is in units of the speed of the port that set the level
 * (the FEEDBACK's speed), so paths through one congested port climb alike
 * whatever their own links (l2ci-pathspeed: 50M hosts got 0.44 of the 100M
 * hosts' rate when each climbed in units of its own link); a FEEDBACK
 * without a speed leaves our link rate (100M). At a steady 0 % (target 25:
 * Fb = 25) a step adds (Gi 0.05 x 0.25 + ai 0.002) U: 1.45M at 100M, 145k
 * at 10M. */
static void test_prc_feedback_unit(void)
{
	uint64_t r;
	struct hdt t;
	struct flow *f;

	hdt_create(&t, PRC_CONF);
	f = prc_active(&t);
	if (!f)
		goto out;
	prc_feedback(&t, B, f->id, 1, 4500);            /* cut to 25M, level 45 % */
	prc_feedback(&t, B, f->id, 2, 0);               /* level 0 after 45 (D term) */
	r = prc_rate(&t, f);
	prc_feedback_speed(&t, B, f->id, 3, 0, 0);
	CHECK_EQ(prc_rate(&t, f) - r, 1450000);
	CHECK_EQ(prc_law(&t, f, "unit_bps"), 100000000);
	r = prc_rate(&t, f);
	prc_feedback_speed(&t, B, f->id, 4, 0, 10);
	CHECK_EQ(prc_rate(&t, f) - r, 145000);
	CHECK_EQ(prc_law(&t, f, "unit_bps"), 10000000);
	r = prc_rate(&t, f);
	prc_feedback_speed(&t, B, f->id, 5, 0, 1000);
	CHECK_EQ(prc_rate(&t, f) - r, 14500000);
out:
	hdt_destroy(&t);
}

/* Sending, and no feedback for max(4 gaps, 8 min RTTs): level 0 steps. */
static void test_prc_feedback_timeout(void)
{
	uint64_t r;
	struct hdt t;
	struct flow *f;

	hdt_create(&t, PRC_CONF);
	f = prc_active(&t);
	if (!f)
		goto out;
	prc_feedback(&t, B, f->id, 1, 20000);
	r = prc_rate(&t, f);
	CHECK(r < 50000000);
	/* Keep sending for 100 ms without feedback. */
	for (int i = 0; i < 100; i++) {
		hdt_host(&t, B, 1000);
		hdt_run(&t, 1000000 + (uint64_t)i * 1000000);
	}
	CHECK(prc_law(&t, f, "feedback_timeouts") >= 1);
	CHECK(prc_rate(&t, f) > r);
	/* Idle: no more steps. */
	{
		double n = prc_law(&t, f, "feedback_timeouts");

		hdt_run(&t, 2000000000);
		CHECK(prc_law(&t, f, "feedback_timeouts") <= n + 1);
	}
out:
	hdt_destroy(&t);
}

/* [law] persistent: a path whose flow expired and comes back resumes
 * active at its rate, with no second DISCOVER. */
static void test_prc_persistent(void)
{
	struct hdt t;
	struct flow *f;
	uint64_t r;

	hdt_create(&t, "granularity = dst\ntag = yes\nflow_idle = 100ms\n[law]\nlaw = prc\n"
		   "persistent = yes\n");
	f = prc_active(&t);
	if (!f)
		goto out;
	prc_feedback(&t, B, f->id, 1, 6000);
	r = prc_rate(&t, f);
	CHECK(r < 50000000);
	hdt_run(&t, 1000000000);
	CHECK(prc_flow(&t, B) == NULL);         /* expired */
	CHECK_EQ(t.h->st.law_saves, 1);
	hdt_host(&t, B, 1000);
	hdt_run(&t, 1001000000);
	f = prc_flow(&t, B);
	CHECK(f != NULL);
	CHECK_EQ(t.h->st.law_resumes, 1);
	CHECK_EQ(prc_law(&t, f, "state"), 2);
	CHECK_EQ(prc_rate(&t, f), r);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, NULL), 1);
out:
	hdt_destroy(&t);
}

/* The host sends an IPv4 frame of len bytes to B, ECN-capable (ECT(0)) or not. */
static void prc_host_ip(struct hdt *t, uint32_t len, bool ect)
{
	struct vt_eth e = { .dst = B, .src = ME, .prio = -1, .len = len };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);
	uint8_t *p = umem_data(t->u, addr);

	p[14] = 0x45;
	p[15] = ect ? 0x02 : 0x00;
	hd_rx_host_frame(t->h, addr, l);
}

/* PRC_ECN: with ecn_queue, the ECN-capable packets that leave while the
 * path's queue holds more than it carry CE; the others, and all of them
 * without the key, leave as they came. */
static void test_prc_ecn(void)
{
	struct hdt t;
	struct flow *f;
	int ce = 0, ect = 0;

	hdt_create(&t, "granularity = dst\ntag = yes\n[law]\nlaw = prc\necn_queue = 5000\n");
	f = prc_active(&t);
	if (!f)
		goto out;
	/* 10M: 20 frames of 1000 bytes queue up behind the pacer. */
	prc_feedback(&t, B, f->id, 1, 60000);
	prc_feedback(&t, B, f->id, 2, 60000);
	t.k.n = 0;
	for (int i = 0; i < 20; i++)
		prc_host_ip(&t, 1000, i % 2 == 0);
	hdt_run(&t, 3000000000ull);
	for (uint32_t i = 0; i < t.k.n; i++) {
		const struct vt_frame *fr = &t.k.log[i];
		int off;

		if (fr->port != P_UP || (off = wire_tag_find(fr->data, fr->len)) < 0)
			continue;
		off += L2CC_TAG_LEN;            /* the IPv4 header */
		ect += (fr->data[off + 1] & 3) != 0;
		ce += (fr->data[off + 1] & 3) == 3;
	}
	printf("    %d ECN-capable frames left, %d with CE; ce_set %llu\n", ect, ce,
	       (unsigned long long)t.h->st.ce_set);
	CHECK_EQ(ect, 10);
	/* The queue is above 5000 bytes until its last five frames. */
	CHECK(ce >= 6 && ce <= 9);
	CHECK_EQ((uint64_t)ce, t.h->st.ce_set);
out:
	hdt_destroy(&t);
}

/* The FEEDBACKs sent toward the uplink so far, in order, and when (at,
 * when not NULL). */
static int prc_feedbacks(struct hdt *t, struct wire_feedback *out, uint64_t *at, int max)
{
	int n = 0;

	for (uint32_t i = 0; i < t->k.n && n < max; i++) {
		const struct vt_frame *fr = &t->k.log[i];
		const uint8_t *body;
		struct eth_info e;
		size_t blen;

		if (fr->port != P_UP || wire_parse_eth(fr->data, fr->len, &e) ||
		    e.ethertype != L2CC_ETH_P_CTRL ||
		    wire_parse_ctrl(fr->data + e.hlen, fr->len - e.hlen, &body, &blen) !=
			    L2CC_CTRL_FEEDBACK)
			continue;
		if (wire_parse_feedback(body, blen, &out[n]))
			continue;
		if (at)
			at[n] = fr->t;
		n++;
	}
	return n;
}

/* As the egress of B's path to us. */
static void test_prc_egress(void)
{
	const struct wire_discover d = { .flow = 9, .hops = 2, .seq = 4, .path_bps = 10000000,
					 .t_tx = 555 };
	const struct vt_frame *last = NULL;
	const uint8_t *body;
	struct wire_discover got;
	struct wire_feedback fb;
	uint8_t buf[128], me[6], b[6];
	struct eth_info ei;
	struct hdt t;
	size_t blen;
	int n;

	hdt_create(&t, PRC_CONF);
	vt_mac(me, ME);
	vt_mac(b, B);
	/* DISCOVER from B: echoed at once, body unchanged. */
	hdt_up_raw(&t, buf, wire_build_discover(buf, sizeof(buf), me, b, L2CC_CTRL_DISCOVER, &d));
	hdt_run(&t, 0);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER_ECHO, &last), 1);
	body = hdt_body(last, &blen);
	CHECK_EQ(wire_parse_discover(body, blen, &got), 0);
	CHECK_EQ(got.flow, 9);
	CHECK_EQ(got.hops, 2);
	CHECK_EQ(got.path_bps, 10000000);
	CHECK_EQ(got.t_tx, 555);
	CHECK_EQ(wire_parse_eth(last->data, last->len, &ei), 0);
	CHECK_MEM(ei.dst, b, 6);
	CHECK_EQ(ei.prio, L2CC_L2CI_PCP);

	/* B's data: the first frame gets a FEEDBACK, then 40 frames at
	 * once (20 KB) only one more once fb_min has passed. */
	for (int i = 0; i < 41; i++)
		CHECK(hdt_up_data(&t, B, 9, (uint32_t)i, false));
	hdt_run(&t, 0);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, &last), 1);
	body = hdt_body(last, &blen);
	CHECK_EQ(wire_parse_feedback(body, blen, &fb), 0);
	CHECK_EQ(fb.flow, 9);
	CHECK_EQ(fb.hop, 0);
	CHECK_EQ(fb.max_hop, 0);
	CHECK_EQ(fb.level, 0);
	CHECK_MEM(fb.setter, me, 6);
	hdt_set(&t, 200000);
	CHECK(hdt_up_data(&t, B, 9, 101, false));
	hdt_run(&t, 200000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, NULL), 2);
	/* 8 KB more at 200 us apart: 16 frames of 500 bytes (+ tag) reach
	 * fb_bytes on the 16th or 17th. */
	n = 0;
	for (int i = 0; i < 17; i++) {
		hdt_set(&t, 400000 + (uint64_t)i * 200000);
		CHECK(hdt_up_data(&t, B, 9, 102 + (uint32_t)i, false));
		hdt_run(&t, 400000 + (uint64_t)i * 200000);
		if (hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, NULL) == 3 && !n)
			n = i + 1;
	}
	CHECK(n >= 15 && n <= 17);
	/* Active (data within 20 fb_max), the path hears at least every
	 * fb_max without data; idle, nothing more. */
	hdt_run(&t, 80000000);
	{
		static struct wire_feedback fbs_[64];
		static uint64_t at[64];
		uint64_t gap = 0;
		int fbs = prc_feedbacks(&t, fbs_, at, 64);

		for (int i = 1; i < fbs; i++)
			if (at[i] - at[i - 1] > gap)
				gap = at[i] - at[i - 1];
		printf("    %d feedbacks to 80 ms, largest gap %.2f ms\n", fbs, gap / 1e6);
		CHECK(gap <= 5000000);
		CHECK(fbs >= 3 + 75 / 5);
	}
	hdt_run(&t, 200000000);
	n = hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, NULL);
	hdt_run(&t, 400000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, NULL), n);
	CHECK_EQ(t.h->st.feedback_tx, (uint64_t)n);
	/* Data again after the quiet: answered at once. */
	hdt_set(&t, 500000000);
	CHECK(hdt_up_data(&t, B, 9, 300, false));
	hdt_run(&t, 500000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_FEEDBACK, NULL), n + 1);
	hdt_destroy(&t);
}

/*
 * The egress's own level is its receiver's backlog (McAlpine §5: the
 * level starts at the egress's receive buffer fill): frames handed to the
 * host port in earlier passes and not yet taken, over what it holds;
 * 100 % while frames wait in the uplink's ring for it. A host that does
 * not keep up is a bottleneck the source must see, as a switch's.
 */
static void test_prc_egress_backlog(void)
{
	struct wire_feedback fb[8];
	struct hdt t;
	int n;

	hdt_create(&t, PRC_CONF);
	t.k.cap[P_HOST] = 4;
	/* Idle host port: level 0 on the path's first FEEDBACK. */
	CHECK(hdt_up_data(&t, B, 9, 0, false));
	hdt_run(&t, 0);
	/* Frames this pass put and has not flushed are on their way, not
	 * waiting: frame 4's FEEDBACK (fb_max after frame 1's) says 0 with
	 * three of them put. */
	hdt_set(&t, 10000000);
	for (int i = 1; i <= 3; i++)
		CHECK(hdt_up_data(&t, B, 9, (uint32_t)i, false));
	hdt_set(&t, 20000000);
	CHECK(hdt_up_data(&t, B, 9, 4, false));
	hdt_run(&t, 20000000);
	/* The kernel has not taken three frames flushed before: 3 of 4. */
	t.k.queued[P_HOST] = 3;
	hdt_set(&t, 30000000);
	CHECK(hdt_up_data(&t, B, 9, 5, false));
	hdt_run(&t, 30000000);
	n = prc_feedbacks(&t, fb, NULL, 8);
	CHECK_EQ(n, 4);
	for (int i = 0; i < n && i < 8; i++)
		CHECK_EQ(fb[i].level, i == 3 ? 7500 : 0);
	/* Full: the next frame waits in the uplink's ring; 100 %. */
	t.k.queued[P_HOST] = 4;
	CHECK(!hdt_up_data(&t, B, 9, 6, false));
	CHECK_EQ(np_host_backlog(t.h), 10000);
	hdt_destroy(&t);
}

/*
 * Priorities inside a path (McAlpine 2005 §8: the video "cleanly stole
 * bandwidth" from the DB traffic): the path paced at 1M, a backlog of
 * 1500-byte DB frames (priority 0) leaving a frame every 12.4 ms; a
 * 100-byte video frame at priority 5 that arrives just after one of them
 * left goes within its own gap (~1 ms), not after the DB frame's 12 ms;
 * and the DB frames keep the path's rate.
 */
static void prc_host_prio(struct hdt *t, uint32_t len, int prio)
{
	struct vt_eth e = { .dst = B, .src = ME, .prio = prio, .len = len };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);

	hd_rx_host_frame(t->h, addr, l);
}

static void test_prc_priority_own_gap(void)
{
	const struct vt_frame *disc = NULL;
	uint64_t now = 0, t_in = 0, t_video = 0, t_db0 = 0, t_dbn = 0, bits = 0;
	uint32_t seen = 0, db = 0;
	struct hdt t;
	struct flow *f;

	hdt_create(&t, PRC_CONF);
	hdt_host(&t, B, 1000);
	hdt_run(&t, 1000000);
	CHECK_EQ(hdt_ctrl(&t, 0, L2CC_CTRL_DISCOVER, &disc), 1);
	if (!disc)
		goto out;
	prc_echo(&t, B, disc, 2, 1000000);
	f = prc_flow(&t, B);
	CHECK(f != NULL);
	CHECK_EQ(prc_rate(&t, f), 1000000);
	t.k.n = 0;
	for (int i = 0; i < 40; i++)
		prc_host_prio(&t, 1500, -1);
	/* Past the burst, step until a DB frame has just left, and the video
	 * comes right behind it. */
	now = 100000000;
	hdt_run(&t, now);
	seen = t.k.n;
	while (t.k.n == seen && now < 200000000) {
		now += 50000;
		hdt_run(&t, now);
	}
	t_in = t.h->now;
	prc_host_prio(&t, 100, 5);
	hdt_run(&t, 600000000);
	for (uint32_t i = 0; i < t.k.n; i++) {
		const struct vt_frame *fr = &t.k.log[i];

		if (fr->port != P_UP || vt_ethertype(fr) == L2CC_ETH_P_CTRL)
			continue;
		if (fr->len < 400) {
			t_video = fr->t;
			continue;
		}
		if (!db++)
			t_db0 = fr->t;
		else            /* what the pacer charged after the first one */
			bits += (fr->len + (uint64_t)t.h->cfg->wire_overhead) * 8;
		t_dbn = fr->t;
	}
	printf("    video left %.2f ms after it came (a DB frame's gap is 12.4 ms); "
	       "%u DB frames at %.3f Mbit/s\n", (double)(t_video - t_in) / 1e6, db,
	       t_dbn > t_db0 ? (double)bits * 1e3 / (double)(t_dbn - t_db0) : 0.0);
	CHECK(t_video > t_in);
	CHECK(t_video - t_in < 2000000);
	/* The DB frames at the path's 1M, within 2 % (the video's 100 bytes
	 * ride on it): neither a gap skipped nor one waited twice. */
	CHECK(db > 30);
	CHECK(t_dbn > t_db0 && (double)bits * 1e3 / (double)(t_dbn - t_db0) < 1.02);
	CHECK(t_dbn > t_db0 && (double)bits * 1e3 / (double)(t_dbn - t_db0) > 0.98);
out:
	hdt_destroy(&t);
}

/*
 * test_hostd_prc --trace N T [ai md w gi gd]: the fluid model's run as CSV
 * (t, level %, the N rates) on stdout, the defaults' gains unless given:
 * what docs/l2ci.md's step response plot is drawn from.
 */
int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "--trace")) {
		double lvl = 0, util = 0, jain = 0;

		if (argc == 9) {
			AI = atof(argv[4]);
			MD = atof(argv[5]);
			W = atof(argv[6]);
			GI = atof(argv[7]);
			GD = atof(argv[8]);
		}
		TRACE = stdout;
		prc_model(atoi(argv[2]), atof(argv[3]), &lvl, &util, &jain);
		fprintf(stderr, "level %.1f %%, util %.3f, Jain %.3f\n", lvl, util, jain);
		return 0;
	}
	log_set_level(LOG_LVL_WARN);
	RUN(test_prc_discover);
	RUN(test_prc_no_l2ci);
	RUN(test_prc_step);
	RUN(test_prc_step_response);
	RUN(test_prc_feedback);
	RUN(test_prc_feedback_unit);
	RUN(test_prc_feedback_timeout);
	RUN(test_prc_persistent);
	RUN(test_prc_ecn);
	RUN(test_prc_egress);
	RUN(test_prc_egress_backlog);
	RUN(test_prc_priority_own_gap);
	return check_summary();
}
