/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The l2cc control messages (0x88B6), as one table of types: each with its
 * name, its decoder and encoder (daemon/wire.c), whether it is link-local
 * (to 01:80:C2:00:00:01, never forwarded: CREDIT) or unicast between hosts
 * (CNP, ACK), and a sample message. Both daemons decode through it, the
 * fuzzer walks it, and the Wireshark check dissects every type's sample
 * (tests/unit/dump_ctrl.c), so a new type cannot go undecoded somewhere.
 * Each type also says who may send it, and both daemons check that from
 * here (switchd at its host ports, hostd on its uplink): a 16-bit flow id
 * is all a forger would otherwise have to guess.
 * A new type is a row here plus its wire.c functions and its dissector.
 * lldpd's protocol table ({type, name, send, decode}) is the shape.
 */
#ifndef L2CC_CTRL_MSG_H
#define L2CC_CTRL_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "wire.h"

/* A decoded message of any type. */
union ctrl_msg {
	struct wire_credit credit;
	struct wire_cnp cnp;
	struct wire_ack ack;
	struct wire_discover disc;      /* DISCOVER and DISCOVER_ECHO */
	struct wire_feedback fb;
};

/* Who may send a type, and so what a receiver checks of its addresses. */
enum ctrl_sender {
	/* The link partner, switch or host, to the link-local address: never
	 * forwarded (CREDIT). Unicast, it is sent the wrong way. */
	CTRL_BY_PARTNER = 0,
	/* A switch only: from a host port it is a forgery (as a CNM is, on
	 * its own EtherType). */
	CTRL_BY_SWITCH,
	/* A path's source host, to the destination host's own MAC (DISCOVER). */
	CTRL_BY_SOURCE,
	/* A path's destination host back to the flow's sender: to the
	 * sender's host MAC and from the flow's peer, the address its data
	 * went to (CNP, ACK, DISCOVER_ECHO, FEEDBACK). */
	CTRL_BY_PEER,
};

struct ctrl_type {
	uint8_t type;           /* enum l2cc_ctrl_type */
	const char *name;       /* as the dissector shows it */
	bool link_local;        /* to wire_macctrl_da, consumed by the link partner */
	uint8_t sender;         /* enum ctrl_sender: who may send it */
	/* Decode a body (after the 4-byte header): 0 or -EINVAL. */
	int (*decode)(const uint8_t *body, size_t len, union ctrl_msg *m);
	/* Build the whole frame from src to dst (dst ignored when link-local):
	 * its length, or -ENOSPC / -EINVAL. */
	int (*encode)(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		      const union ctrl_msg *m);
	const union ctrl_msg *sample;   /* a valid message, for tests and the dissector */
};

extern const struct ctrl_type ctrl_types[];
extern const size_t ctrl_ntypes;

/* The row of a type, or NULL. */
const struct ctrl_type *ctrl_type_of(int type);

/*
 * The table's rule on who may send t, as an edge switch port applies it:
 * may a message of type t come from a host (from_host) to this kind of
 * destination? A link-local type only to the link-local address (sent
 * unicast it is sent the wrong way), a switch's type never from a host.
 * Which host may send a host's type is for the receiving hostd to check,
 * by the path's addresses.
 */
bool ctrl_sender_ok(const struct ctrl_type *t, bool from_host, bool link_local_dst);

/*
 * Decode the payload after a 0x88B6 ethertype: the type (> 0) with *m
 * filled; -EPROTO for another wire version, -EOPNOTSUPP for a type not in
 * the table, -EINVAL for a malformed header or body.
 */
int ctrl_decode(const uint8_t *payload, size_t len, union ctrl_msg *m);

#endif
