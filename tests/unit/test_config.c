// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for the table-driven configuration parser (daemon/config.c).
 * A small schema of its own ([global] and labelled [port X]) covers every
 * value type, so these tests do not move when the daemon's tables change.
 * A second one ([sched] and [q X], with a made-up selector `scheme` and two
 * variants) covers variant keys and the reload decision.
 */
#include "check.h"
#include "config.h"
#include "dconf.h"
#include "log.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- the test schema ---------------------------------------------------- */

static const char *const fc_names[] = { "none", "pause", "pfc", "credit", NULL };

struct tglobal {
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

struct tport {
	char label[24];
	char ifname[16];
	uint64_t rate;
	struct cfg_qty headroom;
	int fc;
	bool enabled;
	uint64_t mtu;
};

#define MAX_PORTS 3

struct tctx {
	struct tglobal g;
	bool have_g;
	struct tport ports[MAX_PORTS];
	int nports;
};

#define G(f) offsetof(struct tglobal, f)
#define P(f) offsetof(struct tport, f)

static const struct cfg_item global_items[] = {
	{ .key = "name", .type = CFG_STR, .off = G(name), .size = sizeof(((struct tglobal *)0)->name),
	  .def = "s1", .min = 1, .max = 0, .help = "switch name" },
	{ .key = "prio", .type = CFG_INT, .off = G(prio), .def = "0", .min = -10, .max = 10,
	  .help = "priority" },
	{ .key = "queues", .type = CFG_UINT, .off = G(queues), .def = "8", .min = 1, .max = 8,
	  .help = "queues per port" },
	{ .key = "ecn", .type = CFG_BOOL, .off = G(ecn), .def = "yes", .min = 1, .max = 0,
	  .help = "mark | not drop" },
	{ .key = "rate", .type = CFG_RATE, .off = G(rate), .def = "10G", .min = 0,
	  .max = 100000000000LL, .help = "default port rate" },
	{ .key = "buf", .type = CFG_SIZE, .off = G(buf), .def = "1M", .min = 1024, .max = 1 << 30,
	  .help = "shared buffer" },
	{ .key = "xoff", .type = CFG_QTY, .off = G(xoff), .def = "64K", .min = 1, .max = 0,
	  .help = "pause threshold" },
	{ .key = "fc", .type = CFG_ENUM, .off = G(fc), .def = "pfc", .min = 1, .max = 0,
	  .names = fc_names, .help = "flow control" },
	{ .key = "tick", .type = CFG_DURATION, .off = G(tick), .def = "10ms", .min = 1000,
	  .max = 1000000000, .help = "control period" },
	{ .key = "mac", .type = CFG_MAC, .off = G(mac), .min = 1, .max = 0, .help = "switch MAC" },
};

static const struct cfg_item port_items[] = {
	{ .key = "ifname", .type = CFG_STR, .off = P(ifname), .size = sizeof(((struct tport *)0)->ifname),
	  .min = 1, .max = 0, .help = "interface" },
	{ .key = "rate", .type = CFG_RATE, .off = P(rate), .def = "unlimited", .min = 1, .max = 0,
	  .help = "line rate" },
	{ .key = "headroom", .type = CFG_QTY, .off = P(headroom), .min = 1, .max = 0,
	  .help = "headroom" },
	{ .key = "fc", .type = CFG_ENUM, .off = P(fc), .def = "none", .min = 1, .max = 0,
	  .names = fc_names, .help = "flow control" },
	{ .key = "enabled", .type = CFG_BOOL, .off = P(enabled), .def = "on", .min = 1, .max = 0,
	  .help = "admin state" },
	{ .key = "mtu", .type = CFG_UINT, .off = P(mtu), .def = "1500", .min = 68, .max = 9216,
	  .help = "MTU" },
};

static void *global_open(void *ctx, const char *label, char *err, size_t errlen)
{
	struct tctx *t = ctx;

	t->have_g = true;
	return &t->g;
}

static void *global_find(void *ctx, const char *label)
{
	struct tctx *t = ctx;

	return t->have_g ? &t->g : NULL;
}

static void *port_open(void *ctx, const char *label, char *err, size_t errlen)
{
	struct tctx *t = ctx;
	struct tport *p;

	if (t->nports == MAX_PORTS) {
		snprintf(err, errlen, "too many ports, expected at most %d", MAX_PORTS);
		return NULL;
	}
	p = &t->ports[t->nports++];
	snprintf(p->label, sizeof(p->label), "%s", label);
	return p;
}

static void *port_find(void *ctx, const char *label)
{
	struct tctx *t = ctx;
	int i;

	for (i = 0; i < t->nports; i++)
		if (!strcmp(t->ports[i].label, label))
			return &t->ports[i];
	return NULL;
}

static const struct cfg_section secs[] = {
	{ .name = "global", .labelled = false, .items = global_items,
	  .nitems = sizeof(global_items) / sizeof(global_items[0]), .open = global_open,
	  .help = "Switch-wide settings.", .find = global_find },
	{ .name = "port", .labelled = true, .items = port_items,
	  .nitems = sizeof(port_items) / sizeof(port_items[0]), .open = port_open,
	  .help = "One switch port.", .find = port_find },
};
#define NSECS (sizeof(secs) / sizeof(secs[0]))

static struct tctx T;
static char err[512];

static int parse(const char *text)
{
	memset(&T, 0, sizeof(T));
	memset(err, 0, sizeof(err));
	return cfg_parse_string("s1.conf", text, secs, NSECS, &T, err, sizeof(err));
}

/* ---- value parsers ------------------------------------------------------ */

static void test_parse_rate(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "100M", 100000000ULL }, { "1G", 1000000000ULL }, { "2.5G", 2500000000ULL },
		{ "1500k", 1500000ULL }, { "1500K", 1500000ULL }, { "0", 0 },
		{ "unlimited", 0 }, { "Unlimited", 0 }, { "1T", 1000000000000ULL },
		{ "100Mbit", 100000000ULL }, { "1Gbps", 1000000000ULL }, { "1 G", 1000000000ULL },
		{ "0.001G", 1000000ULL }, { "25.000G", 25000000000ULL }, { "123", 123 },
	};
	static const char *const bad[] = {
		"", "fast", "1.5", "G", "1.G", ".5G", "-1M", "1e9", "1X", "1Gb", "0x10",
		" 1G", "99999999999999999999", "20000000T", "1.5 bit",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 12345;
		CHECK_EQ(cfg_parse_rate(good[i].s, &v), 0);
		CHECK_EQ(v, good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		if (cfg_parse_rate(bad[i], &v) != -EINVAL)
			printf("    rate \"%s\" accepted\n", bad[i]), check_failed_now++;
		CHECK_EQ(v, 12345);
	}
}

static void test_parse_size(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "1500", 1500 }, { "64K", 65536 }, { "64k", 65536 }, { "1M", 1048576 },
		{ "1G", 1073741824ULL }, { "64KiB", 65536 }, { "64KB", 65536 },
		{ "2 MiB", 2097152 }, { "9000B", 9000 }, { "0", 0 },
	};
	static const char *const bad[] = {
		"", "1.5K", "64X", "K", "-1", "64 KiBB", "17179869184G", "64iB", "1e3",
	};
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 7;
		CHECK_EQ(cfg_parse_size(good[i].s, &v), 0);
		CHECK_EQ(v, good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		if (cfg_parse_size(bad[i], &v) != -EINVAL)
			printf("    size \"%s\" accepted\n", bad[i]), check_failed_now++;
		CHECK_EQ(v, 7);
	}
}

static void test_parse_qty(void)
{
	struct cfg_qty q;

	memset(&q, 0, sizeof(q));
	CHECK_EQ(cfg_parse_qty("4frames", &q), 0);
	CHECK_EQ(q.n, 4);
	CHECK(q.frames && q.set);

	memset(&q, 0, sizeof(q));
	CHECK_EQ(cfg_parse_qty("16 frames", &q), 0);
	CHECK_EQ(q.n, 16);
	CHECK(q.frames);

	memset(&q, 0, sizeof(q));
	CHECK_EQ(cfg_parse_qty("3f", &q), 0);
	CHECK_EQ(q.n, 3);
	CHECK(q.frames);

	CHECK_EQ(cfg_parse_qty("1frame", &q), 0);
	CHECK_EQ(q.n, 1);

	CHECK_EQ(cfg_parse_qty("64K", &q), 0);
	CHECK_EQ(q.n, 65536);
	CHECK(!q.frames && q.set);

	CHECK_EQ(cfg_parse_qty("1500", &q), 0);
	CHECK_EQ(q.n, 1500);
	CHECK(!q.frames);

	memset(&q, 0, sizeof(q));
	CHECK_EQ(cfg_parse_qty("frames", &q), -EINVAL);
	CHECK_EQ(cfg_parse_qty("4 framez", &q), -EINVAL);
	CHECK_EQ(cfg_parse_qty("-4f", &q), -EINVAL);
	CHECK_EQ(cfg_parse_qty("1.5frames", &q), -EINVAL);
	CHECK_EQ(cfg_parse_qty("", &q), -EINVAL);
	CHECK(!q.set);
}

static void test_parse_duration(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "10ms", 10000000ULL }, { "500us", 500000ULL }, { "2s", 2000000000ULL },
		{ "100ns", 100 }, { "10", 10000000ULL }, { "1.5ms", 1500000ULL },
		{ "10 ms", 10000000ULL }, { "0", 0 },
	};
	static const char *const bad[] = { "", "10m", "ms", "1.5ns", "10 h", "-1ms", "1e3us" };
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = 9;
		CHECK_EQ(cfg_parse_duration(good[i].s, &v), 0);
		CHECK_EQ(v, good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 9;
		if (cfg_parse_duration(bad[i], &v) != -EINVAL)
			printf("    duration \"%s\" accepted\n", bad[i]), check_failed_now++;
		CHECK_EQ(v, 9);
	}
}

static void test_parse_mac(void)
{
	static const uint8_t want[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xef };
	static const char *const bad[] = {
		"", "02:aa:bb:cc:dd", "02-aa-bb-cc-dd-ef", "02:aa:bb:cc:dd:eg",
		"02:aa:bb:cc:dd:ef:", "2:aa:bb:cc:dd:eff", "02:aa:bb:cc:dd:ef ",
	};
	uint8_t mac[6];
	size_t i;

	CHECK_EQ(cfg_parse_mac("02:aa:bb:cc:dd:ef", mac), 0);
	CHECK_MEM(mac, want, 6);
	memset(mac, 0, sizeof(mac));
	CHECK_EQ(cfg_parse_mac("02:AA:BB:CC:DD:EF", mac), 0);
	CHECK_MEM(mac, want, 6);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cfg_parse_mac(bad[i], mac) != -EINVAL)
			printf("    mac \"%s\" accepted\n", bad[i]), check_failed_now++;
	}
}

/* cfg_set_item on one object: bools, enums, ints, strings, and that a bad
 * value leaves the field alone. */
static void test_set_item(void)
{
	const struct cfg_section *gs = &secs[0];
	static const char *const yes[] = { "yes", "true", "on", "1", "YES" };
	static const char *const no[] = { "no", "false", "off", "0", "Off" };
	struct tglobal g;
	size_t i;

	memset(&g, 0, sizeof(g));
	for (i = 0; i < 5; i++) {
		g.ecn = false;
		CHECK_EQ(cfg_set_item(gs, &g, "ecn", yes[i], err, sizeof(err)), 0);
		CHECK(g.ecn);
		CHECK_EQ(cfg_set_item(gs, &g, "ecn", no[i], err, sizeof(err)), 0);
		CHECK(!g.ecn);
	}
	CHECK_EQ(cfg_set_item(gs, &g, "ecn", "maybe", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected yes, no"));

	CHECK_EQ(cfg_set_item(gs, &g, "fc", "credit", err, sizeof(err)), 0);
	CHECK_EQ(g.fc, 3);
	CHECK_EQ(cfg_set_item(gs, &g, "fc", "PFC", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected one of: none, pause, pfc, credit"));
	CHECK_EQ(g.fc, 3);

	CHECK_EQ(cfg_set_item(gs, &g, "prio", "-10", err, sizeof(err)), 0);
	CHECK_EQ(g.prio, -10);
	CHECK_EQ(cfg_set_item(gs, &g, "prio", "0xa", err, sizeof(err)), 0);
	CHECK_EQ(g.prio, 10);
	CHECK_EQ(cfg_set_item(gs, &g, "prio", "11", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "out of range, expected -10..10"));
	CHECK_EQ(cfg_set_item(gs, &g, "prio", "010", err, sizeof(err)), 0);
	CHECK_EQ(g.prio, 10);   /* decimal, never octal */
	CHECK_EQ(cfg_set_item(gs, &g, "prio", "1.0", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is not an integer, expected"));
	CHECK_EQ(g.prio, 10);

	CHECK_EQ(cfg_set_item(gs, &g, "queues", "-1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected a whole number in 1..8"));
	CHECK_EQ(cfg_set_item(gs, &g, "queues", "0", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cfg_set_item(gs, &g, "queues", "99999999999999999999", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "too large"));
	CHECK_EQ(cfg_set_item(gs, &g, "queues", "8", err, sizeof(err)), 0);
	CHECK_EQ(g.queues, 8);

	CHECK_EQ(cfg_set_item(gs, &g, "name", "1234567", err, sizeof(err)), 0);
	CHECK(!strcmp(g.name, "1234567"));
	CHECK_EQ(cfg_set_item(gs, &g, "name", "12345678", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "too long (8 characters), expected at most 7"));
	CHECK(!strcmp(g.name, "1234567"));
	CHECK_EQ(cfg_set_item(gs, &g, "name", "", err, sizeof(err)), 0);
	CHECK(!strcmp(g.name, ""));

	CHECK_EQ(cfg_set_item(gs, &g, "rate", "200G", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 0..100G"));
	CHECK_EQ(cfg_set_item(gs, &g, "rate", "1.5", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "finer than 1 bit/s"));
	CHECK_EQ(cfg_set_item(gs, &g, "tick", "0", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 1us..1s"));
	CHECK_EQ(cfg_set_item(gs, &g, "buf", "2G", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 1K..1G"));

	CHECK_EQ(cfg_set_item(gs, &g, "nope", "1", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown key \"nope\" in [global], expected one of: name, prio"));
	/* No error buffer at all must still be safe. */
	CHECK_EQ(cfg_set_item(gs, &g, "nope", "1", NULL, 0), -EINVAL);
}

/* A real number: decimal, exponent or a fraction; the range applies; a bad
 * value leaves the old one and says what was expected. */
static void test_parse_real(void)
{
	static const struct cfg_item items[] = {
		{ .key = "p", .type = CFG_REAL, .off = 0, .def = "0.01", .min = 0, .max = 1 },
		{ .key = "w", .type = CFG_REAL, .off = 0, .min = 1, .max = 0 },
	};
	static const struct cfg_section sec = { .name = "x", .items = items, .nitems = 2 };
	double v = -1;
	char buf[32];

	CHECK_EQ(cfg_set_item(&sec, &v, "p", "0.01", err, sizeof(err)), 0);
	CHECK(v == 0.01);
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "1/128", err, sizeof(err)), 0);
	CHECK(v == 1.0 / 128);
	cfg_format_value(&items[0], &v, buf, sizeof(buf));
	CHECK(!strcmp(buf, "0.0078125"));
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "1e-3", err, sizeof(err)), 0);
	CHECK(v == 1e-3);
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "1.5", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "out of range, expected 0..1"));
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "1/0", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is not a number, expected a number in 0..1"));
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "0.5x", err, sizeof(err)), -EINVAL);
	CHECK_EQ(cfg_set_item(&sec, &v, "p", "nan", err, sizeof(err)), -EINVAL);
	CHECK(v == 1e-3);
	CHECK_EQ(cfg_set_item(&sec, &v, "w", "-2.5", err, sizeof(err)), 0);
	CHECK(v == -2.5);
	CHECK_EQ(cfg_set_item(&sec, &v, "w", "", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected a number such as 0.01 or 1/128"));
}

/* Ranges print in the item's own units, fractions included. */
static void test_range_format(void)
{
	static const struct cfg_item items[] = {
		{ .key = "r", .type = CFG_RATE, .off = 0, .min = 1500000, .max = 2500000000LL },
		{ .key = "d", .type = CFG_DURATION, .off = 0, .min = 1500, .max = 2250000 },
		{ .key = "s", .type = CFG_SIZE, .off = 0, .min = 1536, .max = 1LL << 40 },
	};
	static const struct cfg_section sec = { .name = "x", .items = items, .nitems = 3 };
	uint64_t v;

	CHECK_EQ(cfg_set_item(&sec, &v, "r", "3G", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 1.5M..2.5G"));
	CHECK_EQ(cfg_set_item(&sec, &v, "d", "1us", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 1.5us..2.25ms"));
	CHECK_EQ(cfg_set_item(&sec, &v, "s", "1K", err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected 1536..1T"));
	CHECK_EQ(cfg_set_item(&sec, &v, "r", "2.5G", err, sizeof(err)), 0);
	CHECK_EQ(v, 2500000000ULL);
}

/* ---- defaults ----------------------------------------------------------- */

static void test_defaults(void)
{
	struct tglobal g;
	struct tport p;

	memset(&g, 0, sizeof(g));
	CHECK_EQ(cfg_apply_defaults(&secs[0], &g, err, sizeof(err)), 0);
	CHECK(!strcmp(g.name, "s1"));
	CHECK_EQ(g.prio, 0);
	CHECK_EQ(g.queues, 8);
	CHECK(g.ecn);
	CHECK_EQ(g.rate, 10000000000ULL);
	CHECK_EQ(g.buf, 1048576);
	CHECK_EQ(g.xoff.n, 65536);
	CHECK(!g.xoff.frames);
	CHECK(!g.xoff.set);     /* a default is not "given" */
	CHECK_EQ(g.fc, 2);
	CHECK_EQ(g.tick, 10000000ULL);
	CHECK_EQ(g.mac[0] | g.mac[5], 0);

	memset(&p, 0, sizeof(p));
	p.headroom.n = 77;      /* no default: left as the caller set it */
	CHECK_EQ(cfg_apply_defaults(&secs[1], &p, err, sizeof(err)), 0);
	CHECK_EQ(p.rate, 0);
	CHECK_EQ(p.mtu, 1500);
	CHECK(p.enabled);
	CHECK_EQ(p.headroom.n, 77);
	CHECK(!p.headroom.set);
	CHECK_EQ(err[0], '\0');
}

/* ---- whole files -------------------------------------------------------- */

static const char good_conf[] =
	"# l2cc test switch\n"
	"; another comment style\n"
	"\n"
	"[global]\n"
	"  name = sw1        # trailing comment\n"
	"prio=-3\n"
	"queues = 4 ; trailing semicolon comment\n"
	"ecn = off\n"
	"rate = 25G\n"
	"buf = 4MiB\n"
	"xoff = 4frames\n"
	"fc = credit\n"
	"tick = 500us\r\n"
	"mac = 02:00:00:00:00:01\n"
	"\n"
	"[port p1]   # uplink\n"
	"ifname = s1-p1\n"
	"rate = 2.5G\n"
	"headroom = 64K\n"
	"\n"
	"[ port p2 ]\n"
	"ifname = s1-p2\n"
	"enabled = no\n"
	"mtu = 9000\n"
	"fc = pause";   /* no final newline */

static void test_parse_good(void)
{
	struct tport *p1 = &T.ports[0], *p2 = &T.ports[1];

	CHECK_EQ(parse(good_conf), 0);
	CHECK_EQ(err[0], '\0');
	CHECK(T.have_g);
	CHECK(!strcmp(T.g.name, "sw1"));
	CHECK_EQ(T.g.prio, -3);
	CHECK_EQ(T.g.queues, 4);
	CHECK(!T.g.ecn);
	CHECK_EQ(T.g.rate, 25000000000ULL);
	CHECK_EQ(T.g.buf, 4 << 20);
	CHECK_EQ(T.g.xoff.n, 4);
	CHECK(T.g.xoff.frames && T.g.xoff.set);
	CHECK_EQ(T.g.fc, 3);
	CHECK_EQ(T.g.tick, 500000);
	CHECK_EQ(T.g.mac[5], 1);

	CHECK_EQ(T.nports, 2);
	CHECK(!strcmp(p1->label, "p1"));
	CHECK(!strcmp(p1->ifname, "s1-p1"));
	CHECK_EQ(p1->rate, 2500000000ULL);
	CHECK_EQ(p1->headroom.n, 65536);
	CHECK(p1->headroom.set && !p1->headroom.frames);
	CHECK(p1->enabled);
	CHECK_EQ(p1->mtu, 1500);
	CHECK_EQ(p1->fc, 0);

	CHECK(!strcmp(p2->label, "p2"));
	CHECK(!p2->enabled);
	CHECK_EQ(p2->mtu, 9000);
	CHECK_EQ(p2->fc, 1);
	CHECK_EQ(p2->rate, 0);          /* default "unlimited" */
	CHECK(!p2->headroom.set);
}

static void test_parse_empty(void)
{
	CHECK_EQ(parse(""), 0);
	CHECK_EQ(parse("\n\n# only comments\n   ; here\n"), 0);
	CHECK(!T.have_g);
	CHECK_EQ(T.nports, 0);
	/* Defaults come with the header even when no key follows. */
	CHECK_EQ(parse("[global]\n"), 0);
	CHECK_EQ(T.g.queues, 8);
}

/* Each bad input fails with "s1.conf:LINE:", says what was expected, and
 * names the specific problem. */
static void test_errors(void)
{
	static const struct { const char *text; int line; const char *needle; } cases[] = {
		{ "[global]\nrate = fast\n", 2,
		  "rate \"fast\" is not a rate, expected e.g. 100M, 1G, 2.5G or unlimited" },
		{ "[global]\n\n[port p1]\nrat = 1G\n", 4,
		  "unknown key \"rat\" in [port p1], expected one of: ifname, rate, headroom, fc, enabled, mtu" },
		{ "# c\n[bogus]\n", 2, "unknown section [bogus], expected one of: [global], [port <label>]" },
		{ "queues = 1\n", 1, "outside any section, expected a [section]" },
		{ "[port p1]\n[port p2]\n[port p1]\n", 3, "[port p1] repeats the one at line 1" },
		{ "[global]\n\n[global]\n", 3, "[global] repeats the one at line 1, expected it once" },
		{ "[port]\n", 1, "expected [port <label>]" },
		{ "[global x]\n", 1, "takes no label, expected [global]" },
		{ "[port a b]\n", 1, "not one word, expected" },
		{ "[global]\nqueues = 9\n", 2, "queues 9 is out of range, expected 1..8" },
		{ "[global]\nrate = 200G\n", 2, "out of range, expected 0..100G" },
		{ "[global]\ntick = 2s\n", 2, "out of range, expected 1us..1s" },
		{ "[port p1]\nmtu = 10000\n", 2, "mtu 10000 is out of range, expected 68..9216" },
		{ "[global]\nname = abcdefgh\n", 2, "too long (8 characters), expected at most 7" },
		{ "[port p1]\nifname = 0123456789abcdef\n", 2, "expected at most 15" },
		{ "[global]\nfc = xon\n", 2, "expected one of: none, pause, pfc, credit" },
		{ "[global]\necn = maybe\n", 2, "expected yes, no, true, false, on, off, 1 or 0" },
		{ "[global]\nbuf = lots\n", 2, "is not a size, expected" },
		{ "[global]\nxoff = 4 frams\n", 2, "is not a quantity, expected" },
		{ "[global]\ntick = 10 minutes\n", 2, "is not a duration, expected" },
		{ "[global]\nmac = 02:00:00:00:00\n", 2, "expected aa:bb:cc:dd:ee:ff" },
		{ "[global]\nprio = high\n", 2, "is not an integer, expected a whole number in -10..10" },
		{ "[global\n", 1, "no closing ']', expected" },
		{ "[global] x\n", 1, "after section header, expected" },
		{ "[]\n", 1, "empty section header, expected" },
		{ "[global]\nhello\n", 2, "\"hello\" is not a setting, expected key = value" },
		{ "[global]\n = 5\n", 2, "missing key before '=', expected" },
		{ "[global]\nqueues = 2\nqueues = 3\n", 3, "repeats line 2, expected each key once" },
		{ "[port a]\n[port b]\n[port c]\n\n[port d]\n", 5, "too many ports, expected at most 3" },
		{ "[global]\nrate = 1.0000000001G\n", 2, "finer than 1 bit/s" },
	};
	char prefix[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = parse(cases[i].text);

		snprintf(prefix, sizeof(prefix), "s1.conf:%d: ", cases[i].line);
		if (ret != -EINVAL || strncmp(err, prefix, strlen(prefix)) ||
		    !strstr(err, "expected") || !strstr(err, cases[i].needle)) {
			printf("    case %zu: ret %d, err \"%s\"\n", i, ret, err);
			check_failed_now++;
		}
	}
}

/* A bad value must not have clobbered what was there before it. */
static void test_error_leaves_value(void)
{
	CHECK_EQ(parse("[global]\nqueues = 3\nprio = 5\nrate = 1X\n"), -EINVAL);
	CHECK_EQ(T.g.queues, 3);
	CHECK_EQ(T.g.rate, 10000000000ULL);
}

static void test_parse_file(void)
{
	char path[] = "/tmp/test_config_XXXXXX";
	char want[64];
	FILE *f;
	int fd;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs(good_conf, f);
	fputs("\n[port p3]\nmtu = 1\n", f);
	fclose(f);

	memset(&T, 0, sizeof(T));
	CHECK_EQ(cfg_parse_file(path, secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:27: mtu 1 is out of range", path);
	CHECK(strstr(err, want));
	CHECK_EQ(T.nports, 3);
	CHECK_EQ(T.ports[1].mtu, 9000);

	f = fopen(path, "w");
	fputs(good_conf, f);
	fclose(f);
	memset(&T, 0, sizeof(T));
	CHECK_EQ(cfg_parse_file(path, secs, NSECS, &T, err, sizeof(err)), 0);
	CHECK_EQ(T.nports, 2);
	CHECK_EQ(T.ports[0].rate, 2500000000ULL);

	/* A NUL byte would hide the rest of its line: refuse it. */
	f = fopen(path, "w");
	fwrite("[global]\nqueues = 2\0 # x\n", 1, 25, f);
	fclose(f);
	CHECK_EQ(cfg_parse_file(path, secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, ":2: NUL byte"));
	unlink(path);

	CHECK_EQ(cfg_parse_file("/nonexistent/l2cc.conf", secs, NSECS, &T, err, sizeof(err)),
		 -ENOENT);
	CHECK(strstr(err, "cannot open /nonexistent/l2cc.conf: "));
}

/* ---- overrides ---------------------------------------------------------- */

static void test_override(void)
{
	CHECK_EQ(parse(good_conf), 0);
	CHECK_EQ(cfg_override("port.p1.rate=1G", secs, NSECS, &T, err, sizeof(err)), 0);
	CHECK_EQ(T.ports[0].rate, 1000000000ULL);
	CHECK_EQ(T.ports[1].rate, 0);
	CHECK_EQ(cfg_override("global.queues = 2", secs, NSECS, &T, err, sizeof(err)), 0);
	CHECK_EQ(T.g.queues, 2);
	CHECK_EQ(cfg_override("port.p2.headroom=8frames", secs, NSECS, &T, err, sizeof(err)), 0);
	CHECK(T.ports[1].headroom.set && T.ports[1].headroom.frames);
	CHECK_EQ(err[0], '\0');

	CHECK_EQ(cfg_override("port.p9.rate=1G", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no [port p9] to override"));
	CHECK_EQ(cfg_override("port.rate=1G", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected port.<label>.key=value"));
	CHECK_EQ(cfg_override("global.x.queues=1", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "takes no label, expected global.key=value"));
	CHECK_EQ(cfg_override("bogus.a=1", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected one of: global, port"));
	CHECK_EQ(cfg_override("queues=1", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "expected section.key=value"));
	CHECK_EQ(cfg_override("global.queues", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no '='"));
	CHECK_EQ(cfg_override("global.queues=99", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "override \"global.queues=99\": queues 99 is out of range, expected 1..8"));
	CHECK_EQ(T.g.queues, 2);
	CHECK_EQ(cfg_override("port.p1.speed=1G", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "unknown key \"speed\" in [port p1]"));

	/* Labels may contain dots (VLAN interfaces): the key is after the last. */
	CHECK_EQ(parse("[port eth0.100]\nmtu = 1500\n"), 0);
	CHECK_EQ(cfg_override("port.eth0.100.mtu=9000", secs, NSECS, &T, err, sizeof(err)), 0);
	CHECK_EQ(T.ports[0].mtu, 9000);

	/* No [global] in the file: nothing to override. */
	CHECK_EQ(cfg_override("global.queues=1", secs, NSECS, &T, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "no [global] to override"));
}

/* ---- reference ---------------------------------------------------------- */

static void test_reference(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	CHECK(f);
	if (!f)
		return;
	cfg_print_reference(f, secs, NSECS);
	fclose(f);
	CHECK(strstr(buf, "### [global]\n\nSwitch-wide settings.\n"));
	CHECK(strstr(buf, "### [port <label>]"));
	CHECK(strstr(buf, "| key | type | default | range | reload | description |"));
	CHECK(strstr(buf, "| queues | uint | 8 | 1..8 | restart | queues per port |"));
	CHECK(strstr(buf, "| fc | none\\|pause\\|pfc\\|credit | pfc |"));
	CHECK(strstr(buf, "| rate | rate (bit/s) | 10G | 0..100G |"));
	CHECK(strstr(buf, "| tick | duration | 10ms | 1us..1s |"));
	CHECK(strstr(buf, "| name | string | s1 | at most 7 characters |"));
	CHECK(strstr(buf, "mark \\| not drop"));
	CHECK(strstr(buf, "| ifname |"));
	CHECK(strstr(buf, "| headroom |"));
	CHECK(strstr(buf, "| mac | MAC |"));
	free(buf);
}

/* ---- variants: a selector with two made-up schemes ----------------------- */

/* Scheme "red": RED-like thresholds. Scheme "tail": one limit and a mode. */
struct red_cfg {
	uint64_t kmin, kmax;
	uint64_t pmax;
};
struct tail_cfg {
	uint64_t limit;
	int mode;
};

static const char *const tail_modes[] = { "drop", "mark", NULL };

static const struct cfg_item red_items[] = {
	{ .key = "kmin", .type = CFG_SIZE, .off = offsetof(struct red_cfg, kmin), .def = "5K",
	  .min = 0, .max = 1 << 20, .help = "marking starts here", .reload = CFG_LIVE },
	{ .key = "kmax", .type = CFG_SIZE, .off = offsetof(struct red_cfg, kmax), .def = "200K",
	  .min = 0, .max = 1 << 20, .help = "every frame is marked above", .reload = CFG_LIVE },
	{ .key = "pmax", .type = CFG_UINT, .off = offsetof(struct red_cfg, pmax), .def = "1",
	  .min = 0, .max = 100, .help = "percent at kmax", .reload = CFG_RESTART },
};
static const struct cfg_item tail_items[] = {
	{ .key = "limit", .type = CFG_UINT, .off = offsetof(struct tail_cfg, limit), .def = "16",
	  .min = 1, .max = 4096, .help = "frames", .reload = CFG_LIVE },
	{ .key = "mode", .type = CFG_ENUM, .off = offsetof(struct tail_cfg, mode), .def = "drop",
	  .names = tail_modes, .help = "what the tail does", .reload = CFG_KEEP },
};

static size_t red_size = sizeof(struct red_cfg);

/* Across the variant's keys: kmin <= kmax. */
static int red_check(void *cfg, char *e, size_t elen)
{
	const struct red_cfg *r = cfg;

	if (r->kmin <= r->kmax)
		return 0;
	snprintf(e, elen, "kmin %llu is above kmax %llu, expected kmin <= kmax",
		 (unsigned long long)r->kmin, (unsigned long long)r->kmax);
	return -EINVAL;
}

static bool scheme_variant(size_t i, struct cfg_variant *v)
{
	static const struct cfg_variant vs[] = {
		{ .name = "red", .help = "RED-like marking.", .items = red_items,
		  .nitems = sizeof(red_items) / sizeof(red_items[0]), .check = red_check },
		{ .name = "tail", .help = "Tail marking.", .items = tail_items,
		  .nitems = sizeof(tail_items) / sizeof(tail_items[0]), .size = sizeof(struct tail_cfg) },
		{ .name = "plain", .help = "No keys." },
	};

	if (i >= sizeof(vs) / sizeof(vs[0]))
		return false;
	*v = vs[i];
	if (i == 0)
		v->size = red_size;
	return true;
}

static const char *const scheme_names[] = { "none", "red", "tail", "plain", NULL };
static const char *const q_scheme_names[] = { "sched", "none", "red", "tail", "plain", NULL };

#define VSTORE 64
struct vq {
	char name[16];
	uint64_t rate;
	int scheme;                 /* 0 = [sched]'s */
	_Alignas(8) unsigned char store[VSTORE];
};
struct vcfg {
	uint64_t quantum;
	int level;
	int scheme;
	_Alignas(8) unsigned char store[VSTORE];
	struct vq qs[4];
	int nq;
};

static const char *const level_names[] = { "error", "warn", "info", "debug", NULL };

static const struct cfg_item sched_items[] = {
	{ .key = "quantum", .type = CFG_SIZE, .off = offsetof(struct vcfg, quantum), .def = "1500",
	  .min = 64, .max = 65536, .help = "bytes per round", .reload = CFG_LIVE },
	{ .key = "log_level", .type = CFG_ENUM, .off = offsetof(struct vcfg, level), .def = "info",
	  .names = level_names, .help = "logging", .reload = CFG_LIVE },
	{ .key = "scheme", .type = CFG_ENUM, .off = offsetof(struct vcfg, scheme), .def = "none",
	  .names = scheme_names, .help = "marking scheme", .reload = CFG_LIVE },
};
static int q_rate_ok(const struct cfg_change *c, char *e, size_t elen)
{
	uint64_t r;

	memcpy(&r, (const char *)c->new_obj + c->item->off, sizeof(r));
	if (r <= 10000000000ULL)
		return 0;
	snprintf(e, elen, "%s is above the 10G the queue was made for", c->new_val);
	return -ERANGE;
}
static const struct cfg_item q_items[] = {
	{ .key = "rate", .type = CFG_RATE, .off = offsetof(struct vq, rate), .def = "1G",
	  .min = 0, .max = 100000000000LL, .help = "queue rate", .reload = CFG_LIVE,
	  .reload_ok = q_rate_ok },
	{ .key = "scheme", .type = CFG_ENUM, .off = offsetof(struct vq, scheme), .def = "sched",
	  .names = q_scheme_names, .help = "marking scheme; sched = [sched]'s", .reload = CFG_LIVE },
};

static const struct cfg_selector sched_sel = {
	.key = "scheme", .variant = scheme_variant,
	.store_off = offsetof(struct vcfg, store), .store_size = VSTORE,
};
static const struct cfg_selector q_sel = {
	.key = "scheme", .variant = scheme_variant,
	.store_off = offsetof(struct vq, store), .store_size = VSTORE,
	.parent = "sched", .follow = "sched",
};

static void *v_self(void *ctx, const char *label, char *e, size_t elen) { return ctx; }
static void *v_find_self(void *ctx, const char *label) { return ctx; }
static void *v_find_q(void *ctx, const char *label)
{
	struct vcfg *c = ctx;

	for (int i = 0; i < c->nq; i++)
		if (!strcmp(c->qs[i].name, label))
			return &c->qs[i];
	return NULL;
}
static void *v_open_q(void *ctx, const char *label, char *e, size_t elen)
{
	struct vcfg *c = ctx;

	if (c->nq == 4)
		return NULL;
	snprintf(c->qs[c->nq].name, sizeof(c->qs[0].name), "%s", label);
	return &c->qs[c->nq++];
}
static bool v_label_q(void *ctx, size_t i, char *buf, size_t len)
{
	struct vcfg *c = ctx;

	if (i >= (size_t)c->nq)
		return false;
	snprintf(buf, len, "%s", c->qs[i].name);
	return true;
}

static struct cfg_section vsecs[] = {
	{ .name = "sched", .items = sched_items, .nitems = 3, .open = v_self, .find = v_find_self,
	  .sel = &sched_sel, .help = "The scheduler." },
	{ .name = "q", .labelled = true, .items = q_items, .nitems = 2, .open = v_open_q,
	  .find = v_find_q, .sel = &q_sel, .label_at = v_label_q, .reload = CFG_RESTART,
	  .help = "One queue." },
};
#define NVSECS (sizeof(vsecs) / sizeof(vsecs[0]))

static char warns[2048];
static int nwarns;

static void collect_warn(void *arg, const char *msg)
{
	size_t n = strlen(warns);

	snprintf(warns + n, sizeof(warns) - n, "%s\n", msg);
	nwarns++;
}

/* What a daemon does: defaults of [sched], the text, the overrides, the end. */
static int vload(struct vcfg *c, const char *text, const char *const *ovr, int novr)
{
	struct cfg_load *l;
	int ret;

	memset(c, 0, sizeof(*c));
	warns[0] = '\0';
	nwarns = 0;
	err[0] = '\0';
	ret = cfg_apply_defaults(&vsecs[0], c, err, sizeof(err));
	if (ret)
		return ret;
	CHECK_EQ(cfg_load_begin(&l, vsecs, NVSECS, c, collect_warn, NULL), 0);
	cfg_load_string(l, "v.conf", text, err, sizeof(err));
	for (int i = 0; i < novr; i++)
		cfg_load_override(l, ovr[i], err, sizeof(err));
	return cfg_load_end(l, err, sizeof(err));
}

#define RED(p) ((const struct red_cfg *)(p))
#define TAIL(p) ((const struct tail_cfg *)(p))

static void test_variant_keys(void)
{
	struct vcfg c;

	/* Keys before and after the selector, defaults for the rest. */
	CHECK_EQ(vload(&c, "[q a]\n"          /* 1 */
			   "kmin = 10K\n"      /* 2: before its selector */
			   "scheme = red\n"    /* 3 */
			   "kmax = 100K\n"     /* 4 */
			   "[q b]\n"           /* 5 */
			   "scheme = tail\n"   /* 6 */
			   "limit = 32\n",     /* 7 */
		       NULL, 0), 0);
	CHECK_EQ(err[0], '\0');
	CHECK_EQ(nwarns, 0);
	CHECK_EQ(c.nq, 2);
	CHECK_EQ(RED(c.qs[0].store)->kmin, 10240);
	CHECK_EQ(RED(c.qs[0].store)->kmax, 102400);
	CHECK_EQ(RED(c.qs[0].store)->pmax, 1);         /* default */
	CHECK_EQ(TAIL(c.qs[1].store)->limit, 32);
	CHECK_EQ(TAIL(c.qs[1].store)->mode, 0);        /* default drop */

	/* A variant without keys, and "none": nothing in the store. */
	CHECK_EQ(vload(&c, "[q a]\nscheme = plain\n[q b]\n", NULL, 0), 0);
	CHECK_EQ(RED(c.qs[0].store)->kmin, 0);
	CHECK_EQ(RED(c.qs[1].store)->kmin, 0);

	/* Overrides: a variant key of a queue, and the selector, in either order. */
	{
		const char *ovr[] = { "q.a.limit=8", "q.a.scheme=tail", "q.b.kmax=10K" };

		CHECK_EQ(vload(&c, "[q a]\nscheme = red\nkmin = 1K\n[q b]\nscheme = red\n", ovr, 3), 0);
		CHECK_EQ(err[0], '\0');
		CHECK_EQ(c.qs[0].scheme, 3);           /* tail in q_scheme_names */
		CHECK_EQ(TAIL(c.qs[0].store)->limit, 8);
		/* kmin = 1K belonged to red: a warning naming its line. */
		CHECK_EQ(nwarns, 1);
		CHECK(strstr(warns, "v.conf:3: kmin in [q a] does not apply to scheme tail; ignored"));
		CHECK_EQ(RED(c.qs[1].store)->kmax, 10240);
	}
	/* [sched] has no header in the file; overrides reach it anyway. */
	{
		const char *ovr[] = { "sched.kmin=7K", "sched.scheme=red" };

		CHECK_EQ(vload(&c, "[q a]\n", ovr, 2), 0);
		CHECK_EQ(RED(c.store)->kmin, 7168);
		CHECK_EQ(RED(c.qs[0].store)->kmin, 7168);      /* inherited */
	}
}

static void test_variant_inherit(void)
{
	struct vcfg c;

	CHECK_EQ(vload(&c, "[sched]\n"
			   "kmax = 50K\n"       /* the default of every red queue */
			   "scheme = red\n"
			   "[q a]\n"            /* follows [sched]: red, kmax 50K */
			   "[q b]\n"
			   "scheme = red\n"     /* red too: starts from [sched]'s */
			   "kmin = 1K\n"
			   "[q c]\n"
			   "scheme = tail\n"    /* another scheme: its own defaults */
			   "[q d]\n"
			   "kmax = 60K\n",      /* follows, and overrides one key */
		       NULL, 0), 0);
	CHECK_EQ(err[0], '\0');
	CHECK_EQ(RED(c.store)->kmax, 51200);
	CHECK_EQ(RED(c.qs[0].store)->kmax, 51200);
	CHECK_EQ(RED(c.qs[0].store)->kmin, 5120);
	CHECK_EQ(RED(c.qs[1].store)->kmax, 51200);
	CHECK_EQ(RED(c.qs[1].store)->kmin, 1024);
	CHECK_EQ(TAIL(c.qs[2].store)->limit, 16);
	CHECK_EQ(RED(c.qs[3].store)->kmax, 61440);
	CHECK_EQ(RED(c.qs[3].store)->kmin, 5120);
	/* A queue that follows [sched] takes [sched]'s key from an override too. */
	{
		const char *ovr[] = { "sched.kmin=2K", "q.d.kmin=3K" };

		CHECK_EQ(vload(&c, "[sched]\nscheme = red\n[q a]\n[q d]\n", ovr, 2), 0);
		CHECK_EQ(RED(c.qs[0].store)->kmin, 2048);
		CHECK_EQ(RED(c.qs[1].store)->kmin, 3072);
	}
}

static void test_variant_errors(void)
{
	struct vcfg c;

	/* A key of no variant: an error at its line, listing what is expected. */
	CHECK_EQ(vload(&c, "[q a]\nscheme = red\nkmid = 1\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, "v.conf:3: unknown key \"kmid\" in [q a], expected one of: rate, scheme; "
			  "or with scheme red: kmin, kmax, pmax; with scheme tail: limit, mode"));
	/* A bad value of a variant key: its line and what was expected. */
	CHECK_EQ(vload(&c, "[q a]\nkmin = lots\nscheme = red\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, "v.conf:2: kmin \"lots\" is not a size, expected "));
	CHECK_EQ(vload(&c, "[q a]\nscheme = red\npmax = 101\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, "v.conf:3: pmax 101 is out of range, expected 0..100"));
	/* Each key once, variant keys too. */
	CHECK_EQ(vload(&c, "[q a]\nlimit = 1\nscheme = tail\nlimit = 2\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, "v.conf:4: key \"limit\" in [q a] repeats line 2"));
	/* ... but an override may set what the file set. */
	{
		const char *ovr[] = { "q.a.limit=3" };

		CHECK_EQ(vload(&c, "[q a]\nlimit = 1\nscheme = tail\n", ovr, 1), 0);
		CHECK_EQ(TAIL(c.qs[0].store)->limit, 3);
	}
	/* Overrides: an unknown key at once; a bad value once resolved. */
	{
		const char *ovr[] = { "q.a.kmid=1" };

		CHECK_EQ(vload(&c, "[q a]\nscheme = red\n", ovr, 1), -EINVAL);
		CHECK(strstr(err, "override \"q.a.kmid=1\": unknown key \"kmid\" in [q a]"));
	}
	{
		const char *ovr[] = { "q.a.limit=0" };

		CHECK_EQ(vload(&c, "[q a]\nscheme = tail\n", ovr, 1), -EINVAL);
		CHECK(strstr(err, "override \"q.a.limit=0\": limit 0 is out of range, expected 1..4096"));
	}
	/* Another variant's key in an override: a warning naming it. */
	{
		const char *ovr[] = { "q.a.limit=3" };

		CHECK_EQ(vload(&c, "[q a]\nscheme = red\n", ovr, 1), 0);
		CHECK(strstr(warns, "override \"q.a.limit=3\": limit in [q a] does not apply to scheme red"));
	}
	/* The variant's own check across its keys, on the final values. */
	CHECK_EQ(vload(&c, "[sched]\n[q a]\nscheme = red\nkmin = 300K\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, "v.conf:2: [q a] scheme red: kmin 307200 is above kmax 204800, expected "
			  "kmin <= kmax"));
	{
		const char *ovr[] = { "q.a.kmax=400K" };

		CHECK_EQ(vload(&c, "[sched]\n[q a]\nscheme = red\nkmin = 300K\n", ovr, 1), 0);
	}
	{
		const char *ovr[] = { "sched.scheme=red", "sched.kmin=1M" };

		CHECK_EQ(vload(&c, "[q a]\n", ovr, 2), -EINVAL);
		CHECK(strstr(err, "override \"sched.scheme=red\": [sched] scheme red: kmin 1048576 is "
				  "above kmax"));
	}
	/* A variant whose config does not fit the store is a table bug, said so. */
	red_size = VSTORE + 8;
	CHECK_EQ(vload(&c, "[q a]\nscheme = red\n", NULL, 0), -E2BIG);
	CHECK(strstr(err, "scheme red: its config is 72 bytes, expected at most the 64"));
	red_size = sizeof(struct red_cfg);
	/* A one-shot override sets a key on the variant the queue has now. */
	CHECK_EQ(vload(&c, "[q a]\nscheme = red\nkmin = 1K\n", NULL, 0), 0);
	CHECK_EQ(cfg_override("q.a.kmax=2K", vsecs, NVSECS, &c, err, sizeof(err)), 0);
	CHECK_EQ(RED(c.qs[0].store)->kmin, 1024);
	CHECK_EQ(RED(c.qs[0].store)->kmax, 2048);
}

static void test_variant_reference(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f);
	if (!f)
		return;
	cfg_print_reference(f, vsecs, NVSECS);
	fclose(f);
	/* Each variant's table under its selector value, in the parent section. */
	CHECK(strstr(buf, "#### [sched] scheme = red\n\nRED-like marking.\n\n| key |"));
	CHECK(strstr(buf, "| kmin | size (bytes) | 5K | 0..1M | live | marking starts here |"));
	CHECK(strstr(buf, "| pmax | uint | 1 | 0..100 | restart | percent at kmax |"));
	CHECK(strstr(buf, "#### [sched] scheme = tail\n\nTail marking.\n\n| key |"));
	CHECK(strstr(buf, "| mode | drop\\|mark | drop |  | kept | what the tail does |"));
	CHECK(strstr(buf, "Values of `scheme` without keys of their own: plain."));
	/* The child points to them. */
	CHECK(strstr(buf, "### [q <label>]"));
	CHECK(strstr(buf, "The keys of each value of `scheme` are listed under [sched]."));
	CHECK(strstr(buf, "Sections added, removed or reordered on reload: restart."));
	CHECK(strstr(buf, "#### [q") == NULL);
	free(buf);
}

/* ---- the reload decision ----------------------------------------------------- */

static struct cfg_change notes[16];
static char note_labels[16][16];
static int nnotes;

/* c and its strings live during the call only: keep copies. */
static void collect_change(void *arg, const struct cfg_change *c)
{
	if (nnotes < 16) {
		notes[nnotes] = *c;
		if (c->label) {
			snprintf(note_labels[nnotes], sizeof(note_labels[0]), "%s", c->label);
			notes[nnotes].label = note_labels[nnotes];
		}
		notes[nnotes].why = c->why ? "refused" : NULL;
	}
	nnotes++;
}

static struct vcfg RO, RN;

/* Load a running and a new configuration and compare them. */
static int rdiff(const char *old_text, const char *new_text)
{
	char dummy[512];

	CHECK_EQ(vload(&RO, old_text, NULL, 0), 0);
	CHECK_EQ(vload(&RN, new_text, NULL, 0), 0);
	nnotes = 0;
	(void)dummy;
	return cfg_reload_diff(vsecs, NVSECS, &RO, &RN, NULL, collect_change, NULL, err,
			       sizeof(err));
}

static void test_reload_decision(void)
{
	const char *base = "[sched]\nscheme = tail\nquantum = 1500\n[q a]\nrate = 1G\n[q b]\n"
			   "scheme = red\n";

	/* Nothing changed. */
	CHECK_EQ(rdiff(base, base), 0);
	CHECK_EQ(nnotes, 0);
	CHECK_EQ(err[0], '\0');

	/* Live: applied, the change told with both values as text. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\nquantum = 9000\n[q a]\nrate = 2.5G\n[q b]\n"
			     "scheme = red\nkmin = 8K\n"), 0);
	CHECK_EQ(nnotes, 3);
	CHECK(!strcmp(notes[0].item->key, "quantum") && notes[0].how == CFG_LIVE);
	CHECK(!strcmp(notes[0].old_val, "1500") && !strcmp(notes[0].new_val, "9000"));
	CHECK(!strcmp(notes[1].item->key, "rate") && !strcmp(notes[1].label, "a"));
	CHECK(!strcmp(notes[1].old_val, "1G") && !strcmp(notes[1].new_val, "2.5G"));
	/* A variant's key, compared when both sides have the variant. */
	CHECK(!strcmp(notes[2].item->key, "kmin") && !strcmp(notes[2].variant, "red"));
	CHECK(!strcmp(notes[2].old_val, "5K") && !strcmp(notes[2].new_val, "8K"));
	CHECK_EQ(RN.quantum, 9000);

	/* Kept: the running value goes into the new configuration, with a note. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\nmode = mark\nquantum = 1500\n[q a]\n"
			     "rate = 1G\n[q b]\nscheme = red\n"), 0);
	CHECK_EQ(nnotes, 2);        /* [sched]'s and [q a]'s (inherited) mode */
	CHECK(notes[0].how == CFG_KEEP && !strcmp(notes[0].new_val, "mark"));
	CHECK_EQ(TAIL(RN.store)->mode, 0);
	CHECK_EQ(TAIL(RN.qs[0].store)->mode, 0);

	/* Restart: refused, naming the key and both values. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\nquantum = 1500\n[q a]\nrate = 1G\n[q b]\n"
			     "scheme = red\npmax = 5\n"), -EBUSY);
	CHECK(strstr(err, "[q b] pmax 1 -> 5 needs a restart"));

	/* A validator: refused with its reason and limit. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\n[q a]\nrate = 40G\n[q b]\nscheme = red\n"),
		 -EBUSY);
	CHECK(strstr(err, "[q a] rate: 40G is above the 10G the queue was made for"));
	CHECK(notes[0].why != NULL);

	/* Another variant: the selector's change (live), not its keys'. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\n[q a]\n[q b]\nscheme = tail\nlimit = 2\n"), 0);
	CHECK_EQ(nnotes, 1);
	CHECK(!strcmp(notes[0].item->key, "scheme") && !strcmp(notes[0].new_val, "tail"));

	/* [q] sections added: a restart, listing both sets. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\n[q a]\n[q b]\nscheme = red\n[q c]\n"), -EBUSY);
	CHECK(strstr(err, "[q] sections a, b -> a, b, c need a restart"));
	/* ... and one that applies (live) such changes compares the rest. */
	vsecs[1].reload = CFG_LIVE;
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\n[q b]\nscheme = red\nkmax = 10K\n"), 0);
	CHECK_EQ(nnotes, 2);
	CHECK(notes[0].item == NULL && !strcmp(notes[0].new_val, "b"));
	CHECK(!strcmp(notes[1].item->key, "kmax"));
	vsecs[1].reload = CFG_RESTART;

	/* Everything refused is listed, not only the first. */
	CHECK_EQ(rdiff(base, "[sched]\nscheme = tail\n[q a]\nrate = 40G\n[q b]\nscheme = red\n"
			     "pmax = 2\n"), -EBUSY);
	CHECK(strstr(err, "[q a] rate: 40G"));
	CHECK(strstr(err, "; [q b] pmax 1 -> 2 needs a restart"));
}

static void test_format_value(void)
{
	struct vcfg c;
	char buf[64];

	CHECK_EQ(vload(&c, "[sched]\nquantum = 64K\nscheme = tail\n[q a]\nrate = 0\n", NULL, 0), 0);
	cfg_format_value(&sched_items[0], &c, buf, sizeof(buf));
	CHECK(!strcmp(buf, "64K"));
	cfg_format_value(&sched_items[2], &c, buf, sizeof(buf));
	CHECK(!strcmp(buf, "tail"));
	cfg_format_value(&q_items[0], &c.qs[0], buf, sizeof(buf));
	CHECK(!strcmp(buf, "unlimited"));
	cfg_format_value(&tail_items[0], c.store, buf, sizeof(buf));
	CHECK(!strcmp(buf, "16"));
}

/* ---- the one reload (dconf_reload) ----------------------------------------- */

static int v_load(void *cfg, const char *p, char *const *ovr, int novr, char *e, size_t elen)
{
	return dconf_load(cfg, sizeof(struct vcfg), vsecs, NVSECS, p, ovr, novr, e, elen);
}

static int applied;
static void v_apply(void *d) { applied++; }

static char logbuf[8192];

/* dconf_reload on text, its log (stderr) in logbuf. */
static int reload_text(struct vcfg *running, const char *text, int cli_level)
{
	char p[] = "/tmp/test_config_reload_XXXXXX", lt[] = "/tmp/test_config_log_XXXXXX";
	struct dcli_args args = { .prog = "vd", .path = p, .cli_level = cli_level };
	const struct dconf_reload r = {
		.secs = vsecs, .nsecs = NVSECS, .cfg_size = sizeof(struct vcfg), .load = v_load,
		.log_level_off = offsetof(struct vcfg, level), .apply = v_apply,
	};
	int fd = mkstemp(p), lfd = mkstemp(lt), saved, ret;
	ssize_t n;

	if (fd < 0 || lfd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	if (n != (ssize_t)strlen(text))
		return -EIO;
	fflush(stderr);
	saved = dup(2);
	dup2(lfd, 2);
	ret = dconf_reload(&r, NULL, running, &args);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	lseek(lfd, 0, SEEK_SET);
	n = read(lfd, logbuf, sizeof(logbuf) - 1);
	logbuf[n > 0 ? n : 0] = '\0';
	close(lfd);
	unlink(lt);
	unlink(p);
	return ret;
}

static void test_dconf_reload(void)
{
	static struct vcfg run;
	const char *base = "[sched]\nscheme = red\n[q a]\n";
	int level = log_get_level();

	applied = 0;
	CHECK_EQ(vload(&run, base, NULL, 0), 0);
	/* Applied: the running config takes the new one, apply() runs, each
	 * change is logged with its values; -v (debug) wins over log_level. */
	CHECK_EQ(reload_text(&run, "[sched]\nscheme = red\nquantum = 9000\nlog_level = warn\n"
				   "[q a]\nkmin = 6K\n", LOG_LVL_DEBUG), 0);
	CHECK_EQ(applied, 1);
	CHECK_EQ(run.quantum, 9000);
	CHECK_EQ(RED(run.qs[0].store)->kmin, 6144);
	CHECK_EQ(log_get_level(), LOG_LVL_DEBUG);
	CHECK(strstr(logbuf, "reload: [sched] quantum: 1500 -> 9000"));
	CHECK(strstr(logbuf, "reload: [q a] red kmin: 5K -> 6K"));
	CHECK(strstr(logbuf, "reloaded /tmp/test_config_reload_"));
	/* Without -v/-q the file's log_level applies. */
	CHECK_EQ(reload_text(&run, "[sched]\nscheme = red\nlog_level = warn\n[q a]\n", -1), 0);
	CHECK_EQ(log_get_level(), LOG_LVL_WARN);
	log_set_level(LOG_LVL_INFO);
	/* Refused: nothing changes, apply() does not run, the log says why. */
	CHECK_EQ(reload_text(&run, "[sched]\nscheme = red\nquantum = 4000\n[q a]\npmax = 9\n", -1),
		 -EBUSY);
	CHECK_EQ(applied, 2);
	CHECK_EQ(run.quantum, 1500);
	CHECK(strstr(logbuf, "reload: [q a] pmax 1 -> 9 needs a restart; restart vd to apply "
			     "(nothing changed)"));
	/* A file that does not load: the same. */
	CHECK_EQ(reload_text(&run, "[sched]\nquantum = huge\n", -1), -EINVAL);
	CHECK_EQ(applied, 2);
	CHECK(strstr(logbuf, ":2: quantum \"huge\" is not a size"));
	CHECK(strstr(logbuf, "(keeping the running configuration)"));
	/* Kept: a warning, the rest applies. */
	CHECK_EQ(reload_text(&run, "[sched]\nscheme = tail\n[q a]\n", -1), 0);
	CHECK_EQ(reload_text(&run, "[sched]\nscheme = tail\nmode = mark\nquantum = 3000\n[q a]\n",
			     -1), 0);
	CHECK_EQ(run.quantum, 3000);
	CHECK_EQ(TAIL(run.store)->mode, 0);
	CHECK(strstr(logbuf, "warn vd: reload: [sched] mode: drop -> mark needs a restart; keeping "
			     "drop"));
	CHECK(strstr(logbuf, "changes applied, 2 kept"));
	log_set_level(level);
}

int main(void)
{
	RUN(test_parse_rate);
	RUN(test_parse_size);
	RUN(test_parse_qty);
	RUN(test_parse_duration);
	RUN(test_parse_mac);
	RUN(test_set_item);
	RUN(test_parse_real);
	RUN(test_range_format);
	RUN(test_defaults);
	RUN(test_parse_good);
	RUN(test_parse_empty);
	RUN(test_errors);
	RUN(test_error_leaves_value);
	RUN(test_parse_file);
	RUN(test_override);
	RUN(test_reference);
	RUN(test_variant_keys);
	RUN(test_variant_inherit);
	RUN(test_variant_errors);
	RUN(test_variant_reference);
	RUN(test_reload_decision);
	RUN(test_format_value);
	RUN(test_dconf_reload);
	return check_summary();
}
