/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal unit-test harness: each test is a function; CHECK* record
 * failures with file:line and keep going; RUN() prints one line per test;
 * check_summary() prints the counts the suite runner adds up
 * ("# unit: N passed, M failed") and returns the exit code.
 */
#ifndef L2CC_CHECK_H
#define L2CC_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

static int check_failed_now, check_passed, check_failed;

#define CHECK(cond) do {                                                   \
	if (!(cond)) {                                                     \
		printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		check_failed_now++;                                        \
	}                                                                  \
} while (0)

#define CHECK_EQ(a, b) do {                                                \
	long long _a = (long long)(a), _b = (long long)(b);                \
	if (_a != _b) {                                                    \
		printf("    %s:%d: %s == %s failed: %lld != %lld\n",       \
		       __FILE__, __LINE__, #a, #b, _a, _b);                \
		check_failed_now++;                                        \
	}                                                                  \
} while (0)

#define CHECK_NEAR(a, b, tol) do {                                         \
	double _a = (double)(a), _b = (double)(b), _t = (double)(tol);     \
	if (!(_a >= _b - _t && _a <= _b + _t)) {                           \
		printf("    %s:%d: %s ~= %s failed: %g vs %g (tol %g)\n",  \
		       __FILE__, __LINE__, #a, #b, _a, _b, _t);            \
		check_failed_now++;                                        \
	}                                                                  \
} while (0)

#define CHECK_MEM(a, b, n) CHECK(memcmp((a), (b), (n)) == 0)

#define RUN(fn) do {                                                       \
	check_failed_now = 0;                                              \
	fn();                                                              \
	if (check_failed_now) {                                            \
		check_failed++;                                            \
		printf("FAIL %s\n", #fn);                                  \
	} else {                                                           \
		check_passed++;                                            \
		printf("ok   %s\n", #fn);                                  \
	}                                                                  \
} while (0)

/* splitmix64: tiny, identical on every libc, so a failing seed reproduces. */
static uint64_t rng_state;

static inline void rng_seed(uint64_t s) { rng_state = s; }

static inline uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint64_t rng_below(uint64_t n) { return rng_next() % n; }

static inline int check_summary(void)
{
	printf("# unit: %d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
