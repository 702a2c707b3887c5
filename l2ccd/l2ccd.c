// SPDX-License-Identifier: BSD-2-Clause
/*
 * l2ccd: several switchd and hostd daemons in one process, each in its own
 * network namespace, all of a thread's daemons served by one loop — the way
 * one ovs-vswitchd serves many bridges. A frame one daemon sends to another
 * of the same thread is in the receiver's ring when sendto() returns (the
 * veth's receive path runs in the sender's softirq), and the loop's next
 * pass takes it: a hop costs no wake-up, where between two processes it
 * costs one, tens of µs on a VM (docs/performance.md). The testbed starts
 * one for a lab with `l2cc-lab up --one-process`; lab hosts keep one
 * daemon per systemd unit.
 *
 * Each daemon is exactly the one its own binary would run (struct
 * drun_kind: the same create, poll, deadline, reload and destroy), so the
 * loop below is drun_loop() over many: poll every daemon, spin while any
 * is busy, look at the event loops every 100 µs, sleep to the earliest
 * deadline when all are idle. A daemon's data path names no interface;
 * what does (its creation, destruction, reload, control requests, timers)
 * runs after setns() into its namespace (loop_set_enter()).
 */
#define LOG_SUBSYS "l2ccd"
#include "drun.h"
#include "dcli.h"
#include "../hostd/hostd.h"
#include "log.h"
#include "loop.h"
#include "notify.h"
#include "version.h"
#include "../switchd/switch.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#define L2CCD_MAX_NODES 256
#define L2CCD_MAX_THREADS 64
#define L2CCD_CHECK_NS 100000ull	/* as drun: event loops every 100 µs while busy */
#define L2CCD_EVENTS 64

struct l2ccd;
struct l2ccd_worker;

/* One daemon. */
struct l2ccd_node {
	const struct drun_kind *kind;
	const char *spec;               /* as given on the command line */
	char netns[256];                /* name under /run/netns or a path; "" = ours */
	int nsfd;                       /* its namespace; the process's own if none */
	int thread;                     /* -1: round robin */
	struct dcli_args args;
	void *cfg;
	struct drun r;
	struct l2ccd_worker *w;
	uint64_t last_work;
	bool started;
};

/* One thread and the daemons it serves. */
struct l2ccd_worker {
	struct l2ccd *d;
	pthread_t tid;
	int epfd;                       /* the daemons' event loops, and evfd */
	int evfd;                       /* stop or reload: another thread woke us */
	int cur_ns;                     /* the namespace fd this thread is in now */
	struct l2ccd_node *nodes[L2CCD_MAX_NODES];
	int nnodes;
	/* A pass: nodes in the order l2ccd_order() gives (switches repeated). */
	struct l2ccd_node **sched;
	int nsched;
	unsigned reload_seen;
	int err;
};

struct l2ccd {
	struct l2ccd_node nodes[L2CCD_MAX_NODES];
	int nnodes;
	struct l2ccd_worker workers[L2CCD_MAX_THREADS];
	int nworkers;
	int home_ns;                    /* the namespace l2ccd started in */
	int cli_level;
	bool weigh;                     /* each thread as heavy as its daemons (nice) */
	int rt_prio;                    /* --realtime: SCHED_FIFO priority, 0 = no */
	pthread_barrier_t started;
	atomic_int failed;              /* a daemon did not start: everyone stops */
	atomic_bool stop;
	atomic_uint reload_gen;
};

static const struct drun_kind *l2ccd_kind(const char *name, size_t len)
{
	static const struct drun_kind *const kinds[] = { &switchd_kind, &hostd_kind };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i]->cli->prog) == len && !strncmp(kinds[i]->cli->prog, name, len))
			return kinds[i];
	return NULL;
}

/*
 * KIND[@NETNS][#THREAD]:CONFIG, e.g. switchd@lab-s1:/run/l2cc/lab/s1.conf.
 * 0, or -EINVAL with the reason in err.
 */
static int l2ccd_parse_node(struct l2ccd_node *n, const char *spec, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':'), *at, *hash, *end;
	char *num_end;

	n->spec = spec;
	n->thread = -1;
	n->nsfd = -1;
	if (!colon || !colon[1]) {
		snprintf(err, errlen, "%s: expected KIND[@NETNS][#THREAD]:CONFIG", spec);
		return -EINVAL;
	}
	at = memchr(spec, '@', colon - spec);
	hash = memchr(spec, '#', colon - spec);
	end = at && (!hash || at < hash) ? at : hash ? hash : colon;
	n->kind = l2ccd_kind(spec, end - spec);
	if (!n->kind) {
		snprintf(err, errlen, "%s: unknown daemon \"%.*s\" (switchd or hostd)", spec,
			 (int)(end - spec), spec);
		return -EINVAL;
	}
	if (at) {
		const char *ns_end = hash && hash > at ? hash : colon;

		if (ns_end == at + 1 || (size_t)(ns_end - at - 1) >= sizeof(n->netns)) {
			snprintf(err, errlen, "%s: expected a namespace name after '@'", spec);
			return -EINVAL;
		}
		memcpy(n->netns, at + 1, ns_end - at - 1);
	}
	if (hash) {
		long t = strtol(hash + 1, &num_end, 10);

		if (num_end == hash + 1 || (*num_end != ':' && *num_end != '@') || t < 0 ||
		    t >= L2CCD_MAX_THREADS) {
			snprintf(err, errlen, "%s: expected a thread number 0..%d after '#'", spec,
				 L2CCD_MAX_THREADS - 1);
			return -EINVAL;
		}
		n->thread = (int)t;
	}
	n->args.prog = n->kind->cli->prog;
	n->args.path = colon + 1;
	return 0;
}

/* Open the node's namespace: a name as `ip netns` keeps it, or a path. */
static int l2ccd_open_ns(struct l2ccd *d, struct l2ccd_node *n, char *err, size_t errlen)
{
	char path[300];

	if (!n->netns[0]) {
		n->nsfd = d->home_ns;
		return 0;
	}
	snprintf(path, sizeof(path), "%s%s", strchr(n->netns, '/') ? "" : "/run/netns/", n->netns);
	n->nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (n->nsfd < 0) {
		int e = -errno;

		snprintf(err, errlen, "%s: network namespace %s: %s", n->spec, path, strerror(-e));
		return e;
	}
	return 0;
}

/* Make the calling thread live in n's namespace (and tag its log lines):
 * what names interfaces resolves them there. 0 or -errno. */
static int l2ccd_enter_ns(struct l2ccd_node *n)
{
	struct l2ccd_worker *w = n->w;

	log_set_thread_ident(n->r.name ? n->r.name : n->spec);
	if (w->cur_ns == n->nsfd)
		return 0;
	if (setns(n->nsfd, CLONE_NEWNET))
		return -errno;
	w->cur_ns = n->nsfd;
	return 0;
}

/* The event loop's enter hook: a callback cannot fail its caller, so a
 * failed setns (a namespace file we entered before: not expected) is
 * said, rate-limited. */
static void l2ccd_enter(void *ctx)
{
	struct l2ccd_node *n = ctx;
	int err = l2ccd_enter_ns(n);

	if (err)
		pr_rl(LOG_LVL_ERR, "%s: setns: %s\n", n->spec, strerror(-err));
}

/* Back to the namespace l2ccd started in, and l2ccd's own log tag. */
static void l2ccd_go_home(struct l2ccd_worker *w)
{
	log_set_thread_ident(NULL);
	if (w->cur_ns != w->d->home_ns && !setns(w->d->home_ns, CLONE_NEWNET))
		w->cur_ns = w->d->home_ns;
}

static void l2ccd_wake_all(struct l2ccd *d)
{
	uint64_t one = 1;

	/* A failed write means the counter is full: that thread wakes anyway. */
	for (int i = 0; i < d->nworkers; i++)
		(void)!write(d->workers[i].evfd, &one, sizeof(one));
}

/* Signals arrive at whichever daemon's signalfd reads them first; they
 * mean the same to every daemon of the process. */
static void l2ccd_signals(struct l2ccd *d, struct l2ccd_node *n)
{
	uint64_t sig = loop_take_signals(n->r.loop);

	if (sig & ((1ull << SIGTERM) | (1ull << SIGINT))) {
		atomic_store(&d->stop, true);
		l2ccd_wake_all(d);
	}
	if (sig & (1ull << SIGHUP)) {
		atomic_fetch_add(&d->reload_gen, 1);
		l2ccd_wake_all(d);
	}
}

/* Run a daemon's event loop once without waiting: control requests, its
 * timers, signals. */
static int l2ccd_run_loop(struct l2ccd *d, struct l2ccd_node *n)
{
	int ret;

	log_set_thread_ident(n->r.name);
	ret = loop_run_once(n->r.loop, 0);
	if (ret < 0)
		log_msg(LOG_LVL_ERR, n->r.name, "event loop: %s\n", strerror(-ret));
	l2ccd_signals(d, n);
	return ret;
}

static int l2ccd_start_nodes(struct l2ccd_worker *w)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int err = 0;

	for (int i = 0; i < w->nnodes && !err; i++) {
		struct l2ccd_node *n = w->nodes[i];

		n->w = w;
		/* Never start a daemon in another namespace than its own: it
		 * would take a same-named interface there. */
		err = l2ccd_enter_ns(n);
		if (err) {
			log_msg(LOG_LVL_ERR, "l2ccd", "%s: setns: %s\n", n->spec, strerror(-err));
			break;
		}
		err = n->kind->start(n->cfg, &n->args, &n->r);
		if (err) {
			log_msg(LOG_LVL_ERR, "l2ccd", "%s did not start: %s\n", n->spec,
				strerror(-err));
			break;
		}
		n->started = true;
		loop_set_enter(n->r.loop, l2ccd_enter, n);
		ev.data.ptr = n;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, loop_fd(n->r.loop), &ev))
			err = -errno;
	}
	return err;
}

static void l2ccd_stop_nodes(struct l2ccd_worker *w)
{
	for (int i = w->nnodes - 1; i >= 0; i--) {
		struct l2ccd_node *n = w->nodes[i];

		int err;

		if (!n->r.d)
			continue;
		/* Taking a program off by index in another namespace would
		 * take someone else's: left as a killed daemon leaves it. */
		err = l2ccd_enter_ns(n);
		if (err) {
			log_msg(LOG_LVL_ERR, n->r.name, "setns: %s; not stopped (its next start "
				"cleans up)\n", strerror(-err));
			continue;
		}
		log_msg(LOG_LVL_INFO, n->r.name, "stopping\n");
		n->kind->stop(&n->r);
	}
	l2ccd_go_home(w);
}

static void l2ccd_reload(struct l2ccd_worker *w)
{
	unsigned gen = atomic_load(&w->d->reload_gen);

	if (gen == w->reload_seen)
		return;
	w->reload_seen = gen;
	for (int i = 0; i < w->nnodes; i++) {
		struct l2ccd_node *n = w->nodes[i];

		int err = l2ccd_enter_ns(n);

		if (err) {
			log_msg(LOG_LVL_ERR, n->r.name, "setns: %s; not reloaded\n",
				strerror(-err));
			continue;
		}
		n->r.ops->reload(n->r.d, &n->args);
	}
}

/* Poll one daemon; true if it did work or is within its busy_poll. */
static bool l2ccd_poll(struct l2ccd_node *n, uint64_t *now)
{
	bool busy;

	log_set_thread_ident(n->r.name);
	busy = n->r.ops->poll(n->r.d);
	*now = *n->r.now;
	if (busy)
		n->last_work = *now;
	else if (*now - n->last_work < *n->r.busy_poll)
		busy = true;
	return busy;
}

/*
 * The order of a pass: every switch of the thread before each host, so a
 * switch is polled once per host rather than once per pass. A host that
 * takes a full batch from a flooding sender holds the loop for tens of µs;
 * 23 of them in a row (santos-cc) held a switch's 100M port for longer
 * than its wire clock's burst, and the port fell short of its rate. An
 * idle switch's poll costs little; a thread of switches only (or of hosts
 * only) polls each once.
 */
static void l2ccd_order(struct l2ccd_worker *w)
{
	int nsw = 0, nhost = 0;

	for (int i = 0; i < w->nnodes; i++)
		w->nodes[i]->kind == &switchd_kind ? nsw++ : nhost++;
	w->nsched = 0;
	if (!nsw || !nhost) {
		for (int i = 0; i < w->nnodes; i++)
			w->sched[w->nsched++] = w->nodes[i];
		return;
	}
	for (int h = 0; h < w->nnodes; h++) {
		if (w->nodes[h]->kind == &switchd_kind)
			continue;
		for (int i = 0; i < w->nnodes; i++)
			if (w->nodes[i]->kind == &switchd_kind)
				w->sched[w->nsched++] = w->nodes[i];
		w->sched[w->nsched++] = w->nodes[h];
	}
}

/* drun_loop() over the thread's daemons. */
static int l2ccd_serve(struct l2ccd_worker *w)
{
	struct l2ccd *d = w->d;
	struct epoll_event ev[L2CCD_EVENTS];
	uint64_t last_check = 0, now = 0;
	int err = 0;

	while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
		uint64_t deadline = LOOP_FOREVER;
		struct timespec ts;
		bool work = false;
		int nev;

		/* The switches between every host: see l2ccd_order(). */
		for (int i = 0; i < w->nsched; i++)
			work |= l2ccd_poll(w->sched[i], &now);
		if (work && now - last_check < L2CCD_CHECK_NS)
			continue;
		last_check = now;
		if (!work) {
			for (int i = 0; i < w->nnodes; i++) {
				uint64_t t = w->nodes[i]->r.ops->next_deadline(w->nodes[i]->r.d);
				uint64_t lt = loop_next_timer(w->nodes[i]->r.loop);

				deadline = t < deadline ? t : deadline;
				deadline = lt < deadline ? lt : deadline;
			}
		} else {
			deadline = 0;
		}
		nev = epoll_pwait2(w->epfd, ev, L2CCD_EVENTS, loop_wait_ts(deadline, &ts), NULL);
		if (nev < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			pr_err("epoll: %s\n", strerror(-err));
			break;
		}
		for (int i = 0; i < nev; i++) {
			struct l2ccd_node *n = ev[i].data.ptr;
			uint64_t cnt;

			if (!n) {
				(void)!read(w->evfd, &cnt, sizeof(cnt)); /* nonblocking */
				continue;
			}
			if (!work)
				(*n->r.wakeups)++;
			/* Also when only its rings woke it: that takes the
			 * edge-triggered events, or the loop would stay readable. */
			if (l2ccd_run_loop(d, n) < 0)
				err = -EIO;
		}
		/* Timers of loops whose descriptors were quiet. */
		now = loop_now_ns();
		for (int i = 0; i < w->nnodes; i++)
			if (loop_next_timer(w->nodes[i]->r.loop) <= now)
				l2ccd_run_loop(d, w->nodes[i]);
		if (err)
			break;
		l2ccd_reload(w);
	}
	if (err) {
		atomic_store(&d->stop, true);
		l2ccd_wake_all(d);
	}
	return err;
}

/*
 * A thread serving n daemons gets the CPU share n processes would have had:
 * the scheduler weighs a task by its nice level, each level about 1.25
 * times the next (the kernel's sched_prio_to_weight), so n daemons weigh
 * what one task does at nice -log(n)/log(1.25). Without it, a lab's one
 * loop would get one share among dozens of iperf3 senders, and its links
 * would fall short for want of CPU, not for want of speed.
 */
static void l2ccd_weigh(struct l2ccd_worker *w)
{
	int nice_level;

	if (w->nnodes < 2)
		return;
	nice_level = -(int)lround(log((double)w->nnodes) / log(1.25));
	if (nice_level < -20)
		nice_level = -20;
	if (setpriority(PRIO_PROCESS, (id_t)gettid(), nice_level))
		pr_warn("thread of %d daemons: nice %d: %s; it competes for the CPU as one "
			"process\n", w->nnodes, nice_level, strerror(errno));
}

/*
 * --realtime: the loop as the fabric's hardware, which no host program can
 * delay: SCHED_FIFO, so a woken loop runs at once instead of waiting out a
 * traffic generator's time slice (a lab whose senders load both cores
 * left the loop runnable and waiting a third of the time at any nice
 * level). It blocks when idle, the kernel's RT throttling keeps 5 % of
 * every second for everyone else, and one loop holds one core at most.
 * True if it took effect.
 */
static bool l2ccd_realtime(struct l2ccd_worker *w)
{
	struct sched_param sp = { .sched_priority = w->d->rt_prio };
	int err;

	if (!w->d->rt_prio)
		return false;
	err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err)
		pr_warn("thread of %d daemons: SCHED_FIFO %d: %s; weighed by nice instead\n",
			w->nnodes, w->d->rt_prio, strerror(err));
	return !err;
}

static void *l2ccd_worker_main(void *arg)
{
	struct l2ccd_worker *w = arg;
	struct l2ccd *d = w->d;
	int err;

	if (!l2ccd_realtime(w) && d->weigh)
		l2ccd_weigh(w);

	w->cur_ns = d->home_ns;
	w->reload_seen = atomic_load(&d->reload_gen);
	/* Hosts times (switches + 1) at most. */
	w->sched = calloc((size_t)w->nnodes * w->nnodes + 1, sizeof(*w->sched));
	err = w->sched ? l2ccd_start_nodes(w) : -ENOMEM;
	if (!err)
		l2ccd_order(w);
	if (err)
		atomic_store(&d->failed, 1);
	pthread_barrier_wait(&d->started);
	/* Each daemon's start named the process after itself; l2ccd's own
	 * lines (and any outside a daemon) carry l2ccd again. Home, too: a
	 * systemd notification socket may be an abstract name, which lives
	 * in a namespace. */
	if (w == &d->workers[0])
		log_init("l2ccd", log_get_level());
	l2ccd_go_home(w);
	if (!err && !atomic_load(&d->failed)) {
		if (w == &d->workers[0])
			notify_send("READY=1");
		err = l2ccd_serve(w);
	}
	if (w == &d->workers[0] && !err && !atomic_load(&d->failed)) {
		l2ccd_go_home(w);
		notify_send("STOPPING=1");
	}
	l2ccd_stop_nodes(w);
	free(w->sched);
	w->err = err;
	return NULL;
}

/* Options as data (dcli.h's rows): getopt's tables and --help from one list. */
static const struct dcli_opt l2ccd_opts[] = {
	DCLI_OPT("threads", 't', "N", "loops (threads), default 1"),
	DCLI_OPT("no-weight", 'W', NULL,
		 "every thread at nice 0 (default: n daemons' thread weighs n tasks)"),
	DCLI_OPT("realtime", 'R', "P", "every loop SCHED_FIFO at priority P (1..99)"),
	DCLI_OPT("verbose", 'v', NULL, "more logging"),
	DCLI_OPT("quiet", 'q', NULL, "errors only"),
	DCLI_OPT("version", 'V', NULL, "print the version and exit"),
	DCLI_OPT("help", 'h', NULL, "this help"),
};
#define L2CCD_NOPTS (int)(sizeof(l2ccd_opts) / sizeof(l2ccd_opts[0]))

static void l2ccd_usage(FILE *f)
{
	fprintf(f,
		"usage: l2ccd [-t THREADS] [-R PRIO] [-W] [-v|-q] KIND[@NETNS][#THREAD]:CONFIG...\n"
		"Several switchd and hostd daemons in one process, one loop per thread.\n\n"
		"  KIND     switchd or hostd: the daemon its own binary would run, on CONFIG\n"
		"  NETNS    the network namespace it lives in: a name under /run/netns\n"
		"           (ip netns) or a path; none: l2ccd's own\n"
		"  THREAD   the thread that serves it (0..THREADS-1); none: round robin\n\n");
	for (int i = 0; i < L2CCD_NOPTS; i++)
		dcli_opt_print(f, &l2ccd_opts[i], 20);
	fprintf(f,
		"\nSignals: TERM/INT stop every daemon, HUP reloads every configuration.\n"
		"Reference: docs/l2ccd.md\n");
}

static int l2ccd_main(struct l2ccd *d, int argc, char **argv)
{
	struct option lopts[L2CCD_NOPTS + 1];
	char shorts[2 * L2CCD_NOPTS + 2];
	char msg[600], *end;
	sigset_t set;
	int c, err = 0, started = 0, status = 0;

	d->nworkers = 1;
	d->weigh = true;
	d->cli_level = -1;
	d->home_ns = -1;
	dcli_getopt_tables(l2ccd_opts, L2CCD_NOPTS, lopts, shorts, false);
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		switch (c) {
		case 't':
			d->nworkers = (int)strtol(optarg, &end, 10);
			if (*end || d->nworkers < 1 || d->nworkers > L2CCD_MAX_THREADS) {
				fprintf(stderr, "l2ccd: --threads: expected 1..%d, got \"%s\"\n",
					L2CCD_MAX_THREADS, optarg);
				return 2;
			}
			break;
		case 'W':
			d->weigh = false;
			break;
		case 'R':
			d->rt_prio = (int)strtol(optarg, &end, 10);
			if (*end || d->rt_prio < 1 || d->rt_prio > 99) {
				fprintf(stderr, "l2ccd: --realtime: expected a priority 1..99, got "
					"\"%s\"\n", optarg);
				return 2;
			}
			break;
		case 'v':
			d->cli_level = d->cli_level > LOG_LVL_INFO ? LOG_LVL_DEBUG + 1 : LOG_LVL_DEBUG;
			break;
		case 'q':
			d->cli_level = LOG_LVL_ERR;
			break;
		case 'V':
			l2cc_version_print(stdout, "l2ccd");
			return 0;
		case 'h':
			l2ccd_usage(stdout);
			return 0;
		default:
			l2ccd_usage(stderr);
			return 2;
		}
	}
	if (optind == argc || argc - optind > L2CCD_MAX_NODES) {
		fprintf(stderr, "l2ccd: expected 1..%d daemons (KIND[@NETNS][#THREAD]:CONFIG)\n",
			L2CCD_MAX_NODES);
		return 2;
	}
	log_init("l2ccd", d->cli_level >= 0 ? d->cli_level : LOG_LVL_INFO);
	d->home_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (d->home_ns < 0) {
		fprintf(stderr, "l2ccd: /proc/thread-self/ns/net: %s\n", strerror(errno));
		return 1;
	}
	/* Every configuration is read before anything starts: a bad one stops
	 * l2ccd with its file and line, as the daemon's own binary would. */
	for (int i = optind; i < argc; i++) {
		struct l2ccd_node *n = &d->nodes[d->nnodes++];

		err = l2ccd_parse_node(n, argv[i], msg, sizeof(msg));
		if (!err)
			err = l2ccd_open_ns(d, n, msg, sizeof(msg));
		if (!err && n->thread >= d->nworkers) {
			snprintf(msg, sizeof(msg), "%s: thread %d, but --threads is %d", n->spec,
				 n->thread, d->nworkers);
			err = -EINVAL;
		}
		n->args.cli_level = d->cli_level;
		if (!err) {
			n->cfg = calloc(1, n->kind->cli->cfg_size);
			err = n->cfg ? n->kind->cli->load(n->cfg, n->args.path, NULL, 0, msg,
							  sizeof(msg))
				     : -ENOMEM;
		}
		if (err) {
			/* The loader's reason names file, line and key; say
			 * which daemon's, as its own binary would. */
			fprintf(stderr, "l2ccd: %s%s%s\n", n->cfg ? n->kind->cli->prog : "",
				n->cfg ? ": " : "", err == -ENOMEM ? "out of memory" : msg);
			status = 2;
			goto out;
		}
		n->w = &d->workers[n->thread >= 0 ? n->thread : (i - optind) % d->nworkers];
		n->w->nodes[n->w->nnodes++] = n;
	}
	/* The daemons' signalfds take TERM, INT and HUP; no thread may get
	 * them the default way. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_barrier_init(&d->started, NULL, (unsigned)d->nworkers);
	for (int i = 0; i < d->nworkers; i++) {
		struct l2ccd_worker *w = &d->workers[i];
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

		w->d = d;
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		w->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (w->epfd < 0 || w->evfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->evfd, &ev)) {
			pr_err("thread %d: %s\n", i, strerror(errno));
			status = 1;
			break;
		}
	}
	for (int i = 0; !status && i < d->nworkers; i++) {
		err = -pthread_create(&d->workers[i].tid, NULL, l2ccd_worker_main, &d->workers[i]);
		if (err) {
			pr_err("thread %d: %s\n", i, strerror(-err));
			status = 1;
			break;
		}
		started++;
	}
	if (status && started) {
		/* The barrier never fills: the ones running wait for good. */
		pr_err("could not start every thread; exiting\n");
		_exit(1);
	}
	for (int i = 0; i < started; i++) {
		pthread_join(d->workers[i].tid, NULL);
		if (d->workers[i].err)
			status = 1;
	}
	if (atomic_load(&d->failed))
		status = 1;
	pthread_barrier_destroy(&d->started);
out:
	for (int i = 0; i < d->nworkers; i++) {
		if (d->workers[i].epfd > 0)
			close(d->workers[i].epfd);
		if (d->workers[i].evfd > 0)
			close(d->workers[i].evfd);
	}
	for (int i = 0; i < d->nnodes; i++) {
		if (d->nodes[i].nsfd >= 0 && d->nodes[i].nsfd != d->home_ns)
			close(d->nodes[i].nsfd);
		free(d->nodes[i].cfg);
	}
	if (d->home_ns >= 0)
		close(d->home_ns);
	return status;
}

int main(int argc, char **argv)
{
	static struct l2ccd d;

	return l2ccd_main(&d, argc, argv);
}
