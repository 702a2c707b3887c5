/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the NIC under a port can do and does on its own: its driver, whether
 * an AF_XDP socket can bind to it in zero-copy mode, and whether the
 * hardware itself answers or sends 802.3x PAUSE (ethtool pause parameters)
 * or PFC (DCB, IEEE 802.1Qaz through DCB netlink).
 *
 * Zero-copy is one decision for the whole UMEM, not one per port: a socket
 * bound with XDP_SHARED_UMEM cannot pass XDP_COPY/XDP_ZEROCOPY and takes
 * the mode of the UMEM's first socket (net/xdp/xsk_buff_pool.c,
 * xp_assign_dev_shared: umem->zc ? XDP_ZEROCOPY : XDP_COPY). So every port
 * is probed first (nic_zc_probe, a throwaway socket on its own small UMEM)
 * and the daemon binds them all zero-copy only if all can (nic_zc_decide).
 *
 * A NIC that acts on PAUSE/PFC frames by itself consumes the ones the peer
 * sends (switchd's flow control never sees them) and may send its own when
 * its ring fills, so hardware and daemon would both act on the same link.
 * nic_pause_decide() says what to do about it; nic_pause_begin()/_end()
 * do it, the original settings saved under the runtime directory
 * (ifsave.h) so that a start after a SIGKILL restores them.
 */
#ifndef L2CC_NIC_H
#define L2CC_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `zero_copy` key. */
enum nic_zc_key { NIC_ZC_AUTO = 0, NIC_ZC_ON, NIC_ZC_OFF };
/* The `nic_pause` key. */
enum nic_pause_key { NIC_PAUSE_WARN = 0, NIC_PAUSE_OFF, NIC_PAUSE_KEEP };

/* The driver's name (ETHTOOL_GDRVINFO) in buf ("?" if it does not say);
 * 0 or -errno. */
struct ifreq;
/* ioctl(req) on an interface by name through a throwaway socket, ifr's
 * name filled in: 0 or -errno. */
int nic_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr);
int nic_driver(const char *ifname, char *buf, size_t len);

/* Can (ifname, queue) take an AF_XDP socket in zero-copy mode? 0, or the
 * -errno of a bind with XDP_ZEROCOPY (veth: -EOPNOTSUPP). The probe
 * socket is closed before returning; the kernel frees it in deferred work,
 * so the queue may be busy for a few milliseconds (xport_open retries). */
int nic_zc_probe(const char *ifname, uint32_t queue);

/* One port as the zero-copy decision sees it. */
struct nic_zc {
	const char *name;       /* port label, for messages */
	char driver[32];
	bool skb;               /* generic (skb) XDP: zero-copy not asked for */
	int err;                /* nic_zc_probe's result (0 = can) */
};

/* Bind the UMEM's sockets zero-copy (1) or copy (0), or -EOPNOTSUPP for
 * zero_copy = on when a port cannot (*bad = the first such, else -1).
 * Pure: a table of rows in the unit tests. */
int nic_zc_decide(int key, const struct nic_zc *ports, int n, int *bad);

/* Why port i is in copy mode, in buf (for the start log, l2ccctl and
 * metrics): "zero_copy = off", "generic XDP", "zero-copy not supported by
 * veth: EOPNOTSUPP", or which other port kept the shared UMEM in copy mode. */
void nic_zc_reason(char *buf, size_t len, int key, const struct nic_zc *ports, int n, int i);

/* The NIC's 802.3x pause settings (ethtool -a). */
struct nic_pause {
	bool autoneg, rx, tx;
};

int nic_pause_get(const char *ifname, struct nic_pause *pp);
int nic_pause_set(const char *ifname, const struct nic_pause *pp);

/* Priorities with PFC enabled in the NIC (IEEE DCB, `dcb pfc show`): a
 * bit mask, or -errno (-EOPNOTSUPP: no DCB in the driver, veth). */
int nic_pfc_get(const char *ifname);

/* What nic_pause_begin does with what it found. */
enum nic_pause_action {
	NIC_PA_UNKNOWN = 0,     /* the driver does not report pause: say so, go on */
	NIC_PA_NONE,            /* rx and tx pause are off: nothing to do */
	NIC_PA_WARN,            /* on: warn that the NIC acts on PAUSE frames too */
	NIC_PA_TURN_OFF,        /* on: turn rx/tx pause off, restore at exit */
	NIC_PA_KEEP,            /* on, and the user said keep: say so quietly */
};

/* get_err: nic_pause_get's result; pp what it read. Pure (unit-tested rows). */
enum nic_pause_action nic_pause_decide(int get_err, const struct nic_pause *pp, int key);
const char *nic_pause_action_name(enum nic_pause_action a);

/* A port's pause state from start to exit. */
struct nic_pause_state {
	enum nic_pause_action action;
	int err;                /* nic_pause_get's result */
	struct nic_pause found; /* as found at start (after a crash: as saved) */
	bool changed;           /* we turned pause off: restore at exit */
	int pfc;                /* nic_pfc_get's result */
};

/* Detect, decide, log once (tag = the port's label) and apply the
 * `nic_pause` key on ifname. dir: ifsave's runtime directory. Never fails
 * the start: a NIC whose pause cannot be read or changed is logged. */
void nic_pause_begin(struct nic_pause_state *st, const char *dir, const char *tag,
		     const char *ifname, int key);
/* Give the original pause settings back if nic_pause_begin changed them. */
void nic_pause_end(struct nic_pause_state *st, const char *dir, const char *ifname);
/* "unknown", "off", "rx", "tx", "rx_tx": what the NIC did at start (metrics label). */
const char *nic_pause_found_name(const struct nic_pause_state *st);

/* Everything above for one port of a daemon. */
struct nic_port {
	char driver[32];
	char zc_reason[128];    /* "zero-copy", or why the port is in copy mode */
	struct nic_pause_state pause;
};

/* Probe the n interfaces (ifnames[i], queues[i]; skb[i]: generic XDP) and
 * decide zero-copy for their shared UMEM (key: enum nic_zc_key), filling
 * np[i].driver and .zc_reason. 1 = bind zero-copy, 0 = copy, or
 * -EOPNOTSUPP, logged with the port (names[i]) that cannot, for
 * zero_copy = on. */
int nic_zc_plan(int key, const char *const *names, const char *const *ifnames,
		const uint32_t *queues, const bool *skb, int n, struct nic_port *np);

struct xport;
struct jw;
/* The start line of a port: "p1: native XDP, copy mode (zero-copy not
 * supported by veth: EOPNOTSUPP)". */
void nic_log_port(const char *name, const struct xport *p, const struct nic_port *np);
/* The same as fields of the current JSON object (l2ccctl ports/status). */
void nic_port_emit(struct jw *w, const struct xport *p, const struct nic_port *np);
/* Prometheus labels of the *_port_info gauge, after `prefix` (the daemon's
 * own labels), in buf. */
void nic_port_labels(char *buf, size_t len, const char *prefix, const struct xport *p,
		     const struct nic_port *np);

#endif
