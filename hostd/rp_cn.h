/* SPDX-License-Identifier: BSD-2-Clause */
/* The arithmetic of the BCN and QCN reaction points (rp_bcn.c, rp_qcn.c),
 * for their unit tests. */
#ifndef L2CC_HOSTD_RP_CN_H
#define L2CC_HOSTD_RP_CN_H

#include <stdint.h>

/* Fb = -(Qoff + w Qdelta) in cells of `cell` bytes (Lu et al. 2006 §II). */
double rp_bcn_fb(int32_t qoff, int32_t qdelta, double w, uint64_t cell);

/* QCN's cut of CR for a CNM: 1 - gd qntz_fb, at least min_dec_fac (802.1Qau
 * rpgGd, rpgMinDecFac). */
double rp_qcn_cut(uint32_t qntz_fb, double gd, double min_dec_fac);

#endif
