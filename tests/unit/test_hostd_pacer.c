// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for hostd's per-flow pacer (hostd/pacer.c), all in virtual
 * time: the event loop is simulated by jumping `now` to pacer_deadline()
 * (plus a jittered lateness), and the uplink is a switchd wire clock.
 * Randomised tests use a fixed-seed PRNG so a failure reproduces exactly.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
/* Relative paths: the Makefile's include path has no -Ihostd. */
#include "../../hostd/pacer.h"
#include "wclock.h"

#define SLOT 1000ull            /* 1 us wheel granularity unless a test says otherwise */
#define OVH 24u                 /* preamble+SFD+FCS+IFG, as on the uplink */


/* ---- Exact clocks -------------------------------------------------------- */

static void test_pacer_never_early(void)
{
	struct pacer *p = pacer_create(4, 1, OVH);      /* 1 ns slots: exact times */
	uint32_t f = 99;

	CHECK(p != NULL);
	pacer_set_rate(p, 1, 1000000000ull, 0);
	CHECK_EQ(pacer_deadline(p), PACER_NEVER);
	CHECK_EQ(pacer_wake(p, 1, 1000, 1500), 0);
	/* After idle: the first frame may go at once. */
	CHECK_EQ(pacer_deadline(p), 1000);
	CHECK_EQ(pacer_next(p, 1000, &f), 1);
	CHECK_EQ(f, 1);
	CHECK_EQ(pacer_next(p, 1000, &f), 0);   /* in service, not listed twice */
	CHECK_EQ(pacer_done(p, 1, 1000, 1500, 1500), 0);
	/* 1524 B at 1 Gb/s is 12192 ns. */
	CHECK_EQ(pacer_eligible(p, 1), 1000 + 12192);
	CHECK_EQ(pacer_deadline(p), 1000 + 12192);
	CHECK_EQ(pacer_next(p, 1000 + 12191, &f), 0);
	CHECK_EQ(pacer_next(p, 1000 + 12192, &f), 1);
	CHECK_EQ(pacer_done(p, 1, 1000 + 12192, 1500, 0), 0);
	CHECK_EQ(pacer_done(p, 1, 1000 + 12192, 1500, 0), -EINVAL);   /* not in service */
	pacer_destroy(p);

	/* With 1 us slots the same flow is returned at the slot after, never before. */
	p = pacer_create(4, SLOT, OVH);
	pacer_set_rate(p, 2, 1000000000ull, 0);
	pacer_wake(p, 2, 1000, 1500);
	CHECK_EQ(pacer_next(p, 1000, &f), 1);
	pacer_done(p, 2, 1000, 1500, 1500);
	CHECK_EQ(pacer_next(p, 13191, &f), 0);
	CHECK_EQ(pacer_next(p, 13999, &f), 0);
	CHECK(pacer_deadline(p) >= 13192);
	CHECK_EQ(pacer_next(p, 14000, &f), 1);
	/* Served 808 ns late, yet the next gap runs from 13192, not 14000. */
	pacer_done(p, 2, 14000, 1500, 0);
	CHECK_EQ(pacer_eligible(p, 2), 13192 + 12192);
	/* A fractional remainder rounds the eligible time up: 64 B at 3 Gb/s is 234.67 ns. */
	pacer_set_rate(p, 3, 3000000000ull, 0);
	pacer_wake(p, 3, 100000, 64);
	CHECK_EQ(pacer_next(p, 100000, &f), 1);
	CHECK_EQ(f, 3);
	pacer_done(p, 3, 100000, 64, 64);
	CHECK_EQ(pacer_eligible(p, 3), 100000 + 235);
	pacer_destroy(p);
}

/*
 * IB IPD semantics: the gap is (1+ipd) x the frame's time at link rate, with
 * nothing rounded away. 10G, ipd 2, 64 B (88 on the wire): 3 x 70.4 ns per
 * frame; after 5 frames exactly 1056 ns, where a rate of 3333333333 bit/s
 * would already be 1 ns late and drift on.
 */
static void test_pacer_ipd_exact(void)
{
	struct pacer *p = pacer_create(2, 1, OVH);
	uint64_t t = 5000;
	uint32_t f;

	CHECK_EQ(pacer_set_ipd(p, 0, 2, 10000000000ull, 0), 0);
	CHECK_EQ(pacer_set_ipd(p, 0, 2, 0, 0), -EINVAL);
	CHECK_EQ(pacer_rate(p, 0), 3333333333ull);
	pacer_wake(p, 0, t, 64);
	for (int i = 0; i < 5; i++) {
		t = pacer_deadline(p);
		CHECK_EQ(pacer_next(p, t, &f), 1);
		pacer_done(p, 0, t, 64, 64);
	}
	CHECK_EQ(pacer_eligible(p, 0), 5000 + 1056);
	/* ipd 0 is the link rate: 1524 B at 1G is 12192 ns; ipd 7 is 8 times that. */
	pacer_remove(p, 0);
	pacer_set_ipd(p, 0, 7, 1000000000ull, 0);
	pacer_wake(p, 0, 100, 1500);
	CHECK_EQ(pacer_next(p, 100, &f), 1);
	pacer_done(p, 0, 100, 1500, 1500);
	CHECK_EQ(pacer_eligible(p, 0), 100 + 8 * 12192);
	pacer_destroy(p);
}

/* ---- Accuracy ------------------------------------------------------------ */

struct psim {
	uint64_t frames, bytes, t0, t_end;
	uint64_t early;         /* frames returned before their eligible time */
	uint64_t stuck;         /* deadline not in the future after draining */
	double max_excess;      /* bytes over rate*window + allowance; must be <= 0 */
};

/*
 * One backlogged flow paced at den/mult bit/s (den = rate, mult = 1; or
 * den = link, mult = 1+ipd), uplink unpaced. The event loop wakes at
 * pacer_deadline() plus up to `jitter` ns and sends everything it may.
 * Every window [t_j, t_k] between two sends must satisfy
 *   bytes(j..k) <= rate*(t_k - t_j + burst_ns + slot + 1) + frame,
 * a backlogged flow keeping at most burst + one slot of lateness (1 ns for
 * the rounded-up fraction); checked in O(1) memory with the running minimum
 * as in test_switch_units.c's wclock_sim, in 128-bit bit-ns.
 */
static void pacer_sim1(uint64_t den, uint64_t mult, uint32_t len, uint32_t burst,
		       uint64_t jitter, uint64_t seed, struct psim *s)
{
	const uint64_t wb = len + OVH;
	const __int128 G8 = 8000000000;
	struct pacer *p = pacer_create(16384, SLOT, OVH);
	uint64_t gap = wb * 8 * 1000000000ull * mult / den, t_min = 1000000000ull, now, cap;
	__int128 bsent = 0, min_y = 0, worst = 0;
	bool first = true;
	uint32_t f, flow = 12345;

	memset(s, 0, sizeof(*s));
	if (!p)
		return;
	if (mult == 1)
		pacer_set_rate(p, flow, den, 0);
	else
		pacer_set_ipd(p, flow, mult - 1, den, 0);
	pacer_set_burst(p, flow, burst);
	if (gap * 10100 > t_min)
		t_min = gap * 10100;
	/* A broken pacer that is always ready must fail, not hang the suite. */
	cap = 2 * (t_min / gap) + 100000;
	rng_seed(seed);
	now = 1000000 + rng_below(1000000);
	s->t0 = now;
	pacer_wake(p, flow, now, len);
	for (;;) {
		while (s->frames < cap && pacer_next(p, now, &f) == 1) {
			__int128 y = bsent * mult * G8 - (__int128)den * now, x;

			if (f != flow || pacer_eligible(p, f) > now)
				s->early++;
			if (first || y < min_y)
				min_y = y;
			first = false;
			bsent += wb;
			s->frames++;
			x = bsent * mult * G8 - (__int128)den * now;
			if (x - min_y > worst)
				worst = x - min_y;
			pacer_done(p, f, now, len, len);
		}
		if (now - s->t0 >= t_min || s->frames >= cap)
			break;
		if (pacer_deadline(p) <= now) {
			s->stuck++;
			break;
		}
		now = pacer_deadline(p) + rng_below(jitter + 1);
	}
	s->t_end = now;
	s->bytes = (uint64_t)bsent;
	s->max_excess = (double)(worst - (__int128)(burst + wb) * mult * G8
				 - (__int128)den * (SLOT + 1)) / 8e9 / (double)mult;
	pacer_destroy(p);
}

static void pacer_run1(uint64_t den, uint64_t mult, uint32_t len, uint32_t burst,
		       uint64_t jitter, uint64_t seed, bool check_rate)
{
	int fails0 = check_failed_now;
	double target = (double)den / (double)mult, got;
	struct psim s;

	pacer_sim1(den, mult, len, burst, jitter, seed, &s);
	got = (double)s.bytes * 8e9 / (double)(s.t_end - s.t0);
	CHECK_EQ(s.early, 0);
	CHECK_EQ(s.stuck, 0);
	CHECK(s.max_excess <= 0);
	if (check_rate) {
		CHECK(s.frames >= 10000);
		CHECK_NEAR(got / target, 1.0, 0.001);
	} else {
		CHECK(got <= target * 1.001);
	}
	if (check_failed_now != fails0)
		printf("    rate %.7g (den %" PRIu64 " mult %" PRIu64 ") len %u burst %u jitter %"
		       PRIu64 ": frames %" PRIu64 ", achieved %.7g bps, worst excess %.2f B\n",
		       target, den, mult, len, burst, jitter, s.frames, got, s.max_excess);
}

static void test_pacer_rate_accuracy(void)
{
	static const uint64_t rates[] = { 1000000ull, 10000000ull, 100000000ull,
					  1000000000ull, 10000000000ull };
	static const uint32_t lens[] = { 64, 512, 1500 };
	uint64_t seed = 300;

	for (size_t ri = 0; ri < 5; ri++)
		for (size_t li = 0; li < 3; li++) {
			uint64_t r = rates[ri];

			/* A punctual event loop: slot rounding alone must cost nothing. */
			pacer_run1(r, 1, lens[li], 0, 0, seed++, true);
			/* Woken up to 1 us late: a burst of 1.25 us covers it. */
			pacer_run1(r, 1, lens[li], (uint32_t)((r * 1250 / 1000000000 + 7) / 8), SLOT,
				   seed++, true);
			/* Woken up to 200 us late with a 250 us burst: no rate lost. */
			pacer_run1(r, 1, lens[li], (uint32_t)((r * 250 / 1000000 + 7) / 8), 200000,
				   seed++, true);
			/* No burst against 200 us jitter: rate is lost by design, never exceeded. */
			pacer_run1(r, 1, lens[li], 0, 200000, seed++, false);
		}
}

static void test_pacer_ipd_accuracy(void)
{
	static const uint32_t ipds[] = { 0, 1, 7, 255 };
	static const uint64_t links[] = { 1000000000ull, 10000000000ull };
	static const uint32_t lens[] = { 64, 1500 };
	uint64_t seed = 500;

	for (size_t ii = 0; ii < 4; ii++)
		for (size_t ki = 0; ki < 2; ki++)
			for (size_t li = 0; li < 2; li++) {
				uint64_t m = 1 + (uint64_t)ipds[ii];

				pacer_run1(links[ki], m, lens[li], 0, 0, seed++, true);
				/* 200 us of jitter and a 250 us burst at link/(1+ipd). */
				pacer_run1(links[ki], m, lens[li],
					   (uint32_t)((links[ki] / m * 250 / 1000000 + 7) / 8),
					   200000, seed++, true);
			}
}

/* ---- Many flows on a paced uplink ---------------------------------------- */

struct msim {
	uint64_t frames[16];
	uint64_t total, early, stuck, t_end;
	struct pacer_stats st;
};

/*
 * n flows, flow i at rates[i % nr] with frames of lens[i % nl], woken at a
 * random time in [0, 1 ms), each with a burst of burst_frames frames,
 * sharing an uplink wire clock at `link`. Runs
 * until t_end or max_frames; counts frames per flow (first 16 only; the
 * caller reads the rest through `count` if it gives one).
 */
static void pacer_simn(uint32_t n, const uint64_t *rates, size_t nr, const uint32_t *lens,
		       size_t nl, uint32_t burst_frames, uint64_t link, uint64_t t_end,
		       uint64_t max_frames, uint64_t seed, uint64_t *count, struct msim *s)
{
	struct pacer *p = pacer_create(n, SLOT, OVH);
	struct wclock up;
	uint64_t now = 0;
	uint32_t f;

	memset(s, 0, sizeof(*s));
	if (!p)
		return;
	wclock_init(&up, link, 0, OVH);
	rng_seed(seed);
	for (uint32_t i = 0; i < n; i++) {
		pacer_set_rate(p, i, rates[i % nr], 0);
		pacer_set_burst(p, i, burst_frames * (lens[i % nl] + OVH));
	}
	/* Wake in time order so `now` never goes backwards. */
	{
		uint64_t t = 0, step = 1000000 / n;

		for (uint32_t i = 0; i < n; i++) {
			t += rng_below(step + 1);
			pacer_wake(p, i, t, lens[i % nl]);
		}
		now = t;
	}
	for (;;) {
		uint64_t d;

		while (s->total < max_frames && wclock_ready(&up, now) &&
		       pacer_next(p, now, &f) == 1) {
			uint32_t len = lens[f % nl];

			if (rates[f % nr] && pacer_eligible(p, f) > now)
				s->early++;
			if (f < 16)
				s->frames[f]++;
			if (count)
				count[f]++;
			s->total++;
			wclock_charge(&up, len);
			pacer_done(p, f, now, len, len);
		}
		if (now >= t_end || s->total >= max_frames)
			break;
		d = pacer_deadline(p);
		if (!wclock_ready(&up, now)) {
			uint64_t w = wclock_next(&up) + (up.rem != 0);

			if (w > d || d == PACER_NEVER)
				d = w;
		}
		if (d <= now) {
			s->stuck++;
			break;
		}
		now = d;
	}
	s->t_end = now;
	pacer_get_stats(p, &s->st);
	pacer_destroy(p);
}

static void test_pacer_fair_bottleneck(void)
{
	static const uint64_t rates[] = { 1000000000ull };
	static const uint32_t lens[] = { 1500 };
	uint64_t count[100] = { 0 }, lo = UINT64_MAX, hi = 0;
	struct msim s;
	double mean;

	/* 100 flows of 1G on a 10G uplink: each should get 100M. */
	pacer_simn(100, rates, 1, lens, 1, 0, 10000000000ull, 101000000ull, UINT64_MAX, 7, count, &s);
	CHECK_EQ(s.early, 0);
	CHECK_EQ(s.stuck, 0);
	mean = (double)s.total / 100;
	for (int i = 0; i < 100; i++) {
		lo = count[i] < lo ? count[i] : lo;
		hi = count[i] > hi ? count[i] : hi;
	}
	CHECK(mean > 800);
	CHECK_NEAR(lo / mean, 1.0, 0.01);
	CHECK_NEAR(hi / mean, 1.0, 0.01);
	/* ...and the uplink is kept busy: 100 ms at 10G is 82021 frames of 1524 B. */
	CHECK_NEAR(s.total / 82021.0, 1.0, 0.02);
	if (check_failed_now)
		printf("    total %" PRIu64 " min %" PRIu64 " max %" PRIu64 "\n", s.total, lo, hi);
}

static void test_pacer_mixed_rates(void)
{
	static const uint64_t rates[] = { 1000000ull, 3000000ull, 10000000ull, 33000000ull,
					  100000000ull, 330000000ull, 1000000000ull, 2000000000ull };
	static const uint32_t lens[] = { 64, 64, 512, 512, 1500, 64, 1500, 1500 };
	const uint64_t t = 501000000ull;        /* 0.5 s after the last wake-up */
	struct msim s;

	/*
	 * 3.5G in all on a 10G uplink: every flow gets its own rate. A flow
	 * due while the wire carries another flow's frame is served late by
	 * more than a slot; a burst of two frames lets it keep that time
	 * (with none, the 330M flow of 64 B frames gets 8% less).
	 */
	pacer_simn(8, rates, 8, lens, 8, 2, 10000000000ull, t, UINT64_MAX, 11, NULL, &s);
	CHECK_EQ(s.early, 0);
	CHECK_EQ(s.stuck, 0);
	for (int i = 0; i < 8; i++) {
		double got = (double)s.frames[i] * (lens[i] + OVH) * 8e9 / 500000000.0;

		CHECK_NEAR(got / (double)rates[i], 1.0, 0.01);
		if (check_failed_now)
			printf("    flow %d: %.6g of %" PRIu64 " bps\n", i, got, rates[i]);
	}
}

/* ---- Flat cost ----------------------------------------------------------- */

static double ops_per_frame(uint32_t n, struct msim *s)
{
	/* n flows sharing 9G of a 10G uplink, 1500 B frames. */
	uint64_t rate = 9000000000ull / n;
	static const uint32_t lens[] = { 1500 };

	pacer_simn(n, &rate, 1, lens, 1, 0, 10000000000ull, UINT64_MAX, 200000 + 20ull * n, 13 + n,
		   NULL, s);
	return (double)(s->st.slots_visited + s->st.cascades) / (double)s->total;
}

static void test_pacer_flat_cost(void)
{
	struct msim s1, s100, s10k;
	double c1 = ops_per_frame(1, &s1), c100 = ops_per_frame(100, &s100),
	       c10k = ops_per_frame(10000, &s10k);

	CHECK_EQ(s1.early + s100.early + s10k.early, 0);
	CHECK_EQ(s1.stuck + s100.stuck + s10k.stuck, 0);
	/* The flows really were paced at 9G in all, not drained as fast as the wire. */
	CHECK_NEAR(s10k.total * 1524 * 8e9 / (double)s10k.t_end / 9e9, 1.0, 0.02);
	CHECK(c1 > 0);
	CHECK(c100 / c1 < 3);
	CHECK(c10k / c1 < 3);
	CHECK(c10k < 5);
	printf("    ops/frame: 1 flow %.3f, 100 flows %.3f, 10000 flows %.3f\n", c1, c100, c10k);
}

/* ---- Unpaced, removal, churn --------------------------------------------- */

static void test_pacer_unpaced(void)
{
	struct pacer *p = pacer_create(16384, SLOT, OVH);
	struct pacer_stats st;
	uint32_t f;
	int n = 0;

	pacer_wake(p, 9, 777, 1500);
	CHECK_EQ(pacer_deadline(p), 0);         /* ready, at the wheel's time */
	while (n < 1000 && pacer_next(p, 777, &f) == 1) {
		CHECK_EQ(f, 9);
		n++;
		pacer_done(p, 9, 777, 1500, 1500);
	}
	CHECK_EQ(n, 1000);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.backlogged, 1);
	CHECK_EQ(st.slots_visited, 0);
	pacer_destroy(p);
}

static void test_pacer_remove(void)
{
	struct pacer *p = pacer_create(8, SLOT, OVH);
	struct pacer_stats st;
	uint32_t f;

	for (uint32_t i = 0; i < 3; i++)
		pacer_set_rate(p, i, 1000000000ull, 0);
	/* Three flows due in the same slot; remove the middle one. */
	for (uint32_t i = 0; i < 3; i++) {
		pacer_wake(p, i, 1000, 1500);
		CHECK_EQ(pacer_next(p, 1000, &f), 1);
		pacer_done(p, f, 1000, 1500, 1500);
	}
	pacer_get_stats(p, &st);
	CHECK_EQ(st.backlogged, 3);
	CHECK_EQ(pacer_remove(p, 1), 0);
	CHECK_EQ(pacer_remove(p, 8), -EINVAL);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.backlogged, 2);
	CHECK_EQ(pacer_next(p, 1000000, &f), 1);
	CHECK_EQ(f, 0);                         /* FIFO within the slot */
	pacer_done(p, f, 1000000, 1500, 0);
	CHECK_EQ(pacer_next(p, 1000000, &f), 1);
	CHECK_EQ(f, 2);
	pacer_done(p, f, 1000000, 1500, 0);
	CHECK_EQ(pacer_next(p, 1000000, &f), 0);
	CHECK_EQ(pacer_deadline(p), PACER_NEVER);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.backlogged, 0);
	/* A removed flow is reset: unpaced, eligible at once. */
	CHECK_EQ(pacer_rate(p, 1), 0);
	pacer_destroy(p);
}

/*
 * Random churn against a model of who is backlogged: wakes, sends that
 * empty or keep a queue, rate and IPD changes, removals, unpaced flows.
 * Nothing is returned early or twice, and after each drain every
 * backlogged flow is still waiting for a slot that starts after `now`
 * (nothing due is held back), across several wheel levels.
 */
static void test_pacer_churn(void)
{
	enum { N = 300 };
	struct pacer *p = pacer_create(N, SLOT, OVH);
	uint8_t st_m[N] = { 0 };        /* 0 idle, 1 backlogged */
	uint64_t rate_m[N] = { 0 }, now = 0, backlog = 0, served = 0, bad_early = 0,
		 bad_state = 0, bad_held = 0;
	struct pacer_stats st;
	uint32_t f;

	rng_seed(77);
	for (int step = 0; step < 200000; step++) {
		uint32_t i = rng_below(N);
		uint64_t r = rng_below(10);

		if (r == 0) {
			/* rate from 100 kb/s to 10 Gb/s, or unpaced */
			static const uint64_t rs[] = { 0, 100000, 1000000, 50000000,
						       1000000000, 10000000000ull };

			rate_m[i] = rs[rng_below(6)];
			pacer_set_rate(p, i, rate_m[i], now);
		} else if (r == 1) {
			rate_m[i] = 1;                  /* IPD: paced */
			pacer_set_ipd(p, i, rng_below(256), 10000000000ull, now);
		} else if (r == 2 && rng_below(8) == 0) {
			if (st_m[i])
				backlog--;
			st_m[i] = 0;
			rate_m[i] = 0;
			pacer_remove(p, i);
		} else if (!st_m[i]) {
			st_m[i] = 1;
			backlog++;
			pacer_wake(p, i, now, 64 + rng_below(1437));
		}
		for (int k = 0; k < 10 * N && pacer_next(p, now, &f) == 1; k++) {
			if (f >= N || !st_m[f])
				bad_state++;
			else if (rate_m[f] && pacer_eligible(p, f) > now)
				bad_early++;
			served++;
			if (f < N && rng_below(3) == 0) {
				st_m[f] = 0;
				backlog--;
				pacer_done(p, f, now, 64 + rng_below(1437), 0);
			} else {
				pacer_done(p, f, now, 64 + rng_below(1437), 1500);
			}
		}
		for (uint32_t k = rng_below(N / 10) * 10; k < N; k += N / 10)
			if (st_m[k] && (!rate_m[k] || pacer_eligible(p, k) + SLOT <= now))
				bad_held++;
		now += rng_below(20000);
	}
	CHECK_EQ(bad_early, 0);
	CHECK_EQ(bad_state, 0);
	CHECK_EQ(bad_held, 0);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.backlogged, backlog);
	CHECK(served > 100000);
	CHECK(st.cascades > 0);
	pacer_destroy(p);
}

/* A rate change applies to the wait still ahead, not only to the next gap. */
static void test_pacer_rate_change(void)
{
	struct pacer *p = pacer_create(4, SLOT, OVH);
	uint32_t f;

	pacer_set_rate(p, 0, 1000000ull, 0);
	pacer_wake(p, 0, 0, 1500);
	CHECK_EQ(pacer_next(p, 0, &f), 1);
	pacer_done(p, 0, 0, 1500, 1500);
	CHECK_EQ(pacer_eligible(p, 0), 12192000);      /* 1524 B at 1 Mb/s */
	/* 1 ms later, 1000 times faster: the 11.192 ms left become 11.192 us. */
	pacer_set_rate(p, 0, 1000000000ull, 1000000);
	CHECK_EQ(pacer_eligible(p, 0), 1000000 + 11192);
	CHECK_EQ(pacer_deadline(p), 1000000 + 12000);
	CHECK_EQ(pacer_next(p, 1000000 + 11999, &f), 0);
	CHECK_EQ(pacer_next(p, 1000000 + 12000, &f), 1);
	pacer_done(p, 0, 1000000 + 12000, 1500, 1500);
	/* Unpaced from now on: due at once, wherever it was filed. */
	pacer_set_rate(p, 0, 0, 1000000 + 12000);
	CHECK_EQ(pacer_next(p, 1000000 + 12000, &f), 1);
	pacer_destroy(p);
}

/*
 * Rate lost to a late caller. A flow at 100M with a burst of two frames
 * (3048 B: 243.84 us), 1 ns slots: served at its deadlines it loses
 * nothing; noticed D late it loses D less its burst and the slot, to the
 * nanosecond, per flow and in total; within its burst, nothing. After idle
 * the lateness of a wake-up is no loss. A rate change that finds it overdue
 * notices it then. Flows that wait behind a busy uplink (4 x 3G on 10G)
 * with a punctual caller lose nothing: that is contention, not lateness.
 */
/* Serve flow `id` at its deadlines until it waits in the wheel for the next
 * one (a flow catching up its burst is due at once); the last time served. */
static uint64_t pacer_catch_up(struct pacer *p, uint32_t id)
{
	uint64_t t;
	uint32_t f;

	do {
		t = pacer_deadline(p);
		CHECK_EQ(pacer_next(p, t, &f), 1);
		CHECK_EQ(f, id);
		pacer_done(p, id, t, 1500, 1500);
	} while (pacer_eligible(p, id) <= t);
	return t;
}

/*
 * Rate lost to a late caller. A flow at 100M with a burst of two frames
 * (3048 B: 243.84 us), 1 ns slots: served at its deadlines it loses
 * nothing; its deadline noticed D late, it loses D less its burst and the
 * slot, to the nanosecond, per flow and in total; noticed within that,
 * nothing. After idle the lateness of a wake-up is no loss. A rate change
 * that finds it overdue notices it then. Flows that wait behind a busy
 * uplink (4 x 3G on 10G) with a punctual caller lose nothing: that is
 * contention, not lateness.
 */
static void test_pacer_lost(void)
{
	const uint64_t d = 200000000ull, lag = 243840 + 1;
	struct pacer *p = pacer_create(4, 1, OVH);
	struct pacer_stats st;
	uint64_t t = 1000, lost;
	struct msim s;
	uint32_t f;

	pacer_set_rate(p, 1, 100000000ull, 0);
	pacer_set_burst(p, 1, 2 * (1500 + OVH));
	pacer_wake(p, 1, t, 1500);
	for (int i = 0; i < 50; i++)
		pacer_catch_up(p, 1);
	CHECK_EQ(pacer_lost_ns(p, 1), 0);
	/* Noticed its burst and slot late: caught up, nothing lost. */
	t = pacer_eligible(p, 1) + lag;
	CHECK_EQ(pacer_next(p, t, &f), 1);
	pacer_done(p, 1, t, 1500, 1500);
	CHECK_EQ(pacer_lost_ns(p, 1), 0);
	pacer_catch_up(p, 1);
	/* D late. */
	t = pacer_eligible(p, 1);
	CHECK_EQ(pacer_deadline(p), t);
	t += d;
	CHECK_EQ(pacer_next(p, t, &f), 1);
	CHECK_EQ(pacer_lost_ns(p, 1), d - lag);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.lost_ns, d - lag);
	/* Its clock was pulled up by as much: it goes on from there. */
	pacer_done(p, 1, t, 1500, 1500);
	CHECK_EQ(pacer_eligible(p, 1), t - lag + 121920);
	pacer_catch_up(p, 1);
	/* Idle, then woken a second later: nothing more. */
	t = pacer_deadline(p);
	CHECK_EQ(pacer_next(p, t, &f), 1);
	pacer_done(p, 1, t, 1500, 0);
	pacer_wake(p, 1, t + 1000000000ull, 1500);
	pacer_catch_up(p, 1);
	CHECK_EQ(pacer_lost_ns(p, 1), d - lag);
	/* Overdue by D when its rate changes (the law's timer ran first). */
	lost = pacer_lost_ns(p, 1);
	t = pacer_eligible(p, 1) + d;
	pacer_set_rate(p, 1, 100000000ull, t);
	CHECK_EQ(pacer_lost_ns(p, 1) - lost, d - lag);
	CHECK_EQ(pacer_next(p, t, &f), 1);
	CHECK_EQ(pacer_lost_ns(p, 1) - lost, d - lag);   /* counted once */
	/* Removal resets the flow, not the total. */
	pacer_remove(p, 1);
	CHECK_EQ(pacer_lost_ns(p, 1), 0);
	pacer_get_stats(p, &st);
	CHECK_EQ(st.lost_ns, 2 * (d - lag));
	pacer_destroy(p);

	{
		static const uint64_t rates[] = { 3000000000ull };
		static const uint32_t lens[] = { 1500 };

		pacer_simn(4, rates, 1, lens, 1, 2, 10000000000ull, 50000000ull, UINT64_MAX, 17,
			   NULL, &s);
		CHECK_EQ(s.early, 0);
		CHECK_EQ(s.stuck, 0);
		CHECK(s.total > 30000);        /* the wire was the bottleneck: 50 ms at 10G */
		CHECK_EQ(s.st.lost_ns, 0);
	}
}

/*
 * Own-gap mode (a token bucket: a frame waits for its own credit). At 1 Gb/s
 * a 1500-byte frame's gap is 12192 ns and a 64-byte one's 704 ns. A short
 * frame after a long one waits 704 ns, not 12192; a short frame that
 * overtakes a waiting long one (pacer_head) is due at its own gap; the
 * long-run rate is the same as charging after; the first frame after idle
 * still goes at once. Charged after (the default), the short frame waits
 * out the long one's gap, and pacer_head changes nothing.
 */
static void test_pacer_own_gap(void)
{
	const uint64_t t0 = 1000000000ull;
	struct pacer *p = pacer_create(4, 1, OVH);      /* 1 ns slots: exact times */
	uint64_t t, sum = 0;
	uint32_t f = 99, len, next;

	CHECK(p != NULL);
	pacer_set_rate(p, 1, 1000000000ull, 0);
	CHECK_EQ(pacer_set_own_gap(p, 1, true, 0), 0);
	CHECK_EQ(pacer_wake(p, 1, t0, 1500), 0);
	CHECK_EQ(pacer_deadline(p), t0);                /* at once after idle */
	CHECK_EQ(pacer_next(p, t0, &f), 1);
	CHECK_EQ(pacer_done(p, 1, t0, 1500, 64), 0);
	CHECK_EQ(pacer_eligible(p, 1), t0 + 704);       /* its own gap only */
	CHECK_EQ(pacer_next(p, t0 + 703, &f), 0);
	CHECK_EQ(pacer_next(p, t0 + 704, &f), 1);
	CHECK_EQ(pacer_done(p, 1, t0 + 704, 64, 1500), 0);
	CHECK_EQ(pacer_eligible(p, 1), t0 + 704 + 12192);
	/* A 64-byte frame overtakes the waiting 1500-byte head. */
	CHECK_EQ(pacer_head(p, 1, t0 + 1000, 64), 0);
	CHECK_EQ(pacer_eligible(p, 1), t0 + 704 + 704);
	CHECK_EQ(pacer_deadline(p), t0 + 704 + 704);
	CHECK_EQ(pacer_next(p, t0 + 1408, &f), 1);
	CHECK_EQ(pacer_done(p, 1, t0 + 1408, 64, 1500), 0);
	CHECK_EQ(pacer_eligible(p, 1), t0 + 1408 + 12192);
	CHECK_EQ(pacer_head(p, 1, t0, 0), -EINVAL);
	CHECK_EQ(pacer_head(p, 4, t0, 64), -EINVAL);
	CHECK_EQ(pacer_set_own_gap(p, 4, true, 0), -EINVAL);

	/* Charged after: the short frame waits out the long one's gap. */
	pacer_set_rate(p, 2, 1000000000ull, 0);
	pacer_wake(p, 2, t0, 1500);
	CHECK_EQ(pacer_next(p, t0, &f), 1);
	CHECK_EQ(f, 2);
	pacer_done(p, 2, t0, 1500, 64);
	CHECK_EQ(pacer_eligible(p, 2), t0 + 12192);
	CHECK_EQ(pacer_head(p, 2, t0 + 10, 1500), 0);
	CHECK_EQ(pacer_eligible(p, 2), t0 + 12192);
	pacer_destroy(p);

	/*
	 * The rate: 20000 frames of 64 or 1500 bytes (random, a fixed seed),
	 * each served at its deadline. Frame k starts at the first one's
	 * start plus the gaps of frames 1..k, to the ns (1 ns slots; the
	 * carried remainder rounds an eligible time up by at most 1 ns).
	 */
	p = pacer_create(2, 1, OVH);
	pacer_set_rate(p, 0, 100000000ull, 0);
	pacer_set_own_gap(p, 0, true, 0);
	rng_seed(7);
	len = 1500;
	pacer_wake(p, 0, t0, len);
	t = t0;
	for (int k = 0; k < 20000; k++) {
		CHECK_EQ(pacer_next(p, t, &f), 1);
		next = rng_below(2) ? 64 : 1500;
		pacer_done(p, 0, t, len, next);
		len = next;
		sum += (uint64_t)(len + OVH) * 8 * 10;  /* ns at 100 Mb/s */
		t = pacer_deadline(p);
		if (t > t0 + sum + 1 || t < t0 + sum) {
			CHECK_EQ(t, t0 + sum);
			break;
		}
	}
	pacer_destroy(p);
}

static void test_pacer_bad_args(void)
{
	struct pacer *p = pacer_create(4, SLOT, OVH);

	CHECK(pacer_create(0, SLOT, OVH) == NULL);
	CHECK(pacer_create(4, 0, OVH) == NULL);
	CHECK_EQ(pacer_wake(p, 4, 0, 64), -EINVAL);
	CHECK_EQ(pacer_wake(p, 0, 0, 0), -EINVAL);
	CHECK_EQ(pacer_set_rate(p, 4, 1, 0), -EINVAL);
	CHECK_EQ(pacer_done(p, 0, 0, 64, 0), -EINVAL);
	pacer_destroy(p);
}

int main(void)
{
	RUN(test_pacer_never_early);
	RUN(test_pacer_ipd_exact);
	RUN(test_pacer_rate_accuracy);
	RUN(test_pacer_ipd_accuracy);
	RUN(test_pacer_fair_bottleneck);
	RUN(test_pacer_mixed_rates);
	RUN(test_pacer_flat_cost);
	RUN(test_pacer_unpaced);
	RUN(test_pacer_remove);
	RUN(test_pacer_churn);
	RUN(test_pacer_rate_change);
	RUN(test_pacer_lost);
	RUN(test_pacer_own_gap);
	RUN(test_pacer_bad_args);
	return check_summary();
}
