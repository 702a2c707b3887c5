// SPDX-License-Identifier: BSD-2-Clause
/* switchd's main: its options and help, reload rules and run. The rest of
 * main is daemon/dcli.c; the main loop is daemon/drun.c. */
#define LOG_SUBSYS "switchd"
#include "switch_private.h"
#include "dcli.h"
#include "dconf.h"
#include "drun.h"
#include "log.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A reload that passed the tables' checks is in s->cfg: make the running
 * switch follow its live keys. Ports keep their sockets; their rates,
 * buffers, thresholds and flow-control timers are derived again. */
static void sw_reload_apply(void *d)
{
	struct sw *s = d;

	sw_cpu_port(s)->cap = s->cfg->cpu_queue;
	for (int i = 0; i < s->nports; i++)
		sw_port_apply_cfg(s, &s->ports[i]);
	/* A port may have named another scheme, or its scheme's keys changed:
	 * start the congestion points afresh (marks pending in the old ones
	 * are dropped). */
	if (sw_cps_reset(s))
		pr_err("reload: congestion points could not start; ports mark nothing\n");
	s->fdb->aging_ns = s->cfg->fdb_aging;
}

static int sw_load(void *cfg, const char *path, char *const *overrides, int noverrides,
		   char *err, size_t errlen)
{
	return sw_cfg_load(cfg, path, overrides, noverrides, err, errlen);
}

/* SIGHUP and `reload`: the one reload of daemon/dconf.c, with switchd's tables. */
static int sw_reload_why(struct sw *s, const struct dcli_args *args, char *why, size_t whylen)
{
	const struct dconf_reload r = {
		.secs = sw_cfg_sections,
		.nsecs = sw_cfg_nsections,
		.cfg_size = sizeof(struct sw_cfg),
		.load = sw_load,
		.log_level_off = offsetof(struct sw_cfg, log_level),
		.apply = sw_reload_apply,
	};

	return dconf_reload_why(&r, s, s->cfg, args, why, whylen);
}

static void sw_reload(void *d, const struct dcli_args *args)
{
	sw_reload_why(d, args, NULL, 0);
}

static int sw_reload_ctl(struct sw *s, char *why, size_t whylen)
{
	return sw_reload_why(s, s->reload_args, why, whylen);
}

static bool sw_poll_cb(void *d) { return sw_poll(d); }
static uint64_t sw_deadline_cb(void *d) { return sw_next_deadline(d); }

static const struct drun_ops sw_run_ops = {
	.poll = sw_poll_cb,
	.next_deadline = sw_deadline_cb,
	.reload = sw_reload,
};

/* Create the switch on cfg and describe it to a runner: drun_loop() here,
 * l2ccd for several daemons in one process. */
static int sw_start(void *c, const struct dcli_args *args, struct drun *r)
{
	struct sw_cfg *cfg = c;
	struct sw *s = NULL;
	int err;

	dcli_log_start(args, cfg->name, cfg->log_level);
	err = sw_create(&s, cfg);
	if (err)
		return err;
	s->reload = sw_reload_ctl;
	s->reload_args = args;
	*r = (struct drun){ .ops = &sw_run_ops, .d = s, .args = args, .loop = s->loop,
			    .now = &s->now, .busy_poll = &cfg->busy_poll, .wakeups = &s->wakeups,
			    .stop = &s->stop, .name = cfg->name };
	pr_info("%s: forwarding on %d ports\n", cfg->name, s->nports);
	return 0;
}

static void sw_stop(struct drun *r)
{
	sw_destroy(r->d);
	r->d = NULL;
}

static int sw_run(void *c, const struct dcli_args *args)
{
	return drun_run(&switchd_kind, c, args);
}

static void sw_print_check(const void *c, const char *path)
{
	const struct sw_cfg *cfg = c;

	printf("%s: OK, %d ports\n", path, cfg->nports);
}

static void sw_print_reference(FILE *f)
{
	cfg_print_reference(f, sw_cfg_sections, sw_cfg_nsections);
	fprintf(f, "### Congestion points (marking = NAME)\n\n"
		"| name | what it does | counters (per port) |\n|---|---|---|\n"
		"| `none` | no congestion control: nothing is marked | |\n");
	for (int i = 1; cp_names[i]; i++) {
		const struct cp_ops *o = cp_by_index(i);

		fprintf(f, "| `%s` | %s | ", o->name, o->help);
		for (size_t k = 0; k < o->nctrs; k++)
			fprintf(f, "%s`%s`", k ? ", " : "", o->ctrs[k].name);
		fprintf(f, " |\n");
	}
}

/* Options as data: getopt's table and --help both come from here. */
static const struct dcli_opt sw_opts[] = { DCLI_STD_OPTS("port.p1.rate=1G") };

static const struct dcli sw_cli = {
	.prog = "switchd",
	.summary = "A lossless software Ethernet switch over AF_XDP.",
	.epilogue = "Signals: TERM/INT stop, HUP reloads the configuration (the reload column\n"
		    "of --help-config says how each key takes it).\n"
		    "Reference: docs/switchd.md\n",
	.opts = sw_opts,
	.nopts = sizeof(sw_opts) / sizeof(sw_opts[0]),
	.print_reference = sw_print_reference,
	.cfg_size = sizeof(struct sw_cfg),
	.load = sw_load,
	.print_check = sw_print_check,
	.run = sw_run,
};

const struct drun_kind switchd_kind = { .cli = &sw_cli, .start = sw_start, .stop = sw_stop };

int switchd_main(int argc, char **argv)
{
	return dcli_main(&sw_cli, argc, argv);
}
