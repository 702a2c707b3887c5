// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for the switch's data-path algorithms: the forwarding database
 * (switchd/fdb.c), the virtual output queues (switchd/voq.c) and the virtual
 * wire clock (daemon/wclock.h). Randomised tests use a fixed-seed PRNG so a
 * failure reproduces exactly, and compare against a deliberately naive model
 * (flat arrays, linear scans) that is easy to trust by reading it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
/* Relative paths: the Makefile's include path has no -Iswitchd. */
#include "../../switchd/fdb.h"
#include "../../switchd/voq.h"
#include "wclock.h"


/* Locally administered unicast MACs that differ in several bytes. */
static void mac_of(uint32_t id, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = id >> 24;
	mac[3] = id >> 16;
	mac[4] = id >> 8;
	mac[5] = id;
}

/* ---- FDB ----------------------------------------------------------------- */

static void test_fdb_learn_lookup(void)
{
	struct fdb *f;
	uint8_t a[6], b[6], a2[6];

	CHECK_EQ(fdb_create(&f, 1024, 1000000000ull), 0);
	mac_of(1, a);
	mac_of(2, b);
	memcpy(a2, a, 6);
	a2[0] ^= 0x80;          /* differs from a only in the first byte */

	CHECK_EQ(fdb_lookup(f, a, 0, 0), -ENOENT);
	CHECK_EQ(fdb_learn(f, a, 0, 3, 10), 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 20), 3);
	CHECK_EQ(f->count, 1);
	/* Same port again is a refresh, not a new entry or a move. */
	CHECK_EQ(fdb_learn(f, a, 0, 3, 30), 0);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(f->moves, 0);
	CHECK_EQ(fdb_learn(f, b, 0, 5, 40), 0);
	CHECK_EQ(f->count, 2);
	CHECK_EQ(fdb_lookup(f, a, 0, 50), 3);
	CHECK_EQ(fdb_lookup(f, b, 0, 50), 5);
	/* All 48 bits are part of the key, including the first byte. */
	CHECK_EQ(fdb_lookup(f, a2, 0, 50), -ENOENT);
	CHECK_EQ(f->learn_full, 0);
	fdb_destroy(f);
}

static void test_fdb_move(void)
{
	struct fdb *f;
	uint8_t a[6];

	CHECK_EQ(fdb_create(&f, 64, 0), 0);
	mac_of(7, a);
	CHECK_EQ(fdb_learn(f, a, 1, 1, 100), 0);
	CHECK_EQ(fdb_learn(f, a, 1, 2, 200), 1);
	CHECK_EQ(f->moves, 1);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_lookup(f, a, 1, 300), 2);
	CHECK_EQ(fdb_learn(f, a, 1, 2, 400), 0);
	CHECK_EQ(f->moves, 1);
	CHECK_EQ(fdb_learn(f, a, 1, 1, 500), 1);
	CHECK_EQ(f->moves, 2);
	CHECK_EQ(fdb_lookup(f, a, 1, 600), 1);
	fdb_destroy(f);
}

static void test_fdb_aging(void)
{
	struct fdb *f;
	uint8_t a[6], b[6], c[6];

	CHECK_EQ(fdb_create(&f, 64, 1000), 0);
	mac_of(1, a);
	mac_of(2, b);
	mac_of(3, c);
	CHECK_EQ(fdb_learn(f, a, 0, 1, 100), 0);
	/* Exactly aging_ns old is not yet "older than" the aging time. */
	CHECK_EQ(fdb_lookup(f, a, 0, 1100), 1);
	CHECK_EQ(fdb_lookup(f, a, 0, 1101), -ENOENT);
	/* Expired but not yet swept: still occupies a slot until fdb_age. */
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_age(f, 1100), 0);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_age(f, 1101), 1);
	CHECK_EQ(f->count, 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 1101), -ENOENT);

	/* A refresh restarts the clock; age removes only what is old. */
	CHECK_EQ(fdb_learn(f, a, 0, 1, 2000), 0);
	CHECK_EQ(fdb_learn(f, b, 0, 2, 2000), 0);
	CHECK_EQ(fdb_learn(f, c, 0, 3, 2000), 0);
	CHECK_EQ(fdb_learn(f, b, 0, 2, 2900), 0);
	CHECK_EQ(fdb_lookup(f, b, 0, 3800), 2);
	CHECK_EQ(fdb_age(f, 3800), 2);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_lookup(f, a, 0, 3800), -ENOENT);
	CHECK_EQ(fdb_lookup(f, c, 0, 3800), -ENOENT);
	CHECK_EQ(fdb_lookup(f, b, 0, 3800), 2);
	fdb_destroy(f);

	/* aging_ns 0 disables aging. */
	CHECK_EQ(fdb_create(&f, 64, 0), 0);
	CHECK_EQ(fdb_learn(f, a, 0, 4, 0), 0);
	CHECK_EQ(fdb_lookup(f, a, 0, UINT64_MAX / 2), 4);
	CHECK_EQ(fdb_age(f, UINT64_MAX / 2), 0);
	CHECK_EQ(f->count, 1);
	fdb_destroy(f);
}

/*
 * An expired entry is absent (fdb_lookup says so), so seeing the address
 * again on another port is a new address, not a station move: it must not
 * return 1 or inflate `moves`, which operators read as MAC flapping.
 */
static void test_fdb_relearn_after_aging(void)
{
	struct fdb *f;
	uint8_t a[6];

	CHECK_EQ(fdb_create(&f, 64, 1000), 0);
	mac_of(9, a);
	CHECK_EQ(fdb_learn(f, a, 0, 1, 0), 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 5000), -ENOENT);
	CHECK_EQ(fdb_learn(f, a, 0, 2, 5000), 0);
	CHECK_EQ(f->moves, 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 5000), 2);
	CHECK_EQ(f->count, 1);
	fdb_destroy(f);
}

static void test_fdb_static(void)
{
	struct fdb *f;
	uint8_t a[6], b[6], c[6];

	CHECK_EQ(fdb_create(&f, 64, 1000), 0);
	mac_of(1, a);
	mac_of(2, b);
	mac_of(3, c);
	CHECK_EQ(fdb_add_static(f, a, 0, 4), 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 1ull << 50), 4);
	CHECK_EQ(fdb_age(f, 1ull << 50), 0);
	CHECK_EQ(fdb_lookup(f, a, 0, 1ull << 50), 4);
	/* Learning cannot move a static entry. */
	CHECK_EQ(fdb_learn(f, a, 0, 5, 10), -EPERM);
	CHECK_EQ(fdb_lookup(f, a, 0, 10), 4);
	CHECK_EQ(f->moves, 0);
	CHECK_EQ(fdb_learn(f, a, 0, 4, 10), 0);
	CHECK_EQ(f->count, 1);

	/* Flushing its port keeps the static entry, drops the dynamic one. */
	CHECK_EQ(fdb_learn(f, c, 0, 4, 10), 0);
	fdb_flush_port(f, 4);
	CHECK_EQ(fdb_lookup(f, a, 0, 20), 4);
	CHECK_EQ(fdb_lookup(f, c, 0, 20), -ENOENT);
	CHECK_EQ(f->count, 1);

	/* A dynamic entry made static takes the static port and stops aging. */
	CHECK_EQ(fdb_learn(f, b, 0, 1, 10), 0);
	CHECK_EQ(fdb_add_static(f, b, 0, 2), 0);
	CHECK_EQ(f->count, 2);
	CHECK_EQ(fdb_lookup(f, b, 0, 20), 2);
	CHECK_EQ(fdb_learn(f, b, 0, 1, 30), -EPERM);
	CHECK_EQ(fdb_age(f, 1ull << 40), 0);
	CHECK_EQ(fdb_lookup(f, b, 0, 1ull << 40), 2);
	fdb_flush_port(f, 2);
	CHECK_EQ(fdb_lookup(f, b, 0, 1ull << 40), 2);
	fdb_destroy(f);
}

/* Slot an address lands in when alone in a fresh table: its home slot. */
static int fdb_home_of(uint32_t max_entries, const uint8_t mac[6])
{
	struct fdb *f;
	int home = -1;

	if (fdb_create(&f, max_entries, 0))
		return -1;
	fdb_learn(f, mac, 0, 0, 0);
	for (uint32_t i = 0; i <= f->mask; i++)
		if (f->tab[i].key)
			home = i;
	fdb_destroy(f);
	return home;
}

/*
 * Backward shift moves a static entry into an earlier hole and leaves its
 * old slot empty; an address learned into that slot later must be an
 * ordinary dynamic entry (ages, moves, is flushed), not inherit the static
 * flag of whatever occupied the slot before.
 */
static void test_fdb_slot_reuse_after_shift(void)
{
	uint8_t a[6], b[6];
	uint32_t id = 1;
	int home;
	struct fdb *f;

	mac_of(0, a);
	home = fdb_home_of(8, a);
	/* Find b with the same home slot as a (1 in 16 candidates do). */
	do
		mac_of(id++, b);
	while (fdb_home_of(8, b) != home && id < 100000);
	CHECK(home >= 0);
	CHECK(id < 100000);

	CHECK_EQ(fdb_create(&f, 8, 1000), 0);
	CHECK_EQ(fdb_learn(f, a, 0, 1, 0), 0);          /* slot home */
	CHECK_EQ(fdb_add_static(f, b, 0, 2), 0);        /* slot home+1 */
	CHECK_EQ(fdb_age(f, 5000), 1);                  /* a goes; b shifts back */
	CHECK_EQ(fdb_lookup(f, b, 0, 5000), 2);
	CHECK_EQ(fdb_learn(f, a, 0, 1, 5000), 0);       /* a lands in home+1 */
	CHECK_EQ(f->count, 2);
	/* a is dynamic: it ages, moves and is flushed like any learned address. */
	CHECK_EQ(fdb_lookup(f, a, 0, 7000), -ENOENT);
	CHECK_EQ(fdb_learn(f, a, 0, 3, 5100), 1);
	CHECK_EQ(fdb_lookup(f, a, 0, 5100), 3);
	fdb_flush_port(f, 3);
	CHECK_EQ(fdb_lookup(f, a, 0, 5100), -ENOENT);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_lookup(f, b, 0, 1ull << 40), 2);
	fdb_destroy(f);
}

static void test_fdb_vlans(void)
{
	struct fdb *f;
	uint8_t a[6];

	CHECK_EQ(fdb_create(&f, 64, 0), 0);
	mac_of(5, a);
	CHECK_EQ(fdb_learn(f, a, 1, 1, 0), 0);
	CHECK_EQ(fdb_learn(f, a, 2, 2, 0), 0);
	CHECK_EQ(fdb_learn(f, a, 4095, 3, 0), 0);
	CHECK_EQ(f->moves, 0);
	CHECK_EQ(f->count, 3);
	CHECK_EQ(fdb_lookup(f, a, 1, 0), 1);
	CHECK_EQ(fdb_lookup(f, a, 2, 0), 2);
	CHECK_EQ(fdb_lookup(f, a, 4095, 0), 3);
	CHECK_EQ(fdb_lookup(f, a, 0, 0), -ENOENT);
	CHECK_EQ(fdb_lookup(f, a, 3, 0), -ENOENT);
	fdb_flush_port(f, 1);
	CHECK_EQ(fdb_lookup(f, a, 1, 0), -ENOENT);
	CHECK_EQ(fdb_lookup(f, a, 2, 0), 2);
	CHECK_EQ(fdb_lookup(f, a, 4095, 0), 3);
	CHECK_EQ(f->count, 2);
	fdb_destroy(f);
}

static void test_fdb_max_entries(void)
{
	struct fdb *f;
	uint8_t m[6];

	CHECK_EQ(fdb_create(&f, 4, 0), 0);
	for (uint32_t i = 0; i < 4; i++) {
		mac_of(i, m);
		CHECK_EQ(fdb_learn(f, m, 0, i, 0), 0);
	}
	CHECK_EQ(f->count, 4);
	mac_of(4, m);
	CHECK_EQ(fdb_learn(f, m, 0, 0, 0), -ENOSPC);
	CHECK_EQ(f->learn_full, 1);
	CHECK_EQ(fdb_lookup(f, m, 0, 0), -ENOENT);
	CHECK_EQ(fdb_learn(f, m, 0, 0, 0), -ENOSPC);
	CHECK_EQ(f->learn_full, 2);
	CHECK_EQ(fdb_add_static(f, m, 0, 0), -ENOSPC);
	CHECK_EQ(f->count, 4);
	/* Known addresses still refresh and move when the table is full. */
	mac_of(2, m);
	CHECK_EQ(fdb_learn(f, m, 0, 2, 1), 0);
	CHECK_EQ(fdb_learn(f, m, 0, 3, 1), 1);
	CHECK_EQ(f->learn_full, 2);
	/* Room again after a flush. */
	fdb_flush_port(f, 0);
	CHECK_EQ(f->count, 3);
	mac_of(4, m);
	CHECK_EQ(fdb_learn(f, m, 0, 0, 2), 0);
	CHECK_EQ(fdb_lookup(f, m, 0, 2), 0);
	CHECK_EQ(f->count, 4);
	fdb_destroy(f);
}

static void test_fdb_zero_mac(void)
{
	static const uint8_t zero[6] = { 0 };
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct fdb *f;
	uint32_t found = 0;

	CHECK_EQ(fdb_create(&f, 64, 0), 0);
	CHECK_EQ(fdb_lookup(f, zero, 0, 0), -ENOENT);
	CHECK_EQ(fdb_learn(f, zero, 0, 7, 0), 0);
	CHECK_EQ(fdb_lookup(f, zero, 0, 0), 7);
	CHECK_EQ(fdb_lookup(f, zero, 1, 0), -ENOENT);
	/* Learning it again must find it, not insert a second copy. */
	CHECK_EQ(fdb_learn(f, zero, 0, 7, 1), 0);
	CHECK_EQ(f->count, 1);
	CHECK_EQ(fdb_learn(f, bcast, 4095, 6, 1), 0);
	CHECK_EQ(fdb_lookup(f, bcast, 4095, 1), 6);
	CHECK_EQ(f->count, 2);
	/* The stored key decodes back to the zero MAC on VLAN 0. */
	for (uint32_t i = 0; i <= f->mask; i++) {
		uint8_t m[6];

		if (!f->tab[i].key || f->tab[i].port != 7)
			continue;
		fdb_key_mac(f->tab[i].key, m);
		CHECK_MEM(m, zero, 6);
		CHECK_EQ(fdb_key_vid(f->tab[i].key), 0);
		found++;
	}
	CHECK_EQ(found, 1);
	fdb_flush_port(f, 7);
	CHECK_EQ(fdb_lookup(f, zero, 0, 1), -ENOENT);
	CHECK_EQ(fdb_lookup(f, bcast, 4095, 1), 6);
	CHECK_EQ(f->count, 1);
	fdb_destroy(f);
}

/* Reference model for the churn test: one row per possible address. */
struct fdb_model_ent {
	uint8_t mac[6];
	uint16_t vid;
	bool present, is_static;
	uint16_t port;
	uint64_t last;
};

#define CHURN_NPORTS 6

static void fdb_churn(uint64_t seed, uint32_t max_entries, uint32_t npool, uint32_t nops)
{
	static const uint16_t vids[] = { 0, 1, 4095 };
	const uint64_t aging = 1000;
	struct fdb_model_ent *m = calloc(npool, sizeof(*m));
	uint64_t now = 0, moves = 0, learn_full = 0;
	uint32_t count = 0, nstatic = 0;
	struct fdb *f;
	int fails0 = check_failed_now;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(fdb_create(&f, max_entries, aging), 0);
	rng_seed(seed);
	/* Address 0 is the all-zero MAC on VLAN 0: the key most like "empty". */
	for (uint32_t i = 1; i < npool; i++) {
		mac_of(i, m[i].mac);
		m[i].mac[1] = rng_next();
		m[i].vid = vids[rng_below(3)];
	}

	for (uint32_t op = 0; op < nops; op++) {
		uint32_t r = rng_below(100), k = rng_below(npool);
		uint16_t port = rng_below(CHURN_NPORTS);
		struct fdb_model_ent *e = &m[k];

		now += rng_below(aging / 8);
		if (r < 70) {
			int ret = fdb_learn(f, e->mac, e->vid, port, now);

			if (e->present && e->is_static) {
				CHECK_EQ(ret, e->port == port ? 0 : -EPERM);
			} else if (e->present) {
				bool live = now - e->last <= aging;

				if (e->port == port)
					CHECK_EQ(ret, 0);
				else if (live)
					CHECK_EQ(ret, 1);
				else    /* see test_fdb_relearn_after_aging */
					CHECK(ret == 0 || ret == 1);
				moves += ret == 1;
				e->port = port;
				e->last = now;
			} else if (count >= max_entries) {
				CHECK_EQ(ret, -ENOSPC);
				learn_full++;
			} else {
				CHECK_EQ(ret, 0);
				e->present = true;
				e->is_static = false;
				e->port = port;
				e->last = now;
				count++;
			}
		} else if (r < 72) {
			/* Keep statics few: they never leave, and would fill the table. */
			if (nstatic < max_entries / 4 && !(e->present && e->is_static)) {
				int ret = fdb_add_static(f, e->mac, e->vid, port);

				if (!e->present && count >= max_entries) {
					CHECK_EQ(ret, -ENOSPC);
				} else {
					CHECK_EQ(ret, 0);
					count += !e->present;
					e->present = true;
					e->is_static = true;
					e->port = port;
					nstatic++;
				}
			}
		} else if (r < 88) {
			now += rng_below(aging);
		} else if (r < 95) {
			uint32_t n = 0;

			for (uint32_t i = 0; i < npool; i++)
				if (m[i].present && !m[i].is_static && now - m[i].last > aging) {
					m[i].present = false;
					n++;
				}
			count -= n;
			CHECK_EQ(fdb_age(f, now), n);
		} else {
			for (uint32_t i = 0; i < npool; i++)
				if (m[i].present && !m[i].is_static && m[i].port == port) {
					m[i].present = false;
					count--;
				}
			fdb_flush_port(f, port);
		}

		/* The whole table against the model, after every operation. */
		{
			uint32_t used = 0;

			for (uint32_t i = 0; i <= f->mask; i++)
				used += f->tab[i].key != 0;
			CHECK_EQ(used, count);
		}
		CHECK_EQ(f->count, count);
		CHECK_EQ(f->moves, moves);
		CHECK_EQ(f->learn_full, learn_full);
		for (uint32_t i = 0; i < npool; i++) {
			const struct fdb_model_ent *x = &m[i];
			int want = x->present && (x->is_static || now - x->last <= aging) ?
				   x->port : -ENOENT;

			CHECK_EQ(fdb_lookup(f, x->mac, x->vid, now), want);
		}
		if (check_failed_now != fails0) {
			printf("    churn(seed %" PRIu64 ", max %u, pool %u): first mismatch at op %u\n",
			       seed, max_entries, npool, op);
			break;
		}
	}
	fdb_destroy(f);
	free(m);
}

/*
 * Small tables with heavy collisions make long probe chains that wrap past
 * the end of the table: the cases backward-shift deletion gets wrong.
 */
static void test_fdb_churn(void)
{
	fdb_churn(1, 8, 24, 20000);
	fdb_churn(2, 8, 200, 20000);
	fdb_churn(3, 64, 160, 20000);
	fdb_churn(4, 700, 1500, 4000);
}

/* ---- VOQ ----------------------------------------------------------------- */

static void test_voq_fifo(void)
{
	struct voq *v;

	CHECK_EQ(voq_create(&v, 4, 64, VOQ_SCHED_STRICT), 0);
	CHECK_EQ(voq_head(v, 1, 2, 5), VOQ_NONE);
	CHECK_EQ(voq_pop(v, 1, 2, 5), VOQ_NONE);
	for (uint32_t i = 10; i < 20; i++)
		voq_push(v, 1, 2, 5, i, 100 + i);
	for (uint32_t i = 20; i < 25; i++)
		voq_push(v, 2, 2, 5, i, 60);
	CHECK_EQ(voq_q(v, 1, 2, 5)->frames, 10);
	CHECK_EQ(voq_q(v, 1, 2, 5)->bytes, 10 * 100 + (10 + 19) * 10 / 2);
	CHECK_EQ(voq_head(v, 1, 2, 5), 10);
	for (uint32_t i = 10; i < 20; i++)
		CHECK_EQ(voq_pop(v, 1, 2, 5), i);
	CHECK_EQ(voq_pop(v, 1, 2, 5), VOQ_NONE);
	CHECK_EQ(voq_q(v, 1, 2, 5)->frames, 0);
	CHECK_EQ(voq_q(v, 1, 2, 5)->bytes, 0);
	/* Other queues, even to the same output and priority, are untouched. */
	CHECK_EQ(voq_q(v, 2, 2, 5)->frames, 5);
	CHECK_EQ(voq_head(v, 2, 2, 5), 20);

	/* Refill after empty, interleaved with pops. */
	voq_push(v, 1, 2, 5, 30, 64);
	voq_push(v, 1, 2, 5, 31, 64);
	CHECK_EQ(voq_pop(v, 1, 2, 5), 30);
	voq_push(v, 1, 2, 5, 32, 64);
	CHECK_EQ(voq_pop(v, 1, 2, 5), 31);
	CHECK_EQ(voq_pop(v, 1, 2, 5), 32);
	CHECK_EQ(voq_pop(v, 1, 2, 5), VOQ_NONE);
	voq_push(v, 1, 2, 5, 33, 64);
	CHECK_EQ(voq_head(v, 1, 2, 5), 33);
	CHECK_EQ(voq_pop(v, 1, 2, 5), 33);
	for (uint32_t i = 20; i < 25; i++)
		CHECK_EQ(voq_pop(v, 2, 2, 5), i);
	voq_destroy(v);
}

/* select then pop, returning the input served (or VOQ_NONE). */
static uint32_t voq_serve(struct voq *v, uint32_t out, uint8_t mask, uint32_t *prio,
			  uint32_t *frame)
{
	uint32_t in, p;

	if (!voq_select(v, out, mask, &in, &p))
		return VOQ_NONE;
	if (prio)
		*prio = p;
	*frame = voq_pop(v, in, out, p);
	return in;
}

static void test_voq_rr_inputs(void)
{
	static const uint32_t want_in[] = { 0, 1, 2, 0, 1, 2, 0, 1, 2 };
	struct voq *v;
	uint32_t in, p, fr;

	CHECK_EQ(voq_create(&v, 4, 64, VOQ_SCHED_STRICT), 0);
	for (uint32_t k = 0; k < 3; k++)
		for (uint32_t i = 0; i < 3; i++)
			voq_push(v, i, 3, 2, i * 10 + k, 64);
	/* Selecting without popping leaves the pointer where it is. */
	for (int n = 0; n < 3; n++) {
		CHECK(voq_select(v, 3, 0xff, &in, &p));
		CHECK_EQ(in, 0);
		CHECK_EQ(p, 2);
	}
	for (uint32_t n = 0; n < 9; n++) {
		CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), want_in[n]);
		CHECK_EQ(fr, want_in[n] * 10 + n / 3);
	}
	CHECK(!voq_select(v, 3, 0xff, &in, &p));
	voq_destroy(v);

	/* Empty inputs are skipped; one that becomes backlogged takes its turn. */
	CHECK_EQ(voq_create(&v, 4, 64, VOQ_SCHED_STRICT), 0);
	for (uint32_t k = 0; k < 3; k++) {
		voq_push(v, 0, 3, 2, k, 64);
		voq_push(v, 2, 3, 2, 20 + k, 64);
	}
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 0);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 2);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 0);
	voq_push(v, 1, 3, 2, 10, 64);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 1);
	CHECK_EQ(fr, 10);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 2);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 0);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), 2);
	CHECK_EQ(fr, 22);
	CHECK_EQ(voq_serve(v, 3, 0xff, NULL, &fr), VOQ_NONE);
	voq_destroy(v);
}

static void test_voq_strict(void)
{
	struct voq *v;
	uint32_t in, p, fr;

	CHECK_EQ(voq_create(&v, 3, 64, VOQ_SCHED_STRICT), 0);
	voq_push(v, 1, 0, 0, 1, 64);
	voq_push(v, 1, 0, 0, 2, 64);
	voq_push(v, 2, 0, 7, 3, 64);
	voq_push(v, 2, 0, 7, 4, 64);
	voq_push(v, 1, 0, 3, 5, 64);

	/* prio_mask: a masked (e.g. PFC-paused) priority is passed over. */
	CHECK(voq_select(v, 0, 0x7f, &in, &p));
	CHECK_EQ(p, 3);
	CHECK_EQ(in, 1);
	CHECK(voq_select(v, 0, 0x01, &in, &p));
	CHECK_EQ(p, 0);
	CHECK(voq_select(v, 0, 0x80, &in, &p));
	CHECK_EQ(p, 7);
	CHECK_EQ(in, 2);
	CHECK(!voq_select(v, 0, 0x20, &in, &p));
	CHECK(!voq_select(v, 0, 0x76, &in, &p));
	CHECK(!voq_select(v, 0, 0x00, &in, &p));
	CHECK(!voq_select(v, 1, 0xff, &in, &p));

	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 2);
	CHECK_EQ(p, 7);
	CHECK_EQ(fr, 3);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 2);
	CHECK_EQ(p, 7);
	CHECK_EQ(fr, 4);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 1);
	CHECK_EQ(p, 3);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 1);
	CHECK_EQ(p, 0);
	CHECK_EQ(fr, 1);
	/* Higher priority arriving mid-way goes first. */
	voq_push(v, 0, 0, 6, 6, 64);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 0);
	CHECK_EQ(p, 6);
	CHECK_EQ(fr, 6);
	/* Pausing prio 0 blocks the last frame without losing it. */
	CHECK(!voq_select(v, 0, 0xfe, &in, &p));
	CHECK_EQ(v->out_total[0], 1);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 1);
	CHECK_EQ(p, 0);
	CHECK_EQ(fr, 2);
	CHECK(!voq_select(v, 0, 0xff, &in, &p));
	voq_destroy(v);
}

static void test_voq_rr_prio(void)
{
	struct voq *v;
	uint32_t p, last = VOQ_NONE, fr, n0 = 0, n7 = 0;
	uint32_t seen[VOQ_NPRIO];

	CHECK_EQ(voq_create(&v, 2, 64, VOQ_SCHED_RR), 0);
	for (uint32_t k = 0; k < 4; k++) {
		voq_push(v, 0, 1, 0, k, 64);
		voq_push(v, 0, 1, 7, 10 + k, 64);
	}
	for (int n = 0; n < 8; n++) {
		CHECK_EQ(voq_serve(v, 1, 0xff, &p, &fr), 0);
		CHECK(p == 0 || p == 7);
		CHECK(p != last);
		last = p;
		n0 += p == 0;
		n7 += p == 7;
	}
	CHECK_EQ(n0, 4);
	CHECK_EQ(n7, 4);
	voq_destroy(v);

	/* Three backlogged priorities: each served once in any 3 in a row. */
	CHECK_EQ(voq_create(&v, 2, 64, VOQ_SCHED_RR), 0);
	for (uint32_t k = 0; k < 4; k++) {
		voq_push(v, 1, 0, 1, 10 + k, 64);
		voq_push(v, 1, 0, 4, 20 + k, 64);
		voq_push(v, 1, 0, 6, 30 + k, 64);
	}
	for (int round = 0; round < 3; round++) {
		memset(seen, 0, sizeof(seen));
		for (int n = 0; n < 3; n++) {
			CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 1);
			seen[p & 7]++;
		}
		CHECK_EQ(seen[1], 1);
		CHECK_EQ(seen[4], 1);
		CHECK_EQ(seen[6], 1);
	}
	/* With prio 4 masked the other two alternate and 4 keeps its frame. */
	last = VOQ_NONE;
	voq_push(v, 1, 0, 1, 40, 64);
	voq_push(v, 1, 0, 6, 41, 64);
	for (int n = 0; n < 4; n++) {
		CHECK_EQ(voq_serve(v, 0, 0xef, &p, &fr), 1);
		CHECK(p == 1 || p == 6);
		CHECK(p != last);
		last = p;
	}
	CHECK_EQ(voq_q(v, 1, 0, 4)->frames, 1);
	CHECK_EQ(voq_serve(v, 0, 0xef, &p, &fr), VOQ_NONE);
	CHECK_EQ(voq_serve(v, 0, 0xff, &p, &fr), 1);
	CHECK_EQ(p, 4);
	voq_destroy(v);
}

#define VC_NPORTS 4
#define VC_NFRAMES 256
#define VC_NQ (VC_NPORTS * VC_NPORTS * VOQ_NPRIO)

/* Model: a plain ring per queue. */
struct vc_model {
	uint32_t ring[VC_NQ][VC_NFRAMES];
	uint32_t head[VC_NQ], n[VC_NQ];
	uint64_t bytes[VC_NQ];
	uint16_t len[VC_NFRAMES];
	uint32_t free_list[VC_NFRAMES], nfree;
};

static uint32_t vc_qi(uint32_t in, uint32_t out, uint32_t p)
{
	return (in * VC_NPORTS + out) * VOQ_NPRIO + p;
}

static void vc_check(const struct voq *v, const struct vc_model *m)
{
	for (uint32_t out = 0; out < VC_NPORTS; out++) {
		uint32_t total = 0;

		for (uint32_t p = 0; p < VOQ_NPRIO; p++) {
			uint32_t fr = 0;
			uint64_t by = 0;

			for (uint32_t in = 0; in < VC_NPORTS; in++) {
				uint32_t qi = vc_qi(in, out, p);
				const struct voq_q *q = voq_q(v, in, out, p);

				CHECK_EQ(q->frames, m->n[qi]);
				CHECK_EQ(q->bytes, m->bytes[qi]);
				CHECK_EQ(voq_head(v, in, out, p),
					 m->n[qi] ? m->ring[qi][m->head[qi]] : VOQ_NONE);
				fr += m->n[qi];
				by += m->bytes[qi];
			}
			CHECK_EQ(v->out_frames[out * VOQ_NPRIO + p], fr);
			CHECK_EQ(v->out_bytes[out * VOQ_NPRIO + p], by);
			total += fr;
		}
		CHECK_EQ(v->out_total[out], total);
	}
}

static void vc_pop(struct voq *v, struct vc_model *m, uint32_t in, uint32_t out, uint32_t p)
{
	uint32_t qi = vc_qi(in, out, p), got = voq_pop(v, in, out, p);

	if (!m->n[qi]) {
		CHECK_EQ(got, VOQ_NONE);
		return;
	}
	CHECK_EQ(got, m->ring[qi][m->head[qi]]);
	m->bytes[qi] -= m->len[m->ring[qi][m->head[qi]]];
	m->free_list[m->nfree++] = m->ring[qi][m->head[qi]];
	m->head[qi] = (m->head[qi] + 1) % VC_NFRAMES;
	m->n[qi]--;
}

static void voq_counters_run(enum voq_sched sched, uint64_t seed)
{
	struct vc_model *m = calloc(1, sizeof(*m));
	int fails0 = check_failed_now;
	struct voq *v;

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_EQ(voq_create(&v, VC_NPORTS, VC_NFRAMES, sched), 0);
	for (uint32_t i = 0; i < VC_NFRAMES; i++)
		m->free_list[m->nfree++] = VC_NFRAMES - 1 - i;
	rng_seed(seed);
	for (uint32_t op = 0; op < 30000; op++) {
		uint32_t r = rng_below(100);
		uint32_t in = rng_below(VC_NPORTS), out = rng_below(VC_NPORTS);
		uint32_t p = rng_below(VOQ_NPRIO);

		if (r < 50 && m->nfree) {
			uint32_t fr = m->free_list[--m->nfree], qi = vc_qi(in, out, p);
			uint16_t len = 60 + rng_below(1455);

			m->len[fr] = len;
			m->ring[qi][(m->head[qi] + m->n[qi]) % VC_NFRAMES] = fr;
			m->n[qi]++;
			m->bytes[qi] += len;
			voq_push(v, in, out, p, fr, len);
		} else if (r < 85) {
			uint8_t mask = rng_below(4) ? 0xff : rng_next();
			uint32_t sin, sp, top = VOQ_NONE;
			bool any = false;

			for (uint32_t pp = 0; pp < VOQ_NPRIO; pp++)
				for (uint32_t ii = 0; ii < VC_NPORTS; ii++)
					if ((mask >> pp & 1) && m->n[vc_qi(ii, out, pp)]) {
						any = true;
						top = pp;
					}
			if (voq_select(v, out, mask, &sin, &sp)) {
				CHECK(any);
				CHECK(mask >> sp & 1);
				CHECK(m->n[vc_qi(sin, out, sp)] > 0);
				if (sched == VOQ_SCHED_STRICT)
					CHECK_EQ(sp, top);
				vc_pop(v, m, sin, out, sp);
			} else {
				CHECK(!any);
			}
		} else {
			vc_pop(v, m, in, out, p);
		}
		vc_check(v, m);
		if (check_failed_now != fails0) {
			printf("    voq counters(sched %d): first mismatch at op %u\n", sched, op);
			break;
		}
	}
	voq_destroy(v);
	free(m);
}

static void test_voq_counters(void)
{
	voq_counters_run(VOQ_SCHED_STRICT, 11);
	voq_counters_run(VOQ_SCHED_RR, 12);
}

struct drain_ctx {
	uint32_t seen[1000];
	uint32_t in_of[1000];
	uint32_t calls, wrong_in;
};

static void drain_cb(void *ctx, uint32_t frame, uint32_t in)
{
	struct drain_ctx *d = ctx;

	d->calls++;
	if (frame >= 1000)
		return;
	d->seen[frame]++;
	d->wrong_in += d->in_of[frame] != in;
}

static void test_voq_drain(void)
{
	static struct drain_ctx d;
	struct voq *v;
	uint32_t in, p, once = 0;

	CHECK_EQ(voq_create(&v, 5, 1000, VOQ_SCHED_RR), 0);
	rng_seed(21);
	for (uint32_t fr = 0; fr < 1000; fr++) {
		d.in_of[fr] = rng_below(5);
		voq_push(v, d.in_of[fr], rng_below(5), rng_below(VOQ_NPRIO), fr, 64 + fr);
	}
	voq_drain(v, drain_cb, &d);
	CHECK_EQ(d.calls, 1000);
	CHECK_EQ(d.wrong_in, 0);
	for (uint32_t fr = 0; fr < 1000; fr++)
		once += d.seen[fr] == 1;
	CHECK_EQ(once, 1000);
	for (uint32_t out = 0; out < 5; out++) {
		CHECK_EQ(v->out_total[out], 0);
		CHECK(!voq_select(v, out, 0xff, &in, &p));
		for (uint32_t pp = 0; pp < VOQ_NPRIO; pp++) {
			CHECK_EQ(v->out_frames[out * VOQ_NPRIO + pp], 0);
			CHECK_EQ(v->out_bytes[out * VOQ_NPRIO + pp], 0);
		}
	}
	/* Still usable afterwards. */
	voq_push(v, 4, 0, 3, 999, 64);
	CHECK(voq_select(v, 0, 0xff, &in, &p));
	CHECK_EQ(in, 4);
	CHECK_EQ(p, 3);
	CHECK_EQ(voq_pop(v, 4, 0, 3), 999);
	voq_destroy(v);
}

/* ---- Wire clock ---------------------------------------------------------- */

static void test_wclock_unlimited(void)
{
	struct wclock c;

	wclock_init(&c, 0, 65536, 24);
	CHECK(wclock_ready(&c, 0));
	for (int i = 0; i < 10000; i++) {
		CHECK(wclock_ready(&c, 0));
		wclock_charge(&c, 1500);
	}
	CHECK(wclock_ready(&c, 0));
	CHECK(wclock_ready(&c, UINT64_MAX / 2));
	CHECK_EQ(wclock_tx_ns(&c, 1500), 0);

	/* Serialisation time sanity at a real rate: 1524 B at 1 Gb/s. */
	wclock_init(&c, 1000000000ull, 0, 24);
	CHECK_EQ(wclock_tx_ns(&c, 1500), 12192);
	wclock_init(&c, 10000000000ull, 0, 0);
	CHECK_EQ(wclock_tx_ns(&c, 64), 51);     /* 51.2 ns, truncated */
}

/* Frames that leave back to back at one instant after a long idle. */
static uint32_t wclock_burst_at(struct wclock *c, uint64_t now, uint32_t len)
{
	uint32_t n = 0;

	while (wclock_ready(c, now) && n < 1000000) {
		wclock_charge(c, len);
		n++;
	}
	return n;
}

static void test_wclock_idle_burst(void)
{
	static const uint64_t rates[] = { 1000000ull, 100000000ull, 1000000000ull, 10000000000ull };
	static const uint32_t lens[] = { 64, 1500 };
	struct wclock c;
	uint64_t now = 5000000000ull;
	uint32_t n;

	/* Worked case: 3000 B of burst at 1 Gb/s with 1524 B wire frames is two frames. */
	wclock_init(&c, 1000000000ull, 3000, 24);
	n = wclock_burst_at(&c, now, 1500);
	CHECK_EQ(n, 2);
	CHECK(!wclock_ready(&c, now + 1));
	/* Then one frame per 12192 ns, exactly when the wire is free. */
	now = wclock_next(&c);
	CHECK(!wclock_ready(&c, now - 1));
	CHECK_EQ(wclock_burst_at(&c, now, 1500), 1);
	CHECK_EQ(wclock_next(&c), now + 12192);
	/* Idle credit does not accumulate beyond the burst. */
	CHECK_EQ(wclock_burst_at(&c, now + 100000000000ull, 1500), 2);

	for (size_t ri = 0; ri < sizeof(rates) / sizeof(rates[0]); ri++)
		for (size_t li = 0; li < 2; li++)
			for (uint64_t burst = 0; burst <= 100000; burst = burst ? burst * 10 : 1000) {
				uint64_t wb = lens[li] + 24;

				wclock_init(&c, rates[ri], burst, 24);
				/* Some traffic first, so a carried remainder is in play. */
				for (int i = 0; i < 7; i++) {
					wclock_ready(&c, 1000 + i);
					wclock_charge(&c, lens[li]);
				}
				now = wclock_next(&c) + 3600000000000ull;
				n = wclock_burst_at(&c, now, lens[li]);
				CHECK(n * wb <= burst + wb);
				/* ...and the burst is really granted (to within 1 ns of rounding). */
				CHECK(n * wb + 3 >= burst);
				CHECK(n >= 1);
			}
}

struct wsim {
	uint64_t frames, bytes, t_end;
	double max_excess;      /* bytes over rate*window + burst + frame; must be <= 0 */
};

/*
 * A backlogged sender woken at jittered times sends everything the clock
 * allows. Every window [t_j, t_k] between two sends must satisfy
 *   bytes(j..k) <= rate*(t_k - t_j) + burst + frame,
 * i.e. X_k - Y_j <= burst + frame with X_k = B_k - rate*t_k and
 * Y_j = B_{j-1} - rate*t_j; keeping min Y checks all windows in O(1) memory
 * (a full send log at 10 Gb/s with 64 B frames would be hundreds of MB).
 * Units are bit-ns (bytes*8e9 vs rate*ns), in 128 bits: 1 s at 10 Gb/s
 * is 1e19, past int64. The bound gets one extra nanosecond of wire time
 * (1.25 B at 10 Gb/s): t_free is whole ns with the fraction in `rem`, and
 * "t_free <= now" lets a frame start up to 1 ns before the exact free time.
 */
static void wclock_sim(uint64_t rate, uint32_t len, uint32_t overhead, uint64_t burst,
		       uint64_t seed, struct wsim *s)
{
	const uint64_t wb = len + overhead;
	const __int128 G8 = 8000000000;
	uint64_t t_min = 1000000000ull, now, cap;
	__int128 bsent = 0, min_y = 0, worst = 0;
	bool first = true;
	struct wclock c;

	wclock_init(&c, rate, burst, overhead);
	/* Long enough for >= 10,000 frames at low rates. */
	if (wclock_tx_ns(&c, len) * 10100 > t_min)
		t_min = wclock_tx_ns(&c, len) * 10100;
	/* A broken clock that is always ready must fail, not hang the suite. */
	cap = 2 * (t_min / 8 * (rate / 1000000) / 1000 / wb) + 1000000;
	rng_seed(seed);
	now = rng_below(200001);
	memset(s, 0, sizeof(*s));
	for (;;) {
		while (wclock_ready(&c, now) && s->frames < cap) {
			__int128 y = bsent * G8 - (__int128)rate * now, x;

			if (first || y < min_y)
				min_y = y;
			first = false;
			wclock_charge(&c, len);
			bsent += wb;
			s->frames++;
			x = bsent * G8 - (__int128)rate * now;
			if (x - min_y > worst)
				worst = x - min_y;
		}
		if (now >= t_min || s->frames >= cap)
			break;
		now += rng_below(200001);
	}
	s->t_end = now;
	s->bytes = (uint64_t)bsent;
	s->max_excess = (double)(worst - (__int128)(burst + wb) * G8 - rate) / 8e9;
}

/* One simulated run; on failure say which one, since the loop runs 90. */
static void wclock_run(uint64_t rate, uint32_t len, uint32_t overhead, uint64_t burst,
		       uint64_t seed, bool check_rate)
{
	int fails0 = check_failed_now;
	struct wsim s;
	double got;

	wclock_sim(rate, len, overhead, burst, seed, &s);
	got = (double)s.bytes * 8e9 / (double)s.t_end;
	CHECK(s.max_excess <= 0);
	if (check_rate) {
		CHECK(s.frames >= 10000);
		CHECK_NEAR(got / (double)rate, 1.0, 0.001);
	}
	if (check_failed_now != fails0)
		printf("    rate %" PRIu64 " len %u overhead %u burst %" PRIu64 " B: frames %"
		       PRIu64 ", achieved %.7g bps, worst window excess %.2f B\n",
		       rate, len, overhead, burst, s.frames, got, s.max_excess);
}

/* After a hold (PAUSE, no credits) the wire resumes at line rate from the
 * hold's end: no burst for the held time, but lateness after it is caught up. */
static void test_wclock_resume_after_hold(void)
{
	const uint64_t t = 1000000000ull;       /* the hold ended at 1 s */
	struct wclock c;
	int n;

	/* 100M, 500 us burst (6250 bytes), 1250-byte frames = 100 us each. */
	for (int resume = 0; resume < 2; resume++) {
		wclock_init(&c, 100000000ull, 6250, 0);
		if (resume)
			wclock_resume(&c, t);
		/* The daemon looks 250 us after the hold ended. */
		for (n = 0; wclock_ready(&c, t + 250000) && n < 100; n++)
			wclock_charge(&c, 1250);
		/* Held: frames at t, t+100, t+200 us (3: the wire really was
		 * free from t). Idle (no hold): catch-up of the 500 us burst:
		 * frames from t - 250 us to t + 250 us. */
		CHECK_EQ(n, resume ? 3 : 6);
	}
	/* A resume in the past of the clock changes nothing. */
	wclock_init(&c, 100000000ull, 6250, 0);
	wclock_resume(&c, t);
	wclock_charge(&c, 1250);
	wclock_resume(&c, t + 50000);
	CHECK_EQ(wclock_next(&c), t + 100000);
}

/*
 * Wire time lost. A backlogged wire (frames waiting when each pass ends)
 * that is polled when it frees loses nothing; polled D late it catches up
 * its burst and loses exactly D - burst; idle (nothing waiting) a late poll
 * is idle time, not a loss; held by a PAUSE that ends at t and noticed at
 * t + D, it loses D - burst from the hold's end, not from before it.
 */

/* One pass at now: send while the wire takes frames, then say backlogged. */
static uint32_t wclock_pass(struct wclock *c, uint64_t now, uint32_t len, bool backlog)
{
	uint32_t n = 0;

	while (wclock_ready(c, now) && n < 1000) {
		wclock_charge(c, len);
		n++;
	}
	wclock_backlog(c, backlog);
	return n;
}

static void test_wclock_lost(void)
{
	/* 10M, 3000-byte burst (2.4 ms), 1000 + 24-byte frames (819.2 us each). */
	const uint64_t d = 200000000ull, burst = 2400000;
	uint64_t now = 1000000000ull;
	struct wclock c;

	wclock_init(&c, 10000000ull, 3000, 24);
	CHECK_EQ(c.burst_ns, burst);
	/* On time, for 100 frames: nothing lost. */
	for (int i = 0; i < 100; i++) {
		wclock_pass(&c, now, 1000, true);
		now = wclock_next(&c);
	}
	CHECK_EQ(c.lost_ns, 0);
	CHECK_EQ(c.late_events, 0);
	/* Late by the burst exactly: caught up, nothing lost. */
	now += burst;
	CHECK(wclock_pass(&c, now, 1000, true) > 1);
	CHECK_EQ(c.lost_ns, 0);
	/* Late by D: D - burst, to the nanosecond. */
	now = wclock_next(&c) + d;
	wclock_pass(&c, now, 1000, true);
	CHECK_EQ(c.lost_ns, d - burst);
	CHECK_EQ(c.late_events, 1);
	CHECK_EQ(c.lost_max_ns, d - burst);
	/* Idle: the same lateness is no loss. */
	now = wclock_next(&c);
	wclock_pass(&c, now, 1000, false);
	now = wclock_next(&c) + d;
	wclock_pass(&c, now, 1000, true);
	CHECK_EQ(c.lost_ns, d - burst);
	CHECK_EQ(c.late_events, 1);
	/* A shorter loss adds up but leaves the largest. */
	now = wclock_next(&c) + burst + 1000;
	wclock_pass(&c, now, 1000, true);
	CHECK_EQ(c.lost_ns, d - burst + 1000);
	CHECK_EQ(c.late_events, 2);
	CHECK_EQ(c.lost_max_ns, d - burst);

	/* A PAUSE from long before: the wire's schedule is 1 s old when the
	 * hold ends at t; noticed at t + D, the loss runs from t. */
	{
		uint64_t t = now + 1000000000ull;

		memset(&c, 0, sizeof(c));
		wclock_init(&c, 10000000ull, 3000, 24);
		wclock_pass(&c, now, 1000, true);       /* then held, backlogged */
		wclock_resume(&c, t);
		wclock_pass(&c, t + d, 1000, true);
		CHECK_EQ(c.lost_ns, d - burst);
		/* Noticed within the burst: nothing. */
		wclock_resume(&c, t + 2 * d);
		wclock_pass(&c, t + 2 * d + burst, 1000, true);
		CHECK_EQ(c.lost_ns, d - burst);
	}

	/* A carried fraction: 1500 + 24 bytes at 7M is 1741714.29 ns; late
	 * by D from wclock_next, still D - burst. */
	memset(&c, 0, sizeof(c));
	wclock_init(&c, 7000000ull, 3000, 24);
	now = 5000000000ull;
	wclock_pass(&c, now, 1500, true);
	CHECK(c.rem != 0);
	wclock_pass(&c, wclock_next(&c) + d, 1500, true);
	CHECK_EQ(c.lost_ns, d - c.burst_ns);

	/* A new rate (a reload) keeps the counters and is not a late pass. */
	wclock_init(&c, 10000000ull, 3000, 24);
	CHECK_EQ(c.lost_ns, d - 3000ull * 8 * 1000000000 / 7000000);
	CHECK(!c.backlog);
	wclock_pass(&c, now + 10 * d, 1000, true);
	CHECK_EQ(c.late_events, 1);
}

static void test_wclock_rate(void)
{
	static const uint64_t rates[] = { 1000000ull, 10000000ull, 100000000ull,
					  1000000000ull, 10000000000ull };
	static const uint32_t lens[] = { 64, 512, 1500 };
	static const uint32_t ovhs[] = { 0, 24 };
	uint64_t seed = 100;

	for (size_t ri = 0; ri < 5; ri++)
		for (size_t li = 0; li < 3; li++)
			for (size_t oi = 0; oi < 2; oi++) {
				uint64_t rate = rates[ri];

				/* Burst covers the longest wake-up gap (250 us > 200 us),
				 * so a late wake-up never costs the wire its turn. */
				wclock_run(rate, lens[li], ovhs[oi], (rate * 250 / 1000000 + 7) / 8,
					   seed++, true);
				/* A burst shorter than the jitter (none, or 50 us) makes
				 * the clock pull up often; the window bound must still
				 * hold, but jitter then costs rate by design. */
				wclock_run(rate, lens[li], ovhs[oi], 0, seed++, false);
				wclock_run(rate, lens[li], ovhs[oi], (rate * 50 / 1000000 + 7) / 8,
					   seed++, false);
			}
}

int main(void)
{
	RUN(test_fdb_learn_lookup);
	RUN(test_fdb_move);
	RUN(test_fdb_aging);
	RUN(test_fdb_relearn_after_aging);
	RUN(test_fdb_static);
	RUN(test_fdb_slot_reuse_after_shift);
	RUN(test_fdb_vlans);
	RUN(test_fdb_max_entries);
	RUN(test_fdb_zero_mac);
	RUN(test_fdb_churn);
	RUN(test_voq_fifo);
	RUN(test_voq_rr_inputs);
	RUN(test_voq_strict);
	RUN(test_voq_rr_prio);
	RUN(test_voq_counters);
	RUN(test_voq_drain);
	RUN(test_wclock_unlimited);
	RUN(test_wclock_idle_burst);
	RUN(test_wclock_rate);
	RUN(test_wclock_resume_after_hold);
	RUN(test_wclock_lost);
	return check_summary();
}
