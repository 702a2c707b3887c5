/* SPDX-License-Identifier: BSD-2-Clause */
/* The arithmetic of the QCN congestion point (cp_qcn.c), for its unit tests. */
#ifndef L2CC_CP_QCN_H
#define L2CC_CP_QCN_H

#include <stdint.h>

/* The 6-bit quantised feedback of Fb = -(Qoff + w Qdelta) < 0 against a
 * set point qeq (bytes): -Fb 63 / (qeq (2w + 1)), saturating at 63; 0 for
 * Fb >= 0. */
uint8_t cp_qcn_qntz_fb(int64_t fb, uint64_t qeq, double w);

#endif
