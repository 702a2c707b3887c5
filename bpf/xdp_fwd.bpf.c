// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The benchmark baseline: a pure-XDP forwarder with no userspace hop. Each
 * frame leaves by the port that tx_port names for the port it came in on;
 * frames from unmapped ports are dropped.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "l2cc_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__uint(max_entries, L2CC_XDP_FWD_MAX_PORTS);
	__type(key, __u32);     /* ingress ifindex */
	__type(value, __u32);   /* egress ifindex */
} tx_port SEC(".maps");

SEC("xdp")
int xdp_fwd(struct xdp_md *ctx)
{
	return bpf_redirect_map(&tx_port, ctx->ingress_ifindex, XDP_DROP);
}

/*
 * Attached to the peer of each redirect target: a veth only accepts
 * XDP_REDIRECTed frames when its peer has an XDP program.
 */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
