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

#define LOOP_EVENTS 64
#define LOOP_NO_SLOT UINT32_MAX

/*
 * A watched fd. epoll hands back (generation << 32 | slot index) rather
 * than a pointer: the table may move when it grows, and a slot freed and
 * taken again during one pass gets a new generation, so a stale event in
 * the same batch is recognised and dropped.
 */
struct loop_watch {
	int fd;			/* -1: free */
	uint32_t gen;
	uint32_t next_free;
	loop_fd_fn fn;
	void *ctx;
};

struct loop_timer {
	uint64_t when;		/* LOOP_FOREVER: off */
	loop_timer_fn fn;
	void *ctx;
	bool dead;		/* destroyed while the timers were running */
};

struct loop {
	int epfd;
	int sigfd;
	uint64_t signals;
	struct loop_watch *watch;
	uint32_t nslots, cap, free_head;
	unsigned nfds;
	uint32_t *slot_of;	/* fd -> slot, LOOP_NO_SLOT: not watched */
	size_t nslot_of;
	struct loop_timer **timers;
	size_t ntimers, timers_cap;
	bool in_timers, timers_dirty;
	loop_enter_fn enter;	/* before a pass's first callback (loop_set_enter) */
	void *enter_ctx;
};

int loop_create(struct loop **out)
{
	struct loop *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->sigfd = -1;
	l->free_head = LOOP_NO_SLOT;
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
	size_t i;

	if (!l)
		return;
	if (l->sigfd >= 0)
		close(l->sigfd);
	close(l->epfd);
	for (i = 0; i < l->ntimers; i++)
		free(l->timers[i]);
	free(l->timers);
	free(l->watch);
	free(l->slot_of);
	free(l);
}

/* ---- descriptors ---------------------------------------------------------- */

static int loop_grow_fd_map(struct loop *l, int fd)
{
	size_t n = l->nslot_of ? l->nslot_of : 64, i;
	uint32_t *m;

	if ((size_t)fd < l->nslot_of)
		return 0;
	while (n <= (size_t)fd)
		n *= 2;
	m = realloc(l->slot_of, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	for (i = l->nslot_of; i < n; i++)
		m[i] = LOOP_NO_SLOT;
	l->slot_of = m;
	l->nslot_of = n;
	return 0;
}

/* A free slot (from the free list, or a new one at the end): its index, or
 * LOOP_NO_SLOT when the table cannot grow. */
static uint32_t loop_take_slot(struct loop *l)
{
	struct loop_watch *w;
	uint32_t idx;

	if (l->free_head != LOOP_NO_SLOT) {
		idx = l->free_head;
		l->free_head = l->watch[idx].next_free;
		return idx;
	}
	if (l->nslots == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;

		if (cap <= l->cap || cap >= LOOP_NO_SLOT)
			return LOOP_NO_SLOT;
		w = realloc(l->watch, cap * sizeof(*w));
		if (!w)
			return LOOP_NO_SLOT;
		l->watch = w;
		l->cap = cap;
	}
	idx = l->nslots++;
	l->watch[idx] = (struct loop_watch){ .fd = -1 };
	return idx;
}

static void loop_put_slot(struct loop *l, uint32_t idx)
{
	struct loop_watch *w = &l->watch[idx];

	w->fd = -1;
	w->fn = NULL;
	w->ctx = NULL;
	w->gen++;		/* events still in flight for it go nowhere */
	w->next_free = l->free_head;
	l->free_head = idx;
}

static uint64_t loop_tag(const struct loop *l, uint32_t idx)
{
	return (uint64_t)l->watch[idx].gen << 32 | idx;
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx)
{
	struct epoll_event ev = { .events = events };
	uint32_t idx, old;
	int err;

	if (fd < 0)
		return -EBADF;
	err = loop_grow_fd_map(l, fd);
	if (err)
		return err;
	idx = loop_take_slot(l);
	if (idx == LOOP_NO_SLOT)
		return -ENOMEM;
	ev.data.u64 = loop_tag(l, idx);
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		err = -errno;
		loop_put_slot(l, idx);
		return err;
	}
	/* epoll took it, so an entry we still hold for this number belongs
	 * to an fd that was closed without loop_del_fd(). */
	old = l->slot_of[fd];
	if (old != LOOP_NO_SLOT) {
		loop_put_slot(l, old);
		l->nfds--;
	}
	l->watch[idx].fd = fd;
	l->watch[idx].fn = fn;
	l->watch[idx].ctx = ctx;
	l->slot_of[fd] = idx;
	l->nfds++;
	return 0;
}

static uint32_t loop_slot_of(const struct loop *l, int fd)
{
	if (fd < 0 || (size_t)fd >= l->nslot_of)
		return LOOP_NO_SLOT;
	return l->slot_of[fd];
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events };
	uint32_t idx = loop_slot_of(l, fd);

	if (idx == LOOP_NO_SLOT)
		return -ENOENT;
	ev.data.u64 = loop_tag(l, idx);
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev))
		return -errno;
	return 0;
}

int loop_del_fd(struct loop *l, int fd)
{
	uint32_t idx = loop_slot_of(l, fd);

	if (idx == LOOP_NO_SLOT)
		return -ENOENT;
	/* Fails only if fd was closed already, which took it out of epoll. */
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	loop_put_slot(l, idx);
	l->slot_of[fd] = LOOP_NO_SLOT;
	l->nfds--;
	return 0;
}

unsigned loop_fd_count(const struct loop *l)
{
	return l->nfds;
}

/* ---- timers --------------------------------------------------------------- */

int loop_timer_create(struct loop *l, loop_timer_fn fn, void *ctx, struct loop_timer **out)
{
	struct loop_timer *t, **ts;

	if (!fn)
		return -EINVAL;
	if (l->ntimers == l->timers_cap) {
		size_t cap = l->timers_cap ? l->timers_cap * 2 : 4;

		ts = realloc(l->timers, cap * sizeof(*ts));
		if (!ts)
			return -ENOMEM;
		l->timers = ts;
		l->timers_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->when = LOOP_FOREVER;
	t->fn = fn;
	t->ctx = ctx;
	l->timers[l->ntimers++] = t;
	*out = t;
	return 0;
}

void loop_timer_set(struct loop_timer *t, uint64_t when_ns)
{
	t->when = when_ns;
}

static void loop_timers_compact(struct loop *l)
{
	size_t i, n = 0;

	for (i = 0; i < l->ntimers; i++) {
		if (l->timers[i]->dead)
			free(l->timers[i]);
		else
			l->timers[n++] = l->timers[i];
	}
	l->ntimers = n;
	l->timers_dirty = false;
}

void loop_timer_destroy(struct loop *l, struct loop_timer *t)
{
	if (!t)
		return;
	t->dead = true;
	t->when = LOOP_FOREVER;
	/* The array is being walked: leave the entry for the walk to skip. */
	if (l->in_timers)
		l->timers_dirty = true;
	else
		loop_timers_compact(l);
}

static uint64_t loop_timers_next(const struct loop *l)
{
	uint64_t next = LOOP_FOREVER;
	size_t i;

	for (i = 0; i < l->ntimers; i++)
		if (l->timers[i]->when < next)
			next = l->timers[i]->when;
	return next;
}

static void loop_timers_run(struct loop *l, bool *entered)
{
	uint64_t now, next = loop_timers_next(l);
	size_t i;

	if (next == LOOP_FOREVER)
		return;
	now = loop_now_ns();
	if (next > now)
		return;
	if (!*entered && l->enter) {
		l->enter(l->enter_ctx);
		*entered = true;
	}
	l->in_timers = true;
	/* By index: a callback may create timers (the array may move). */
	for (i = 0; i < l->ntimers; i++) {
		struct loop_timer *t = l->timers[i];

		if (t->dead || t->when > now)
			continue;
		t->when = LOOP_FOREVER;
		t->fn(t->ctx, now);
	}
	l->in_timers = false;
	if (l->timers_dirty)
		loop_timers_compact(l);
}

/* ---- signals -------------------------------------------------------------- */

static void loop_on_signal(void *ctx, int fd, uint32_t events)
{
	struct loop *l = ctx;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo < 64)
			l->signals |= 1ull << si.ssi_signo;
}

int loop_catch_signal_set(struct loop *l, uint64_t mask)
{
	sigset_t set;
	int sig;

	if (l->sigfd >= 0)
		return -EBUSY;
	sigemptyset(&set);
	for (sig = 1; sig < 64; sig++)
		if (mask & (1ull << sig))
			sigaddset(&set, sig);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	/* A closed control-socket client (or flow peer) must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	l->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (l->sigfd < 0)
		return -errno;
	return loop_add_fd(l, l->sigfd, EPOLLIN, loop_on_signal, l);
}

int loop_catch_signals(struct loop *l)
{
	return loop_catch_signal_set(l, 1ull << SIGTERM | 1ull << SIGINT | 1ull << SIGHUP);
}

uint64_t loop_take_signals(struct loop *l)
{
	uint64_t s = l->signals;

	l->signals = 0;
	return s;
}

/* ---- running -------------------------------------------------------------- */

void loop_set_enter(struct loop *l, loop_enter_fn fn, void *ctx)
{
	l->enter = fn;
	l->enter_ctx = ctx;
}

int loop_fd(const struct loop *l)
{
	return l->epfd;
}

uint64_t loop_next_timer(const struct loop *l)
{
	return loop_timers_next(l);
}

int loop_run_once(struct loop *l, uint64_t deadline_ns)
{
	struct epoll_event ev[LOOP_EVENTS];
	struct timespec ts;
	uint64_t next = loop_timers_next(l);
	bool entered = false;
	int n, i;

	if (next < deadline_ns)
		deadline_ns = next;
	n = epoll_pwait2(l->epfd, ev, LOOP_EVENTS, loop_wait_ts(deadline_ns, &ts), NULL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)ev[i].data.u64;
		uint32_t gen = (uint32_t)(ev[i].data.u64 >> 32);
		struct loop_watch *w;

		if (idx >= l->nslots)
			continue;
		w = &l->watch[idx];
		/* Removed (and perhaps reused) by an earlier callback of this pass. */
		if (w->fd < 0 || w->gen != gen || !w->fn)
			continue;
		if (!entered && l->enter) {
			l->enter(l->enter_ctx);
			entered = true;
		}
		w->fn(w->ctx, w->fd, ev[i].events);
	}
	loop_timers_run(l, &entered);
	return n;
}
