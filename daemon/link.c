// SPDX-License-Identifier: BSD-2-Clause
/* Link events from rtnetlink: see link.h. */
#define LOG_SUBSYS "link"
#include "link.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/socket.h>
#include <netlink/route/link.h>

struct lnk {
	struct nl_sock *sk;         /* subscribed to RTNLGRP_LINK */
	int n;
	int ifindex[LNK_MAX_PORTS];
	bool up[LNK_MAX_PORTS];
	uint8_t oper[LNK_MAX_PORTS];
	lnk_fn fn;
	void *ctx;
	bool report;                /* call fn for changes (not while reading the first state) */
	struct lnk_stats st;
};

static const char *const lnk_oper_names[] = {
	[IF_OPER_UNKNOWN] = "unknown",
	[IF_OPER_NOTPRESENT] = "notpresent",
	[IF_OPER_DOWN] = "down",
	[IF_OPER_LOWERLAYERDOWN] = "lowerlayerdown",
	[IF_OPER_TESTING] = "testing",
	[IF_OPER_DORMANT] = "dormant",
	[IF_OPER_UP] = "up",
};

const char *lnk_operstate_name(uint8_t operstate)
{
	if (operstate < sizeof(lnk_oper_names) / sizeof(lnk_oper_names[0]) &&
	    lnk_oper_names[operstate])
		return lnk_oper_names[operstate];
	return "?";
}

/* libnl's errors are its own small positive codes; ours are -errno. */
static int lnk_err(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_AGAIN: return -EAGAIN;
	case NLE_NOMEM: return -ENOBUFS;    /* ENOBUFS from recvmsg maps here */
	case NLE_OBJ_NOTFOUND: return -ENODEV;
	case NLE_PERM: return -EPERM;
	case NLE_INTR: return -EINTR;
	default: return -EIO;
	}
}

static int lnk_port_of(const struct lnk *l, int ifindex)
{
	for (int i = 0; i < l->n; i++)
		if (l->ifindex[i] == ifindex)
			return i;
	return -1;
}

/* IFF_RUNNING is the kernel's netif_oper_up(): operstate UP or UNKNOWN. */
static void lnk_set(struct lnk *l, int i, unsigned int flags, uint8_t oper)
{
	bool up = (flags & IFF_UP) && (flags & IFF_RUNNING);

	l->oper[i] = oper;
	if (up == l->up[i])
		return;
	l->up[i] = up;
	if (l->report && l->fn)
		l->fn(l->ctx, i, up, oper);
}

/* Ask the kernel for every port's state (at start, and after a lost event),
 * on a socket of its own: the event socket's stream must stay events. */
static int lnk_read_all(struct lnk *l)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err = 0;

	if (!sk)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err) {
		err = lnk_err(err);
		goto out;
	}
	for (int i = 0; i < l->n; i++) {
		struct rtnl_link *link = NULL;
		int e = rtnl_link_get_kernel(sk, l->ifindex[i], NULL, &link);

		if (e) {
			/* Gone (a deleted veth): down. */
			lnk_set(l, i, 0, IF_OPER_NOTPRESENT);
			if (e != -NLE_OBJ_NOTFOUND && e != -NLE_NODEV && !err)
				err = lnk_err(e);
			continue;
		}
		lnk_set(l, i, rtnl_link_get_flags(link), rtnl_link_get_operstate(link));
		rtnl_link_put(link);
	}
out:
	nl_socket_free(sk);
	return err;
}

static int lnk_on_msg(struct nl_msg *msg, void *arg)
{
	struct lnk *l = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	const struct ifinfomsg *ifi;
	struct nlattr *a;
	uint8_t oper = IF_OPER_UNKNOWN;
	int i;

	if ((nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) ||
	    !nlmsg_valid_hdr(nlh, sizeof(*ifi)))
		return NL_OK;
	ifi = nlmsg_data(nlh);
	i = lnk_port_of(l, ifi->ifi_index);
	if (i < 0)
		return NL_OK;
	l->st.events++;
	a = nlmsg_find_attr(nlh, sizeof(*ifi), IFLA_OPERSTATE);
	if (a && nla_len(a) >= 1)
		oper = nla_get_u8(a);
	if (nlh->nlmsg_type == RTM_DELLINK)
		lnk_set(l, i, 0, IF_OPER_NOTPRESENT);
	else
		lnk_set(l, i, ifi->ifi_flags, oper);
	return NL_OK;
}

int lnk_init(struct lnk **out, const int *ifindex, int n, lnk_fn fn, void *ctx)
{
	struct lnk *l;
	int err;

	if (n < 0 || n > LNK_MAX_PORTS)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->n = n;
	memcpy(l->ifindex, ifindex, (size_t)n * sizeof(*ifindex));
	l->fn = fn;
	l->ctx = ctx;
	l->sk = nl_socket_alloc();
	if (!l->sk) {
		err = -ENOMEM;
		goto err;
	}
	/* Events carry no sequence numbers of ours. */
	nl_socket_disable_seq_check(l->sk);
	nl_socket_modify_cb(l->sk, NL_CB_VALID, NL_CB_CUSTOM, lnk_on_msg, l);
	err = nl_connect(l->sk, NETLINK_ROUTE);
	if (!err)
		err = nl_socket_add_membership(l->sk, RTNLGRP_LINK);
	if (!err)
		err = nl_socket_set_nonblocking(l->sk);
	if (err) {
		err = lnk_err(err);
		pr_err("netlink: subscribe to link events: %s\n", strerror(-err));
		goto err;
	}
	/* Subscribed first, then read: a change in between arrives as an
	 * event and is reported (or is already in what we read). */
	err = lnk_read_all(l);
	if (err) {
		pr_err("netlink: read the ports' link state: %s\n", strerror(-err));
		goto err;
	}
	l->report = true;
	*out = l;
	return 0;
err:
	lnk_fini(l);
	return err;
}

int lnk_fd(const struct lnk *l)
{
	return nl_socket_get_fd(l->sk);
}

int lnk_process(struct lnk *l)
{
	int err;

	for (;;) {
		err = nl_recvmsgs_default(l->sk);
		if (err >= 0)
			continue;
		err = lnk_err(err);
		if (err == -EAGAIN)
			return 0;
		if (err == -EINTR)
			continue;
		break;
	}
	/* Lost events (ENOBUFS: the kernel could not queue them) or a broken
	 * read: whatever changed meanwhile is in the kernel's state. */
	l->st.errors++;
	l->st.resyncs++;
	pr_warn_rl("netlink: link events: %s; reading every port's state again\n",
		   strerror(-err));
	lnk_read_all(l);
	return err;
}

bool lnk_up(const struct lnk *l, int i) { return l->up[i]; }
uint8_t lnk_operstate(const struct lnk *l, int i) { return l->oper[i]; }
const struct lnk_stats *lnk_stats(const struct lnk *l) { return &l->st; }

void lnk_fini(struct lnk *l)
{
	if (!l)
		return;
	if (l->sk)
		nl_socket_free(l->sk);
	free(l);
}
