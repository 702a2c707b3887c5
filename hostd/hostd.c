// SPDX-License-Identifier: BSD-2-Clause
/* hostd's main: its options and help, reload rules and run. The rest of
 * main is daemon/dcli.c; the main loop is daemon/drun.c. */
#define LOG_SUBSYS "hostd"
#include "hostd_private.h"
#include "dcli.h"
#include "drun.h"
#include "log.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables, then the laws: their names are only known to law.c, so the
 * [law] table cannot list them itself. */
static void print_reference(FILE *f)
{
	cfg_print_reference(f, hd_cfg_sections, hd_cfg_nsections);
	fputs("### Laws\n\nValues of [law] `law`.\n\n", f);
	fputs("| law | description |\n|-----|-------------|\n", f);
	for (int i = 0; rp_names[i]; i++) {
		const struct rp_ops *l = rp_find(rp_names[i]);

		fprintf(f, "| %s | %s |\n", rp_names[i], l && l->help ? l->help : "");
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
static void hd_reload(void *d, const struct dcli_args *args)
{
	struct hd *h = d;
	struct hd_cfg *n;
	char err[512], keys[256];

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	if (hd_cfg_load(n, args->path, args->overrides, args->noverrides, err, sizeof(err))) {
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
	log_set_level(args->cli_level >= 0 ? args->cli_level : n->log_level);
	pr_info("reloaded %s\n", args->path);
out:
	free(n);
}

static bool hd_poll_cb(void *d) { return hd_poll(d); }
static uint64_t hd_deadline_cb(void *d) { return hd_next_deadline(d); }

static const struct drun_ops hd_run_ops = {
	.poll = hd_poll_cb,
	.next_deadline = hd_deadline_cb,
	.reload = hd_reload,
};

static int hd_run(void *c, const struct dcli_args *args)
{
	struct hd_cfg *cfg = c;
	struct hd *h = NULL;
	struct drun r;
	int err;

	dcli_log_start(args, cfg->name, cfg->log_level);
	err = hd_create(&h, cfg);
	if (err)
		goto out;
	/* h->cfg is cfg, which a reload rewrites: drun sees a new busy_poll. */
	r = (struct drun){ .ops = &hd_run_ops, .d = h, .args = args, .loop = h->loop,
			   .now = &h->now, .busy_poll = &cfg->busy_poll, .wakeups = &h->wakeups,
			   .stop = &h->stop };
	pr_info("%s: running, flows by %s, %s mode\n", cfg->name,
		enum_name("granularity", cfg->granularity), enum_name("mode", cfg->mode));
	err = drun_loop(&r);
out:
	hd_destroy(h);
	return err;
}

static int hd_load(void *cfg, const char *path, char *const *overrides, int noverrides,
		   char *err, size_t errlen)
{
	return hd_cfg_load(cfg, path, overrides, noverrides, err, errlen);
}

static void hd_print_check(const void *c, const char *path)
{
	const struct hd_cfg *cfg = c;

	printf("%s: OK, law %s, granularity %s\n", path, cfg->law,
	       enum_name("granularity", cfg->granularity));
}

/* Options as data: getopt's table and --help both come from here. */
static const struct dcli_opt hd_opts[] = { DCLI_STD_OPTS("law.rate=50M") };

static const struct dcli hd_cli = {
	.prog = "hostd",
	.summary = "A host rate limiter in the data path over AF_XDP.",
	.epilogue = "Signals: TERM/INT stop, HUP reloads rates and timers.\n"
		    "Reference: docs/hostd.md\n",
	.opts = hd_opts,
	.nopts = sizeof(hd_opts) / sizeof(hd_opts[0]),
	.print_reference = print_reference,
	.cfg_size = sizeof(struct hd_cfg),
	.load = hd_load,
	.print_check = hd_print_check,
	.run = hd_run,
};

int hostd_main(int argc, char **argv)
{
	return dcli_main(&hd_cli, argc, argv);
}
