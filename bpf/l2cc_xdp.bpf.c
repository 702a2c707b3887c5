// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program every switchd/hostd port attaches: hand each frame to the
 * AF_XDP socket bound to its receive queue. Everything else (PAUSE, credits,
 * forwarding) happens in the daemon, so this stays as small as the verifier
 * and the reader would like; but for switchd's forwarding = xdp ports
 * (l2cc_fwd), whose known unicast leaves in the kernel.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "l2cc_shared.h"

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
	__uint(max_entries, L2CC_XDP_STAT_MAX);
	__type(key, __u32);     /* enum l2cc_xdp_stat */
	__type(value, __u64);
} xdp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, L2CC_XSKMAP_MAX);
	__type(key, __u32);     /* rx queue index */
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

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *cnt = bpf_map_lookup_elem(&xdp_stats, &idx);

	/* Per-CPU slot: no other CPU writes it, so no atomic needed. */
	if (cnt)
		(*cnt)++;
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
static __always_inline int l2cc_fwd(void *data, void *data_end)
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
	    (__u64)(data_end - data) > pc->max_len)
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

	stat_inc(L2CC_XDP_RX);
	/* NULL past the map's end: a queue no socket could serve anyway
	 * still counts in the totals. */
	qs = bpf_map_lookup_elem(&xdp_qstats, &queue);
	if (qs)
		qs->rx++;

	if (data + L2CC_ETH_HLEN > data_end) {
		stat_inc(L2CC_XDP_RUNT);
		return XDP_DROP;
	}

	if (cfg_fwd) {
		int v = l2cc_fwd(data, data_end);

		if (v >= 0)
			return v;
	}

	/* The low bits of flags are the verdict when the queue has no socket. */
	fallback = cfg_fallback == L2CC_XDP_FALLBACK_PASS ? XDP_PASS : XDP_DROP;
	ret = bpf_redirect_map(&xsks_map, queue, fallback);
	stat_inc(ret == XDP_REDIRECT ? L2CC_XDP_REDIRECT : L2CC_XDP_NO_SOCKET);
	if (ret != XDP_REDIRECT && qs)
		qs->no_socket++;
	return ret;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
