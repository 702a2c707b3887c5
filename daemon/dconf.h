/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loading a daemon's configuration with config.h's tables, the same way for
 * switchd and hostd: the unlabelled sections ([switch]; [hostd], [law]) fill
 * the top-level config struct itself and are optional in the file, so their
 * defaults apply first; then the file; then the command line's overrides,
 * which therefore win; then the variants' keys (config.h). Checks that span
 * keys stay with each daemon, but for those of the keys both have.
 *
 * Reloading it (SIGHUP), the same way for both: dconf_reload() loads the
 * file and overrides again, compares with the running configuration through
 * the tables (each key's reload attribute and validator, config.h), logs
 * what changed and how, and either refuses or installs the new configuration
 * and calls the daemon's apply hook.
 */
#ifndef L2CC_DCONF_H
#define L2CC_DCONF_H

#include "config.h"
#include "dcli.h"

#include <stddef.h>
#include <stdint.h>

/*
 * Zero cfg (size bytes), apply the defaults of every unlabelled section, parse
 * path, then apply the "section[.label].key=value" overrides in order, then
 * resolve the variants' keys. 0, or -errno with "file:line: ..." (or the
 * override) in err. Warnings (a key of another variant) are logged.
 */
int dconf_load(void *cfg, size_t size, const struct cfg_section *secs, size_t nsecs,
	       const char *path, char *const *overrides, int noverrides, char *err, size_t errlen);

/* open() and find() of an unlabelled section: its object is the top-level
 * config struct (ctx), so there is one of it and overrides reach it even when
 * the file leaves the section out. */
void *dconf_open_self(void *ctx, const char *label, char *err, size_t errlen);
void *dconf_find_self(void *ctx, const char *label);

/*
 * A labelled section kept as an array in the config struct, each element
 * named by its label: [port p1] is ports[i] with name "p1". Describe it with
 * DCONF_LIST(); the section's find() and open() call dconf_list_find() and
 * dconf_list_open() with the config struct as cfg.
 */
struct dconf_list {
	size_t arr_off, n_off;      /* the array and its int count in the config struct */
	size_t size;                /* of an element */
	size_t name_off, name_size; /* the element's char name[name_size] */
	int max;                    /* elements the array holds */
	const char *many;           /* in "too many <many>, expected at most <max>" */
	const char *noun;           /* in "<noun> name \"<label>\" too long" */
};

/* arr[max] and its int count n in struct T; many and noun as above. */
#define DCONF_LIST(T, arr, n, max_, many_, noun_)                                              \
	{ .arr_off = offsetof(T, arr), .n_off = offsetof(T, n), .size = sizeof(((T *)0)->arr[0]), \
	  .name_off = offsetof(T, arr[0].name) - offsetof(T, arr),                              \
	  .name_size = sizeof(((T *)0)->arr[0].name), .max = (max_), .many = (many_),           \
	  .noun = (noun_) }

/* The element named label, or NULL. */
void *dconf_list_find(const struct dconf_list *l, void *cfg, const char *label);
/* The label of element i in buf; false past the last (a section's label_at). */
bool dconf_list_label(const struct dconf_list *l, void *cfg, size_t i, char *buf, size_t len);
/* Append a zeroed element named label; NULL with the reason in err when the
 * array is full or the label too long. */
void *dconf_list_open(const struct dconf_list *l, void *cfg, const char *label, char *err,
		      size_t errlen);

/* The AF_XDP keys both daemons have: ring_size a power of two, frame_size 0
 * (automatic), 2048 or 4096. 0, or -EINVAL with "path: ..." in err. */
int dconf_check_rings(const char *path, uint64_t ring_size, uint64_t frame_size, char *err,
		      size_t errlen);

/* A daemon's reload. */
struct dconf_reload {
	const struct cfg_section *secs;
	size_t nsecs;
	size_t cfg_size;
	/* The daemon's loader (file, overrides, its cross-key checks). */
	int (*load)(void *cfg, const char *path, char *const *overrides, int noverrides,
		    char *err, size_t errlen);
	size_t log_level_off;       /* offsetof the config's int log_level */
	/* Called once the running configuration holds the new one: make the
	 * daemon follow its live keys. */
	void (*apply)(void *d);
};

/*
 * SIGHUP: load args' file and overrides again into a new configuration,
 * compare it with running (the config struct d runs on) through r->secs,
 * log each change ("reload: [port p2] rate: 100M -> 250M"; kept ones as
 * warnings), and either refuse the reload (a restart key changed, a
 * validator said no, or the file does not load: logged, nothing changes;
 * -EBUSY or the load's error) or copy the new configuration over running,
 * call r->apply(d) and set the log level (-v/-q still win). 0 when applied.
 */
int dconf_reload(const struct dconf_reload *r, void *d, void *running,
		 const struct dcli_args *args);
/* The same, with the outcome in why (the refusal's reason, or "reloaded
 * PATH: N changes applied, K kept"), for the control socket's `reload`. */
int dconf_reload_why(const struct dconf_reload *r, void *d, void *running,
		     const struct dcli_args *args, char *why, size_t whylen);

#endif
