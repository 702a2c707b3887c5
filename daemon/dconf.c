// SPDX-License-Identifier: BSD-2-Clause
/* Configuration loading and reloading both daemons share. */
#define LOG_SUBSYS "config"
#include "dconf.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dconf_warn(void *arg, const char *msg)
{
	pr_warn("%s\n", msg);
}

int dconf_load(void *cfg, size_t size, const struct cfg_section *secs, size_t nsecs,
	       const char *path, char *const *overrides, int noverrides, char *err, size_t errlen)
{
	struct cfg_load *l;
	int ret;

	memset(cfg, 0, size);
	for (size_t i = 0; i < nsecs; i++) {
		if (secs[i].labelled)
			continue;
		ret = cfg_apply_defaults(&secs[i], cfg, err, errlen);
		if (ret)
			return ret;
	}
	ret = cfg_load_begin(&l, secs, nsecs, cfg, dconf_warn, NULL);
	if (ret) {
		snprintf(err, errlen, "%s: out of memory", path);
		return ret;
	}
	/* One load: a variant's keys resolve after the file and every
	 * override, so -o law.law=fimd -o law.m=1.5 works in either order. */
	cfg_load_file(l, path, err, errlen);
	for (int i = 0; i < noverrides; i++)
		cfg_load_override(l, overrides[i], err, errlen);
	return cfg_load_end(l, err, errlen);
}

void *dconf_open_self(void *ctx, const char *label, char *err, size_t errlen)
{
	return ctx;
}

void *dconf_find_self(void *ctx, const char *label)
{
	return ctx;
}

static char *list_elem(const struct dconf_list *l, void *cfg, int i)
{
	return (char *)cfg + l->arr_off + (size_t)i * l->size;
}

void *dconf_list_find(const struct dconf_list *l, void *cfg, const char *label)
{
	int n = *(int *)((char *)cfg + l->n_off);

	for (int i = 0; i < n; i++) {
		char *e = list_elem(l, cfg, i);

		if (!strcmp(e + l->name_off, label))
			return e;
	}
	return NULL;
}

bool dconf_list_label(const struct dconf_list *l, void *cfg, size_t i, char *buf, size_t len)
{
	int n = *(int *)((char *)cfg + l->n_off);

	if (i >= (size_t)n)
		return false;
	snprintf(buf, len, "%s", list_elem(l, cfg, (int)i) + l->name_off);
	return true;
}

void *dconf_list_open(const struct dconf_list *l, void *cfg, const char *label, char *err,
		      size_t errlen)
{
	int *n = (int *)((char *)cfg + l->n_off);
	char *e;

	if (*n == l->max) {
		snprintf(err, errlen, "too many %s, expected at most %d", l->many, l->max);
		return NULL;
	}
	if (strlen(label) >= l->name_size) {
		snprintf(err, errlen, "%s name \"%s\" too long, expected at most %zu characters",
			 l->noun, label, l->name_size - 1);
		return NULL;
	}
	e = list_elem(l, cfg, (*n)++);
	memset(e, 0, l->size);
	strcpy(e + l->name_off, label);
	return e;
}

static bool is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

int dconf_check_rings(const char *path, uint64_t ring_size, uint64_t frame_size, char *err,
		      size_t errlen)
{
	if (!is_pow2(ring_size)) {
		snprintf(err, errlen, "%s: ring_size %llu is not a power of two", path,
			 (unsigned long long)ring_size);
		return -EINVAL;
	}
	if (frame_size && frame_size != 2048 && frame_size != 4096) {
		snprintf(err, errlen, "%s: frame_size %llu, expected 0, 2048 or 4096", path,
			 (unsigned long long)frame_size);
		return -EINVAL;
	}
	return 0;
}

/* ---- reload --------------------------------------------------------------- */

struct reload_log {
	const char *prog;
	int live, kept;
};

static void reload_note(void *arg, const struct cfg_change *c)
{
	struct reload_log *r = arg;
	char where[160];

	if (c->label)
		snprintf(where, sizeof(where), "[%s %s]", c->sec->name, c->label);
	else
		snprintf(where, sizeof(where), "[%s]", c->sec->name);
	if (!c->item) {
		/* Sections added or removed: refused ones are in the summary. */
		if (c->how == CFG_LIVE) {
			r->live++;
			log_msg(LOG_LVL_INFO, r->prog, "reload: [%s] sections %s -> %s\n",
				c->sec->name, c->old_val, c->new_val);
		} else if (c->how == CFG_KEEP) {
			r->kept++;
			log_msg(LOG_LVL_WARN, r->prog, "reload: [%s] sections %s -> %s need a restart; "
				"keeping the running ones\n", c->sec->name, c->old_val, c->new_val);
		}
		return;
	}
	if (c->how == CFG_LIVE && !c->why) {
		r->live++;
		log_msg(LOG_LVL_INFO, r->prog, "reload: %s %s%s%s: %s -> %s\n", where,
			c->variant ? c->variant : "", c->variant ? " " : "", c->item->key,
			c->old_val, c->new_val);
	} else if (c->how == CFG_KEEP) {
		r->kept++;
		log_msg(LOG_LVL_WARN, r->prog, "reload: %s %s: %s -> %s needs a restart; keeping %s\n",
			where, c->item->key, c->old_val, c->new_val, c->old_val);
	}
}

int dconf_reload(const struct dconf_reload *r, void *d, void *running,
		 const struct dcli_args *args)
{
	return dconf_reload_why(r, d, running, args, NULL, 0);
}

int dconf_reload_why(const struct dconf_reload *r, void *d, void *running,
		     const struct dcli_args *args, char *why, size_t whylen)
{
	struct reload_log rl = { .prog = args->prog };
	char err[1024];
	void *n;
	int ret, level;

	n = calloc(1, r->cfg_size);
	if (!n) {
		log_msg(LOG_LVL_ERR, args->prog, "reload: out of memory (keeping the running "
			"configuration)\n");
		if (why)
			snprintf(why, whylen, "out of memory (keeping the running configuration)");
		return -ENOMEM;
	}
	ret = r->load(n, args->path, args->overrides, args->noverrides, err, sizeof(err));
	if (ret) {
		log_msg(LOG_LVL_ERR, args->prog, "reload: %s (keeping the running configuration)\n",
			err);
		if (why)
			snprintf(why, whylen, "%s (keeping the running configuration)", err);
		goto out;
	}
	ret = cfg_reload_diff(r->secs, r->nsecs, running, n, d, reload_note, &rl, err,
			      sizeof(err));
	if (ret) {
		log_msg(LOG_LVL_WARN, args->prog, "reload: %s; restart %s to apply (nothing "
			"changed)\n", err, args->prog);
		if (why)
			snprintf(why, whylen, "%s; restart %s to apply (nothing changed)", err,
				 args->prog);
		goto out;
	}
	memcpy(running, n, r->cfg_size);
	r->apply(d);
	/* -v and -q win over the file's log_level, after a reload as at start. */
	memcpy(&level, (char *)running + r->log_level_off, sizeof(level));
	log_set_level(args->cli_level >= 0 ? args->cli_level : level);
	log_msg(LOG_LVL_INFO, args->prog, "reloaded %s: %d changes applied, %d kept\n",
		args->path, rl.live, rl.kept);
	if (why)
		snprintf(why, whylen, "reloaded %s: %d changes applied, %d kept", args->path, rl.live,
			 rl.kept);
out:
	free(n);
	return ret;
}
