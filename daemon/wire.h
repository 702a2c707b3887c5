/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Wire formats: parsing of Ethernet/802.1Q headers and encoding/decoding of
 * 802.3x PAUSE, 802.1Qbb PFC and l2cc control messages, on raw frame bytes.
 * Decoders never read past `len` and return -EINVAL on malformed input; they
 * are fuzzed (tests/fuzz/). Layouts: bpf/l2cc_shared.h, docs/wire-formats.md.
 */
#ifndef L2CC_WIRE_H
#define L2CC_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "l2cc_shared.h"

/* Destination of PAUSE/PFC (802.3 Annex 31B), also used for link-local l2cc
 * control (credits): bridges never forward 01:80:C2:00:00:0x. */
extern const uint8_t wire_macctrl_da[6];

struct eth_info {
	const uint8_t *dst;
	const uint8_t *src;
	uint16_t ethertype;     /* after any 802.1Q/802.1ad tags */
	uint16_t hlen;          /* offset of the payload after the (last) ethertype */
	uint16_t vid;           /* outer VLAN id, 0 when untagged */
	uint8_t  prio;          /* outer 802.1Q PCP, 0 when untagged */
	uint8_t  ntags;         /* number of VLAN tags skipped (max 2) */
};

/* Parse the Ethernet header. -EINVAL if shorter than a header (or a tag is cut). */
int wire_parse_eth(const void *frame, size_t len, struct eth_info *ei);

static inline bool wire_is_multicast(const uint8_t *mac) { return mac[0] & 1; }
/* 01:80:C2:00:00:00..0F: IEEE link-local, never forwarded by a bridge. */
bool wire_is_link_local(const uint8_t *mac);

struct wire_macctrl {
	uint16_t opcode;        /* L2CC_MACCTRL_PAUSE or L2CC_MACCTRL_PFC */
	uint8_t  class_enable;  /* PFC: bit i = priority i valid. PAUSE: 0xff */
	uint16_t quanta[8];     /* PAUSE: all eight set to pause_time */
};

/* Decode a MAC control payload (bytes after the 0x8808 ethertype).
 * -EINVAL if truncated; -EOPNOTSUPP for an opcode other than PAUSE/PFC. */
int wire_parse_macctrl(const void *payload, size_t len, struct wire_macctrl *mc);

/* Build a complete PAUSE / PFC frame (60 bytes, padded) into buf.
 * Return the frame length or -ENOSPC if buflen is too small. */
int wire_build_pause(void *buf, size_t buflen, const uint8_t src[6], uint16_t quanta);
int wire_build_pfc(void *buf, size_t buflen, const uint8_t src[6],
		   uint8_t class_enable, const uint16_t quanta[8]);

/* Pause quanta are 512 bit times at the link rate. rate_bps 0 (unlimited)
 * is taken as 10 Gbit/s so a pause still has a finite, short duration. */
uint64_t wire_quanta_to_ns(uint16_t quanta, uint64_t rate_bps);

struct wire_credit {
	uint8_t  unit;          /* enum l2cc_credit_unit of limit[] */
	uint8_t  prio_mask;
	uint8_t  sent_unit;     /* unit of sent[], or L2CC_CREDIT_UNIT_NONE */
	uint64_t limit[8];
	uint64_t sent[8];
};

/* Build a CREDIT control frame (0x88B6 to wire_macctrl_da). Length or -ENOSPC. */
int wire_build_credit(void *buf, size_t buflen, const uint8_t src[6],
		      const struct wire_credit *c);

/* Decode a 0x88B6 payload's header. Returns the type (>0) and sets *body, *body_len;
 * -EINVAL if truncated, bad length, or type 0.
 * -EPROTO if the version is not L2CC_WIRE_VERSION (counted apart from garbage). */
int wire_parse_ctrl(const void *payload, size_t len, const uint8_t **body, size_t *body_len);
/* Decode a CREDIT body. -EINVAL if truncated, or unit or sent_unit is unknown. */
int wire_parse_credit(const uint8_t *body, size_t len, struct wire_credit *c);

#endif
