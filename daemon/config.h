/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Table-driven configuration (linuxptp style). A config file is INI-like:
 *
 *   # comment
 *   [switch]
 *   name = s1
 *   [port p1]
 *   ifname = s1-p1
 *   rate = 100M
 *
 * Each section kind has a table of items: key, type, default, range, help.
 * Unknown sections/keys and bad values fail with "file:line: ..." naming what
 * was expected. The same tables print the reference (`--help-config`) so the
 * docs cannot drift from the code. Command-line overrides use
 * "section.key=value" or "section.label.key=value" (e.g. port.p1.rate=1G).
 */
#ifndef L2CC_CONFIG_H
#define L2CC_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>

enum cfg_type {
	CFG_INT,        /* int64_t; min/max apply */
	CFG_UINT,       /* uint64_t; min/max apply */
	CFG_BOOL,       /* bool: yes/no/true/false/on/off/1/0 */
	CFG_STR,        /* char[size] */
	CFG_RATE,       /* uint64_t bit/s: 100M, 1G, 2.5G, 1500k, 0 or "unlimited" = 0 */
	CFG_SIZE,       /* uint64_t bytes: 1500, 64K, 1M (K/M/G = 1024^n) */
	CFG_QTY,        /* struct cfg_qty: a byte size as CFG_SIZE, or "<n>frames" */
	CFG_ENUM,       /* int: index into names[] */
	CFG_DURATION,   /* uint64_t ns: 10ms, 500us, 2s, 100ns (bare number = ms) */
	CFG_MAC,        /* uint8_t[6]: aa:bb:cc:dd:ee:ff */
};

struct cfg_qty {
	uint64_t n;
	bool frames;    /* n counts frames, not bytes */
	bool set;       /* given explicitly (so derived defaults can tell) */
};

struct cfg_item {
	const char *key;
	enum cfg_type type;
	size_t off;                  /* offsetof(struct, field) */
	size_t size;                 /* CFG_STR: buffer size */
	const char *def;             /* default, as it would be written in the file; NULL = none */
	int64_t min, max;            /* CFG_INT/UINT/SIZE/RATE/DURATION range (ignored if min > max) */
	const char *const *names;    /* CFG_ENUM: NULL-terminated */
	const char *help;            /* one line */
};

/* A section kind. `labelled` sections are written "[name label]" and may repeat. */
struct cfg_section {
	const char *name;
	bool labelled;
	const struct cfg_item *items;
	size_t nitems;
	/* Return the object to fill for this section instance (defaults already
	 * applied by the parser), or NULL with a message in err. Called once per
	 * header; for a labelled section a repeated label is an error. label is
	 * NULL for unlabelled sections and only valid during the call: copy it. */
	void *(*open)(void *ctx, const char *label, char *err, size_t errlen);
	const char *help;
	/* Optional: return the object an earlier open() made for label (NULL for
	 * unlabelled sections), or NULL if there is none. cfg_override() needs it,
	 * since an override changes a section the file declared; without it
	 * overrides of this section fail. */
	void *(*find)(void *ctx, const char *label);
};

/* Apply every item's default to obj. */
int cfg_apply_defaults(const struct cfg_section *sec, void *obj, char *err, size_t errlen);

/* Parse a file. 0, or -errno with "path:line: message" in err. */
int cfg_parse_file(const char *path, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, char *err, size_t errlen);
/* Parse text already in memory (name is used in messages). */
int cfg_parse_string(const char *name, const char *text, const struct cfg_section *secs,
		     size_t nsecs, void *ctx, char *err, size_t errlen);

/* Apply one "section[.label].key=value" override; 0 or -errno with message. */
int cfg_override(const char *assignment, const struct cfg_section *secs, size_t nsecs,
		 void *ctx, char *err, size_t errlen);

/* Set one key on one object from its text value (used by the parser and by
 * overrides). 0 or -EINVAL with "expected ..." in err. */
int cfg_set_item(const struct cfg_section *sec, void *obj, const char *key,
		 const char *value, char *err, size_t errlen);

/* Print the reference of all sections as a Markdown table (key, type, default,
 * range, description). */
void cfg_print_reference(FILE *f, const struct cfg_section *secs, size_t nsecs);

/* Value parsers, exposed for the CLI and tests. 0 or -EINVAL. */
int cfg_parse_rate(const char *s, uint64_t *bps);
int cfg_parse_size(const char *s, uint64_t *bytes);
int cfg_parse_qty(const char *s, struct cfg_qty *q);
int cfg_parse_duration(const char *s, uint64_t *ns);
int cfg_parse_mac(const char *s, uint8_t mac[6]);

#endif
