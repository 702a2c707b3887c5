/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The response functions of Santos, Turner and Janakiraman (Infocom 2003,
 * §V-VI), for rp_santos.c, the configuration's checks and anyone checking
 * the laws against the paper. Rates in any one unit (r, rmin, rmax alike);
 * every result is clamped to [rmin, rmax].
 *
 * law_fn_dec: f_dec(r), the rate after a mark.
 *   FIMD, AIMD  max(r / m, Rmin)                          (§V-C)
 *   LIPD        max(Rmax / (Rmax / r + 1), Rmin)          (§V-D: ipd + 1)
 * law_fn_inc: F_inc^r(t), the rate a time t after the rate was r, with no
 *   mark in between, t given as `frames` frame times at rate r (t = frames / r,
 *   Trec = 1 / Rmin); with frames = 1 it is f_inc(r), the increase per
 *   unmarked ACK (§V-B: f_inc(r) = min(F_inc^r(1 / r), Rmax)):
 *   FIMD  r * m^(t / Trec)                  f_inc = min(r * m^(Rmin / r), Rmax)
 *   LIPD  Rmax / (Rmax / r - t / Trec)      f_inc = min(r / (1 - Rmin / Rmax), Rmax)
 *   AIMD  r + (m - 1) * Rmin * t / Trec     f_inc = min(r + (m - 1) * Rmin^2 / r, Rmax)
 * AIMD's slope is the largest a recovery time of 1 / Rmin allows at Rmin
 * (§VI-B): one ACK at Rmin takes it back to f_dec^-1(Rmin) = m * Rmin.
 */
#ifndef L2CC_HOSTD_RP_SANTOS_H
#define L2CC_HOSTD_RP_SANTOS_H

#include <stdbool.h>
#include <stdint.h>

/* InfiniBand's IPD is 8 bits: discrete mode has at most this many rates,
 * Rmax / (1 + ipd) for ipd 0 .. LAW_IPD_LEVELS - 1 ([law] rmin_div). */
#define LAW_IPD_LEVELS 256

enum law_fn { LAW_FN_FIMD = 0, LAW_FN_LIPD, LAW_FN_AIMD };

/* The [law] keys of fimd, lipd and aimd (one table for the three, so a
 * sweep that switches between them keeps its keys). */
struct santos_cfg {
	uint64_t rmin_div;      /* Rmin = link_rate / rmin_div */
	char m_text[16];        /* the decrease factor (fimd, aimd) as written ... */
	double m;               /* ... and as check_keys parsed it (> 1) */
	bool discrete;          /* the InfiniBand IPD rates link_rate / (1 + ipd) only */
};
double law_fn_dec(enum law_fn fn, double m, double rmin, double rmax, double r);
double law_fn_inc(enum law_fn fn, double m, double rmin, double rmax, double r, double frames);

#endif
