// SPDX-License-Identifier: BSD-2-Clause
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(struct jw *w)
{
	memset(w, 0, sizeof(*w));
	memset(w->first, 1, sizeof(w->first));
}

void jw_free(struct jw *w)
{
	free(w->buf);
	jw_init(w);
}

void jw_reset(struct jw *w)
{
	char *buf = w->buf;
	size_t cap = w->cap;

	jw_init(w);
	w->buf = buf;
	w->cap = cap;
	if (buf)
		buf[0] = '\0';
}

/* Make room for n more bytes plus the terminating NUL. */
static bool jw_reserve(struct jw *w, size_t n)
{
	size_t cap;
	char *buf;

	if (w->err)
		return false;
	if (w->len + n + 1 <= w->cap)
		return true;
	cap = w->cap ? w->cap : 256;
	while (cap < w->len + n + 1) {
		if (cap > SIZE_MAX / 2)
			goto nomem;
		cap *= 2;
	}
	buf = realloc(w->buf, cap);
	if (!buf)
		goto nomem;
	w->buf = buf;
	w->cap = cap;
	return true;
nomem:
	w->err = -ENOMEM;
	return false;
}

static void jw_put(struct jw *w, const char *s, size_t n)
{
	if (!jw_reserve(w, n))
		return;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void jw_puts(struct jw *w, const char *s)
{
	jw_put(w, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629 table), 0 if the
 * bytes there are not one. s is NUL-terminated and NUL is never a
 * continuation byte, so looking ahead cannot run past the end. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;		/* no UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;		/* nothing above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static void jw_escaped(struct jw *w, const char *v)
{
	const unsigned char *s = (const unsigned char *)v;
	const unsigned char *run = s;	/* start of bytes copied verbatim */
	char esc[8];

	jw_put(w, "\"", 1);
	while (*s) {
		size_t n = utf8_len(s);
		const char *rep = NULL;

		if (n == 1 && *s >= 0x20 && *s != '"' && *s != '\\') {
			s++;
			continue;
		}
		if (n > 1) {
			s += n;
			continue;
		}
		jw_put(w, (const char *)run, s - run);
		switch (*s) {
		case '"':  rep = "\\\""; break;
		case '\\': rep = "\\\\"; break;
		case '\b': rep = "\\b"; break;
		case '\f': rep = "\\f"; break;
		case '\n': rep = "\\n"; break;
		case '\r': rep = "\\r"; break;
		case '\t': rep = "\\t"; break;
		default:
			if (n == 0) {
				rep = "\\ufffd";
			} else {
				snprintf(esc, sizeof(esc), "\\u%04x", *s);
				rep = esc;
			}
		}
		jw_puts(w, rep);
		run = ++s;
	}
	jw_put(w, (const char *)run, s - run);
	jw_put(w, "\"", 1);
}

/* Comma before every value but the first at this depth, then "key":. */
static void jw_sep(struct jw *w, const char *key)
{
	if (w->err)
		return;
	if (!w->first[w->depth])
		jw_put(w, ",", 1);
	w->first[w->depth] = 0;
	if (key) {
		jw_escaped(w, key);
		jw_put(w, ":", 1);
	}
}

static void jw_open(struct jw *w, const char *key, char ch)
{
	jw_sep(w, key);
	if (w->err)
		return;
	if (w->depth + 1 >= JW_MAX_DEPTH) {
		w->err = -E2BIG;
		return;
	}
	jw_put(w, &ch, 1);
	w->first[++w->depth] = 1;
}

static void jw_close(struct jw *w, char ch)
{
	if (w->err || w->depth == 0)
		return;
	jw_put(w, &ch, 1);
	w->depth--;
}

void jw_obj_begin(struct jw *w, const char *key) { jw_open(w, key, '{'); }
void jw_obj_end(struct jw *w) { jw_close(w, '}'); }
void jw_arr_begin(struct jw *w, const char *key) { jw_open(w, key, '['); }
void jw_arr_end(struct jw *w) { jw_close(w, ']'); }

void jw_str(struct jw *w, const char *key, const char *v)
{
	if (!v) {
		jw_null(w, key);
		return;
	}
	jw_sep(w, key);
	jw_escaped(w, v);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	char num[24];

	jw_sep(w, key);
	jw_put(w, num, snprintf(num, sizeof(num), "%" PRIu64, v));
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	char num[24];

	jw_sep(w, key);
	jw_put(w, num, snprintf(num, sizeof(num), "%" PRId64, v));
}

void jw_double(struct jw *w, const char *key, double v)
{
	char num[32];

	if (!isfinite(v)) {
		jw_null(w, key);
		return;
	}
	jw_sep(w, key);
	jw_put(w, num, snprintf(num, sizeof(num), "%.15g", v));
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	jw_sep(w, key);
	jw_puts(w, v ? "true" : "false");
}

void jw_null(struct jw *w, const char *key)
{
	jw_sep(w, key);
	jw_puts(w, "null");
}

void jw_raw(struct jw *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(w->buf ? w->buf + w->len : NULL,
		      w->buf ? w->cap - w->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		w->err = -EINVAL;
		return;
	}
	if (w->buf && w->len + n < w->cap) {
		w->len += n;
		return;
	}
	if (!jw_reserve(w, n))
		return;
	va_start(ap, fmt);
	vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
	va_end(ap);
	w->len += n;
}

const char *jw_str_get(struct jw *w)
{
	return w->buf ? w->buf : "";
}
