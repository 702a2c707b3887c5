/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A small JSON writer into a growable heap buffer, for the control path
 * (control socket replies, metrics, time series lines). It allocates, so it
 * must never be used on the packet path.
 *
 * Values are appended in document order; commas are inserted automatically.
 * Inside an object every value takes a key; inside an array and at the top
 * level the key is NULL. Nesting is limited to JW_MAX_DEPTH - 1 levels.
 * After an allocation failure (or too deep nesting) w->err is set to a
 * negative errno and further calls append nothing, so callers can build a
 * whole document and check w->err once at the end.
 */
#ifndef L2CC_JSON_H
#define L2CC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JW_MAX_DEPTH 32

struct jw {
	char *buf;			/* NUL-terminated once anything was written */
	size_t len, cap;
	int depth;
	unsigned char first[JW_MAX_DEPTH];	/* no value yet at this depth */
	int err;			/* 0, or -ENOMEM / -E2BIG: stop appending */
};

/* Start empty; no allocation until the first append. */
void jw_init(struct jw *w);
/* Release the buffer; w is empty (as after jw_init) afterwards. */
void jw_free(struct jw *w);
/* Empty the document and clear err, keeping the buffer for reuse. */
void jw_reset(struct jw *w);

void jw_obj_begin(struct jw *w, const char *key);
void jw_obj_end(struct jw *w);
void jw_arr_begin(struct jw *w, const char *key);
void jw_arr_end(struct jw *w);

/* Escaped per RFC 8259; bytes that are not valid UTF-8 become U+FFFD so the
 * output stays valid JSON whatever the input. v NULL writes null. */
void jw_str(struct jw *w, const char *key, const char *v);
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
/* Finite values as %.15g (a Unix time keeps its microseconds); NaN and infinities as null (JSON has no such numbers). */
void jw_double(struct jw *w, const char *key, double v);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);

/* Append text verbatim, without commas or escaping: for Prometheus text,
 * which is not JSON, and for newlines between documents. */
void jw_raw(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The document so far, NUL-terminated ("" when nothing was written). */
const char *jw_str_get(struct jw *w);

#endif
