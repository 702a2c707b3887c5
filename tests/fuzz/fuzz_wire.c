// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for daemon/wire.c. Every frame a switch port receives goes
 * through these decoders before anything else looks at it, so they must not
 * read past the frame (ASan sees that: libFuzzer's input is an exact-size heap
 * copy) and must agree with the encoders: whatever decodes is rebuilt and
 * decoded again, and any field that changes is a bug (abort()). Data tags are
 * stripped, found and marked on a copy with headroom (as in a UMEM frame), and
 * whatever strips cleanly must come back byte for byte when re-inserted.
 * Seeds: tests/fuzz/corpus/fuzz_wire/.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "ctrl_msg.h"

static void check(int cond)
{
	if (!cond)
		abort();
}

static void eq_macctrl(const struct wire_macctrl *a, const struct wire_macctrl *b)
{
	check(a->opcode == b->opcode);
	check(a->class_enable == b->class_enable);
	check(memcmp(a->quanta, b->quanta, sizeof(a->quanta)) == 0);
}

static void fuzz_macctrl(const uint8_t *src, const uint8_t *p, size_t len)
{
	struct wire_macctrl mc, mc2;
	struct eth_info ei;
	uint8_t buf[L2CC_ETH_MIN_FRAME];
	int n, i;

	if (wire_parse_macctrl(p, len, &mc) != 0)
		return;

	if (mc.opcode == L2CC_MACCTRL_PAUSE) {
		/* A PAUSE carries one time for every priority. */
		check(mc.class_enable == 0xff);
		for (i = 1; i < L2CC_NPRIO; i++)
			check(mc.quanta[i] == mc.quanta[0]);
		n = wire_build_pause(buf, sizeof(buf), src, mc.quanta[0]);
	} else {
		check(mc.opcode == L2CC_MACCTRL_PFC);
		n = wire_build_pfc(buf, sizeof(buf), src, mc.class_enable, mc.quanta);
	}
	check(n == L2CC_ETH_MIN_FRAME);
	check(wire_parse_eth(buf, n, &ei) == 0);
	check(ei.ethertype == L2CC_ETH_P_MACCTRL && ei.ntags == 0);
	check(memcmp(ei.dst, wire_macctrl_da, 6) == 0 && memcmp(ei.src, src, 6) == 0);
	check(wire_parse_macctrl(buf + ei.hlen, n - ei.hlen, &mc2) == 0);
	eq_macctrl(&mc, &mc2);
}

static void eq_credit(const struct wire_credit *a, const struct wire_credit *b)
{
	int i;

	check(a->unit == b->unit);
	check(a->prio_mask == b->prio_mask);
	check(a->sent_unit == b->sent_unit);
	for (i = 0; i < L2CC_NPRIO; i++) {
		check(a->limit[i] == b->limit[i]);
		check(a->sent[i] == b->sent[i]);
	}
}

static void fuzz_credit(const uint8_t *src, const uint8_t *body, size_t blen)
{
	struct wire_credit c, c2;
	const uint8_t *body2;
	struct eth_info ei;
	uint8_t buf[L2CC_ETH_HLEN + sizeof(struct l2cc_ctrl_hdr) + sizeof(struct l2cc_credit)];
	size_t blen2;
	int n;

	if (wire_parse_credit(body, blen, &c) != 0)
		return;
	check(c.unit == L2CC_CREDIT_BYTES || c.unit == L2CC_CREDIT_FRAMES);
	check(c.sent_unit == L2CC_CREDIT_BYTES || c.sent_unit == L2CC_CREDIT_FRAMES ||
	      c.sent_unit == L2CC_CREDIT_UNIT_NONE);
	/* The decoder reads fixed offsets: the 132 fixed bytes must have been there. */
	check(blen >= sizeof(struct l2cc_credit));

	n = wire_build_credit(buf, sizeof(buf), src, &c);
	check(n >= L2CC_ETH_MIN_FRAME && (size_t)n <= sizeof(buf));
	/* One byte less than the frame needs is refused, not overrun. */
	check(wire_build_credit(buf, n - 1, src, &c) == -ENOSPC);
	check(wire_parse_eth(buf, n, &ei) == 0);
	check(ei.ethertype == L2CC_ETH_P_CTRL && ei.ntags == 0);
	check(memcmp(ei.dst, wire_macctrl_da, 6) == 0 && memcmp(ei.src, src, 6) == 0);
	check(wire_parse_ctrl(buf + ei.hlen, n - ei.hlen, &body2, &blen2) == L2CC_CTRL_CREDIT);
	check(blen2 == sizeof(struct l2cc_credit));
	/* reserved goes out as zero */
	check(body2[offsetof(struct l2cc_credit, reserved)] == 0);
	check(wire_parse_credit(body2, blen2, &c2) == 0);
	eq_credit(&c, &c2);
	/* Apart from reserved and any appended bytes, the rebuilt body is the input's. */
	check(memcmp(body2, body, offsetof(struct l2cc_credit, reserved)) == 0);
	check(memcmp(body2 + offsetof(struct l2cc_credit, limit),
		     body + offsetof(struct l2cc_credit, limit),
		     sizeof(struct l2cc_credit) - offsetof(struct l2cc_credit, limit)) == 0);
}

static void fuzz_cnp(const uint8_t *src, const uint8_t *body, size_t blen)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	struct wire_cnp c, c2;
	const uint8_t *body2;
	uint8_t buf[L2CC_ETH_MIN_FRAME];
	size_t blen2;
	int n;

	if (wire_parse_cnp(body, blen, &c) != 0)
		return;
	check(blen >= sizeof(struct l2cc_cnp) && c.marked > 0);
	n = wire_build_cnp(buf, sizeof(buf), dst, src, &c);
	check(n == L2CC_ETH_MIN_FRAME);
	check(wire_build_cnp(buf, n - 1, dst, src, &c) == -ENOSPC);
	check(memcmp(buf, dst, 6) == 0 && memcmp(buf + 6, src, 6) == 0);
	check(wire_parse_ctrl(buf + L2CC_ETH_HLEN, n - L2CC_ETH_HLEN, &body2, &blen2) ==
	      L2CC_CTRL_CNP);
	check(blen2 == sizeof(struct l2cc_cnp));
	check(wire_parse_cnp(body2, blen2, &c2) == 0);
	check(c.flow == c2.flow && c.seq == c2.seq && c.marked == c2.marked);
	/* The same bytes but for reserved (sent as zero) */
	check(memcmp(body2, body, 2) == 0 && memcmp(body2 + 4, body + 4, 8) == 0);
}

static void fuzz_ack(const uint8_t *src, const uint8_t *body, size_t blen)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	struct wire_ack a, a2;
	const uint8_t *body2;
	uint8_t buf[L2CC_ETH_MIN_FRAME];
	uint32_t um, m;
	size_t blen2;
	int n;

	if (wire_parse_ack(body, blen, &a) != 0)
		return;
	check(blen >= sizeof(struct l2cc_ack));
	wire_ack_count(&a, &um, &m);
	check(m <= 1 && um + m == a.frames);
	n = wire_build_ack(buf, sizeof(buf), dst, src, &a);
	check(n == L2CC_ETH_MIN_FRAME);
	check(wire_build_ack(buf, n - 1, dst, src, &a) == -ENOSPC);
	check(wire_parse_ctrl(buf + L2CC_ETH_HLEN, n - L2CC_ETH_HLEN, &body2, &blen2) ==
	      L2CC_CTRL_ACK);
	check(blen2 == sizeof(struct l2cc_ack));
	check(wire_parse_ack(body2, blen2, &a2) == 0);
	check(a.flow == a2.flow && a.flags == a2.flags && a.cum_seq == a2.cum_seq &&
	      a.frames == a2.frames);
	check(memcmp(body2, body, 3) == 0 && memcmp(body2 + 4, body + 4, 8) == 0);
}

/* Largest frame the tag round trip copies; longer inputs are cut to it. */
#define FUZZ_TAG_MAX 2048

static void fuzz_tag(const uint8_t *data, size_t size)
{
	static uint8_t umem[L2CC_TAG_LEN + FUZZ_TAG_MAX], orig[FUZZ_TAG_MAX];
	struct wire_tag t, t2;
	uint32_t len = size > FUZZ_TAG_MAX ? FUZZ_TAG_MAX : size;
	uint8_t *fr = umem + L2CC_TAG_LEN;
	int off, ret, fecn;

	memcpy(orig, data, len);

	/* find, read and set_fecn agree with each other. */
	off = wire_tag_find(orig, len);
	memset(&t, 0, sizeof(t));
	check(wire_tag_read(orig, len, &t) == off);
	memcpy(fr, orig, len);
	ret = wire_tag_set_fecn(fr, len);
	check(ret == (off < 0 ? off : 0));
	if (off < 0) {
		check(off == -ENOENT || off == -EINVAL || off == -EPROTO);
		check(memcmp(fr, orig, len) == 0);   /* not marked, not touched */
	} else {
		check(off == 14 || off == 18 || off == 22);
		check((size_t)off + sizeof(struct l2cc_data_tag) <= len);
		/* Only the flags byte changed, and only by gaining FECN. */
		fr[off + offsetof(struct l2cc_data_tag, flags)] &= ~L2CC_TAG_FECN;
		orig[off + offsetof(struct l2cc_data_tag, flags)] &= ~L2CC_TAG_FECN;
		check(memcmp(fr, orig, len) == 0);
		memcpy(orig, data, len);
		memcpy(fr, orig, len);
		check(wire_tag_set_fecn(fr, len) == 0 && wire_tag_set_fecn(fr, len) == 0);
		check(wire_tag_read(fr, len, &t2) == off && (t2.flags & L2CC_TAG_FECN));
		check(t2.flags == (t.flags | L2CC_TAG_FECN));
	}

	/* strip, then insert into the headroom strip left: x comes back. */
	memcpy(fr, orig, len);
	{
		uint8_t *p = fr;
		uint32_t n = len;

		memset(&t2, 0, sizeof(t2));   /* padding too: compared with memcmp */
		ret = wire_tag_strip(&p, &n, &t2);
		check(ret == (off < 0 ? off : 0));
		if (ret < 0) {
			check(p == fr && n == len && memcmp(fr, orig, len) == 0);
		} else {
			struct eth_info ei;

			check(p == fr + L2CC_TAG_LEN && n == len - L2CC_TAG_LEN);
			check(memcmp(&t, &t2, sizeof(t)) == 0);
			/* The untagged frame's ethertype is the tag's inner_type. */
			check(wire_parse_eth(p, n, &ei) == 0 && ei.ethertype == t2.inner_type);
			check(wire_tag_find(p, n) == -ENOENT);
			check(wire_tag_insert(&p, &n, L2CC_TAG_LEN - 1, &t2) == -ENOSPC);
			check(wire_tag_insert(&p, &n, L2CC_TAG_LEN, &t2) == 0);
			check(p == fr && n == len && memcmp(fr, orig, len) == 0);
			check(wire_tag_insert(&p, &n, L2CC_TAG_LEN, &t2) == -EEXIST);
		}
	}

	/* insert on anything that parses as Ethernet, then strip. */
	memcpy(fr, orig, len);
	{
		const struct wire_tag ins = { .flags = L2CC_TAG_RLT, .flow = 0xabcd,
					      .seq = 0x12345678, .cpid = { 1, 2, 3, 4, 5, 6, 7, 8 } };
		uint8_t *p = fr;
		uint32_t n = len;

		ret = wire_tag_insert(&p, &n, L2CC_TAG_LEN, &ins);
		if (ret < 0) {
			check(ret == -EINVAL || ret == -EEXIST);
			check(ret != -EEXIST || off != -ENOENT);
			check(p == fr && n == len && memcmp(fr, orig, len) == 0);
			return;
		}
		check(off == -ENOENT);
		check(p == umem && n == len + L2CC_TAG_LEN);
		check(wire_tag_strip(&p, &n, &t2) == 0);
		check(t2.flags == ins.flags && t2.flow == ins.flow && t2.seq == ins.seq &&
		      memcmp(t2.cpid, ins.cpid, 8) == 0);
		check(p == fr && n == len && memcmp(fr, orig, len) == 0);
	}
}

static void fuzz_ctrl(const uint8_t *src, const uint8_t *p, size_t len)
{
	const uint8_t *body;
	size_t blen;
	int type;

	type = wire_parse_ctrl(p, len, &body, &blen);
	if (type < 0)
		return;
	check(type > 0);
	/* The body must lie inside what we were given. */
	check(body >= p && blen <= len && (size_t)(body - p) + blen <= len);
	if (type == L2CC_CTRL_CREDIT)
		fuzz_credit(src, body, blen);
	else if (type == L2CC_CTRL_CNP)
		fuzz_cnp(src, body, blen);
	else if (type == L2CC_CTRL_ACK)
		fuzz_ack(src, body, blen);
}

/* Every type of the control message table (daemon/ctrl_msg.h): its decoder
 * on the raw input, and what decodes encodes into a frame that decodes back
 * to the same message through ctrl_decode(). */
static void fuzz_ctrl_table(const uint8_t *src, const uint8_t *data, size_t size)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	union ctrl_msg m, m2;
	uint8_t buf[2048];
	struct eth_info ei;

	(void)ctrl_decode(data, size, &m);
	for (size_t i = 0; i < ctrl_ntypes; i++) {
		const struct ctrl_type *t = &ctrl_types[i];
		int n;

		memset(&m, 0, sizeof(m));
		if (t->decode(data, size, &m))
			continue;
		n = t->encode(buf, sizeof(buf), dst, src, &m);
		check(n > 0);
		check(wire_parse_eth(buf, n, &ei) == 0 && ei.ethertype == L2CC_ETH_P_CTRL);
		check(wire_is_link_local(ei.dst) == t->link_local);
		memset(&m2, 0, sizeof(m2));
		check(ctrl_decode(buf + ei.hlen, n - ei.hlen, &m2) == t->type);
		n = t->encode(buf, sizeof(buf), dst, src, &m2);
		check(n > 0);
		/* Decoding is a function of the bytes: encode(decode(x)) is stable. */
		{
			uint8_t buf2[2048];
			int n2 = t->encode(buf2, sizeof(buf2), dst, src, &m);

			check(n2 == n && memcmp(buf, buf2, n) == 0);
		}
	}
}

/* A CNM that decodes must rebuild to a frame that decodes to the same fields,
 * and the flow lookup on its encapsulated MSDU must stay inside it. */
static void fuzz_cnm(const uint8_t *src, const uint8_t *p, size_t len)
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	uint8_t buf[L2CC_ETH_HLEN + L2CC_VLAN_HLEN + sizeof(struct l2cc_cnm) + L2CC_CNM_MSDU_MAX];
	struct wire_cnm c, c2;
	struct wire_tag t;
	struct eth_info ei;
	int n;

	if (wire_parse_cnm(p, len, &c) != 0)
		return;
	check(c.qntz_fb <= L2CC_CNM_FB_MAX && c.encap_prio < 8);
	check(c.msdu_len <= L2CC_CNM_MSDU_MAX && c.msdu_len <= c.encap_len);
	(void)wire_cnm_tag(&c, &t);
	n = wire_build_cnm(buf, sizeof(buf), dst, src, c.encap_prio << 13 | 1, &c);
	check(n >= L2CC_ETH_MIN_FRAME && (size_t)n <= sizeof(buf));
	check(wire_parse_eth(buf, n, &ei) == 0 && ei.ethertype == L2CC_ETH_P_CNM);
	check(wire_parse_cnm(buf + ei.hlen, n - ei.hlen, &c2) == 0);
	check(c2.qntz_fb == c.qntz_fb && c2.qoffset == c.qoffset && c2.qdelta == c.qdelta);
	check(c2.encap_prio == c.encap_prio && c2.encap_len == c.encap_len);
	check(memcmp(c2.cpid, c.cpid, 8) == 0 && memcmp(c2.encap_da, c.encap_da, 6) == 0);
	check(c2.msdu_len == c.msdu_len && memcmp(c2.msdu, c.msdu, c.msdu_len) == 0);
}

/* What a switch does to L2CI frames in transit keeps them valid: a body
 * that decodes decodes after it, with one more hop (or 255), a path speed
 * no higher, a level no lower and its setter on the way travelled; a body
 * that does not decode is left alone or refused. */
static void fuzz_l2ci_transit(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0x09 };
	struct wire_discover d, d2;
	struct wire_feedback f, f2;
	uint8_t b[64];
	uint64_t bps;
	uint16_t level;
	int r;

	if (size < 10 || size - 10 > sizeof(b))
		return;
	/* The first 10 bytes choose the switch's rate and level. */
	memcpy(&bps, data, 8);
	memcpy(&level, data + 8, 2);
	memcpy(b, data + 10, size - 10);
	if (wire_parse_discover(b, size - 10, &d) == 0) {
		check(wire_discover_transit(b, size - 10, bps) == 0);
		check(wire_parse_discover(b, size - 10, &d2) == 0);
		check(d2.hops == (d.hops == 255 ? 255 : d.hops + 1));
		check(d2.path_bps <= d.path_bps && (!bps || d2.path_bps <= bps || d2.path_bps == d.path_bps));
		check(d2.flow == d.flow && d2.seq == d.seq && d2.t_tx == d.t_tx);
	}
	memcpy(b, data + 10, size - 10);
	if (wire_parse_feedback(b, size - 10, &f) == 0) {
		r = wire_feedback_transit(b, size - 10, level, mac, bps);
		check(r == 0 || r == 1);
		check(wire_parse_feedback(b, size - 10, &f2) == 0);
		check(f2.hop == (f.hop == 255 ? 255 : f.hop + 1) && f2.max_hop <= f2.hop);
		check(f2.level == (level > f.level ? level : f.level));
		check(r == (level > f.level));
		check(!r || (f2.max_hop == f2.hop && memcmp(f2.setter, mac, 6) == 0));
		check(f2.speed_mbps == (r ? wire_speed_mbps(bps) : f.speed_mbps));
	} else {
		r = wire_feedback_transit(b, size - 10, level, mac, bps);
		check(r == -EINVAL || r == 0 || r == 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t any_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	struct wire_macctrl mc;
	struct wire_credit c;
	struct wire_cnp cnp;
	struct wire_ack ack;
	struct eth_info ei;
	const uint8_t *pl;
	size_t plen;

	/* Each decoder also sees the raw input directly, so it is exercised
	 * without the fuzzer first having to find a valid Ethernet header. */
	(void)wire_parse_macctrl(data, size, &mc);
	(void)wire_parse_credit(data, size, &c);
	(void)wire_parse_cnp(data, size, &cnp);
	(void)wire_parse_ack(data, size, &ack);
	fuzz_ctrl(any_src, data, size);
	fuzz_ctrl_table(any_src, data, size);
	fuzz_tag(data, size);
	fuzz_cnm(any_src, data, size);
	fuzz_l2ci_transit(data, size);
	(void)wire_tcp_pure_ack(data, (uint32_t)size);

	if (wire_parse_eth(data, size, &ei) != 0)
		return 0;
	/* Any frame can be the sample a congestion point encapsulates. */
	{
		struct wire_cnm e;

		check(wire_cnm_encap(&e, data, size) == 0);
		check(e.msdu_len == (e.encap_len < L2CC_CNM_MSDU_MAX ? e.encap_len
								     : L2CC_CNM_MSDU_MAX));
	}
	check(ei.hlen <= size && ei.ntags <= 2 && ei.prio < 8 && ei.vid < 4096);
	check(ei.dst == data && ei.src == data + 6);
	(void)wire_is_link_local(ei.dst);

	pl = data + ei.hlen;
	plen = size - ei.hlen;
	switch (ei.ethertype) {
	case L2CC_ETH_P_MACCTRL:
		fuzz_macctrl(ei.src, pl, plen);
		break;
	case L2CC_ETH_P_CTRL:
		fuzz_ctrl(ei.src, pl, plen);
		break;
	case L2CC_ETH_P_CNM:
		fuzz_cnm(ei.src, pl, plen);
		break;
	default:
		break;
	}
	return 0;
}
