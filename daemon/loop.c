// SPDX-License-Identifier: BSD-2-Clause
#define LOG_SUBSYS "loop"
#include "loop.h"
#include "log.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define LOOP_MAX_FDS 256

struct loop_watch {
	int fd;
	loop_fd_fn fn;
	void *ctx;
};

struct loop {
	int epfd;
	int sigfd;
	uint64_t signals;
	struct loop_watch watch[LOOP_MAX_FDS];
	int nwatch;
};

int loop_create(struct loop **out)
{
	struct loop *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sigfd = -1;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int err = -errno;

		free(l);
		return err;
	}
	/* The default 50 us timer slack would add jitter to every pacing wake-up. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	*out = l;
	return 0;
}

void loop_destroy(struct loop *l)
{
	if (!l)
		return;
	if (l->sigfd >= 0)
		close(l->sigfd);
	close(l->epfd);
	free(l);
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx)
{
	struct epoll_event ev = { .events = events };
	struct loop_watch *w;

	if (l->nwatch >= LOOP_MAX_FDS)
		return -ENOSPC;
	w = &l->watch[l->nwatch];
	w->fd = fd;
	w->fn = fn;
	w->ctx = ctx;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev))
		return -errno;
	l->nwatch++;
	return 0;
}

int loop_del_fd(struct loop *l, int fd)
{
	int i;

	for (i = 0; i < l->nwatch; i++) {
		if (l->watch[i].fd != fd)
			continue;
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		/* Entries are addressed by pointer from epoll: keep the slot, mark it dead. */
		l->watch[i].fd = -1;
		l->watch[i].fn = NULL;
		return 0;
	}
	return -ENOENT;
}

static void loop_on_signal(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo < 64)
			l->signals |= 1ull << si.ssi_signo;
}

int loop_catch_signals(struct loop *l)
{
	sigset_t set;
	int err;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	/* A closed control-socket client must not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	l->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (l->sigfd < 0)
		return -errno;
	err = loop_add_fd(l, l->sigfd, EPOLLIN, loop_on_signal, l);
	return err;
}

uint64_t loop_take_signals(struct loop *l)
{
	uint64_t s = l->signals;

	l->signals = 0;
	return s;
}

int loop_run_once(struct loop *l, uint64_t deadline_ns)
{
	struct epoll_event ev[32];
	struct timespec ts, *tsp = NULL;
	int n, i;

	if (deadline_ns != LOOP_FOREVER) {
		uint64_t now = loop_now_ns();
		uint64_t wait = deadline_ns > now ? deadline_ns - now : 0;

		ts.tv_sec = wait / 1000000000ull;
		ts.tv_nsec = wait % 1000000000ull;
		tsp = &ts;
	}
	n = epoll_pwait2(l->epfd, ev, 32, tsp, NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct loop_watch *w = ev[i].data.ptr;

		if (w->fn)
			w->fn(w->ctx, w->fd, ev[i].events);
	}
	return n;
}
