/* SPDX-License-Identifier: BSD-2-Clause */
/* DCQCN's law (rp_dcqcn.c): its keys, per-flow state and resolved
 * parameters, for the unit tests. */
#ifndef L2CC_HOSTD_RP_DCQCN_H
#define L2CC_HOSTD_RP_DCQCN_H

#include <stdbool.h>
#include <stdint.h>
#include "rp_qcn_inc.h"

struct rp;

enum dcqcn_preset { DCQCN_PAPER = 0, DCQCN_NS3, DCQCN_HPCC, DCQCN_NIC };

/* [law] keys when law = dcqcn: 0 = the preset's, scaled. */
enum dcqcn_clamp { DCQCN_CLAMP_PRESET = 0, DCQCN_CLAMP_YES, DCQCN_CLAMP_NO };

struct dcqcn_cfg {
	int preset;                     /* enum dcqcn_preset */
	double g;                       /* 0 = the preset's */
	uint64_t alpha_timer, cnp_interval;
	uint64_t rpg_time_reset, rpg_byte_reset, rpg_threshold;
	uint64_t rpg_ai_rate, rpg_hai_rate, rpg_min_rate;
	uint64_t rate_decrease_interval;        /* 0 = the preset's, scaled */
	int clamp_target_rate;                  /* enum dcqcn_clamp */
	uint64_t rate_on_first_cnp;             /* bit/s; 0 = the rate is kept */
};

/* The parameters in force: the preset scaled to the link, and the keys. */
struct dcqcn_params {
	struct qcn_inc_cfg inc;
	double g, scale;                /* scale: link_rate / the preset's link rate */
	double alpha0;                  /* alpha before the first CNP */
	double rate_on_first_cnp;       /* bit/s, 0 = kept */
	uint64_t alpha_timer, cnp_interval;     /* ns */
	uint64_t rate_decrease_interval;        /* ns; 0 = every CNP cuts at once */
	bool clamp;                     /* Rt <- Rc at every cut; else only after an
					 * increase step since the last cut */
	bool alpha_periodic;            /* alpha moves on its timer only, + g when a CNP
					 * came in the period (the HPCC simulator, the NIC) */
	bool alpha_before_cut;          /* alpha takes the CNP before the cut (ns3-rdma) */
};

/* Per flow, in its law area. */
#define DCQCN_MAGIC 0xdc9c0001u
struct dcqcn {
	uint32_t magic;
	uint8_t alpha_cnp;              /* alpha_periodic: a CNP came this period */
	uint8_t dec_pending;            /* rate_decrease_interval: a CNP waits for the cut */
	uint8_t dec_armed;              /* ... and the decrease timer runs */
	uint8_t alpha_armed;            /* the alpha timer runs */
	struct qcn_inc inc;
	double alpha;
	uint64_t cnps, alpha_decays, cuts;
};

/* Timers of a flow (rp_timer): the rate increase timer, the alpha timer,
 * the decrease timer (rate_decrease_interval). */
enum { DCQCN_T_RATE = 0, DCQCN_T_ALPHA, DCQCN_T_DEC };

const struct dcqcn_params *dcqcn_params(const struct rp *rp);

#endif
