/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The main loop of a polling daemon (switchd, hostd): poll the rings, spin on
 * for busy_poll after the last frame, look at the event loop (control socket,
 * signals) every 100 us while busy and sleep in it until the next deadline
 * while idle; TERM/INT stop, HUP reloads. systemd hears READY, RELOADING and
 * STOPPING (notify.h).
 */
#ifndef L2CC_DRUN_H
#define L2CC_DRUN_H

#include "dcli.h"

#include <stdbool.h>
#include <stdint.h>

struct loop;

/* The daemon's side; d is drun.d. */
struct drun_ops {
	/* One pass over the rings and timers; advances *drun.now. True if it did work. */
	bool (*poll)(void *d);
	/* The absolute CLOCK_MONOTONIC time something is next due (loop.h). */
	uint64_t (*next_deadline)(void *d);
	/* SIGHUP: re-read the configuration the command line names. */
	void (*reload)(void *d, const struct dcli_args *args);
};

struct drun {
	const struct drun_ops *ops;
	void *d;
	const struct dcli_args *args;   /* for reload; args->prog tags the loop's messages */
	struct loop *loop;              /* catching the signals already */
	/* Fields of the daemon the loop reads or writes. */
	const uint64_t *now;            /* its clock, ns, as of the last poll */
	const uint64_t *busy_poll;      /* ns; read every pass, since a reload may change it */
	uint64_t *wakeups;              /* counts the passes that slept */
	bool *stop;                     /* TERM/INT set it; the loop ends when it is true */
	const char *name;               /* the configuration's name: l2ccd's log tag */
};

/*
 * A kind of daemon (switchd, hostd) for a runner: its command line and
 * configuration loader (cli), how to create one on a loaded configuration
 * (which it keeps) and fill the drun that drives it, and how to take it
 * down. drun_loop() runs one per process; l2ccd runs several in one thread.
 */
struct drun_kind {
	const struct dcli *cli;
	/* 0, or -errno once it has said what failed (r->d may be set: stop it). */
	int (*start)(void *cfg, const struct dcli_args *args, struct drun *r);
	/* Destroy r->d (NULL is ok) and set it NULL. */
	void (*stop)(struct drun *r);
};

/*
 * A periodic job on the daemon's clock (the time series): true when it is
 * due at now, and *next moves on by interval, or to now + interval if the
 * daemon fell behind by more than one (no burst of catch-up lines).
 * interval 0 is never due. The daemons of one l2ccd loop keep the phases
 * their start gave them: aligned on one grid, 25 daemons' ticks (about
 * 0.1 ms of work each) held the loop for 2.5 ms at a time, and a frame
 * arriving then waited for all of them (docs/performance.md).
 */
static inline bool drun_every(uint64_t *next, uint64_t now, uint64_t interval)
{
	if (!interval || now < *next)
		return false;
	*next += interval;
	if (*next < now)
		*next = now + interval;
	return true;
}

/* Tell systemd READY, run until *r->stop, tell it STOPPING and log
 * "stopping". 0, or -errno if the event loop failed (logged). */
int drun_loop(const struct drun *r);

/* A daemon's whole run in its own process: start k on cfg, drun_loop()
 * until stopped, stop. 0, or -errno once it has said what failed. */
int drun_run(const struct drun_kind *k, void *cfg, const struct dcli_args *args);

#endif
