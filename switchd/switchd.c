// SPDX-License-Identifier: BSD-2-Clause
/* switchd's command line, lifecycle and main loop. */
#define LOG_SUBSYS "switchd"
#include "switch_private.h"
#include "log.h"
#include "loop.h"
#include "notify.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
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
	{ "set", 'o', "SECTION[.LABEL].KEY=VALUE", "override a config key (repeatable), e.g. port.p1.rate=1G" },
	{ "check", 'n', NULL, "validate the configuration and exit" },
	{ "verbose", 'v', NULL, "more logging (-vv: libbpf/libxdp debug)" },
	{ "quiet", 'q', NULL, "errors only" },
	{ "help-config", 'C', NULL, "print every config key with default, range and description" },
	{ "help", 'h', NULL, "this help" },
};
#define NOPTS (int)(sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: switchd -c FILE [options]\n\n"
		   "A lossless software Ethernet switch over AF_XDP.\n\n");
	for (int i = 0; i < NOPTS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", opts[i].shrt, opts[i].lng,
			 opts[i].arg ? " " : "", opts[i].arg ? opts[i].arg : "");
		fprintf(f, "  %-40s %s\n", left, opts[i].help);
	}
	fprintf(f, "\nSignals: TERM/INT stop, HUP reloads port rates and thresholds.\n"
		   "Reference: docs/switchd.md\n");
}

/* SIGHUP: re-read the file; settings of existing ports apply at once. Adding
 * or removing ports needs a restart (their sockets and UMEM are sized at start). */
static void sw_reload(struct sw *s, const char *path, char *const *ovr, int novr)
{
	struct sw_cfg *n;
	char err[512];

	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	if (sw_cfg_load(n, path, ovr, novr, err, sizeof(err))) {
		pr_err("reload: %s (keeping the running configuration)\n", err);
		goto out;
	}
	if (n->nports != s->cfg->nports) {
		pr_warn("reload: the set of ports changed; restart switchd to apply that\n");
		goto out;
	}
	for (int i = 0; i < n->nports; i++) {
		const struct port_cfg *a = &s->cfg->ports[i], *b = &n->ports[i];

		/* These shape the socket, the XDP attachment or the meaning of
		 * the buffer counts (and of credits granted in them). */
		if (strcmp(a->name, b->name) || strcmp(a->ifname, b->ifname) ||
		    a->queue != b->queue || a->xdp_mode != b->xdp_mode ||
		    a->buffer.frames != b->buffer.frames || a->fc != b->fc || a->mtu != b->mtu ||
		    a->quiet_stack != b->quiet_stack) {
			pr_warn("reload: port %s changed name, interface, queue, xdp_mode, "
				"flow_control, buffer unit, mtu or quiet_stack; restart to apply "
				"(nothing changed)\n", a->name);
			goto out;
		}
	}
	for (int i = 0; i < n->nports; i++) {
		s->cfg->ports[i] = n->ports[i];
		sw_port_apply_cfg(s, &s->ports[i]);
	}
	s->cfg->log_level = n->log_level;
	s->cfg->stats_interval = n->stats_interval;
	s->cfg->fdb_aging = n->fdb_aging;
	s->fdb->aging_ns = n->fdb_aging;
	log_set_level(n->log_level);
	pr_info("reloaded %s\n", path);
out:
	free(n);
}

static int sw_run(struct sw *s, const char *path, char *const *ovr, int novr)
{
	int err = 0;

	notify_send("READY=1");
	pr_info("%s: forwarding on %d ports\n", s->cfg->name, s->nports);
	uint64_t last_check = 0, last_work = 0;

	while (!s->stop) {
		bool work = sw_poll(s);
		uint64_t sig;

		if (work)
			last_work = s->now;
		else if (s->now - last_work < s->cfg->busy_poll)
			work = true; /* spin a little longer: a frame is likely soon */

		/* Busy: go straight round again, looking at the control socket
		 * and signals only every 100 us (an epoll call per pass cost a
		 * third of the CPU). Idle: sleep until a frame, a control
		 * request or a timer. */
		if (work && s->now - last_check < 100000)
			continue;
		last_check = s->now;
		err = loop_run_once(s->loop, work ? 0 : sw_next_deadline(s));
		if (err < 0) {
			pr_err("event loop: %s\n", strerror(-err));
			break;
		}
		if (!work)
			s->wakeups++;
		err = 0;
		sig = loop_take_signals(s->loop);
		if (sig & ((1ull << SIGTERM) | (1ull << SIGINT)))
			s->stop = true;
		if (sig & (1ull << SIGHUP)) {
			notify_send("RELOADING=1");
			sw_reload(s, path, ovr, novr);
			notify_send("READY=1");
		}
	}
	notify_send("STOPPING=1");
	return err;
}

int switchd_main(int argc, char **argv)
{
	struct option lopts[NOPTS + 1];
	char shorts[2 * NOPTS + 1], *p = shorts;
	char *overrides[MAX_OVERRIDES];
	int noverrides = 0, verbose = 0, quiet = 0, check = 0, c, err;
	const char *path = NULL;
	struct sw_cfg *cfg = NULL;
	struct sw *s = NULL;
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
				fprintf(stderr, "switchd: at most %d --set options\n", MAX_OVERRIDES);
				return 2;
			}
			overrides[noverrides++] = optarg;
			break;
		case 'n': check = 1; break;
		case 'v': verbose++; break;
		case 'q': quiet = 1; break;
		case 'C':
			cfg_print_reference(stdout, sw_cfg_sections, sw_cfg_nsections);
			return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!path || optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("switchd", LOG_LVL_INFO);
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return 1;
	err = sw_cfg_load(cfg, path, overrides, noverrides, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "switchd: %s\n", msg);
		free(cfg);
		return 2;
	}
	if (check) {
		printf("%s: OK, %d ports\n", path, cfg->nports);
		free(cfg);
		return 0;
	}
	log_set_level(quiet ? LOG_LVL_ERR : verbose ? LOG_LVL_DEBUG : cfg->log_level);
	log_init(cfg->name, log_get_level());
	err = sw_create(&s, cfg);
	if (err)
		goto out;
	err = sw_run(s, path, overrides, noverrides);
	pr_info("stopping\n");
out:
	sw_destroy(s);
	free(cfg);
	return err ? 1 : 0;
}
