// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program every switchd/hostd port attaches: hand each frame to the
 * AF_XDP socket bound to its receive queue. PAUSE/PFC and the partner's
 * credit limits are applied here first (l2cc_xdp_ctl_rx), to a map the
 * daemon reads before it transmits: they must not wait behind data in a
 * receive ring the daemon holds. On switchd's forwarding = xdp ports
 * (l2cc_fwd) known unicast leaves in the kernel. Everything else happens in
 * the daemon.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "l2cc_shared.h"

/* The daemon writes the configuration fields at any time: read each once. */
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

/*
 * The program loads with CAP_BPF and CAP_NET_ADMIN alone (the systemd
 * units; tests/bpf loads it so). A verifier without CAP_PERFMON keeps
 * Spectre v1 masking and refuses a register added to a map value or packet
 * pointer that differs by path: "tried to add from different maps, paths
 * or scalars, pointer arithmetic with it prohibited for !root" (one mask
 * limit per instruction). Branches that each end in the same write at
 * another constant offset (a counter per verdict, a field per priority)
 * are what clang merges into one write through a register offset, a phi of
 * the constants. So a counter adds 0 or 1 rather than being incremented in
 * a branch, and a branch that must stay (a priority's writes) ends with
 * NO_MERGE: its operand differs per branch and an inline asm operand
 * cannot become a phi, so clang cannot sink the writes before it into a
 * common tail. It emits nothing; each n is used once. For the same
 * verifier packet pointers move by constants only, lengths come from
 * bpf_xdp_get_buff_len rather than subtracting packet pointers, and stack
 * is written before it is read.
 */
#define NO_MERGE(n) asm volatile("" : : "i"(n))

/* Set through skel->rodata before load: enum l2cc_xdp_fallback. */
const volatile __u32 cfg_fallback = L2CC_XDP_FALLBACK_DROP;

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, L2CC_XSKMAP_MAX);
	__type(key, __u32);     /* rx queue index */
	__type(value, __u32);   /* AF_XDP socket fd (on update) */
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, L2CC_XSKMAP_MAX + 1);
	__type(key, __u32);     /* rx queue index; L2CC_XSKMAP_MAX: any above */
	__type(value, struct l2cc_xdp_qstat);
} xdp_qstats SEC(".maps");

/* ---- pure-XDP forwarding (switchd forwarding = xdp) -------------------- */

/* Set through skel->rodata by switchd for a port with forwarding = xdp;
 * 0 (hostd, every other port) leaves the fast path out of the program. */
const volatile __u32 cfg_fwd = 0;

/* Shared by all ports of one switch (the first port's fds, reused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, L2CC_FWD_FDB_DEFAULT);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct l2cc_fwd_key);
	__type(value, struct l2cc_fwd_entry);
} fwd_fdb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, L2CC_FWD_MAX_PORTS);
	__type(key, __u32);     /* switchd's port index */
	__type(value, __u32);   /* its ifindex */
} fwd_devs SEC(".maps");

/* This port's own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l2cc_fwd_port);
} fwd_port SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, L2CC_FWD_STAT_MAX);
	__type(key, __u32);     /* enum l2cc_fwd_stat */
	__type(value, __u64);
} fwd_stats SEC(".maps");

/* ---- control frames (see l2cc_shared.h, struct l2cc_xdp_ctl) ----------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct l2cc_xdp_ctl);
} xdp_ctl SEC(".maps");

/* The writers' lock: a map value holding a bpf_spin_lock cannot be
 * mmapped, so it lives apart from the state it guards. */
struct l2cc_xdp_ctl_lock {
	struct bpf_spin_lock lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l2cc_xdp_ctl_lock);
} xdp_ctl_lock SEC(".maps");

/* Rung after every frame applied: its fd is in the daemon's event loop,
 * which sleeps until the next thing it has to do and would not otherwise
 * hear of a frame that never reaches its socket. Records carry nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} xdp_ctl_bell SEC(".maps");

enum { CTL_PASS = 0, CTL_TAKEN, CTL_APPLIED_PASS };

#define CTL_MACCTRL_PAUSE_LEN 4
#define CTL_MACCTRL_PFC_LEN   ((int)sizeof(struct l2cc_macctrl))
#define CTL_HDR_LEN           ((int)sizeof(struct l2cc_ctrl_hdr))
#define CTL_CREDIT_LEN        ((int)sizeof(struct l2cc_credit))

static __always_inline __u16 ctl_be16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* What wire_quanta_to_ns() says: rounded up, 10G when no rate is set. */
static __always_inline __u64 ctl_quanta_ns(__u16 quanta, __u64 rate)
{
	__u64 bit_ns = (__u64)quanta * 512 * 1000000000ull;

	if (!rate)
		rate = 10000000000ull;
	return (bit_ns + rate - 1) / rate;
}

/* v where sel (0 or 1) is set, else old, without a branch: see NO_MERGE. */
static __always_inline __u64 ctl_pick(__u64 sel, __u64 v, __u64 old)
{
	__u64 m = -sel;  /* sel is 0 or 1 */

	return (v & m) | (old & ~m);
}

/*
 * fc_tx's pause of each priority in cls as the daemon would apply it now;
 * the daemon replays the latest entry per priority at its arrival time.
 */
static __always_inline void ctl_pause(struct l2cc_xdp_ctl *c, __u8 cls,
				      const __u16 *quanta, const __u64 *durs,
				      __u64 now)
{
	__u64 on = 0, off = 0;

#pragma unroll
	for (int i = 0; i < L2CC_NPRIO; i++) {
		__u64 q = quanta[i] != 0;

		if (!(cls & (1u << i)))
			continue;
		c->pause_n[i]++;
		c->pause_at[i] = now;
		c->pause_until[i] = (now + durs[i]) & -q;
		c->xoff_at[i] = ctl_pick(q, now, c->xoff_at[i]);
		on += q;
		off += q ^ 1;
		NO_MERGE(20 + i);
	}
	c->pauses += on;
	c->resumes += off;
}

/* Bump seq: a fetching atomic is a full barrier (BPF has no other), so a
 * reader that sees the new seq sees what was written before it. */
static __always_inline void ctl_seq_bump(struct l2cc_xdp_ctl *c)
{
	__u64 old = __sync_fetch_and_add(&c->seq, 1);

	(void)old;
}

/*
 * A frame to 01:80:C2:00:00:0x with the MAC control or l2cc control
 * ethertype, validated as the daemons' wire.c does: CTL_TAKEN when it was
 * applied, counted or found bad here (dropped), CTL_APPLIED_PASS for a
 * CREDIT whose limits were applied and whose sent counts the daemon still
 * reconciles in ring order, CTL_PASS for everything else.
 */
static __always_inline int l2cc_xdp_ctl_rx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *eth = data, *pl, *tp;
	__u32 rsv_off = 0;  /* the CREDIT's reserved byte, from data; 0: none */
	struct l2cc_xdp_ctl_lock *lk;
	struct l2cc_xdp_ctl *c;
	__u16 et, opcode = 0, q0 = 0, quanta[L2CC_NPRIO] = { 0 };
	__u64 limit[L2CC_NPRIO] = { 0 }, durs[L2CC_NPRIO] = { 0 }, now, rate;
	__u32 key = 0, flags, len, off = 2 * L2CC_ETH_ALEN, plen;
	__u8 cls = 0, unit = 0, pmask = 0;
	int verdict = CTL_TAKEN, bad = 0;  /* 1 malformed, 2 unsupported */
	int wake, apply = 0, ignored = 0, taken;
	/* 0 PAUSE, 1 PFC, 2 CREDIT. Initialised: a verifier without
	 * CAP_PERFMON (the systemd units) refuses reads of unwritten stack. */
	int kind = -1;

	if (data + L2CC_ETH_HLEN > data_end)
		return CTL_PASS;
	if (eth[0] != 0x01 || eth[1] != 0x80 || eth[2] != 0xc2 || eth[3] != 0x00 ||
	    eth[4] != 0x00 || (eth[5] & 0xf0))
		return CTL_PASS;
	c = bpf_map_lookup_elem(&xdp_ctl, &key);
	lk = bpf_map_lookup_elem(&xdp_ctl_lock, &key);
	if (!c || !lk)
		return CTL_PASS;
	flags = READ_ONCE(c->flags);
	if ((flags & (L2CC_XDPC_ON | L2CC_XDPC_UP)) != (L2CC_XDPC_ON | L2CC_XDPC_UP))
		return CTL_PASS;

	/* At most two VLAN tags, as wire_parse_eth(). The pointer moves by
	 * constants, never by a register: adding a scalar register to a
	 * packet pointer needs CAP_PERFMON (Spectre v1 masking), which the
	 * systemd units do not grant; off keeps the count for plen. */
	tp = eth + 2 * L2CC_ETH_ALEN;
	et = ctl_be16(tp);
#pragma unroll
	for (int t = 0; t < 2; t++) {
		if (et != L2CC_ETH_P_8021Q && et != L2CC_ETH_P_8021AD)
			break;
		if ((void *)(tp + L2CC_VLAN_HLEN + 2) > data_end)
			return CTL_PASS;     /* the daemon counts it malformed */
		tp += L2CC_VLAN_HLEN;
		off += L2CC_VLAN_HLEN;
		et = ctl_be16(tp);
	}
	off += 2;
	/* Not data_end - data: subtracting packet pointers needs CAP_PERFMON
	 * (pointer leaks), which the systemd units do not grant. */
	len = (__u32)bpf_xdp_get_buff_len(ctx);
	plen = len - off;
	pl = tp + 2;
	if (off > 2 * L2CC_ETH_ALEN + 2 + 2 * L2CC_VLAN_HLEN)
		return CTL_PASS;

	if (et == L2CC_ETH_P_MACCTRL) {
		if ((void *)(pl + 2) > data_end) {
			bad = 1;
			goto count;
		}
		opcode = ctl_be16(pl);
		if (opcode == L2CC_MACCTRL_PAUSE) {
			kind = 0;
			if ((void *)(pl + CTL_MACCTRL_PAUSE_LEN) > data_end) {
				bad = 1;
				goto count;
			}
			q0 = ctl_be16(pl + 2);
		} else if (opcode == L2CC_MACCTRL_PFC) {
			kind = 1;
			if ((void *)(pl + CTL_MACCTRL_PFC_LEN) > data_end) {
				bad = 1;
				goto count;
			}
			/* Bits 8..15 are reserved by 802.1Qbb. */
			cls = pl[3];
#pragma unroll
			for (int i = 0; i < L2CC_NPRIO; i++)
				quanta[i] = ctl_be16(pl + 4 + 2 * i);
		} else {
			bad = 2;
			goto count;
		}
	} else if (et == L2CC_ETH_P_CTRL) {
		__u16 blen;
		__u8 sunit;

		if ((void *)(pl + CTL_HDR_LEN) > data_end) {
			bad = 1;
			goto count;
		}
		if (pl[0] != L2CC_WIRE_VERSION) {
			bad = 2;
			goto count;
		}
		if (pl[1] == 0) {
			bad = 1;
			goto count;
		}
		/* Other types are the daemons' (hostd's CNP, ACK, L2CI). */
		if (pl[1] != L2CC_CTRL_CREDIT)
			return CTL_PASS;
		kind = 2;
		blen = ctl_be16(pl + 2);
		if (blen > plen - CTL_HDR_LEN || blen < CTL_CREDIT_LEN ||
		    (void *)(pl + CTL_HDR_LEN + CTL_CREDIT_LEN) > data_end) {
			bad = 1;
			goto count;
		}
		rsv_off = off + CTL_HDR_LEN + 3;
		unit = pl[CTL_HDR_LEN + 0];
		pmask = pl[CTL_HDR_LEN + 1];
		sunit = pl[CTL_HDR_LEN + 2];
		if ((unit != L2CC_CREDIT_BYTES && unit != L2CC_CREDIT_FRAMES) ||
		    (sunit != L2CC_CREDIT_BYTES && sunit != L2CC_CREDIT_FRAMES &&
		     sunit != L2CC_CREDIT_UNIT_NONE)) {
			bad = 1;
			goto count;
		}
#pragma unroll
		for (int i = 0; i < L2CC_NPRIO; i++) {
			__u64 v;

			__builtin_memcpy(&v, pl + CTL_HDR_LEN + 4 + 8 * i, 8);
			limit[i] = bpf_be64_to_cpu(v);
		}
	} else {
		return CTL_PASS;
	}

count:
	/* Helpers (the clock, the division's rate) before the lock: none may
	 * be called while it is held. */
	now = bpf_ktime_get_ns();
	rate = READ_ONCE(c->rate_bps);
	if (!bad && kind == 0) {
		__u64 d = ctl_quanta_ns(q0, rate);

#pragma unroll
		for (int i = 0; i < L2CC_NPRIO; i++) {
			durs[i] = d;
			quanta[i] = q0;
		}
		cls = 0xff;
	} else if (!bad && kind == 1) {
#pragma unroll
		for (int i = 0; i < L2CC_NPRIO; i++)
			durs[i] = ctl_quanta_ns(quanta[i], rate);
	}

	/* What the frame does, decided before the lock so that the locked
	 * section is straight-line but for three blocks (see NO_MERGE). */
	if (!bad && kind != 2) {
		if (flags & (kind == 0 ? L2CC_XDPC_PAUSE : L2CC_XDPC_PFC))
			apply = 1;
		else
			ignored = 1;
	} else if (!bad) {
		if (flags & L2CC_XDPC_CREDIT) {
			/* The daemon reconciles its received count (FCTBS)
			 * from the frame, in order behind the data before it. */
			verdict = CTL_APPLIED_PASS;
			apply = !!(flags & L2CC_XDPC_LIMITS);
		} else {
			ignored = 1;
		}
	}
	taken = verdict == CTL_TAKEN;
	/* Only a change the daemon must act on wakes it. No bell for a
	 * CREDIT: the frame itself goes on to the socket, whose readiness
	 * wakes the daemon even while it holds the ring; a bell as well is a
	 * second wake-up (an irq_work, costly in a VM) per credit update. */
	wake = apply && kind != 2;

	bpf_spin_lock(&lk->lock);
	ctl_seq_bump(c);
	c->malformed += bad == 1;
	c->unsupported += bad == 2;
	c->pause_rx += !bad && kind == 0;
	c->pfc_rx += !bad && kind == 1;
	c->credit_rx += !bad && kind == 2;
	c->fc_ignored += ignored;
	c->frames += taken;
	c->bytes += len & -taken;
	if (!bad && kind == 1) {
#pragma unroll
		for (int i = 0; i < L2CC_NPRIO; i++)
			c->pfc_rx_prio[i] += (cls >> i) & 1;
		NO_MERGE(1);
	}
	if (apply && kind != 2) {
		ctl_pause(c, cls, quanta, durs, now);
		NO_MERGE(2);
	}
	if (apply && kind == 2) {
		__u64 reset = unit != c->credit_unit || !c->credit_n;
		__u32 set;

		c->credit_mask = ctl_pick(reset, 0, c->credit_mask) | pmask;
		c->credit_unit = unit;
		c->credit_n++;
		c->credit_at = now;
		/* The first grant sets all eight. */
		set = pmask | (c->credit_n == 1 ? 0xff : 0);
#pragma unroll
		for (int i = 0; i < L2CC_NPRIO; i++) {
			if (!(set & (1u << i)))
				continue;
			c->credit_limit[i] = limit[i];
			NO_MERGE(30 + i);
		}
		NO_MERGE(3);
	}
	ctl_seq_bump(c);
	bpf_spin_unlock(&lk->lock);
	/* The frame goes on to the daemon marked: its limits are applied.
	 * By the helper, at its offset from the packet's start: no packet
	 * pointer is kept across the lock and the helpers, and none is
	 * chosen by path (see NO_MERGE). */
	if (verdict == CTL_APPLIED_PASS && rsv_off) {
		__u8 mark = L2CC_CREDIT_XDP_APPLIED;

		bpf_xdp_store_bytes(ctx, rsv_off, &mark, 1);
	}
	if (wake)
		bpf_ringbuf_output(&xdp_ctl_bell, &now, sizeof(now), 0);
	return verdict;
}

static __always_inline void fwd_stat_inc(__u32 idx)
{
	__u64 *cnt = bpf_map_lookup_elem(&fwd_stats, &idx);

	if (cnt)
		(*cnt)++;
}

static __always_inline __u16 be16_at(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/*
 * Known unicast from a forwarding = xdp port to another: redirected to the
 * egress port's devmap slot, XDP_REDIRECT. Everything else is the daemon's
 * (-1): a group DA (broadcast, multicast, link-local: flooded or consumed
 * there), a DA it has not learnt or learnt on this port, a source it has
 * not learnt on this port (so it learns it, and applies its port security),
 * MAC control and l2cc frames (0x88B5/0x88B6/0x22E7: checked and maybe
 * rewritten there), stacked tags, a VLAN this port does not carry, a frame
 * over the port's MTU. The daemon then does what it always did.
 */
static __always_inline int l2cc_fwd(struct xdp_md *ctx, void *data, void *data_end)
{
	struct l2cc_fwd_key key = {};
	struct l2cc_fwd_entry *src, *dst;
	struct l2cc_fwd_port *pc;
	const __u8 *eth = data;
	__u32 zero = 0;
	__u16 et, vid = 0;
	__u64 now;
	long ret;

	pc = bpf_map_lookup_elem(&fwd_port, &zero);
	if (!pc || !pc->on || data + L2CC_ETH_HLEN > data_end ||
	    bpf_xdp_get_buff_len(ctx) > pc->max_len)  /* no pointer subtraction: see above */
		goto daemon;
	if ((eth[0] & 1) || (eth[6] & 1))
		goto daemon;
	et = be16_at(eth + 12);
	if (et == L2CC_ETH_P_8021Q || et == L2CC_ETH_P_8021AD) {
		if (data + L2CC_ETH_HLEN + L2CC_VLAN_HLEN > data_end)
			goto daemon;
		vid = be16_at(eth + 14) & 0xfff;
		et = be16_at(eth + 16);
	}
	if (et == L2CC_ETH_P_8021Q || et == L2CC_ETH_P_8021AD || et == L2CC_ETH_P_MACCTRL ||
	    et == L2CC_ETH_P_DATA_TAG || et == L2CC_ETH_P_CTRL || et == L2CC_ETH_P_CNM)
		goto daemon;
	if (vid && !((pc->vlans[(vid >> 6) & 63] >> (vid & 63)) & 1))
		goto daemon;
	key.vid = vid;
	__builtin_memcpy(key.mac, eth + 6, 6);
	src = bpf_map_lookup_elem(&fwd_fdb, &key);
	if (!src || src->port != pc->port)
		goto daemon;
	__builtin_memcpy(key.mac, eth, 6);
	dst = bpf_map_lookup_elem(&fwd_fdb, &key);
	if (!dst || dst->port == pc->port)
		goto daemon;
	/* Keep the source's entry alive in the daemon's aging. */
	now = bpf_ktime_get_ns();
	if (now - src->seen_ns > L2CC_FWD_SEEN_NS)
		src->seen_ns = now;
	ret = bpf_redirect_map(&fwd_devs, dst->port, XDP_PASS);
	if (ret == XDP_REDIRECT) {
		fwd_stat_inc(L2CC_FWD_FORWARDED);
		return XDP_REDIRECT;
	}
	fwd_stat_inc(L2CC_FWD_NO_SLOT);
	return -1;
daemon:
	fwd_stat_inc(L2CC_FWD_DAEMON);
	return -1;
}

SEC("xdp")
int l2cc_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 queue = ctx->rx_queue_index;
	struct l2cc_xdp_qstat *qs;
	__u64 fallback;
	long ret;
	int ctl;

	/* Queues past the map share its last slot: every frame counts in
	 * the totals the daemon sums. */
	if (queue > L2CC_XSKMAP_MAX)
		queue = L2CC_XSKMAP_MAX;
	qs = bpf_map_lookup_elem(&xdp_qstats, &queue);
	if (!qs)
		return XDP_ABORTED;
	/* Per-CPU slot: no other CPU writes it, so no atomic needed. */
	qs->cnt[L2CC_XDP_RX]++;

	/* Each counter in its own branch, NO_MERGE'd: one add per frame. */
	if (data + L2CC_ETH_HLEN > data_end) {
		qs->cnt[L2CC_XDP_RUNT]++;
		NO_MERGE(11);
		return XDP_DROP;
	}
	ctl = l2cc_xdp_ctl_rx(ctx);
	if (ctl == CTL_TAKEN) {
		qs->cnt[L2CC_XDP_CTRL]++;
		NO_MERGE(12);
		return XDP_DROP;
	}

	if (cfg_fwd) {
		int v = l2cc_fwd(ctx, data, data_end);

		if (v >= 0)
			return v;
	}

	/* The low bits of flags are the verdict when the queue has no socket. */
	fallback = cfg_fallback == L2CC_XDP_FALLBACK_PASS ? XDP_PASS : XDP_DROP;
	ret = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, fallback);
	if (ret == XDP_REDIRECT) {
		qs->cnt[L2CC_XDP_REDIRECT]++;
		NO_MERGE(13);
	} else {
		qs->cnt[L2CC_XDP_NO_SOCKET]++;
		NO_MERGE(14);
	}
	return ret;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
