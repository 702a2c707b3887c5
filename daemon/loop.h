/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The event loop of the daemons and l2cc-flowgen: epoll over file
 * descriptors (AF_XDP sockets, the control socket and its clients, a
 * signalfd, a flow generator's thousands of connections) with a nanosecond
 * deadline (epoll_pwait2) and a few timers. It blocks when there is nothing
 * to do; a caller that has work pending passes a deadline of "now".
 *
 * Any number of descriptors: the table grows, and loop_del_fd() frees a
 * slot for the next loop_add_fd(). A callback may add, change or remove any
 * descriptor, itself included, and arm or disarm any timer: an event still
 * pending for a descriptor removed during the same pass is dropped, never
 * delivered to whatever took its slot (or its number) since.
 */
#ifndef L2CC_LOOP_H
#define L2CC_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define LOOP_FOREVER UINT64_MAX

struct loop;
struct loop_timer;
typedef void (*loop_fd_fn)(void *ctx, int fd, uint32_t events);
typedef void (*loop_timer_fn)(void *ctx, uint64_t now_ns);
typedef void (*loop_enter_fn)(void *ctx);

int loop_create(struct loop **out);
/* Frees the loop and its timers; closes the signalfd, not the watched fds. */
void loop_destroy(struct loop *l);

/* Watch fd for events (EPOLLIN..., EPOLLET allowed). fn may be NULL: the fd
 * only wakes the loop. -EEXIST if fd is watched already. An fd closed
 * without loop_del_fd() leaves epoll by itself; its slot is reclaimed when
 * its number comes back to loop_add_fd(). */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx);
/* Change the events of a watched fd (0: none, it stays registered). */
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
/* Stop watching fd (call before closing it). -ENOENT if it is not watched. */
int loop_del_fd(struct loop *l, int fd);
/* How many fds are watched (the signalfd included). */
unsigned loop_fd_count(const struct loop *l);

/*
 * A timer: fn runs from loop_run_once() once the absolute CLOCK_MONOTONIC
 * time set with loop_timer_set() has come, after the fd callbacks of that
 * pass; it is disarmed just before (fn may set it again). The loop never
 * sleeps past an armed timer, so a daemon's own deadline needs to know
 * nothing about it.
 */
int loop_timer_create(struct loop *l, loop_timer_fn fn, void *ctx, struct loop_timer **out);
/* Arm at when_ns (a time already past fires on the next pass); LOOP_FOREVER disarms. */
void loop_timer_set(struct loop_timer *t, uint64_t when_ns);
/* Remove and free the timer. NULL is ok. */
void loop_timer_destroy(struct loop *l, struct loop_timer *t);

/* Block SIGTERM, SIGINT, SIGHUP and deliver them through a signalfd in the loop.
 * Read them back with loop_take_signals(): a bit mask of 1 << signo.
 * SIGPIPE is ignored: a peer that went away must not kill the process. */
int loop_catch_signals(struct loop *l);
/* The same for the signals in mask (1ull << signo each) only. */
int loop_catch_signal_set(struct loop *l, uint64_t mask);
uint64_t loop_take_signals(struct loop *l);

/* Wait until an fd is ready, a timer is due or the absolute CLOCK_MONOTONIC
 * deadline passes, then run the callbacks and the due timers. Returns the
 * number of ready fds (0 on timeout) or -errno. EINTR counts as a timeout:
 * go round again. */
int loop_run_once(struct loop *l, uint64_t deadline_ns);

/*
 * For a runner that drives several loops from one thread (l2ccd): fn runs
 * once in a loop_run_once() pass, before its first fd callback or due timer,
 * and not at all in a pass that only wakes (fds watched with fn NULL). l2ccd
 * enters the daemon's network namespace there: callbacks and timers may name
 * interfaces, the data path never does.
 */
void loop_set_enter(struct loop *l, loop_enter_fn fn, void *ctx);
/* The epoll descriptor itself, to watch the whole loop from another epoll:
 * readable when loop_run_once() would find an fd ready. */
int loop_fd(const struct loop *l);
/* When the earliest armed timer is due (LOOP_FOREVER: none). */
uint64_t loop_next_timer(const struct loop *l);

static inline uint64_t loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* epoll_pwait2's timeout for an absolute deadline: NULL (block) for
 * LOOP_FOREVER, zero for 0 or a time past (no clock read for 0). */
static inline struct timespec *loop_wait_ts(uint64_t deadline_ns, struct timespec *ts)
{
	uint64_t now, wait;

	if (deadline_ns == LOOP_FOREVER)
		return NULL;
	now = deadline_ns ? loop_now_ns() : 0;
	wait = deadline_ns > now ? deadline_ns - now : 0;
	ts->tv_sec = (time_t)(wait / 1000000000ull);
	ts->tv_nsec = (long)(wait % 1000000000ull);
	return ts;
}

#endif
