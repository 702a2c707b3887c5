// SPDX-License-Identifier: BSD-2-Clause
/*
 * libFuzzer target for the datapath state machines: switchd's core
 * (sw_rx_frame, sw_pass) or hostd's (hd_rx_host_frame, hd_rx_up_frame,
 * hd_pass) built in memory (fz_core.h), the input a program for it. The
 * first byte picks the daemon, the next few its configuration (the
 * congestion point or law of the registry, flow control, buffers, rates,
 * the pause watchdog, ...), and the rest is a sequence of steps: a frame
 * into a port (data, l2cc-tagged, IPv4/IPv6 TCP/UDP, PAUSE, PFC, CREDIT,
 * CNP, ACK, L2CI DISCOVER/ECHO/FEEDBACK, 802.1Qau CNM, raw bytes, any of
 * them with one byte changed), time moving on (one pass, or every
 * deadline up to a horizon, as the daemon's loop would), a port's TX ring
 * filling or draining, a `mark` or `set-rate` as the control socket would
 * ask. After every step the frame accounting and the counters must add up
 * (fz_sw_check, fz_hd_check) and the core must not ask to be woken in the
 * past; any failure abort()s, and ASan/UBSan watch the rest.
 * Seeds: tests/fuzz/corpus/fuzz_datapath/.
 */
#include "fz_core.h"

#define MAX_STEPS 256

static const uint8_t link_local[6] = { 0x01, 0x80, 0xc2, 0, 0, 0x01 };

static void mac_of(uint8_t id, uint8_t mac[6])
{
	static const uint8_t mc[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };

	if (id == 0xff)
		memset(mac, 0xff, 6);
	else if (id == 0xfe)
		memcpy(mac, mc, 6);
	else if (id == 0xfd)
		memcpy(mac, link_local, 6);
	else {
		memset(mac, 0, 6);
		mac[0] = 0x02;
		mac[5] = id;
	}
}

/* A host id: mostly 1..6 (1 is hostd's host), sometimes group addresses. */
static uint8_t host_id(struct fz_in *in)
{
	uint8_t v = fz_u8(in);

	return v >= 0xf8 ? 0xff - (v & 3) : 1 + v % 6;
}

/* An Ethernet header at p: dst, src, 0..2 VLAN tags; returns its length
 * without the ethertype, which the caller writes. */
static uint32_t eth_hdr(struct fz_in *in, uint8_t *p, uint8_t dst, uint8_t src)
{
	uint8_t t = fz_u8(in);
	uint32_t off = 12;

	mac_of(dst, p);
	mac_of(src, p + 6);
	for (int i = 0; i < (t & 3) && i < 2; i++) {
		uint16_t tci = fz_u16(in);

		p[off] = i == 0 && (t & 3) == 2 ? 0x88 : 0x81;
		p[off + 1] = i == 0 && (t & 3) == 2 ? 0xa8 : 0x00;
		p[off + 2] = tci >> 8;
		p[off + 3] = tci & 0xff;
		off += 4;
	}
	return off;
}

static void be16w(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

/*
 * Build a frame at p (room bytes, with XPORT_UMEM_HEADROOM before p for a
 * tag): its length, and *shift the bytes it moved into the headroom.
 */
static uint32_t mk_frame(struct fz_in *in, uint8_t *p, uint32_t room, uint32_t *shift)
{
	uint8_t kind = fz_u8(in) % 13, dst = host_id(in), src = host_id(in);
	uint8_t d6[6], s6[6], buf[L2CC_ETH_HLEN + L2CC_VLAN_HLEN + 64 + L2CC_CNM_MSDU_MAX];
	uint32_t len = 0, off;
	int n = -1;

	*shift = 0;
	mac_of(dst, d6);
	mac_of(src, s6);
	switch (kind) {
	case 0:
	case 1:
	case 2: {       /* data: IPv4/IPv6 TCP/UDP, ARP, other; maybe l2cc-tagged */
		uint16_t l = fz_u16(in);
		uint8_t what = fz_u8(in);

		len = 60 + l % 1560;
		if (l >= 0xff00)
			len = room;     /* oversize for a 1500 MTU */
		memset(p, 0, len);
		off = eth_hdr(in, p, dst, src);
		if (what & 1) {
			be16w(p + off, 0x0800);
			p[off + 2] = 0x45;
			p[off + 3] = fz_u8(in);          /* DSCP/ECN */
			be16w(p + off + 4, (uint16_t)(len - off - 2));
			p[off + 11] = what & 2 ? 6 : 17;
			p[off + 14] = 10;
			p[off + 17] = src;
			p[off + 18] = 10;
			p[off + 21] = dst;
			be16w(p + off + 22, fz_u16(in));
			be16w(p + off + 24, fz_u16(in));
			p[off + 35] = fz_u8(in);         /* TCP flags */
			p[off + 34] = 0x50;
		} else if (what & 4) {
			be16w(p + off, 0x86dd);
			p[off + 2] = 0x60;
			p[off + 8] = what & 8 ? 0 : 17;  /* hop-by-hop first, or UDP */
			p[off + 9] = 64;
			p[off + 42] = 17;
		} else {
			be16w(p + off, what & 8 ? 0x0806 : fz_u16(in));
		}
		if (what & 0x10) {
			struct wire_tag t = { .flags = fz_u8(in) & (L2CC_TAG_FECN | L2CC_TAG_RLT),
					      .flow = fz_u16(in) % 20, .seq = fz_u16(in) };
			uint8_t *q = p;

			for (int i = 0; i < 8; i++)
				t.cpid[i] = fz_u8(in);
			if (wire_tag_insert(&q, &len, XPORT_UMEM_HEADROOM, &t) == 0)
				*shift = (uint32_t)(p - q);
		}
		break;
	}
	case 3: {
		uint16_t q = fz_u16(in);

		n = wire_build_pause(buf, sizeof(buf), s6, q);
		break;
	}
	case 4: {
		uint16_t q[8];
		uint8_t ce = fz_u8(in);

		for (int i = 0; i < 8; i++)
			q[i] = fz_u8(in) & 1 ? fz_u16(in) : 0;
		n = wire_build_pfc(buf, sizeof(buf), s6, ce, q);
		break;
	}
	case 5: {
		struct wire_credit c = { .unit = fz_u8(in) & 1, .prio_mask = fz_u8(in) };

		c.sent_unit = fz_u8(in) % 3 == 2 ? L2CC_CREDIT_UNIT_NONE : c.unit;
		for (int i = 0; i < 8; i++) {
			c.limit[i] = fz_u8(in) & 1 ? fz_u32(in) : fz_u16(in);
			c.sent[i] = fz_u16(in);
		}
		n = wire_build_credit(buf, sizeof(buf), s6, &c);
		break;
	}
	case 6: {
		struct wire_cnp c = { .flow = fz_u16(in) % 20, .seq = fz_u16(in),
				      .marked = 1 + fz_u8(in) };

		n = wire_build_cnp(buf, sizeof(buf), d6, s6, &c);
		break;
	}
	case 7: {
		struct wire_ack a = { .flow = fz_u16(in) % 20, .flags = fz_u8(in),
				      .cum_seq = fz_u16(in), .frames = fz_u8(in) & 0x80 ? fz_u32(in)
											 : fz_u8(in) };

		n = wire_build_ack(buf, sizeof(buf), d6, s6, &a);
		break;
	}
	case 8: {
		struct wire_discover d = { .flow = fz_u16(in) % 20, .hops = fz_u8(in),
					   .flags = fz_u8(in) };
		uint8_t type = fz_u8(in) & 1 ? L2CC_CTRL_DISCOVER_ECHO : L2CC_CTRL_DISCOVER;

		d.seq = fz_u32(in);
		d.path_bps = (uint64_t)fz_u32(in) * (fz_u8(in) + 1);
		d.t_tx = fz_u32(in);
		n = wire_build_discover(buf, sizeof(buf), d6, s6, type, &d);
		break;
	}
	case 9: {
		struct wire_feedback f = { .flow = fz_u16(in) % 20, .hop = fz_u8(in) };

		f.max_hop = f.hop ? fz_u8(in) % (f.hop + 1) : 0;
		f.level = fz_u16(in);
		mac_of(host_id(in), f.setter);
		n = wire_build_feedback(buf, sizeof(buf), d6, s6, &f);
		break;
	}
	case 10: {      /* a CNM about a frame of ours */
		struct wire_cnm c;
		uint8_t sample[64 + 2 * L2CC_TAG_LEN];
		uint32_t sl = 64;
		struct wire_tag t = { .flow = fz_u16(in) % 20, .seq = fz_u16(in) };
		uint8_t *sp = sample + L2CC_TAG_LEN;

		memset(sample, 0, sizeof(sample));
		mac_of(dst, sp);
		mac_of(src, sp + 6);
		be16w(sp + 12, 0x0800);
		if (fz_u8(in) & 1)
			wire_tag_insert(&sp, &sl, L2CC_TAG_LEN, &t);
		wire_cnm_encap(&c, sp, sl);
		c.qntz_fb = fz_u8(in) % (L2CC_CNM_FB_MAX + 1);
		c.qoffset = (int16_t)fz_u16(in);
		c.qdelta = (int16_t)fz_u16(in);
		for (int i = 0; i < 8; i++)
			c.cpid[i] = fz_u8(in);
		/* to the sample's source, from a switch */
		n = wire_build_cnm(buf, sizeof(buf), s6, d6, (fz_u8(in) & 7) << 13 | 1, &c);
		break;
	}
	default: {      /* raw bytes */
		len = 1 + fz_u8(in) % 128;
		if (len > room)
			len = room;
		for (uint32_t i = 0; i < len; i++)
			p[i] = fz_u8(in);
		break;
	}
	}
	if (n > 0) {
		len = (uint32_t)n;
		memcpy(p, buf, len);
	}
	/* Maybe one byte changed: a frame that nearly decodes. */
	{
		uint8_t m = fz_u8(in);

		if (m & 1 && len) {
			uint8_t *q = p - *shift;

			q[fz_u16(in) % len] ^= (uint8_t)(fz_u8(in) | 1);
		}
	}
	return len;
}

/* A frame from the pool, built by mk_frame: its address and length; 0 if
 * the pool is empty. */
static uint64_t take_frame(struct umem *u, struct fz_in *in, uint32_t *len)
{
	int64_t idx = umem_alloc(u);
	uint64_t addr;
	uint32_t shift;

	*len = 0;
	if (idx < 0)
		return 0;
	addr = umem_addr(u, (uint32_t)idx) + XPORT_UMEM_HEADROOM;
	*len = mk_frame(in, umem_data(u, addr), u->frame_size - XPORT_UMEM_HEADROOM, &shift);
	if (!*len) {    /* a builder refused its fields */
		umem_free(u, (uint32_t)idx);
		return 0;
	}
	return addr - shift;
}

/* How far time moves: 1 ns to about 1 s, mostly short. */
static uint64_t time_step(struct fz_in *in)
{
	uint8_t k = fz_u8(in);
	uint64_t v = fz_u16(in);

	return k < 128 ? v : k < 224 ? v * 1000 : k < 252 ? v * 100000 : v * 16000;
}

/* ---- switchd ------------------------------------------------------------- */

#ifdef FZ_DEBUG
/* What each part of sw_core_deadline() says, relative to now. */
static void sw_why(struct sw *s)
{
	for (int i = 0; i < s->ncps; i++)
		if (s->cps[i].ops->next_timer)
			fprintf(stderr, "cp %s next %lld\n", s->cps[i].ops->name,
				(long long)(s->cps[i].ops->next_timer(s->cps[i].cp) - s->now));
	for (int i = 0; i < s->nports; i++) {
		const struct sw_port *p = &s->ports[i];

		fprintf(stderr, "port %d next_tx %lld wd %lld frx %lld fc %d out %u\n", i,
			(long long)(p->next_tx_ns - s->now), (long long)(p->wd_next - s->now),
			p->frx.cfg.mode != FC_RX_NONE ? (long long)(fc_rx_next(&p->frx) - s->now) : 0,
			p->cfg->fc, s->voq->out_total[i]);
	}
}
#else
static void sw_why(struct sw *s) { }
#endif

static void sw_deadline_ok(struct sw *s)
{
	if (sw_core_deadline(s) <= s->now)
		sw_why(s);
	/* After a pass, nothing is due now: a deadline in the past is a
	 * loop that would spin. */
	fz_check(sw_core_deadline(s) > s->now);
}

static void run_switch(struct fz_in *in)
{
	static struct fz_sw z;
	struct sw *s;

	if (fz_sw_create(&z, in, "")) {
		fz_sw_destroy(&z);
		return;
	}
	s = z.s;
	fz_sw_check(&z);
	for (int step = 0; step < MAX_STEPS && in->n; step++) {
		uint8_t op = fz_u8(in);

		switch (op % 8) {
		case 0:
		case 1:
		case 2:
		case 3: {       /* a frame into a port */
			struct sw_port *p = &s->ports[fz_u8(in) % s->nports];
			uint32_t len;
			uint64_t addr = take_frame(z.u, in, &len);

			if (!len)
				break;
			if (!sw_rx_frame(s, p, addr, len))
				umem_free(z.u, umem_idx(z.u, addr));
			if (op & 0x80) {
				sw_pass(s);
				sw_deadline_ok(s);
			}
			break;
		}
		case 4:         /* time moves on, one pass */
			s->now += time_step(in);
			sw_pass(s);
			sw_deadline_ok(s);
			break;
		case 5: {       /* every deadline up to a horizon */
			uint64_t end = s->now + time_step(in);

			sw_pass(s);
			for (int i = 0; i < 64; i++) {
				uint64_t d = sw_core_deadline(s);

				if (d > end)
					break;
				fz_check(d > s->now);
				s->now = d;
				sw_pass(s);
			}
			break;
		}
		case 6: {       /* a port's TX ring: full, nearly, or roomy */
			uint8_t v = fz_u8(in);

			z.k.cap[v % s->nports] = (v >> 2) % 3 == 0 ? 0 : (v >> 2) % 3 == 1 ? 1 : 64;
			break;
		}
		case 7: {       /* `mark PORT N`, as the loop applies it */
			uint8_t v = fz_u8(in);

			s->ports[v % s->nports].mark_pending = v & 0x80 ? UINT64_MAX : fz_u8(in);
			break;
		}
		}
		fz_sw_check(&z);
	}
	/* Drain: everything queued leaves or is dropped in bounded time once
	 * every ring takes frames again, unless paused (then still balanced). */
	for (int i = 0; i < s->nports; i++)
		z.k.cap[i] = 64;
	s->now += 1000000000ull;
	sw_pass(s);
	fz_sw_check(&z);
	fz_sw_destroy(&z);
}

/* ---- hostd --------------------------------------------------------------- */

static void hd_deadline_ok(struct hd *h)
{
	fz_check(hd_core_deadline(h) > h->now);
}

static void run_host(struct fz_in *in)
{
	static struct fz_hd z;
	struct hd *h;

	if (fz_hd_create(&z, in, "")) {
		fz_hd_destroy(&z);
		return;
	}
	h = z.h;
	fz_hd_check(&z);
	for (int step = 0; step < MAX_STEPS && in->n; step++) {
		uint8_t op = fz_u8(in);

		switch (op % 8) {
		case 0:
		case 1: {       /* from the host stack */
			uint32_t len;
			uint64_t addr = take_frame(z.u, in, &len);

			if (len)
				hd_rx_host_frame(h, addr, len);
			break;
		}
		case 2:
		case 3: {       /* from the switch */
			uint32_t len;
			uint64_t addr = take_frame(z.u, in, &len);

			if (len && !hd_rx_up_frame(h, addr, len))
				umem_free(z.u, umem_idx(z.u, addr));
			break;
		}
		case 4:
			h->now += time_step(in);
			hd_pass(h);
			hd_deadline_ok(h);
			break;
		case 5: {
			uint64_t end = h->now + time_step(in);

			hd_pass(h);
			for (int i = 0; i < 64; i++) {
				uint64_t d = hd_core_deadline(h);

				if (d > end)
					break;
				fz_check(d > h->now);
				h->now = d;
				hd_pass(h);
			}
			break;
		}
		case 6: {
			uint8_t v = fz_u8(in);

			z.k.cap[v & 1] = (v >> 2) % 3 == 0 ? 0 : (v >> 2) % 3 == 1 ? 1 : 64;
			break;
		}
		case 7: {       /* `set-rate FLOW RATE|ipd=N`, as the loop applies it */
			struct flow *f = flow_by_id(h->flows, fz_u8(in) % 20);
			uint8_t v = fz_u8(in);

			if (f)
				hd_set_flow_rate(h, f, (uint64_t)fz_u16(in) * 100000 * (v & 0x0f),
						 v & 0x80 ? fz_u16(in) : -1);
			break;
		}
		}
		fz_hd_check(&z);
	}
	z.k.cap[0] = z.k.cap[1] = 64;
	h->now += 1000000000ull;
	hd_pass(h);
	fz_hd_check(&z);
	fz_hd_destroy(&z);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_level(LOG_LVL_ERR);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };

	if (!size)
		return 0;
	if (fz_u8(&in) & 1)
		run_host(&in);
	else
		run_switch(&in);
	return 0;
}
