// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for hostd's classifier, flow_key_from_frame() (flow.c):
 * every frame a host sends goes through it, IPv4/IPv6 with extension
 * headers and up to two VLAN tags, before hostd knows anything of it.
 * The input is the frame (libFuzzer's exact-size heap copy, so ASan sees a
 * read past len). Each granularity is checked against what flow.h
 * promises:
 *  - deterministic: the same frame gives the same key twice;
 *  - the key is zeroed before it is filled (keys compare with memcmp):
 *    fields its type does not use are 0, and a failure leaves it all 0;
 *  - BY_DST is the destination MAC and outer VLAN id, BY_PRIO the outer
 *    PCP, and a frame that is not IP keys BY_5TUPLE as BY_DST does;
 *  - BY_5TUPLE agrees with a reference walk written here from the RFCs
 *    (791, 8200 §4, 4302) rather than from flow.c: addresses, protocol
 *    and ports, or the same refusal.
 * Seeds: tests/fuzz/corpus/fuzz_flowkey/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"
#include "../../hostd/flow.h"

static void check(int cond)
{
	if (!cond)
		abort();
}

static int all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The reference: 0 and the key's IP fields, or -EINVAL. ports_ok: the
 * ports were read. Up to 8 IPv6 extension headers are walked (flow.c's
 * IPV6_MAX_EXT): past them the key has the 9th's type and no ports. */
struct ref {
	uint8_t type, proto;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
};

static int ref_ports(const uint8_t *p, size_t len, size_t l4, uint8_t proto, struct ref *r)
{
	if (proto != 6 && proto != 17)
		return 0;
	if (l4 + 4 > len)
		return -EINVAL;
	r->sport = be16(p + l4);
	r->dport = be16(p + l4 + 2);
	return 0;
}

static int ref_ip4(const uint8_t *p, size_t len, size_t off, struct ref *r)
{
	size_t ihl;

	if (off + 20 > len || (p[off] >> 4) != 4)
		return -EINVAL;
	ihl = (size_t)(p[off] & 15) * 4;
	if (ihl < 20 || off + ihl > len)
		return -EINVAL;
	r->type = FLOW_KEY_IP4;
	r->proto = p[off + 9];
	memcpy(r->src, p + off + 12, 4);
	memcpy(r->dst, p + off + 16, 4);
	if (be16(p + off + 6) & 0x1fff)         /* fragment offset: not the first */
		return 0;
	return ref_ports(p, len, off + ihl, r->proto, r);
}

static int ref_ip6(const uint8_t *p, size_t len, size_t off, struct ref *r)
{
	size_t at = off + 40;
	uint8_t nh;
	int n;

	if (off + 40 > len || (p[off] >> 4) != 6)
		return -EINVAL;
	r->type = FLOW_KEY_IP6;
	memcpy(r->src, p + off + 8, 16);
	memcpy(r->dst, p + off + 24, 16);
	nh = p[off + 6];
	for (n = 0; n < 8; n++) {
		size_t hl;

		if (nh == 0 || nh == 43 || nh == 60) {
			if (at + 2 > len)
				return -EINVAL;
			hl = 8 + 8 * (size_t)p[at + 1];
		} else if (nh == 51) {
			if (at + 2 > len)
				return -EINVAL;
			hl = 4 * ((size_t)p[at + 1] + 2);
		} else if (nh == 44) {
			if (at + 8 > len)
				return -EINVAL;
			if (be16(p + at + 2) >> 3) {    /* offset != 0 */
				r->proto = p[at];
				return 0;
			}
			hl = 8;
		} else {
			r->proto = nh;
			return ref_ports(p, len, at, nh, r);
		}
		if (at + hl > len)
			return -EINVAL;
		nh = p[at];
		at += hl;
	}
	r->proto = nh;
	return 0;
}

static void check_dst_key(const struct flow_key *k, const struct eth_info *ei)
{
	check(k->type == FLOW_KEY_DST);
	check(memcmp(k->mac, ei->dst, 6) == 0 && k->vid == ei->vid);
	check(!k->proto && !k->prio && !k->pad && !k->sport && !k->dport);
	check(all_zero(k->src, sizeof(k->src)) && all_zero(k->dst, sizeof(k->dst)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flow_key k, k2;
	struct eth_info ei;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	int eth, r, r2;

	eth = wire_parse_eth(data, len, &ei);

	/* Every granularity, twice; an unknown one is refused. */
	for (int g = 0; g <= 3; g++) {
		memset(&k, 0xa5, sizeof(k));
		memset(&k2, 0x5a, sizeof(k2));
		r = flow_key_from_frame((enum flow_granularity)g, data, len, &k);
		r2 = flow_key_from_frame((enum flow_granularity)g, data, len, &k2);
		check(r == r2 && memcmp(&k, &k2, sizeof(k)) == 0);
		check(r == 0 || r == -EINVAL);
		if (r) {
			check(all_zero(&k, sizeof(k)));
			continue;
		}
		check(eth == 0 && g != 3);
		check(k.pad == 0);
		switch (g) {
		case FLOW_BY_DST:
			check_dst_key(&k, &ei);
			break;
		case FLOW_BY_PRIO:
			check(k.type == FLOW_KEY_PRIO && k.prio == ei.prio && k.prio < 8);
			check(!k.proto && !k.vid && !k.sport && !k.dport);
			check(all_zero(k.mac, 6) && all_zero(k.src, 16) && all_zero(k.dst, 16));
			break;
		default:
			break;
		}
	}

	/* BY_5TUPLE against the reference. */
	r = flow_key_from_frame(FLOW_BY_5TUPLE, data, len, &k);
	if (eth) {
		check(r == eth && all_zero(&k, sizeof(k)));
		return 0;
	}
	if (ei.ethertype != 0x0800 && ei.ethertype != 0x86DD) {
		check(r == 0);
		check_dst_key(&k, &ei);
		return 0;
	}
	{
		struct ref ref;
		int rr;

		memset(&ref, 0, sizeof(ref));
		rr = ei.ethertype == 0x0800 ? ref_ip4(data, size, ei.hlen, &ref)
					    : ref_ip6(data, size, ei.hlen, &ref);
		check(r == rr);
		if (r) {
			check(all_zero(&k, sizeof(k)));
			return 0;
		}
		check(k.type == ref.type && k.proto == ref.proto);
		check(memcmp(k.src, ref.src, 16) == 0 && memcmp(k.dst, ref.dst, 16) == 0);
		check(k.sport == ref.sport && k.dport == ref.dport);
		check(!k.prio && !k.vid && !k.pad && all_zero(k.mac, 6));
		/* Ports only for TCP and UDP. */
		check((k.proto == 6 || k.proto == 17) || (!k.sport && !k.dport));
		if (k.type == FLOW_KEY_IP4)
			check(all_zero(k.src + 4, 12) && all_zero(k.dst + 4, 12));
	}
	return 0;
}
