// SPDX-License-Identifier: BSD-2-Clause
#include "fdb.h"

#include <errno.h>
#include <stdlib.h>

/* VLAN id + 1 above the MAC, so (00:00:00:00:00:00, vid 0) is not the empty key. */
static uint64_t fdb_key(const uint8_t mac[6], uint16_t vid)
{
	uint64_t k = 0;

	for (int i = 0; i < 6; i++)
		k = (k << 8) | mac[i];
	return k | ((uint64_t)(vid & 0xfff) << 48) | (1ull << 62);
}

static uint32_t fdb_hash(const struct fdb *f, uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & f->mask;
}

int fdb_create(struct fdb **out, uint32_t max_entries, uint64_t aging_ns)
{
	struct fdb *f;
	uint32_t size = 16;

	/* At most half full: linear probing stays short. */
	while (size < 2 * max_entries)
		size <<= 1;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->tab = calloc(size, sizeof(*f->tab));
	if (!f->tab) {
		free(f);
		return -ENOMEM;
	}
	f->mask = size - 1;
	f->max_entries = max_entries;
	f->aging_ns = aging_ns;
	*out = f;
	return 0;
}

void fdb_destroy(struct fdb *f)
{
	if (!f)
		return;
	free(f->tab);
	free(f);
}

static struct fdb_entry *fdb_find(const struct fdb *f, uint64_t key)
{
	uint32_t i = fdb_hash(f, key);

	for (;;) {
		struct fdb_entry *e = &f->tab[i];

		if (!e->key)
			return NULL;
		if (e->key == key)
			return e;
		i = (i + 1) & f->mask;
	}
}

static bool fdb_expired(const struct fdb *f, const struct fdb_entry *e, uint64_t now)
{
	return !e->is_static && f->aging_ns && now - e->last_seen_ns > f->aging_ns;
}

static void fdb_tell_set(struct fdb *f, const struct fdb_entry *e)
{
	if (f->sync.set)
		f->sync.set(f->sync.ctx, e->key, e->port);
}

static struct fdb_entry *fdb_insert(struct fdb *f, uint64_t key)
{
	uint32_t i = fdb_hash(f, key);

	if (f->count >= f->max_entries)
		return NULL;
	while (f->tab[i].key)
		i = (i + 1) & f->mask;
	/* A whole new entry: a slot emptied by a backward shift still holds the
	 * old occupant's flags. */
	f->tab[i] = (struct fdb_entry){ .key = key };
	f->count++;
	return &f->tab[i];
}

static void fdb_count(struct fdb *f, uint16_t port, int d)
{
	if (port < FDB_MAX_PORTS)
		f->learned[port] += d;
}

/* May port take one more address? */
static bool fdb_room(const struct fdb *f, uint16_t port)
{
	return port >= FDB_MAX_PORTS || !f->port_limit[port] ||
	       f->learned[port] < f->port_limit[port];
}

/* May one more address move to port this second? (Taken if so.) */
static bool fdb_move_ok(struct fdb *f, uint16_t port, uint64_t now)
{
	if (port >= FDB_MAX_PORTS || !f->move_limit[port])
		return true;
	if (now - f->move_start[port] >= 1000000000ull || !f->move_n[port]) {
		f->move_start[port] = now;
		f->move_n[port] = 0;
	}
	if (f->move_n[port] >= f->move_limit[port])
		return false;
	f->move_n[port]++;
	return true;
}

int fdb_learn(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port, uint64_t now)
{
	uint64_t key = fdb_key(mac, vid);
	struct fdb_entry *e = fdb_find(f, key);
	bool tell = true;
	int ret = 0;

	if (e) {
		tell = e->port != port;
		if (e->is_static) {
			if (e->port == port)
				return 0;
			f->static_refused++;
			return -EPERM;
		}
		if (e->port != port) {
			if (!fdb_room(f, port)) {
				f->limit_refused++;
				return -EDQUOT;
			}
			/* An aged-out address coming back elsewhere is new, not a move. */
			if (!fdb_expired(f, e, now)) {
				if (!fdb_move_ok(f, port, now)) {
					f->move_refused++;
					return -EBUSY;
				}
				f->moves++;
				ret = 1;
			}
			fdb_count(f, e->port, -1);
			fdb_count(f, port, 1);
		}
	} else {
		if (!fdb_room(f, port)) {
			f->limit_refused++;
			return -EDQUOT;
		}
		e = fdb_insert(f, key);
		if (!e) {
			f->learn_full++;
			return -ENOSPC;
		}
		fdb_count(f, port, 1);
	}
	e->port = port;
	e->last_seen_ns = now;
	if (tell)
		fdb_tell_set(f, e);
	return ret;
}

int fdb_lookup(const struct fdb *f, const uint8_t mac[6], uint16_t vid, uint64_t now)
{
	const struct fdb_entry *e = fdb_find(f, fdb_key(mac, vid));

	if (!e || fdb_expired(f, e, now))
		return -ENOENT;
	return e->port;
}

int fdb_add_static(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port)
{
	uint64_t key = fdb_key(mac, vid);
	struct fdb_entry *e = fdb_find(f, key);

	if (!e)
		e = fdb_insert(f, key);
	else if (!e->is_static)
		fdb_count(f, e->port, -1);
	if (!e)
		return -ENOSPC;
	e->port = port;
	e->is_static = true;
	fdb_tell_set(f, e);
	return 0;
}

/* Backward-shift deletion keeps every probe chain unbroken without tombstones. */
static void fdb_remove_at(struct fdb *f, uint32_t i)
{
	uint32_t j = i;

	if (!f->tab[i].is_static)
		fdb_count(f, f->tab[i].port, -1);
	if (f->sync.del)
		f->sync.del(f->sync.ctx, f->tab[i].key);
	f->tab[i].key = 0;
	f->count--;
	for (;;) {
		uint32_t home;

		j = (j + 1) & f->mask;
		if (!f->tab[j].key)
			return;
		home = fdb_hash(f, f->tab[j].key);
		/* Move j back to the hole at i unless its home lies cyclically in (i, j]. */
		if ((i <= j) ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		f->tab[i] = f->tab[j];
		f->tab[j] = (struct fdb_entry){ 0 };
		i = j;
	}
}

static uint32_t fdb_remove_if(struct fdb *f, bool (*pred)(const struct fdb *, const struct fdb_entry *,
							    uint64_t), uint64_t arg)
{
	uint32_t n = 0, i = 0, scanned = 0;

	/* A removal can shift a later entry into slot i, so re-examine i. */
	while (scanned <= f->mask) {
		struct fdb_entry *e = &f->tab[i];

		if (e->key && pred(f, e, arg)) {
			fdb_remove_at(f, i);
			n++;
			continue;
		}
		i = (i + 1) & f->mask;
		scanned++;
	}
	return n;
}

static bool fdb_pred_expired(const struct fdb *f, const struct fdb_entry *e, uint64_t now)
{
	return fdb_expired(f, e, now);
}

/* Entries in the last quarter of their life that the sync's user saw
 * since they were last learnt live on from then: frames forwarded in XDP
 * never reach fdb_learn(). Looked at only near the end, so an idle entry
 * costs a look-up per aging pass for a quarter of the aging time. */
static void fdb_refresh_seen(struct fdb *f, uint64_t now)
{
	uint64_t old = f->aging_ns - f->aging_ns / 4;

	for (uint32_t i = 0; i <= f->mask; i++) {
		struct fdb_entry *e = &f->tab[i];
		uint64_t seen;

		if (!e->key || e->is_static || now - e->last_seen_ns <= old)
			continue;
		seen = f->sync.seen(f->sync.ctx, e->key);
		if (seen > e->last_seen_ns && seen <= now) {
			e->last_seen_ns = seen;
			f->seen_refreshed++;
		}
	}
}

static bool fdb_pred_port(const struct fdb *f, const struct fdb_entry *e, uint64_t port)
{
	return !e->is_static && e->port == port;
}

uint32_t fdb_age(struct fdb *f, uint64_t now)
{
	if (f->sync.seen && f->aging_ns)
		fdb_refresh_seen(f, now);
	return fdb_remove_if(f, fdb_pred_expired, now);
}

uint32_t fdb_flush_port(struct fdb *f, uint16_t port)
{
	return fdb_remove_if(f, fdb_pred_port, port);
}

void fdb_set_sync(struct fdb *f, const struct fdb_sync *sync)
{
	f->sync = sync ? *sync : (struct fdb_sync){ 0 };
}

void fdb_sync_all(struct fdb *f)
{
	for (uint32_t i = 0; i <= f->mask; i++)
		if (f->tab[i].key)
			fdb_tell_set(f, &f->tab[i]);
}
