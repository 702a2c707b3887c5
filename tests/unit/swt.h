/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * switchd's core in virtual time for the unit tests: a core made with
 * sw_core_create() from a config's text over a frame pool without sockets,
 * frames fed with sw_rx_frame(), time moved by hand, every emitted frame
 * recorded by vt.h's sink. Shared by test_switch_core.c and the schemes'
 * own tests (test_switch_ibcc.c).
 */
#ifndef L2CC_TEST_SWT_H
#define L2CC_TEST_SWT_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "vt.h"
#include "../../switchd/switch_private.h"

/* Hosts, by vt_mac id. */
enum { H_A = 10, H_B = 11, H_R = 20, H_V = 30, H_C = 12 };

struct swt {
	struct sw_cfg cfg;
	struct umem *u;
	struct vt_sink k;
	struct sw *s;
};

static inline int swt_create_(struct swt *t, const char *conf)
{
	char path[] = "/tmp/l2cc-swt-XXXXXX", err[512];
	uint8_t macs[SW_MAX_PORTS][6];
	uint32_t mtus[SW_MAX_PORTS];
	struct dp_sink sink;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = vt_conf_file(path, conf);
	if (!ret)
		ret = sw_cfg_load(&t->cfg, path, NULL, 0, err, sizeof(err));
	unlink(path);
	if (ret) {
		printf("    config: %s\n", err);
		return ret;
	}
	ret = umem_create(&t->u, 4096, 2048, 0);
	if (ret)
		return ret;
	for (int i = 0; i < t->cfg.nports; i++) {
		vt_mac(macs[i], (uint8_t)(0xe0 + i));
		mtus[i] = 1500;
	}
	vt_sink_init(&t->k, t->u, NULL);
	sink = vt_sink(&t->k);
	ret = sw_core_create(&t->s, &t->cfg, t->u, &sink, (const uint8_t (*)[6])macs, mtus,
			     1000000000ull);
	if (ret)
		return ret;
	t->k.now = &t->s->now;
	return 0;
}

/* A test cannot go on without its switch: stop it there. */
#define swt_create(t, conf) do {                                           \
	int _e = swt_create_((t), (conf));                                  \
	CHECK_EQ(_e, 0);                                                    \
	if (_e)                                                             \
		return;                                                     \
} while (0)

static inline void swt_destroy(struct swt *t)
{
	sw_core_destroy(t->s);
	if (t->u)
		CHECK_EQ(t->u->held, 0);        /* every frame is back in the pool */
	umem_destroy(t->u);
	vt_sink_fini(&t->k);
}

/* A congestion point's counter of port p, by name; -1 if it has none. */
static inline int64_t swt_cp(struct swt *t, int p, const char *name)
{
	const uint64_t *v = cp_ctr_find(t->s->ports[p].cpo, t->s->ports[p].cp, p, name);

	return v ? (int64_t)*v : -1;
}

/* Feed one frame to port p now; false if the core left it "in the ring". */
static inline bool swt_rx(struct swt *t, int p, struct vt_eth e)
{
	uint32_t len;
	uint64_t addr = vt_frame_make(t->u, &e, &len);
	bool taken;

	CHECK(len > 0);
	taken = sw_rx_frame(t->s, &t->s->ports[p], addr, len);
	if (!taken)
		umem_free(t->u, umem_idx(t->u, addr));
	return taken;
}

/* Feed a built control frame (PAUSE, PFC, CREDIT) to port p. */
static inline void swt_rx_raw(struct swt *t, int p, const uint8_t *buf, int len)
{
	int64_t idx = umem_alloc(t->u);
	uint64_t addr = umem_addr(t->u, (uint32_t)idx) + XPORT_UMEM_HEADROOM;

	memcpy(umem_data(t->u, addr), buf, len);
	CHECK(sw_rx_frame(t->s, &t->s->ports[p], addr, (uint32_t)len));
}

/* Move to time `at` (ns since the core's start) and run a pass. */
static inline void swt_at(struct swt *t, uint64_t at_ns)
{
	t->s->now = t->s->start_ns + at_ns;
	sw_pass(t->s);
}

/* A pass now (frames just fed in), then one at every deadline up to
 * `until` (ns since start), as the daemon's loop would. */
static inline void swt_run(struct swt *t, uint64_t until_ns)
{
	uint64_t end = t->s->start_ns + until_ns;

	sw_pass(t->s);
	for (int n = 0; n < 100000; n++) {
		uint64_t d = sw_core_deadline(t->s);

		if (d > end)
			break;
		t->s->now = d > t->s->now ? d : t->s->now;
		sw_pass(t->s);
	}
	t->s->now = end;
	sw_pass(t->s);
}

/* Each of hosts (id, port) sends a broadcast so the FDB learns where it is. */
static inline void swt_learn(struct swt *t, const int (*hosts)[2], int n)
{
	for (int i = 0; i < n; i++)
		swt_rx(t, hosts[i][1], (struct vt_eth){ .dst = 0xff, .src = (uint8_t)hosts[i][0],
							 .prio = -1, .len = 60 });
	swt_run(t, 0);
	t->k.n = 0;
}

#endif
