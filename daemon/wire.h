/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Wire formats: parsing of Ethernet/802.1Q headers and encoding/decoding of
 * 802.3x PAUSE, 802.1Qbb PFC, the l2cc data tag (0x88B5) and l2cc control
 * messages (0x88B6: CREDIT, CNP, ACK), IP ECN, and the 802.1Qau CNM
 * (0x22E7), on raw frame bytes.
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
/* Did the XDP program apply the limits of this CREDIT (payload after the
 * ethertype, as wire_parse_ctrl takes it)? L2CC_CREDIT_XDP_APPLIED. */
bool wire_credit_xdp_applied(const uint8_t *payload, size_t len);

/* ---- l2cc data tag (0x88B5) -------------------------------------------- */

/*
 * The tag goes after the MAC addresses and any (at most two) VLAN tags:
 *   DA SA [TPID TCI [TPID TCI]] 88B5 version flags flow seq cpid inner_type payload
 * The frame's own ethertype is not repeated: its two bytes stay where they
 * are and become inner_type, so a tagged frame is L2CC_TAG_LEN = 18 bytes
 * longer than the untagged one.
 */

/* A decoded tag, in host byte order. */
struct wire_tag {
	uint8_t  flags;         /* L2CC_TAG_FECN, L2CC_TAG_RLT; unknown bits kept */
	uint16_t flow;          /* the sending hostd's flow id */
	uint32_t seq;           /* per-flow sequence number */
	uint8_t  cpid[8];       /* congestion point id, meaningful with L2CC_TAG_RLT */
	uint16_t inner_type;    /* ethertype of the payload (the untagged frame's) */
};

/*
 * Tag the frame at *frame (*len bytes) in place. The frame must have at least
 * `headroom` writable bytes before it (an AF_XDP UMEM frame's headroom): the
 * MAC addresses and VLAN tags move back by L2CC_TAG_LEN, so *frame moves
 * back and *len grows by that much; the payload is not copied. The tag gets
 * version L2CC_WIRE_VERSION, t's flags, flow, seq and cpid, and the frame's
 * ethertype as inner_type (t->inner_type is ignored). The caller checks that
 * the result still fits the fabric's MTU.
 * -EINVAL: not an Ethernet frame, more than two VLAN tags, or an 802.3 length
 *          field (< 0x0600) instead of an ethertype;
 * -EEXIST: already tagged; -ENOSPC: headroom < L2CC_TAG_LEN.
 * On error nothing is written.
 */
int wire_tag_insert(uint8_t **frame, uint32_t *len, uint32_t headroom,
		    const struct wire_tag *t);

/*
 * Remove the tag: the inverse of wire_tag_insert(). The header moves forward
 * by L2CC_TAG_LEN, so *frame advances and *len shrinks; the tag is decoded
 * into *t (may be NULL). insert(strip(x)) gives x back byte for byte.
 * -ENOENT: no tag (after up to two VLAN tags), or not an Ethernet frame;
 * -EINVAL: tag cut short, or its inner_type is not an ethertype we would have
 *          written (< 0x0600, a VLAN TPID, or 0x88B5 again);
 * -EPROTO: version other than L2CC_WIRE_VERSION (nothing else is trusted).
 * On error nothing is written.
 */
int wire_tag_strip(uint8_t **frame, uint32_t *len, struct wire_tag *t);

/*
 * Locate a valid tag in place. Returns the offset of the struct l2cc_data_tag
 * (the byte after the 0x88B5 ethertype: 14, 18 or 22), the same errors as
 * wire_tag_strip() otherwise. An offset rather than a struct pointer: frames
 * have no alignment, read the fields with offsetof() and byte loads.
 */
int wire_tag_find(const uint8_t *frame, uint32_t len);

/* Decode the tag in place without changing the frame: offset as
 * wire_tag_find(), and *t filled. */
int wire_tag_read(const uint8_t *frame, uint32_t len, struct wire_tag *t);

/*
 * Set FECN in the frame's tag, in place (what a congested switch does).
 * Idempotent, and never clears anything. Returns 0, -ENOENT when the frame
 * carries no tag (it cannot be marked), -EINVAL for a malformed tag, -EPROTO
 * for a version we do not know (its layout may differ, so it is not touched).
 */
int wire_tag_set_fecn(uint8_t *frame, uint32_t len);

/* ---- IP ECN (RFC 3168) ---------------------------------------------------- */

/*
 * Set CE (congestion experienced) in the IPv4 or IPv6 header of an
 * ECN-capable packet, in place: the frame's IP header after any VLAN tags
 * and l2cc data tag, its ECN field ECT(0) or ECT(1) becomes CE, and an IPv4
 * header checksum is updated incrementally (RFC 1624), so it stays valid.
 * Returns 0 when CE was set, -EALREADY when it was set already (nothing
 * written), -EOPNOTSUPP when the packet is not ECN-capable (Not-ECT: the
 * sender cannot hear a mark), -ENOENT when the frame carries no IPv4/IPv6
 * header (cut short, another ethertype, an unknown tag version).
 */
int wire_ip_set_ce(uint8_t *frame, uint32_t len);

/*
 * Is the frame (untagged by l2cc, after at most two VLAN tags) a pure TCP
 * ACK: IPv4 (first fragment) or IPv6 without extension headers, TCP with
 * ACK set, SYN, FIN and RST clear, and no payload? What hostd sends ahead
 * of the data of its priority (`ack_first`). Never reads past len.
 */
bool wire_tcp_pure_ack(const uint8_t *frame, uint32_t len);

/* ---- CNP and ACK (0x88B6 types 2 and 3) --------------------------------- */

struct wire_cnp {
	uint16_t flow;          /* flow id from the marked frames' tag */
	uint32_t seq;           /* seq of the last marked frame it stands for */
	uint32_t marked;        /* marked frames this CNP stands for, >= 1 */
};

struct wire_ack {
	uint16_t flow;
	uint8_t  flags;         /* L2CC_ACK_ECE; unknown bits kept */
	uint32_t cum_seq;       /* every frame up to and including this one arrived */
	uint32_t frames;        /* frames this ACK covers */
};

/*
 * Build a CNP / ACK frame into buf: unicast from src (our port's MAC) to dst
 * (the data sender's MAC, the SA of its tagged frames), untagged, padded to
 * 60 bytes. Return the frame length (60), -ENOSPC if buflen is too small,
 * -EINVAL if dst is multicast, a CNP's marked is 0, or an ACK has ECE set
 * while covering no frames.
 */
int wire_build_cnp(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const struct wire_cnp *c);
int wire_build_ack(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const struct wire_ack *a);

/* Decode a CNP / ACK body (from wire_parse_ctrl()). A longer body is accepted
 * (fields may be appended); -EINVAL if shorter than the struct, or for the
 * contradictions the builders refuse (marked 0; ECE with frames 0). */
int wire_parse_cnp(const uint8_t *body, size_t len, struct wire_cnp *c);
int wire_parse_ack(const uint8_t *body, size_t len, struct wire_ack *a);

/* ---- L2CI: DISCOVER, DISCOVER_ECHO, FEEDBACK (0x88B6 types 4..6) ------- */

struct wire_discover {
	uint16_t flow;
	uint8_t  hops;
	uint8_t  flags;
	uint32_t seq;
	uint64_t path_bps;      /* > 0 */
	uint64_t t_tx;
};

struct wire_feedback {
	uint16_t flow;
	uint8_t  hop;
	uint8_t  max_hop;       /* <= hop */
	uint32_t seq;
	uint16_t level;         /* 0.01 % units */
	uint16_t speed_mbps;    /* of the setter's port, Mbit/s; 0 = not given */
	uint8_t  setter[6];
};

/* A link rate as FEEDBACK's speed: Mbit/s rounded, at least 1 for a rate
 * above 0, saturating at 65535; 0 for 0 (no rate of its own). */
static inline uint16_t wire_speed_mbps(uint64_t bps)
{
	uint64_t m = (bps + 500000) / 1000000;

	return !bps ? 0 : !m ? 1 : m > UINT16_MAX ? UINT16_MAX : (uint16_t)m;
}

/*
 * Build a DISCOVER (type L2CC_CTRL_DISCOVER) or DISCOVER_ECHO, or a
 * FEEDBACK frame into buf: unicast src -> dst, priority-tagged at
 * L2CC_L2CI_PCP, padded to 60 bytes. The length, -ENOSPC if buflen is too
 * small, -EINVAL for a multicast dst, another type, path_bps 0, or
 * max_hop > hop.
 */
int wire_build_discover(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
			int type, const struct wire_discover *d);
int wire_build_feedback(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
			const struct wire_feedback *f);
/* Decode the bodies: 0, or -EINVAL (short, or what the builders refuse). */
int wire_parse_discover(const uint8_t *body, size_t len, struct wire_discover *d);
int wire_parse_feedback(const uint8_t *body, size_t len, struct wire_feedback *f);

/*
 * What a switch does to them in transit, on the body in place:
 *  - discover: one more hop (saturating), path_bps lowered to egress_bps
 *    when that is lower (0 = the port has no rate of its own: unchanged);
 *  - feedback: one more hop (saturating); when level is above the frame's,
 *    it becomes the frame's with max_hop = this hop, setter = mac and speed
 *    = wire_speed_mbps(port_bps). Returns 1 when it replaced the level, 0
 *    when not.
 * -EINVAL on a short or malformed body (left untouched).
 */
int wire_discover_transit(uint8_t *body, size_t len, uint64_t egress_bps);
int wire_feedback_transit(uint8_t *body, size_t len, uint16_t level, const uint8_t mac[6],
			  uint64_t port_bps);

/* What an ACK tells a rate law (Santos/Turner reliable mode): of the frames it
 * covers, how many count as marked (at most one, even if several carried FECN)
 * and how many as unmarked. */
static inline void wire_ack_count(const struct wire_ack *a, uint32_t *unmarked,
				  uint32_t *marked)
{
	*marked = (a->flags & L2CC_ACK_ECE) && a->frames ? 1 : 0;
	*unmarked = a->frames - *marked;
}

/* ---- 802.1Qau CNM (EtherType 0x22E7) ------------------------------------ */

struct wire_cnm {
	uint8_t  qntz_fb;       /* 0..63: how hard to cut (QCN); 0 with BCN */
	uint8_t  cpid[8];
	int16_t  qoffset;       /* Q - Qeq, units of L2CC_CNM_QUNIT octets (saturated) */
	int16_t  qdelta;        /* Q - Qold, same unit */
	uint8_t  encap_prio;    /* 0..7 */
	uint8_t  encap_da[6];
	uint16_t encap_len;     /* the sampled frame's MSDU length */
	uint8_t  msdu_len;      /* bytes of it held in msdu: min(encap_len, 64) */
	uint8_t  msdu[L2CC_CNM_MSDU_MAX];
};

/*
 * Fill a CNM's encapsulated fields (priority, DA, MSDU length and first
 * bytes) from the sampled frame. -EINVAL if it is not an Ethernet frame.
 */
int wire_cnm_encap(struct wire_cnm *c, const uint8_t *frame, uint32_t len);

/*
 * Build a CNM from src (the CP's port MAC) to dst (the sampled frame's SA),
 * behind an 802.1Q tag with this TCI when tci >= 0 (802.1Qau copies the
 * sampled frame's VLAN), padded to 60 bytes. The frame length, -ENOSPC, or
 * -EINVAL (dst multicast, QntzFb over 63, priority over 7, msdu_len not
 * min(encap_len, 64)).
 */
int wire_build_cnm(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   int tci, const struct wire_cnm *c);

/*
 * Decode the payload after the 0x22E7 EtherType. Reserved bits are ignored;
 * bytes after the encapsulated MSDU (padding) too. -EPROTO for a version
 * other than 0 (decided by the first two bytes alone), -EINVAL if shorter
 * than the header plus min(encap_len, 64); *c is untouched on an error.
 */
int wire_parse_cnm(const uint8_t *payload, size_t len, struct wire_cnm *c);

/*
 * The l2cc data tag of the sampled frame, from the CNM's encapsulated MSDU:
 * 0, or wire_tag_read()'s errors (-ENOENT: the sampled frame was untagged).
 */
int wire_cnm_tag(const struct wire_cnm *c, struct wire_tag *t);

#endif
