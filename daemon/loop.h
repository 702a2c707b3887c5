/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The daemon event loop: epoll over file descriptors (AF_XDP sockets, the
 * control socket, a signalfd) with a nanosecond deadline for pacing timers
 * (epoll_pwait2). It blocks when there is nothing to do; a daemon that has
 * work pending passes a deadline of "now".
 */
#ifndef L2CC_LOOP_H
#define L2CC_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define LOOP_FOREVER UINT64_MAX

struct loop;
typedef void (*loop_fd_fn)(void *ctx, int fd, uint32_t events);

int loop_create(struct loop **out);
void loop_destroy(struct loop *l);

/* Watch fd for events (EPOLLIN...). fn may be NULL: the fd only wakes the loop. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx);
int loop_del_fd(struct loop *l, int fd);

/* Block SIGTERM, SIGINT, SIGHUP and deliver them through a signalfd in the loop.
 * Read them back with loop_take_signals(): a bit mask of 1 << signo. */
int loop_catch_signals(struct loop *l);
uint64_t loop_take_signals(struct loop *l);

/* Wait until an fd is ready or the absolute CLOCK_MONOTONIC deadline passes,
 * then run the callbacks. Returns the number of ready fds (0 on timeout) or
 * -errno. EINTR counts as a timeout: go round again. */
int loop_run_once(struct loop *l, uint64_t deadline_ns);

static inline uint64_t loop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
