/* SPDX-License-Identifier: BSD-2-Clause */
/* DCQCN's law (rp_dcqcn.c): its keys, per-flow state and resolved
 * parameters, for the unit tests. */
#ifndef L2CC_HOSTD_RP_DCQCN_H
#define L2CC_HOSTD_RP_DCQCN_H

#include <stdint.h>
#include "rp_qcn_inc.h"

struct rp;

enum dcqcn_preset { DCQCN_PAPER = 0, DCQCN_NS3, DCQCN_HPCC, DCQCN_NIC };

/* [law] keys when law = dcqcn: 0 = the preset's, scaled. */
struct dcqcn_cfg {
	int preset;                     /* enum dcqcn_preset */
	double g;                       /* 0 = the preset's */
	uint64_t alpha_timer, cnp_interval;
	uint64_t rpg_time_reset, rpg_byte_reset, rpg_threshold;
	uint64_t rpg_ai_rate, rpg_hai_rate, rpg_min_rate;
};

/* The parameters in force: the preset scaled to the link, and the keys. */
struct dcqcn_params {
	struct qcn_inc_cfg inc;
	double g, scale;                /* scale: link_rate / the preset's link rate */
	uint64_t alpha_timer, cnp_interval;     /* ns */
};

/* Per flow, in its law area. */
#define DCQCN_MAGIC 0xdc9c0001u
struct dcqcn {
	uint32_t magic;
	struct qcn_inc inc;
	double alpha;
	uint64_t cnps, alpha_decays;
};

/* Timers of a flow (rp_timer): the rate increase timer, the alpha timer. */
enum { DCQCN_T_RATE = 0, DCQCN_T_ALPHA };

const struct dcqcn_params *dcqcn_params(const struct rp *rp);

#endif
