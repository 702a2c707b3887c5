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
 * Each section kind has a table of items: key, type, default, range, help,
 * and how a running daemon takes a change of it (reload). Unknown
 * sections/keys and bad values fail with "file:line: ..." naming what was
 * expected. The same tables print the reference (`--help-config`) so the
 * docs cannot drift from the code. Command-line overrides use
 * "section.key=value" or "section.label.key=value" (e.g. port.p1.rate=1G).
 *
 * Variants. A section may have a selector: one of its keys (CFG_ENUM or
 * CFG_STR) whose value picks an extra key table, a variant, with a config
 * struct of its own kept inside the section's object (a congestion point's
 * per-port keys under [port] marking = NAME, a law's under [law] law = NAME).
 * A variant's keys may come before or after the selector, in the file or in
 * overrides: they are resolved once everything was read (cfg_load_end()). A
 * key of another variant of the same selector is a warning ("does not apply
 * to marking naive; ignored"), so a sweep that switches schemes can leave
 * the other schemes' keys in place; a key of none is an error. A labelled
 * section may inherit from an unlabelled one with the same selector: [port]
 * marking = switch follows [switch] marking, and a port whose variant is
 * [switch]'s starts from [switch]'s values of its keys.
 *
 * Reload. cfg_reload_diff() compares a running configuration with a new one
 * through the same tables: a changed key is applied (CFG_LIVE), keeps its
 * running value with a warning (CFG_KEEP), or refuses the whole reload
 * (CFG_RESTART); a live key may have a validator that checks the new value
 * against what the running daemon made at start (a buffer against its UMEM).
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
	CFG_REAL,       /* double: 0.01, 1e-3 or a fraction 1/128; min/max apply */
};

struct cfg_qty {
	uint64_t n;
	bool frames;    /* n counts frames, not bytes */
	bool set;       /* given explicitly (so derived defaults can tell) */
};

/* How a running daemon takes a key whose value changed in a reload. A key
 * that says nothing needs a restart: it is safer to refuse a reload than to
 * claim a change the daemon never applies. */
enum cfg_reload {
	CFG_RESTART = 0,    /* only a restart applies it: the whole reload is refused */
	CFG_LIVE,           /* the daemon's apply hook applies it */
	CFG_KEEP,           /* the running value stays (a warning); the rest applies */
};

struct cfg_change;

struct cfg_item {
	const char *key;
	enum cfg_type type;
	size_t off;                  /* offsetof(struct, field) */
	size_t size;                 /* CFG_STR: buffer size */
	const char *def;             /* default, as it would be written in the file; NULL = none */
	int64_t min, max;            /* CFG_INT/UINT/SIZE/RATE/DURATION range (ignored if min > max) */
	const char *const *names;    /* CFG_ENUM: NULL-terminated */
	const char *help;            /* one line */
	enum cfg_reload reload;      /* what a changed value does to a reload */
	/* Optional, for CFG_LIVE keys: may the running daemon take the new
	 * value? 0, or -errno with why and what the limit is in err (e.g. "the
	 * UMEM made at start holds at most ..."): the reload is refused. */
	int (*reload_ok)(const struct cfg_change *c, char *err, size_t errlen);
	/* Optional: CFG_LINE_AT(struct, field), an unsigned in obj where a load
	 * records where the value came from (the file's line, CFG_LINE_OVERRIDE,
	 * or 0: the default), so a check across keys can say where each is. */
	size_t line_at;
};

#define CFG_LINE_AT(type, field) (offsetof(type, field) + 1)
#define CFG_LINE_OVERRIDE 0xffffffffu

/* One variant of a selector: its keys, with offsets into its own config
 * struct of `size` bytes (defaults from the items). */
struct cfg_variant {
	const char *name;            /* the selector's value that picks it */
	const char *help;
	const struct cfg_item *items;
	size_t nitems;
	size_t size;                 /* at most the selector's store_size */
	/* Optional: checks across its keys once they are all set (cfg is its
	 * config struct; it may also fill fields derived from them). 0, or
	 * -errno with what was expected in err, which the load prefixes with
	 * "file:line: [section] selector value: ". */
	int (*check)(void *cfg, char *err, size_t errlen);
};

/* A section's selector: the key whose value picks a variant. */
struct cfg_selector {
	const char *key;             /* an item of the section: CFG_ENUM or CFG_STR */
	/* The variants: fills v with the i-th for i = 0, 1, ... and returns
	 * true, false past the last. A value without a variant (e.g. "none")
	 * has no keys of its own. */
	bool (*variant)(size_t i, struct cfg_variant *v);
	/* Where the chosen variant's config lives in the section's object:
	 * store_size bytes at store_off (aligned for any field). */
	size_t store_off, store_size;
	/* Optional inheritance: the unlabelled section `parent`, which has a
	 * selector with the same key; the value `follow` of this one means
	 * "the parent's", and an instance whose variant is the parent's starts
	 * from the parent's values of the variant's keys. */
	const char *parent;
	const char *follow;
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
	/* Optional: keys whose value picks extra keys (see the top). */
	const struct cfg_selector *sel;
	/* Labelled sections, for cfg_reload_diff(): the label of the i-th
	 * instance in buf (false past the last); find() must be set too. */
	bool (*label_at)(void *ctx, size_t i, char *buf, size_t len);
	/* What a change in the instances (labels, in order) does to a reload;
	 * for CFG_KEEP, keep() copies the running instances into the new config. */
	enum cfg_reload reload;
	void (*keep)(void *new_ctx, const void *old_ctx);
};

/* Warnings (a key that belongs to another variant) go here, with "where:"
 * at the start of msg; NULL drops them. */
typedef void cfg_warn_fn(void *arg, const char *msg);

/* Apply every item's default to obj, and the defaults of the variant its
 * selector names (by default) to its variant store. For an instance that
 * follows its parent, the variant store is left zeroed: cfg_load_end()
 * fills it. */
int cfg_apply_defaults(const struct cfg_section *sec, void *obj, char *err, size_t errlen);

/*
 * Loading: a file (or text) and overrides, then the variants' keys
 * resolved. cfg_load_begin(); any number of cfg_load_file(),
 * cfg_load_string() and cfg_load_override() in the order they should win;
 * cfg_load_end(), which resolves and frees the load whatever happened (call
 * it after an error too, or cfg_load_abort()). Each returns 0, or -errno
 * with "file:line: ..." (or "override \"...\": ...") in err.
 */
struct cfg_load;
int cfg_load_begin(struct cfg_load **out, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, cfg_warn_fn *warn, void *warn_arg);
int cfg_load_file(struct cfg_load *l, const char *path, char *err, size_t errlen);
int cfg_load_string(struct cfg_load *l, const char *name, const char *text, char *err,
		    size_t errlen);
int cfg_load_override(struct cfg_load *l, const char *assignment, char *err, size_t errlen);
int cfg_load_end(struct cfg_load *l, char *err, size_t errlen);
void cfg_load_abort(struct cfg_load *l);

/* One load of just a file, of just text, or of just one override: each
 * resolves its own variant keys (an override alone sets a variant key on
 * the variant its section has now) and drops warnings. */
int cfg_parse_file(const char *path, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, char *err, size_t errlen);
int cfg_parse_string(const char *name, const char *text, const struct cfg_section *secs,
		     size_t nsecs, void *ctx, char *err, size_t errlen);
int cfg_override(const char *assignment, const struct cfg_section *secs, size_t nsecs,
		 void *ctx, char *err, size_t errlen);

/* Set one of the section's own keys on one object from its text value. 0 or
 * -EINVAL with "expected ..." in err. (A variant's key needs a load: which
 * variant applies may depend on another section.) */
int cfg_set_item(const struct cfg_section *sec, void *obj, const char *key,
		 const char *value, char *err, size_t errlen);

/* The value of it in obj as the file would say it ("100M", "64K", "4frames",
 * "yes", "santos"). */
void cfg_format_value(const struct cfg_item *it, const void *obj, char *buf, size_t len);

/* The variant an instance of sec uses now (following its parent), by name;
 * v is filled (no keys, size 0, for a value without a variant). ctx is the
 * configuration, for the parent. */
void cfg_variant_of(const struct cfg_section *secs, size_t nsecs, const struct cfg_section *sec,
		    void *ctx, const void *obj, struct cfg_variant *v);

/* Print the reference of all sections as Markdown tables (key, type,
 * default, range, reload, description), each variant's keys under its
 * selector's value. */
void cfg_print_reference(FILE *f, const struct cfg_section *secs, size_t nsecs);

/* ---- reload -------------------------------------------------------------- */

/* A key that differs between the running configuration and a new one. */
struct cfg_change {
	const struct cfg_section *sec;
	const char *label;           /* of the instance; NULL for unlabelled sections */
	const char *variant;         /* the variant the key belongs to, or NULL */
	const struct cfg_item *item; /* NULL: instances were added, removed or reordered */
	const void *old_obj, *new_obj; /* what item->off is relative to */
	const void *old_cfg, *new_cfg; /* the whole configurations (the ctx of the load) */
	void *daemon;                /* the running daemon (cfg_reload_diff's) */
	enum cfg_reload how;
	char old_val[96], new_val[96]; /* as text, for the log */
	const char *why;             /* a refusal by the validator, else NULL */
};

/* Told of each change, in table order; c and its strings are valid during
 * the call only. */
typedef void cfg_change_fn(void *arg, const struct cfg_change *c);

/*
 * Compare the running configuration old_cfg with new_cfg, both loaded with
 * secs, key by key (instances of labelled sections matched by label, each
 * variant's keys when both sides have the same variant). note() hears of
 * every change. 0: new_cfg may replace the running one — it now holds the
 * running value of every changed CFG_KEEP key (and kept instances);
 * -EBUSY: a CFG_RESTART key changed or a validator refused (err names them,
 * and what was expected); new_cfg is then left as it was.
 */
int cfg_reload_diff(const struct cfg_section *secs, size_t nsecs, const void *old_cfg,
		    void *new_cfg, void *daemon, cfg_change_fn *note, void *arg, char *err,
		    size_t errlen);

/* Value parsers, exposed for the CLI and tests. 0 or -EINVAL. */
int cfg_parse_rate(const char *s, uint64_t *bps);
int cfg_parse_size(const char *s, uint64_t *bytes);
int cfg_parse_qty(const char *s, struct cfg_qty *q);
int cfg_parse_duration(const char *s, uint64_t *ns);
int cfg_parse_mac(const char *s, uint8_t mac[6]);

#endif
