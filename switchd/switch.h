/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * switchd: an input-buffered lossless Ethernet switch over AF_XDP.
 * The daemon is a library (tests and fuzzers link it); main.c only calls
 * switchd_main().
 */
#ifndef L2CC_SWITCH_H
#define L2CC_SWITCH_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"

struct drun_kind;
#include "l2cc_shared.h"

#define SW_MAX_PORTS   64
#define SW_MAX_STATIC  256

enum fc_mode { FC_NONE = 0, FC_PAUSE, FC_PFC, FC_CREDIT };
enum port_role { ROLE_HOST = 0, ROLE_SWITCH };
enum xdp_mode { XDP_MODE_NATIVE = 0, XDP_MODE_SKB, XDP_MODE_AUTO };
/* What the pause watchdog does with a stormed priority of an output. */
enum sw_wd_action { SW_WD_DROP = 0, SW_WD_FORWARD, SW_WD_ALERT };
/* A port's `marking`: index into cp_port_names (cp.h): SW_MARK_SWITCH
 * follows the [switch] setting, i names the congestion point cp_names[i - 1]. */
#define SW_MARK_SWITCH 0
/* Bytes of a congestion point's per-port config (cp_ops.cfg_size at most).
 * Kept inside the config struct rather than allocated: a reload copies and
 * compares whole configurations, and tests and fuzzers free nothing. */
#define SW_CP_CFG_MAX 256

/* `forwarding`: [switch]'s, and a port's (SW_PFWD_SWITCH follows [switch]). */
enum sw_fwd { SW_FWD_DAEMON = 0, SW_FWD_XDP };
enum sw_pfwd { SW_PFWD_SWITCH = 0, SW_PFWD_DAEMON, SW_PFWD_XDP };

/* port_cfg.queue when the file does not set it: rx_queues decides. */
#define SW_QUEUE_UNSET UINT64_MAX

struct port_cfg {
	char name[16];
	char ifname[16];
	uint64_t queue;             /* one receive queue alone, or SW_QUEUE_UNSET */
	char rx_queues[64];         /* the receive queues served: all, N, or a list */
	uint64_t rate;              /* bit/s, 0 = unlimited */
	uint64_t burst;             /* bytes, 0 = automatic */
	uint64_t wire_overhead;     /* bytes charged per frame on top of its length */
	uint64_t mtu;               /* 0 = the interface's */
	struct cfg_qty buffer;      /* input buffer per priority */
	struct cfg_qty xoff, xon;   /* thresholds; derived when not set */
	int fc;                     /* enum fc_mode */
	int role;                   /* enum port_role */
	uint64_t pause_quanta;
	uint64_t credit_interval;   /* ns: periodic credit refresh */
	uint64_t reaction_time;     /* ns: how late we may react to our buffer (PAUSE headroom) */
	/* Pause watchdog (SONiC's pfcwd): an output priority paused with frames
	 * waiting for `pause_watchdog` ns is a storm; the action applies until
	 * no pause has arrived for `pause_watchdog_restore` ns. 0 = off. */
	uint64_t pause_watchdog, pause_watchdog_restore;
	int pause_watchdog_action;  /* enum sw_wd_action */
	bool pause_watchdog_switch; /* watch a role = switch port too */
	/* A host port's source addresses: at most mac_limit learned, at most
	 * mac_move_limit moving to it per second (0 = none). */
	uint64_t mac_limit, mac_move_limit;
	/* The VLAN ids the port carries ("all", or "10,20-29"); VID 0 (untagged
	 * or priority-tagged) always. vlan_map is derived from it at load. */
	char vlans[160];
	bool l2cc_host;             /* role = host: an l2cc host (hostd) is behind it */
	uint64_t vlan_map[4096 / 64];
	int xdp_mode;
	bool xdp_control;           /* apply PAUSE/PFC and credit limits in XDP */
	int nic_pause;              /* enum nic_pause_key (nic.h) */
	bool quiet_stack;           /* disable IPv6 on the interface while we own it */
	int marking;                /* congestion point: SW_MARK_SWITCH or 1 + cp_names index */
	int forwarding;             /* enum sw_pfwd */
	/* Where forwarding and the keys it excludes were set (cfg_item.line_at). */
	unsigned fwd_line, rate_line, fc_line, marking_line;
	/* The keys of that congestion point, as its cfg struct (sw_port_cp_cfg). */
	_Alignas(8) unsigned char cp_cfg[SW_CP_CFG_MAX];
};

struct fdb_static_cfg {
	uint8_t mac[6];
	char port[16];
	uint64_t vlan;
};

struct sw_cfg {
	char name[32];
	char ctl_socket[108];
	char runtime_dir[108];       /* interface settings to give back after a crash (ifsave.h) */
	char metrics_listen[64];
	char stats_file[256];
	uint64_t stats_file_max;    /* bytes before it is rotated to .1; 0 = no bound */
	uint64_t stats_interval;    /* ns */
	uint64_t fdb_aging;         /* ns */
	uint64_t fdb_size;
	int sched;                  /* enum voq_sched */
	uint64_t frame_size;
	uint64_t ring_size;
	uint64_t batch;
	uint64_t umem_frames;       /* 0 = automatic */
	uint64_t busy_poll;         /* ns to keep polling the rings after the last frame */
	int marking;                /* congestion point (cp_names index) of ports that name none */
	int forwarding;             /* enum sw_fwd: of ports that say switch */
	unsigned fwd_line, marking_line; /* where they were set (cfg_item.line_at) */
	/* Its keys given in [switch]: the defaults of its ports. */
	_Alignas(8) unsigned char cp_cfg[SW_CP_CFG_MAX];
	uint64_t cpu_queue;         /* frames the CPU pseudo-port may have queued */
	uint64_t cpu_share;         /* percent of an output's rate CPU frames may take */
	uint64_t flood_queue;       /* flood copies that may wait for one output */
	int zero_copy;              /* enum nic_zc_key (nic.h): one mode for the shared UMEM */
	int log_level;
	struct port_cfg ports[SW_MAX_PORTS];
	int nports;
	struct fdb_static_cfg statics[SW_MAX_STATIC];
	int nstatic;
};

/* The config schema (switchd/sw_config.c). */
extern const struct cfg_section sw_cfg_sections[];
extern const size_t sw_cfg_nsections;

/* Load a config file plus "section.key=value" overrides, then validate. */
int sw_cfg_load(struct sw_cfg *cfg, const char *path, char *const *overrides, int noverrides,
		char *err, size_t errlen);

/* Does port pc forward known unicast in XDP (forwarding = xdp, its own or
 * [switch]'s)? */
static inline bool sw_port_fwd_xdp(const struct sw_cfg *cfg, const struct port_cfg *pc)
{
	return pc->forwarding == SW_PFWD_XDP ||
	       (pc->forwarding == SW_PFWD_SWITCH && cfg->forwarding == SW_FWD_XDP);
}

/* Frames the shared UMEM needs for cfg's rings and input buffers (what
 * switchd makes at start unless umem_frames says otherwise). */
uint32_t sw_cfg_umem_need(const struct sw_cfg *cfg);

int switchd_main(int argc, char **argv);
/* The same daemon for a runner of several in one process (l2ccd). */
extern const struct drun_kind switchd_kind;

#endif
