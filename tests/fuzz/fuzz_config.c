// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the config parser: the input is a config file. It
 * goes to three schemas:
 *  - a made-up one that covers every value type and a selector with two
 *    variants (keys resolved after the file and an override, a [port] that
 *    follows [global]'s variant), through a load with a warning callback;
 *  - switchd's real tables with their checks (sw_cfg_load), and hostd's
 *    (hd_cfg_load), the input written to a memfd and read as a file;
 * and the reload decision compares each daemon's result with the same file
 * loaded under the override (cfg_reload_diff), switchd's also with a
 * running switch for its reload validators to judge (its UMEM's size and
 * frame size, its ports' MTUs: from the first byte).
 * The input's last line is the override (and goes to the value parsers,
 * which see command-line text), the lines before it the file: the last
 * rather than the first so that the sections opened by the lines before it
 * exist and the override can reach them, and not in the file too, or it
 * would fail there before the override and the reload are reached.
 * Objects come from static pools reset on each run, so a run leaks nothing
 * and cannot depend on the previous one.
 */
#include "config.h"
#include "log.h"
#include "../../hostd/hostd.h"
#include "../../switchd/switch_private.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const fc_names[] = { "none", "pause", "pfc", "credit", NULL };
static const char *const g_scheme_names[] = { "none", "red", "tail", NULL };
static const char *const p_scheme_names[] = { "global", "none", "red", "tail", NULL };

struct red { uint64_t kmin, kmax; struct cfg_qty q; };
struct tail { int64_t limit; char tag[6]; bool on; };

#define VSTORE 32

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
	int scheme;
	_Alignas(8) unsigned char store[VSTORE];
};

struct fport {
	char label[16];
	char ifname[16];
	uint64_t rate;
	struct cfg_qty headroom;
	int fc;
	bool enabled;
	uint64_t mtu;
	int scheme;
	_Alignas(8) unsigned char store[VSTORE];
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
	{ .key = "scheme", .type = CFG_ENUM, .off = G(scheme), .def = "none",
	  .names = g_scheme_names },
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
	{ .key = "scheme", .type = CFG_ENUM, .off = P(scheme), .def = "global",
	  .names = p_scheme_names },
};

static const struct cfg_item red_items[] = {
	{ .key = "kmin", .type = CFG_SIZE, .off = offsetof(struct red, kmin), .def = "5K",
	  .min = 0, .max = 1 << 20 },
	{ .key = "kmax", .type = CFG_SIZE, .off = offsetof(struct red, kmax), .def = "200K",
	  .min = 0, .max = 1 << 20 },
	{ .key = "q", .type = CFG_QTY, .off = offsetof(struct red, q), .min = 1, .max = 0 },
};
static const struct cfg_item tail_items[] = {
	{ .key = "limit", .type = CFG_INT, .off = offsetof(struct tail, limit), .def = "16",
	  .min = -5, .max = 4096 },
	{ .key = "tag", .type = CFG_STR, .off = offsetof(struct tail, tag),
	  .size = sizeof(((struct tail *)0)->tag), .def = "t" },
	{ .key = "on", .type = CFG_BOOL, .off = offsetof(struct tail, on), .def = "no" },
	{ .key = "kmin", .type = CFG_UINT, .off = offsetof(struct tail, limit), .def = "1" },
};

static int red_check(void *cfg, char *err, size_t errlen)
{
	const struct red *r = cfg;

	if (r->kmin <= r->kmax)
		return 0;
	snprintf(err, errlen, "kmin above kmax");
	return -EINVAL;
}

static bool scheme_variant(size_t i, struct cfg_variant *v)
{
	if (i == 0)
		*v = (struct cfg_variant){ .name = "red", .items = red_items, .nitems = 3,
					   .size = sizeof(struct red), .check = red_check };
	else if (i == 1)
		*v = (struct cfg_variant){ .name = "tail", .items = tail_items, .nitems = 4,
					   .size = sizeof(struct tail) };
	return i < 2;
}

static const struct cfg_selector g_sel = {
	.key = "scheme", .variant = scheme_variant, .store_off = G(store), .store_size = VSTORE,
};
static const struct cfg_selector p_sel = {
	.key = "scheme", .variant = scheme_variant, .store_off = P(store), .store_size = VSTORE,
	.parent = "global", .follow = "global",
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
	  .find = global_find, .sel = &g_sel },
	{ .name = "port", .labelled = true, .items = port_items,
	  .nitems = sizeof(port_items) / sizeof(port_items[0]), .open = port_open,
	  .find = port_find, .sel = &p_sel },
};
#define NSECS (sizeof(secs) / sizeof(secs[0]))

/* A short error buffer makes every message exercise truncation. */
static void check_err(const char *err, size_t len)
{
	if (!memchr(err, '\0', len))
		abort();
}

static void count_warn(void *arg, const char *msg)
{
	if (!memchr(msg, '\0', 512))
		abort();
	(*(int *)arg)++;
}

/* The made-up schema: the text and its last line as an override, one load. */
static void fuzz_schema(const char *text, const char *last)
{
	struct cfg_load *l;
	char err[96];
	int warns = 0;

	memset(&pool, 0, sizeof(pool));
	memset(err, 0x55, sizeof(err));
	if (cfg_load_begin(&l, secs, NSECS, NULL, count_warn, &warns))
		return;
	cfg_load_string(l, "fuzz.conf", text, err, sizeof(err));
	cfg_load_override(l, last, err, sizeof(err));
	cfg_load_end(l, err, sizeof(err));
	check_err(err, sizeof(err));

	/* The one-shot forms, and no error buffer at all. */
	memset(err, 0x55, sizeof(err));
	cfg_override(last, secs, NSECS, NULL, err, sizeof(err));
	check_err(err, sizeof(err));
	cfg_override(last, secs, NSECS, NULL, NULL, 0);
}

static struct sw_cfg sw_a, sw_b;
static struct hd_cfg hd_a, hd_b;

/* What switchd's reload validators (the UMEM a buffer may grow into, the
 * MTU a frame may take) read of the running switch: its pool and ports,
 * as the file before the override made them; the pool is what that
 * configuration needs, or less (umem_frames set small by hand), as the
 * input's first byte says. */
static struct sw run_sw;
static struct umem run_umem;

static struct sw *running_switch(const struct sw_cfg *cfg, uint8_t b)
{
	uint32_t need = sw_cfg_umem_need(cfg);

	memset(&run_sw, 0, sizeof(run_sw));
	memset(&run_umem, 0, sizeof(run_umem));
	run_umem.frame_size = b & 1 ? 4096 : 2048;
	run_umem.nframes = b & 2 ? need / (1 + (b >> 2) % 4) : need;
	run_sw.umem = &run_umem;
	run_sw.cfg = (struct sw_cfg *)cfg;
	run_sw.nports = cfg->nports;
	for (int i = 0; i < cfg->nports; i++)
		run_sw.ports[i].if_mtu = 1500 + (b >> 4) * 150;
	return &run_sw;
}

/* Each change the reload reports: its texts terminated, a refusal's
 * reason too. */
static void note_change(void *arg, const struct cfg_change *c)
{
	if (!memchr(c->old_val, '\0', sizeof(c->old_val)) ||
	    !memchr(c->new_val, '\0', sizeof(c->new_val)) ||
	    (c->why && !memchr(c->why, '\0', 4096)))
		abort();
	(*(int *)arg)++;
}

/* The real schemas, with and without the override; when both load, the
 * reload decision between them. */
static void fuzz_daemons(const char *path, const char *last, uint8_t b)
{
	char *ovr[1] = { (char *)last };
	char err[128];
	int changes = 0;

	memset(err, 0x55, sizeof(err));
	if (!sw_cfg_load(&sw_a, path, NULL, 0, err, sizeof(err)) &&
	    !sw_cfg_load(&sw_b, path, ovr, 1, err, sizeof(err))) {
		/* With no running switch, then with one (its validators). */
		static struct sw_cfg b2;

		b2 = sw_b;
		cfg_reload_diff(sw_cfg_sections, sw_cfg_nsections, &sw_a, &sw_b, NULL, NULL, NULL,
				err, sizeof(err));
		check_err(err, sizeof(err));
		memset(err, 0x55, sizeof(err));
		cfg_reload_diff(sw_cfg_sections, sw_cfg_nsections, &sw_a, &b2,
				running_switch(&sw_a, b), note_change, &changes, err, sizeof(err));
	}
	check_err(err, sizeof(err));

	memset(err, 0x55, sizeof(err));
	if (!hd_cfg_load(&hd_a, path, NULL, 0, err, sizeof(err)) &&
	    !hd_cfg_load(&hd_b, path, ovr, 1, err, sizeof(err)))
		cfg_reload_diff(hd_cfg_sections, hd_cfg_nsections, &hd_a, &hd_b, NULL, NULL, NULL,
				err, sizeof(err));
	check_err(err, sizeof(err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Warnings of the daemons' loads go to the log: keep it quiet. */
	log_set_level(LOG_LVL_ERR);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct cfg_qty q;
	uint64_t v;
	uint8_t mac[6];
	char *text, *last, path[64];
	size_t flen;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	/* The file: up to its last newline; the override: the line after it.
	 * One line only: both, as it is all there is. */
	last = memrchr(text, '\n', size);
	if (last) {
		*last++ = '\0';
		flen = (size_t)(last - text);
	} else {
		last = text;
		flen = size;
	}

	fuzz_schema(text, last);

	/* The daemons read a path: one memfd, rewritten for each input (NUL
	 * bytes and all: the parser must refuse them itself). */
	if (fd < 0)
		fd = memfd_create("fuzz_config", 0);
	if (fd >= 0 && !ftruncate(fd, 0) && pwrite(fd, data, flen, 0) == (ssize_t)flen) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		fuzz_daemons(path, last, size ? data[0] : 0);
	}

	cfg_parse_rate(last, &v);
	cfg_parse_size(last, &v);
	cfg_parse_duration(last, &v);
	cfg_parse_qty(last, &q);
	cfg_parse_mac(last, mac);

	free(text);
	return 0;
}
