// SPDX-License-Identifier: BSD-2-Clause
/*
 * The event loop over real descriptors (eventfds): more than the 256 it
 * once held, slots freed and taken again, descriptors removed from inside a
 * callback while their events are still in the same batch, an fd closed
 * without loop_del_fd whose number comes back, changed interest, timers
 * (the loop never sleeps past one) and signals.
 */
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "drun.h"
#include "log.h"
#include "loop.h"

#define NFD 600

static int hits[NFD + 64];	/* callbacks per context index */

static void on_ev(void *ctx, int fd, uint32_t events)
{
	uint64_t v;

	hits[(intptr_t)ctx]++;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		hits[(intptr_t)ctx] += 1000;	/* readable but nothing to read: wrong */
}

static void kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		printf("    eventfd write failed\n");
}

/* Run the loop without waiting until nothing is ready. */
static void drain(struct loop *l)
{
	int i;

	for (i = 0; i < 1000 && loop_run_once(l, 0) > 0; i++)
		;
}

static void test_loop_many_fds(void)
{
	struct loop *l = NULL;
	int fds[NFD], extra[64], i, bad = 0;

	CHECK_EQ(loop_create(&l), 0);
	if (!l)
		return;
	memset(hits, 0, sizeof(hits));
	for (i = 0; i < NFD; i++) {
		fds[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		CHECK(fds[i] >= 0);
		CHECK_EQ(loop_add_fd(l, fds[i], EPOLLIN, on_ev, (void *)(intptr_t)i), 0);
	}
	CHECK_EQ(loop_fd_count(l), NFD);
	CHECK_EQ(loop_add_fd(l, fds[7], EPOLLIN, on_ev, NULL), -EEXIST);
	CHECK_EQ(loop_add_fd(l, -1, EPOLLIN, on_ev, NULL), -EBADF);
	for (i = 0; i < NFD; i++)
		kick(fds[i]);
	drain(l);
	for (i = 0; i < NFD; i++)
		bad += hits[i] != 1;
	CHECK_EQ(bad, 0);

	/* free every other slot: those fds are silent from now on, even when
	 * kicked; new fds take the freed slots and are heard */
	for (i = 0; i < NFD; i += 2)
		CHECK_EQ(loop_del_fd(l, fds[i]), 0);
	CHECK_EQ(loop_del_fd(l, fds[0]), -ENOENT);
	CHECK_EQ(loop_fd_count(l), NFD / 2);
	memset(hits, 0, sizeof(hits));
	for (i = 0; i < NFD; i++)
		kick(fds[i]);
	for (i = 0; i < 64; i++) {
		extra[i] = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
		CHECK_EQ(loop_add_fd(l, extra[i], EPOLLIN, on_ev, (void *)(intptr_t)(NFD + i)), 0);
	}
	drain(l);
	for (i = 0, bad = 0; i < NFD; i++)
		bad += hits[i] != (i % 2 ? 1 : 0);
	for (i = 0; i < 64; i++)
		bad += hits[NFD + i] != 1;
	CHECK_EQ(bad, 0);
	CHECK_EQ(loop_fd_count(l), NFD / 2 + 64);
	loop_destroy(l);
	for (i = 0; i < NFD; i++)
		close(fds[i]);
	for (i = 0; i < 64; i++)
		close(extra[i]);
}

/*
 * Whichever of a and b runs first removes the other and closes it, opens
 * a new fd (which gets the closed one's number and slot) and watches it
 * with a callback that must never run: it is not readable. The stale event
 * of the removed fd, still in the same batch, must go nowhere.
 */
struct pair {
	struct loop *l;
	int a, b, fresh, ran, fresh_ran;
};

static void on_fresh(void *ctx, int fd, uint32_t events)
{
	((struct pair *)ctx)->fresh_ran++;
}

static void on_pair(void *ctx, int fd, uint32_t events)
{
	struct pair *p = ctx;
	int other = fd == p->a ? p->b : p->a;

	p->ran++;
	if (p->ran > 1)
		return;
	CHECK_EQ(loop_del_fd(p->l, other), 0);
	close(other);
	p->fresh = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK_EQ(p->fresh, other);
	CHECK_EQ(loop_add_fd(p->l, p->fresh, EPOLLIN, on_fresh, p), 0);
	if (fd == p->a)
		p->b = -1;
	else
		p->a = -1;
}

static void test_loop_remove_in_callback(void)
{
	struct pair p = { 0 };

	CHECK_EQ(loop_create(&p.l), 0);
	if (!p.l)
		return;
	p.a = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	p.b = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK_EQ(loop_add_fd(p.l, p.a, EPOLLIN, on_pair, &p), 0);
	CHECK_EQ(loop_add_fd(p.l, p.b, EPOLLIN, on_pair, &p), 0);
	CHECK_EQ(loop_run_once(p.l, 0), 2);	/* both in one batch */
	CHECK_EQ(p.fresh_ran, 0);
	CHECK_EQ(loop_fd_count(p.l), 2);
	loop_destroy(p.l);
	close(p.a >= 0 ? p.a : p.b);
	close(p.fresh);
}

static void test_loop_closed_without_del(void)
{
	struct loop *l = NULL;
	int fd, fd2;

	CHECK_EQ(loop_create(&l), 0);
	if (!l)
		return;
	memset(hits, 0, sizeof(hits));
	fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK_EQ(loop_add_fd(l, fd, EPOLLIN, on_ev, (void *)(intptr_t)1), 0);
	close(fd);		/* epoll forgets it; the loop learns on reuse */
	fd2 = eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
	CHECK_EQ(fd2, fd);
	CHECK_EQ(loop_add_fd(l, fd2, EPOLLIN, on_ev, (void *)(intptr_t)2), 0);
	CHECK_EQ(loop_fd_count(l), 1);
	drain(l);
	CHECK_EQ(hits[1], 0);
	CHECK_EQ(hits[2], 1);

	/* interest off: readable but quiet; on again: heard */
	CHECK_EQ(loop_mod_fd(l, fd2, 0), 0);
	kick(fd2);
	CHECK_EQ(loop_run_once(l, 0), 0);
	CHECK_EQ(loop_mod_fd(l, fd2, EPOLLIN), 0);
	CHECK_EQ(loop_run_once(l, 0), 1);
	CHECK_EQ(hits[2], 2);
	CHECK_EQ(loop_mod_fd(l, 999, EPOLLIN), -ENOENT);
	CHECK_EQ(loop_del_fd(l, fd2), 0);
	CHECK_EQ(loop_fd_count(l), 0);
	close(fd2);
	loop_destroy(l);
}

struct tstate {
	struct loop *l;
	struct loop_timer *self, *victim;
	int fired, victim_fired;
	uint64_t at;
	uint64_t rearm_ns;	/* 0: fire once */
};

static void on_timer(void *ctx, uint64_t now)
{
	struct tstate *t = ctx;

	t->fired++;
	t->at = now;
	if (t->victim) {	/* destroy another timer from inside a callback */
		loop_timer_destroy(t->l, t->victim);
		t->victim = NULL;
	}
	if (t->rearm_ns && t->fired < 4)
		loop_timer_set(t->self, now + t->rearm_ns);
}

static void on_victim(void *ctx, uint64_t now)
{
	((struct tstate *)ctx)->victim_fired++;
}

static void test_loop_timers(void)
{
	struct tstate t = { 0 };
	struct loop_timer *t2 = NULL;
	struct loop *l = NULL;
	uint64_t t0, dt;
	int n;

	CHECK_EQ(loop_create(&l), 0);
	if (!l)
		return;
	t.l = l;
	CHECK_EQ(loop_timer_create(l, on_timer, &t, &t.self), 0);
	CHECK_EQ(loop_timer_create(l, on_victim, &t, &t2), 0);
	CHECK_EQ(loop_timer_create(l, NULL, &t, &t2), -EINVAL);

	/* told to wait forever, the loop still wakes for the timer */
	t0 = loop_now_ns();
	loop_timer_set(t.self, t0 + 20000000);
	CHECK_EQ(loop_run_once(l, LOOP_FOREVER), 0);
	dt = loop_now_ns() - t0;
	CHECK_EQ(t.fired, 1);
	CHECK(t.at >= t0 + 20000000);
	CHECK(dt >= 20000000 && dt < 200000000);

	/* disarmed by firing: a short deadline passes without it */
	CHECK_EQ(loop_run_once(l, loop_now_ns() + 2000000), 0);
	CHECK_EQ(t.fired, 1);

	/* a time already past fires on the next pass; re-armed from its own
	 * callback it fires again; it kills the victim that was due later */
	t.rearm_ns = 1000000;
	t.victim = t2;
	loop_timer_set(t2, loop_now_ns() + 500000000);
	loop_timer_set(t.self, 1);
	for (n = 0; n < 20 && t.fired < 4; n++)
		loop_run_once(l, loop_now_ns() + 50000000);
	CHECK_EQ(t.fired, 4);
	CHECK_EQ(t.victim_fired, 0);

	/* off: LOOP_FOREVER */
	loop_timer_set(t.self, loop_now_ns() + 1000000);
	loop_timer_set(t.self, LOOP_FOREVER);
	CHECK_EQ(loop_run_once(l, loop_now_ns() + 5000000), 0);
	CHECK_EQ(t.fired, 4);
	loop_timer_destroy(l, NULL);
	loop_destroy(l);	/* frees the timer still there */
}

static void test_loop_signals(void)
{
	struct loop *l = NULL;
	uint64_t sig;

	CHECK_EQ(loop_create(&l), 0);
	if (!l)
		return;
	CHECK_EQ(loop_catch_signal_set(l, 1ull << SIGUSR1), 0);
	CHECK_EQ(loop_catch_signal_set(l, 1ull << SIGUSR2), -EBUSY);
	raise(SIGUSR1);
	CHECK_EQ(loop_run_once(l, loop_now_ns() + 1000000000), 1);
	sig = loop_take_signals(l);
	CHECK_EQ(sig, 1ull << SIGUSR1);
	CHECK_EQ(loop_take_signals(l), 0);
	loop_destroy(l);
}

static int entered, hits_at_enter;

static void on_enter(void *ctx)
{
	entered++;
	hits_at_enter = hits[(intptr_t)ctx];
}

static void on_timer_hit(void *ctx, uint64_t now)
{
	hits[(intptr_t)ctx]++;
}

/*
 * l2ccd's hooks: the enter hook runs once in a pass before the first
 * callback or due timer, never in a pass where only a wake-only fd (fn
 * NULL: a daemon's rings) was ready; the loop's epoll fd is readable from
 * an outer epoll while an fd inside is; loop_next_timer is the earliest.
 */
static void test_loop_enter_hook(void)
{
	struct loop *l = NULL;
	struct loop_timer *t = NULL;
	struct epoll_event ev = { .events = EPOLLIN };
	int a = eventfd(0, EFD_NONBLOCK), b = eventfd(0, EFD_NONBLOCK), outer = epoll_create1(0);
	uint64_t now;

	CHECK_EQ(loop_create(&l), 0);
	if (!l || a < 0 || b < 0 || outer < 0)
		return;
	loop_set_enter(l, on_enter, (void *)(intptr_t)NFD);
	CHECK_EQ(loop_add_fd(l, a, EPOLLIN | EPOLLET, NULL, NULL), 0);   /* wakes only */
	CHECK_EQ(loop_add_fd(l, b, EPOLLIN, on_ev, (void *)(intptr_t)NFD), 0);
	CHECK_EQ(epoll_ctl(outer, EPOLL_CTL_ADD, loop_fd(l), &ev), 0);
	CHECK_EQ(loop_next_timer(l), LOOP_FOREVER);

	hits[NFD] = 0;
	entered = 0;
	CHECK_EQ(epoll_wait(outer, &ev, 1, 0), 0);
	kick(a);
	CHECK_EQ(epoll_wait(outer, &ev, 1, 0), 1);        /* a's edge, seen from outside */
	CHECK_EQ(loop_run_once(l, 0), 1);
	CHECK_EQ(entered, 0);                             /* nothing of ours ran */
	CHECK_EQ(epoll_wait(outer, &ev, 1, 0), 0);        /* the edge was taken */
	kick(b);
	CHECK_EQ(loop_run_once(l, 0), 1);
	CHECK_EQ(entered, 1);
	CHECK_EQ(hits[NFD], 1);
	CHECK_EQ(hits_at_enter, 0);                       /* before b's callback */
	kick(a);
	kick(b);
	CHECK_EQ(loop_run_once(l, 0), 2);
	CHECK_EQ(entered, 2);                             /* once per pass */

	CHECK_EQ(loop_timer_create(l, on_timer_hit, (void *)(intptr_t)(NFD + 1), &t), 0);
	now = loop_now_ns();
	loop_timer_set(t, now + 3600000000000ull);
	CHECK_EQ(loop_next_timer(l), now + 3600000000000ull);
	CHECK_EQ(loop_run_once(l, 0), 0);
	CHECK_EQ(entered, 2);                             /* a timer not due: no enter */
	loop_timer_set(t, now);
	hits[NFD + 1] = 0;
	CHECK_EQ(loop_run_once(l, 0), 0);
	CHECK_EQ(hits[NFD + 1], 1);
	CHECK_EQ(entered, 3);                             /* a due timer alone enters */
	loop_destroy(l);
	close(a);
	close(b);
	close(outer);
}

/* The time series tick: every interval from its first, and a daemon that
 * fell behind skips what it missed (one line, not a burst). */
static void test_drun_every(void)
{
	uint64_t next = 1234567;

	CHECK(drun_every(&next, 1234567, 10000000));
	CHECK_EQ(next, 11234567);
	CHECK(!drun_every(&next, 11234566, 10000000));
	CHECK(drun_every(&next, 11300000, 10000000));     /* a little late: keeps its phase */
	CHECK_EQ(next, 21234567);
	CHECK(drun_every(&next, 75000000, 10000000));     /* 5 ticks late: one line */
	CHECK_EQ(next, 85000000);
	CHECK(!drun_every(&next, 90000000, 0));           /* interval 0: never */
}

int main(void)
{
	struct rlimit rl;

	log_set_level(getenv("L2CC_TEST_VERBOSE") ? LOG_LVL_DEBUG : -1);
	/* NFD + 64 eventfds: within the usual soft limit of 1024, but a
	 * lower one must not fail the test. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	RUN(test_loop_many_fds);
	RUN(test_loop_remove_in_callback);
	RUN(test_loop_closed_without_del);
	RUN(test_loop_timers);
	RUN(test_loop_signals);
	RUN(test_loop_enter_hook);
	RUN(test_drun_every);
	return check_summary();
}
