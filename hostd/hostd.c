// SPDX-License-Identifier: BSD-2-Clause
/* hostd's command line, lifecycle and main loop. */
#define LOG_SUBSYS "hostd"
#include "hostd_private.h"
#include "log.h"
#include "loop.h"
#include "notify.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OVERRIDES 64

struct opt_desc {
	const char *lng;
	int shrt;
	const char *arg;
	const char *help;
};

/* Options as data: getopt's table and --help both come from here. */
static const struct opt_desc opts[] = {
	{ "config", 'c', "FILE", "configuration file (required)" },
	{ "set", 'o', "SECTION[.LABEL].KEY=VALUE", "override a config key (repeatable), e.g. law.rate=50M" },
	{ "check", 'n', NULL, "validate the configuration and exit" },
	{ "verbose", 'v', NULL, "more logging (-vv: libbpf/libxdp debug)" },
	{ "quiet", 'q', NULL, "errors only" },
	{ "help-config", 'C', NULL, "print every config key with default, range and description" },
	{ "help", 'h', NULL, "this help" },
};
#define NOPTS (int)(sizeof(opts) / sizeof(opts[0]))

/* What a reload needs from the command line. */
struct run_opts {
	const char *path;
	char *const *ovr;
	int novr;
	int cli_level;              /* -v/-q given: wins over log_level, also on reload; else -1 */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hostd -c FILE [options]\n\n"
		   "A host rate limiter in the data path over AF_XDP.\n\n");
	for (int i = 0; i < NOPTS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", opts[i].shrt, opts[i].lng,
			 opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-40s %s\n", left, opts[i].help);
	}
	fprintf(f, "\nSignals: TERM/INT stop, HUP reloads rates and timers.\n"
		   "Reference: docs/hostd.md\n");
}

/* The tables, then the laws: their names are only known to law.c, so the
 * [law] table cannot list them itself. */
static void print_reference(FILE *f)
{
	cfg_print_reference(f, hd_cfg_sections, hd_cfg_nsections);
	fputs("### Laws\n\nValues of [law] `law`.\n\n", f);
	fputs("| law | description |\n|-----|-------------|\n", f);
	for (int i = 0; law_names[i]; i++) {
		const struct law_ops *l = law_find(law_names[i]);

		fprintf(f, "| %s | %s |\n", law_names[i], l && l->help ? l->help : "");
	}
	fputc('\n', f);
}

/* The word an enum key was written as, from the schema itself. */
static const char *enum_name(const char *key, int v)
{
	for (size_t s = 0; s < hd_cfg_nsections; s++) {
		const struct cfg_section *sec = &hd_cfg_sections[s];

		for (size_t i = 0; i < sec->nitems; i++) {
			const struct cfg_item *it = &sec->items[i];

			if (it->type != CFG_ENUM || strcmp(it->key, key))
				continue;
			for (int k = 0; it->names[k]; k++)
				if (k == v)
					return it->names[k];
		}
	}
	return "?";
}

/* Keys compared across a reload. */
struct reload_key {
	const char *key;
	size_t off, size;
	bool str;
};
#define RK(k, f) { k, offsetof(struct hd_cfg, f), sizeof(((struct hd_cfg *)0)->f), false }
#define RS(k, f) { k, offsetof(struct hd_cfg, f), sizeof(((struct hd_cfg *)0)->f), true }

/* These shape the sockets, the UMEM, the flow and peer tables or what is on
 * the wire (a peer hostd relies on tag and mode); flow_control too, as
 * switchd refuses it on a port. A change in any refuses the whole reload. */
static const struct reload_key restart_keys[] = {
	RS("host_port", host_port), RS("uplink", uplink), RK("xdp_mode", xdp_mode),
	RK("ring_size", ring_size), RK("frame_size", frame_size), RK("umem_frames", umem_frames),
	RK("max_flows", max_flows), RK("granularity", granularity), RK("tag", tag),
	RK("mode", mode), RK("flow_control", fc), RS("law", law),
};

/* These are bound to things made at start (log ident, control socket,
 * listener, time-series file, pass ring, the pacer's wheel and per-frame
 * overhead, the flow table's queue limit and idle time): the running value
 * stays, with a warning, and the rest of the reload applies. wire_overhead
 * is here because the pacer took it at creation: changing only the
 * uplink's share would pace flows and the link with two different frame
 * costs. Move a key to the live set when hd_apply_cfg() learns to change it. */
static const struct reload_key kept_keys[] = {
	RS("name", name), RS("ctl_socket", ctl_socket), RS("metrics_listen", metrics_listen),
	RS("stats_file", stats_file), RK("pass_queue", pass_queue), RK("slot", slot),
	RK("wire_overhead", wire_overhead), RK("queue", queue), RK("flow_idle", flow_idle),
};

static bool key_changed(const struct reload_key *k, const struct hd_cfg *a, const struct hd_cfg *b)
{
	const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;

	/* Strings compare as strings: bytes after the NUL are whatever an
	 * earlier, longer value (a default) left there. */
	return k->str ? strncmp(pa, pb, k->size) != 0 : memcmp(pa, pb, k->size) != 0;
}

/* Names of the keys in tab that differ between a and b, comma-separated, in
 * buf; how many. */
static int changed_keys(const struct reload_key *tab, size_t n, const struct hd_cfg *a,
			const struct hd_cfg *b, char *buf, size_t len)
{
	size_t used = 0;
	int count = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (!key_changed(&tab[i], a, b))
			continue;
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%s", count ? ", " : "", tab[i].key);
		count++;
	}
	return count;
}

/* SIGHUP: re-read the file (with the same overrides); rates, the wire clock,
 * the notification timers and the log level apply at once. */
static void hd_reload(struct hd *h, const struct run_opts *run)
{
	struct hd_cfg *n;
	char err[512], keys[256];

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	if (hd_cfg_load(n, run->path, run->ovr, run->novr, err, sizeof(err))) {
		pr_err("reload: %s (keeping the running configuration)\n", err);
		goto out;
	}
	if (changed_keys(restart_keys, sizeof(restart_keys) / sizeof(restart_keys[0]),
			 h->cfg, n, keys, sizeof(keys))) {
		pr_warn("reload: %s changed; restart hostd to apply (nothing changed)\n", keys);
		goto out;
	}
	if (changed_keys(kept_keys, sizeof(kept_keys) / sizeof(kept_keys[0]),
			 h->cfg, n, keys, sizeof(keys))) {
		pr_warn("reload: %s changed; restart hostd to apply (keeping the running value)\n",
			keys);
		for (size_t i = 0; i < sizeof(kept_keys) / sizeof(kept_keys[0]); i++)
			memcpy((char *)n + kept_keys[i].off, (const char *)h->cfg + kept_keys[i].off,
			       kept_keys[i].size);
	}
	*h->cfg = *n;
	hd_apply_cfg(h);
	log_set_level(run->cli_level >= 0 ? run->cli_level : n->log_level);
	pr_info("reloaded %s\n", run->path);
out:
	free(n);
}

static int hd_run(struct hd *h, const struct run_opts *run)
{
	uint64_t last_check = 0, last_work = 0;
	int err = 0;

	notify_send("READY=1");
	pr_info("%s: running, flows by %s, %s mode\n", h->cfg->name,
		enum_name("granularity", h->cfg->granularity), enum_name("mode", h->cfg->mode));

	while (!h->stop) {
		bool work = hd_poll(h);
		uint64_t sig;

		if (work)
			last_work = h->now;
		else if (h->now - last_work < h->cfg->busy_poll)
			work = true; /* spin a little longer: a frame is likely soon */

		/* Busy: go straight round again, looking at the control socket
		 * and signals only every 100 us (an epoll call per pass costs
		 * a large share of the CPU). Idle: sleep until a frame, a
		 * control request or a timer (pacing, pause expiry, CNP/ACK). */
		if (work && h->now - last_check < 100000)
			continue;
		last_check = h->now;
		err = loop_run_once(h->loop, work ? 0 : hd_next_deadline(h));
		if (err < 0) {
			pr_err("event loop: %s\n", strerror(-err));
			break;
		}
		if (!work)
			h->wakeups++;
		err = 0;
		sig = loop_take_signals(h->loop);
		if (sig & ((1ull << SIGTERM) | (1ull << SIGINT)))
			h->stop = true;
		if (sig & (1ull << SIGHUP)) {
			notify_send("RELOADING=1");
			hd_reload(h, run);
			notify_send("READY=1");
		}
	}
	notify_send("STOPPING=1");
	return err;
}

int hostd_main(int argc, char **argv)
{
	struct option lopts[NOPTS + 1];
	char shorts[2 * NOPTS + 1], *p = shorts;
	char *overrides[MAX_OVERRIDES];
	int noverrides = 0, verbose = 0, quiet = 0, check = 0, c, err;
	const char *path = NULL;
	struct hd_cfg *cfg = NULL;
	struct hd *h = NULL;
	struct run_opts run;
	char msg[512];

	for (int i = 0; i < NOPTS; i++) {
		lopts[i] = (struct option){ opts[i].lng, opts[i].arg ? required_argument : no_argument,
					    NULL, opts[i].shrt };
		*p++ = opts[i].shrt;
		if (opts[i].arg)
			*p++ = ':';
	}
	*p = '\0';
	memset(&lopts[NOPTS], 0, sizeof(lopts[NOPTS]));
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'o':
			if (noverrides == MAX_OVERRIDES) {
				fprintf(stderr, "hostd: at most %d --set options\n", MAX_OVERRIDES);
				return 2;
			}
			overrides[noverrides++] = optarg;
			break;
		case 'n': check = 1; break;
		case 'v': verbose++; break;
		case 'q': quiet = 1; break;
		case 'C':
			print_reference(stdout);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!path || optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("hostd", LOG_LVL_INFO);
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return 1;
	err = hd_cfg_load(cfg, path, overrides, noverrides, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "hostd: %s\n", msg);
		free(cfg);
		return 2;
	}
	if (check) {
		printf("%s: OK, law %s, granularity %s\n", path, cfg->law,
		       enum_name("granularity", cfg->granularity));
		free(cfg);
		return 0;
	}
	run = (struct run_opts){
		.path = path,
		.ovr = overrides,
		.novr = noverrides,
		.cli_level = quiet ? LOG_LVL_ERR : verbose ? LOG_LVL_DEBUG : -1,
	};
	log_set_level(run.cli_level >= 0 ? run.cli_level : cfg->log_level);
	log_init(cfg->name, log_get_level());
	err = hd_create(&h, cfg);
	if (err)
		goto out;
	err = hd_run(h, &run);
	pr_info("stopping\n");
out:
	if (h)
		hd_destroy(h);
	free(cfg);
	return err ? 1 : 0;
}
