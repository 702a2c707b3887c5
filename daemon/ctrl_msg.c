// SPDX-License-Identifier: BSD-2-Clause
/* The table of l2cc control messages: see ctrl_msg.h. */
#include "ctrl_msg.h"

#include <errno.h>

static int dec_credit(const uint8_t *b, size_t len, union ctrl_msg *m)
{
	return wire_parse_credit(b, len, &m->credit);
}

static int enc_credit(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		      const union ctrl_msg *m)
{
	return wire_build_credit(buf, buflen, src, &m->credit);
}

static int dec_cnp(const uint8_t *b, size_t len, union ctrl_msg *m)
{
	return wire_parse_cnp(b, len, &m->cnp);
}

static int enc_cnp(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const union ctrl_msg *m)
{
	return wire_build_cnp(buf, buflen, dst, src, &m->cnp);
}

static int dec_ack(const uint8_t *b, size_t len, union ctrl_msg *m)
{
	return wire_parse_ack(b, len, &m->ack);
}

static int enc_ack(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		   const union ctrl_msg *m)
{
	return wire_build_ack(buf, buflen, dst, src, &m->ack);
}

static int dec_disc(const uint8_t *b, size_t len, union ctrl_msg *m)
{
	return wire_parse_discover(b, len, &m->disc);
}

static int enc_disc(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		    const union ctrl_msg *m)
{
	return wire_build_discover(buf, buflen, dst, src, L2CC_CTRL_DISCOVER, &m->disc);
}

static int enc_echo(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		    const union ctrl_msg *m)
{
	return wire_build_discover(buf, buflen, dst, src, L2CC_CTRL_DISCOVER_ECHO, &m->disc);
}

static int dec_fb(const uint8_t *b, size_t len, union ctrl_msg *m)
{
	return wire_parse_feedback(b, len, &m->fb);
}

static int enc_fb(void *buf, size_t buflen, const uint8_t dst[6], const uint8_t src[6],
		  const union ctrl_msg *m)
{
	return wire_build_feedback(buf, buflen, dst, src, &m->fb);
}

static const union ctrl_msg sample_credit = { .credit = {
	.unit = L2CC_CREDIT_FRAMES, .prio_mask = 0x01, .sent_unit = L2CC_CREDIT_FRAMES,
	.limit = { 12 }, .sent = { 8 } } };
static const union ctrl_msg sample_cnp = { .cnp = { .flow = 7, .seq = 1000, .marked = 3 } };
static const union ctrl_msg sample_ack = { .ack = {
	.flow = 7, .flags = L2CC_ACK_ECE, .cum_seq = 1000, .frames = 4 } };
static const union ctrl_msg sample_disc = { .disc = {
	.flow = 7, .hops = 3, .seq = 1, .path_bps = 10000000, .t_tx = 123456789 } };
static const union ctrl_msg sample_fb = { .fb = {
	.flow = 7, .hop = 3, .max_hop = 2, .seq = 42, .level = 7000,
	.setter = { 0x02, 0, 0, 0, 0x02, 0x01 } } };

const struct ctrl_type ctrl_types[] = {
	{ L2CC_CTRL_CREDIT, "CREDIT", true, CTRL_BY_PARTNER,
	  dec_credit, enc_credit, &sample_credit },
	{ L2CC_CTRL_CNP, "CNP", false, CTRL_BY_PEER,
	  dec_cnp, enc_cnp, &sample_cnp },
	{ L2CC_CTRL_ACK, "ACK", false, CTRL_BY_PEER,
	  dec_ack, enc_ack, &sample_ack },
	{ L2CC_CTRL_DISCOVER, "DISCOVER", false, CTRL_BY_SOURCE,
	  dec_disc, enc_disc, &sample_disc },
	{ L2CC_CTRL_DISCOVER_ECHO, "DISCOVER_ECHO", false, CTRL_BY_PEER,
	  dec_disc, enc_echo, &sample_disc },
	{ L2CC_CTRL_FEEDBACK, "FEEDBACK", false, CTRL_BY_PEER,
	  dec_fb, enc_fb, &sample_fb },
};
const size_t ctrl_ntypes = sizeof(ctrl_types) / sizeof(ctrl_types[0]);

const struct ctrl_type *ctrl_type_of(int type)
{
	for (size_t i = 0; i < ctrl_ntypes; i++)
		if (ctrl_types[i].type == type)
			return &ctrl_types[i];
	return NULL;
}

bool ctrl_sender_ok(const struct ctrl_type *t, bool from_host, bool link_local_dst)
{
	if (t->link_local || t->sender == CTRL_BY_PARTNER)
		return t->link_local && link_local_dst;
	return !link_local_dst && !(from_host && t->sender == CTRL_BY_SWITCH);
}

int ctrl_decode(const uint8_t *payload, size_t len, union ctrl_msg *m)
{
	const struct ctrl_type *t;
	const uint8_t *body;
	size_t blen;
	int type = wire_parse_ctrl(payload, len, &body, &blen);

	if (type < 0)
		return type;
	t = ctrl_type_of(type);
	if (!t)
		return -EOPNOTSUPP;
	if (t->decode(body, blen, m))
		return -EINVAL;
	return type;
}
