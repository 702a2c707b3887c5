/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The l2cc control messages (0x88B6), as one table of types: each with its
 * name, its decoder and encoder (daemon/wire.c), whether it is link-local
 * (to 01:80:C2:00:00:01, never forwarded: CREDIT) or unicast between hosts
 * (CNP, ACK), and a sample message. Both daemons decode through it, the
 * fuzzer walks it, and the Wireshark check dissects every type's sample
 * (tests/unit/dump_ctrl.c), so a new type cannot go undecoded somewhere.
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

struct ctrl_type {
	uint8_t type;           /* enum l2cc_ctrl_type */
	const char *name;       /* as the dissector shows it */
	bool link_local;        /* to wire_macctrl_da, consumed by the link partner */
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
 * Decode the payload after a 0x88B6 ethertype: the type (> 0) with *m
 * filled; -EPROTO for another wire version, -EOPNOTSUPP for a type not in
 * the table, -EINVAL for a malformed header or body.
 */
int ctrl_decode(const uint8_t *payload, size_t len, union ctrl_msg *m);

#endif
