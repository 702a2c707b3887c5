// SPDX-License-Identifier: BSD-2-Clause
/*
 * Wire formats (docs/wire-formats.md). Everything here runs on bytes that came
 * off the wire, so every read is bounded by the length the caller gave us and
 * multi-byte fields are loaded byte by byte: frames in a UMEM have no
 * alignment guarantee, and casting to a packed struct pointer hides that from
 * the reader. The structs in l2cc_shared.h define the layout; we use offsetof
 * and sizeof on them so the two cannot drift.
 */
#include "wire.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

const uint8_t wire_macctrl_da[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };

static inline uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, v);
}

static inline bool is_vlan_tpid(uint16_t et)
{
	return et == L2CC_ETH_P_8021Q || et == L2CC_ETH_P_8021AD;
}

int wire_parse_eth(const void *frame, size_t len, struct eth_info *ei)
{
	const uint8_t *p = frame;
	size_t off = 2 * L2CC_ETH_ALEN;  /* the (outer) ethertype / TPID */
	uint16_t et;

	if (!p || len < L2CC_ETH_HLEN)
		return -EINVAL;

	memset(ei, 0, sizeof(*ei));
	ei->dst = p;
	ei->src = p + L2CC_ETH_ALEN;
	et = get_be16(p + off);

	/*
	 * At most two tags (802.1ad S-tag + 802.1Q C-tag, or the older
	 * 0x8100-in-0x8100 stacking). A third tag is left in place: the caller
	 * sees ethertype 0x8100/0x88A8 and treats the frame as unknown rather
	 * than us walking an attacker-chosen number of tags.
	 */
	while (ei->ntags < 2 && is_vlan_tpid(et)) {
		/* TPID(2) TCI(2) then the next ethertype(2) must all be there. */
		if (len < off + L2CC_VLAN_HLEN + 2)
			return -EINVAL;
		if (ei->ntags == 0) {
			uint16_t tci = get_be16(p + off + 2);

			/* Priority is the outer tag's: that is the one the
			 * link (and a PFC peer) classifies on. */
			ei->prio = tci >> 13;
			ei->vid = tci & 0x0fff;
		}
		ei->ntags++;
		off += L2CC_VLAN_HLEN;
		et = get_be16(p + off);
	}

	ei->ethertype = et;
	ei->hlen = off + 2;
	return 0;
}

bool wire_is_link_local(const uint8_t *mac)
{
	return mac[0] == 0x01 && mac[1] == 0x80 && mac[2] == 0xc2 &&
	       mac[3] == 0x00 && mac[4] == 0x00 && (mac[5] & 0xf0) == 0x00;
}

/* PAUSE body: opcode(2) pause_time(2). */
#define MACCTRL_PAUSE_LEN 4
/* PFC body: opcode(2) class-enable vector(2) eight timers(2 each). */
#define MACCTRL_PFC_LEN   ((int)sizeof(struct l2cc_macctrl))

int wire_parse_macctrl(const void *payload, size_t len, struct wire_macctrl *mc)
{
	const uint8_t *p = payload;
	uint16_t opcode;
	int i;

	if (!p || len < 2)
		return -EINVAL;
	opcode = get_be16(p + offsetof(struct l2cc_macctrl, opcode));

	switch (opcode) {
	case L2CC_MACCTRL_PAUSE: {
		uint16_t t;

		if (len < MACCTRL_PAUSE_LEN)
			return -EINVAL;
		/* PAUSE's pause_time sits where PFC has its class-enable vector. */
		t = get_be16(p + offsetof(struct l2cc_macctrl, class_enable));
		mc->opcode = opcode;
		mc->class_enable = 0xff;  /* PAUSE stops every priority */
		for (i = 0; i < L2CC_NPRIO; i++)
			mc->quanta[i] = t;
		return 0;
	}
	case L2CC_MACCTRL_PFC:
		if (len < (size_t)MACCTRL_PFC_LEN)
			return -EINVAL;
		mc->opcode = opcode;
		/* Bits 8..15 are reserved by 802.1Qbb: only the low byte counts. */
		mc->class_enable = p[offsetof(struct l2cc_macctrl, class_enable) + 1];
		/* Timers of disabled classes are kept as sent; 802.1Qbb says the
		 * receiver ignores them, and callers must check class_enable. */
		for (i = 0; i < L2CC_NPRIO; i++)
			mc->quanta[i] = get_be16(p + offsetof(struct l2cc_macctrl, quanta) + 2 * i);
		return 0;
	default:
		/* Other MAC control opcodes exist (EPON's GATE/REPORT, ...) but
		 * are not ours; let the caller count them apart from garbage. */
		return -EOPNOTSUPP;
	}
}

/* Write DA, SA and ethertype; zero the rest up to flen (padding included). */
static uint8_t *put_eth_to(void *buf, size_t flen, const uint8_t dst[6],
			   const uint8_t src[6], uint16_t et)
{
	uint8_t *p = buf;

	memset(p, 0, flen);
	memcpy(p, dst, L2CC_ETH_ALEN);
	memcpy(p + L2CC_ETH_ALEN, src, L2CC_ETH_ALEN);
	put_be16(p + 2 * L2CC_ETH_ALEN, et);
	return p + L2CC_ETH_HLEN;
}

/* Link-local frames: PAUSE, PFC and CREDIT go to the MAC control address. */
static uint8_t *put_eth(void *buf, size_t flen, const uint8_t src[6], uint16_t et)
{
	return put_eth_to(buf, flen, wire_macctrl_da, src, et);
}

int wire_build_pause(void *buf, size_t buflen, const uint8_t src[6], uint16_t quanta)
{
	uint8_t *b;

	if (buflen < L2CC_ETH_MIN_FRAME)
		return -ENOSPC;
	b = put_eth(buf, L2CC_ETH_MIN_FRAME, src, L2CC_ETH_P_MACCTRL);
	put_be16(b + offsetof(struct l2cc_macctrl, opcode), L2CC_MACCTRL_PAUSE);
	put_be16(b + offsetof(struct l2cc_macctrl, class_enable), quanta);
	return L2CC_ETH_MIN_FRAME;
}

int wire_build_pfc(void *buf, size_t buflen, const uint8_t src[6],
		   uint8_t class_enable, const uint16_t quanta[8])
{
	uint8_t *b;
	int i;

	/* 14 + 20 = 34 bytes of content, so the minimum frame always fits it. */
	if (buflen < L2CC_ETH_MIN_FRAME)
		return -ENOSPC;
	b = put_eth(buf, L2CC_ETH_MIN_FRAME, src, L2CC_ETH_P_MACCTRL);
	put_be16(b + offsetof(struct l2cc_macctrl, opcode), L2CC_MACCTRL_PFC);
	put_be16(b + offsetof(struct l2cc_macctrl, class_enable), class_enable);
	for (i = 0; i < L2CC_NPRIO; i++)
		put_be16(b + offsetof(struct l2cc_macctrl, quanta) + 2 * i, quanta[i]);
	return L2CC_ETH_MIN_FRAME;
}

uint64_t wire_quanta_to_ns(uint16_t quanta, uint64_t rate_bps)
{
	/* At most 65535 * 512 * 1e9 ~= 3.4e16: no overflow in 64 bits. */
	uint64_t bit_ns = (uint64_t)quanta * 512 * 1000000000ull;

	if (!rate_bps)
		rate_bps = 10000000000ull;
	/* Round up: honouring a pause a fraction of a ns too long is harmless,
	 * too short could let a frame through the peer just asked us to hold. */
	return bit_ns / rate_bps + (bit_ns % rate_bps != 0);
}

#define CTRL_HLEN   ((size_t)sizeof(struct l2cc_ctrl_hdr))
#define CREDIT_LEN  ((size_t)sizeof(struct l2cc_credit))

int wire_build_credit(void *buf, size_t buflen, const uint8_t src[6],
		      const struct wire_credit *c)
{
	size_t flen = L2CC_ETH_HLEN + CTRL_HLEN + CREDIT_LEN;
	uint8_t *h, *b;
	int i;

	/* 150 bytes today; the padding rule is kept should the body shrink. */
	if (flen < L2CC_ETH_MIN_FRAME)
		flen = L2CC_ETH_MIN_FRAME;
	if (buflen < flen)
		return -ENOSPC;
	h = put_eth(buf, flen, src, L2CC_ETH_P_CTRL);
	h[offsetof(struct l2cc_ctrl_hdr, version)] = L2CC_WIRE_VERSION;
	h[offsetof(struct l2cc_ctrl_hdr, type)] = L2CC_CTRL_CREDIT;
	put_be16(h + offsetof(struct l2cc_ctrl_hdr, length), CREDIT_LEN);

	b = h + CTRL_HLEN;
	b[offsetof(struct l2cc_credit, unit)] = c->unit;
	b[offsetof(struct l2cc_credit, prio_mask)] = c->prio_mask;
	b[offsetof(struct l2cc_credit, sent_unit)] = c->sent_unit;
	/* reserved stays zero (put_eth cleared the frame) */
	for (i = 0; i < L2CC_NPRIO; i++) {
		put_be64(b + offsetof(struct l2cc_credit, limit) + 8 * i, c->limit[i]);
		put_be64(b + offsetof(struct l2cc_credit, sent) + 8 * i, c->sent[i]);
	}
	return (int)flen;
}

int wire_parse_ctrl(const void *payload, size_t len, const uint8_t **body, size_t *body_len)
{
	const uint8_t *p = payload;
	size_t blen;
	uint8_t type;

	if (!p || len < CTRL_HLEN)
		return -EINVAL;
	/* A different version may lay out everything after it differently, so
	 * nothing else is trusted; -EPROTO lets callers count a peer running
	 * another release apart from corrupt frames. */
	if (p[offsetof(struct l2cc_ctrl_hdr, version)] != L2CC_WIRE_VERSION)
		return -EPROTO;
	type = p[offsetof(struct l2cc_ctrl_hdr, type)];
	if (type == 0)
		return -EINVAL;
	blen = get_be16(p + offsetof(struct l2cc_ctrl_hdr, length));
	/* Bytes past `length` are Ethernet padding and are not part of the body. */
	if (blen > len - CTRL_HLEN)
		return -EINVAL;
	*body = p + CTRL_HLEN;
	*body_len = blen;
	return type;
}

int wire_parse_credit(const uint8_t *body, size_t len, struct wire_credit *c)
{
	uint8_t unit, sent_unit;
	int i;

	/* Longer bodies are accepted so fields can be appended without a version bump. */
	if (!body || len < CREDIT_LEN)
		return -EINVAL;
	unit = body[offsetof(struct l2cc_credit, unit)];
	if (unit != L2CC_CREDIT_BYTES && unit != L2CC_CREDIT_FRAMES)
		return -EINVAL;
	/* sent[] is counted in the unit of the receiver's limits, or is absent. */
	sent_unit = body[offsetof(struct l2cc_credit, sent_unit)];
	if (sent_unit != L2CC_CREDIT_BYTES && sent_unit != L2CC_CREDIT_FRAMES &&
	    sent_unit != L2CC_CREDIT_UNIT_NONE)
		return -EINVAL;
	c->unit = unit;
	c->prio_mask = body[offsetof(struct l2cc_credit, prio_mask)];
	c->sent_unit = sent_unit;
	/* reserved is ignored on receipt */
	for (i = 0; i < L2CC_NPRIO; i++) {
		c->limit[i] = get_be64(body + offsetof(struct l2cc_credit, limit) + 8 * i);
		c->sent[i] = get_be64(body + offsetof(struct l2cc_credit, sent) + 8 * i);
	}
	return 0;
}

bool wire_credit_xdp_applied(const uint8_t *payload, size_t len)
{
	size_t at = CTRL_HLEN + offsetof(struct l2cc_credit, reserved);

	return payload && len > at && payload[at] == L2CC_CREDIT_XDP_APPLIED;
}

/* ---- data tag (0x88B5) ------------------------------------------------- */

#define TAG_HLEN  ((size_t)sizeof(struct l2cc_data_tag))

/* Could this be the payload's ethertype in a tag we wrote? Not an 802.3
 * length, not another VLAN tag (the tag goes after all of them) and not a
 * second tag: otherwise insert(strip(x)) would not give x back. */
static bool tag_inner_ok(uint16_t et)
{
	return et >= 0x0600 && !is_vlan_tpid(et) && et != L2CC_ETH_P_DATA_TAG;
}

int wire_tag_find(const uint8_t *frame, uint32_t len)
{
	struct eth_info ei;
	size_t off;

	/* Not even an Ethernet header: certainly no tag in it. */
	if (!frame || wire_parse_eth(frame, len, &ei) != 0)
		return -ENOENT;
	if (ei.ethertype != L2CC_ETH_P_DATA_TAG)
		return -ENOENT;
	off = ei.hlen;
	/* The version alone decides whether the rest can be read at all. */
	if (len < off + 1)
		return -EINVAL;
	if (frame[off + offsetof(struct l2cc_data_tag, version)] != L2CC_WIRE_VERSION)
		return -EPROTO;
	if (len < off + TAG_HLEN)
		return -EINVAL;
	if (!tag_inner_ok(get_be16(frame + off + offsetof(struct l2cc_data_tag, inner_type))))
		return -EINVAL;
	return (int)off;
}

int wire_tag_read(const uint8_t *frame, uint32_t len, struct wire_tag *t)
{
	const uint8_t *p;
	int off;

	off = wire_tag_find(frame, len);
	if (off < 0)
		return off;
	p = frame + off;
	t->flags = p[offsetof(struct l2cc_data_tag, flags)];
	t->flow = get_be16(p + offsetof(struct l2cc_data_tag, flow));
	t->seq = get_be32(p + offsetof(struct l2cc_data_tag, seq));
	memcpy(t->cpid, p + offsetof(struct l2cc_data_tag, cpid), sizeof(t->cpid));
	t->inner_type = get_be16(p + offsetof(struct l2cc_data_tag, inner_type));
	return off;
}

int wire_tag_set_fecn(uint8_t *frame, uint32_t len)
{
	int off = wire_tag_find(frame, len);

	if (off < 0)
		return off;
	/* OR, never assign: a mark set upstream must survive every hop. */
	frame[off + offsetof(struct l2cc_data_tag, flags)] |= L2CC_TAG_FECN;
	return 0;
}

int wire_tag_insert(uint8_t **frame, uint32_t *len, uint32_t headroom,
		    const struct wire_tag *t)
{
	uint8_t *old, *p, *tag;
	struct eth_info ei;
	size_t macs;            /* DA, SA and VLAN tags: the bytes that move */

	if (!frame || !len || !t)
		return -EINVAL;
	old = *frame;
	if (!old || wire_parse_eth(old, *len, &ei) != 0)
		return -EINVAL;
	if (ei.ethertype == L2CC_ETH_P_DATA_TAG)
		return -EEXIST;
	/* A third VLAN tag (wire_parse_eth stops after two) or an 802.3
	 * length: nothing we could restore exactly on the far side. */
	if (!tag_inner_ok(ei.ethertype))
		return -EINVAL;
	if (headroom < (uint32_t)L2CC_TAG_LEN)
		return -ENOSPC;
	if (*len > UINT32_MAX - L2CC_TAG_LEN)
		return -EINVAL;

	/*
	 * Before:        DA SA [tags] ET payload
	 * After:  DA SA [tags] 88B5 version flags flow seq cpid ET payload
	 * The ethertype stays where it is and becomes inner_type, so only the
	 * addresses and VLAN tags move, by the tag's 18 bytes.
	 */
	macs = ei.hlen - 2;
	p = old - L2CC_TAG_LEN;
	memmove(p, old, macs);
	put_be16(p + macs, L2CC_ETH_P_DATA_TAG);
	tag = p + macs + 2;
	tag[offsetof(struct l2cc_data_tag, version)] = L2CC_WIRE_VERSION;
	tag[offsetof(struct l2cc_data_tag, flags)] = t->flags;
	put_be16(tag + offsetof(struct l2cc_data_tag, flow), t->flow);
	put_be32(tag + offsetof(struct l2cc_data_tag, seq), t->seq);
	memcpy(tag + offsetof(struct l2cc_data_tag, cpid), t->cpid, sizeof(t->cpid));
	/* inner_type: already there, it is the old ethertype (ei.ethertype) */

	*frame = p;
	*len += L2CC_TAG_LEN;
	return 0;
}

int wire_tag_strip(uint8_t **frame, uint32_t *len, struct wire_tag *t)
{
	struct wire_tag tmp;
	uint8_t *old;
	size_t macs;
	int off;

	if (!frame || !len)
		return -EINVAL;
	old = *frame;
	off = wire_tag_read(old, *len, t ? t : &tmp);
	if (off < 0)
		return off;
	/* off is the byte after 0x88B5: the addresses and tags end 2 before. */
	macs = (size_t)off - 2;
	memmove(old + L2CC_TAG_LEN, old, macs);
	*frame = old + L2CC_TAG_LEN;
	*len -= L2CC_TAG_LEN;
	return 0;
}

/* ---- CNP and ACK (0x88B6 types 2 and 3) ---------------------------------- */

#define CNP_LEN  ((size_t)sizeof(struct l2cc_cnp))
#define ACK_LEN  ((size_t)sizeof(struct l2cc_ack))

/* Unicast control frame with an l2cc_ctrl_hdr; returns the body, or NULL if
 * buf cannot hold the (padded) frame. *flen gets the frame length. */
static uint8_t *put_ctrl_unicast(void *buf, size_t buflen, const uint8_t dst[6],
				 const uint8_t src[6], uint8_t type, size_t blen,
				 size_t *flen)
{
	size_t n = L2CC_ETH_HLEN + CTRL_HLEN + blen;
	uint8_t *h;

	if (n < L2CC_ETH_MIN_FRAME)
		n = L2CC_ETH_MIN_FRAME;
	if (buflen < n)
		return NULL;
	h = put_eth_to(buf, n, dst, src, L2CC_ETH_P_CTRL);
	h[offsetof(struct l2cc_ctrl_hdr, version)] = L2CC_WIRE_VERSION;
	h[offsetof(struct l2cc_ctrl_hdr, type)] = type;
	put_be16(h + offsetof(struct l2cc_ctrl_hdr, length), blen);
	*flen = n;
	return h + CTRL_HLEN;
}

int wire_build_cnp(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const struct wire_cnp *c)
{
	uint8_t *b;
	size_t n;

	/* A CNP answers a data sender, never a group; and stands for >= 1 mark. */
	if (wire_is_multicast(dst) || c->marked == 0)
		return -EINVAL;
	b = put_ctrl_unicast(buf, buflen, dst, src, L2CC_CTRL_CNP, CNP_LEN, &n);
	if (!b)
		return -ENOSPC;
	put_be16(b + offsetof(struct l2cc_cnp, flow), c->flow);
	/* reserved stays zero */
	put_be32(b + offsetof(struct l2cc_cnp, seq), c->seq);
	put_be32(b + offsetof(struct l2cc_cnp, marked), c->marked);
	return (int)n;
}

int wire_parse_cnp(const uint8_t *body, size_t len, struct wire_cnp *c)
{
	uint32_t marked;

	if (!body || len < CNP_LEN)
		return -EINVAL;
	marked = get_be32(body + offsetof(struct l2cc_cnp, marked));
	if (marked == 0)
		return -EINVAL;
	c->flow = get_be16(body + offsetof(struct l2cc_cnp, flow));
	/* reserved is ignored on receipt */
	c->seq = get_be32(body + offsetof(struct l2cc_cnp, seq));
	c->marked = marked;
	return 0;
}

int wire_build_ack(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const struct wire_ack *a)
{
	uint8_t *b;
	size_t n;

	if (wire_is_multicast(dst) || ((a->flags & L2CC_ACK_ECE) && a->frames == 0))
		return -EINVAL;
	b = put_ctrl_unicast(buf, buflen, dst, src, L2CC_CTRL_ACK, ACK_LEN, &n);
	if (!b)
		return -ENOSPC;
	put_be16(b + offsetof(struct l2cc_ack, flow), a->flow);
	b[offsetof(struct l2cc_ack, flags)] = a->flags;
	/* reserved stays zero */
	put_be32(b + offsetof(struct l2cc_ack, cum_seq), a->cum_seq);
	put_be32(b + offsetof(struct l2cc_ack, frames), a->frames);
	return (int)n;
}

int wire_parse_ack(const uint8_t *body, size_t len, struct wire_ack *a)
{
	uint32_t frames;
	uint8_t flags;

	if (!body || len < ACK_LEN)
		return -EINVAL;
	flags = body[offsetof(struct l2cc_ack, flags)];
	frames = get_be32(body + offsetof(struct l2cc_ack, frames));
	/* An echo of a mark on no frame at all cannot be honest. */
	if ((flags & L2CC_ACK_ECE) && frames == 0)
		return -EINVAL;
	a->flow = get_be16(body + offsetof(struct l2cc_ack, flow));
	a->flags = flags;
	a->cum_seq = get_be32(body + offsetof(struct l2cc_ack, cum_seq));
	a->frames = frames;
	return 0;
}

/* ---- L2CI ------------------------------------------------------------------ */

#define DISC_LEN ((size_t)sizeof(struct l2cc_discover))
#define FB_LEN   ((size_t)sizeof(struct l2cc_feedback))

/* Unicast control frame priority-tagged at L2CI's PCP (VID 0): its body. */
static uint8_t *put_ctrl_l2ci(void *buf, size_t buflen, const uint8_t dst[6],
			      const uint8_t src[6], uint8_t type, size_t blen, size_t *flen)
{
	size_t n = L2CC_ETH_HLEN + L2CC_VLAN_HLEN + CTRL_HLEN + blen;
	uint8_t *h;

	if (n < L2CC_ETH_MIN_FRAME)
		n = L2CC_ETH_MIN_FRAME;
	if (buflen < n)
		return NULL;
	h = put_eth_to(buf, n, dst, src, L2CC_ETH_P_8021Q);
	put_be16(h, (uint16_t)(L2CC_L2CI_PCP << 13));
	put_be16(h + 2, L2CC_ETH_P_CTRL);
	h += L2CC_VLAN_HLEN;
	h[offsetof(struct l2cc_ctrl_hdr, version)] = L2CC_WIRE_VERSION;
	h[offsetof(struct l2cc_ctrl_hdr, type)] = type;
	put_be16(h + offsetof(struct l2cc_ctrl_hdr, length), blen);
	*flen = n;
	return h + CTRL_HLEN;
}

int wire_build_discover(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
			int type, const struct wire_discover *d)
{
	uint8_t *b;
	size_t n;

	if (wire_is_multicast(dst) || d->path_bps == 0 ||
	    (type != L2CC_CTRL_DISCOVER && type != L2CC_CTRL_DISCOVER_ECHO))
		return -EINVAL;
	b = put_ctrl_l2ci(buf, buflen, dst, src, (uint8_t)type, DISC_LEN, &n);
	if (!b)
		return -ENOSPC;
	put_be16(b + offsetof(struct l2cc_discover, flow), d->flow);
	b[offsetof(struct l2cc_discover, hops)] = d->hops;
	b[offsetof(struct l2cc_discover, flags)] = d->flags;
	put_be32(b + offsetof(struct l2cc_discover, seq), d->seq);
	put_be64(b + offsetof(struct l2cc_discover, path_bps), d->path_bps);
	put_be64(b + offsetof(struct l2cc_discover, t_tx), d->t_tx);
	return (int)n;
}

int wire_parse_discover(const uint8_t *body, size_t len, struct wire_discover *d)
{
	uint64_t bps;

	if (!body || len < DISC_LEN)
		return -EINVAL;
	bps = get_be64(body + offsetof(struct l2cc_discover, path_bps));
	if (bps == 0)
		return -EINVAL;
	d->flow = get_be16(body + offsetof(struct l2cc_discover, flow));
	d->hops = body[offsetof(struct l2cc_discover, hops)];
	d->flags = body[offsetof(struct l2cc_discover, flags)];
	d->seq = get_be32(body + offsetof(struct l2cc_discover, seq));
	d->path_bps = bps;
	d->t_tx = get_be64(body + offsetof(struct l2cc_discover, t_tx));
	return 0;
}

int wire_build_feedback(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
			const struct wire_feedback *f)
{
	uint8_t *b;
	size_t n;

	if (wire_is_multicast(dst) || f->max_hop > f->hop)
		return -EINVAL;
	b = put_ctrl_l2ci(buf, buflen, dst, src, L2CC_CTRL_FEEDBACK, FB_LEN, &n);
	if (!b)
		return -ENOSPC;
	put_be16(b + offsetof(struct l2cc_feedback, flow), f->flow);
	b[offsetof(struct l2cc_feedback, hop)] = f->hop;
	b[offsetof(struct l2cc_feedback, max_hop)] = f->max_hop;
	put_be32(b + offsetof(struct l2cc_feedback, seq), f->seq);
	put_be16(b + offsetof(struct l2cc_feedback, level), f->level);
	put_be16(b + offsetof(struct l2cc_feedback, speed), f->speed_mbps);
	memcpy(b + offsetof(struct l2cc_feedback, setter), f->setter, L2CC_ETH_ALEN);
	return (int)n;
}

int wire_parse_feedback(const uint8_t *body, size_t len, struct wire_feedback *f)
{
	uint8_t hop, max_hop;

	if (!body || len < FB_LEN)
		return -EINVAL;
	hop = body[offsetof(struct l2cc_feedback, hop)];
	max_hop = body[offsetof(struct l2cc_feedback, max_hop)];
	/* The point that set the level is on the way already travelled. */
	if (max_hop > hop)
		return -EINVAL;
	f->flow = get_be16(body + offsetof(struct l2cc_feedback, flow));
	f->hop = hop;
	f->max_hop = max_hop;
	f->seq = get_be32(body + offsetof(struct l2cc_feedback, seq));
	f->level = get_be16(body + offsetof(struct l2cc_feedback, level));
	f->speed_mbps = get_be16(body + offsetof(struct l2cc_feedback, speed));
	memcpy(f->setter, body + offsetof(struct l2cc_feedback, setter), L2CC_ETH_ALEN);
	return 0;
}

int wire_discover_transit(uint8_t *body, size_t len, uint64_t egress_bps)
{
	uint8_t *hops;
	uint64_t bps;

	if (!body || len < DISC_LEN)
		return -EINVAL;
	hops = body + offsetof(struct l2cc_discover, hops);
	if (*hops < UINT8_MAX)
		(*hops)++;
	bps = get_be64(body + offsetof(struct l2cc_discover, path_bps));
	if (egress_bps && egress_bps < bps)
		put_be64(body + offsetof(struct l2cc_discover, path_bps), egress_bps);
	return 0;
}

int wire_feedback_transit(uint8_t *body, size_t len, uint16_t level, const uint8_t mac[6],
			  uint64_t port_bps)
{
	uint8_t *hop;

	if (!body || len < FB_LEN || body[offsetof(struct l2cc_feedback, max_hop)] >
					     body[offsetof(struct l2cc_feedback, hop)])
		return -EINVAL;
	hop = body + offsetof(struct l2cc_feedback, hop);
	if (*hop < UINT8_MAX)
		(*hop)++;
	if (level <= get_be16(body + offsetof(struct l2cc_feedback, level)))
		return 0;
	put_be16(body + offsetof(struct l2cc_feedback, level), level);
	body[offsetof(struct l2cc_feedback, max_hop)] = *hop;
	put_be16(body + offsetof(struct l2cc_feedback, speed), wire_speed_mbps(port_bps));
	memcpy(body + offsetof(struct l2cc_feedback, setter), mac, L2CC_ETH_ALEN);
	return 1;
}

/* ---- 802.1Qau CNM -------------------------------------------------------- */

#define CNM_HLEN ((size_t)sizeof(struct l2cc_cnm))

int wire_cnm_encap(struct wire_cnm *c, const uint8_t *frame, uint32_t len)
{
	struct eth_info ei;
	size_t msdu_off;

	if (!c || wire_parse_eth(frame, len, &ei) != 0)
		return -EINVAL;
	/* The MSDU starts at the EtherType after the VLAN tags (which the
	 * bridge's service interface strips), so its length includes it. */
	msdu_off = ei.hlen - 2;
	c->encap_prio = ei.prio;
	memcpy(c->encap_da, ei.dst, L2CC_ETH_ALEN);
	c->encap_len = len - msdu_off > 0xffff ? 0xffff : (uint16_t)(len - msdu_off);
	c->msdu_len = c->encap_len < L2CC_CNM_MSDU_MAX ? c->encap_len : L2CC_CNM_MSDU_MAX;
	memcpy(c->msdu, frame + msdu_off, c->msdu_len);
	return 0;
}

int wire_build_cnm(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   int tci, const struct wire_cnm *c)
{
	size_t hlen = L2CC_ETH_HLEN + (tci >= 0 ? L2CC_VLAN_HLEN : 0);
	size_t n = hlen + CNM_HLEN + c->msdu_len;
	uint8_t *b;

	if (wire_is_multicast(dst) || c->qntz_fb > L2CC_CNM_FB_MAX || c->encap_prio > 7 ||
	    tci > 0xffff ||
	    c->msdu_len != (c->encap_len < L2CC_CNM_MSDU_MAX ? c->encap_len : L2CC_CNM_MSDU_MAX))
		return -EINVAL;
	if (n < L2CC_ETH_MIN_FRAME)
		n = L2CC_ETH_MIN_FRAME;
	if (buflen < n)
		return -ENOSPC;
	if (tci >= 0) {
		b = put_eth_to(buf, n, dst, src, L2CC_ETH_P_8021Q);
		put_be16(b, (uint16_t)tci);
		put_be16(b + 2, L2CC_ETH_P_CNM);
		b += L2CC_VLAN_HLEN;
	} else {
		b = put_eth_to(buf, n, dst, src, L2CC_ETH_P_CNM);
	}
	/* version 0 and the reserved bits stay zero */
	put_be16(b + offsetof(struct l2cc_cnm, ver_fb), c->qntz_fb);
	memcpy(b + offsetof(struct l2cc_cnm, cpid), c->cpid, sizeof(c->cpid));
	put_be16(b + offsetof(struct l2cc_cnm, qoffset), (uint16_t)c->qoffset);
	put_be16(b + offsetof(struct l2cc_cnm, qdelta), (uint16_t)c->qdelta);
	put_be16(b + offsetof(struct l2cc_cnm, encap_prio), (uint16_t)(c->encap_prio << 13));
	memcpy(b + offsetof(struct l2cc_cnm, encap_da), c->encap_da, L2CC_ETH_ALEN);
	put_be16(b + offsetof(struct l2cc_cnm, encap_len), c->encap_len);
	memcpy(b + CNM_HLEN, c->msdu, c->msdu_len);
	return (int)n;
}

int wire_parse_cnm(const uint8_t *payload, size_t len, struct wire_cnm *c)
{
	uint16_t vf, elen, mlen;

	if (!payload || len < 2)
		return -EINVAL;
	/* The version alone decides whether the rest can be read at all. */
	vf = get_be16(payload + offsetof(struct l2cc_cnm, ver_fb));
	if (vf >> 12 != L2CC_CNM_VERSION)
		return -EPROTO;
	if (len < CNM_HLEN)
		return -EINVAL;
	elen = get_be16(payload + offsetof(struct l2cc_cnm, encap_len));
	mlen = elen < L2CC_CNM_MSDU_MAX ? elen : L2CC_CNM_MSDU_MAX;
	if (len < CNM_HLEN + mlen)
		return -EINVAL;
	c->qntz_fb = vf & L2CC_CNM_FB_MAX;
	memcpy(c->cpid, payload + offsetof(struct l2cc_cnm, cpid), sizeof(c->cpid));
	c->qoffset = (int16_t)get_be16(payload + offsetof(struct l2cc_cnm, qoffset));
	c->qdelta = (int16_t)get_be16(payload + offsetof(struct l2cc_cnm, qdelta));
	c->encap_prio = get_be16(payload + offsetof(struct l2cc_cnm, encap_prio)) >> 13;
	memcpy(c->encap_da, payload + offsetof(struct l2cc_cnm, encap_da), L2CC_ETH_ALEN);
	c->encap_len = elen;
	c->msdu_len = (uint8_t)mlen;
	memcpy(c->msdu, payload + CNM_HLEN, mlen);
	return 0;
}

int wire_cnm_tag(const struct wire_cnm *c, struct wire_tag *t)
{
	/* The MSDU is a frame without its addresses: put 12 bytes of them
	 * back and the tag reader's checks apply unchanged. */
	uint8_t f[2 * L2CC_ETH_ALEN + L2CC_CNM_MSDU_MAX] = { 0 };
	uint32_t n = c->msdu_len < L2CC_CNM_MSDU_MAX ? c->msdu_len : L2CC_CNM_MSDU_MAX;
	int off;

	memcpy(f + 2 * L2CC_ETH_ALEN, c->msdu, n);
	off = wire_tag_read(f, 2 * L2CC_ETH_ALEN + n, t);
	return off < 0 ? off : 0;
}

/* ---- IP ECN ------------------------------------------------------------------ */

#define IP_ECN_CE 3u

int wire_ip_set_ce(uint8_t *frame, uint32_t len)
{
	struct eth_info ei;
	uint16_t type;
	size_t off;
	uint8_t *ip;

	if (!frame || wire_parse_eth(frame, len, &ei) != 0)
		return -ENOENT;
	type = ei.ethertype;
	off = ei.hlen;
	if (type == L2CC_ETH_P_DATA_TAG) {
		int t = wire_tag_find(frame, len);

		if (t < 0)
			return -ENOENT;
		type = get_be16(frame + t + offsetof(struct l2cc_data_tag, inner_type));
		off = (size_t)t + sizeof(struct l2cc_data_tag);
	}
	ip = frame + off;
	if (type == 0x0800) {
		uint32_t sum;
		uint16_t old, new;

		if (len < off + 20 || (ip[0] >> 4) != 4 || (ip[0] & 0x0f) < 5)
			return -ENOENT;
		if ((ip[1] & 3) == IP_ECN_CE)
			return -EALREADY;
		if (!(ip[1] & 3))
			return -EOPNOTSUPP;
		/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), m the 16-bit word
		 * holding the TOS byte. */
		old = get_be16(ip);
		ip[1] |= IP_ECN_CE;
		new = get_be16(ip);
		sum = (uint16_t)~get_be16(ip + 10) + (uint32_t)(uint16_t)~old + new;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
		return 0;
	}
	if (type == 0x86DD) {
		/* Traffic class: the low nibble of byte 0, the high one of byte 1;
		 * ECN is its two low bits, bits 5..4 of byte 1. No checksum. */
		uint8_t ecn;

		if (len < off + 40 || (ip[0] >> 4) != 6)
			return -ENOENT;
		ecn = (ip[1] >> 4) & 3;
		if (ecn == IP_ECN_CE)
			return -EALREADY;
		if (!ecn)
			return -EOPNOTSUPP;
		ip[1] |= IP_ECN_CE << 4;
		return 0;
	}
	return -ENOENT;
}

bool wire_tcp_pure_ack(const uint8_t *frame, uint32_t len)
{
	struct eth_info ei;
	const uint8_t *ip, *tcp;
	uint32_t ihl, tot, doff;

	if (!frame || wire_parse_eth(frame, len, &ei) != 0)
		return false;
	ip = frame + ei.hlen;
	if (ei.ethertype == 0x0800) {
		if (len < ei.hlen + 20u || (ip[0] >> 4) != 4 || ip[9] != 6)
			return false;
		ihl = (ip[0] & 0x0f) * 4u;
		tot = get_be16(ip + 2);
		/* a fragment after the first has no TCP header */
		if (ihl < 20 || (get_be16(ip + 6) & 0x1fff) || tot < ihl + 20 ||
		    len < ei.hlen + ihl + 20)
			return false;
		tcp = ip + ihl;
		tot -= ihl;
	} else if (ei.ethertype == 0x86DD) {
		/* no extension headers: a TCP ACK has none */
		if (len < ei.hlen + 60u || (ip[0] >> 4) != 6 || ip[6] != 6)
			return false;
		tcp = ip + 40;
		tot = get_be16(ip + 4);
		if (tot < 20)
			return false;
	} else {
		return false;
	}
	doff = (tcp[12] >> 4) * 4u;
	/* ACK set; SYN, FIN, RST clear; no payload past the header */
	return doff >= 20 && tot == doff && (tcp[13] & 0x17) == 0x10;
}
