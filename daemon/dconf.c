// SPDX-License-Identifier: BSD-2-Clause
/* Configuration loading both daemons share. */
#include "dconf.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int dconf_load(void *cfg, size_t size, const struct cfg_section *secs, size_t nsecs,
	       const char *path, char *const *overrides, int noverrides, char *err, size_t errlen)
{
	int ret;

	memset(cfg, 0, size);
	for (size_t i = 0; i < nsecs; i++) {
		if (secs[i].labelled)
			continue;
		ret = cfg_apply_defaults(&secs[i], cfg, err, errlen);
		if (ret)
			return ret;
	}
	ret = cfg_parse_file(path, secs, nsecs, cfg, err, errlen);
	if (ret)
		return ret;
	for (int i = 0; i < noverrides; i++) {
		ret = cfg_override(overrides[i], secs, nsecs, cfg, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
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
