// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for the NIC decisions (daemon/nic.c), as tables of rows:
 * zero-copy for a shared UMEM (every port or none, `on` fails naming the
 * first port that cannot), the reason a port is in copy mode, and what the
 * `nic_pause` key does with what ETHTOOL_GPAUSEPARAM said.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ifsave.h"
#include "nic.h"

#define P(n, e) { .name = n, .driver = "drv", .err = e }
#define PS(n) { .name = n, .driver = "drv", .skb = true }

static void test_zc_decide(void)
{
	static const struct {
		const char *what;
		int key;
		struct nic_zc ports[3];
		int n;
		int want, bad;
	} rows[] = {
		{ "auto, all can: zero-copy", NIC_ZC_AUTO, { P("a", 0), P("b", 0) }, 2, 1, -1 },
		{ "auto, one cannot: copy for all", NIC_ZC_AUTO, { P("a", 0), P("b", -EOPNOTSUPP) }, 2, 0, 1 },
		{ "auto, first cannot", NIC_ZC_AUTO, { P("a", -EOPNOTSUPP), P("b", 0) }, 2, 0, 0 },
		{ "auto, a generic port: copy", NIC_ZC_AUTO, { P("a", 0), PS("b") }, 2, 0, 1 },
		{ "on, all can: zero-copy", NIC_ZC_ON, { P("a", 0), P("b", 0), P("c", 0) }, 3, 1, -1 },
		{ "on, one cannot: refused, named", NIC_ZC_ON, { P("a", 0), P("b", 0), P("c", -EBUSY) }, 3,
		  -EOPNOTSUPP, 2 },
		{ "on, a generic port: refused", NIC_ZC_ON, { PS("a"), P("b", 0) }, 2, -EOPNOTSUPP, 0 },
		{ "off, all can: copy", NIC_ZC_OFF, { P("a", 0), P("b", 0) }, 2, 0, -1 },
		{ "off, none can: copy", NIC_ZC_OFF, { P("a", -EOPNOTSUPP) }, 1, 0, -1 },
		{ "no ports: copy", NIC_ZC_AUTO, { P("a", 0) }, 0, 0, -1 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int bad = 99, got = nic_zc_decide(rows[i].key, rows[i].ports, rows[i].n, &bad);

		if (got != rows[i].want || bad != rows[i].bad)
			printf("    row %zu (%s): got %d bad %d, want %d bad %d\n", i, rows[i].what,
			       got, bad, rows[i].want, rows[i].bad);
		CHECK_EQ(got, rows[i].want);
		CHECK_EQ(bad, rows[i].bad);
	}
}

static void test_zc_reason(void)
{
	struct nic_zc v[2] = { { .name = "p1", .driver = "veth", .err = -EOPNOTSUPP },
			       { .name = "p2", .driver = "i40e" } };
	struct nic_zc s[2] = { { .name = "p1", .driver = "ice" },
			       { .name = "p2", .driver = "ice", .skb = true } };
	char buf[160];

	nic_zc_reason(buf, sizeof(buf), NIC_ZC_AUTO, v, 2, 0);
	CHECK(!strcmp(buf, "zero-copy not supported by veth: EOPNOTSUPP"));
	/* p2 could, but shares the UMEM with p1. */
	nic_zc_reason(buf, sizeof(buf), NIC_ZC_AUTO, v, 2, 1);
	CHECK(!strcmp(buf, "port p1 (veth) cannot do zero-copy and the ports share one UMEM"));
	nic_zc_reason(buf, sizeof(buf), NIC_ZC_OFF, v, 2, 1);
	CHECK(!strcmp(buf, "zero_copy = off"));
	nic_zc_reason(buf, sizeof(buf), NIC_ZC_AUTO, s, 2, 1);
	CHECK(!strcmp(buf, "zero-copy needs native XDP, this port is generic (skb)"));
	nic_zc_reason(buf, sizeof(buf), NIC_ZC_AUTO, s, 2, 0);
	CHECK(!strcmp(buf, "port p2 (ice) cannot do zero-copy and the ports share one UMEM"));
}

static void test_pause_decide(void)
{
	static const struct {
		int err;
		struct nic_pause pp;
		int key;
		enum nic_pause_action want;
	} rows[] = {
		/* The driver does not report pause (veth): said, whatever the key. */
		{ -EOPNOTSUPP, { 0 }, NIC_PAUSE_WARN, NIC_PA_UNKNOWN },
		{ -EOPNOTSUPP, { 0 }, NIC_PAUSE_OFF, NIC_PA_UNKNOWN },
		{ -EOPNOTSUPP, { .rx = true }, NIC_PAUSE_KEEP, NIC_PA_UNKNOWN },
		/* Pause off in the NIC: nothing to do (autoneg alone is no pause). */
		{ 0, { 0 }, NIC_PAUSE_WARN, NIC_PA_NONE },
		{ 0, { .autoneg = true }, NIC_PAUSE_OFF, NIC_PA_NONE },
		{ 0, { 0 }, NIC_PAUSE_KEEP, NIC_PA_NONE },
		/* rx or tx on: the key decides. */
		{ 0, { .rx = true }, NIC_PAUSE_WARN, NIC_PA_WARN },
		{ 0, { .tx = true }, NIC_PAUSE_WARN, NIC_PA_WARN },
		{ 0, { .rx = true, .tx = true }, NIC_PAUSE_OFF, NIC_PA_TURN_OFF },
		{ 0, { .tx = true, .autoneg = true }, NIC_PAUSE_OFF, NIC_PA_TURN_OFF },
		{ 0, { .rx = true }, NIC_PAUSE_KEEP, NIC_PA_KEEP },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum nic_pause_action a = nic_pause_decide(rows[i].err, &rows[i].pp, rows[i].key);

		if (a != rows[i].want)
			printf("    row %zu: got %s, want %s\n", i, nic_pause_action_name(a),
			       nic_pause_action_name(rows[i].want));
		CHECK_EQ(a, rows[i].want);
	}
}

static void test_pause_names(void)
{
	struct nic_pause_state st = { .err = -EOPNOTSUPP };

	CHECK(!strcmp(nic_pause_found_name(&st), "unknown"));
	st = (struct nic_pause_state){ .found = { .rx = true } };
	CHECK(!strcmp(nic_pause_found_name(&st), "rx"));
	st.found = (struct nic_pause){ .tx = true };
	CHECK(!strcmp(nic_pause_found_name(&st), "tx"));
	st.found = (struct nic_pause){ .rx = true, .tx = true };
	CHECK(!strcmp(nic_pause_found_name(&st), "rx_tx"));
	st.found = (struct nic_pause){ .autoneg = true };
	CHECK(!strcmp(nic_pause_found_name(&st), "off"));
}

/* The saved original that lets a start after a SIGKILL give a NIC's pause
 * settings back (ifsave_begin/_peek/_end, on lo: any namespace has it). */
static void test_pause_saved(void)
{
	char dir[] = "/tmp/test_nic_XXXXXX", path[4200], sub[64];
	bool crash = true;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(sub, sizeof(sub), "%s/run", dir);
	CHECK_EQ(ifsave_peek(sub, "pause", "lo", 7), -ENOENT);
	/* First start: the value now is the original, saved (the dir made). */
	CHECK_EQ(ifsave_begin(sub, "pause", "lo", 6, 7, &crash), 6);
	CHECK(!crash);
	CHECK_EQ(ifsave_peek(sub, "pause", "lo", 7), 6);
	/* Killed, started again with pause off in the NIC: the saved original wins. */
	CHECK_EQ(ifsave_begin(sub, "pause", "lo", 0, 7, &crash), 6);
	CHECK(crash);
	/* A clean stop removes it. */
	ifsave_end(sub, "pause", "lo");
	CHECK_EQ(ifsave_peek(sub, "pause", "lo", 7), -ENOENT);
	/* Another kind's file is another file; a value out of range is refused. */
	CHECK_EQ(ifsave_begin(sub, "pause", "lo", 3, 7, &crash), 3);
	CHECK_EQ(ifsave_peek(sub, "other", "lo", 7), -ENOENT);
	CHECK_EQ(ifsave_peek(sub, "pause", "lo", 2), -EINVAL);
	/* A file for another interface index (lo made anew) is stale. */
	CHECK_EQ(ifsave_path(sub, "lo", path, sizeof(path)), 0);
	{
		char *name = strrchr(path, '/') + 1, rest[128];

		snprintf(rest, sizeof(rest), "%s", name + strlen("ipv6")); /* "-NETNS-lo" */
		snprintf(name, sizeof(path) - (size_t)(name - path), "pause%s", rest);
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "5 999999 0\n");
		fclose(f);
	}
	CHECK_EQ(ifsave_peek(sub, "pause", "lo", 7), -ESTALE);
	ifsave_end(sub, "pause", "lo");
	rmdir(sub);
	rmdir(dir);
}

int main(void)
{
	RUN(test_zc_decide);
	RUN(test_zc_reason);
	RUN(test_pause_decide);
	RUN(test_pause_names);
	RUN(test_pause_saved);
	return check_summary();
}
