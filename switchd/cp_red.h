/* SPDX-License-Identifier: BSD-2-Clause */
/* RED (cp_red.c): the probability curve, for the unit tests. */
#ifndef L2CC_CP_RED_H
#define L2CC_CP_RED_H

#include <stdint.h>

/* The probability of choosing a frame at backlog q (bytes): 0 up to kmin,
 * linear to pmax at kmax, 1 above kmax. */
double red_probability(uint64_t kmin, uint64_t kmax, double pmax, double q);

#endif
