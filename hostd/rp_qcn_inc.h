/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The rate increase of the 802.1Qau reaction point (QCN), which DCQCN
 * (Zhu et al., SIGCOMM 2015, §3.3) takes unchanged: after a decrease the
 * current rate Rc climbs back toward the target rate Rt in stages, each
 * step triggered by a byte counter (every rpg_byte_reset bytes sent) or a
 * timer (every rpg_time_reset):
 *
 *   fast recovery   both counters below rpg_threshold (F): Rc <- (Rc + Rt) / 2
 *   active increase one counter at F or more:     Rt += rpg_ai_rate, then average
 *   hyper-active    both at F or more:            Rt += i * rpg_hai_rate, then
 *                   average
 *
 * A counter counts its events since the last decrease, this one included
 * (as the authors' ns-3 code does: with F = 5 the first four steps are fast
 * recovery), or not (stage_before, the HPCC simulator). Without a byte
 * counter (rpg_byte_reset 0, the HPCC simulator) the time counter alone
 * decides: below F fast recovery, at F active, above F hyper-active. i is 1 (hai_by_stage false: DCQCN's simulators add
 * R_HAI per step) or min(byte stage, time stage) - F + 1 (802.1Qau's
 * growing step; its pseudo-code writes min - F, which makes the first
 * hyper-active step add nothing: implementations differ by one there, and
 * this module takes the +1 so every step adds; docs/dcqcn.md). Guard: at
 * the first step after a decrease, an Rt above 10 Rc is divided by 8 (a
 * target left over from a much higher rate). Rc and Rt never exceed
 * max_rate; Rc never falls below rpg_min_rate. A flow whose Rc comes
 * within 0.1% of max_rate is released (Rc = Rt = max_rate: no longer
 * rate-limited; the average only approaches its target) and its counters
 * stop.
 *
 * Names follow the IEEE8021-CN-MIB where it has them. The module keeps no
 * time and arms no timer: the law calls qcn_inc_timer() when its timer of
 * period qcn_inc_period() ran out and qcn_inc_bytes() for every frame
 * sent, so 802.1Qau's reaction point and DCQCN's share it as it is.
 */
#ifndef L2CC_HOSTD_RP_QCN_INC_H
#define L2CC_HOSTD_RP_QCN_INC_H

#include <stdbool.h>
#include <stdint.h>

struct qcn_inc_cfg {
	uint64_t rpg_time_reset;        /* ns between timer events (T) */
	uint64_t rpg_byte_reset;        /* bytes between byte events (B); 0 = no byte counter */
	uint32_t rpg_threshold;         /* F: fast-recovery steps per counter */
	double rpg_ai_rate;             /* bit/s added to Rt per active step */
	double rpg_hai_rate;            /* bit/s (times i) per hyper-active step */
	double rpg_min_rate;            /* Rc's floor */
	double max_rate;                /* the link: Rc and Rt's ceiling */
	/* 802.1Qau halves B and T once fast recovery is over; DCQCN keeps
	 * them. */
	bool halve_after_fr;
	/* Hyper-active steps grow with the stage (802.1Qau) or are R_HAI each. */
	bool hai_by_stage;
	/* Each byte-counter cycle lasts B times a uniform factor in [0.85,
	 * 1.15] (802.1Qau), so flows cut by one burst of CNMs do not step in
	 * lockstep; DCQCN's simulators count exactly. */
	bool byte_jitter;
	/* The authors' ns-3 code halves B and T while hyper-active only
	 * (qbb-net-device.cc, the hyper-increase events). */
	bool halve_in_hyper;
	/* A step compares the counter that fired as it was before this event
	 * counted (the HPCC simulator's RateIncEventTimerMlx: with F = 1 the
	 * first step is fast recovery, the second active, the third
	 * hyper-active); else as it is after (802.1Qau, DCQCN's paper). */
	bool stage_before;
};

enum qcn_inc_stage {
	QCN_LINE_RATE = 0,              /* not rate-limited */
	QCN_FAST_RECOVERY,
	QCN_ACTIVE,
	QCN_HYPER,
};

struct qcn_inc {
	double rc, rt;                  /* current and target rate, bit/s */
	uint64_t bytes;                 /* sent since the last byte event */
	uint32_t byte_stage, time_stage;        /* events since the last decrease */
	uint8_t stage;                  /* enum qcn_inc_stage */
	uint16_t jit_pm;                /* byte_jitter: this cycle's factor, per mille */
	uint32_t rng;                   /* byte_jitter: xorshift32 state; the law seeds it */
	uint64_t increases;             /* steps taken */
};

/* A flow at rate r, not rate-limited. */
void qcn_inc_init(struct qcn_inc *s, double r);
/* A decrease to rc_new (floored at rpg_min_rate): Rt <- Rc first when
 * set_target (DCQCN always; QCN keeps Rt in the first fast-recovery
 * cycle), both counters and the byte count reset, the flow rate-limited. */
void qcn_inc_decrease(const struct qcn_inc_cfg *c, struct qcn_inc *s, double rc_new,
		      bool set_target);
/* len bytes sent: true when that completed a byte event (a step taken). */
bool qcn_inc_bytes(const struct qcn_inc_cfg *c, struct qcn_inc *s, uint32_t len);
/* The timer ran out: a step. */
void qcn_inc_timer(const struct qcn_inc_cfg *c, struct qcn_inc *s);
/* When the timer should run next (ns after a decrease or an event), 0 when
 * the flow is released and needs none. */
uint64_t qcn_inc_period(const struct qcn_inc_cfg *c, const struct qcn_inc *s);
/* The stage's name: line_rate, fast_recovery, active, hyper. */
const char *qcn_inc_stage_name(const struct qcn_inc *s);

#endif
