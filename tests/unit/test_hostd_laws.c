// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for the laws of Santos, Turner and Janakiraman (hostd/
 * law_santos.c) against the papers: Conditions 1-3 of Santos §V-A on the
 * response functions, the recovery times of Santos §VI-B / Fig. 5 through
 * the law's own events, discrete (IPD tables) against continuous mode, and
 * Turner §5's source response: APSN, RWL, RPI, the window, CNPs.
 *
 * Time is virtual. The model is the papers' (Santos §V-B): a flow sends one
 * frame at its current rate and its ACK (or, unreliable, the next frame)
 * comes one frame time later; a frame of 2048 bytes on a 1 GB/s (8 Gbit/s)
 * link is 2.048 us, so Trec = 1/Rmin = 256 frame times = 524.288 us.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
/* Relative paths: the Makefile's include path has no -Ihostd. */
#include "../../hostd/hostd.h"
#include "../../hostd/flow.h"
#include "../../hostd/rp.h"
#include "../../hostd/rp_santos.h"
#include "json.h"

#define LINK 8000000000ull      /* 1 GByte/s, Santos Table I */
#define FRAME_BITS (2048 * 8.0) /* "2048 byte packets" (§VI-B) */
#define N 256                   /* Rmin = Rmax / 256 */

static const char *const law_name[] = { "fimd", "lipd", "aimd" };

/* The keys of the Santos laws in a config ([law] rmin_div, m, discrete). */
#define KEYS(cfg) ((struct santos_cfg *)(cfg).law_cfg)

/* A flow and what hostd would keep for it. */
struct sim {
	struct hd_cfg cfg;
	struct rp_env e;
	struct flow f;
	struct rp_out o;
	const struct rp_ops *law;
	struct rp *rp;          /* made by sim_start, for the cfg as it is then */
};

static void sim_cfg(struct sim *s, const char *law, int mode, bool discrete)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->cfg.law, sizeof(s->cfg.law), "%s", law);
	s->cfg.mode = mode;
	KEYS(s->cfg)->discrete = discrete;
	KEYS(s->cfg)->rmin_div = N;
	KEYS(s->cfg)->m = 2.0;
	s->cfg.ipd = -1;
	s->e.cfg = &s->cfg;
	s->e.link_bps = LINK;
	s->f.in_use = true;
	s->f.id = 1;
	s->f.key.type = FLOW_KEY_DST;
	s->f.law_state = s->f.law_area;
	s->law = rp_find(law);
}

/* Every law instance a sim made and still has, destroyed at the end of
 * each test (sims live on the tests' stacks; the ASan build finds what
 * leaks). */
#define SIM_MAX_RPS 16384
static struct { const struct rp_ops *law; struct rp *rp; } sim_rps[SIM_MAX_RPS];
static int sim_nrps;

static void sim_rp_made(const struct rp_ops *law, struct rp *rp)
{
	CHECK(sim_nrps < SIM_MAX_RPS);
	if (rp && sim_nrps < SIM_MAX_RPS) {
		sim_rps[sim_nrps].law = law;
		sim_rps[sim_nrps++].rp = rp;
	}
}

static void sim_rp_destroy(const struct rp_ops *law, struct rp *rp)
{
	for (int i = 0; i < sim_nrps; i++)
		if (sim_rps[i].rp == rp)
			sim_rps[i].rp = NULL;
	law->destroy(rp);
}

static void sim_rps_destroy_all(void)
{
	for (int i = 0; i < sim_nrps; i++)
		if (sim_rps[i].rp)
			sim_rps[i].law->destroy(sim_rps[i].rp);
	sim_nrps = 0;
}

/* The law's instance is made for the configuration as it is now (hostd
 * makes it anew on every reload), and the flow starts or resumes. */
static void sim_start(struct sim *s)
{
	s->e.cfg = &s->cfg;
	s->e.keys = s->cfg.law_cfg;
	if (s->rp)
		sim_rp_destroy(s->law, s->rp);
	s->rp = NULL;
	CHECK_EQ(s->law->create(&s->rp, &s->e), 0);
	sim_rp_made(s->law, s->rp);
	s->law->init(s->rp, &s->f, &s->o);
}

/* A copy of a sim (a second flow of the same law) gets its own instance. */
static void sim_fork(struct sim *t, const struct sim *s)
{
	*t = *s;
	t->e.cfg = &t->cfg;
	t->e.keys = t->cfg.law_cfg;
	t->f.law_state = t->f.law_area;
	t->rp = NULL;
	CHECK_EQ(t->law->create(&t->rp, &t->e), 0);
	sim_rp_made(t->law, t->rp);
}


static void sim_new(struct sim *s, const char *law, int mode, bool discrete)
{
	sim_cfg(s, law, mode, discrete);
	sim_start(s);
}

/* The rate hostd would pace the flow at. */
static double sim_rate(const struct sim *s)
{
	return s->o.by_ipd ? (double)LINK / (1 + s->o.ipd) : (double)s->o.rate_bps;
}

/* The flow's IPD, real-valued in continuous mode. */
static double sim_ipd(const struct sim *s)
{
	return s->o.by_ipd ? s->o.ipd : (double)LINK / s->o.rate_bps - 1.0;
}

/* A frame leaves, as hd_send_flow() does it: its seq, then seq_next moves. */
static uint32_t sim_tx(struct sim *s, enum rp_limit lim)
{
	uint32_t seq = s->f.seq_next++;

	s->law->on_tx(s->rp, &s->f, seq, FRAME_BITS / 8, lim, &s->o);
	return seq;
}

/* An ACK covering `unmarked` + `marked` frames up to seq (reliable mode). */
static void sim_ack_n(struct sim *s, uint32_t seq, uint32_t unmarked, uint32_t marked)
{
	struct rp_fb fb = { .kind = RP_FB_ACK, .seq = seq, .unmarked = unmarked,
			    .marked = marked };

	s->law->on_feedback(s->rp, &s->f, &fb, &s->o);
}

static void sim_ack(struct sim *s, uint32_t seq, bool marked)
{
	sim_ack_n(s, seq, marked ? 0 : 1, marked ? 1 : 0);
}

/* A CNP naming the last marked frame seq, standing for `marked` marks. */
static void sim_cnp(struct sim *s, uint32_t seq, uint32_t marked)
{
	struct rp_fb fb = { .kind = RP_FB_CNP, .seq = seq, .marked = marked };

	s->law->on_feedback(s->rp, &s->f, &fb, &s->o);
}

/* One rate-limited frame and its feedback; its time on the wire at the rate
 * it was sent at (seconds). */
static double sim_frame(struct sim *s, bool marked)
{
	double t = FRAME_BITS / sim_rate(s);
	uint32_t seq = sim_tx(s, RP_LIMIT_RATE);

	if (s->cfg.mode == HD_MODE_RELIABLE)
		sim_ack(s, seq, marked);
	else if (marked)
		sim_cnp(s, seq, 1);
	return t;
}

/* The law's describe output (the control socket's "law" object). */
static void sim_describe(const struct sim *s, struct jw *w)
{
	jw_init(w);
	jw_obj_begin(w, NULL);
	s->law->describe(s->rp, &s->f, w);
	jw_obj_end(w);
}

static bool describe_has(const struct sim *s, const char *kv)
{
	struct jw w;
	bool ok;

	sim_describe(s, &w);
	ok = strstr(jw_str_get(&w), kv) != NULL;
	if (!ok)
		printf("    describe: %s has no %s\n", jw_str_get(&w), kv);
	jw_free(&w);
	return ok;
}

/* ---- Santos §V-A: Conditions 1-3 on the response functions ----------------- */

/* Normalised: Rmax = 1, Rmin = 1/256, rates in frames per frame time at
 * Rmax, so Trec = 1/Rmin = 256 frame times. */
#define RMAX 1.0
#define RMIN (1.0 / N)
#define TREC ((double)N)

struct recovery {
	double raw;     /* ACK steps until the rate is back: sum of 1/rate per step */
	double exact;   /* the same with the last step cut where F_inc crosses r */
};

/*
 * Recovery time after one mark at rate r (Santos: "from the time the flow
 * rate is decreased from r ... until the flow rate recovers to r"), with one
 * unmarked ACK per frame time at the flow's own rate.
 */
static struct recovery recover(enum law_fn fn, double m, double r)
{
	struct recovery rec = { 0, 0 };
	double x = law_fn_dec(fn, m, RMIN, RMAX, r), lo, hi;

	while (x < r * (1 - 1e-12)) {
		double next = law_fn_inc(fn, m, RMIN, RMAX, x, 1.0);

		if (next >= r * (1 - 1e-12)) {
			/* Where in this frame time F_inc^x reaches r. */
			lo = 0;
			hi = 1;
			for (int k = 0; k < 60; k++) {
				double mid = (lo + hi) / 2;

				if (law_fn_inc(fn, m, RMIN, RMAX, x, mid) < r)
					lo = mid;
				else
					hi = mid;
			}
			rec.exact = rec.raw + hi / x;
		}
		rec.raw += 1.0 / x;
		x = next;
	}
	if (rec.exact == 0)
		rec.exact = rec.raw;
	return rec;
}

/*
 * Condition 1, f_inc(f_dec(r)) <= r, from R'min = f_dec^-1(Rmin) up: below
 * it f_dec is clamped at Rmin, and Condition 3 (one ACK at Rmin returns to
 * R'min) then gives more than r back; the paper states Condition 3 for
 * f_dec^-1(Rmin) <= r <= Rmax, and C1 is its limiting case at R'min itself.
 *
 * Condition 2 (recovery non-decreasing in r) and 3 (recovery = 1/Rmin
 * from R'min up) on the exact recovery time: f_inc is F_inc sampled once
 * per frame time (§V-B), so the recovery the ACKs see overshoots the
 * crossing by part of the last step. That raw time is checked to lie
 * between 1/Rmin and 1/Rmin plus one frame time at the decreased rate; it is
 * not monotone (just above 2*Rmin FIMD needs a second ACK of half a Trec).
 * Tolerance on the exact time: 1e-6 Trec (bisection and pow() rounding;
 * the functions are exact in closed form).
 */
static void check_conditions(enum law_fn fn, double m, bool constant)
{
	double rprime = fn == LAW_FN_LIPD ? RMAX / (N - 1.0) : m * RMIN;
	double prev = 0, worst_c1 = 0, worst_c3 = 0, inc;
	int bad_c1 = 0, bad_c2 = 0, bad_c3 = 0, bad_raw = 0, steps = 20000;

	for (int k = 0; k <= steps; k++) {
		/* Log-spaced from Rmin to Rmax. */
		double r = RMIN * pow(RMAX / RMIN, (double)k / steps);
		struct recovery rec = recover(fn, m, r);
		/* AIMD: (r - r/m) at the slope (m - 1) Rmin^2. */
		double want = constant ? TREC : r / (m * RMIN * RMIN);

		inc = law_fn_inc(fn, m, RMIN, RMAX, law_fn_dec(fn, m, RMIN, RMAX, r), 1.0);
		if (r >= rprime * (1 - 1e-12)) {
			if (inc > r * (1 + 1e-12))
				bad_c1++;
			worst_c1 = fmax(worst_c1, inc / r);
			if (fabs(rec.exact - want) > 1e-6 * TREC)
				bad_c3++;
			worst_c3 = fmax(worst_c3, fabs(rec.exact - want));
			if (rec.raw < want - 1e-6 * TREC ||
			    rec.raw > want + 1.0 / law_fn_dec(fn, m, RMIN, RMAX, r) + 1e-6 * TREC)
				bad_raw++;
		} else if (rec.exact > TREC * (1 + 1e-6)) {
			bad_c3++;
		}
		if (rec.exact < prev - 1e-6 * TREC)
			bad_c2++;
		prev = rec.exact;
	}
	CHECK_EQ(bad_c1, 0);
	CHECK_EQ(bad_c2, 0);
	CHECK_EQ(bad_c3, 0);
	CHECK_EQ(bad_raw, 0);
	CHECK(worst_c1 <= 1.0 + 1e-12);
	/* R'min itself: C1 holds with equality, and one ACK at Rmin is the
	 * whole recovery (Condition 3's derivation). */
	inc = law_fn_inc(fn, m, RMIN, RMAX, law_fn_dec(fn, m, RMIN, RMAX, rprime), 1.0);
	CHECK_NEAR(inc, rprime, 1e-12);
	CHECK_NEAR(recover(fn, m, rprime).raw, TREC, 1e-9);
	printf("    %s m=%g: max f_inc(f_dec(r))/r = %.12f from R'min up, "
	       "|Trec(r) - %s| <= %.2g frame times\n",
	       fn == LAW_FN_FIMD ? "fimd" : fn == LAW_FN_LIPD ? "lipd" : "aimd", m, worst_c1,
	       constant ? "1/Rmin" : "r/(m Rmin^2)", worst_c3);
}

static void test_conditions_fimd(void)
{
	check_conditions(LAW_FN_FIMD, 2.0, true);
	check_conditions(LAW_FN_FIMD, 1.5, true);
	check_conditions(LAW_FN_FIMD, 4.0, true);
}

static void test_conditions_lipd(void)
{
	check_conditions(LAW_FN_LIPD, 2.0, true);
}

/* AIMD meets Conditions 1 and 2 but not 3: its recovery grows with r (as
 * r / (m Rmin^2)), 1/Rmin only at m*Rmin (§VI-B's "maximum slope"). */
static void test_conditions_aimd(void)
{
	check_conditions(LAW_FN_AIMD, 2.0, false);
	CHECK_NEAR(recover(LAW_FN_AIMD, 2.0, 2 * RMIN).exact, TREC, 1e-6 * TREC);
	CHECK_NEAR(recover(LAW_FN_AIMD, 2.0, RMAX).exact, 128 * TREC, 1e-4 * TREC);
}

/* The formulas as printed in the paper, per ACK. */
static void test_formulas(void)
{
	for (double r = RMIN; r <= RMAX; r *= 1.37) {
		CHECK_NEAR(law_fn_inc(LAW_FN_FIMD, 2, RMIN, RMAX, r, 1),
			   fmin(r * pow(2, RMIN / r), RMAX), 1e-12);
		CHECK_NEAR(law_fn_inc(LAW_FN_LIPD, 2, RMIN, RMAX, r, 1),
			   fmin(r / (1 - RMIN / RMAX), RMAX), 1e-12);
		CHECK_NEAR(law_fn_inc(LAW_FN_AIMD, 2, RMIN, RMAX, r, 1),
			   fmin(r + RMIN * RMIN / r, RMAX), 1e-12);
		CHECK_NEAR(law_fn_dec(LAW_FN_FIMD, 2, RMIN, RMAX, r), fmax(r / 2, RMIN), 1e-15);
		CHECK_NEAR(law_fn_dec(LAW_FN_AIMD, 2, RMIN, RMAX, r), fmax(r / 2, RMIN), 1e-15);
		CHECK_NEAR(law_fn_dec(LAW_FN_LIPD, 2, RMIN, RMAX, r),
			   fmax(RMAX / (RMAX / r + 1), RMIN), 1e-15);
	}
	/* F_inc^r is a flow of time: t1 then t2 is t1 + t2 (Santos eq. 1). */
	for (int fn = 0; fn < 3; fn++) {
		double r = 3 * RMIN, a = law_fn_inc(fn, 2, RMIN, RMAX, r, 2.5);

		CHECK_NEAR(law_fn_inc(fn, 2, RMIN, RMAX, a, 4.0 * a / r),
			   law_fn_inc(fn, 2, RMIN, RMAX, r, 6.5), 1e-12);
	}
}

/* ---- Santos §VI-B, Fig. 5: from Rmin to Rmax ---------------------------------- */

/* Seconds from Rmin to Rmax, one unmarked ACK per frame at the current rate. */
static double climb(const char *law, int mode, bool discrete, double m)
{
	struct sim s;
	double t = 0;
	long frames = 0;

	sim_cfg(&s, law, mode, discrete);
	KEYS(s.cfg)->m = m;
	s.cfg.ipd = N - 1;              /* start at Rmin = Rmax / 256 */
	sim_start(&s);
	CHECK_NEAR(sim_rate(&s), (double)LINK / N, 1);
	while (sim_rate(&s) < LINK && frames++ < 1000000)
		t += sim_frame(&s, false);
	CHECK_NEAR(sim_rate(&s), (double)LINK, 1);
	return t;
}

static void test_fig5_recovery_times(void)
{
	static const double paper_ms[] = { 4.2, 133.7, 133.7 };

	for (int l = 0; l < 3; l++) {
		for (int d = 0; d < 2; d++) {
			for (int mode = 0; mode < 2; mode++) {
				double ms = climb(law_name[l], mode, d, 2.0) * 1e3;

				CHECK_NEAR(ms, paper_ms[l], 0.02 * paper_ms[l]);
				if (mode == HD_MODE_RELIABLE)
					printf("    %s %-10s Rmin -> Rmax in %8.3f ms (paper %.1f ms, %+.2f%%)\n",
					       law_name[l], d ? "discrete" : "continuous", ms,
					       paper_ms[l], (ms / paper_ms[l] - 1) * 100);
			}
		}
	}
	/* The closed forms: FIMD log_m(256) Trec, LIPD and AIMD 255 Trec. */
	CHECK_NEAR(climb("fimd", HD_MODE_RELIABLE, false, 2.0), 8 * 256 * 2.048e-6, 2.1e-6);
	CHECK_NEAR(climb("lipd", HD_MODE_RELIABLE, false, 2.0), 255 * 256 * 2.048e-6, 2.1e-6);
	CHECK_NEAR(climb("aimd", HD_MODE_RELIABLE, false, 2.0), 255 * 256 * 2.048e-6, 2.1e-6);
	CHECK_NEAR(climb("fimd", HD_MODE_RELIABLE, false, 4.0), 4 * 256 * 2.048e-6, 2.1e-6);
}

/* The other way: marks take a flow from Rmax to Rmin in log_m(256) (FIMD,
 * AIMD) or 255 (LIPD) steps, and no further. */
static void test_marks_to_rmin(void)
{
	static const int steps[] = { 8, 255, 8 };

	for (int l = 0; l < 3; l++) {
		for (int d = 0; d < 2; d++) {
			struct sim s;

			sim_new(&s, law_name[l], HD_MODE_RELIABLE, d);
			CHECK_NEAR(sim_rate(&s), (double)LINK, 1);     /* flows start at Rmax */
			for (int k = 0; k < steps[l] - 1; k++)
				sim_frame(&s, true);
			CHECK(sim_rate(&s) > (double)LINK / N + 1);
			sim_frame(&s, true);
			CHECK_NEAR(sim_rate(&s), (double)LINK / N, 1);
			sim_frame(&s, true);
			CHECK_NEAR(sim_rate(&s), (double)LINK / N, 1);
			CHECK(describe_has(&s, "\"ipd\":255,"));
		}
	}
}

/* ---- Discrete (IB IPD tables) against continuous ----------------------------- */

/* One mark from every ipd: the table lands within one ipd of f_dec. */
static void test_discrete_decrease(void)
{
	for (int l = 0; l < 3; l++) {
		for (double m = 1.5; m <= 3.0; m += 0.5) {
			int bad = 0;

			if (l == 1 && m != 2.0)
				continue;       /* LIPD has no m */
			for (int ipd = 0; ipd < N; ipd++) {
				struct sim d, c;

				sim_cfg(&d, law_name[l], HD_MODE_RELIABLE, true);
				sim_cfg(&c, law_name[l], HD_MODE_RELIABLE, false);
				d.cfg.ipd = c.cfg.ipd = ipd;
				KEYS(d.cfg)->m = KEYS(c.cfg)->m = m;
				sim_start(&d);
				sim_start(&c);
				CHECK_EQ(d.o.ipd, ipd);
				sim_frame(&d, true);
				sim_frame(&c, true);
				if (fabs(sim_ipd(&d) - sim_ipd(&c)) > 1.0 + 1e-6 ||
				    (ipd < N - 1 && d.o.ipd <= (uint32_t)ipd))
					bad++;
			}
			CHECK_EQ(bad, 0);
		}
	}
}

/*
 * The climb from Rmin, compared in time: after each ACK the discrete flow
 * is at the IPD rate at or just below F_inc(t), the continuous law's rate
 * t after Rmin (so within one IPD step); the continuous flow is exactly on
 * F_inc at its own ACK times (f_inc is F_inc sampled per frame, §V-B).
 */
static void test_discrete_tracks_continuous(void)
{
	for (int l = 0; l < 3; l++) {
		for (int mode = 0; mode < 2; mode++) {
			struct sim d, c;
			double td = 0, tc = 0, worst = 0;
			int bad_d = 0, bad_c = 0;

			sim_cfg(&d, law_name[l], mode, true);
			sim_cfg(&c, law_name[l], mode, false);
			d.cfg.ipd = c.cfg.ipd = N - 1;
			sim_start(&d);
			sim_start(&c);
			while (d.o.ipd > 0) {
				double f, ipd_c;

				td += sim_frame(&d, false);
				/* F_inc(t) from Rmin, t as frames at Rmin. */
				f = law_fn_inc(l, 2, 1.0 / N, 1.0, 1.0 / N, td * LINK / FRAME_BITS / N);
				ipd_c = 1.0 / f - 1.0;
				if (d.o.ipd < ipd_c - 1e-6 || d.o.ipd > ipd_c + 1.0)
					bad_d++;
				if (fabs(d.o.ipd - ipd_c) > worst)
					worst = fabs(d.o.ipd - ipd_c);
			}
			while (c.o.rate_bps < LINK) {
				double f;

				tc += sim_frame(&c, false);
				f = law_fn_inc(l, 2, 1.0 / N, 1.0, 1.0 / N, tc * LINK / FRAME_BITS / N);
				if (fabs(sim_rate(&c) / LINK - f) > 1e-6 * f)
					bad_c++;
			}
			CHECK_EQ(bad_d, 0);
			CHECK_EQ(bad_c, 0);
			/* Same time to Rmax, within one frame at ipd 1. */
			CHECK_NEAR(td, tc, 2 * FRAME_BITS / LINK + 1e-9);
			if (mode == HD_MODE_RELIABLE)
				printf("    %s: discrete ipd within %.3f of F_inc's along the climb, "
				       "Rmax at %.3f ms vs %.3f ms\n", law_name[l], worst, td * 1e3,
				       tc * 1e3);
		}
	}
}

/* Condition 3 in discrete mode: after a mark the IPD table takes 1/Rmin
 * to return, plus at most one frame time at the decreased rate. */
static void test_discrete_recovery(void)
{
	for (int l = 0; l < 2; l++) {
		int bad = 0;

		for (int ipd = 0; ipd < (l == 0 ? N / 2 : N - 1); ipd++) {
			struct sim s;
			double t = 0, trec = N * FRAME_BITS / LINK, slack;

			sim_cfg(&s, law_name[l], HD_MODE_RELIABLE, true);
			s.cfg.ipd = ipd;
			sim_start(&s);
			sim_frame(&s, true);
			slack = FRAME_BITS / sim_rate(&s);
			while (s.o.ipd > (uint32_t)ipd)
				t += sim_frame(&s, false);
			if (t < trec - 1e-12 || t > trec + slack + 1e-12)
				bad++;
		}
		CHECK_EQ(bad, 0);
	}
}

/* ---- Turner §5.1: reliable mode ------------------------------------------------ */

/* APSN: a mark for a frame sent before the last decrease is stale. */
static void test_reliable_apsn(void)
{
	for (int d = 0; d < 2; d++) {
		struct sim s;
		uint32_t a, b, c, e;

		sim_new(&s, "fimd", HD_MODE_RELIABLE, d);
		a = sim_tx(&s, RP_LIMIT_RATE);
		b = sim_tx(&s, RP_LIMIT_RATE);
		c = sim_tx(&s, RP_LIMIT_RATE);
		sim_ack(&s, a, true);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
		/* b and c left before that decrease: their marks say nothing new. */
		sim_ack(&s, b, true);
		sim_ack(&s, c, true);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
		CHECK(describe_has(&s, "\"stale_marks\":2"));
		CHECK(describe_has(&s, "\"decreases\":1"));
		CHECK(describe_has(&s, "\"marks\":3"));
		/* The first frame after it does. */
		e = sim_tx(&s, RP_LIMIT_RATE);
		sim_ack(&s, e, true);
		CHECK_NEAR(sim_rate(&s), LINK / 4.0, 1);
		CHECK(describe_has(&s, "\"apsn\":4"));        /* e + 1 */
	}
}

/* Marks on frames sent before an increase still count (see law_santos.c). */
static void test_reliable_mark_after_increase(void)
{
	struct sim s;
	uint32_t a, b;
	double r;

	sim_new(&s, "lipd", HD_MODE_RELIABLE, false);
	sim_frame(&s, true);                    /* Rmax / 2 */
	a = sim_tx(&s, RP_LIMIT_RATE);
	b = sim_tx(&s, RP_LIMIT_RATE);
	sim_ack(&s, a, false);                  /* an increase */
	r = sim_rate(&s);
	CHECK(r > LINK / 2.0);
	sim_ack(&s, b, true);
	CHECK_NEAR(sim_rate(&s), law_fn_dec(LAW_FN_LIPD, 2, LINK / 256.0, LINK, r), 1);
}

/* RWL: only a flow whose last frame waited on its rate increases it. */
static void test_reliable_rwl(void)
{
	for (int d = 0; d < 2; d++) {
		struct sim s;
		uint32_t seq;
		double r;

		sim_new(&s, "lipd", HD_MODE_RELIABLE, d);
		for (int k = 0; k < 3; k++)
			sim_frame(&s, true);
		r = sim_rate(&s);                       /* Rmax / 4 */
		CHECK_NEAR(r, LINK / 4.0, 1);
		/* The application had nothing more to send: no increase, however
		 * many unmarked ACKs. */
		for (int k = 0; k < 200; k++) {
			seq = sim_tx(&s, RP_LIMIT_NONE);
			sim_ack(&s, seq, false);
		}
		CHECK_NEAR(sim_rate(&s), r, 1);
		CHECK(describe_has(&s, "\"held\":200"));
		/* Waiting on the (fixed) window: the rate limit is not what
		 * holds it back either. */
		for (int k = 0; k < 200; k++) {
			seq = sim_tx(&s, RP_LIMIT_WINDOW);
			sim_ack(&s, seq, false);
		}
		CHECK_NEAR(sim_rate(&s), r, 1);
		CHECK(describe_has(&s, "\"rwl\":\"window\""));
		/* Rate-limited: it increases. In discrete mode LIPD steps from
		 * ipd 3 to 2 after Trec, 256 / 4 = 64 frames at ipd 3. */
		for (int k = 0; k < 63; k++)
			sim_frame(&s, false);
		if (d) {
			CHECK_EQ(s.o.ipd, 3);
			sim_frame(&s, false);
			CHECK_EQ(s.o.ipd, 2);
		} else {
			/* 63 times f_inc = r / (1 - Rmin / Rmax). */
			CHECK_NEAR(sim_rate(&s), r * pow(256.0 / 255, 63), 2);
		}
	}
}

/* A coalesced ACK: N-1 unmarked frames, then the marked one (Turner §3). */
static void test_reliable_coalesced(void)
{
	struct sim s, t;
	uint32_t seq = 0;
	double r;

	sim_new(&s, "fimd", HD_MODE_RELIABLE, false);
	sim_frame(&s, true);
	sim_frame(&s, true);                     /* Rmax / 4 */
	sim_fork(&t, &s);
	r = sim_rate(&s);
	for (int k = 0; k < 4; k++)
		seq = sim_tx(&s, RP_LIMIT_RATE);
	sim_ack_n(&s, seq, 3, 1);
	for (int k = 0; k < 3; k++)
		r = law_fn_inc(LAW_FN_FIMD, 2, LINK / 256.0, LINK, r, 1);
	r = law_fn_dec(LAW_FN_FIMD, 2, LINK / 256.0, LINK, r);
	CHECK_NEAR(sim_rate(&s), r, 1);
	/* The same as four separate ACKs. */
	for (int k = 0; k < 3; k++)
		sim_frame(&t, false);
	sim_frame(&t, true);
	CHECK_NEAR(sim_rate(&t), sim_rate(&s), 1);
}

/* A fixed window of one frame by default in reliable mode; [law] window
 * overrides it; no window in unreliable mode. */
static void test_window(void)
{
	for (int l = 0; l < 3; l++) {
		struct sim s;

		sim_new(&s, law_name[l], HD_MODE_RELIABLE, false);
		CHECK_EQ(s.o.window, 1);
		sim_frame(&s, true);
		sim_frame(&s, false);
		CHECK_EQ(s.o.window, 1);                /* fixed: marks and ACKs leave it */
		sim_cfg(&s, law_name[l], HD_MODE_RELIABLE, true);
		s.cfg.window = 4;
		sim_start(&s);
		CHECK_EQ(s.o.window, 4);
		sim_new(&s, law_name[l], HD_MODE_UNRELIABLE, false);
		CHECK_EQ(s.o.window, 0);
	}
}

/* ---- Turner §5.2: unreliable mode ---------------------------------------------- */

static void test_unreliable_cnp(void)
{
	for (int d = 0; d < 2; d++) {
		struct sim s;
		uint32_t a, b, c;

		sim_new(&s, "aimd", HD_MODE_UNRELIABLE, d);
		a = sim_tx(&s, RP_LIMIT_RATE);
		b = sim_tx(&s, RP_LIMIT_RATE);
		sim_cnp(&s, a, 1);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
		/* A CNP for a frame older than the decrease is ignored. */
		sim_cnp(&s, b, 1);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
		CHECK(describe_has(&s, "\"stale_marks\":1"));
		/* One decrease per CNP however many marks it covers. */
		c = sim_tx(&s, RP_LIMIT_NONE);
		sim_cnp(&s, c, 5);
		CHECK_NEAR(sim_rate(&s), LINK / 4.0, 1);
		CHECK(describe_has(&s, "\"marks\":7"));
		/* Sequence numbers wrap. */
		sim_cfg(&s, "aimd", HD_MODE_UNRELIABLE, d);
		s.f.seq_next = UINT32_MAX - 1;
		sim_start(&s);
		a = sim_tx(&s, RP_LIMIT_RATE);
		b = sim_tx(&s, RP_LIMIT_RATE);
		sim_cnp(&s, a, 1);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
		sim_cnp(&s, b, 1);
		CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);        /* b left before: stale */
		c = sim_tx(&s, RP_LIMIT_NONE);
		CHECK_EQ(c, 0);
		sim_cnp(&s, c, 1);
		CHECK_NEAR(sim_rate(&s), LINK / 4.0, 1);
	}
}

/* RPI counts frames sent while rate-limited; nothing else moves it. */
static void test_unreliable_rpi(void)
{
	struct sim s;

	/* LIPD, discrete, ipd 1: Trec at half the link rate is 128 frames. */
	sim_cfg(&s, "lipd", HD_MODE_UNRELIABLE, true);
	s.cfg.ipd = 1;
	sim_start(&s);
	CHECK(describe_has(&s, "\"rpi\":128"));
	for (int k = 0; k < 127; k++) {
		sim_tx(&s, RP_LIMIT_RATE);
		sim_tx(&s, RP_LIMIT_NONE);     /* not rate-limited: not counted */
		/* ACKs do not exist in unreliable mode; one would not count. */
		sim_ack_n(&s, s.f.seq_next - 1, 1, 0);
	}
	CHECK_EQ(s.o.ipd, 1);
	CHECK(describe_has(&s, "\"rpi\":1,"));
	sim_tx(&s, RP_LIMIT_RATE);
	CHECK_EQ(s.o.ipd, 0);
	CHECK(describe_has(&s, "\"rpi\":0"));
	CHECK(describe_has(&s, "\"increases\":1"));

	/* Continuous: every rate-limited frame is one f_inc. */
	sim_new(&s, "fimd", HD_MODE_UNRELIABLE, false);
	sim_frame(&s, true);
	sim_tx(&s, RP_LIMIT_NONE);
	CHECK_NEAR(sim_rate(&s), LINK / 2.0, 1);
	sim_tx(&s, RP_LIMIT_RATE);
	CHECK_NEAR(sim_rate(&s), LINK / 2.0 * pow(2, 2.0 / 256), 1);
}

/* ---- init: start, reload, persistent state ------------------------------------- */

static void test_start_rate(void)
{
	struct sim s;

	/* [rate] / [law] rate is the starting rate, clamped to [Rmin, Rmax]. */
	sim_cfg(&s, "lipd", HD_MODE_RELIABLE, false);
	s.cfg.rate = 1000000000;
	sim_start(&s);
	CHECK_EQ(s.o.rate_bps, 1000000000);
	sim_cfg(&s, "lipd", HD_MODE_RELIABLE, true);
	s.cfg.rate = 1000000000;                        /* ipd 7 */
	sim_start(&s);
	CHECK(s.o.by_ipd);
	CHECK_EQ(s.o.ipd, 7);
	sim_cfg(&s, "lipd", HD_MODE_RELIABLE, true);
	s.cfg.rate = 999999999;                         /* at or below: ipd 8 */
	sim_start(&s);
	CHECK_EQ(s.o.ipd, 8);
	sim_cfg(&s, "fimd", HD_MODE_RELIABLE, false);
	s.cfg.rate = 1000;                              /* below Rmin */
	sim_start(&s);
	CHECK_EQ(s.o.rate_bps, LINK / N);
	sim_cfg(&s, "fimd", HD_MODE_RELIABLE, true);
	s.cfg.ipd = 4000;                               /* beyond the table */
	sim_start(&s);
	CHECK_EQ(s.o.ipd, N - 1);
}

/* A reload calls init on running flows: the state carries over, in the
 * new mode; APSN restarts at the next frame. */
static void test_reload(void)
{
	struct sim s;

	sim_new(&s, "fimd", HD_MODE_RELIABLE, false);
	sim_frame(&s, true);
	sim_frame(&s, true);
	sim_frame(&s, false);                           /* just above Rmax / 4 */
	KEYS(s.cfg)->discrete = true;
	sim_start(&s);
	CHECK(s.o.by_ipd);
	CHECK_EQ(s.o.ipd, 3);                           /* the IPD rate at or below */
	CHECK(describe_has(&s, "\"resumed\":1"));
	CHECK(describe_has(&s, "\"decreases\":2"));
	KEYS(s.cfg)->discrete = false;
	sim_start(&s);
	CHECK_EQ(s.o.rate_bps, LINK / 4);
	s.cfg.window = 2;
	sim_start(&s);
	CHECK_EQ(s.o.window, 2);
	/* A smaller rmin_div (continuous): the rate rises to the new Rmin. */
	for (int k = 0; k < 10; k++)
		sim_frame(&s, true);
	KEYS(s.cfg)->rmin_div = 16;
	sim_start(&s);
	CHECK_EQ(s.o.rate_bps, LINK / 16);
}

/* Santos §VI-B.2: hostd copies state_size bytes of a removed flow's law
 * area into the next flow of its key, then calls init. */
static void test_persistent_state(void)
{
	for (int d = 0; d < 2; d++) {
		struct sim a, b;

		sim_new(&a, "lipd", HD_MODE_RELIABLE, d);
		CHECK(a.law->state_size > 0 && a.law->state_size <= sizeof(a.f.law_area));
		for (int k = 0; k < 9; k++)
			sim_frame(&a, true);                    /* ipd 9 */
		for (int k = 0; k < 20; k++)
			sim_frame(&a, false);                   /* partway to ipd 8 */
		CHECK_NEAR(sim_ipd(&a), 9, 1);

		/* The next flow of the pair: a new id, seq from 0. */
		sim_cfg(&b, "lipd", HD_MODE_RELIABLE, d);
		memcpy(b.f.law_area, a.f.law_area, a.law->state_size);
		sim_start(&b);
		CHECK_NEAR(sim_rate(&b), sim_rate(&a), 1);
		CHECK(describe_has(&b, "\"apsn\":0"));
		CHECK(describe_has(&b, "\"resumed\":1"));
		/* Its first frame's mark is not stale, and it carries on from
		 * the same point: the same rate after the same events. */
		sim_frame(&a, false);
		sim_frame(&b, false);
		CHECK_NEAR(sim_rate(&b), sim_rate(&a), 1);
		sim_frame(&a, true);
		sim_frame(&b, true);
		CHECK_NEAR(sim_rate(&b), sim_rate(&a), 1);

		/* Without it (persistent = no, a zeroed area): the configured start. */
		sim_new(&b, "lipd", HD_MODE_RELIABLE, d);
		CHECK_NEAR(sim_rate(&b), (double)LINK, 1);
		/* Another law's bytes are not ours. */
		sim_cfg(&b, "fimd", HD_MODE_RELIABLE, d);
		memcpy(b.f.law_area, a.f.law_area, a.law->state_size);
		sim_start(&b);
		CHECK_NEAR(sim_rate(&b), (double)LINK, 1);
	}
}

/* A rate set from the control socket stays: the law counts, but leaves it. */
static void test_pinned(void)
{
	struct sim s;

	sim_new(&s, "lipd", HD_MODE_RELIABLE, false);
	s.f.pinned = true;
	s.o.rate_bps = 50000000;
	sim_frame(&s, true);
	sim_frame(&s, false);
	CHECK_EQ(s.o.rate_bps, 50000000);
	CHECK(describe_has(&s, "\"marks\":1"));
}

static void test_describe(void)
{
	struct sim s;
	struct jw w;

	sim_new(&s, "aimd", HD_MODE_RELIABLE, true);
	sim_frame(&s, true);
	sim_describe(&s, &w);
	CHECK(w.err == 0);
	CHECK(!strcmp(jw_str_get(&w),
		      "{\"mode\":\"discrete\",\"rate_bps\":4000000000,\"ipd\":1,\"window\":1,"
		      "\"rpi\":16384,\"apsn\":1,\"rwl\":\"rate\",\"marks\":1,\"stale_marks\":0,"
		      "\"decreases\":1,\"increases\":0,\"held\":0,\"resumed\":0}") ||
	      (printf("    %s\n", jw_str_get(&w)), 0));
	jw_free(&w);
	/* A flow whose area is not the law's (never initialised): nothing. */
	memset(s.f.law_area, 0, sizeof(s.f.law_area));
	sim_describe(&s, &w);
	CHECK(!strcmp(jw_str_get(&w), "{}"));
	jw_free(&w);
}

static void test_registry(void)
{
	for (int l = 0; l < 3; l++) {
		const struct rp_ops *o = rp_find(law_name[l]);
		bool listed = false;

		CHECK(o && o->create && o->destroy && o->init && o->on_tx && o->on_feedback &&
		      o->describe);
		for (int i = 0; rp_names[i]; i++)
			listed |= !strcmp(rp_names[i], law_name[l]);
		CHECK(listed);
	}
	CHECK(rp_find("static") && !rp_find("static")->state_size);
}

/* ---- [law] keys ---------------------------------------------------------------- */

static int load(struct hd_cfg *c, const char *law_text, char *err, size_t errlen)
{
	char path[64], text[512];
	FILE *f;
	int fd, ret;

	snprintf(path, sizeof(path), "/tmp/test_hostd_laws_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	snprintf(text, sizeof(text), "[hostd]\nhost_port = cc0\nuplink = up0\n[law]\n%s", law_text);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	ret = hd_cfg_load(c, path, NULL, 0, err, errlen);
	unlink(path);
	return ret;
}

static void test_config_keys(void)
{
	static struct hd_cfg c;
	char err[512];

	CHECK_EQ(load(&c, "law = fimd\n", err, sizeof(err)), 0);
	CHECK_EQ(KEYS(c)->rmin_div, 256);
	CHECK(KEYS(c)->m == 2.0);
	CHECK(!KEYS(c)->discrete && !c.persistent);
	/* The law's keys before or after `law`: resolved once all is read. */
	CHECK_EQ(load(&c, "m = 1.5\nrmin_div = 64\ndiscrete = yes\npersistent = yes\nlaw = aimd\n",
		      err, sizeof(err)), 0);
	CHECK(KEYS(c)->m == 1.5 && KEYS(c)->rmin_div == 64 && KEYS(c)->discrete && c.persistent);
	CHECK_EQ(load(&c, "law = lipd\nm = 1\n", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "[law] law lipd: m = \"1\", expected a number above 1") != NULL ||
	      (printf("    %s\n", err), 0));
	CHECK_EQ(load(&c, "law = fimd\nm = 2x\n", err, sizeof(err)), -EINVAL);
	CHECK_EQ(load(&c, "law = fimd\nm = nan\n", err, sizeof(err)), -EINVAL);
	CHECK_EQ(load(&c, "law = fimd\nrmin_div = 16\nm = 17\n", err, sizeof(err)), -EINVAL);
	CHECK_EQ(load(&c, "law = fimd\ndiscrete = yes\nrmin_div = 512\n", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected rmin_div <= 256") != NULL);
	CHECK_EQ(load(&c, "law = fimd\nrmin_div = 512\n", err, sizeof(err)), 0);
	CHECK_EQ(load(&c, "law = fimd\nrmin_div = 1\n", err, sizeof(err)), -EINVAL);
	/* Another law's keys are no error (a sweep switching laws keeps
	 * them): ignored with a warning; no law's key is an error. */
	CHECK_EQ(load(&c, "law = static\nm = 3\nrmin_div = 64\n", err, sizeof(err)), 0);
	CHECK_EQ(load(&c, "law = lipd\nmm = 3\n", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "mm") != NULL);
}

#define RUN_SIM(fn) do { RUN(fn); sim_rps_destroy_all(); } while (0)

int main(void)
{
	RUN_SIM(test_formulas);
	RUN_SIM(test_conditions_fimd);
	RUN_SIM(test_conditions_lipd);
	RUN_SIM(test_conditions_aimd);
	RUN_SIM(test_fig5_recovery_times);
	RUN_SIM(test_marks_to_rmin);
	RUN_SIM(test_discrete_decrease);
	RUN_SIM(test_discrete_tracks_continuous);
	RUN_SIM(test_discrete_recovery);
	RUN_SIM(test_reliable_apsn);
	RUN_SIM(test_reliable_mark_after_increase);
	RUN_SIM(test_reliable_rwl);
	RUN_SIM(test_reliable_coalesced);
	RUN_SIM(test_window);
	RUN_SIM(test_unreliable_cnp);
	RUN_SIM(test_unreliable_rpi);
	RUN_SIM(test_start_rate);
	RUN_SIM(test_reload);
	RUN_SIM(test_persistent_state);
	RUN_SIM(test_pinned);
	RUN_SIM(test_describe);
	RUN_SIM(test_registry);
	RUN_SIM(test_config_keys);
	return check_summary();
}
