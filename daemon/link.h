/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Link events: the operational state of a daemon's ports, from rtnetlink
 * (libnl-3, RTNLGRP_LINK). A port is up when its interface is up and
 * running: IFF_UP and IFF_RUNNING, which the kernel sets from the carrier
 * and the operational state (RFC 2863: IF_OPER_UP, or UNKNOWN for drivers
 * that report none). On a veth, `ip link set dev X down` on either end
 * takes the other end's carrier, so both ends go down.
 *
 * The daemon puts lnk_fd() in its event loop and calls lnk_process() when
 * it is readable; lnk_process() reads every pending message and calls the
 * callback once per port whose state changed. The socket is non-blocking,
 * and nothing here runs on the packet path. A lost event (the socket's
 * buffer overflowed: ENOBUFS) is healed by asking the kernel for every
 * port's state again.
 */
#ifndef L2CC_LINK_H
#define L2CC_LINK_H

#include <stdbool.h>
#include <stdint.h>

#define LNK_MAX_PORTS 64

struct lnk;

/* Port `port` (an index into the ifindex array given to lnk_init) went up
 * or down; operstate is the kernel's IF_OPER_* for the log. */
typedef void (*lnk_fn)(void *ctx, int port, bool up, uint8_t operstate);

struct lnk_stats {
	uint64_t events;        /* RTM_NEWLINK/DELLINK messages about our ports */
	uint64_t resyncs;       /* full re-reads after a lost event */
	uint64_t errors;        /* netlink receive errors */
};

/*
 * Subscribe to link events, then read the current state of the n ports
 * (ifindex[i], i < LNK_MAX_PORTS): lnk_up() says it from then on. The
 * callback is not called for this first state; the caller applies it.
 * 0 or -errno.
 */
int lnk_init(struct lnk **out, const int *ifindex, int n, lnk_fn fn, void *ctx);
/* The socket to watch for EPOLLIN. */
int lnk_fd(const struct lnk *l);
/* Read what is pending and report changes. 0, or -errno on a socket error
 * (the state was read afresh; the loop goes on). */
int lnk_process(struct lnk *l);
/* The last state read for port i. */
bool lnk_up(const struct lnk *l, int i);
uint8_t lnk_operstate(const struct lnk *l, int i);
const struct lnk_stats *lnk_stats(const struct lnk *l);
/* The name of an IF_OPER_* state ("up", "lowerlayerdown", ...). */
const char *lnk_operstate_name(uint8_t operstate);
/* NULL is ok. */
void lnk_fini(struct lnk *l);

#endif
