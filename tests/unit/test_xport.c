// SPDX-License-Identifier: BSD-2-Clause
/*
 * A port's receive queues without a kernel: the queue selection (rx_queues,
 * queue), the start-up description, and the RX path over several RX rings
 * built in memory the way the kernel lays them out (producer and consumer
 * words, a descriptor array), so xport_rx_peek/xport_rx_done run on them
 * as on real sockets:
 *  - a pass takes at most `batch` frames from the port, whichever queues
 *    they came by, and the queue it starts at moves on each pass, so a
 *    busy queue cannot starve the others;
 *  - a hold (the input buffer full) leaves exactly the frames not taken in
 *    their rings, in order, to be taken next;
 *  - the frame accounting follows each queue: xport_check() balances, and
 *    catches a port count that disagrees with its queues'.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "xport.h"

/* ---- queue selection ------------------------------------------------------ */

static void test_qsel_parse(void)
{
	struct xport_qsel s;

	CHECK_EQ(xport_qsel_parse("all", &s), 0);
	CHECK(s.all);
	CHECK_EQ(xport_qsel_parse("4", &s), 0);
	CHECK(!s.all);
	CHECK_EQ(s.first, 4);
	CHECK_EQ(xport_qsel_parse("0,2", &s), 0);
	CHECK_EQ(s.first, 0);
	CHECK_EQ(s.mask, 0x5);
	CHECK_EQ(xport_qsel_parse("1-3,6", &s), 0);
	CHECK_EQ(s.mask, 0x4e);
	CHECK_EQ(xport_qsel_parse("2-2", &s), 0);
	CHECK_EQ(s.mask, 0x4);
	CHECK_EQ(xport_qsel_parse("63", &s), 0);
	CHECK_EQ(s.first, 63);
	CHECK_EQ(xport_qsel_parse("64", &s), 0);
	CHECK_EQ(s.first, 64);
	CHECK_EQ(xport_qsel_parse("0-63", &s), 0);
	CHECK_EQ(s.mask, ~0ull);
	/* Nothing, out of range, backwards, dangling, signs. */
	static const char *const bad[] = { "", "0", "65", "0-64", "3-1", "1,", ",1", "1-",
					   "-1", "+2", "a", "1,,2", "all,1", " 1", "1 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (xport_qsel_parse(bad[i], &s) != -EINVAL) {
			printf("    \"%s\" parsed\n", bad[i]);
			check_failed_now++;
		}
	}
}

static void test_qsel_resolve(void)
{
	struct xport_qsel s;
	uint64_t m;

	xport_qsel_parse("all", &s);
	CHECK_EQ(xport_qsel_resolve(&s, 4, &m), 0);
	CHECK_EQ(m, 0xf);
	CHECK_EQ(xport_qsel_resolve(&s, 1, &m), 0);
	CHECK_EQ(m, 0x1);
	/* The XSKMAP has 64 slots: a bigger NIC's first 64. */
	CHECK_EQ(xport_qsel_resolve(&s, 96, &m), 0);
	CHECK_EQ(m, ~0ull);
	/* A count past the interface's is all it has. */
	xport_qsel_parse("8", &s);
	CHECK_EQ(xport_qsel_resolve(&s, 4, &m), 0);
	CHECK_EQ(m, 0xf);
	xport_qsel_parse("2", &s);
	CHECK_EQ(xport_qsel_resolve(&s, 4, &m), 0);
	CHECK_EQ(m, 0x3);
	/* A queue named that the interface lacks is an error naming it. */
	xport_qsel_parse("1,5-6", &s);
	CHECK_EQ(xport_qsel_resolve(&s, 4, &m), -ERANGE);
	CHECK_EQ(m, 0x60);
	s = xport_qsel_one(3);
	CHECK_EQ(xport_qsel_resolve(&s, 4, &m), 0);
	CHECK_EQ(m, 0x8);
	CHECK_EQ(xport_qsel_resolve(&s, 1, &m), -ERANGE);
}

static void test_describe(void)
{
	struct xport p = { .nq_if = 4, .nq = 4, .qmask = 0xf };
	char buf[256];

	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "4 rx queues, a socket on each"));
	p = (struct xport){ .nq_if = 1, .nq = 1, .qmask = 0x1 };
	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "1 rx queue, a socket on it"));
	p = (struct xport){ .nq_if = 4, .nq = 1, .qmask = 0x1 };
	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "4 rx queues, socket on queue 0 only: queues 1-3 drop (no_socket)"));
	p = (struct xport){ .nq_if = 8, .nq = 3, .qmask = 0x13, .fallback_pass = true };
	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "8 rx queues, sockets on queues 0-1,4: queues 2-3,5-7 go to the "
			   "kernel stack (no_socket)"));
	p = (struct xport){ .nq_if = 2, .nq = 1, .qmask = 0x2 };
	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "2 rx queues, socket on queue 1 only: queue 0 drop (no_socket)"));
	p = (struct xport){ .nq_if = 70, .nq = 64, .qmask = ~0ull };
	xport_queues_describe(&p, buf, sizeof(buf));
	CHECK(!strcmp(buf, "70 rx queues, sockets on queues 0-63: queues 64-69 drop (no_socket)"));
}

/* ---- RX rings in memory ------------------------------------------------------ */

#define RING 16
#define NQ 3

struct fake_ring {
	uint32_t prod, cons;
	struct xdp_desc desc[RING];
};

static struct fake_ring rings[NQ];
static struct xport_rxq qs[NQ];
static struct xport port;
static struct xport *ports[1] = { &port };
static struct umem *um;

static void rings_init(void)
{
	memset(rings, 0, sizeof(rings));
	memset(qs, 0, sizeof(qs));
	memset(&port, 0, sizeof(port));
	if (!um)
		CHECK_EQ(umem_create(&um, 256, 2048, 0), 0);
	um->held = 0;
	um->nfree = um->nframes;
	for (uint32_t i = 0; i < um->nframes; i++)
		um->free[i] = um->nframes - 1 - i;
	for (int q = 0; q < NQ; q++) {
		struct xsk_ring_cons *r = &qs[q].rx;

		r->mask = RING - 1;
		r->size = RING;
		r->producer = &rings[q].prod;
		r->consumer = &rings[q].cons;
		r->ring = rings[q].desc;
		qs[q].queue = (uint32_t)q;
		qs[q].fd = -1;
	}
	port.umem = um;
	port.q = qs;
	port.nq = NQ;
	port.nq_if = NQ;
	port.qmask = (1u << NQ) - 1;
	port.ring_size = RING;
	port.fd = -1;
}

/* The kernel puts n frames on queue q: each from the free pool (as if
 * through the fill ring), its length saying where it came from. */
static void arrive(int q, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct fake_ring *r = &rings[q];
		uint32_t idx = um->free[--um->nfree];

		r->desc[r->prod & (RING - 1)] = (struct xdp_desc){
			.addr = umem_addr(um, idx), .len = 100 * (uint32_t)(q + 1) + (r->prod & 0x3f) };
		r->prod++;
		qs[q].fill_out++;
		port.fill_out++;
	}
}

/* The daemon is done with frames it took: back to the pool. */
static void consume(const struct xdp_desc *d, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		umem_free(um, umem_idx(um, d[i].addr));
}

/* Which queue a descriptor came by (arrive's lengths). */
static int from(const struct xdp_desc *d) { return (int)(d->len / 100) - 1; }

static void test_rx_batch_rotates(void)
{
	struct xdp_desc d[64];
	uint32_t n, per[NQ];

	rings_init();
	arrive(0, 12);
	arrive(1, 5);
	/* Pass 1 starts at queue 0: the batch of 8 all from it. */
	n = xport_rx_peek(&port, d, 8);
	CHECK_EQ(n, 8);
	for (uint32_t i = 0; i < n; i++)
		CHECK_EQ(from(&d[i]), 0);
	xport_rx_done(&port, n);
	consume(d, n);
	CHECK_EQ(xport_check(um, ports, 1), 0);
	/* Pass 2 starts at queue 1: its 5, then queue 2 (none), then 3 of
	 * queue 0's 4 left. */
	n = xport_rx_peek(&port, d, 8);
	CHECK_EQ(n, 8);
	memset(per, 0, sizeof(per));
	for (uint32_t i = 0; i < n; i++)
		per[from(&d[i])]++;
	CHECK_EQ(from(&d[0]), 1);
	CHECK_EQ(per[1], 5);
	CHECK_EQ(per[0], 3);
	xport_rx_done(&port, n);
	consume(d, n);
	/* Queue 0's last one; the rings are then empty. */
	n = xport_rx_peek(&port, d, 8);
	CHECK_EQ(n, 1);
	xport_rx_done(&port, n);
	consume(d, n);
	CHECK_EQ(xport_rx_peek(&port, d, 8), 0);
	xport_rx_done(&port, 0);
	CHECK_EQ(port.fill_out, 0);
	CHECK_EQ(rings[0].cons, 12);
	CHECK_EQ(rings[1].cons, 5);
	CHECK_EQ(xport_check(um, ports, 1), 0);
}

/* Every queue busy for ever: over NQ passes each gives a whole batch. */
static void test_rx_no_starvation(void)
{
	struct xdp_desc d[64];
	uint32_t got[NQ] = { 0 };

	rings_init();
	for (int pass = 0; pass < 3 * NQ; pass++) {
		uint32_t n;

		for (int q = 0; q < NQ; q++)
			arrive(q, RING - (rings[q].prod - rings[q].cons));
		n = xport_rx_peek(&port, d, 4);
		CHECK_EQ(n, 4);
		for (uint32_t i = 0; i < n; i++)
			got[from(&d[i])]++;
		xport_rx_done(&port, n);
		consume(d, n);
	}
	for (int q = 0; q < NQ; q++)
		CHECK_EQ(got[q], 3 * 4);
	CHECK_EQ(xport_check(um, ports, 1), 0);
}

/* The daemon takes a prefix (its buffer filled up): the rest stay in
 * their rings, in order, and come first from those rings next time. */
static void test_rx_hold(void)
{
	struct xdp_desc d[64], again[64];
	uint32_t n, m;

	rings_init();
	arrive(0, 2);
	arrive(1, 5);
	arrive(2, 3);
	n = xport_rx_peek(&port, d, 16);
	CHECK_EQ(n, 10);
	/* Taken: queue 0's 2 and queue 1's first. */
	xport_rx_done(&port, 3);
	consume(d, 3);
	CHECK_EQ(rings[0].cons, 2);
	CHECK_EQ(rings[1].cons, 1);
	CHECK_EQ(rings[2].cons, 0);
	CHECK_EQ(qs[0].fill_out, 0);
	CHECK_EQ(qs[1].fill_out, 4);
	CHECK_EQ(qs[2].fill_out, 3);
	CHECK_EQ(um->held, 0);
	CHECK_EQ(xport_check(um, ports, 1), 0);
	/* Nothing taken at all: everything stays. */
	m = xport_rx_peek(&port, again, 16);
	CHECK_EQ(m, 7);
	xport_rx_done(&port, 0);
	CHECK_EQ(rings[1].cons, 1);
	CHECK_EQ(rings[2].cons, 0);
	/* Then all: queue 1's four in their order, queue 2's three. */
	m = xport_rx_peek(&port, again, 16);
	CHECK_EQ(m, 7);
	{
		uint32_t k1 = 0, k2 = 0;

		for (uint32_t i = 0; i < m; i++) {
			if (from(&again[i]) == 1)
				CHECK_EQ(again[i].addr, d[3 + k1++].addr);
			else
				CHECK_EQ(again[i].addr, d[7 + k2++].addr);
		}
		CHECK_EQ(k1, 4);
		CHECK_EQ(k2, 3);
	}
	xport_rx_done(&port, m);
	consume(again, m);
	CHECK_EQ(port.fill_out, 0);
	CHECK_EQ(xport_check(um, ports, 1), 0);
}

/* The port's count is its queues' sum, or a frame is lost between rings. */
static void test_check_per_queue(void)
{
	rings_init();
	arrive(0, 3);
	arrive(2, 2);
	CHECK_EQ(xport_check(um, ports, 1), 0);
	/* A queue claims a frame the port does not count. */
	qs[1].fill_out++;
	CHECK_EQ(xport_check(um, ports, 1), -EUCLEAN);
	qs[1].fill_out--;
	CHECK_EQ(xport_check(um, ports, 1), 0);
	/* The port counts one no queue holds. */
	port.fill_out++;
	um->nfree--;
	CHECK_EQ(xport_check(um, ports, 1), -EUCLEAN);
	port.fill_out--;
	um->nfree++;
	CHECK_EQ(xport_check(um, ports, 1), 0);
}

int main(void)
{
	log_init("test_xport", LOG_LVL_ERR);
	RUN(test_qsel_parse);
	RUN(test_qsel_resolve);
	RUN(test_describe);
	RUN(test_rx_batch_rotates);
	RUN(test_rx_no_starvation);
	RUN(test_rx_hold);
	RUN(test_check_per_queue);
	umem_destroy(um);
	return check_summary();
}
