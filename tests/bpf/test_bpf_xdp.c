// SPDX-License-Identifier: BSD-2-Clause
/*
 * BPF_PROG_TEST_RUN tests of bpf/l2cc_xdp.bpf.c and bpf/xdp_fwd.bpf.c, as
 * tables of {input frame, expected verdict, expected counter} in the style of
 * katran's BpfTester.
 *
 * Cases that need real devices (an AF_XDP socket in xsks_map, ifindexes in a
 * devmap) use a veth pair in a private network namespace: the test unshares
 * its own netns first, so nothing it creates is visible outside and the
 * kernel removes it all when the process exits. No XDP program is ever
 * attached to a device; test runs do not need one.
 *
 * A case the kernel cannot run prints "SKIP <name>: <why>" and counts
 * neither as passed nor as failed. Not root, or no BPF: exit 77.
 */
#define LOG_SUBSYS "test"
#include "log.h"

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "l2cc_shared.h"
#include "l2cc_xdp.skel.h"
#include "xdp_fwd.skel.h"

#include "../unit/check.h"

#define VETH0 "l2cct0"
#define VETH1 "l2cct1"

/* ---- frames ------------------------------------------------------------ */

/*
 * A 64-byte l2cc data frame (no FCS; well above L2CC_ETH_MIN_FRAME):
 *   dst 02:00:00:00:00:02, src 02:00:00:00:00:01 (locally administered)
 *   ethertype 0x88b5 (IEEE local experimental 1: l2cc data tag)
 *   50 bytes of payload, zero
 */
static const uint8_t frame_64[64] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,     /* dst */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,     /* src */
	0x88, 0xb5,                             /* ethertype */
};

/* 13 bytes: one short of an Ethernet header (the ethertype is cut in half). */
static const uint8_t frame_runt[13] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02,     /* dst */
	0x02, 0x00, 0x00, 0x00, 0x00, 0x01,     /* src */
	0x88,                                   /* first byte of the ethertype */
};

/* ---- the private netns fixture ------------------------------------------ */

static struct {
	bool veth_ok;           /* the veth pair exists and is up */
	const char *veth_why;   /* why not */
	int ifindex0, ifindex1;

	struct xsk_socket *xsk; /* AF_XDP socket bound to VETH0 queue 0 */
	const char *xsk_why;    /* why there is none */
	char xsk_err[128];
	struct xsk_umem *umem;
	void *umem_area;
	size_t umem_size;
	struct xsk_ring_prod fq;
	struct xsk_ring_cons cq, rx;
} env;

#define XSK_NFRAMES 64

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		printf("    '%s' failed (status %d)\n", cmd, rc);
	return rc;
}

static void env_setup(void)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_NFRAMES,
		.comp_size = XSK_NFRAMES,
		.frame_size = XSK_UMEM__DEFAULT_FRAME_SIZE,
	};
	struct xsk_socket_config scfg = {
		.rx_size = XSK_NFRAMES,
		.tx_size = XSK_NFRAMES,
		/* Only the socket: the program under test is ours, not libxdp's. */
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY,
	};
	int err;

	if (sh("ip link set lo up") ||
	    sh("ip link add " VETH0 " type veth peer name " VETH1) ||
	    sh("ip link set " VETH0 " up") || sh("ip link set " VETH1 " up")) {
		env.veth_why = "cannot create a veth pair in the private netns";
		env.xsk_why = env.veth_why;
		return;
	}
	env.ifindex0 = if_nametoindex(VETH0);
	env.ifindex1 = if_nametoindex(VETH1);
	if (!env.ifindex0 || !env.ifindex1) {
		env.veth_why = "veth pair has no ifindex";
		env.xsk_why = env.veth_why;
		return;
	}
	env.veth_ok = true;

	env.umem_size = (size_t)XSK_NFRAMES * XSK_UMEM__DEFAULT_FRAME_SIZE;
	env.umem_area = mmap(NULL, env.umem_size, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env.umem_area == MAP_FAILED) {
		env.umem_area = NULL;
		env.xsk_why = "cannot mmap a UMEM";
		return;
	}
	err = xsk_umem__create(&env.umem, env.umem_area, env.umem_size,
			       &env.fq, &env.cq, &ucfg);
	if (err) {
		snprintf(env.xsk_err, sizeof(env.xsk_err),
			 "xsk_umem__create: %s", strerror(-err));
		env.xsk_why = env.xsk_err;
		env.umem = NULL;
		return;
	}
	err = xsk_socket__create(&env.xsk, VETH0, 0, env.umem, &env.rx, NULL,
				 &scfg);
	if (err) {
		snprintf(env.xsk_err, sizeof(env.xsk_err),
			 "xsk_socket__create on %s (copy mode): %s", VETH0,
			 strerror(-err));
		env.xsk_why = env.xsk_err;
		env.xsk = NULL;
	}
}

static void env_teardown(void)
{
	if (env.xsk)
		xsk_socket__delete(env.xsk);
	if (env.umem)
		xsk_umem__delete(env.umem);
	if (env.umem_area)
		munmap(env.umem_area, env.umem_size);
	/* The netns dies with us anyway; deleting one end removes both. */
	if (env.veth_ok)
		sh("ip link del " VETH0);
}

/* ---- a RUN() that also knows SKIP --------------------------------------- */

static const char *skip_why;
static int check_skipped;

#define SKIP_CASE(why) do { skip_why = (why); return; } while (0)

#define RUN_CASE(name, fn, arg) do {                                       \
	check_failed_now = 0;                                              \
	skip_why = NULL;                                                   \
	fn(arg);                                                           \
	if (check_failed_now) {                                            \
		check_failed++;                                            \
		printf("FAIL %s\n", (name));                               \
	} else if (skip_why) {                                             \
		check_skipped++;                                           \
		printf("SKIP %s: %s\n", (name), skip_why);                 \
	} else {                                                           \
		check_passed++;                                            \
		printf("ok   %s\n", (name));                               \
	}                                                                  \
} while (0)

/* ---- running a program -------------------------------------------------- */

enum ingress { IN_DEFAULT, IN_VETH0, IN_VETH1 };

static int ingress_ifindex(enum ingress in)
{
	return in == IN_VETH0 ? env.ifindex0 : in == IN_VETH1 ? env.ifindex1 : 0;
}

/*
 * One test run of prog_fd on frame. With IN_VETH*, an xdp_md context names
 * that device and rx queue 0 as the ingress; with IN_DEFAULT the kernel uses
 * the netns's loopback. Returns 0 or a negative errno from the kernel; the
 * verdict in *verdict, the output frame checked against the input (none of
 * these programs rewrites frames).
 */
static int test_run(int prog_fd, const uint8_t *frame, size_t len,
		    enum ingress in, int *verdict)
{
	uint8_t out[256];
	struct xdp_md ctx = {
		.data_end = len,
		.ingress_ifindex = ingress_ifindex(in),
		.rx_queue_index = 0,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);
	int err;

	if (in != IN_DEFAULT) {
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
	}
	err = bpf_prog_test_run_opts(prog_fd, &opts);
	if (err)
		return -errno;
	*verdict = opts.retval;
	CHECK_EQ(opts.data_size_out, len);
	if (opts.data_size_out == len)
		CHECK_MEM(out, frame, len);
	return 0;
}

static const char *verdict_name(int v)
{
	static const char *const names[] = {
		"XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX", "XDP_REDIRECT",
	};

	return v >= 0 && v <= XDP_REDIRECT ? names[v] : "?";
}

#define CHECK_VERDICT(got, want) do {                                      \
	if ((got) != (want)) {                                             \
		printf("    %s:%d: verdict %s, expected %s\n", __FILE__,   \
		       __LINE__, verdict_name(got), verdict_name(want));   \
		check_failed_now++;                                        \
	}                                                                  \
} while (0)

/* ---- l2cc_xdp ----------------------------------------------------------- */

struct l2cc_case {
	const char *name;
	const uint8_t *frame;
	size_t len;
	uint32_t fallback;      /* cfg_fallback, set in rodata before load */
	bool socket;            /* a real AF_XDP socket in xsks_map[0] */
	enum ingress in;
	int verdict;
	int stat;               /* the counter that must go up by one, besides RX */
};

static const struct l2cc_case l2cc_cases[] = {
	{ "l2cc_xdp: 13-byte runt is dropped",
	  frame_runt, sizeof(frame_runt), L2CC_XDP_FALLBACK_DROP, false,
	  IN_DEFAULT, XDP_DROP, L2CC_XDP_RUNT },
	{ "l2cc_xdp: exactly an Ethernet header is not a runt",
	  frame_64, L2CC_ETH_HLEN, L2CC_XDP_FALLBACK_DROP, false,
	  IN_DEFAULT, XDP_DROP, L2CC_XDP_NO_SOCKET },
	{ "l2cc_xdp: no socket, default fallback drops",
	  frame_64, sizeof(frame_64), L2CC_XDP_FALLBACK_DROP, false,
	  IN_DEFAULT, XDP_DROP, L2CC_XDP_NO_SOCKET },
	{ "l2cc_xdp: no socket, fallback PASS passes",
	  frame_64, sizeof(frame_64), L2CC_XDP_FALLBACK_PASS, false,
	  IN_DEFAULT, XDP_PASS, L2CC_XDP_NO_SOCKET },
	{ "l2cc_xdp: no socket on the veth queue, fallback PASS passes",
	  frame_64, sizeof(frame_64), L2CC_XDP_FALLBACK_PASS, false,
	  IN_VETH0, XDP_PASS, L2CC_XDP_NO_SOCKET },
	{ "l2cc_xdp: AF_XDP socket on the queue redirects",
	  frame_64, sizeof(frame_64), L2CC_XDP_FALLBACK_DROP, true,
	  IN_VETH0, XDP_REDIRECT, L2CC_XDP_REDIRECT },
	{ "l2cc_xdp: AF_XDP socket redirects whatever the fallback",
	  frame_64, sizeof(frame_64), L2CC_XDP_FALLBACK_PASS, true,
	  IN_VETH0, XDP_REDIRECT, L2CC_XDP_REDIRECT },
};

/* One xdp_qstats slot (every case runs on rx queue 0) summed over CPUs:
 * the program keeps no other totals. */
static int stats_read(int map_fd, uint64_t st[L2CC_XDP_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct l2cc_xdp_qstat *vals;
	uint32_t key = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = bpf_map_lookup_elem(map_fd, &key, vals) ? -errno : 0;
	memset(st, 0, sizeof(uint64_t) * L2CC_XDP_STAT_MAX);
	for (int i = 0; !err && i < ncpu; i++)
		for (int k = 0; k < L2CC_XDP_STAT_MAX; k++)
			st[k] += vals[i].cnt[k];
	free(vals);
	return err;
}

static void run_l2cc_case(const struct l2cc_case *c)
{
	uint64_t before[L2CC_XDP_STAT_MAX], after[L2CC_XDP_STAT_MAX];
	struct l2cc_xdp_bpf *skel;
	int err, verdict = -1, i;
	uint32_t key = 0;

	if (c->in != IN_DEFAULT && !env.veth_ok)
		SKIP_CASE(env.veth_why);
	if (c->socket && !env.xsk)
		SKIP_CASE(env.xsk_why);

	skel = l2cc_xdp_bpf__open();
	CHECK(skel != NULL);
	if (!skel)
		return;
	skel->rodata->cfg_fallback = c->fallback;
	err = l2cc_xdp_bpf__load(skel);
	CHECK_EQ(err, 0);
	if (err)
		goto out;

	if (c->socket) {
		int fd = xsk_socket__fd(env.xsk);

		err = bpf_map_update_elem(bpf_map__fd(skel->maps.xsks_map),
					  &key, &fd, BPF_ANY);
		CHECK_EQ(err, 0);
		if (err)
			goto out;
	}

	err = stats_read(bpf_map__fd(skel->maps.xdp_qstats), before);
	CHECK_EQ(err, 0);
	if (err)
		goto out;

	err = test_run(bpf_program__fd(skel->progs.l2cc_xdp), c->frame,
		       c->len, c->in, &verdict);
	if (err == -EINVAL && c->in != IN_DEFAULT) {
		skip_why = "kernel refuses an xdp_md ctx_in naming a device";
		goto out;
	}
	if (err == -EINVAL && c->len < L2CC_ETH_HLEN) {
		skip_why = "kernel refuses test-run frames shorter than ETH_HLEN";
		goto out;
	}
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	CHECK_VERDICT(verdict, c->verdict);

	err = stats_read(bpf_map__fd(skel->maps.xdp_qstats), after);
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	for (i = 0; i < L2CC_XDP_STAT_MAX; i++) {
		uint64_t want = before[i] + (i == L2CC_XDP_RX || i == c->stat);

		if (after[i] != want) {
			printf("    counter %d: %" PRIu64 ", expected %" PRIu64 "\n",
			       i, after[i], want);
			check_failed_now++;
		}
	}
out:
	l2cc_xdp_bpf__destroy(skel);
}

/* The name the daemons look for must be the name the object carries. */
static void test_l2cc_xdp_prog_name(void)
{
	struct l2cc_xdp_bpf *skel = l2cc_xdp_bpf__open();
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int err;

	CHECK(skel != NULL);
	if (!skel)
		return;
	CHECK(strcmp(bpf_program__name(skel->progs.l2cc_xdp),
		     L2CC_XDP_PROG_NAME) == 0);
	CHECK_EQ(bpf_map__max_entries(skel->maps.xsks_map), L2CC_XSKMAP_MAX);
	CHECK_EQ(bpf_map__max_entries(skel->maps.xdp_qstats), L2CC_XSKMAP_MAX + 1);
	CHECK_EQ(skel->rodata->cfg_fallback, L2CC_XDP_FALLBACK_DROP);
	err = l2cc_xdp_bpf__load(skel);
	CHECK_EQ(err, 0);
	if (!err) {
		err = bpf_obj_get_info_by_fd(
			bpf_program__fd(skel->progs.l2cc_xdp), &info, &len);
		CHECK_EQ(err, 0);
		CHECK(strcmp(info.name, L2CC_XDP_PROG_NAME) == 0);
		CHECK_EQ(info.type, BPF_PROG_TYPE_XDP);
	}
	l2cc_xdp_bpf__destroy(skel);
}

/* ---- l2cc_xdp: control frames applied in XDP (xdp_ctl) ------------------ */

enum ctl_frame { F_PAUSE, F_PFC, F_CREDIT, F_PFC_SHORT, F_BAD_OPCODE, F_BAD_VERSION,
		 F_CREDIT_SHORT, F_PAUSE_UNICAST, F_PAUSE_VLAN, F_DATA };

/* A frame of kind k into buf (zeroed, at least 160 bytes); its length. */
static size_t ctl_frame(enum ctl_frame k, uint8_t *buf)
{
	static const uint8_t ll[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
	size_t off = 12, len = 60;
	uint8_t *pl;

	memset(buf, 0, 160);
	memcpy(buf, ll, 6);
	buf[6] = 0x02;
	buf[11] = 0x01;
	if (k == F_PAUSE_UNICAST)
		buf[0] = 0x02;
	if (k == F_PAUSE_VLAN) {
		buf[12] = 0x81;
		buf[14] = 0x60;         /* PCP 3, VID 0 */
		off = 16;
	}
	if (k == F_DATA) {
		memcpy(buf, frame_64, sizeof(frame_64));
		return sizeof(frame_64);
	}
	pl = buf + off + 2;
	switch (k) {
	case F_PAUSE: case F_PAUSE_UNICAST: case F_PAUSE_VLAN:
		buf[off] = 0x88; buf[off + 1] = 0x08;
		pl[1] = 0x01;           /* opcode PAUSE */
		pl[3] = 100;            /* 100 quanta */
		break;
	case F_PFC: case F_PFC_SHORT:
		buf[off] = 0x88; buf[off + 1] = 0x08;
		pl[0] = 0x01; pl[1] = 0x01;
		pl[3] = 0x0c;           /* priorities 2 and 3 */
		pl[4 + 2 * 2 + 1] = 0;  /* prio 2: a resume */
		pl[4 + 2 * 3 + 1] = 5;  /* prio 3: 5 quanta */
		if (k == F_PFC_SHORT)
			len = off + 2 + 10;
		break;
	case F_BAD_OPCODE:
		buf[off] = 0x88; buf[off + 1] = 0x08;
		pl[1] = 0x02;
		break;
	case F_CREDIT: case F_BAD_VERSION: case F_CREDIT_SHORT:
		buf[off] = 0x88; buf[off + 1] = 0xb6;
		pl[0] = k == F_BAD_VERSION ? 2 : L2CC_WIRE_VERSION;
		pl[1] = L2CC_CTRL_CREDIT;
		pl[3] = sizeof(struct l2cc_credit);
		pl[4] = L2CC_CREDIT_BYTES;
		pl[5] = 0x04;           /* priority 2 */
		pl[6] = L2CC_CREDIT_UNIT_NONE;
		pl[8 + 8 * 2 + 6] = 0x12;       /* limit[2] = 0x1234 */
		pl[8 + 8 * 2 + 7] = 0x34;
		len = k == F_CREDIT_SHORT ? 60 : off + 2 + 4 + sizeof(struct l2cc_credit);
		break;
	default:
		break;
	}
	return len;
}

struct ctl_case {
	const char *name;
	enum ctl_frame frame;
	uint32_t flags;          /* xdp_ctl.flags */
	int verdict;             /* no socket, fallback drop: DROP either way... */
	int stat;                /* ... so the counter tells consumed from passed */
	bool changed;            /* seq moved */
};

#define CTL_ALL (L2CC_XDPC_ON | L2CC_XDPC_UP | L2CC_XDPC_PAUSE | L2CC_XDPC_PFC | \
		 L2CC_XDPC_CREDIT | L2CC_XDPC_LIMITS)

static const struct ctl_case ctl_cases[] = {
	{ "xdp_ctl: PAUSE is applied and consumed", F_PAUSE, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: priority-tagged PAUSE is applied and consumed", F_PAUSE_VLAN, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: PFC is applied per priority and consumed", F_PFC, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: PAUSE on a PFC port is counted, ignored, consumed", F_PAUSE,
	  L2CC_XDPC_ON | L2CC_XDPC_UP | L2CC_XDPC_PFC, XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: CREDIT limits applied, the frame goes on to the daemon", F_CREDIT, CTL_ALL,
	  XDP_DROP, L2CC_XDP_NO_SOCKET, true },
	{ "xdp_ctl: CREDIT from a host port binds nothing", F_CREDIT,
	  CTL_ALL & ~L2CC_XDPC_LIMITS, XDP_DROP, L2CC_XDP_NO_SOCKET, true },
	{ "xdp_ctl: short PFC is malformed, dropped", F_PFC_SHORT, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: unknown MAC control opcode is unsupported, dropped", F_BAD_OPCODE, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: CREDIT of another wire version is unsupported, dropped", F_BAD_VERSION,
	  CTL_ALL, XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: truncated CREDIT is malformed, dropped", F_CREDIT_SHORT, CTL_ALL,
	  XDP_DROP, L2CC_XDP_CTRL, true },
	{ "xdp_ctl: unicast PAUSE goes to the daemon", F_PAUSE_UNICAST, CTL_ALL,
	  XDP_DROP, L2CC_XDP_NO_SOCKET, false },
	{ "xdp_ctl: data frames go to the daemon", F_DATA, CTL_ALL,
	  XDP_DROP, L2CC_XDP_NO_SOCKET, false },
	{ "xdp_ctl: xdp_control off: PAUSE goes to the daemon", F_PAUSE, 0,
	  XDP_DROP, L2CC_XDP_NO_SOCKET, false },
	{ "xdp_ctl: link down: PAUSE goes to the daemon", F_PAUSE, CTL_ALL & ~L2CC_XDPC_UP,
	  XDP_DROP, L2CC_XDP_NO_SOCKET, false },
};

#define RATE_10M 10000000ull

static void ctl_check_state(const struct ctl_case *c, const struct l2cc_xdp_ctl *a,
			    const uint8_t *out, size_t len)
{
	switch (c->frame) {
	case F_PAUSE: case F_PAUSE_VLAN:
		CHECK_EQ(a->pause_rx, 1);
		if (!(c->flags & L2CC_XDPC_PAUSE)) {
			CHECK_EQ(a->fc_ignored, 1);
			CHECK_EQ(a->pauses, 0);
			CHECK_EQ(a->pause_n[0], 0);
			break;
		}
		CHECK_EQ(a->fc_ignored, 0);
		CHECK_EQ(a->pauses, 8);
		for (int i = 0; i < L2CC_NPRIO; i++) {
			CHECK_EQ(a->pause_n[i], 1);
			/* 100 quanta of 512 bits at 10M: 5.12 ms */
			CHECK_EQ(a->pause_until[i] - a->pause_at[i], 5120000);
			CHECK_EQ(a->xoff_at[i], a->pause_at[i]);
		}
		CHECK_EQ(a->frames, 1);
		CHECK_EQ(a->bytes, len);
		break;
	case F_PFC:
		CHECK_EQ(a->pfc_rx, 1);
		CHECK_EQ(a->pfc_rx_prio[2], 1);
		CHECK_EQ(a->pfc_rx_prio[3], 1);
		CHECK_EQ(a->pfc_rx_prio[0], 0);
		CHECK_EQ(a->pauses, 1);
		CHECK_EQ(a->resumes, 1);
		CHECK_EQ(a->pause_n[2], 1);
		CHECK_EQ(a->pause_until[2], 0);
		CHECK_EQ(a->pause_n[3], 1);
		CHECK_EQ(a->pause_until[3] - a->pause_at[3], 256000);
		CHECK_EQ(a->pause_n[0], 0);
		CHECK_EQ(a->pause_n[4], 0);
		break;
	case F_CREDIT:
		CHECK_EQ(a->credit_rx, 1);
		CHECK_EQ(a->frames, 0);  /* it goes on */
		if (c->flags & L2CC_XDPC_LIMITS) {
			CHECK_EQ(a->credit_n, 1);
			CHECK_EQ(a->credit_limit[2], 0x1234);
			CHECK_EQ(a->credit_mask, 0x04);
			CHECK_EQ(a->credit_unit, L2CC_CREDIT_BYTES);
		} else {
			CHECK_EQ(a->credit_n, 0);
		}
		/* Marked for the daemon: reconcile only. */
		CHECK_EQ(out[14 + 4 + 3], L2CC_CREDIT_XDP_APPLIED);
		break;
	case F_PFC_SHORT: case F_CREDIT_SHORT:
		CHECK_EQ(a->malformed, 1);
		CHECK_EQ(a->pause_n[3], 0);
		CHECK_EQ(a->credit_n, 0);
		CHECK_EQ(a->frames, 1);
		break;
	case F_BAD_OPCODE: case F_BAD_VERSION:
		CHECK_EQ(a->unsupported, 1);
		CHECK_EQ(a->malformed, 0);
		CHECK_EQ(a->credit_rx, 0);
		CHECK_EQ(a->frames, 1);
		break;
	default:
		break;
	}
}

static void run_ctl_case(const struct ctl_case *c)
{
	uint64_t before[L2CC_XDP_STAT_MAX], after[L2CC_XDP_STAT_MAX];
	struct l2cc_xdp_ctl cfg = { .flags = c->flags, .rate_bps = RATE_10M }, a;
	uint8_t frame[160], out[256];
	struct l2cc_xdp_bpf *skel;
	size_t len = ctl_frame(c->frame, frame);
	uint32_t key = 0;
	int err, fd;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);

	skel = l2cc_xdp_bpf__open_and_load();
	CHECK(skel != NULL);
	if (!skel)
		return;
	fd = bpf_map__fd(skel->maps.xdp_ctl);
	CHECK_EQ(bpf_map_update_elem(fd, &key, &cfg, BPF_ANY), 0);
	CHECK_EQ(stats_read(bpf_map__fd(skel->maps.xdp_qstats), before), 0);
	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.l2cc_xdp), &opts);
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	CHECK_VERDICT((int)opts.retval, c->verdict);
	CHECK_EQ(opts.data_size_out, len);
	CHECK_EQ(stats_read(bpf_map__fd(skel->maps.xdp_qstats), after), 0);
	for (int i = 0; i < L2CC_XDP_STAT_MAX; i++) {
		uint64_t want = before[i] + (i == L2CC_XDP_RX || i == c->stat);

		if (after[i] != want) {
			printf("    counter %d: %" PRIu64 ", expected %" PRIu64 "\n",
			       i, after[i], want);
			check_failed_now++;
		}
	}
	CHECK_EQ(bpf_map_lookup_elem(fd, &key, &a), 0);
	/* Two bumps per frame taken: even (not mid-write), and moved. */
	CHECK_EQ(a.seq, c->changed ? 2 : 0);
	CHECK_EQ(a.flags, c->flags);
	if (c->changed)
		ctl_check_state(c, &a, out, len);
	else
		CHECK_MEM(out, frame, len);
out:
	l2cc_xdp_bpf__destroy(skel);
}

/* One test run of frame; the verdict, or a negative errno. */
static int ctl_run(int prog_fd, uint8_t *frame, size_t len)
{
	uint8_t out[256];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);
	int err = bpf_prog_test_run_opts(prog_fd, &opts);

	return err ? err : (int)opts.retval;
}

/*
 * Frames in a row on one program: a frame leaves the priorities it does not
 * name as the frames before it left them (the program's per-priority
 * writes are shaped for the verifier: see NO_MERGE there).
 */
static void test_ctl_sequence(void)
{
	struct l2cc_xdp_ctl cfg = { .flags = CTL_ALL, .rate_bps = RATE_10M }, a;
	struct l2cc_xdp_bpf *skel;
	uint8_t f[160], *pl = f + 14;
	uint32_t key = 0;
	uint64_t at0;
	int prog, map;
	size_t len;

	cfg.credit_limit[5] = 7;        /* the first grant sets all eight */
	skel = l2cc_xdp_bpf__open_and_load();
	CHECK(skel != NULL);
	if (!skel)
		return;
	prog = bpf_program__fd(skel->progs.l2cc_xdp);
	map = bpf_map__fd(skel->maps.xdp_ctl);
	CHECK_EQ(bpf_map_update_elem(map, &key, &cfg, BPF_ANY), 0);

	/* PAUSE: all eight for 100 quanta; then PFC: 2 resumes, 3 for 5. */
	CHECK_EQ(ctl_run(prog, f, ctl_frame(F_PAUSE, f)), XDP_DROP);
	CHECK_EQ(bpf_map_lookup_elem(map, &key, &a), 0);
	at0 = a.pause_at[0];
	CHECK_EQ(ctl_run(prog, f, ctl_frame(F_PFC, f)), XDP_DROP);
	CHECK_EQ(bpf_map_lookup_elem(map, &key, &a), 0);
	CHECK_EQ(a.pauses, 9);
	CHECK_EQ(a.resumes, 1);
	CHECK_EQ(a.pause_rx, 1);
	CHECK_EQ(a.pfc_rx, 1);
	CHECK_EQ(a.frames, 2);
	for (int i = 0; i < L2CC_NPRIO; i++) {
		bool named = i == 2 || i == 3;

		CHECK_EQ(a.pause_n[i], named ? 2 : 1);
		CHECK_EQ(a.pfc_rx_prio[i], named ? 1 : 0);
		if (named)
			continue;
		CHECK_EQ(a.pause_at[i], at0);
		CHECK_EQ(a.pause_until[i], at0 + 5120000);
		CHECK_EQ(a.xoff_at[i], at0);
	}
	CHECK(a.pause_at[2] > at0);
	CHECK_EQ(a.pause_at[3], a.pause_at[2]);
	CHECK_EQ(a.pause_until[2], 0);
	CHECK_EQ(a.xoff_at[2], at0);    /* a resume keeps the last XOFF */
	CHECK_EQ(a.xoff_at[3], a.pause_at[3]);
	CHECK_EQ(a.pause_until[3] - a.pause_at[3], 256000);

	/* CREDIT for 2 (bytes), then for 3 (bytes), then for 3 in frames. */
	CHECK_EQ(ctl_run(prog, f, ctl_frame(F_CREDIT, f)), XDP_DROP);
	CHECK_EQ(bpf_map_lookup_elem(map, &key, &a), 0);
	CHECK_EQ(a.credit_limit[5], 0);
	CHECK_EQ(a.credit_limit[2], 0x1234);
	len = ctl_frame(F_CREDIT, f);
	pl[5] = 0x08;
	pl[8 + 8 * 2 + 6] = 0x56;       /* limit[2] here is not granted */
	pl[8 + 8 * 3 + 7] = 0x99;
	CHECK_EQ(ctl_run(prog, f, len), XDP_DROP);
	CHECK_EQ(bpf_map_lookup_elem(map, &key, &a), 0);
	CHECK_EQ(a.credit_n, 2);
	CHECK_EQ(a.credit_mask, 0x0c);
	CHECK_EQ(a.credit_limit[2], 0x1234);
	CHECK_EQ(a.credit_limit[3], 0x99);
	pl[4] = L2CC_CREDIT_FRAMES;
	pl[8 + 8 * 3 + 7] = 0x77;
	CHECK_EQ(ctl_run(prog, f, len), XDP_DROP);
	CHECK_EQ(bpf_map_lookup_elem(map, &key, &a), 0);
	CHECK_EQ(a.credit_n, 3);
	CHECK_EQ(a.credit_unit, L2CC_CREDIT_FRAMES);
	CHECK_EQ(a.credit_mask, 0x08);  /* a new unit starts the mask again */
	CHECK_EQ(a.credit_limit[2], 0x1234);
	CHECK_EQ(a.credit_limit[3], 0x77);
	CHECK_EQ(a.credit_rx, 3);
	CHECK_EQ(a.frames, 2);
	CHECK_EQ(a.seq, 10);
	l2cc_xdp_bpf__destroy(skel);
}

/* ---- l2cc_xdp's fast path (switchd forwarding = xdp) -------------------- */

/*
 * The ingress port is 0 (VETH0); port 1 (VETH1) has devmap slot 1. The FDB
 * map knows MAC_A on port 0 and MAC_B on port 1 (VLAN 0, and MAC_B also on
 * VLAN 10); MAC_C nowhere. No socket is in xsks_map and the fallback is
 * DROP, so "to the daemon" reads as XDP_DROP with the NO_SOCKET count (xdp_qstats), and
 * the fast path as XDP_REDIRECT with fwd_stats FORWARDED.
 */
enum mac_id { MAC_A = 0xa, MAC_B = 0xb, MAC_C = 0xc, MAC_BCAST = 0xff };

struct fwdp_case {
	const char *name;
	enum mac_id dst, src;
	uint16_t ethertype;
	uint16_t vid;           /* 0: untagged */
	uint32_t len;
	bool fwd_off;           /* cfg_fwd = 0 (hostd, a forwarding = daemon port) */
	bool port_off;          /* fwd_port.on = 0 (link down) */
	bool no_slot;           /* port 1 has no devmap slot */
	bool no_vlan10;         /* the ingress port does not carry VLAN 10 */
	int verdict;
	int stat;               /* the fwd_stats counter that must go up (-1: none) */
};

static const struct fwdp_case fwdp_cases[] = {
	{ "fwd: known unicast to another port redirects to its devmap slot",
	  MAC_B, MAC_A, 0x0800, 0, 64, false, false, false, false, XDP_REDIRECT, L2CC_FWD_FORWARDED },
	{ "fwd: known unicast on a carried VLAN redirects",
	  MAC_B, MAC_A, 0x0800, 10, 64, false, false, false, false, XDP_REDIRECT, L2CC_FWD_FORWARDED },
	{ "fwd: unknown destination goes to the socket (daemon)",
	  MAC_C, MAC_A, 0x0800, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: broadcast goes to the socket (daemon floods it)",
	  MAC_BCAST, MAC_A, 0x0806, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: source not learnt goes to the socket (daemon learns it)",
	  MAC_B, MAC_C, 0x0800, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: source learnt on another port goes to the socket (a move)",
	  MAC_A, MAC_B, 0x0800, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: l2cc control frame goes to the socket",
	  MAC_B, MAC_A, L2CC_ETH_P_CTRL, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: l2cc data tag goes to the socket",
	  MAC_B, MAC_A, L2CC_ETH_P_DATA_TAG, 0, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: a VLAN the port does not carry goes to the socket",
	  MAC_B, MAC_A, 0x0800, 10, 64, false, false, false, true, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: a VLAN the FDB has no entry on goes to the socket",
	  MAC_B, MAC_A, 0x0800, 20, 64, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: over the port's largest frame goes to the socket",
	  MAC_B, MAC_A, 0x0800, 0, 200, false, false, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: egress without a devmap slot goes to the socket",
	  MAC_B, MAC_A, 0x0800, 0, 64, false, false, true, false, XDP_DROP, L2CC_FWD_NO_SLOT },
	{ "fwd: port turned off (link down) goes to the socket",
	  MAC_B, MAC_A, 0x0800, 0, 64, false, true, false, false, XDP_DROP, L2CC_FWD_DAEMON },
	{ "fwd: ineligible port (no fast path compiled in) goes to the socket",
	  MAC_B, MAC_A, 0x0800, 0, 64, true, false, false, false, XDP_DROP, -1 },
};

static void mac_of(enum mac_id id, uint8_t m[6])
{
	if (id == MAC_BCAST) {
		memset(m, 0xff, 6);
		return;
	}
	memcpy(m, (uint8_t[6]){ 0x02, 0, 0, 0, 0, (uint8_t)id }, 6);
}

static size_t fwdp_frame(const struct fwdp_case *c, uint8_t *f)
{
	size_t off = 12;

	memset(f, 0, c->len);
	mac_of(c->dst, f);
	mac_of(c->src, f + 6);
	if (c->vid) {
		f[off++] = 0x81;
		f[off++] = 0x00;
		f[off++] = c->vid >> 8;
		f[off++] = c->vid & 0xff;
	}
	f[off++] = c->ethertype >> 8;
	f[off++] = c->ethertype & 0xff;
	return c->len;
}

static int fwdp_fdb_add(int fd, enum mac_id id, uint16_t vid, uint32_t port)
{
	struct l2cc_fwd_key k = { .vid = vid };
	struct l2cc_fwd_entry e = { .port = port };

	mac_of(id, k.mac);
	return bpf_map_update_elem(fd, &k, &e, BPF_ANY) ? -errno : 0;
}

/* A per-CPU array's u64 at idx, summed over CPUs (fwd_stats). */
static int stat_sum(int map_fd, uint32_t idx, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	int i, err;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = bpf_map_lookup_elem(map_fd, &idx, vals) ? -errno : 0;
	*sum = 0;
	for (i = 0; !err && i < ncpu; i++)
		*sum += vals[i];
	free(vals);
	return err;
}

static int fwd_stats_read(int fd, uint64_t st[L2CC_FWD_STAT_MAX])
{
	for (int i = 0; i < L2CC_FWD_STAT_MAX; i++)
		if (stat_sum(fd, i, &st[i]))
			return -1;
	return 0;
}

static void run_fwdp_case(const struct fwdp_case *c)
{
	uint64_t before[L2CC_FWD_STAT_MAX], after[L2CC_FWD_STAT_MAX];
	struct l2cc_fwd_port pc = { .port = 0, .on = 1, .max_len = 128 };
	struct l2cc_xdp_bpf *skel;
	uint32_t zero = 0, slot = 1, ifx;
	int err, verdict = -1, fdb;
	uint8_t frame[256];
	size_t len;

	if (!env.veth_ok)
		SKIP_CASE(env.veth_why);
	skel = l2cc_xdp_bpf__open();
	CHECK(skel != NULL);
	if (!skel)
		return;
	skel->rodata->cfg_fallback = L2CC_XDP_FALLBACK_DROP;
	skel->rodata->cfg_fwd = !c->fwd_off;
	err = l2cc_xdp_bpf__load(skel);
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	fdb = bpf_map__fd(skel->maps.fwd_fdb);
	CHECK_EQ(fwdp_fdb_add(fdb, MAC_A, 0, 0), 0);
	CHECK_EQ(fwdp_fdb_add(fdb, MAC_B, 0, 1), 0);
	CHECK_EQ(fwdp_fdb_add(fdb, MAC_B, 10, 1), 0);
	CHECK_EQ(fwdp_fdb_add(fdb, MAC_A, 10, 0), 0);
	memset(pc.vlans, 0xff, sizeof(pc.vlans));
	if (c->no_vlan10)
		pc.vlans[0] &= ~(1ull << 10);
	pc.on = !c->port_off;
	CHECK_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.fwd_port), &zero, &pc, BPF_ANY), 0);
	ifx = env.ifindex1;
	if (!c->no_slot)
		CHECK_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.fwd_devs), &slot, &ifx,
					     BPF_ANY), 0);
	CHECK_EQ(fwd_stats_read(bpf_map__fd(skel->maps.fwd_stats), before), 0);
	len = fwdp_frame(c, frame);
	err = test_run(bpf_program__fd(skel->progs.l2cc_xdp), frame, len, IN_VETH0, &verdict);
	if (err == -EINVAL) {
		skip_why = "kernel refuses an xdp_md ctx_in naming a device";
		goto out;
	}
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	CHECK_VERDICT(verdict, c->verdict);
	CHECK_EQ(fwd_stats_read(bpf_map__fd(skel->maps.fwd_stats), after), 0);
	for (int i = 0; i < L2CC_FWD_STAT_MAX; i++) {
		uint64_t want = before[i] + (i == c->stat);

		if (after[i] != want) {
			printf("    fwd counter %d: %" PRIu64 ", expected %" PRIu64 "\n", i, after[i],
			       want);
			check_failed_now++;
		}
	}
	/* A forwarded frame refreshes its source's seen_ns (the daemon's
	 * aging reads it); one left for the daemon does not. */
	{
		struct l2cc_fwd_key k = { .vid = c->vid };
		struct l2cc_fwd_entry e = { 0 };

		mac_of(MAC_A, k.mac);
		if (!bpf_map_lookup_elem(fdb, &k, &e)) {
			if (c->stat == L2CC_FWD_FORWARDED)
				CHECK(e.seen_ns != 0);
			else if (c->stat == L2CC_FWD_DAEMON)
				CHECK_EQ(e.seen_ns, 0);
		}
	}
out:
	l2cc_xdp_bpf__destroy(skel);
}

/* hostd and forwarding = daemon ports: cfg_fwd stays 0 unless set. */
static void test_fwd_default_off(void)
{
	struct l2cc_xdp_bpf *skel = l2cc_xdp_bpf__open();

	CHECK(skel != NULL);
	if (!skel)
		return;
	CHECK_EQ(skel->rodata->cfg_fwd, 0);
	CHECK_EQ(bpf_map__max_entries(skel->maps.fwd_devs), L2CC_FWD_MAX_PORTS);
	CHECK_EQ(bpf_map__max_entries(skel->maps.fwd_fdb), L2CC_FWD_FDB_DEFAULT);
	l2cc_xdp_bpf__destroy(skel);
}

/* ---- xdp_fwd / xdp_pass ------------------------------------------------- */

enum fwd_prog { P_FWD, P_PASS };

struct fwd_case {
	const char *name;
	enum fwd_prog prog;
	enum ingress in;        /* tx_port maps VETH0 -> VETH1 only */
	int verdict;
};

static const struct fwd_case fwd_cases[] = {
	{ "xdp_fwd: mapped ingress port redirects",
	  P_FWD, IN_VETH0, XDP_REDIRECT },
	{ "xdp_fwd: unmapped ingress port drops",
	  P_FWD, IN_VETH1, XDP_DROP },
	{ "xdp_fwd: loopback ingress (no ctx) drops",
	  P_FWD, IN_DEFAULT, XDP_DROP },
	{ "xdp_pass: passes",
	  P_PASS, IN_DEFAULT, XDP_PASS },
	{ "xdp_pass: passes on a veth",
	  P_PASS, IN_VETH1, XDP_PASS },
};

static void run_fwd_case(const struct fwd_case *c)
{
	struct xdp_fwd_bpf *skel;
	int err, verdict = -1;
	struct bpf_program *prog;

	if (c->in != IN_DEFAULT && !env.veth_ok)
		SKIP_CASE(env.veth_why);

	skel = xdp_fwd_bpf__open_and_load();
	CHECK(skel != NULL);
	if (!skel)
		return;

	if (env.veth_ok) {
		__u32 key = env.ifindex0, val = env.ifindex1;

		err = bpf_map_update_elem(bpf_map__fd(skel->maps.tx_port),
					  &key, &val, BPF_ANY);
		CHECK_EQ(err, 0);
		if (err)
			goto out;
	}

	prog = c->prog == P_FWD ? skel->progs.xdp_fwd : skel->progs.xdp_pass;
	err = test_run(bpf_program__fd(prog), frame_64, sizeof(frame_64),
		       c->in, &verdict);
	if (err == -EINVAL && c->in != IN_DEFAULT) {
		skip_why = "kernel refuses an xdp_md ctx_in naming a device";
		goto out;
	}
	CHECK_EQ(err, 0);
	if (!err)
		CHECK_VERDICT(verdict, c->verdict);
out:
	xdp_fwd_bpf__destroy(skel);
}

static void test_xdp_fwd_prog_names(void)
{
	struct xdp_fwd_bpf *skel = xdp_fwd_bpf__open();

	CHECK(skel != NULL);
	if (!skel)
		return;
	CHECK(strcmp(bpf_program__name(skel->progs.xdp_fwd),
		     L2CC_XDP_FWD_PROG_NAME) == 0);
	CHECK(strcmp(bpf_program__name(skel->progs.xdp_pass),
		     L2CC_XDP_PASS_PROG_NAME) == 0);
	CHECK_EQ(bpf_map__max_entries(skel->maps.tx_port),
		 L2CC_XDP_FWD_MAX_PORTS);
	xdp_fwd_bpf__destroy(skel);
}

/* ---- loading with the systemd units' capabilities ---------------------- */

/*
 * switchd@.service and hostd@.service give the program CAP_BPF and
 * CAP_NET_ADMIN, not CAP_PERFMON (nor CAP_SYS_ADMIN). Without it the
 * verifier keeps Spectre v1 masking: a register added to a packet or map
 * value pointer must be the same on every path to that instruction (clang
 * merges unrolled per-priority writes into one such add), pointers may not
 * be compared or subtracted, stack must be written before it is read. A
 * forked child keeps only the capabilities of caps (its effective set is
 * what the verifier asks) and loads the program, the fast path off and on
 * (switchd's forwarding = xdp verifies l2cc_fwd as well), saying why a
 * load failed unless quiet. Returns the child's status: 0 loaded both, 1 a
 * load failed, 2 capset failed.
 */
static int load_with_caps(uint64_t caps, bool quiet)
{
	static char vlog[1 << 20];
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2] = { { 0 } };
		int rc = 0;

		for (int i = 0; i < 2; i++)
			d[i].effective = d[i].permitted = (uint32_t)(caps >> (32 * i));
		if (syscall(SYS_capset, &h, d)) {
			printf("    capset: %s\n", strerror(errno));
			_exit(2);
		}
		for (int fwd = 0; fwd < 2; fwd++) {
			struct l2cc_xdp_bpf *skel = l2cc_xdp_bpf__open();
			char *line, *save;
			int err;

			if (!skel)
				_exit(1);
			skel->rodata->cfg_fwd = fwd;
			vlog[0] = 0;
			/* Level 0: libbpf asks for the log only on a retry. */
			bpf_program__set_log_buf(skel->progs.l2cc_xdp, vlog, sizeof(vlog));
			err = l2cc_xdp_bpf__load(skel);
			if (err)
				rc = 1;
			if (err && !quiet) {
				printf("    cfg_fwd = %d: load failed: %s\n", fwd, strerror(-err));
				for (line = strtok_r(vlog, "\n", &save); line;
				     line = strtok_r(NULL, "\n", &save))
					if (strstr(line, "!root") || strstr(line, "prohibited") ||
					    strstr(line, "invalid"))
						printf("    verifier: %s\n", line);
			}
			l2cc_xdp_bpf__destroy(skel);
		}
		fflush(stdout);
		_exit(rc);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define CAPB(c) (1ull << (c))

static void test_loads_without_perfmon(void)
{
	CHECK_EQ(load_with_caps(CAPB(CAP_BPF) | CAPB(CAP_NET_ADMIN), false), 0);
}

/* The control: the child's capabilities are what the kernel checks. */
static void test_no_load_without_cap_bpf(void)
{
	CHECK_EQ(load_with_caps(CAPB(CAP_NET_ADMIN) | CAPB(CAP_PERFMON), true), 1);
}

/* ---- main --------------------------------------------------------------- */

int main(void)
{
	struct l2cc_xdp_bpf *probe;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP bpf: needs root\n");
		return 77;
	}
	/* A private netns: our veths and sockets vanish when we exit. */
	if (unshare(CLONE_NEWNET)) {
		printf("SKIP bpf: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return 77;
	}
	/* libbpf is noisy while probing: show its errors only. */
	log_init("test_bpf", LOG_LVL_ERR);
	probe = l2cc_xdp_bpf__open_and_load();
	if (!probe) {
		printf("SKIP bpf: cannot load an XDP program: %s\n",
		       strerror(errno));
		return 77;
	}
	l2cc_xdp_bpf__destroy(probe);

	env_setup();

	RUN(test_l2cc_xdp_prog_name);
	RUN(test_loads_without_perfmon);
	RUN(test_no_load_without_cap_bpf);
	for (i = 0; i < sizeof(l2cc_cases) / sizeof(l2cc_cases[0]); i++)
		RUN_CASE(l2cc_cases[i].name, run_l2cc_case, &l2cc_cases[i]);
	for (i = 0; i < sizeof(ctl_cases) / sizeof(ctl_cases[0]); i++)
		RUN_CASE(ctl_cases[i].name, run_ctl_case, &ctl_cases[i]);
	RUN(test_ctl_sequence);
	RUN(test_fwd_default_off);
	for (i = 0; i < sizeof(fwdp_cases) / sizeof(fwdp_cases[0]); i++)
		RUN_CASE(fwdp_cases[i].name, run_fwdp_case, &fwdp_cases[i]);
	RUN(test_xdp_fwd_prog_names);
	for (i = 0; i < sizeof(fwd_cases) / sizeof(fwd_cases[0]); i++)
		RUN_CASE(fwd_cases[i].name, run_fwd_case, &fwd_cases[i]);

	env_teardown();
	if (check_skipped)
		printf("# skipped: %d\n", check_skipped);
	return check_summary();
}
