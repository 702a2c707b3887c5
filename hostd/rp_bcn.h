/* SPDX-License-Identifier: BSD-2-Clause */
/* The arithmetic of the BCN reaction point (rp_bcn.c), for its unit tests. */
#ifndef L2CC_HOSTD_RP_BCN_H
#define L2CC_HOSTD_RP_BCN_H

#include <stdint.h>

/* Fb = -(Qoff + w Qdelta) in cells of `cell` bytes (Lu et al. 2006 §II). */
double rp_bcn_fb(int32_t qoff, int32_t qdelta, double w, uint64_t cell);

#endif
