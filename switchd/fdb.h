/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Forwarding database: (MAC, VLAN) -> port, with aging and static entries.
 * Open addressing with linear probing in a table allocated once at start, so
 * learning and lookup on the packet path never allocate. When the table is
 * full a new address is not learned (counted) and its frames are flooded.
 *
 * Per port (a port index below FDB_MAX_PORTS), two limits a host port gets
 * so that one host cannot fill the table or take others' addresses in a
 * storm: at most port_limit learned addresses, and at most move_limit
 * addresses moving to it per second. A source the limits refuse is not
 * learned, and the caller drops its frame (port security's "restrict").
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

#define FDB_MAX_PORTS 64

/*
 * Told of every change to the table, so that a copy of it elsewhere
 * (switchd's forwarding map in XDP, sw_fwd.c) follows it: set() when a key
 * is new, moved, or made static, del() when it goes (aged out, flushed,
 * removed). Optional seen(): when the copy's user last saw the key as a
 * source (0: never); aging counts that as seen, since frames the copy
 * forwards never reach fdb_learn(). Called outside any frame's path only
 * for learning events, never per frame.
 */
struct fdb_sync {
	void (*set)(void *ctx, uint64_t key, uint16_t port);
	void (*del)(void *ctx, uint64_t key);
	uint64_t (*seen)(void *ctx, uint64_t key);
	void *ctx;
};

struct fdb {
	struct fdb_entry *tab;
	uint32_t mask;          /* table size - 1 (power of two) */
	uint32_t count;
	uint32_t max_entries;   /* learning stops here to keep probes short */
	uint64_t aging_ns;
	uint64_t learn_full;    /* addresses not learned: table full */
	uint64_t moves;         /* an address seen on a new port */
	uint64_t limit_refused; /* new addresses refused: the port had port_limit */
	uint64_t move_refused;  /* moves refused: move_limit this second already */
	uint64_t static_refused; /* sources a static entry places on another port */
	uint32_t learned[FDB_MAX_PORTS];    /* dynamic entries per port */
	uint32_t port_limit[FDB_MAX_PORTS]; /* 0 = none */
	uint32_t move_limit[FDB_MAX_PORTS]; /* moves to the port per second; 0 = none */
	uint32_t move_n[FDB_MAX_PORTS];     /* moves in the second from move_start */
	uint64_t move_start[FDB_MAX_PORTS];
	struct fdb_sync sync;   /* .set NULL: none */
	uint64_t seen_refreshed; /* entries aging kept: the sync's user saw them */
};

int fdb_create(struct fdb **out, uint32_t max_entries, uint64_t aging_ns);
void fdb_destroy(struct fdb *f);

/* Learn or refresh. 0 if new or refreshed, 1 if moved to another port,
 * -ENOSPC if the table is full, -EPERM if a static entry names another port,
 * -EDQUOT if the port has its port_limit of addresses, -EBUSY if move_limit
 * addresses moved to it this second (the entry stays where it was). */
int fdb_learn(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port, uint64_t now);
/* Port for (mac, vid), or -ENOENT (absent or aged out). */
int fdb_lookup(const struct fdb *f, const uint8_t mac[6], uint16_t vid, uint64_t now);
int fdb_add_static(struct fdb *f, const uint8_t mac[6], uint16_t vid, uint16_t port);
/* Remove entries older than the aging time; returns how many. */
uint32_t fdb_age(struct fdb *f, uint64_t now);
/* Remove the dynamic entries of one port (its link went down); how many. */
uint32_t fdb_flush_port(struct fdb *f, uint16_t port);
/* Follow the table with sync (NULL: stop); the entries already there are
 * not told: fdb_sync_all() does that. */
void fdb_set_sync(struct fdb *f, const struct fdb_sync *sync);
/* sync.set() for every entry, the expired ones included (they are still
 * there until the next fdb_age()): after what the copy depends on changed. */
void fdb_sync_all(struct fdb *f);

static inline void fdb_key_mac(uint64_t key, uint8_t mac[6])
{
	for (int i = 0; i < 6; i++)
		mac[i] = key >> (40 - 8 * i);
}
static inline uint16_t fdb_key_vid(uint64_t key) { return (key >> 48) & 0xfff; }

#endif
