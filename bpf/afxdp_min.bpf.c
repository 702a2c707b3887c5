// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The benchmark's copy-mode AF_XDP baseline (tests/bench/afxdp_min.c): every
 * frame of queue 0 to the one AF_XDP socket in xsks. No counters, no checks:
 * the point is the cost of the AF_XDP path with nothing of ours on it. Each
 * interface loads its own copy, so each has its own one-slot map.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 1);
	__type(key, __u32);     /* rx queue index: only queue 0 */
	__type(value, __u32);   /* AF_XDP socket fd (on update) */
} xsks SEC(".maps");

SEC("xdp")
int afxdp_min_xsk(struct xdp_md *ctx)
{
	return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_DROP);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
