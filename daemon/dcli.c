// SPDX-License-Identifier: BSD-2-Clause
/* The command line and start-up both daemons share. */
#include "dcli.h"
#include "log.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define DCLI_MAX_OPTS 16

void dcli_opt_print(FILE *f, const struct dcli_opt *o, int width)
{
	char left[96];

	if (o->shrt < 256)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->shrt, o->lng,
			 o->arg ? " " : "", o->arg ? o->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", o->lng,
			 o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(f, "  %-*s %s\n", width, left, o->help);
}

void dcli_getopt_tables(const struct dcli_opt *opts, int n, struct option *lopts, char *shorts,
			bool colon)
{
	char *p = shorts;

	if (colon)
		*p++ = ':';
	for (int i = 0; i < n; i++) {
		const struct dcli_opt *o = &opts[i];

		lopts[i] = (struct option){ o->lng, o->arg ? required_argument : no_argument, NULL,
					    o->shrt };
		if (o->shrt < 256) {
			*p++ = (char)o->shrt;
			if (o->arg)
				*p++ = ':';
		}
	}
	*p = '\0';
	memset(&lopts[n], 0, sizeof(lopts[n]));
}

void dcli_usage(const struct dcli *d, FILE *f)
{
	fprintf(f, "usage: %s -c FILE [options]\n\n%s\n\n", d->prog, d->summary);
	for (int i = 0; i < d->nopts; i++)
		dcli_opt_print(f, &d->opts[i], 40);
	fprintf(f, "\n%s", d->epilogue);
}

int dcli_parse(const struct dcli *d, int argc, char **argv, struct dcli_args *args)
{
	struct option lopts[DCLI_MAX_OPTS + 1];
	char shorts[2 * DCLI_MAX_OPTS + 2];
	int verbose = 0, quiet = 0, c;

	if (d->nopts > DCLI_MAX_OPTS) {
		fprintf(stderr, "%s: %d options, dcli takes at most %d\n", d->prog, d->nopts,
			DCLI_MAX_OPTS);
		return -E2BIG;
	}
	memset(args, 0, sizeof(*args));
	args->prog = d->prog;
	dcli_getopt_tables(d->opts, d->nopts, lopts, shorts, false);
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		switch (c) {
		case 'c': args->path = optarg; break;
		case 'o':
			if (args->noverrides == DCLI_MAX_OVERRIDES) {
				fprintf(stderr, "%s: at most %d --set options\n", d->prog,
					DCLI_MAX_OVERRIDES);
				return -EINVAL;
			}
			args->overrides[args->noverrides++] = optarg;
			break;
		case 'n': args->check = 1; break;
		case 'v': verbose++; break;
		case 'q': quiet = 1; break;
		case 'C': d->print_reference(stdout); return 1;
		case 'V': l2cc_version_print(stdout, d->prog); return 1;
		case 'h': dcli_usage(d, stdout); return 1;
		default: dcli_usage(d, stderr); return -EINVAL;
		}
	}
	if (!args->path || optind != argc) {
		dcli_usage(d, stderr);
		return -EINVAL;
	}
	args->cli_level = quiet ? LOG_LVL_ERR : verbose ? LOG_LVL_DEBUG : -1;
	return 0;
}

void dcli_log_start(const struct dcli_args *args, const char *name, int cfg_level)
{
	log_set_level(args->cli_level >= 0 ? args->cli_level : cfg_level);
	log_init(name, log_get_level());
	/* l2ccd starts several daemons, each on its thread of the moment. */
	log_set_thread_ident(name);
}

int dcli_main(const struct dcli *d, int argc, char **argv)
{
	struct dcli_args args;
	char msg[512];
	void *cfg;
	int err;

	err = dcli_parse(d, argc, argv, &args);
	if (err)
		return err > 0 ? 0 : 2;
	log_init(d->prog, LOG_LVL_INFO);
	cfg = calloc(1, d->cfg_size);
	if (!cfg)
		return 1;
	err = d->load(cfg, args.path, args.overrides, args.noverrides, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "%s: %s\n", d->prog, msg);
		free(cfg);
		return 2;
	}
	if (args.check) {
		d->print_check(cfg, args.path);
		free(cfg);
		return 0;
	}
	err = d->run(cfg, &args);
	free(cfg);
	return err ? 1 : 0;
}
