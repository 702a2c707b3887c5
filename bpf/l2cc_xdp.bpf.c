// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The XDP program every switchd/hostd port attaches: hand each frame to the
 * AF_XDP socket bound to its receive queue. Everything else (PAUSE, credits,
 * forwarding) happens in the daemon, so this stays as small as the verifier
 * and the reader would like.
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

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *cnt = bpf_map_lookup_elem(&xdp_stats, &idx);

	/* Per-CPU slot: no other CPU writes it, so no atomic needed. */
	if (cnt)
		(*cnt)++;
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

	/* The low bits of flags are the verdict when the queue has no socket. */
	fallback = cfg_fallback == L2CC_XDP_FALLBACK_PASS ? XDP_PASS : XDP_DROP;
	ret = bpf_redirect_map(&xsks_map, queue, fallback);
	stat_inc(ret == XDP_REDIRECT ? L2CC_XDP_REDIRECT : L2CC_XDP_NO_SOCKET);
	if (ret != XDP_REDIRECT && qs)
		qs->no_socket++;
	return ret;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
