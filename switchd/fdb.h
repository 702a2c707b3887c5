/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Forwarding database: (MAC, VLAN) -> port, with aging and static entries.
 * Open addressing with linear probing in a table allocated once at start, so
 * learning and lookup on the packet path never allocate. When the table is
 * full a new address is not learned (counted) and its frames are flooded.
 */
#ifndef L2CC_FDB_H
#define L2CC_FDB_H

#include <stdbool.h>
#include <stdint.h>

struct fdb_entry {
	uint64_t key;           /* MAC in the low 48 bits, VLAN id above; 0 = empty */
	uint64_t last_seen_ns;
	uint16_t port;
	bool is_static;
};

struct fdb {
	struct fdb_entry *tab;
	uint32_t mask;          /* table size - 1 (power of two) */
	uint32_t count;
	uint32_t max_entries;   /* learning stops here to keep probes short */
	uint64_t aging_ns;
	uint64_t learn_full;    /* addresses not learned: table full */
	uint64_t moves;         /* an address seen on a new port */
};

int fdb_create(struct fdb **out, uint32_t max_entries, uint64_t aging_ns);
void fdb_destroy(struct fdb *f);

/* Learn or refresh. 0 if new or refreshed, 1 if moved to another port,
 * -ENOSPC if the table is full, -EPERM if a static entry names another port. */
int fdb_learn(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port, uint64_t now);
/* Port for (mac, vid), or -ENOENT (absent or aged out). */
int fdb_lookup(const struct fdb *f, const uint8_t mac[6], uint16_t vid, uint64_t now);
int fdb_add_static(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port);
/* Remove entries older than the aging time; returns how many. */
uint32_t fdb_age(struct fdb *f, uint64_t now);
/* Remove the dynamic entries of one port. */
void fdb_flush_port(struct fdb *f, uint16_t port);

static inline void fdb_key_mac(uint64_t key, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++)
		mac[i] = key >> (40 - 8 * i);
}
static inline uint16_t fdb_key_vid(uint64_t key) { return (key >> 48) & 0xfff; }

#endif
