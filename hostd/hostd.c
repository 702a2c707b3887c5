// SPDX-License-Identifier: BSD-2-Clause
/* hostd's main: its options and help, reload rules and run. The rest of
 * main is daemon/dcli.c; the main loop is daemon/drun.c. */
#define LOG_SUBSYS "hostd"
#include "hostd_private.h"
#include "dcli.h"
#include "dconf.h"
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

static void hd_reload_apply(void *d)
{
	hd_apply_cfg(d);
}

static int hd_load(void *cfg, const char *path, char *const *overrides, int noverrides,
		   char *err, size_t errlen)
{
	return hd_cfg_load(cfg, path, overrides, noverrides, err, errlen);
}

/* SIGHUP: the one reload of daemon/dconf.c, with hostd's tables; what each
 * key does on reload is in hd_config.c. */
static int hd_reload_why(struct hd *h, const struct dcli_args *args, char *why, size_t whylen)
{
	const struct dconf_reload r = {
		.secs = hd_cfg_sections,
		.nsecs = hd_cfg_nsections,
		.cfg_size = sizeof(struct hd_cfg),
		.load = hd_load,
		.log_level_off = offsetof(struct hd_cfg, log_level),
		.apply = hd_reload_apply,
	};

	return dconf_reload_why(&r, h, h->cfg, args, why, whylen);
}

static void hd_reload(void *d, const struct dcli_args *args)
{
	hd_reload_why(d, args, NULL, 0);
}

static int hd_reload_ctl(struct hd *h, char *why, size_t whylen)
{
	return hd_reload_why(h, h->reload_args, why, whylen);
}

static bool hd_poll_cb(void *d) { return hd_poll(d); }
static uint64_t hd_deadline_cb(void *d) { return hd_next_deadline(d); }

static const struct drun_ops hd_run_ops = {
	.poll = hd_poll_cb,
	.next_deadline = hd_deadline_cb,
	.reload = hd_reload,
};

/* Create the host daemon on cfg and describe it to a runner: drun_loop()
 * here, l2ccd for several daemons in one process. */
static int hd_start(void *c, const struct dcli_args *args, struct drun *r)
{
	struct hd_cfg *cfg = c;
	struct hd *h = NULL;
	int err;

	dcli_log_start(args, cfg->name, cfg->log_level);
	err = hd_create(&h, cfg);
	if (err)
		return err;
	h->reload = hd_reload_ctl;
	h->reload_args = args;
	/* h->cfg is cfg, which a reload rewrites: drun sees a new busy_poll. */
	*r = (struct drun){ .ops = &hd_run_ops, .d = h, .args = args, .loop = h->loop,
			    .now = &h->now, .busy_poll = &cfg->busy_poll, .wakeups = &h->wakeups,
			    .stop = &h->stop, .name = cfg->name };
	pr_info("%s: running, flows by %s, %s mode\n", cfg->name,
		enum_name("granularity", cfg->granularity), enum_name("mode", cfg->mode));
	return 0;
}

static void hd_stop(struct drun *r)
{
	hd_destroy(r->d);
	r->d = NULL;
}

static int hd_run(void *c, const struct dcli_args *args)
{
	return drun_run(&hostd_kind, c, args);
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
	.epilogue = "Signals: TERM/INT stop, HUP reloads the configuration (the reload column\n"
		    "of --help-config says how each key takes it).\n"
		    "Reference: docs/hostd.md\n",
	.opts = hd_opts,
	.nopts = sizeof(hd_opts) / sizeof(hd_opts[0]),
	.print_reference = print_reference,
	.cfg_size = sizeof(struct hd_cfg),
	.load = hd_load,
	.print_check = hd_print_check,
	.run = hd_run,
};

const struct drun_kind hostd_kind = { .cli = &hd_cli, .start = hd_start, .stop = hd_stop };

int hostd_main(int argc, char **argv)
{
	return dcli_main(&hd_cli, argc, argv);
}
