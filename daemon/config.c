// SPDX-License-Identifier: BSD-2-Clause
/*
 * Table-driven configuration: the format and the API are described in
 * config.h. Every message a user can see says where ("file:line:") and what
 * was expected, because a switch that refuses to start is only as helpful as
 * its error message.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Refuse absurd inputs (a config pointed at /dev/zero) before they eat memory. */
#define CFG_MAX_FILE (16u << 20)

/* Internal parser results beyond -EINVAL, turned into sharper messages by
 * set_value(); the public value parsers fold them back into -EINVAL. */
#define CFG_ETOOBIG  (-ERANGE)  /* does not fit in 64 bits */
#define CFG_ETOOFINE (-EDOM)    /* fraction finer than the unit (1.5 bit/s) */

static const char *const rate_hint = "e.g. 100M, 1G, 2.5G or unlimited";
static const char *const size_hint = "bytes with an optional K, M or G suffix (x1024), e.g. 1500, 64K, 1M";
static const char *const qty_hint = "a size (e.g. 1500, 64K, 1M) or a frame count (e.g. 16frames)";
static const char *const dur_hint = "a number with ns, us, ms or s, e.g. 10ms, 500us, 2s (bare number = ms)";

/* ---- message helpers ---------------------------------------------------- */

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Append to the message already in err (lists of keys, sections, names). */
static void errcat(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void errcat(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!err || !errlen)
		return;
	n = strnlen(err, errlen);
	if (n + 1 >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
}

/* Where a message that follows a prefix already written to err goes. */
static char *errtail(char *err, size_t errlen, size_t *taillen)
{
	size_t n = strnlen(err, errlen);

	if (n >= errlen)
		n = errlen - 1;
	*taillen = errlen - n;
	return err + n;
}

/* ---- text helpers ------------------------------------------------------- */

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* A comment starts with # or ; at the start of the line or after a blank, so
 * that values such as "a;b" survive but "1G   # uplink" loses its remark. */
static void strip_comment(char *s)
{
	char *p;

	for (p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* ---- value parsers ------------------------------------------------------ */

struct decimal {
	const char *ip, *fp;    /* integer and fraction digits */
	size_t nip, nfp;
};

/* Scan "digits[.digits]"; return the first character after it or NULL. We
 * parse by hand rather than with strtod so that "1e3", "0x10", "inf" and the
 * locale's decimal point are never accepted by accident. */
static const char *scan_decimal(const char *s, struct decimal *d, bool frac_ok)
{
	d->ip = s;
	while (isdigit((unsigned char)*s))
		s++;
	d->nip = s - d->ip;
	d->fp = NULL;
	d->nfp = 0;
	if (!d->nip)
		return NULL;
	if (*s == '.' && frac_ok) {
		d->fp = ++s;
		while (isdigit((unsigned char)*s))
			s++;
		d->nfp = s - d->fp;
		if (!d->nfp)
			return NULL;
	}
	return s;
}

/* d * mult, exactly: fraction digits finer than one unit must be zero so that
 * 2.5G is 2500000000 but 1.5 bit/s is refused rather than silently rounded. */
static int scale_decimal(const struct decimal *d, uint64_t mult, uint64_t *out)
{
	uint64_t v = 0, unit = mult, add;
	unsigned dig;
	size_t i;

	for (i = 0; i < d->nip; i++) {
		dig = d->ip[i] - '0';
		if (v > (UINT64_MAX - dig) / 10)
			return CFG_ETOOBIG;
		v = v * 10 + dig;
	}
	if (mult && v > UINT64_MAX / mult)
		return CFG_ETOOBIG;
	v *= mult;
	for (i = 0; i < d->nfp; i++) {
		dig = d->fp[i] - '0';
		if (unit % 10) {
			if (dig)
				return CFG_ETOOFINE;
			continue;
		}
		unit /= 10;
		add = dig * unit;
		if (v > UINT64_MAX - add)
			return CFG_ETOOBIG;
		v += add;
	}
	*out = v;
	return 0;
}

static int rate_parse(const char *s, uint64_t *bps)
{
	struct decimal d;
	uint64_t mult = 1;
	const char *p;

	if (!strcasecmp(s, "unlimited")) {
		*bps = 0;
		return 0;
	}
	p = scan_decimal(s, &d, true);
	if (!p)
		return -EINVAL;
	p = skip_blanks(p);
	switch (*p) {
	case 'k': case 'K': mult = 1000ULL; p++; break;
	case 'm': case 'M': mult = 1000000ULL; p++; break;
	case 'g': case 'G': mult = 1000000000ULL; p++; break;
	case 't': case 'T': mult = 1000000000000ULL; p++; break;
	}
	/* "100Mbit" and "1Gbps" are how people write rates; accept them. */
	if (*p && strcasecmp(p, "bit") && strcasecmp(p, "bps") && strcasecmp(p, "bit/s"))
		return -EINVAL;
	return scale_decimal(&d, mult, bps);
}

static int size_parse(const char *s, uint64_t *bytes)
{
	struct decimal d;
	uint64_t mult = 1;
	const char *p;

	p = scan_decimal(s, &d, false);
	if (!p)
		return -EINVAL;
	p = skip_blanks(p);
	switch (*p) {
	case 'k': case 'K': mult = 1ULL << 10; p++; break;
	case 'm': case 'M': mult = 1ULL << 20; p++; break;
	case 'g': case 'G': mult = 1ULL << 30; p++; break;
	case 't': case 'T': mult = 1ULL << 40; p++; break;
	}
	/* K, KB and KiB all mean 1024: buffer sizes are never decimal here. */
	if (mult > 1 && *p == 'i')
		p++;
	if (*p == 'B' || *p == 'b')
		p++;
	if (*p)
		return -EINVAL;
	return scale_decimal(&d, mult, bytes);
}

static int qty_parse(const char *s, struct cfg_qty *q)
{
	struct decimal d;
	const char *p;
	uint64_t n;
	int err;

	p = scan_decimal(s, &d, false);
	if (p) {
		p = skip_blanks(p);
		if (!strcasecmp(p, "frames") || !strcasecmp(p, "frame") || !strcasecmp(p, "f")) {
			err = scale_decimal(&d, 1, &n);
			if (err)
				return err;
			q->n = n;
			q->frames = true;
			q->set = true;
			return 0;
		}
	}
	err = size_parse(s, &n);
	if (err)
		return err;
	q->n = n;
	q->frames = false;
	q->set = true;
	return 0;
}

static int duration_parse(const char *s, uint64_t *ns)
{
	struct decimal d;
	uint64_t mult;
	const char *p;

	p = scan_decimal(s, &d, true);
	if (!p)
		return -EINVAL;
	p = skip_blanks(p);
	if (!*p || !strcasecmp(p, "ms"))
		mult = 1000000ULL;
	else if (!strcasecmp(p, "ns"))
		mult = 1;
	else if (!strcasecmp(p, "us"))
		mult = 1000ULL;
	else if (!strcasecmp(p, "s"))
		mult = 1000000000ULL;
	else
		return -EINVAL;
	return scale_decimal(&d, mult, ns);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower((unsigned char)c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int mac_parse(const char *s, uint8_t mac[6])
{
	uint8_t m[6];
	int i, hi, lo;

	if (strlen(s) != 17)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		hi = hexval(s[3 * i]);
		lo = hexval(s[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return -EINVAL;
		m[i] = hi << 4 | lo;
	}
	memcpy(mac, m, 6);
	return 0;
}

static int bool_parse(const char *s, bool *b)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* strtoll/strtoull skip blanks and accept "-1" as a huge unsigned; refuse
 * both. Decimal, or hex with 0x (never octal: "010" is ten). */
static int int_parse(const char *s, bool is_signed, int64_t *sv, uint64_t *uv)
{
	const char *p = s;
	int base = 10;
	char *end;

	if (*p == '+' || (*p == '-' && is_signed))
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		base = 16;
	errno = 0;
	if (is_signed)
		*sv = strtoll(s, &end, base);
	else
		*uv = strtoull(s, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return CFG_ETOOBIG;
	return 0;
}

static int public_err(int err)
{
	return err ? -EINVAL : 0;
}

int cfg_parse_rate(const char *s, uint64_t *bps)
{
	return public_err(rate_parse(s, bps));
}

int cfg_parse_size(const char *s, uint64_t *bytes)
{
	return public_err(size_parse(s, bytes));
}

int cfg_parse_qty(const char *s, struct cfg_qty *q)
{
	return public_err(qty_parse(s, q));
}

int cfg_parse_duration(const char *s, uint64_t *ns)
{
	return public_err(duration_parse(s, ns));
}

int cfg_parse_mac(const char *s, uint8_t mac[6])
{
	return public_err(mac_parse(s, mac));
}

/* ---- formatting (ranges in messages and in the reference) --------------- */

/* v/unit as an exact decimal ("2.5G"); unit is a power of ten. Digits are
 * produced until the remainder runs out, so there are no trailing zeros. */
static void fmt_decimal(char *buf, size_t len, uint64_t v, uint64_t unit, const char *suffix)
{
	uint64_t rem = v % unit, u;
	char frac[24];
	size_t n = 0;

	for (u = unit / 10; u && rem && n < sizeof(frac) - 1; u /= 10) {
		frac[n++] = '0' + rem / u;
		rem %= u;
	}
	frac[n] = '\0';
	snprintf(buf, len, "%" PRIu64 "%s%s%s", v / unit, n ? "." : "", frac, suffix);
}

static void fmt_rate(char *buf, size_t len, uint64_t v)
{
	static const struct { uint64_t unit; const char *sfx; } u[] = {
		{ 1000000000000ULL, "T" }, { 1000000000ULL, "G" },
		{ 1000000ULL, "M" }, { 1000ULL, "k" }, { 1, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]) - 1 && v < u[i].unit; i++)
		;
	fmt_decimal(buf, len, v, u[i].unit, u[i].sfx);
}

static void fmt_duration(char *buf, size_t len, uint64_t v)
{
	static const struct { uint64_t unit; const char *sfx; } u[] = {
		{ 1000000000ULL, "s" }, { 1000000ULL, "ms" }, { 1000ULL, "us" }, { 1, "ns" },
	};
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]) - 1 && v < u[i].unit; i++)
		;
	fmt_decimal(buf, len, v, u[i].unit, u[i].sfx);
}

/* Binary sizes print with a suffix only when exact: 1536 stays 1536. */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char sfx[] = "KMGT";
	int i = -1;

	while (v && !(v & 1023) && i < 3) {
		v >>= 10;
		i++;
	}
	if (i < 0)
		snprintf(buf, len, "%" PRIu64, v);
	else
		snprintf(buf, len, "%" PRIu64 "%c", v, sfx[i]);
}

static void fmt_bound(char *buf, size_t len, enum cfg_type type, int64_t v)
{
	uint64_t u = v < 0 ? 0 : (uint64_t)v;

	switch (type) {
	case CFG_INT:
		snprintf(buf, len, "%" PRId64, v);
		break;
	case CFG_RATE:
		fmt_rate(buf, len, u);
		break;
	case CFG_SIZE:
		fmt_size(buf, len, u);
		break;
	case CFG_DURATION:
		fmt_duration(buf, len, u);
		break;
	default:
		snprintf(buf, len, "%" PRIu64, u);
		break;
	}
}

static bool ranged(const struct cfg_item *it)
{
	switch (it->type) {
	case CFG_INT: case CFG_UINT: case CFG_SIZE: case CFG_RATE: case CFG_DURATION:
		return it->min <= it->max;
	default:
		return false;
	}
}

/* "64..9216", or "" when the item has no range. */
static void fmt_range(char *buf, size_t len, const struct cfg_item *it)
{
	char lo[32], hi[32];

	buf[0] = '\0';
	if (!ranged(it))
		return;
	fmt_bound(lo, sizeof(lo), it->type, it->min);
	fmt_bound(hi, sizeof(hi), it->type, it->max);
	snprintf(buf, len, "%s..%s", lo, hi);
}

static bool in_urange(const struct cfg_item *it, uint64_t v)
{
	if (!ranged(it))
		return true;
	if (it->max < 0 || v > (uint64_t)it->max)
		return false;
	return it->min <= 0 || v >= (uint64_t)it->min;
}

/* ---- setting one item --------------------------------------------------- */

static void names_list(char *err, size_t errlen, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++)
		errcat(err, errlen, "%s%s", i ? ", " : "", names[i]);
}

static void value_error(const struct cfg_item *it, const char *value, int err,
			char *msg, size_t msglen)
{
	char range[80];

	if (err == CFG_ETOOBIG) {
		errf(msg, msglen, "%s \"%s\" is too large, expected a value that fits in 64 bits",
		     it->key, value);
		return;
	}
	switch (it->type) {
	case CFG_INT:
	case CFG_UINT:
		fmt_range(range, sizeof(range), it);
		errf(msg, msglen, "%s \"%s\" is not %s, expected %s%s", it->key, value,
		     it->type == CFG_INT ? "an integer" : "a non-negative integer",
		     range[0] ? "a whole number in " : "a whole number, e.g. 42",
		     range);
		break;
	case CFG_BOOL:
		errf(msg, msglen, "%s \"%s\" is not a boolean, expected yes, no, true, false, on, off, 1 or 0",
		     it->key, value);
		break;
	case CFG_RATE:
		if (err == CFG_ETOOFINE)
			errf(msg, msglen, "%s \"%s\" is finer than 1 bit/s, expected a whole number of bit/s",
			     it->key, value);
		else
			errf(msg, msglen, "%s \"%s\" is not a rate, expected %s", it->key, value, rate_hint);
		break;
	case CFG_SIZE:
		errf(msg, msglen, "%s \"%s\" is not a size, expected %s", it->key, value, size_hint);
		break;
	case CFG_QTY:
		errf(msg, msglen, "%s \"%s\" is not a quantity, expected %s", it->key, value, qty_hint);
		break;
	case CFG_DURATION:
		if (err == CFG_ETOOFINE)
			errf(msg, msglen, "%s \"%s\" is finer than 1ns, expected a whole number of ns",
			     it->key, value);
		else
			errf(msg, msglen, "%s \"%s\" is not a duration, expected %s", it->key, value, dur_hint);
		break;
	case CFG_MAC:
		errf(msg, msglen, "%s \"%s\" is not a MAC address, expected aa:bb:cc:dd:ee:ff",
		     it->key, value);
		break;
	case CFG_ENUM:
		errf(msg, msglen, "%s \"%s\" is not valid, expected one of: ", it->key, value);
		names_list(msg, msglen, it->names);
		break;
	case CFG_STR:
	default:
		errf(msg, msglen, "%s \"%s\" is not valid", it->key, value);
		break;
	}
}

static int range_error(const struct cfg_item *it, const char *value, char *msg, size_t msglen)
{
	char range[80];

	fmt_range(range, sizeof(range), it);
	errf(msg, msglen, "%s %s is out of range, expected %s", it->key, value, range);
	return -EINVAL;
}

/* Parse value into a temporary first so a bad value leaves obj untouched. */
static int set_value(const struct cfg_item *it, void *obj, const char *value,
		     char *msg, size_t msglen)
{
	char *dst = (char *)obj + it->off;
	struct cfg_qty q;
	uint64_t u = 0;
	int64_t i = 0;
	size_t n;
	uint8_t mac[6];
	bool b;
	int err = 0, e;

	switch (it->type) {
	case CFG_INT:
		err = int_parse(value, true, &i, NULL);
		if (err)
			break;
		if (ranged(it) && (i < it->min || i > it->max))
			return range_error(it, value, msg, msglen);
		memcpy(dst, &i, sizeof(i));
		break;
	case CFG_UINT:
	case CFG_RATE:
	case CFG_SIZE:
	case CFG_DURATION:
		if (it->type == CFG_UINT)
			err = int_parse(value, false, NULL, &u);
		else if (it->type == CFG_RATE)
			err = rate_parse(value, &u);
		else if (it->type == CFG_SIZE)
			err = size_parse(value, &u);
		else
			err = duration_parse(value, &u);
		if (err)
			break;
		if (!in_urange(it, u))
			return range_error(it, value, msg, msglen);
		memcpy(dst, &u, sizeof(u));
		break;
	case CFG_BOOL:
		err = bool_parse(value, &b);
		if (!err)
			memcpy(dst, &b, sizeof(b));
		break;
	case CFG_STR:
		n = strlen(value);
		if (!it->size || n > it->size - 1) {
			errf(msg, msglen, "%s is too long (%zu characters), expected at most %zu",
			     it->key, n, it->size ? it->size - 1 : 0);
			return -EINVAL;
		}
		memcpy(dst, value, n + 1);
		break;
	case CFG_QTY:
		memset(&q, 0, sizeof(q));
		err = qty_parse(value, &q);
		if (!err)
			memcpy(dst, &q, sizeof(q));
		break;
	case CFG_ENUM:
		if (!it->names) {
			errf(msg, msglen, "%s has no names in the table, expected a names[] list", it->key);
			return -EINVAL;
		}
		err = -EINVAL;
		for (e = 0; it->names[e]; e++) {
			if (!strcmp(value, it->names[e])) {
				memcpy(dst, &e, sizeof(e));
				err = 0;
				break;
			}
		}
		break;
	case CFG_MAC:
		err = mac_parse(value, mac);
		if (!err)
			memcpy(dst, mac, sizeof(mac));
		break;
	default:
		errf(msg, msglen, "%s has unknown type %d in the table, expected a cfg_type",
		     it->key, (int)it->type);
		return -EINVAL;
	}
	if (err) {
		value_error(it, value, err, msg, msglen);
		return -EINVAL;
	}
	return 0;
}

static const struct cfg_item *find_item(const struct cfg_section *sec, const char *key,
					size_t *idx)
{
	size_t i;

	for (i = 0; i < sec->nitems; i++) {
		if (!strcmp(sec->items[i].key, key)) {
			if (idx)
				*idx = i;
			return &sec->items[i];
		}
	}
	return NULL;
}

static void sec_name(char *buf, size_t len, const struct cfg_section *sec, const char *label)
{
	if (label)
		snprintf(buf, len, "[%s %s]", sec->name, label);
	else
		snprintf(buf, len, "[%s]", sec->name);
}

static int unknown_key(const struct cfg_section *sec, const char *label, const char *key,
		       char *msg, size_t msglen)
{
	char where[128];
	size_t i;

	sec_name(where, sizeof(where), sec, label);
	errf(msg, msglen, "unknown key \"%s\" in %s, expected one of: ", key, where);
	for (i = 0; i < sec->nitems; i++)
		errcat(msg, msglen, "%s%s", i ? ", " : "", sec->items[i].key);
	return -EINVAL;
}

static int set_item(const struct cfg_section *sec, const char *label, void *obj,
		    const char *key, const char *value, char *msg, size_t msglen)
{
	const struct cfg_item *it = find_item(sec, key, NULL);

	if (!it)
		return unknown_key(sec, label, key, msg, msglen);
	return set_value(it, obj, value, msg, msglen);
}

int cfg_set_item(const struct cfg_section *sec, void *obj, const char *key,
		 const char *value, char *err, size_t errlen)
{
	char dummy;

	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	if (!value) {
		errf(err, errlen, "%s has no value, expected key = value", key);
		return -EINVAL;
	}
	return set_item(sec, NULL, obj, key, value, err, errlen);
}

int cfg_apply_defaults(const struct cfg_section *sec, void *obj, char *err, size_t errlen)
{
	const struct cfg_item *it;
	struct cfg_qty *q;
	char dummy, *tail;
	size_t i, tlen;
	int ret;

	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	for (i = 0; i < sec->nitems; i++) {
		it = &sec->items[i];
		if (!it->def)
			continue;
		/* A bad default is a bug in the table; say which one. */
		errf(err, errlen, "default of [%s] ", sec->name);
		tail = errtail(err, errlen, &tlen);
		ret = set_value(it, obj, it->def, tail, tlen);
		if (ret)
			return ret;
		/* A default is not "given": derived values may still replace it. */
		if (it->type == CFG_QTY) {
			q = (struct cfg_qty *)((char *)obj + it->off);
			q->set = false;
		}
	}
	err[0] = '\0';
	return 0;
}

/* ---- the file parser ---------------------------------------------------- */

struct seen_sec {
	size_t sec;
	const char *label;  /* points into the parser's copy of the text */
	unsigned line;
};

struct parser {
	const char *name;
	const struct cfg_section *secs;
	size_t nsecs;
	void *ctx;
	char *err;
	size_t errlen;
	unsigned line;

	const struct cfg_section *sec;  /* current section, NULL before the first */
	const char *label;
	void *obj;

	struct seen_sec *seen;
	size_t nseen, capseen;
	unsigned *key_line;             /* per item of the current section: where set */
};

static int fail(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
	char *tail;
	size_t tlen;
	va_list ap;

	errf(ps->err, ps->errlen, "%s:%u: ", ps->name, ps->line);
	tail = errtail(ps->err, ps->errlen, &tlen);
	va_start(ap, fmt);
	vsnprintf(tail, tlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Write the "file:line: " prefix and return where the rest of the message goes. */
static char *prefix(struct parser *ps, size_t *tlen)
{
	errf(ps->err, ps->errlen, "%s:%u: ", ps->name, ps->line);
	return errtail(ps->err, ps->errlen, tlen);
}

static int unknown_section(struct parser *ps, const char *name)
{
	size_t i;

	fail(ps, "unknown section [%s], expected one of: ", name);
	for (i = 0; i < ps->nsecs; i++)
		errcat(ps->err, ps->errlen, "%s[%s%s]", i ? ", " : "", ps->secs[i].name,
		       ps->secs[i].labelled ? " <label>" : "");
	return -EINVAL;
}

static bool valid_label(const char *s)
{
	for (; *s; s++)
		if (!isgraph((unsigned char)*s) || *s == '[')
			return false;
	return true;
}

static int parse_header(struct parser *ps, char *line)
{
	const struct cfg_section *sec = NULL;
	struct seen_sec *seen;
	char *close, *inner, *label;
	char *tail;
	size_t i, tlen;
	int err;

	close = strchr(line, ']');
	if (!close)
		return fail(ps, "section header \"%s\" has no closing ']', expected [name] or [name label]",
			    line);
	if (close[1])
		return fail(ps, "unexpected \"%s\" after section header, expected nothing or a comment",
			    close + 1);
	*close = '\0';
	inner = trim(line + 1);
	label = inner + strcspn(inner, " \t\r\v\f");
	if (*label) {
		*label++ = '\0';
		label = trim(label);
	}
	if (!*label)
		label = NULL;
	if (!*inner)
		return fail(ps, "empty section header, expected [name] or [name label]");

	for (i = 0; i < ps->nsecs; i++) {
		if (!strcmp(ps->secs[i].name, inner)) {
			sec = &ps->secs[i];
			break;
		}
	}
	if (!sec)
		return unknown_section(ps, inner);
	if (sec->labelled && !label)
		return fail(ps, "[%s] needs a label, expected [%s <label>]", sec->name, sec->name);
	if (!sec->labelled && label)
		return fail(ps, "[%s] takes no label, expected [%s]", sec->name, sec->name);
	if (label && !valid_label(label))
		return fail(ps, "label \"%s\" of [%s] is not one word, expected a name without spaces",
			    label, sec->name);

	for (i = 0; i < ps->nseen; i++) {
		seen = &ps->seen[i];
		if (seen->sec != (size_t)(sec - ps->secs))
			continue;
		if (!label)
			return fail(ps, "section [%s] repeats the one at line %u, expected it once",
				    sec->name, seen->line);
		if (!strcmp(seen->label, label))
			return fail(ps, "section [%s %s] repeats the one at line %u, expected each label once",
				    sec->name, label, seen->line);
	}
	if (ps->nseen == ps->capseen) {
		size_t cap = ps->capseen ? 2 * ps->capseen : 16;

		seen = realloc(ps->seen, cap * sizeof(*seen));
		if (!seen)
			return fail(ps, "out of memory, expected a smaller config");
		ps->seen = seen;
		ps->capseen = cap;
	}
	ps->seen[ps->nseen++] = (struct seen_sec){ sec - ps->secs, label, ps->line };

	if (!sec->open)
		return fail(ps, "[%s] has no open() in the table, expected one", sec->name);
	tail = prefix(ps, &tlen);
	tail[0] = '\0';
	ps->obj = sec->open(ps->ctx, label, tail, tlen);
	if (!ps->obj) {
		if (!tail[0]) {
			char where[128];

			sec_name(where, sizeof(where), sec, label);
			fail(ps, "cannot create %s, expected the program to accept it", where);
		}
		return -EINVAL;
	}
	err = cfg_apply_defaults(sec, ps->obj, tail, tlen);
	if (err)
		return err;
	ps->sec = sec;
	ps->label = label;
	memset(ps->key_line, 0, sec->nitems * sizeof(*ps->key_line));
	return 0;
}

static int parse_setting(struct parser *ps, char *line)
{
	const struct cfg_item *it;
	char *eq, *key, *value, *tail;
	char where[128];
	size_t idx, tlen;

	eq = strchr(line, '=');
	if (!eq)
		return fail(ps, "\"%s\" is not a setting, expected key = value, [section] or a comment",
			    line);
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!*key)
		return fail(ps, "missing key before '=', expected key = value");
	if (!ps->sec)
		return fail(ps, "key \"%s\" is outside any section, expected a [section] header before it",
			    key);
	it = find_item(ps->sec, key, &idx);
	if (!it) {
		tail = prefix(ps, &tlen);
		return unknown_key(ps->sec, ps->label, key, tail, tlen);
	}
	if (ps->key_line[idx]) {
		sec_name(where, sizeof(where), ps->sec, ps->label);
		return fail(ps, "key \"%s\" in %s repeats line %u, expected each key once",
			    key, where, ps->key_line[idx]);
	}
	ps->key_line[idx] = ps->line;
	tail = prefix(ps, &tlen);
	return set_value(it, ps->obj, value, tail, tlen);
}

/* text is a private, writable copy of len bytes followed by a NUL. */
static int parse_text(struct parser *ps, char *text, size_t len)
{
	char *line = text, *end, *nl;
	size_t i, maxitems = 1;
	int err = 0;

	for (i = 0; i < ps->nsecs; i++)
		if (ps->secs[i].nitems > maxitems)
			maxitems = ps->secs[i].nitems;
	ps->key_line = calloc(maxitems, sizeof(*ps->key_line));
	if (!ps->key_line) {
		errf(ps->err, ps->errlen, "%s: out of memory", ps->name);
		return -ENOMEM;
	}

	end = text + len;
	for (ps->line = 1; line < end && !err; ps->line++, line = nl + 1) {
		nl = memchr(line, '\n', end - line);
		if (!nl)
			nl = end;
		*nl = '\0';
		/* A NUL would silently hide the rest of the line from strchr. */
		if (strlen(line) != (size_t)(nl - line)) {
			err = fail(ps, "NUL byte in line, expected text");
			break;
		}
		strip_comment(line);
		line = trim(line);
		if (!*line)
			continue;
		if (*line == '[')
			err = parse_header(ps, line);
		else
			err = parse_setting(ps, line);
	}
	if (!err && ps->err && ps->errlen)
		ps->err[0] = '\0';
	free(ps->key_line);
	free(ps->seen);
	return err;
}

static int parse_buf(const char *name, char *text, size_t len, const struct cfg_section *secs,
		     size_t nsecs, void *ctx, char *err, size_t errlen)
{
	struct parser ps = {
		.name = name ? name : "<string>",
		.secs = secs,
		.nsecs = nsecs,
		.ctx = ctx,
		.err = err,
		.errlen = errlen,
	};
	char dummy;

	if (!ps.err || !ps.errlen) {
		ps.err = &dummy;
		ps.errlen = 1;
	}
	return parse_text(&ps, text, len);
}

int cfg_parse_string(const char *name, const char *text, const struct cfg_section *secs,
		     size_t nsecs, void *ctx, char *err, size_t errlen)
{
	size_t len = strlen(text);
	char *copy;
	int ret;

	copy = malloc(len + 1);
	if (!copy) {
		errf(err, errlen, "%s: out of memory", name ? name : "<string>");
		return -ENOMEM;
	}
	memcpy(copy, text, len + 1);
	ret = parse_buf(name, copy, len, secs, nsecs, ctx, err, errlen);
	free(copy);
	return ret;
}

int cfg_parse_file(const char *path, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, char *err, size_t errlen)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL, *nbuf;
	FILE *f;
	int ret;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		errf(err, errlen, "cannot open %s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap >= CFG_MAX_FILE) {
				ret = -EFBIG;
				errf(err, errlen, "%s is larger than %u MiB, expected a config file",
				     path, CFG_MAX_FILE >> 20);
				goto out;
			}
			cap = cap ? 2 * cap : 4096;
			nbuf = realloc(buf, cap);
			if (!nbuf) {
				ret = -ENOMEM;
				errf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = nbuf;
		}
		errno = 0;
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n)
			continue;
		if (ferror(f)) {
			ret = errno ? -errno : -EIO;
			errf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
			goto out;
		}
		break;
	}
	buf[len] = '\0';
	ret = parse_buf(path, buf, len, secs, nsecs, ctx, err, errlen);
out:
	free(buf);
	fclose(f);
	return ret;
}

/* ---- overrides ---------------------------------------------------------- */

int cfg_override(const char *assignment, const struct cfg_section *secs, size_t nsecs,
		 void *ctx, char *err, size_t errlen)
{
	const struct cfg_section *sec = NULL;
	char *copy, *eq, *lhs, *value, *dot, *last, *label = NULL, *key;
	char *tail, dummy, where[128];
	size_t i, tlen;
	void *obj;
	int ret = -EINVAL;

	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	copy = strdup(assignment);
	if (!copy) {
		errf(err, errlen, "override \"%s\": out of memory", assignment);
		return -ENOMEM;
	}
	errf(err, errlen, "override \"%s\": ", assignment);
	tail = errtail(err, errlen, &tlen);

	eq = strchr(copy, '=');
	if (!eq) {
		errf(tail, tlen, "no '=', expected section.key=value or section.label.key=value");
		goto out;
	}
	*eq = '\0';
	lhs = trim(copy);
	value = trim(eq + 1);
	dot = strchr(lhs, '.');
	if (!dot) {
		errf(tail, tlen, "no section, expected section.key=value or section.label.key=value");
		goto out;
	}
	*dot = '\0';
	/* The key is after the last dot so that labels may contain dots
	 * (port.eth0.100.rate=1G for a VLAN interface). */
	key = dot + 1;
	last = strrchr(key, '.');
	if (last) {
		*last = '\0';
		label = key;
		key = last + 1;
	}

	for (i = 0; i < nsecs; i++) {
		if (!strcmp(secs[i].name, lhs)) {
			sec = &secs[i];
			break;
		}
	}
	if (!sec) {
		errf(tail, tlen, "unknown section \"%s\", expected one of: ", lhs);
		for (i = 0; i < nsecs; i++)
			errcat(tail, tlen, "%s%s", i ? ", " : "", secs[i].name);
		goto out;
	}
	if (sec->labelled && (!label || !*label)) {
		errf(tail, tlen, "[%s] needs a label, expected %s.<label>.key=value",
		     sec->name, sec->name);
		goto out;
	}
	if (!sec->labelled && label) {
		errf(tail, tlen, "[%s] takes no label, expected %s.key=value", sec->name, sec->name);
		goto out;
	}
	if (!*key) {
		errf(tail, tlen, "no key, expected %s.key=value", sec->name);
		goto out;
	}
	obj = sec->find ? sec->find(ctx, label) : NULL;
	if (!obj) {
		sec_name(where, sizeof(where), sec, label);
		errf(tail, tlen, "no %s to override, expected one in the config file", where);
		goto out;
	}
	ret = set_item(sec, label, obj, key, value, tail, tlen);
	if (!ret)
		err[0] = '\0';
out:
	free(copy);
	return ret;
}

/* ---- reference ---------------------------------------------------------- */

/* Table cells: a '|' would end the cell, so escape it. */
static void md_put(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void print_type(FILE *f, const struct cfg_item *it)
{
	size_t i;

	switch (it->type) {
	case CFG_INT:      fputs("int", f); break;
	case CFG_UINT:     fputs("uint", f); break;
	case CFG_BOOL:     fputs("bool", f); break;
	case CFG_STR:      fputs("string", f); break;
	case CFG_RATE:     fputs("rate (bit/s)", f); break;
	case CFG_SIZE:     fputs("size (bytes)", f); break;
	case CFG_QTY:      fputs("size or frames", f); break;
	case CFG_DURATION: fputs("duration", f); break;
	case CFG_MAC:      fputs("MAC", f); break;
	case CFG_ENUM:
		for (i = 0; it->names && it->names[i]; i++) {
			if (i)
				fputs("\\|", f);
			md_put(f, it->names[i]);
		}
		break;
	default:
		fputs("?", f);
		break;
	}
}

void cfg_print_reference(FILE *f, const struct cfg_section *secs, size_t nsecs)
{
	const struct cfg_section *sec;
	const struct cfg_item *it;
	char range[80];
	size_t s, i;

	for (s = 0; s < nsecs; s++) {
		sec = &secs[s];
		fprintf(f, "### [%s%s]\n\n", sec->name, sec->labelled ? " <label>" : "");
		if (sec->help)
			fprintf(f, "%s\n\n", sec->help);
		fputs("| key | type | default | range | description |\n", f);
		fputs("|-----|------|---------|-------|-------------|\n", f);
		for (i = 0; i < sec->nitems; i++) {
			it = &sec->items[i];
			if (it->type == CFG_STR && it->size)
				snprintf(range, sizeof(range), "at most %zu characters", it->size - 1);
			else
				fmt_range(range, sizeof(range), it);
			fprintf(f, "| %s | ", it->key);
			print_type(f, it);
			fputs(" | ", f);
			md_put(f, it->def);
			fprintf(f, " | %s | ", range);
			md_put(f, it->help);
			fputs(" |\n", f);
		}
		fputc('\n', f);
	}
}
