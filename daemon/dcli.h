/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a daemon's main() does, once for switchd and hostd: the common
 * options (-c/-o/-n/-v/-q/-C/-V/-h) declared as data, so getopt's table and
 * --help come from the same rows; --help, --help-config and --version; loading the
 * configuration with its overrides and reporting why it failed; --check; the
 * log level and ident; then the daemon's own run. Each daemon describes
 * itself in a struct dcli: its name, help text, reference printer, config
 * loader, --check line and run.
 *
 * Exit status: 0 done (or --help, --version, --check passed), 1 the daemon failed while
 * running, 2 a bad command line or configuration.
 */
#ifndef L2CC_DCLI_H
#define L2CC_DCLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define DCLI_MAX_OVERRIDES 64

/* One option: getopt_long's row and --help's line. Also the rows of the
 * tools' own parsers (l2cc-flowgen), through dcli_getopt_tables() and
 * dcli_opt_print(). */
struct dcli_opt {
	const char *lng;
	int shrt;                   /* its letter, or a value >= 256: a long option only */
	const char *arg;            /* its argument's name in --help; NULL: takes none */
	const char *help;
	unsigned modes;             /* the tool's own (l2cc-flowgen: its subcommands); 0 for daemons */
};

#define DCLI_OPT(l, s, a, h) { .lng = (l), .shrt = (s), .arg = (a), .help = (h) }

/* The options every daemon has; example is a -o assignment for its schema.
 * dcli_parse() acts on these letters and no others. */
#define DCLI_STD_OPTS(example)                                                          \
	DCLI_OPT("config", 'c', "FILE", "configuration file (required)"),                \
	DCLI_OPT("set", 'o', "SECTION[.LABEL].KEY=VALUE",                                \
		 "override a config key (repeatable), e.g. " example),                   \
	DCLI_OPT("check", 'n', NULL, "validate the configuration and exit"),             \
	DCLI_OPT("verbose", 'v', NULL, "more logging (-vv: libbpf/libxdp debug)"),       \
	DCLI_OPT("quiet", 'q', NULL, "errors only"),                                     \
	DCLI_OPT("help-config", 'C', NULL,                                               \
		 "print every config key with default, range and description"),          \
	DCLI_OPT("version", 'V', NULL, "print the version and exit"),                      \
	DCLI_OPT("help", 'h', NULL, "this help")

/* The command line, parsed. A reload reads the same file and overrides. */
struct dcli_args {
	const char *prog;           /* the daemon's name, also its main log tag */
	const char *path;           /* -c */
	char *overrides[DCLI_MAX_OVERRIDES]; /* -o, in order */
	int noverrides;
	int check;                  /* -n */
	int cli_level;              /* LOG_LVL_* from -v/-q, or -1 if neither was given */
};

/* A daemon, as its main() sees it. */
struct dcli {
	const char *prog;           /* "switchd": usage, messages, first log ident and tag */
	const char *summary;        /* the line under "usage:" */
	const char *epilogue;       /* printed after the options (signals, reference) */
	const struct dcli_opt *opts;
	int nopts;
	void (*print_reference)(FILE *f);   /* --help-config */
	size_t cfg_size;            /* the config struct main allocates for load() */
	/* Load and validate path plus overrides into cfg: 0, or -errno with the
	 * reason in err (printed as "prog: reason"). */
	int (*load)(void *cfg, const char *path, char *const *overrides, int noverrides,
		    char *err, size_t errlen);
	void (*print_check)(const void *cfg, const char *path); /* --check's line on stdout */
	/* Start the daemon on cfg, run it until stopped and take it down: 0,
	 * or -errno once it has said what failed. */
	int (*run)(void *cfg, const struct dcli_args *args);
};

/* The whole of a daemon's main(): parse, load, check or run. An exit status. */
int dcli_main(const struct dcli *d, int argc, char **argv);

/* Print "usage: ..." and the option list. */
void dcli_usage(const struct dcli *d, FILE *f);

/*
 * getopt_long's tables from n rows: lopts holds n + 1 entries (the last
 * zeroed), shorts 2 * n + 2 bytes: the letters, ':' after those that take
 * an argument, led by ':' if colon (getopt then returns ':' for a missing
 * argument instead of '?'). Rows with shrt >= 256 are long only.
 */
void dcli_getopt_tables(const struct dcli_opt *opts, int n, struct option *lopts, char *shorts,
			bool colon);

/* One --help line: "  -c, --config FILE   help", the left part padded to
 * width; a long-only row is indented as if it had a letter. */
void dcli_opt_print(FILE *f, const struct dcli_opt *o, int width);

/* Parse argv into args. 0: go on; 1: done (--help, --help-config or
 * --version printed); -errno: a bad command line (or opts table), reported
 * on stderr. */
int dcli_parse(const struct dcli *d, int argc, char **argv, struct dcli_args *args);

/* Set the log level (-v/-q win over cfg_level, the config's log_level) and
 * the log ident (the config's name), once the configuration is known. */
void dcli_log_start(const struct dcli_args *args, const char *name, int cfg_level);

#endif
