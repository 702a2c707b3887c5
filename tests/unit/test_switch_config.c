// SPDX-License-Identifier: BSD-2-Clause
/*
 * switchd's configuration as a congestion point and a reload see it:
 *  - a scheme's per-port keys (cp_ops keys/nkeys/cfg_size): the registry's
 *    schemes fit the per-port store; a test schema that gives "naive" and
 *    "santos" key tables shows keys before and after `marking`, [switch]
 *    values as the defaults of its ports, overrides, another scheme's key
 *    as a warning naming file:line, and sw_port_cp_cfg() on a core;
 *  - the reload decision with the real tables and a real core (no
 *    sockets): live, kept and restart keys, the UMEM and MTU validators.
 * The schema under test is sw_cfg_sections itself; the test schema differs
 * only in where its selector finds the variants.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dconf.h"
#include "log.h"
#include "nic.h"
#include "vt.h"
#include "../../switchd/switch_private.h"

static char err[1024];
static char path[64];

/* Write text to a fresh temp file (its name in path). */
static int write_conf(const char *text)
{
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/tmp/test_switch_config_XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* stderr (the log) into a file while f runs, then into buf. */
static char logbuf[8192];
static int saved_stderr = -1;

static void capture_start(void)
{
	char tmpl[] = "/tmp/test_switch_config_log_XXXXXX";
	int fd = mkstemp(tmpl);

	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
	unlink(tmpl);
}

static void capture_end(void)
{
	ssize_t n;

	fflush(stderr);
	lseek(2, 0, SEEK_SET);
	n = read(2, logbuf, sizeof(logbuf) - 1);
	logbuf[n > 0 ? n : 0] = '\0';
	dup2(saved_stderr, 2);
	close(saved_stderr);
}

/* ---- the registry's schemes ------------------------------------------------ */

static void test_registry_keys(void)
{
	unsigned char store[SW_CP_CFG_MAX];
	struct cfg_section sec;

	for (int i = 1; cp_names[i]; i++) {
		const struct cp_ops *o = cp_by_index(i);

		CHECK(o != NULL);
		if (!o)
			continue;
		/* Its config fits the store every port has. */
		CHECK(o->cfg_size <= SW_CP_CFG_MAX);
		CHECK(!o->nkeys || o->keys);
		/* Its defaults parse (a table bug would stop every start). */
		sec = (struct cfg_section){ .name = o->name, .items = o->keys, .nitems = o->nkeys };
		memset(store, 0, sizeof(store));
		CHECK_EQ(cfg_apply_defaults(&sec, store, err, sizeof(err)), 0);
	}
}

/* ---- a test schema: naive and santos with keys -------------------------------- */

struct tnaive {
	uint64_t threshold;
	uint64_t interval;
};
struct tsantos {
	uint64_t cnt_max;
};

static const struct cfg_item tnaive_keys[] = {
	{ .key = "threshold", .type = CFG_QTY, .off = offsetof(struct tnaive, threshold),
	  .def = "8frames", .help = "mark above this", .reload = CFG_LIVE },
	{ .key = "interval", .type = CFG_DURATION, .off = offsetof(struct tnaive, interval),
	  .def = "1ms", .min = 1000, .max = 1000000000, .help = "timer", .reload = CFG_LIVE },
};
static const struct cfg_item tsantos_keys[] = {
	{ .key = "cnt_max", .type = CFG_UINT, .off = offsetof(struct tsantos, cnt_max),
	  .def = "100", .min = 1, .max = 1000, .help = "cap of cnt2", .reload = CFG_RESTART },
};

/* CFG_QTY is a struct cfg_qty, not a uint64_t: the threshold is one. */
struct tnaive_q {
	struct cfg_qty threshold;
	uint64_t interval;
};

static struct cfg_item tnaive_items[2];

/* A check across the scheme's keys: a threshold in frames. */
static int tnaive_check(void *cfg, char *e, size_t elen)
{
	const struct tnaive_q *c = cfg;

	if (c->threshold.frames)
		return 0;
	snprintf(e, elen, "threshold in bytes, expected frames");
	return -EINVAL;
}

static bool test_variant(size_t i, struct cfg_variant *v)
{
	if (i == 0) {
		*v = (struct cfg_variant){ .name = "naive", .help = "test keys", .items = tnaive_items,
					   .nitems = 2, .size = sizeof(struct tnaive_q),
					   .check = tnaive_check };
		return true;
	}
	if (i == 1) {
		*v = (struct cfg_variant){ .name = "santos", .items = tsantos_keys, .nitems = 1,
					   .size = sizeof(struct tsantos) };
		return true;
	}
	return false;
}

static struct cfg_section tsecs[3];
static struct cfg_selector tsel_sw, tsel_port;

/* sw_cfg_sections with the test variants. */
static void tschema_init(void)
{
	memcpy(tnaive_items, tnaive_keys, sizeof(tnaive_items));
	tnaive_items[0].off = offsetof(struct tnaive_q, threshold);
	tnaive_items[1].off = offsetof(struct tnaive_q, interval);
	CHECK_EQ(sw_cfg_nsections, 3);
	memcpy(tsecs, sw_cfg_sections, sizeof(tsecs));
	tsel_sw = *tsecs[0].sel;
	tsel_sw.variant = test_variant;
	tsecs[0].sel = &tsel_sw;
	tsel_port = *tsecs[1].sel;
	tsel_port.variant = test_variant;
	tsecs[1].sel = &tsel_port;
}

static struct sw_cfg C;

/* The daemon's load with the test schema (without sw_cfg_load's cross-key
 * checks, which do not look at variants). Log captured. */
static int tload(const char *text, char *const *ovr, int novr)
{
	int ret = write_conf(text);

	if (ret)
		return ret;
	err[0] = '\0';
	capture_start();
	ret = dconf_load(&C, sizeof(C), tsecs, 3, path, ovr, novr, err, sizeof(err));
	capture_end();
	unlink(path);
	return ret;
}

#define NAIVE(p) ((const struct tnaive_q *)(p))
#define SANTOS(p) ((const struct tsantos *)(p))

static void test_scheme_keys(void)
{
	char *ovr[] = { "port.p3.interval=5ms", "switch.threshold=12frames" };
	struct umem *u = NULL;
	struct vt_sink k;
	struct dp_sink sink;
	uint8_t macs[4][6] = { { 2 }, { 4 }, { 6 }, { 8 } };
	uint32_t mtus[4] = { 1500, 1500, 1500, 1500 };
	struct sw *s = NULL;
	char line[192];

	tschema_init();
	CHECK_EQ(tload("[port p0]\n"             /* 1: follows [switch]: naive */
		       "[switch]\n"              /* 2 */
		       "threshold = 4frames\n"   /* 3: before marking */
		       "marking = naive\n"       /* 4 */
		       "[port p1]\n"             /* 5 */
		       "interval = 2ms\n"        /* 6: naive's, from [switch] on */
		       "[port p2]\n"             /* 7 */
		       "marking = santos\n"      /* 8 */
		       "cnt_max = 7\n"           /* 9 */
		       "interval = 3ms\n"        /* 10: naive's: a warning */
		       "[port p3]\n",            /* 11 */
		       ovr, 2), 0);
	CHECK_EQ(err[0], '\0');
	snprintf(line, sizeof(line), "%s:10: interval in [port p2] does not apply to marking santos; "
		 "ignored", path);
	CHECK(strstr(logbuf, line));
	/* [switch]: its own keys, the override last. */
	CHECK_EQ(NAIVE(C.cp_cfg)->threshold.n, 12);
	CHECK(NAIVE(C.cp_cfg)->threshold.frames);
	CHECK_EQ(NAIVE(C.cp_cfg)->interval, 1000000);
	/* p0 follows [switch]: its values. */
	CHECK_EQ(NAIVE(C.ports[0].cp_cfg)->threshold.n, 12);
	CHECK_EQ(NAIVE(C.ports[0].cp_cfg)->interval, 1000000);
	/* p1 overrides one key. */
	CHECK_EQ(NAIVE(C.ports[1].cp_cfg)->threshold.n, 12);
	CHECK_EQ(NAIVE(C.ports[1].cp_cfg)->interval, 2000000);
	/* p2 is santos: its own defaults and keys. */
	CHECK_EQ(SANTOS(C.ports[2].cp_cfg)->cnt_max, 7);
	/* p3 follows and is overridden on the command line. */
	CHECK_EQ(NAIVE(C.ports[3].cp_cfg)->interval, 5000000);

	/* A congestion point reads them through the core. */
	CHECK_EQ(umem_create(&u, 1024, 2048, 0), 0);
	if (!u)
		return;
	vt_sink_init(&k, u, NULL);
	sink = vt_sink(&k);
	CHECK_EQ(sw_core_create(&s, &C, u, &sink, (const uint8_t (*)[6])macs, mtus, 1000), 0);
	if (s) {
		k.now = &s->now;
		CHECK(sw_port_scheme(s, 0) == cp_find("naive"));
		CHECK(sw_port_scheme(s, 2) == cp_find("santos"));
		CHECK_EQ(NAIVE(sw_port_cp_cfg(s, 1))->interval, 2000000);
		CHECK_EQ(SANTOS(sw_port_cp_cfg(s, 2))->cnt_max, 7);
		CHECK_EQ(NAIVE(sw_port_cp_cfg(s, 3))->interval, 5000000);
	}
	sw_core_destroy(s);
	umem_destroy(u);
	vt_sink_fini(&k);
}

static void test_scheme_key_errors(void)
{
	char *ovr[] = { "port.p0.threshold=lots" };

	tschema_init();
	/* A key of no scheme: an error at its line naming every scheme's keys. */
	CHECK_EQ(tload("[port p0]\nmarking = naive\nthreshhold = 3\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, ":3: unknown key \"threshhold\" in [port p0], expected one of: ifname,"));
	CHECK(strstr(err, "; or with marking naive: threshold, interval; with marking santos: cnt_max"));
	/* A bad value, from an override: the override named, and what was expected. */
	CHECK_EQ(tload("[switch]\nmarking = naive\n[port p0]\n", ovr, 1), -EINVAL);
	CHECK(strstr(err, "override \"port.p0.threshold=lots\": threshold \"lots\" is not a quantity, "
			  "expected "));
	/* The scheme's check across its keys: where the port's section is. */
	CHECK_EQ(tload("[switch]\nmarking = naive\n[port p0]\nthreshold = 4K\n", NULL, 0), -EINVAL);
	CHECK(strstr(err, ":3: [port p0] marking naive: threshold in bytes, expected frames"));
	/* The real tables: a key of no scheme is unknown. */
	CHECK_EQ(write_conf("[switch]\nmarking = santos\n[port p0]\nfrobnicate = 3\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, ":4: unknown key \"frobnicate\" in [port p0], expected one of: "));
	/* vlans: what was wrong and what is expected; a good list is a map. */
	CHECK_EQ(write_conf("[port p0]\nvlans = 10,4095\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, "[port p0] vlans \"10,4095\": expected all, or VLAN ids and ranges "
			  "1..4094 separated by commas (10,20-29)"));
	/* zero_copy is one mode for the shared UMEM: on needs every port native. */
	CHECK_EQ(write_conf("[switch]\nzero_copy = on\n[port p0]\n[port p1]\nxdp_mode = skb\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, ": zero_copy = on with [port p1] xdp_mode = skb, expected xdp_mode "
			  "native or auto"));
	CHECK_EQ(write_conf("[port p0]\nxdp_mode = generic\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, ":2: xdp_mode \"generic\" is not valid, expected one of: native, skb, auto"));
	CHECK_EQ(write_conf("[port p0]\nnic_pause = on\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, ":2: nic_pause \"on\" is not valid, expected one of: warn, off, keep"));
	CHECK_EQ(write_conf("[port p0]\n[port p1]\nxdp_mode = auto\nnic_pause = off\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(C.zero_copy, NIC_ZC_AUTO);
	CHECK_EQ(C.ports[0].xdp_mode, XDP_MODE_NATIVE);
	CHECK_EQ(C.ports[0].nic_pause, NIC_PAUSE_WARN);
	CHECK_EQ(C.ports[1].xdp_mode, XDP_MODE_AUTO);
	CHECK_EQ(C.ports[1].nic_pause, NIC_PAUSE_OFF);
	CHECK_EQ(write_conf("[switch]\nzero_copy = off\n[port p0]\nxdp_mode = skb\nnic_pause = keep\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(C.zero_copy, NIC_ZC_OFF);
	CHECK_EQ(C.ports[0].xdp_mode, XDP_MODE_SKB);
	CHECK_EQ(C.ports[0].nic_pause, NIC_PAUSE_KEEP);
	CHECK_EQ(write_conf("[port p0]\nvlans = 10,20-29\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK(C.ports[0].vlan_map[0] & (1ull << 10));
	CHECK(!(C.ports[0].vlan_map[0] & (1ull << 11)));
	CHECK(!(C.ports[0].vlan_map[0] & (1ull << 19)));
	CHECK(C.ports[0].vlan_map[0] & (1ull << 20));
	CHECK(C.ports[0].vlan_map[0] & (1ull << 29));
	CHECK(!(C.ports[0].vlan_map[0] & (1ull << 30)));
}

/* queue and rx_queues: every queue by default, `queue` alone when set (the
 * one-socket port of old), never both; two ports on one interface may not
 * claim one queue. */
static void test_rx_queues(void)
{
	struct xport_qsel sel;

	CHECK_EQ(write_conf("[port p0]\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(C.ports[0].queue, SW_QUEUE_UNSET);
	CHECK_EQ(sw_port_rx_queues(&C.ports[0], &sel), 0);
	CHECK(sel.all);
	/* queue = 0 is set, unlike the default: queue 0 alone. */
	CHECK_EQ(write_conf("[port p0]\nqueue = 0\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(sw_port_rx_queues(&C.ports[0], &sel), 0);
	CHECK(!sel.all && !sel.first);
	CHECK_EQ(sel.mask, 1);
	/* queue with rx_queues = all (its default, even written) is queue. */
	CHECK_EQ(write_conf("[port p0]\nqueue = 2\nrx_queues = all\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(sw_port_rx_queues(&C.ports[0], &sel), 0);
	CHECK_EQ(sel.mask, 4);
	CHECK_EQ(write_conf("[port p0]\nqueue = 1\nrx_queues = 0-3\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, "[port p0] sets both queue (1) and rx_queues (0-3), expected one of them"));
	CHECK_EQ(write_conf("[port p0]\nrx_queues = 0-64\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, "[port p0] rx_queues \"0-64\": expected all, a count 1..64, or queues "
			  "and ranges 0..63"));
	CHECK_EQ(write_conf("[port p0]\nrx_queues = 0,2\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(sw_port_rx_queues(&C.ports[0], &sel), 0);
	CHECK_EQ(sel.mask, 5);
	/* One interface, two ports: apart is fine, overlapping is not. */
	CHECK_EQ(write_conf("[port a]\nifname = e0\nqueue = 0\n[port b]\nifname = e0\n"
			    "rx_queues = 1-3\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), 0);
	unlink(path);
	CHECK_EQ(write_conf("[port a]\nifname = e0\nrx_queues = 2\n[port b]\nifname = e0\n"
			    "queue = 1\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, "ports a and b both use receive queues of e0, expected one port per "
			  "interface queue"));
	/* All of them (the default) leaves none to another port. */
	CHECK_EQ(write_conf("[port a]\nifname = e0\n[port b]\nifname = e0\nqueue = 5\n"), 0);
	CHECK_EQ(sw_cfg_load(&C, path, NULL, 0, err, sizeof(err)), -EINVAL);
	unlink(path);
	CHECK(strstr(err, "ports a and b both use receive queues of e0"));
}

static void test_scheme_reference(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	tschema_init();
	f = open_memstream(&buf, &len);
	cfg_print_reference(f, tsecs, 3);
	fclose(f);
	CHECK(strstr(buf, "#### [switch] marking = naive\n\ntest keys\n\n"));
	CHECK(strstr(buf, "| threshold | size or frames | 8frames |  | live | mark above this |"));
	CHECK(strstr(buf, "#### [switch] marking = santos\n"));
	CHECK(strstr(buf, "| cnt_max | uint | 100 | 1..1000 | restart | cap of cnt2 |"));
	CHECK(strstr(buf, "The keys of each value of `marking` are listed under [switch]."));
	free(buf);
	/* The real tables list the schemes without keys. */
	buf = NULL;
	f = open_memstream(&buf, &len);
	cfg_print_reference(f, sw_cfg_sections, sw_cfg_nsections);
	fclose(f);
	CHECK(strstr(buf, "Values of `marking` without keys of their own: naive, santos."));
	CHECK(strstr(buf, "| rate | rate (bit/s) | unlimited | 0..400G | live |"));
	CHECK(strstr(buf, "| flow_control | none\\|pause\\|pfc\\|credit | none |  | restart |"));
	CHECK(strstr(buf, "| quiet_stack | bool | yes |  | kept |"));
	free(buf);
}

/* ---- the reload decision with the real tables ---------------------------------- */

struct rt {
	struct sw_cfg old, new;
	struct umem *u;
	struct vt_sink k;
	struct sw *s;
};

static struct rt R;

static struct cfg_change notes[32];
static char note_keys[32][32];
static int nnotes;

static void collect(void *arg, const struct cfg_change *c)
{
	if (nnotes < 32) {
		notes[nnotes] = *c;
		snprintf(note_keys[nnotes], sizeof(note_keys[0]), "%s", c->item ? c->item->key : "");
	}
	nnotes++;
}

static int load_into(struct sw_cfg *cfg, const char *text)
{
	int ret = write_conf(text);

	if (!ret)
		ret = sw_cfg_load(cfg, path, NULL, 0, err, sizeof(err));
	unlink(path);
	if (ret)
		printf("    config: %s\n", err);
	return ret;
}

/* A running core on old_text, its UMEM sized as switchd sizes it. */
static int rt_start(const char *old_text, uint32_t frame_size)
{
	uint8_t macs[SW_MAX_PORTS][6] = { { 2 } };
	uint32_t mtus[SW_MAX_PORTS];
	struct dp_sink sink;
	int ret;

	memset(&R, 0, sizeof(R));
	ret = load_into(&R.old, old_text);
	if (ret)
		return ret;
	ret = umem_create(&R.u, sw_cfg_umem_need(&R.old), frame_size, 0);
	if (ret)
		return ret;
	for (int i = 0; i < SW_MAX_PORTS; i++)
		mtus[i] = 1500;
	vt_sink_init(&R.k, R.u, NULL);
	sink = vt_sink(&R.k);
	ret = sw_core_create(&R.s, &R.old, R.u, &sink, (const uint8_t (*)[6])macs, mtus, 1000);
	if (!ret)
		R.k.now = &R.s->now;
	return ret;
}

static void rt_stop(void)
{
	sw_core_destroy(R.s);
	umem_destroy(R.u);
	vt_sink_fini(&R.k);
}

static int rt_diff(const char *new_text)
{
	int ret = load_into(&R.new, new_text);

	if (ret)
		return ret;
	nnotes = 0;
	return cfg_reload_diff(sw_cfg_sections, sw_cfg_nsections, &R.old, &R.new, R.s, collect,
			       NULL, err, sizeof(err));
}

#define BASE "[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64K\n" \
	     "[port p1]\nrate = 100M\nbuffer = 16frames\n[fdb 02:00:00:00:00:09]\nport = p1\n"

static void test_reload_live_kept_restart(void)
{
	if (rt_start(BASE, 2048)) {
		CHECK(!"rt_start");
		return;
	}
	CHECK_EQ(rt_diff(BASE), 0);
	CHECK_EQ(nnotes, 0);
	/* Live: applied, with both values as text. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\nlog_level = debug\n[port p0]\nrate = 250M\n"
			 "buffer = 32K\n[port p1]\nrate = 100M\nbuffer = 16frames\nmarking = santos\n"
			 "[fdb 02:00:00:00:00:09]\nport = p1\n"), 0);
	CHECK_EQ(nnotes, 4);
	CHECK(!strcmp(note_keys[0], "log_level") && notes[0].how == CFG_LIVE);
	CHECK(!strcmp(note_keys[1], "rate") && !strcmp(notes[1].old_val, "100M") &&
	      !strcmp(notes[1].new_val, "250M"));
	CHECK(!strcmp(note_keys[2], "buffer") && !strcmp(notes[2].new_val, "32K"));
	CHECK(!strcmp(note_keys[3], "marking") && !strcmp(notes[3].new_val, "santos"));
	/* Kept: the running value stays in the new configuration. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 128\nname = other\n[port p0]\nrate = 100M\n"
			 "buffer = 64K\nquiet_stack = no\n[port p1]\nrate = 100M\nbuffer = 16frames\n"
			 "[fdb 02:00:00:00:00:09]\nport = p0\n[fdb 02:00:00:00:00:0a]\nport = p1\n"),
		 0);
	CHECK_EQ(R.new.ring_size, 64);
	CHECK(!strcmp(R.new.name, "switchd"));
	CHECK(R.new.ports[0].quiet_stack);
	CHECK_EQ(R.new.nstatic, 1);
	CHECK(!strcmp(R.new.statics[0].port, "p1"));
	/* Restart: refused, every reason named. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64K\n"
			 "flow_control = credit\nifname = x0\n[port p1]\nrate = 100M\n"
			 "buffer = 16frames\n[fdb 02:00:00:00:00:09]\nport = p1\n"), -EBUSY);
	CHECK(strstr(err, "[port p0] ifname p0 -> x0 needs a restart"));
	CHECK(strstr(err, "[port p0] flow_control none -> credit needs a restart"));
	/* Ports added (or reordered): refused. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p1]\nrate = 100M\nbuffer = 16frames\n"
			 "[port p0]\nrate = 100M\nbuffer = 64K\n"), -EBUSY);
	CHECK(strstr(err, "[port] sections p0, p1 -> p1, p0 need a restart"));
	rt_stop();
}

static void test_reload_validators(void)
{
	struct sw_cfg *big;
	char text[512], want[128], *lim;

	if (rt_start(BASE, 2048)) {
		CHECK(!"rt_start");
		return;
	}
	/* A buffer the UMEM made at start cannot back: refused, with the limit. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 4M\n"
			 "[port p1]\nrate = 100M\nbuffer = 16frames\n"), -EBUSY);
	CHECK(strstr(err, "[port p0] buffer: 4M needs "));
	CHECK(strstr(err, "UMEM frames in all, the UMEM made at start has "));
	lim = strstr(err, "at most buffer = ");
	CHECK(lim != NULL);
	/* The limit it names is one the UMEM holds, and one unit more is not. */
	if (lim) {
		struct cfg_qty max;
		char word[32];

		CHECK_EQ(sscanf(lim + strlen("at most buffer = "), "%31s", word), 1);
		CHECK_EQ(cfg_parse_qty(word, &max), 0);
		big = calloc(1, sizeof(*big));
		snprintf(text, sizeof(text), "[switch]\nring_size = 64\n[port p0]\nbuffer = %s\n"
			 "[port p1]\nbuffer = 16frames\n", word);
		CHECK_EQ(load_into(big, text), 0);
		CHECK(sw_cfg_umem_need(big) <= R.u->nframes);
		snprintf(text, sizeof(text), "[switch]\nring_size = 64\n[port p0]\nbuffer = %llu\n"
			 "[port p1]\nbuffer = 16frames\n", (unsigned long long)max.n + 64 * 8 + 64);
		CHECK_EQ(load_into(big, text), 0);
		CHECK(sw_cfg_umem_need(big) > R.u->nframes);
		free(big);
	}
	/* A buffer past the UMEM's 2^20-frame cap on its own: the same limit,
	 * not "0K" (the capped need less this buffer wrapped around). */
	snprintf(want, sizeof(want), "%s", lim ? lim : "?");
	if (strchr(want, ' ') && strstr(want, " on this port"))
		*strstr(want, " on this port") = '\0';
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64M\n"
			 "[port p1]\nrate = 100M\nbuffer = 16frames\n"), -EBUSY);
	CHECK(strstr(err, "[port p0] buffer: 64M needs "));
	CHECK(!strstr(err, "at most buffer = 0K"));
	CHECK(strstr(err, want));
	/* In frames, the limit is in frames. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64K\n"
			 "[port p1]\nrate = 100M\nbuffer = 100000frames\n"), -EBUSY);
	CHECK(strstr(err, "frames on this port"));
	/* A smaller buffer is fine. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 8K\n"
			 "[port p1]\nrate = 100M\nbuffer = 2frames\n[fdb 02:00:00:00:00:09]\n"
			 "port = p1\n"), 0);
	/* The buffer's unit is what occupancy and credits are counted in. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 40frames\n"
			 "[port p1]\nrate = 100M\nbuffer = 16frames\n"), -EBUSY);
	CHECK(strstr(err, "[port p0] buffer: changes unit (bytes -> frames), expected bytes"));
	/* The CPU pseudo-port's frames come from the UMEM too. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\ncpu_queue = 4096\n[port p0]\nrate = 100M\n"
			 "buffer = 64K\n[port p1]\nrate = 100M\nbuffer = 16frames\n"), -EBUSY);
	CHECK(strstr(err, "[switch] cpu_queue: 4096 needs "));
	/* An MTU whose frames do not fit the 2048-byte UMEM frames. */
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64K\n"
			 "mtu = 3000\n[port p1]\nrate = 100M\nbuffer = 16frames\n"), -EBUSY);
	CHECK(strstr(err, "[port p0] mtu: 3000 does not fit the 2048-byte UMEM frames made at "
			  "start, expected at most 1770"));
	CHECK_EQ(rt_diff("[switch]\nring_size = 64\n[port p0]\nrate = 100M\nbuffer = 64K\n"
			 "mtu = 1770\n[port p1]\nrate = 100M\nbuffer = 16frames\n[fdb "
			 "02:00:00:00:00:09]\nport = p1\n"), 0);
	rt_stop();
}

/* A scheme's keys through a reload: compared per port, live or not by the key. */
static void test_reload_scheme_keys(void)
{
	static struct sw_cfg o, n;

	tschema_init();
	CHECK_EQ(tload("[switch]\nmarking = naive\n[port p0]\n[port p1]\nmarking = santos\n",
		       NULL, 0), 0);
	o = C;
	CHECK_EQ(tload("[switch]\nmarking = naive\ninterval = 4ms\n[port p0]\n[port p1]\n"
		       "marking = santos\ncnt_max = 5\n", NULL, 0), 0);
	n = C;
	nnotes = 0;
	CHECK_EQ(cfg_reload_diff(tsecs, 3, &o, &n, NULL, collect, NULL, err, sizeof(err)), -EBUSY);
	/* [switch]'s and p0's (inherited) interval, live; p1's cnt_max, restart. */
	CHECK_EQ(nnotes, 3);
	CHECK(!strcmp(note_keys[0], "interval") && !strcmp(notes[0].variant, "naive"));
	CHECK(!strcmp(note_keys[1], "interval") && notes[1].how == CFG_LIVE);
	CHECK(!strcmp(note_keys[2], "cnt_max") && notes[2].how == CFG_RESTART);
	CHECK(strstr(err, "[port p1] cnt_max 100 -> 5 needs a restart"));
}

int main(void)
{
	/* Warnings are what some tests look for; nothing below info. */
	log_set_level(LOG_LVL_INFO);
	RUN(test_registry_keys);
	RUN(test_scheme_keys);
	RUN(test_scheme_key_errors);
	RUN(test_rx_queues);
	RUN(test_scheme_reference);
	RUN(test_reload_live_kept_restart);
	RUN(test_reload_validators);
	RUN(test_reload_scheme_keys);
	return check_summary();
}
