// SPDX-License-Identifier: BSD-2-Clause
/*
 * afxdp_min: the copy-mode AF_XDP baseline of the benchmark (scripts/bench.sh).
 *
 *   afxdp_min [-b BATCH] [-r RING] [-v] IFA IFB
 *
 * The least an AF_XDP forwarder can do, so that `make bench` can say how far
 * switchd is from the ceiling of the copy-mode path on the same machine: one
 * UMEM shared (XDP_SHARED_UMEM) by one copy-mode socket on queue 0 of each
 * interface; each frame received on one goes out of the other by passing its
 * descriptor from the RX ring to the other socket's TX ring. No copy in
 * userspace, no parsing, no queues, no pacing, no counters on the path, no
 * code of switchd's (only libxdp's ring helpers and a one-line XDP program,
 * bpf/afxdp_min.bpf.c, one copy per interface).
 *
 * Buffers: each interface owns RING frames of the UMEM. A frame received on A
 * is transmitted on B, so B's completion ring returns A's frames: they go
 * straight back into A's fill ring. The fill rings have 2 x RING slots because
 * the kernel publishes its fill-ring consumer index late (when its cached
 * entries run out): a frame can complete before its slot is seen free. A
 * frame that finds the other TX ring full is dropped (back into its fill ring)
 * and counted.
 *
 * Loop and wake-up: each pass reclaims completions and moves up to BATCH
 * frames per direction, then kicks the TX side with one sendto() (copy mode
 * transmits at most 32 frames per call, hence BATCH 32; the kernel returning
 * EAGAIN with frames still on the ring, it is called again). Only when a pass
 * finds nothing to do does it sleep, in poll(2) on both sockets (POLLIN) and a
 * self-pipe the signal handler writes to: it blocks when idle, like the
 * daemons, and while frames keep coming it makes no system call but the kick.
 *
 * Prints "ready" once both sockets are bound and both programs attached,
 * exits on SIGTERM or SIGINT and then prints the frames forwarded. Programs
 * are held by BPF links and sockets by fds of this process, so exiting (or
 * being killed) leaves nothing attached.
 */
#define LOG_SUBSYS "afxdp_min"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "log.h"
#include "afxdp_min.skel.h"

#define FRAME_SIZE XSK_UMEM__DEFAULT_FRAME_SIZE
/* The kernel's copy-mode TX budget per sendto() (TX_BATCH_SIZE in net/xdp/xsk.c). */
#define COPY_TX_BUDGET 32

struct port {
	const char *ifname;
	unsigned int ifindex;
	struct afxdp_min_bpf *skel;
	struct xsk_socket *xsk;
	struct xsk_ring_cons rx, cq;
	struct xsk_ring_prod tx, fq;
	int fd;
	int link_fd;
	uint64_t tx_frames;   /* put on this port's TX ring (received on the other) */
	uint64_t dropped;     /* received here, no room on the other's TX ring */
	uint64_t kick_errors;
};

static volatile sig_atomic_t stop;
static int wake_pipe[2] = { -1, -1 };

/* Only a flag and a byte down the self-pipe: poll() wakes if it was asleep. */
static void on_signal(int sig)
{
	int saved = errno;
	ssize_t r;

	(void)sig;
	stop = 1;
	r = write(wake_pipe[1], "x", 1);
	(void)r;
	errno = saved;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: afxdp_min [-b BATCH] [-r RING] [-v] IFA IFB\n"
		"\n"
		"Forward every frame between IFA and IFB through one shared UMEM and one\n"
		"copy-mode AF_XDP socket per interface (queue 0), print \"ready\", and run\n"
		"until SIGTERM/SIGINT; then print the frames forwarded.\n"
		"\n"
		"  -b, --batch N    frames taken per RX ring per pass (default %d)\n"
		"  -r, --ring N     RX/TX ring slots and UMEM frames per interface, a power\n"
		"                   of two (default 1024, as switchd)\n"
		"  -v, --verbose    libbpf/libxdp debug output\n"
		"  -h, --help       this help\n", COPY_TX_BUDGET);
}

/* Frames still on p's TX ring that the kernel has not taken. */
static inline uint32_t tx_unsent(struct port *p, uint32_t ring)
{
	return ring - xsk_prod_nb_free(&p->tx, ring);
}

/* One sendto(); again only while the kernel stops at its budget (EAGAIN)
 * with frames left, a few times at most (EAGAIN also means a full
 * completion ring, which only the next pass empties). */
static void kick(struct port *p, uint32_t ring)
{
	int i;

	if (!xsk_ring_prod__needs_wakeup(&p->tx))
		return;
	for (i = 0; i < 8; i++) {
		if (sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return;
		if (errno != EAGAIN) {
			if (errno != ENOBUFS && errno != EBUSY && errno != ENETDOWN)
				p->kick_errors++;
			return;
		}
		if (!tx_unsent(p, ring))
			return;
	}
}

/* Put n frame addresses back into p's fill ring. There is always room:
 * the ring has twice as many slots as p owns frames. */
static void fill_put(struct port *p, const struct xsk_ring_cons *from_rx, uint32_t idx_rx, uint32_t n)
{
	uint32_t idx, i;

	if (xsk_ring_prod__reserve(&p->fq, n, &idx) != n)
		return; /* cannot happen (see above); the frames would be lost */
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) =
			xsk_ring_cons__rx_desc(from_rx, idx_rx + i)->addr;
	xsk_ring_prod__submit(&p->fq, n);
}

/* Completions of dst's TX are src's frames (dst only transmits what src
 * received): back into src's fill ring. */
static uint32_t reclaim(struct port *dst, struct port *src, uint32_t max)
{
	uint32_t n, idx_cq, idx_fq, i;

	n = xsk_ring_cons__peek(&dst->cq, max, &idx_cq);
	if (!n)
		return 0;
	if (xsk_ring_prod__reserve(&src->fq, n, &idx_fq) != n) {
		xsk_ring_cons__cancel(&dst->cq, n); /* cannot happen: see fill_put */
		return 0;
	}
	for (i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&src->fq, idx_fq + i) =
			*xsk_ring_cons__comp_addr(&dst->cq, idx_cq + i);
	xsk_ring_prod__submit(&src->fq, n);
	xsk_ring_cons__release(&dst->cq, n);
	return n;
}

/* Up to batch frames from src's RX ring onto dst's TX ring, one kick. */
static uint32_t forward(struct port *src, struct port *dst, uint32_t batch, uint32_t ring)
{
	uint32_t n, room, idx_rx, idx_tx, i;

	n = xsk_ring_cons__peek(&src->rx, batch, &idx_rx);
	if (!n)
		return 0;
	room = xsk_prod_nb_free(&dst->tx, n);
	if (room > n)
		room = n;
	if (room && xsk_ring_prod__reserve(&dst->tx, room, &idx_tx) == room) {
		for (i = 0; i < room; i++) {
			const struct xdp_desc *rd = xsk_ring_cons__rx_desc(&src->rx, idx_rx + i);
			struct xdp_desc *td = xsk_ring_prod__tx_desc(&dst->tx, idx_tx + i);

			td->addr = rd->addr;
			td->len = rd->len;
			td->options = 0;
		}
		xsk_ring_prod__submit(&dst->tx, room);
	} else {
		room = 0;
	}
	if (room < n) {
		fill_put(src, &src->rx, idx_rx + room, n - room);
		src->dropped += n - room;
	}
	xsk_ring_cons__release(&src->rx, n);
	dst->tx_frames += room;
	if (room)
		kick(dst, ring);
	return n;
}

static int port_open(struct port *p, struct xsk_umem *umem, uint32_t ring, uint64_t first_addr)
{
	struct xsk_socket_config cfg = {
		.rx_size = ring,
		.tx_size = ring,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		/* The second socket binds with XDP_SHARED_UMEM and takes the
		 * first one's mode and need_wakeup. */
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .flags = XDP_FLAGS_DRV_MODE);
	uint32_t idx, i, key = 0;
	int err, tries;

	p->fd = p->link_fd = -1;
	p->skel = afxdp_min_bpf__open_and_load();
	if (!p->skel) {
		err = -errno;
		pr_err("%s: load the XDP program: %s", p->ifname, strerror(-err));
		return err;
	}
	/* A socket on this queue that just closed (the benchmark's previous
	 * configuration) is freed by the kernel in deferred work: the queue stays
	 * busy for a few milliseconds. */
	for (tries = 0;; tries++) {
		err = xsk_socket__create_shared(&p->xsk, p->ifname, 0, umem, &p->rx, &p->tx,
						&p->fq, &p->cq, &cfg);
		if (err != -EBUSY || tries == 100)
			break;
		usleep(20000);
	}
	if (err) {
		p->xsk = NULL;
		pr_err("%s: AF_XDP socket on queue 0: %s", p->ifname, strerror(-err));
		return err;
	}
	p->fd = xsk_socket__fd(p->xsk);
	if (bpf_map_update_elem(bpf_map__fd(p->skel->maps.xsks), &key, &p->fd, 0) < 0) {
		err = -errno;
		pr_err("%s: socket into the XSKMAP: %s", p->ifname, strerror(-err));
		return err;
	}
	/* Buffers to land in before the first frame arrives. */
	if (xsk_ring_prod__reserve(&p->fq, ring, &idx) != ring) {
		pr_err("%s: fill ring has no room for %u frames", p->ifname, ring);
		return -ENOSPC;
	}
	for (i = 0; i < ring; i++)
		*xsk_ring_prod__fill_addr(&p->fq, idx + i) = first_addr + (uint64_t)i * FRAME_SIZE;
	xsk_ring_prod__submit(&p->fq, ring);

	err = bpf_link_create(bpf_program__fd(p->skel->progs.afxdp_min_xsk), (int)p->ifindex,
			      BPF_XDP, &lopts);
	if (err < 0) {
		err = -errno;
		pr_err("%s: attach the XDP program (native mode): %s%s", p->ifname, strerror(-err),
		       err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" : "");
		return err;
	}
	p->link_fd = err;
	return 0;
}

static void port_close(struct port *p)
{
	/* Detach first so no frame is steered at a socket that is going away. */
	if (p->link_fd >= 0)
		close(p->link_fd);
	if (p->xsk)
		xsk_socket__delete(p->xsk);
	afxdp_min_bpf__destroy(p->skel);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", required_argument, NULL, 'b' },
		{ "ring", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct xsk_umem_config ucfg = { .frame_size = FRAME_SIZE };
	struct port port[2] = {};
	struct xsk_ring_prod fq0;
	struct xsk_ring_cons cq0;
	struct xsk_umem *umem = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct pollfd pfd[3];
	uint32_t batch = COPY_TX_BUDGET, ring = 1024, work, i;
	int level = LOG_LVL_INFO, ret = 1, c, err;
	void *area = MAP_FAILED;
	size_t len = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "b:r:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			batch = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || batch < 1 || batch > 4096) {
				fprintf(stderr, "afxdp_min: bad --batch '%s' (1..4096)\n", optarg);
				return 2;
			}
			break;
		case 'r':
			ring = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || ring < 64 || ring > 16384 || (ring & (ring - 1))) {
				fprintf(stderr, "afxdp_min: bad --ring '%s' (a power of two, 64..16384)\n",
					optarg);
				return 2;
			}
			break;
		case 'v':
			level = LOG_LVL_DEBUG;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	log_init("afxdp_min", level);
	port[0].ifname = argv[optind];
	port[1].ifname = argv[optind + 1];
	for (i = 0; i < 2; i++) {
		port[i].fd = port[i].link_fd = -1;
		port[i].ifindex = if_nametoindex(port[i].ifname);
		if (!port[i].ifindex) {
			pr_err("interface %s: %s", port[i].ifname, strerror(errno));
			return 1;
		}
	}
	if (port[0].ifindex == port[1].ifindex) {
		pr_err("IFA and IFB are the same interface (%s)", port[0].ifname);
		return 2;
	}

	if (pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		pr_err("pipe: %s", strerror(errno));
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	len = (size_t)2 * ring * FRAME_SIZE;
	area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		    -1, 0);
	if (area == MAP_FAILED) {
		pr_err("mmap %zu bytes: %s", len, strerror(errno));
		goto out;
	}
	ucfg.fill_size = 2 * ring;
	ucfg.comp_size = 2 * ring;
	err = xsk_umem__create(&umem, area, len, &fq0, &cq0, &ucfg);
	if (err) {
		umem = NULL;
		pr_err("create the UMEM: %s", strerror(-err));
		goto out;
	}
	for (i = 0; i < 2; i++)
		if (port_open(&port[i], umem, ring, (uint64_t)i * ring * FRAME_SIZE) < 0)
			goto out;

	printf("ready\n");
	fflush(stdout);

	pfd[0] = (struct pollfd){ .fd = port[0].fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = port[1].fd, .events = POLLIN };
	pfd[2] = (struct pollfd){ .fd = wake_pipe[0], .events = POLLIN };
	while (!stop) {
		work = 0;
		for (i = 0; i < 2; i++) {
			work += reclaim(&port[!i], &port[i], 2 * ring);
			work += forward(&port[i], &port[!i], batch, ring);
		}
		if (work)
			continue;
		/* Frames the kernel left on a TX ring: kick again, do not sleep on them. */
		for (i = 0; i < 2; i++)
			if (tx_unsent(&port[i], ring)) {
				kick(&port[i], ring);
				work = 1;
			}
		if (work)
			continue;
		if (poll(pfd, 3, -1) < 0 && errno != EINTR) {
			pr_err("poll: %s", strerror(errno));
			goto out;
		}
	}
	ret = 0;
out:
	for (i = 2; i-- > 0;)
		port_close(&port[i]);
	if (umem)
		xsk_umem__delete(umem);
	if (area != MAP_FAILED)
		munmap(area, len);
	printf("forwarded %llu frames (%s->%s %llu, %s->%s %llu), dropped %llu, kick errors %llu\n",
	       (unsigned long long)(port[0].tx_frames + port[1].tx_frames),
	       port[0].ifname, port[1].ifname, (unsigned long long)port[1].tx_frames,
	       port[1].ifname, port[0].ifname, (unsigned long long)port[0].tx_frames,
	       (unsigned long long)(port[0].dropped + port[1].dropped),
	       (unsigned long long)(port[0].kick_errors + port[1].kick_errors));
	return ret;
}
