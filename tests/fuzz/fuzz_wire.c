// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for daemon/wire.c. Every frame a switch port receives goes
 * through these decoders before anything else looks at it, so they must not
 * read past the frame (ASan sees that: libFuzzer's input is an exact-size heap
 * copy) and must agree with the encoders: whatever decodes is rebuilt and
 * decoded again, and any field that changes is a bug (abort()).
 * Seeds: tests/fuzz/corpus/fuzz_wire/.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t any_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	struct wire_macctrl mc;
	struct wire_credit c;
	struct eth_info ei;
	const uint8_t *pl;
	size_t plen;

	/* Each decoder also sees the raw input directly, so it is exercised
	 * without the fuzzer first having to find a valid Ethernet header. */
	(void)wire_parse_macctrl(data, size, &mc);
	(void)wire_parse_credit(data, size, &c);
	fuzz_ctrl(any_src, data, size);

	if (wire_parse_eth(data, size, &ei) != 0)
		return 0;
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
	default:
		break;
	}
	return 0;
}
