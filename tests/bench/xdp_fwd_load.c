// SPDX-License-Identifier: BSD-2-Clause
/*
 * xdp_fwd_load: the pure-XDP baseline of the benchmark (scripts/bench.sh).
 *
 *   xdp_fwd_load [--pass [NETNS:]IF]... IFA IFB
 *
 * Run inside the switch namespace. Loads build/xdp_fwd.bpf.o (skeleton),
 * fills tx_port with IFA->IFB and IFB->IFA, attaches xdp_fwd to both through
 * BPF links, and attaches xdp_pass (also by BPF link) to every --pass
 * interface, looked up in network namespace NETNS (/run/netns/NETNS) when
 * given: a veth accepts XDP_REDIRECTed frames only when its peer has an XDP
 * program, so the host-side peers of IFA and IFB need one. Then prints
 * "ready" and waits for SIGTERM or SIGINT. Every program is held by a link
 * owned by this process, so exiting (or being killed) leaves nothing attached.
 */
#define LOG_SUBSYS "xdp_fwd_load"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "l2cc_shared.h"
#include "xdp_fwd.skel.h"

#define MAX_PASS 16

struct pass_if {
	char netns[NAME_MAX + 1];  /* empty: the current namespace */
	char ifname[IF_NAMESIZE];
	struct bpf_link *link;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: xdp_fwd_load [--pass [NETNS:]IF]... IFA IFB\n"
		"\n"
		"Forward every frame between IFA and IFB with the xdp_fwd devmap redirect\n"
		"(run inside the namespace that holds IFA and IFB), print \"ready\", and\n"
		"hold the programs until SIGTERM/SIGINT.\n"
		"\n"
		"  -p, --pass [NETNS:]IF  attach xdp_pass to IF (in /run/netns/NETNS if given),\n"
		"                         e.g. the host-side peers of IFA and IFB; repeatable\n"
		"  -v, --verbose          libbpf debug output\n"
		"  -h, --help             this help\n");
}

static int parse_pass(const char *arg, struct pass_if *p)
{
	const char *colon = strchr(arg, ':');
	size_t nslen = colon ? (size_t)(colon - arg) : 0;
	const char *ifn = colon ? colon + 1 : arg;

	if (colon && (nslen == 0 || nslen > NAME_MAX || memchr(arg, '/', nslen)))
		return -1;
	if (!*ifn || strlen(ifn) >= IF_NAMESIZE)
		return -1;
	memcpy(p->netns, arg, nslen);
	p->netns[nslen] = '\0';
	snprintf(p->ifname, sizeof(p->ifname), "%s", ifn);
	return 0;
}

static int ifindex_of(const char *ifname, const char *where)
{
	unsigned int idx = if_nametoindex(ifname);

	if (!idx)
		pr_err("interface %s%s: %s", ifname, where, strerror(errno));
	return (int)idx;
}

static struct bpf_link *attach(struct bpf_program *prog, const char *ifname, const char *where)
{
	struct bpf_link *link;
	int idx = ifindex_of(ifname, where);

	if (!idx)
		return NULL;
	link = bpf_program__attach_xdp(prog, idx);
	if (!link) {
		pr_err("attach %s to %s%s: %s%s", bpf_program__name(prog), ifname, where,
		       strerror(errno),
		       errno == EBUSY || errno == EEXIST ? " (another XDP program is attached)" : "");
		return NULL;
	}
	return link;
}

/* Attach xdp_pass to p->ifname inside p->netns, then return to our namespace. */
static int attach_pass(struct bpf_program *prog, struct pass_if *p, int home_fd)
{
	char path[PATH_MAX], where[NAME_MAX + 16] = "";
	int fd, back;

	if (!p->netns[0]) {
		p->link = attach(prog, p->ifname, "");
		return p->link ? 0 : -1;
	}
	snprintf(path, sizeof(path), "/run/netns/%.255s", p->netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pr_err("network namespace %s (%s): %s", p->netns, path, strerror(errno));
		return -1;
	}
	if (setns(fd, CLONE_NEWNET) < 0) {
		pr_err("enter network namespace %s: %s", p->netns, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	snprintf(where, sizeof(where), " in netns %.255s", p->netns);
	p->link = attach(prog, p->ifname, where);
	back = setns(home_fd, CLONE_NEWNET);
	if (back < 0) {
		pr_err("return to our network namespace: %s", strerror(errno));
		return -1;
	}
	return p->link ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pass", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct pass_if pass[MAX_PASS] = {};
	struct bpf_link *fwd_a = NULL, *fwd_b = NULL;
	struct xdp_fwd_bpf *skel = NULL;
	int npass = 0, level = LOG_LVL_INFO, home_fd = -1, ret = 1;
	int c, i, map_fd, sig;
	__u32 ia, ib;
	sigset_t set;

	while ((c = getopt_long(argc, argv, "p:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (npass == MAX_PASS) {
				fprintf(stderr, "xdp_fwd_load: at most %d --pass interfaces\n", MAX_PASS);
				return 2;
			}
			if (parse_pass(optarg, &pass[npass]) < 0) {
				fprintf(stderr, "xdp_fwd_load: bad --pass '%s' (want [NETNS:]IF)\n", optarg);
				return 2;
			}
			npass++;
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
	log_init("xdp_fwd_load", level);

	/* Block the stop signals first: sigwait() collects them, and one that
	 * arrives while we are still attaching is not lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	ia = (__u32)ifindex_of(argv[optind], "");
	ib = (__u32)ifindex_of(argv[optind + 1], "");
	if (!ia || !ib)
		return 1;
	if (ia == ib) {
		pr_err("IFA and IFB are the same interface (%s)", argv[optind]);
		return 2;
	}

	skel = xdp_fwd_bpf__open_and_load();
	if (!skel) {
		pr_err("load the xdp_fwd skeleton: %s", strerror(errno));
		return 1;
	}
	map_fd = bpf_map__fd(skel->maps.tx_port);
	if (bpf_map_update_elem(map_fd, &ia, &ib, BPF_ANY) < 0 ||
	    bpf_map_update_elem(map_fd, &ib, &ia, BPF_ANY) < 0) {
		pr_err("fill tx_port (%s<->%s): %s", argv[optind], argv[optind + 1], strerror(errno));
		goto out;
	}

	if (npass) {
		home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (home_fd < 0) {
			pr_err("open our network namespace: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < npass; i++)
		if (attach_pass(skel->progs.xdp_pass, &pass[i], home_fd) < 0)
			goto out;

	fwd_a = attach(skel->progs.xdp_fwd, argv[optind], "");
	if (!fwd_a)
		goto out;
	fwd_b = attach(skel->progs.xdp_fwd, argv[optind + 1], "");
	if (!fwd_b)
		goto out;

	printf("ready\n");
	fflush(stdout);

	if (sigwait(&set, &sig) != 0) {
		pr_err("sigwait: %s", strerror(errno));
		goto out;
	}
	pr_debug("signal %d: detaching", sig);
	ret = 0;
out:
	bpf_link__destroy(fwd_b);
	bpf_link__destroy(fwd_a);
	for (i = 0; i < npass; i++)
		bpf_link__destroy(pass[i].link);
	if (home_fd >= 0)
		close(home_fd);
	xdp_fwd_bpf__destroy(skel);
	return ret;
}
