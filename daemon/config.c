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
#include <math.h>
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
/* A real number, or a fraction of two (1/128: gains are often given so). */
static int real_parse(const char *s, double *v)
{
	char *end;
	double num, den = 1;

	errno = 0;
	num = strtod(s, &end);
	if (end == s || errno)
		return -EINVAL;
	if (*end == '/') {
		const char *d = end + 1;

		den = strtod(d, &end);
		if (end == d || errno || den == 0)
			return -EINVAL;
	}
	if (*end || !isfinite(num / den))
		return -EINVAL;
	*v = num / den;
	return 0;
}

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
	case CFG_REAL:
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
	case CFG_REAL:
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
	case CFG_REAL:
		fmt_range(range, sizeof(range), it);
		errf(msg, msglen, "%s \"%s\" is not a number, expected %s%s", it->key, value,
		     range[0] ? "a number in " : "a number such as 0.01 or 1/128", range);
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
	double d = 0;
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
	case CFG_REAL:
		err = real_parse(value, &d);
		if (err)
			break;
		if (ranged(it) && (d < (double)it->min || d > (double)it->max))
			return range_error(it, value, msg, msglen);
		memcpy(dst, &d, sizeof(d));
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

/* ---- variants ------------------------------------------------------------ */

static const struct cfg_section *find_section(const struct cfg_section *secs, size_t nsecs,
					      const char *name)
{
	for (size_t i = 0; secs && i < nsecs; i++)
		if (!strcmp(secs[i].name, name))
			return &secs[i];
	return NULL;
}

static void *store_of(const struct cfg_section *sec, const void *obj)
{
	return (char *)obj + sec->sel->store_off;
}

/* The selector's value in obj, as written ("" if it has none). */
static const char *sel_text(const struct cfg_section *sec, const void *obj)
{
	const struct cfg_item *it = find_item(sec, sec->sel->key, NULL);
	const char *p;
	int v;

	if (!it)
		return "";
	p = (const char *)obj + it->off;
	if (it->type == CFG_STR)
		return it->size && memchr(p, '\0', it->size) ? p : "";
	if (it->type != CFG_ENUM || !it->names)
		return "";
	memcpy(&v, p, sizeof(v));
	for (int i = 0; it->names[i]; i++)
		if (i == v)
			return it->names[i];
	return "";
}

/* The variant named name, or one without keys of that name. */
static void variant_named(const struct cfg_selector *sel, const char *name, struct cfg_variant *v)
{
	for (size_t i = 0; sel->variant && sel->variant(i, v); i++)
		if (!strcmp(v->name, name))
			return;
	*v = (struct cfg_variant){ .name = name };
}

/* The name of a variant (other than skip) that has key, or NULL. */
static const char *variant_with_key(const struct cfg_selector *sel, const char *key,
				    const char *skip)
{
	struct cfg_variant v;

	for (size_t i = 0; sel->variant && sel->variant(i, &v); i++) {
		if (skip && !strcmp(v.name, skip))
			continue;
		for (size_t k = 0; k < v.nitems; k++)
			if (!strcmp(v.items[k].key, key))
				return v.name;
	}
	return NULL;
}

static const struct cfg_item *variant_item(const struct cfg_variant *v, const char *key)
{
	for (size_t k = 0; k < v->nitems; k++)
		if (!strcmp(v->items[k].key, key))
			return &v->items[k];
	return NULL;
}

static bool follows_parent(const struct cfg_section *sec, const void *obj)
{
	return sec->sel->parent && sec->sel->follow && !strcmp(sel_text(sec, obj), sec->sel->follow);
}

/* The parent's object, or NULL. */
static void *parent_obj(const struct cfg_section *secs, size_t nsecs,
			const struct cfg_section *sec, void *ctx, const struct cfg_section **psec)
{
	const struct cfg_section *p = sec->sel->parent ?
				      find_section(secs, nsecs, sec->sel->parent) : NULL;

	if (!p || p->labelled || !p->sel || !p->find)
		return NULL;
	*psec = p;
	return p->find(ctx, NULL);
}

void cfg_variant_of(const struct cfg_section *secs, size_t nsecs, const struct cfg_section *sec,
		    void *ctx, const void *obj, struct cfg_variant *v)
{
	const struct cfg_section *psec;
	const char *name;
	void *pobj;

	*v = (struct cfg_variant){ .name = "" };
	if (!sec->sel)
		return;
	name = sel_text(sec, obj);
	if (follows_parent(sec, obj)) {
		pobj = parent_obj(secs, nsecs, sec, ctx, &psec);
		name = pobj ? sel_text(psec, pobj) : "";
	}
	variant_named(sec->sel, name, v);
}

/* Item defaults onto obj; a default is not "given" (derived values may
 * still replace it). */
static int apply_item_defaults(const char *what, const struct cfg_item *items, size_t n,
			       void *obj, char *err, size_t errlen)
{
	char *tail;
	size_t tlen;
	int ret;

	for (size_t i = 0; i < n; i++) {
		const struct cfg_item *it = &items[i];

		if (!it->def)
			continue;
		/* A bad default is a bug in the table; say which one. */
		errf(err, errlen, "default of %s ", what);
		tail = errtail(err, errlen, &tlen);
		ret = set_value(it, obj, it->def, tail, tlen);
		if (ret)
			return ret;
		if (it->type == CFG_QTY)
			((struct cfg_qty *)((char *)obj + it->off))->set = false;
	}
	err[0] = '\0';
	return 0;
}

static int store_fits(const struct cfg_section *sec, const struct cfg_variant *v, char *err,
		      size_t errlen)
{
	if (v->size <= sec->sel->store_size)
		return 0;
	errf(err, errlen, "[%s] %s %s: its config is %zu bytes, expected at most the %zu the "
	     "section keeps for it", sec->name, sec->sel->key, v->name, v->size,
	     sec->sel->store_size);
	return -E2BIG;
}

/* Start obj's variant config afresh: the parent's values when it has the
 * same variant, else the variant's defaults. */
static int reset_store(const struct cfg_section *secs, size_t nsecs,
		       const struct cfg_section *sec, void *ctx, void *obj, char *err,
		       size_t errlen)
{
	const struct cfg_section *psec;
	struct cfg_variant v, pv;
	char what[128];
	void *pobj;
	int ret;

	cfg_variant_of(secs, nsecs, sec, ctx, obj, &v);
	ret = store_fits(sec, &v, err, errlen);
	if (ret)
		return ret;
	memset(store_of(sec, obj), 0, sec->sel->store_size);
	pobj = parent_obj(secs, nsecs, sec, ctx, &psec);
	if (pobj) {
		cfg_variant_of(secs, nsecs, psec, ctx, pobj, &pv);
		if (!strcmp(pv.name, v.name) && psec->sel->store_size == sec->sel->store_size) {
			memcpy(store_of(sec, obj), store_of(psec, pobj), sec->sel->store_size);
			return 0;
		}
	}
	snprintf(what, sizeof(what), "%s %s", sec->sel->key, v.name);
	return apply_item_defaults(what, v.items, v.nitems, store_of(sec, obj), err, errlen);
}

/* ---- setting one item, from outside --------------------------------------- */

static int unknown_key(const struct cfg_section *sec, const char *label, const char *key,
		       char *msg, size_t msglen)
{
	struct cfg_variant v;
	char where[128];
	size_t i, k;
	bool first = true;

	sec_name(where, sizeof(where), sec, label);
	errf(msg, msglen, "unknown key \"%s\" in %s, expected one of: ", key, where);
	for (i = 0; i < sec->nitems; i++)
		errcat(msg, msglen, "%s%s", i ? ", " : "", sec->items[i].key);
	/* A section with a selector also takes the keys of its variants. */
	for (i = 0; sec->sel && sec->sel->variant && sec->sel->variant(i, &v); i++) {
		if (!v.nitems)
			continue;
		errcat(msg, msglen, "%s%s %s: ", first ? "; or with " : "; with ", sec->sel->key,
		       v.name);
		for (k = 0; k < v.nitems; k++)
			errcat(msg, msglen, "%s%s", k ? ", " : "", v.items[k].key);
		first = false;
	}
	return -EINVAL;
}

int cfg_set_item(const struct cfg_section *sec, void *obj, const char *key,
		 const char *value, char *err, size_t errlen)
{
	const struct cfg_item *it;
	char dummy;

	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	if (!value) {
		errf(err, errlen, "%s has no value, expected key = value", key);
		return -EINVAL;
	}
	it = find_item(sec, key, NULL);
	if (!it)
		return unknown_key(sec, NULL, key, err, errlen);
	return set_value(it, obj, value, err, errlen);
}

int cfg_apply_defaults(const struct cfg_section *sec, void *obj, char *err, size_t errlen)
{
	struct cfg_variant v;
	char dummy, what[128];
	int ret;

	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	snprintf(what, sizeof(what), "[%s]", sec->name);
	ret = apply_item_defaults(what, sec->items, sec->nitems, obj, err, errlen);
	if (ret || !sec->sel)
		return ret;
	memset(store_of(sec, obj), 0, sec->sel->store_size);
	/* An instance that follows its parent gets the parent's variant when
	 * the load ends. */
	if (follows_parent(sec, obj))
		return 0;
	variant_named(sec->sel, sel_text(sec, obj), &v);
	ret = store_fits(sec, &v, err, errlen);
	if (ret)
		return ret;
	snprintf(what, sizeof(what), "%s %s", sec->sel->key, v.name);
	return apply_item_defaults(what, v.items, v.nitems, store_of(sec, obj), err, errlen);
}

/* ---- a load: files, overrides, then the variants' keys -------------------- */

/* A variant's key, set once the variant is known. */
struct pending {
	const struct cfg_section *sec;
	void *obj;
	char *label;        /* of the instance, or NULL */
	char *key, *value;
	char *where;        /* "file:line" or "override \"...\"" */
	char *file;         /* the file, for "repeats line N"; NULL for an override */
	unsigned line;
};

/* An instance of a section with a selector that this load opened or changed. */
struct touched {
	const struct cfg_section *sec;
	void *obj;
	char *label;
	bool fresh;         /* opened by a header: its variant config starts afresh */
	char *was;          /* else: its variant when first touched */
	char *where;        /* its header's "file:line", or the first override's */
};

struct cfg_load {
	const struct cfg_section *secs;
	size_t nsecs;
	void *ctx;
	cfg_warn_fn *warn;
	void *warn_arg;
	struct pending *pend;
	size_t npend, cappend;
	struct touched *tch;
	size_t ntch, captch;
	int failed;         /* the first error: later calls do nothing */
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 16;
	p = realloc(*arr, c * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static struct touched *find_touched(struct cfg_load *l, const struct cfg_section *sec,
				    const void *obj)
{
	for (size_t i = 0; i < l->ntch; i++)
		if (l->tch[i].sec == sec && l->tch[i].obj == obj)
			return &l->tch[i];
	return NULL;
}

/* Note that this load changes obj: fresh when a header just opened it. */
static int touch(struct cfg_load *l, const struct cfg_section *sec, void *obj, const char *label,
		 bool fresh, const char *where)
{
	struct cfg_variant v;
	struct touched *t = find_touched(l, sec, obj);

	if (t) {
		t->fresh |= fresh;
		return 0;
	}
	if (grow((void **)&l->tch, &l->captch, l->ntch, sizeof(*l->tch)))
		return -ENOMEM;
	t = &l->tch[l->ntch];
	*t = (struct touched){ .sec = sec, .obj = obj, .fresh = fresh };
	if (!fresh) {
		cfg_variant_of(l->secs, l->nsecs, sec, l->ctx, obj, &v);
		t->was = strdup(v.name);
	}
	t->label = dup_or_null(label);
	t->where = strdup(where);
	if ((!fresh && !t->was) || (label && !t->label) || !t->where) {
		free(t->was);
		free(t->label);
		free(t->where);
		return -ENOMEM;
	}
	l->ntch++;
	return 0;
}

/* A variant key from file:line, or from the override text ovr. */
static int add_pending(struct cfg_load *l, const struct cfg_section *sec, void *obj,
		       const char *label, const char *key, const char *value, const char *file,
		       unsigned line, const char *ovr)
{
	struct pending *p;
	int n;

	if (grow((void **)&l->pend, &l->cappend, l->npend, sizeof(*l->pend)))
		return -ENOMEM;
	p = &l->pend[l->npend];
	*p = (struct pending){ .sec = sec, .obj = obj, .line = line };
	p->label = dup_or_null(label);
	p->key = strdup(key);
	p->value = strdup(value);
	p->file = dup_or_null(file);
	n = file ? asprintf(&p->where, "%s:%u", file, line)
		 : asprintf(&p->where, "override \"%s\"", ovr);
	if (n < 0)
		p->where = NULL;
	if ((label && !p->label) || !p->key || !p->value || !p->where || (file && !p->file)) {
		free(p->label);
		free(p->key);
		free(p->value);
		free(p->where);
		free(p->file);
		return -ENOMEM;
	}
	l->npend++;
	return 0;
}

/* The line a file already set this variant key of obj on, or 0. */
static unsigned pending_line(const struct cfg_load *l, const struct cfg_section *sec,
			     const void *obj, const char *key, const char *file)
{
	for (size_t i = 0; i < l->npend; i++) {
		const struct pending *p = &l->pend[i];

		if (p->sec == sec && p->obj == obj && p->file && !strcmp(p->file, file) &&
		    !strcmp(p->key, key))
			return p->line;
	}
	return 0;
}

static void load_free(struct cfg_load *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->npend; i++) {
		free(l->pend[i].label);
		free(l->pend[i].key);
		free(l->pend[i].value);
		free(l->pend[i].where);
		free(l->pend[i].file);
	}
	for (size_t i = 0; i < l->ntch; i++) {
		free(l->tch[i].label);
		free(l->tch[i].was);
		free(l->tch[i].where);
	}
	free(l->pend);
	free(l->tch);
	free(l);
}

int cfg_load_begin(struct cfg_load **out, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, cfg_warn_fn *warn, void *warn_arg)
{
	struct cfg_load *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->secs = secs;
	l->nsecs = nsecs;
	l->ctx = ctx;
	l->warn = warn;
	l->warn_arg = warn_arg;
	*out = l;
	return 0;
}

void cfg_load_abort(struct cfg_load *l)
{
	load_free(l);
}

static void warnf(struct cfg_load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(struct cfg_load *l, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!l->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->warn(l->warn_arg, msg);
}

/* Set one pending key on the variant obj has now. */
static int apply_pending(struct cfg_load *l, const struct pending *p, const struct cfg_variant *v,
			 char *err, size_t errlen)
{
	const struct cfg_item *it = variant_item(v, p->key);
	const char *other;
	char where[128], *tail;
	size_t tlen;

	sec_name(where, sizeof(where), p->sec, p->label);
	if (it) {
		errf(err, errlen, "%s: ", p->where);
		tail = errtail(err, errlen, &tlen);
		return set_value(it, store_of(p->sec, p->obj), p->value, tail, tlen);
	}
	other = variant_with_key(p->sec->sel, p->key, v->name);
	if (other) {
		/* A sweep that switches schemes leaves the others' keys in place. */
		warnf(l, "%s: %s in %s does not apply to %s %s; ignored (it is a key of %s %s)",
		      p->where, p->key, where, p->sec->sel->key, v->name[0] ? v->name : "(none)",
		      p->sec->sel->key, other);
		return 0;
	}
	errf(err, errlen, "%s: ", p->where);
	tail = errtail(err, errlen, &tlen);
	return unknown_key(p->sec, p->label, p->key, tail, tlen);
}

/* Resolve one touched instance: its variant config afresh if it is new or
 * its variant changed, then its pending keys in the order they came. */
static int resolve(struct cfg_load *l, const struct touched *t, char *err, size_t errlen)
{
	struct cfg_variant v;
	char where[128], *tail;
	size_t tlen;
	int ret;

	cfg_variant_of(l->secs, l->nsecs, t->sec, l->ctx, t->obj, &v);
	if (t->fresh || strcmp(t->was, v.name)) {
		sec_name(where, sizeof(where), t->sec, t->label);
		errf(err, errlen, "%s: %s: ", t->where, where);
		tail = errtail(err, errlen, &tlen);
		ret = reset_store(l->secs, l->nsecs, t->sec, l->ctx, t->obj, tail, tlen);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < l->npend; i++) {
		const struct pending *p = &l->pend[i];

		if (p->sec != t->sec || p->obj != t->obj)
			continue;
		ret = apply_pending(l, p, &v, err, errlen);
		if (ret)
			return ret;
	}
	if (!v.check)
		return 0;
	/* Checks across the variant's keys, on the values it ends with. */
	sec_name(where, sizeof(where), t->sec, t->label);
	errf(err, errlen, "%s: %s %s %s: ", t->where, where, t->sec->sel->key, v.name);
	tail = errtail(err, errlen, &tlen);
	return v.check(store_of(t->sec, t->obj), tail, tlen);
}

int cfg_load_end(struct cfg_load *l, char *err, size_t errlen)
{
	char dummy;
	int ret = 0;

	if (!l)
		return -EINVAL;
	if (l->failed) {
		ret = l->failed;
		goto out;
	}
	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	/* Parents first: their children may start from their values. */
	for (int pass = 0; pass < 2 && !ret; pass++) {
		for (size_t i = 0; i < l->ntch && !ret; i++) {
			const struct touched *t = &l->tch[i];

			if ((t->sec->sel->parent != NULL) == (pass == 1))
				ret = resolve(l, t, err, errlen);
		}
	}
	if (!ret)
		err[0] = '\0';
out:
	load_free(l);
	return ret;
}

/* ---- the file parser ---------------------------------------------------- */

struct seen_sec {
	size_t sec;
	const char *label;  /* points into the parser's copy of the text */
	unsigned line;
};

struct parser {
	struct cfg_load *l;
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
	if (sec->sel) {
		char here[64], *at;

		snprintf(here, sizeof(here), ":%u", ps->line);
		at = malloc(strlen(ps->name) + strlen(here) + 1);
		if (at)
			strcat(strcpy(at, ps->name), here);
		err = at ? touch(ps->l, sec, ps->obj, label, true, at) : -ENOMEM;
		free(at);
		if (err)
			return fail(ps, "out of memory, expected a smaller config");
	}
	ps->sec = sec;
	ps->label = label;
	memset(ps->key_line, 0, sec->nitems * sizeof(*ps->key_line));
	return 0;
}

/* Where the value of it in obj came from (cfg_item.line_at). */
static void note_line(const struct cfg_item *it, void *obj, unsigned line)
{
	if (it->line_at)
		memcpy((char *)obj + it->line_at - 1, &line, sizeof(line));
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
	if (!it && ps->sec->sel && variant_with_key(ps->sec->sel, key, NULL)) {
		/* A variant's key: set once the whole load says which variant. */
		unsigned prev = pending_line(ps->l, ps->sec, ps->obj, key, ps->name);

		if (prev) {
			sec_name(where, sizeof(where), ps->sec, ps->label);
			return fail(ps, "key \"%s\" in %s repeats line %u, expected each key once",
				    key, where, prev);
		}
		if (add_pending(ps->l, ps->sec, ps->obj, ps->label, key, value, ps->name, ps->line,
				NULL))
			return fail(ps, "out of memory, expected a smaller config");
		return 0;
	}
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
	note_line(it, ps->obj, ps->line);
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

static int parse_buf(struct cfg_load *l, const char *name, char *text, size_t len, char *err,
		     size_t errlen)
{
	struct parser ps = {
		.l = l,
		.name = name ? name : "<string>",
		.secs = l->secs,
		.nsecs = l->nsecs,
		.ctx = l->ctx,
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

int cfg_load_string(struct cfg_load *l, const char *name, const char *text, char *err,
		    size_t errlen)
{
	size_t len = strlen(text);
	char *copy;
	int ret;

	if (l->failed)
		return l->failed;
	copy = malloc(len + 1);
	if (!copy) {
		errf(err, errlen, "%s: out of memory", name ? name : "<string>");
		return l->failed = -ENOMEM;
	}
	memcpy(copy, text, len + 1);
	ret = parse_buf(l, name, copy, len, err, errlen);
	free(copy);
	return l->failed = ret;
}

int cfg_load_file(struct cfg_load *l, const char *path, char *err, size_t errlen)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL, *nbuf;
	FILE *f;
	int ret;

	if (l->failed)
		return l->failed;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		errf(err, errlen, "cannot open %s: %s", path, strerror(-ret));
		return l->failed = ret;
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
	ret = parse_buf(l, path, buf, len, err, errlen);
out:
	free(buf);
	fclose(f);
	return l->failed = ret;
}
/* ---- overrides ---------------------------------------------------------- */

int cfg_load_override(struct cfg_load *l, const char *assignment, char *err, size_t errlen)
{
	const struct cfg_section *secs = l->secs, *sec = NULL;
	const struct cfg_item *it;
	size_t nsecs = l->nsecs;
	void *ctx = l->ctx;
	char *copy, *eq, *lhs, *value, *dot, *last, *label = NULL, *key;
	char *tail, dummy, where[128];
	size_t i, tlen;
	void *obj;
	int ret = -EINVAL;

	if (l->failed)
		return l->failed;
	if (!err || !errlen) {
		err = &dummy;
		errlen = 1;
	}
	copy = strdup(assignment);
	if (!copy) {
		errf(err, errlen, "override \"%s\": out of memory", assignment);
		return l->failed = -ENOMEM;
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
	it = find_item(sec, key, NULL);
	if (!it && !(sec->sel && variant_with_key(sec->sel, key, NULL))) {
		unknown_key(sec, label, key, tail, tlen);
		goto out;
	}
	/* Before the value changes: touch() notes the variant it had. */
	if (sec->sel) {
		char *at = NULL;

		if (asprintf(&at, "override \"%s\"", assignment) < 0)
			at = NULL;
		ret = at ? touch(l, sec, obj, label, false, at) : -ENOMEM;
		free(at);
		if (ret) {
			errf(tail, tlen, "out of memory");
			goto out;
		}
	}
	if (it) {
		ret = set_value(it, obj, value, tail, tlen);
		note_line(it, obj, CFG_LINE_OVERRIDE);
	} else if (add_pending(l, sec, obj, label, key, value, NULL, 0, assignment))
		ret = -ENOMEM;
	else
		ret = 0;
	if (!ret)
		err[0] = '\0';
out:
	free(copy);
	return l->failed = ret;
}

/* ---- one-shot loads ------------------------------------------------------- */

static int one_shot(const struct cfg_section *secs, size_t nsecs, void *ctx, const char *path,
		    const char *name, const char *text, const char *ovr, char *err, size_t errlen)
{
	struct cfg_load *l;
	int ret;

	ret = cfg_load_begin(&l, secs, nsecs, ctx, NULL, NULL);
	if (ret) {
		errf(err, errlen, "out of memory");
		return ret;
	}
	if (path)
		cfg_load_file(l, path, err, errlen);
	else if (text)
		cfg_load_string(l, name, text, err, errlen);
	else
		cfg_load_override(l, ovr, err, errlen);
	return cfg_load_end(l, err, errlen);
}

int cfg_parse_file(const char *path, const struct cfg_section *secs, size_t nsecs,
		   void *ctx, char *err, size_t errlen)
{
	return one_shot(secs, nsecs, ctx, path, NULL, NULL, NULL, err, errlen);
}

int cfg_parse_string(const char *name, const char *text, const struct cfg_section *secs,
		     size_t nsecs, void *ctx, char *err, size_t errlen)
{
	return one_shot(secs, nsecs, ctx, NULL, name, text, NULL, err, errlen);
}

int cfg_override(const char *assignment, const struct cfg_section *secs, size_t nsecs,
		 void *ctx, char *err, size_t errlen)
{
	return one_shot(secs, nsecs, ctx, NULL, NULL, NULL, assignment, err, errlen);
}


/* ---- values as text ---------------------------------------------------------- */

void cfg_format_value(const struct cfg_item *it, const void *obj, char *buf, size_t len)
{
	const char *p = (const char *)obj + it->off;
	struct cfg_qty q;
	uint64_t u;
	int64_t i;
	double d;
	bool b;
	int e;

	if (!len)
		return;
	buf[0] = '\0';
	switch (it->type) {
	case CFG_INT:
		memcpy(&i, p, sizeof(i));
		snprintf(buf, len, "%" PRId64, i);
		break;
	case CFG_UINT:
		memcpy(&u, p, sizeof(u));
		snprintf(buf, len, "%" PRIu64, u);
		break;
	case CFG_REAL:
		memcpy(&d, p, sizeof(d));
		snprintf(buf, len, "%g", d);
		break;
	case CFG_RATE:
		memcpy(&u, p, sizeof(u));
		if (u)
			fmt_rate(buf, len, u);
		else
			snprintf(buf, len, "unlimited");
		break;
	case CFG_SIZE:
		memcpy(&u, p, sizeof(u));
		fmt_size(buf, len, u);
		break;
	case CFG_DURATION:
		memcpy(&u, p, sizeof(u));
		if (u)
			fmt_duration(buf, len, u);
		else
			snprintf(buf, len, "0");
		break;
	case CFG_QTY:
		memcpy(&q, p, sizeof(q));
		if (!q.set && !q.n)
			snprintf(buf, len, "(derived)");
		else if (q.frames)
			snprintf(buf, len, "%" PRIu64 "frames", q.n);
		else
			fmt_size(buf, len, q.n);
		break;
	case CFG_BOOL:
		memcpy(&b, p, sizeof(b));
		snprintf(buf, len, "%s", b ? "yes" : "no");
		break;
	case CFG_ENUM:
		memcpy(&e, p, sizeof(e));
		for (int k = 0; it->names && it->names[k]; k++)
			if (k == e)
				snprintf(buf, len, "%s", it->names[k]);
		break;
	case CFG_MAC:
		snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", (uint8_t)p[0], (uint8_t)p[1],
			 (uint8_t)p[2], (uint8_t)p[3], (uint8_t)p[4], (uint8_t)p[5]);
		break;
	case CFG_STR:
		if (it->size)
			snprintf(buf, len, "%.*s", (int)strnlen(p, it->size), p);
		break;
	}
}

/* ---- reload ----------------------------------------------------------------- */

/* Bytes an item's value takes in its object. */
static size_t item_size(const struct cfg_item *it)
{
	switch (it->type) {
	case CFG_INT: return sizeof(int64_t);
	case CFG_UINT: case CFG_RATE: case CFG_SIZE: case CFG_DURATION: return sizeof(uint64_t);
	case CFG_REAL: return sizeof(double);
	case CFG_BOOL: return sizeof(bool);
	case CFG_ENUM: return sizeof(int);
	case CFG_QTY: return sizeof(struct cfg_qty);
	case CFG_MAC: return 6;
	case CFG_STR: return it->size;
	}
	return 0;
}

static bool item_differs(const struct cfg_item *it, const void *a, const void *b)
{
	const char *pa = (const char *)a + it->off, *pb = (const char *)b + it->off;
	struct cfg_qty qa, qb;

	switch (it->type) {
	case CFG_STR:
		/* Bytes after the NUL are whatever an earlier, longer value left. */
		return strncmp(pa, pb, it->size) != 0;
	case CFG_QTY:
		/* Field by field: padding is not part of the value. */
		memcpy(&qa, pa, sizeof(qa));
		memcpy(&qb, pb, sizeof(qb));
		return qa.n != qb.n || qa.frames != qb.frames || qa.set != qb.set;
	default:
		return memcmp(pa, pb, item_size(it)) != 0;
	}
}

struct diff {
	const struct cfg_section *secs;
	size_t nsecs;
	const void *old_cfg;
	void *new_cfg;
	void *daemon;
	cfg_change_fn *note;
	void *arg;
	char *err;              /* what refuses the reload, so far */
	size_t errlen;
	int refused;
};

static void refuse(struct diff *d, const struct cfg_change *c)
{
	char where[128];

	sec_name(where, sizeof(where), c->sec, c->label);
	if (!c->item)
		errcat(d->err, d->errlen, "%s[%s] sections %s -> %s need a restart",
		       d->refused ? "; " : "", c->sec->name, c->old_val, c->new_val);
	else if (c->why)
		errcat(d->err, d->errlen, "%s%s %s: %s", d->refused ? "; " : "", where,
		       c->item->key, c->why);
	else
		errcat(d->err, d->errlen, "%s%s %s %s -> %s needs a restart", d->refused ? "; " : "",
		       where, c->item->key, c->old_val, c->new_val);
	d->refused++;
}

/* One changed key: ask its validator, tell note(), keep or refuse. */
static void changed(struct diff *d, const struct cfg_section *sec, const char *label,
		    const char *variant, const struct cfg_item *it, const void *o, void *n,
		    const void *oobj, void *nobj)
{
	struct cfg_change c = {
		.sec = sec, .label = label, .variant = variant, .item = it, .old_obj = o,
		.new_obj = n, .old_cfg = d->old_cfg, .new_cfg = d->new_cfg, .daemon = d->daemon,
		.how = it->reload,
	};
	char why[256] = "";

	cfg_format_value(it, o, c.old_val, sizeof(c.old_val));
	cfg_format_value(it, n, c.new_val, sizeof(c.new_val));
	if (c.how == CFG_LIVE && it->reload_ok && it->reload_ok(&c, why, sizeof(why))) {
		if (!why[0])
			snprintf(why, sizeof(why), "refused by its check");
		c.why = why;
	}
	if (d->note)
		d->note(d->arg, &c);
	if (c.how == CFG_RESTART || c.why) {
		refuse(d, &c);
		return;
	}
	if (c.how != CFG_KEEP)
		return;
	memcpy((char *)n + it->off, (const char *)o + it->off, item_size(it));
	/* A kept selector keeps the variant's keys with it. */
	if (!variant && sec->sel && !strcmp(sec->sel->key, it->key))
		memcpy(store_of(sec, nobj), store_of(sec, oobj), sec->sel->store_size);
}

static void diff_instance(struct diff *d, const struct cfg_section *sec, const char *label,
			  const void *o, void *n)
{
	struct cfg_variant ov, nv;

	for (size_t i = 0; i < sec->nitems; i++)
		if (item_differs(&sec->items[i], o, n))
			changed(d, sec, label, NULL, &sec->items[i], o, n, o, n);
	if (!sec->sel)
		return;
	/* The variant's keys, when both sides have the same variant; a new
	 * variant is the selector's change. */
	cfg_variant_of(d->secs, d->nsecs, sec, (void *)d->old_cfg, o, &ov);
	cfg_variant_of(d->secs, d->nsecs, sec, d->new_cfg, n, &nv);
	if (strcmp(ov.name, nv.name))
		return;
	for (size_t i = 0; i < nv.nitems; i++)
		if (item_differs(&nv.items[i], store_of(sec, o), store_of(sec, n)))
			changed(d, sec, label, nv.name, &nv.items[i], store_of(sec, o),
				store_of(sec, n), o, n);
}

/* Do both configurations have the same instances, in the same order? */
static bool same_labels(const struct cfg_section *sec, const void *old_cfg, void *new_cfg)
{
	char a[128], b[128];

	for (size_t i = 0;; i++) {
		bool ha = sec->label_at((void *)old_cfg, i, a, sizeof(a));
		bool hb = sec->label_at(new_cfg, i, b, sizeof(b));

		if (ha != hb || (ha && strcmp(a, b)))
			return false;
		if (!ha)
			return true;
	}
}

/* "p1, p2, p3" ("(none)" for none). */
static void join_labels(const struct cfg_section *sec, const void *cfg, char *buf, size_t len)
{
	char l[128];
	size_t i;

	buf[0] = '\0';
	for (i = 0; sec->label_at((void *)cfg, i, l, sizeof(l)); i++)
		errcat(buf, len, "%s%s", i ? ", " : "", l);
	if (!i)
		snprintf(buf, len, "(none)");
}

static void diff_section(struct diff *d, const struct cfg_section *sec)
{
	char label[128];
	void *o, *n;

	if (!sec->find)
		return;
	if (!sec->labelled) {
		o = sec->find((void *)d->old_cfg, NULL);
		n = sec->find(d->new_cfg, NULL);
		if (o && n)
			diff_instance(d, sec, NULL, o, n);
		return;
	}
	if (!sec->label_at)
		return;
	if (!same_labels(sec, d->old_cfg, d->new_cfg)) {
		struct cfg_change c = {
			.sec = sec, .old_cfg = d->old_cfg, .new_cfg = d->new_cfg, .daemon = d->daemon,
			.how = sec->reload == CFG_KEEP && !sec->keep ? CFG_RESTART : sec->reload,
		};

		join_labels(sec, d->old_cfg, c.old_val, sizeof(c.old_val));
		join_labels(sec, d->new_cfg, c.new_val, sizeof(c.new_val));
		if (d->note)
			d->note(d->arg, &c);
		if (c.how == CFG_RESTART) {
			refuse(d, &c);
			return;
		}
		if (c.how == CFG_KEEP) {
			sec->keep(d->new_cfg, d->old_cfg);
			return;
		}
	}
	/* Instances on both sides, by label: new ones bring only their own. */
	for (size_t i = 0; sec->label_at(d->new_cfg, i, label, sizeof(label)); i++) {
		o = sec->find((void *)d->old_cfg, label);
		n = sec->find(d->new_cfg, label);
		if (o && n)
			diff_instance(d, sec, label, o, n);
	}
}

int cfg_reload_diff(const struct cfg_section *secs, size_t nsecs, const void *old_cfg,
		    void *new_cfg, void *daemon, cfg_change_fn *note, void *arg, char *err,
		    size_t errlen)
{
	char dummy;
	struct diff d = {
		.secs = secs, .nsecs = nsecs, .old_cfg = old_cfg, .new_cfg = new_cfg,
		.daemon = daemon, .note = note, .arg = arg, .err = err, .errlen = errlen,
	};

	if (!d.err || !d.errlen) {
		d.err = &dummy;
		d.errlen = 1;
	}
	d.err[0] = '\0';
	for (size_t s = 0; s < nsecs; s++)
		diff_section(&d, &secs[s]);
	return d.refused ? -EBUSY : 0;
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
	case CFG_REAL:     fputs("number", f); break;
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

static const char *reload_word(enum cfg_reload r)
{
	switch (r) {
	case CFG_LIVE: return "live";
	case CFG_KEEP: return "kept";
	case CFG_RESTART:
	default: return "restart";
	}
}

static void print_items(FILE *f, const struct cfg_item *items, size_t n)
{
	const struct cfg_item *it;
	char range[80];

	fputs("| key | type | default | range | reload | description |\n", f);
	fputs("|-----|------|---------|-------|--------|-------------|\n", f);
	for (size_t i = 0; i < n; i++) {
		it = &items[i];
		if (it->type == CFG_STR && it->size)
			snprintf(range, sizeof(range), "at most %zu characters", it->size - 1);
		else
			fmt_range(range, sizeof(range), it);
		fprintf(f, "| %s | ", it->key);
		print_type(f, it);
		fputs(" | ", f);
		md_put(f, it->def);
		fprintf(f, " | %s | %s | ", range, reload_word(it->reload));
		md_put(f, it->help);
		fputs(" |\n", f);
	}
	fputc('\n', f);
}

/* Each variant's keys under its selector's value. */
static void print_variants(FILE *f, const struct cfg_section *sec)
{
	const struct cfg_selector *sel = sec->sel;
	struct cfg_variant v;
	size_t i, bare = 0;

	if (sel->parent) {
		fprintf(f, "The keys of each value of `%s` are listed under [%s]. Given in this "
			"section they are this instance's; an instance whose `%s` is [%s]'s "
			"starts from [%s]'s values of them.\n\n", sel->key, sel->parent, sel->key,
			sel->parent, sel->parent);
		return;
	}
	for (i = 0; sel->variant && sel->variant(i, &v); i++) {
		if (!v.nitems) {
			bare++;
			continue;
		}
		fprintf(f, "#### [%s%s] %s = %s\n\n", sec->name, sec->labelled ? " <label>" : "",
			sel->key, v.name);
		if (v.help)
			fprintf(f, "%s\n\n", v.help);
		print_items(f, v.items, v.nitems);
	}
	if (!bare)
		return;
	fprintf(f, "Values of `%s` without keys of their own: ", sel->key);
	for (i = 0, bare = 0; sel->variant(i, &v); i++)
		if (!v.nitems)
			fprintf(f, "%s%s", bare++ ? ", " : "", v.name);
	fputs(".\n\n", f);
}

void cfg_print_reference(FILE *f, const struct cfg_section *secs, size_t nsecs)
{
	const struct cfg_section *sec;

	for (size_t s = 0; s < nsecs; s++) {
		sec = &secs[s];
		fprintf(f, "### [%s%s]\n\n", sec->name, sec->labelled ? " <label>" : "");
		if (sec->help)
			fprintf(f, "%s\n\n", sec->help);
		print_items(f, sec->items, sec->nitems);
		if (sec->labelled && sec->label_at)
			fprintf(f, "Sections added, removed or reordered on reload: %s.\n\n",
				reload_word(sec->reload));
		if (sec->sel)
			print_variants(f, sec);
	}
}
