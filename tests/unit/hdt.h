/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostd's core in virtual time for the unit tests: a core made with
 * hd_core_create() from a config's text over a frame pool without sockets,
 * the host stack's and the switch's frames fed in by hand, time moved by
 * hand, every frame it emits recorded by vt.h's sink. Shared by
 * test_hostd_core.c and the laws' own tests (test_hostd_ibcc.c).
 */
#ifndef L2CC_TEST_HDT_H
#define L2CC_TEST_HDT_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "vt.h"
#include "json.h"
#include "../../hostd/hostd_private.h"

/* Our host's MAC (vt_mac id), the peers it talks to, and the switch. */
enum { ME = 1, B = 2, C = 3, SW = 0x77 };
enum { P_HOST = HD_PORT_HOST, P_UP = HD_PORT_UP };

struct hdt {
	struct hd_cfg cfg;
	struct umem *u;
	struct vt_sink k;
	struct hd *h;
};

static inline int hdt_create_(struct hdt *t, const char *extra)
{
	char path[] = "/tmp/l2cc-hdt-XXXXXX", err[512], conf[2048];
	struct hd_ports_info pi = { .max_frame = 1500 + 22, .host_mtu = 1482,
				    .host_mac_known = true };
	struct dp_sink sink;
	int ret;

	memset(t, 0, sizeof(*t));
	snprintf(conf, sizeof(conf), "[hostd]\nhost_port = cc0\nuplink = up0\n%s%s",
		 strstr(extra, "link_rate") ? "" : "link_rate = 100M\n", extra);
	ret = vt_conf_file(path, conf);
	if (!ret)
		ret = hd_cfg_load(&t->cfg, path, NULL, 0, err, sizeof(err));
	unlink(path);
	if (ret) {
		printf("    config: %s\n", err);
		return ret;
	}
	ret = umem_create(&t->u, 4096, 2048, 0);
	if (ret)
		return ret;
	vt_mac(pi.host_mac, ME);
	vt_mac(pi.up_mac, 0xe0);
	vt_sink_init(&t->k, t->u, NULL);
	sink = vt_sink(&t->k);
	ret = hd_core_create(&t->h, &t->cfg, t->u, &sink, &pi, 1000000000ull);
	if (ret)
		return ret;
	t->k.now = &t->h->now;
	return 0;
}

#define hdt_create(t, extra) do {                                           \
	int _e = hdt_create_((t), (extra));                                  \
	CHECK_EQ(_e, 0);                                                     \
	if (_e)                                                              \
		return;                                                      \
} while (0)

static inline void hdt_destroy(struct hdt *t)
{
	hd_core_destroy(t->h);
	if (t->u)
		CHECK_EQ(t->u->held, 0);
	umem_destroy(t->u);
	vt_sink_fini(&t->k);
}

static inline void hdt_set(struct hdt *t, uint64_t at_ns)
{
	t->h->now = t->h->start_ns + at_ns;
}

/* A pass now, then one at every deadline up to `until` (ns since start). */
static inline void hdt_run(struct hdt *t, uint64_t until_ns)
{
	uint64_t end = t->h->start_ns + until_ns;

	hd_pass(t->h);
	for (int n = 0; n < 100000; n++) {
		uint64_t d = hd_core_deadline(t->h);

		if (d > end)
			break;
		/* A deadline that does not move on is a core that would spin. */
		CHECK(d > t->h->now || n == 0);
		if (d <= t->h->now && n)
			break;
		t->h->now = d > t->h->now ? d : t->h->now;
		hd_pass(t->h);
	}
	t->h->now = end;
	hd_pass(t->h);
}

/* The host stack sends a frame of len bytes to dst. */
static inline void hdt_host(struct hdt *t, int dst, uint32_t len)
{
	struct vt_eth e = { .dst = (uint8_t)dst, .src = ME, .prio = -1, .len = len };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);

	hd_rx_host_frame(t->h, addr, l);
}

/* A frame from the switch: a tagged data frame of src's flow. */
static inline bool hdt_up_data(struct hdt *t, int src, uint16_t flow, uint32_t seq, bool fecn)
{
	struct vt_eth e = { .dst = ME, .src = (uint8_t)src, .prio = -1, .len = 500, .tag = true,
			    .flow = flow, .seq = seq };
	uint32_t l;
	uint64_t addr = vt_frame_make(t->u, &e, &l);
	bool taken;

	if (fecn)
		CHECK_EQ(wire_tag_set_fecn(umem_data(t->u, addr), l), 0);
	taken = hd_rx_up_frame(t->h, addr, l);
	if (!taken)
		umem_free(t->u, umem_idx(t->u, addr));
	return taken;
}

/* A built frame from the switch (PAUSE, CREDIT, CNP, ACK). */
static inline void hdt_up_raw(struct hdt *t, const uint8_t *buf, int len)
{
	int64_t idx = umem_alloc(t->u);
	uint64_t addr = umem_addr(t->u, (uint32_t)idx) + XPORT_UMEM_HEADROOM;

	memcpy(umem_data(t->u, addr), buf, len);
	CHECK(hd_rx_up_frame(t->h, addr, (uint32_t)len));
}

static inline void hdt_ack(struct hdt *t, int from, uint16_t flow, uint32_t cum, uint32_t frames, bool ece)
{
	struct wire_ack a = { .flow = flow, .flags = ece ? L2CC_ACK_ECE : 0, .cum_seq = cum,
			      .frames = frames };
	uint8_t buf[128], me[6], src[6];

	vt_mac(me, ME);
	vt_mac(src, (uint8_t)from);
	hdt_up_raw(t, buf, wire_build_ack(buf, sizeof(buf), me, src, &a));
}

/* The l2cc control messages of a type the sink saw on the uplink from `from`. */
static inline int hdt_ctrl(struct hdt *t, uint32_t from, int type, const struct vt_frame **last)
{
	int n = 0;

	for (uint32_t i = from; i < t->k.n; i++) {
		const struct vt_frame *f = &t->k.log[i];
		const uint8_t *body;
		struct eth_info ei;
		size_t blen;

		/* L2CI's messages come priority-tagged: after the tag */
		if (f->port != P_UP || wire_parse_eth(f->data, f->len, &ei) ||
		    ei.ethertype != L2CC_ETH_P_CTRL)
			continue;
		if (wire_parse_ctrl(f->data + ei.hlen, f->len - ei.hlen, &body, &blen) == type) {
			n++;
			if (last)
				*last = f;
		}
	}
	return n;
}

/* The body of a logged control message; an empty one (and a failed check)
 * when the frame the test looked for is not there. */
static inline const uint8_t *hdt_body(const struct vt_frame *f, size_t *blen)
{
	static const uint8_t none[1];
	const uint8_t *body;
	struct eth_info ei;

	*blen = 0;
	CHECK(f != NULL);
	if (!f || wire_parse_eth(f->data, f->len, &ei) ||
	    wire_parse_ctrl(f->data + ei.hlen, f->len - ei.hlen, &body, blen) <= 0) {
		*blen = 0;
		return none;
	}
	return body;
}

/* Data frames (tagged) on the uplink from `from`. */
static inline int hdt_data(struct hdt *t, uint32_t from)
{
	int n = 0;

	for (uint32_t i = from; i < t->k.n; i++)
		n += t->k.log[i].port == P_UP && vt_ethertype(&t->k.log[i]) == L2CC_ETH_P_DATA_TAG;
	return n;
}

/* The text of key's value in the law's describe of flow f, as the control
 * socket's `flows` shows it under "law" (a string without its quotes), in
 * buf; NULL when the flow or the key is absent. */
static inline const char *hdt_law_text(struct hdt *t, const struct flow *f, const char *key,
				       char *buf, size_t n)
{
	const char *p, *end, *ret = NULL;
	char pat[64];
	struct jw w;

	if (!f || !t->h->rpo->describe || !n)
		return NULL;
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	t->h->rpo->describe(t->h->rp, f, &w);
	jw_obj_end(&w);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = w.buf ? strstr(w.buf, pat) : NULL;
	if (p) {
		p += strlen(pat);
		p += *p == '"';
		end = p + strcspn(p, "\",}");
		snprintf(buf, n, "%.*s", (int)(end - p), p);
		ret = buf;
	}
	jw_free(&w);
	return ret;
}

#endif
