/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hostd: a host's rate limiter in the data path. A bump in the wire over
 * AF_XDP between the host stack's veth peer (`host_port`, e.g. cc0; the
 * stack sends on its other end, eth0) and the uplink to the switch
 * (`uplink`, e.g. up0). Toward the fabric it classifies frames to flows,
 * queues and paces each flow, tags data frames (0x88B5) and honours the
 * switch's PAUSE/PFC/credits; toward the host it strips tags and answers
 * congestion marks with CNPs (or ACKs in reliable mode).
 *
 * The daemon is a library (tests link it); main.c only calls hostd_main().
 */
#ifndef L2CC_HOSTD_H
#define L2CC_HOSTD_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"

struct drun_kind;

#define HD_MAX_RATES 256        /* [rate LABEL] sections */
#define HD_LAW_CFG_MAX 192      /* bytes of a law's own keys (rp_ops.cfg_size) */

enum hd_fc { HD_FC_AUTO = 0, HD_FC_NONE, HD_FC_PAUSE, HD_FC_PFC, HD_FC_CREDIT };
enum hd_mode { HD_MODE_UNRELIABLE = 0, HD_MODE_RELIABLE };
enum hd_xdp_mode { HD_XDP_NATIVE = 0, HD_XDP_SKB, HD_XDP_AUTO };

/* A static rate for one destination (the `static` law, and the starting
 * rate of the others): [rate LABEL] with dst = MAC and rate or ipd. */
struct hd_rate_cfg {
	char name[32];
	uint8_t dst[6];
	uint64_t vlan;
	uint64_t rate;              /* bit/s, 0 = unlimited */
	int64_t ipd;                /* -1: use rate; else rate = link_rate/(1+ipd) */
};

struct hd_cfg {
	/* [hostd] */
	char name[32];
	char ctl_socket[108];
	char runtime_dir[108];       /* interface settings to give back after a crash (ifsave.h) */
	char metrics_listen[64];
	char stats_file[256];
	uint64_t stats_file_max;    /* bytes before it is rotated to .1; 0 = no bound */
	uint64_t stats_interval;    /* ns */
	char host_port[16];         /* the host stack's veth peer (cc0) */
	char uplink[16];            /* toward the switch (up0) */
	uint64_t link_rate;         /* bit/s: the uplink is paced at this; also Rmax, IPD base */
	uint64_t burst;             /* bytes; 0 = max(2 frames, 500 us at link_rate) */
	uint64_t flow_burst;        /* ns at a flow's rate (>= 2 frames): its pacer burst */
	uint64_t wire_overhead;     /* bytes charged per frame on top of its length */
	int fc;                     /* enum hd_fc: what to honour from the switch */
	bool xdp_control;           /* apply PAUSE/PFC and credit limits in XDP */
	int granularity;            /* enum flow_granularity */
	uint64_t max_flows;         /* incl. the default flow */
	uint64_t flow_idle;         /* ns; 0 = never expire */
	uint64_t queue;             /* bytes per flow at the host edge */
	uint64_t pass_queue;        /* frames: ARP/ND/broadcast/multicast queue */
	bool tag;                   /* tag data frames (every peer runs hostd) */
	bool pcp_from_dscp;         /* untagged IP frames with a DSCP class get an 802.1p tag */
	bool ack_first;             /* pure TCP ACKs ahead of their priority's data in a flow */
	bool subflow_share;         /* a flow's connections share its queue (flow_enqueue_sub) */
	int mode;                   /* enum hd_mode */
	uint64_t cnp_interval;      /* ns; 0 = one CNP per marked frame */
	uint64_t ack_every;         /* reliable: an ACK per this many frames ... */
	uint64_t ack_delay;         /* ... or this long after the first unacked one */
	uint64_t ack_timeout;       /* reliable: a full window gives up after this; 0 = never */
	uint64_t slot;              /* pacer timing-wheel slot, ns */
	uint64_t frame_size;
	uint64_t ring_size;
	uint64_t batch;
	uint64_t umem_frames;       /* 0 = automatic */
	uint64_t busy_poll;         /* ns */
	int xdp_mode;               /* enum hd_xdp_mode */
	int zero_copy;              /* enum nic_zc_key (nic.h) */
	int nic_pause;              /* enum nic_pause_key (nic.h) */
	char rx_queues[64];         /* receive queues served on both ports: all, N, a list */
	int log_level;
	/* [law] */
	char law[16];               /* static, fimd, lipd, aimd (law.c) */
	uint64_t rate;              /* static: every flow's rate, bit/s, 0 = unlimited */
	int64_t ipd;                /* -1: use rate; else rate = link_rate/(1+ipd) */
	uint64_t window;            /* reliable mode: frames in flight per flow, 0 = none
				     * (fimd, lipd, aimd: 0 counts as 1) */
	/* The keys of the law `law` names (its rp_ops keys), in its own struct. */
	_Alignas(8) unsigned char law_cfg[HD_LAW_CFG_MAX];
	bool persistent;            /* a key's next flow resumes its last flow's law state */
	/* [rate LABEL] */
	struct hd_rate_cfg rates[HD_MAX_RATES];
	int nrates;
};

/* The config schema (hostd/hd_config.c). */
extern const struct cfg_section hd_cfg_sections[];
extern const size_t hd_cfg_nsections;

/* Load a config file plus "section[.label].key=value" overrides, validate.
 * 0, or -errno with "file:line: ..." (or the override) in err. */
int hd_cfg_load(struct hd_cfg *cfg, const char *path, char *const *overrides, int noverrides,
		char *err, size_t errlen);

int hostd_main(int argc, char **argv);
/* The same daemon for a runner of several in one process (l2ccd). */
extern const struct drun_kind hostd_kind;

#endif
