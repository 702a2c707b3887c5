/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * switchd's and hostd's datapath cores for the fuzzers, built in memory as
 * the unit tests build them (tests/unit/swt.h, hdt.h): a config's text
 * (chosen by input bytes) loaded by the daemons' own loaders, a frame pool
 * without sockets, a sink that counts and frees what the cores emit (and
 * may say a port's TX ring is full), and stand-in xports (no socket, no
 * XDP program) so the control commands that read a port's ring counters
 * and XDP statistics run too. The frame accounting the daemons report as
 * `umem.consistent` (xport_check: free + held + Σfill + Σtx == frames) and
 * each core's own record of the frames it holds are checked by
 * fz_sw_check() and fz_hd_check(): a failure abort()s.
 */
#ifndef L2CC_FZ_CORE_H
#define L2CC_FZ_CORE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "l2cc_xdp.skel.h"
#include "log.h"
#include "wire.h"
#include "xport.h"
#include "../../switchd/switch_private.h"
#include "../../hostd/hostd_private.h"

#define FZ_FRAMES 512           /* a small pool: running out is a case too */
#define FZ_MAX_PORTS 4

static inline void fz_check_(int cond, const char *what, int line)
{
	if (!cond) {
		fprintf(stderr, "fz check failed (line %d): %s\n", line, what);
		abort();
	}
}
#define fz_check(c) fz_check_(!!(c), #c, __LINE__)

/* A cursor over the fuzzer's input: bytes past the end read as 0. */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz_in *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static inline uint16_t fz_u16(struct fz_in *in)
{
	return (uint16_t)(fz_u8(in) | fz_u8(in) << 8);
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	return (uint32_t)fz_u16(in) | (uint32_t)fz_u16(in) << 16;
}

/* ---- the pool ------------------------------------------------------------- */

/* One pool for the process, as umem_create() leaves it at the start of
 * every input (every frame free, in its order): a fresh mmap per input
 * costs more in page faults than the rest of a run. */
static inline struct umem *fz_umem(void)
{
	static struct umem *u;

	if (!u && umem_create(&u, FZ_FRAMES, 2048, 0))
		abort();
	fz_check(u->held == 0);
	for (uint32_t i = 0; i < u->nframes; i++)
		u->free[i] = u->nframes - 1 - i;
	u->nfree = u->nframes;
	return u;
}

/* ---- the sink --------------------------------------------------------- */

struct fz_sink {
	struct umem *u;
	uint32_t cap[FZ_MAX_PORTS];     /* frames a port takes per flush */
	uint32_t queued[FZ_MAX_PORTS];
	uint64_t sent[FZ_MAX_PORTS];    /* frames that left by port */
	uint32_t max_len;               /* the largest frame a port may emit */
};

static uint32_t fz_space(void *ctx, uint32_t port)
{
	struct fz_sink *k = ctx;

	fz_check(port < FZ_MAX_PORTS);
	return k->cap[port] > k->queued[port] ? k->cap[port] - k->queued[port] : 0;
}

static void fz_put(void *ctx, uint32_t port, uint64_t addr, uint32_t len)
{
	struct fz_sink *k = ctx;
	uint32_t idx = umem_idx(k->u, addr);
	struct eth_info ei;

	fz_check(port < FZ_MAX_PORTS && idx < k->u->nframes);
	/* Nothing is put beyond what space() allowed, nor out of its frame. */
	fz_check(k->queued[port] < k->cap[port]);
	fz_check(len >= L2CC_ETH_HLEN && len <= k->max_len);
	fz_check((addr & (k->u->frame_size - 1)) + len <= k->u->frame_size);
	fz_check(wire_parse_eth(umem_data(k->u, addr), len, &ei) == 0);
	k->queued[port]++;
	k->sent[port]++;
	umem_free(k->u, idx);
}

static uint32_t fz_size(void *ctx, uint32_t port)
{
	return ((struct fz_sink *)ctx)->cap[port];
}

static void fz_flush(void *ctx, uint32_t port)
{
	struct fz_sink *k = ctx;

	k->queued[port] = 0;
}

static const struct dp_sink_ops fz_sink_ops = { .space = fz_space, .size = fz_size,
						.put = fz_put, .flush = fz_flush };

/* ---- stand-in ports ----------------------------------------------------- */

/* No socket (fd -1) and no XDP program: the statistics come out as 0. The
 * skeleton's maps are NULL, which bpf_map__fd() refuses (-EINVAL). */
struct fz_ports {
	struct xport xp[FZ_MAX_PORTS];
	struct xport *xps[FZ_MAX_PORTS];
	struct l2cc_xdp_bpf skel;
};

static inline void fz_ports_init(struct fz_ports *fp, struct umem *u, int n)
{
	memset(fp, 0, sizeof(*fp));
	for (int i = 0; i < n; i++) {
		struct xport *x = &fp->xp[i];

		snprintf(x->ifname, sizeof(x->ifname), "fz%d", i);
		x->ifindex = 100 + i;
		x->mac[0] = 0x02;
		x->mac[5] = (uint8_t)(0xe0 + i);
		x->mtu = 1500;
		x->umem = u;
		x->fd = -1;
		x->link_fd = -1;
		x->skel = &fp->skel;
		fp->xps[i] = x;
	}
}

/* ---- config files ------------------------------------------------------- */

/* A config's text as a file the loaders read by path: one memfd. */
static inline int fz_conf_path(const char *text, char *path, size_t n)
{
	static int fd = -1;
	size_t len = strlen(text);

	if (fd < 0)
		fd = memfd_create("fz_core", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, text, len, 0) != (ssize_t)len)
		return -EIO;
	snprintf(path, n, "/proc/self/fd/%d", fd);
	return 0;
}

static inline int fz_names_len(const char *const *names)
{
	int n = 0;

	while (names[n])
		n++;
	return n;
}

/* ---- switchd ------------------------------------------------------------ */

struct fz_sw {
	struct sw_cfg cfg;
	struct umem *u;
	struct fz_sink k;
	struct fz_ports fp;
	struct sw *s;
	uint8_t *seen;                  /* [nframes] scratch for fz_sw_check */
};

/*
 * A switch of 2..4 ports whose settings come from the input: the [switch]
 * marking (any congestion point of the registry) and per port its flow
 * control, buffer (bytes or frames), rate, role, its own marking, the pause
 * watchdog and its action, the MAC limit; plus a flood queue and the CPU
 * queue. ctl_socket: the control socket's path ("" for the default, which
 * only the control fuzzer's sw_ctl_init() opens). 0, or -errno.
 */
static inline int fz_sw_create(struct fz_sw *z, struct fz_in *in, const char *ctl_socket)
{
	static const char *const fc[] = { "none", "pause", "pfc", "credit" };
	static const char *const act[] = { "drop", "forward", "alert" };
	static const char *const rates[] = { "unlimited", "1G", "100M", "10M" };
	char text[4096], path[64], err[512];
	uint8_t macs[SW_MAX_PORTS][6];
	uint32_t mtus[SW_MAX_PORTS];
	struct dp_sink sink;
	int ncp = fz_names_len(cp_names), nports, len, ret;
	uint8_t b = fz_u8(in);

	memset(z, 0, sizeof(*z));
	nports = 2 + b % 3;
	len = snprintf(text, sizeof(text),
		       "[switch]\nctl_socket = %s\nmarking = %s\nflood_queue = %u\ncpu_queue = %u\n"
		       "ring_size = 64\npriority_sched = %s\nfdb_size = 16\n",
		       ctl_socket[0] ? ctl_socket : "/nonexistent/fz.sock",
		       cp_names[(b >> 2) % ncp], 1 + fz_u8(in) % 32, 1 + fz_u8(in) % 16,
		       b & 0x80 ? "rr" : "strict");
	for (int i = 0; i < nports; i++) {
		uint8_t c = fz_u8(in), d = fz_u8(in), e = fz_u8(in);

		len += snprintf(text + len, sizeof(text) - len,
				"[port p%d]\nflow_control = %s\nbuffer = %u%s\nrate = %s\nrole = %s\n"
				"pause_watchdog = %s\npause_watchdog_action = %s\n"
				"mac_limit = %u\nmac_move_limit = %u\nquiet_stack = no\n",
				i, fc[c & 3], d & 1 ? 2 + (d >> 1) % 32 : 2 + (d >> 1) * 64,
				d & 1 ? "frames" : "", rates[(c >> 2) & 3],
				(c & 0x10) ? "switch" : "host",
				(c & 0x20) ? "5ms" : (c & 0x40) ? "0" : "200ms", act[e % 3],
				(e >> 2) & 7, (e >> 5) & 3);
		if (c & 0x80)
			len += snprintf(text + len, sizeof(text) - len, "marking = %s\n",
					cp_names[e % ncp]);
	}
	if (fz_conf_path(text, path, sizeof(path)))
		return -EIO;
	ret = sw_cfg_load(&z->cfg, path, NULL, 0, err, sizeof(err));
	if (ret)
		return ret;     /* a combination the loader refuses: nothing to run */
	z->u = fz_umem();
	fz_ports_init(&z->fp, z->u, z->cfg.nports);
	for (int i = 0; i < z->cfg.nports; i++) {
		memcpy(macs[i], z->fp.xp[i].mac, 6);
		mtus[i] = 1500;
		z->k.cap[i] = 64;
	}
	z->k.u = z->u;
	z->k.max_len = 2048 - XPORT_UMEM_HEADROOM + L2CC_TAG_LEN;
	sink = (struct dp_sink){ .ops = &fz_sink_ops, .ctx = &z->k };
	z->seen = calloc(FZ_FRAMES, 1);
	if (!z->seen)
		return -ENOMEM;
	ret = sw_core_create(&z->s, &z->cfg, z->u, &sink, (const uint8_t (*)[6])macs, mtus,
			     1000000000ull);
	if (ret)
		return ret;
	z->s->xps = z->fp.xps;
	for (int i = 0; i < z->cfg.nports; i++)
		z->s->ports[i].xp = &z->fp.xp[i];
	return 0;
}

static inline void fz_sw_destroy(struct fz_sw *z)
{
	if (z->s) {
		z->s->xps = NULL;
		sw_core_destroy(z->s);
		fz_check(z->u->held == 0);      /* every frame is back in the pool */
	}
	free(z->seen);
	memset(z, 0, sizeof(*z));
}

/*
 * The switch's books balance: the pool's count (xport_check, what `status`
 * reports as conserved); every frame it holds is in exactly one VOQ, none
 * also free; the per-output and per-VOQ counts add up; each input buffer's
 * occupancy is what its queued frames are charged (a flooded frame once,
 * for all its copies); flood groups, flood copies waiting per output and
 * flooded frames held per input agree; the transmit counters add up.
 */
static inline void fz_sw_check(struct fz_sw *z)
{
	struct sw *s = z->s;
	struct voq *v = s->voq;
	uint32_t held = 0, groups = 0;
	uint64_t occ[SW_MAX_PORTS + 1][L2CC_NPRIO];
	uint32_t fwait[SW_MAX_PORTS], fheld[SW_MAX_PORTS + 1];
	static uint8_t gseen[FZ_FRAMES];

	fz_check(xport_check(s->umem, s->xps, s->nports) == 0);
	memset(z->seen, 0, s->umem->nframes);
	memset(gseen, 0, sizeof(gseen));
	memset(occ, 0, sizeof(occ));
	memset(fwait, 0, sizeof(fwait));
	memset(fheld, 0, sizeof(fheld));
	for (uint32_t i = 0; i < s->umem->nfree; i++) {
		uint32_t idx = s->umem->free[i];

		fz_check(idx < s->umem->nframes && !z->seen[idx]);
		z->seen[idx] = 1;
	}
	for (uint32_t in = 0; in < v->nports; in++) {
		struct sw_port *ip = &s->ports[in];

		for (uint32_t out = 0; out < (uint32_t)s->nports; out++) {
			for (int prio = 0; prio < L2CC_NPRIO; prio++) {
				const struct voq_q *q = voq_q(v, in, out, prio);
				uint32_t idx = voq_head(v, in, out, prio), n = 0;
				uint64_t bytes = 0;

				for (; n < q->frames; n++) {
					const struct voq_frame *f = voq_frame(v, idx);

					fz_check(idx < s->umem->nframes && !z->seen[idx]);
					z->seen[idx] = 2;
					bytes += f->len;
					if (f->flags & VOQ_F_FLOOD) {
						uint32_t g = s->flood_of[idx];

						fz_check(g < s->umem->nframes && s->floods[g].refs);
						fwait[out]++;
						if (!gseen[g]) {
							gseen[g] = 1;
							groups++;
							fheld[in]++;
							occ[in][prio] += ip->unit_frames ? 1 : s->floods[g].len;
						}
					} else if (f->flags & VOQ_F_CHARGED) {
						occ[in][prio] += ip->unit_frames ? 1 : f->len;
					}
					idx = f->next;
				}
				fz_check(bytes == q->bytes);
				held += n;
			}
		}
	}
	fz_check(held == s->umem->held);
	fz_check(s->nflood_free + groups == s->umem->nframes);
	for (int out = 0; out < s->nports; out++) {
		uint32_t total = 0;

		for (int prio = 0; prio < L2CC_NPRIO; prio++) {
			uint32_t n = 0;

			for (uint32_t in = 0; in < v->nports; in++)
				n += voq_q(v, in, out, prio)->frames;
			fz_check(n == v->out_frames[(size_t)out * VOQ_NPRIO + prio]);
			total += n;
		}
		fz_check(total == v->out_total[out]);
		fz_check(fwait[out] == s->ports[out].flood_waiting);
	}
	for (int i = 0; i <= s->nports; i++) {
		struct sw_port *p = &s->ports[i];
		uint64_t tx = p->st.ctrl_tx_frames;

		fz_check(fheld[i] == p->flood_held);
		for (int prio = 0; prio < L2CC_NPRIO; prio++) {
			fz_check(occ[i][prio] == p->occ[prio]);
			fz_check(p->occ[prio] <= p->cap && p->peak[prio] >= p->occ[prio]);
			tx += p->st.prio[prio].tx_frames;
		}
		fz_check(tx == p->st.tx_frames);
		if (i < s->nports)
			fz_check(p->st.tx_frames == z->k.sent[i]);
	}
}

/* ---- hostd -------------------------------------------------------------- */

struct fz_hd {
	struct hd_cfg cfg;
	struct umem *u;
	struct fz_sink k;
	struct fz_ports fp;
	struct hd *h;
	uint8_t *seen;
};

/*
 * A hostd whose law (any of the registry), mode, granularity, flow control,
 * window, tag and queue come from the input; a law the loader refuses in
 * that combination falls back to the reliable mode, then to the first law.
 */
static inline int fz_hd_create(struct fz_hd *z, struct fz_in *in, const char *ctl_socket)
{
	static const char *const fc[] = { "auto", "none", "pause", "pfc", "credit" };
	static const char *const gran[] = { "dst", "5tuple", "prio" };
	static const char *const rates[] = { "unlimited", "1G", "100M", "10M" };
	struct hd_ports_info pi = { .max_frame = 1500 + 22, .host_mtu = 1482,
				    .host_mac_known = true };
	char text[2048], path[64], err[512];
	int nlaw = fz_names_len(rp_names), ret = -EINVAL;
	uint8_t a = fz_u8(in), b = fz_u8(in), c = fz_u8(in);
	struct dp_sink sink;

	memset(z, 0, sizeof(*z));
	for (int attempt = 0; attempt < 3 && ret; attempt++) {
		snprintf(text, sizeof(text),
			 "[hostd]\nctl_socket = %s\nhost_port = cc0\nuplink = up0\n"
			 "link_rate = %s\nflow_control = %s\ngranularity = %s\nmode = %s\n"
			 "max_flows = %u\nqueue = %uK\npass_queue = 8\ntag = %s\nack_every = %u\n"
			 "ack_timeout = %s\ncnp_interval = %s\nring_size = 64\nflow_idle = %s\n"
			 "[law]\nlaw = %s\nwindow = %u\nrate = %s\n",
			 ctl_socket[0] ? ctl_socket : "/nonexistent/fz.sock",
			 rates[1 + (a & 3) % 3], fc[(a >> 2) % 5], gran[(a >> 5) % 3],
			 attempt || (b & 1) ? "reliable" : "unreliable", 2 + (b >> 1) % 16,
			 2 + c % 64, c & 0x40 ? "no" : "yes", 1 + (c >> 7) * 3,
			 b & 0x20 ? "2ms" : "0", b & 0x40 ? "1ms" : "0", b & 0x80 ? "1ms" : "10s",
			 rp_names[attempt == 2 ? 0 : (c + b) % nlaw], (a >> 7) * 4,
			 rates[(b >> 3) & 3]);
		if (fz_conf_path(text, path, sizeof(path)))
			return -EIO;
		ret = hd_cfg_load(&z->cfg, path, NULL, 0, err, sizeof(err));
	}
	if (ret)
		return ret;
	z->u = fz_umem();
	fz_ports_init(&z->fp, z->u, 2);
	pi.host_mac[0] = 0x02;
	pi.host_mac[5] = 1;
	memcpy(pi.up_mac, z->fp.xp[HD_PORT_UP].mac, 6);
	z->k.u = z->u;
	z->k.cap[HD_PORT_HOST] = z->k.cap[HD_PORT_UP] = 64;
	z->k.max_len = 2048 - XPORT_UMEM_HEADROOM + L2CC_TAG_LEN;
	sink = (struct dp_sink){ .ops = &fz_sink_ops, .ctx = &z->k };
	z->seen = calloc(FZ_FRAMES, 1);
	if (!z->seen)
		return -ENOMEM;
	ret = hd_core_create(&z->h, &z->cfg, z->u, &sink, &pi, 1000000000ull);
	if (ret)
		return ret;
	z->h->host = &z->fp.xp[HD_PORT_HOST];
	z->h->up = &z->fp.xp[HD_PORT_UP];
	return 0;
}

static inline void fz_hd_destroy(struct fz_hd *z)
{
	if (z->h) {
		hd_core_destroy(z->h);
		fz_check(z->u->held == 0);
	}
	free(z->seen);
	memset(z, 0, sizeof(*z));
}

static inline void fz_seen(struct fz_hd *z, uint32_t idx)
{
	fz_check(idx < z->u->nframes && !z->seen[idx]);
	z->seen[idx] = 1;
}

/*
 * hostd's books balance: the pool (xport_check, `status`'s consistent);
 * every frame it holds is in one flow's queue, the notification ring or
 * the pass ring, exactly once; each flow queue's frames and bytes are what
 * its lanes link; the port counters add up.
 */
static inline void fz_hd_check(struct fz_hd *z)
{
	struct hd *h = z->h;
	const struct hd_fring *rings[2] = { &h->notify, &h->pass };
	uint32_t held = 0, max = flow_table_max_flows(h->flows);

	fz_check(xport_check(h->umem, h->xps[0] ? h->xps : z->fp.xps, 2) == 0);
	memset(z->seen, 0, z->u->nframes);
	for (uint32_t i = 0; i < z->u->nfree; i++)
		fz_seen(z, z->u->free[i]);
	for (int r = 0; r < 2; r++) {
		fz_check(rings[r]->n <= rings[r]->cap);
		for (uint32_t i = 0; i < rings[r]->n; i++)
			fz_seen(z, rings[r]->idx[(rings[r]->head + i) % rings[r]->cap]);
		held += rings[r]->n;
	}
	for (uint32_t id = 0; id < max; id++) {
		struct flow *f = flow_by_id(h->flows, (uint16_t)id);
		uint32_t n = 0;
		uint64_t bytes = 0;

		if (!f)
			continue;
		for (int l = 0; l < FLOW_LANES; l++) {
			uint32_t idx = f->q.lh[l];

			if (!(f->q.lmask & (1u << l)))
				continue;
			for (;;) {
				fz_seen(z, idx);
				n++;
				bytes += h->frames[idx].len;
				fz_check(n <= f->q.frames);
				if (idx == f->q.lt[l])
					break;
				idx = h->frames[idx].next;
			}
		}
		fz_check(n == f->q.frames && bytes == f->q.bytes);
		fz_check(f->q.bytes <= f->q.limit || f->q.frames <= 1);
		held += n;
	}
	fz_check(held == z->u->held);
	fz_check(h->hst.tx_frames == z->k.sent[HD_PORT_HOST]);
	fz_check(h->ust.tx_frames == z->k.sent[HD_PORT_UP]);
}

#endif
