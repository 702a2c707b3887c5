// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the config parser: the input is a config file. Its
 * last line is also fed to cfg_override() and the value parsers, which see
 * command-line text; the last rather than the first so that the sections
 * opened by the lines before it exist and the override can reach them. The schema mirrors tests/unit/test_config.c and covers
 * every value type; objects come from a static pool reset on each run, so a
 * run leaks nothing and cannot depend on the previous one.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const fc_names[] = { "none", "pause", "pfc", "credit", NULL };

struct fglobal {
	char name[8];
	int64_t prio;
	uint64_t queues;
	bool ecn;
	uint64_t rate;
	uint64_t buf;
	struct cfg_qty xoff;
	int fc;
	uint64_t tick;
	uint8_t mac[6];
};

struct fport {
	char label[16];
	char ifname[16];
	uint64_t rate;
	struct cfg_qty headroom;
	int fc;
	bool enabled;
	uint64_t mtu;
};

#define MAX_PORTS 4

static struct {
	struct fglobal g;
	bool have_g;
	struct fport ports[MAX_PORTS];
	int nports;
} pool;

#define G(f) offsetof(struct fglobal, f)
#define P(f) offsetof(struct fport, f)

static const struct cfg_item global_items[] = {
	{ .key = "name", .type = CFG_STR, .off = G(name), .size = sizeof(pool.g.name), .def = "s1",
	  .min = 1, .max = 0 },
	{ .key = "prio", .type = CFG_INT, .off = G(prio), .def = "0", .min = -10, .max = 10 },
	{ .key = "queues", .type = CFG_UINT, .off = G(queues), .def = "8", .min = 1, .max = 8 },
	{ .key = "ecn", .type = CFG_BOOL, .off = G(ecn), .def = "yes", .min = 1, .max = 0 },
	{ .key = "rate", .type = CFG_RATE, .off = G(rate), .def = "10G", .min = 0,
	  .max = 100000000000LL },
	{ .key = "buf", .type = CFG_SIZE, .off = G(buf), .def = "1M", .min = 1024, .max = 1 << 30 },
	{ .key = "xoff", .type = CFG_QTY, .off = G(xoff), .def = "64K", .min = 1, .max = 0 },
	{ .key = "fc", .type = CFG_ENUM, .off = G(fc), .def = "pfc", .min = 1, .max = 0,
	  .names = fc_names },
	{ .key = "tick", .type = CFG_DURATION, .off = G(tick), .def = "10ms", .min = 1000,
	  .max = 1000000000 },
	{ .key = "mac", .type = CFG_MAC, .off = G(mac), .min = 1, .max = 0 },
};

static const struct cfg_item port_items[] = {
	{ .key = "ifname", .type = CFG_STR, .off = P(ifname), .size = sizeof(pool.ports[0].ifname),
	  .min = 1, .max = 0 },
	{ .key = "rate", .type = CFG_RATE, .off = P(rate), .def = "unlimited", .min = 1, .max = 0 },
	{ .key = "headroom", .type = CFG_QTY, .off = P(headroom), .min = 1, .max = 0 },
	{ .key = "fc", .type = CFG_ENUM, .off = P(fc), .def = "none", .min = 1, .max = 0,
	  .names = fc_names },
	{ .key = "enabled", .type = CFG_BOOL, .off = P(enabled), .def = "on", .min = 1, .max = 0 },
	{ .key = "mtu", .type = CFG_UINT, .off = P(mtu), .def = "1500", .min = 68, .max = 9216 },
};

static void *global_open(void *ctx, const char *label, char *err, size_t errlen)
{
	pool.have_g = true;
	return &pool.g;
}

static void *global_find(void *ctx, const char *label)
{
	return pool.have_g ? &pool.g : NULL;
}

static void *port_open(void *ctx, const char *label, char *err, size_t errlen)
{
	struct fport *p;

	if (pool.nports == MAX_PORTS) {
		snprintf(err, errlen, "too many ports, expected at most %d", MAX_PORTS);
		return NULL;
	}
	p = &pool.ports[pool.nports++];
	snprintf(p->label, sizeof(p->label), "%s", label);
	return p;
}

static void *port_find(void *ctx, const char *label)
{
	int i;

	for (i = 0; i < pool.nports; i++)
		if (!strcmp(pool.ports[i].label, label))
			return &pool.ports[i];
	return NULL;
}

static const struct cfg_section secs[] = {
	{ .name = "global", .items = global_items,
	  .nitems = sizeof(global_items) / sizeof(global_items[0]), .open = global_open,
	  .find = global_find },
	{ .name = "port", .labelled = true, .items = port_items,
	  .nitems = sizeof(port_items) / sizeof(port_items[0]), .open = port_open,
	  .find = port_find },
};
#define NSECS (sizeof(secs) / sizeof(secs[0]))

/* A short error buffer makes every message exercise truncation. */
static void check_err(const char *err, size_t len)
{
	if (!memchr(err, '\0', len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg_qty q;
	uint64_t v;
	uint8_t mac[6];
	char err[96];
	char *text, *last;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	memset(&pool, 0, sizeof(pool));
	memset(err, 0x55, sizeof(err));
	cfg_parse_string("fuzz.conf", text, secs, NSECS, NULL, err, sizeof(err));
	check_err(err, sizeof(err));

	last = strrchr(text, '\n');
	last = last ? last + 1 : text;
	memset(err, 0x55, sizeof(err));
	cfg_override(last, secs, NSECS, NULL, err, sizeof(err));
	check_err(err, sizeof(err));
	cfg_override(last, secs, NSECS, NULL, NULL, 0);

	cfg_parse_rate(last, &v);
	cfg_parse_size(last, &v);
	cfg_parse_duration(last, &v);
	cfg_parse_qty(last, &q);
	cfg_parse_mac(last, mac);

	free(text);
	return 0;
}
