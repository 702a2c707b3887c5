// SPDX-License-Identifier: BSD-2-Clause
/* The NIC under a port: driver, zero-copy, hardware PAUSE/PFC. See nic.h. */
#define LOG_SUBSYS "nic"
#include "nic.h"
#include "ifsave.h"
#include "json.h"
#include "prom.h"
#include "xport.h"
#include "log.h"

#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

int nic_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int s, ret;

	if (strlen(ifname) >= sizeof(ifr->ifr_name))
		return -ENAMETOOLONG;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	memcpy(ifr->ifr_name, ifname, strlen(ifname) + 1);
	ret = ioctl(s, req, ifr) < 0 ? -errno : 0;
	close(s);
	return ret;
}

static int nic_ethtool(const char *ifname, void *data)
{
	struct ifreq ifr = { .ifr_data = data };

	return nic_ioctl(ifname, SIOCETHTOOL, &ifr);
}

int nic_driver(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	int err = nic_ethtool(ifname, &di);

	snprintf(buf, len, "%s", !err && di.driver[0] ? di.driver : "?");
	return err;
}

int nic_zc_probe(const char *ifname, uint32_t queue)
{
	/* The smallest UMEM and rings the kernel takes: only the bind matters. */
	enum { NFRAMES = 64, FRAME = 2048 };
	struct sockaddr_xdp sxdp = { .sxdp_family = AF_XDP, .sxdp_flags = XDP_ZEROCOPY,
				     .sxdp_queue_id = queue };
	struct xdp_umem_reg mr = { .len = NFRAMES * FRAME, .chunk_size = FRAME };
	int n = NFRAMES, fd, err = 0;
	void *area;

	sxdp.sxdp_ifindex = if_nametoindex(ifname);
	if (!sxdp.sxdp_ifindex)
		return -errno;
	area = mmap(NULL, NFRAMES * FRAME, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	mr.addr = (uintptr_t)area;
	fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) < 0 ||
	    setsockopt(fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) < 0) {
		err = -errno;
		goto out_close;
	}
	/* A socket of a daemon that just exited is freed in deferred work:
	 * its queue answers EBUSY for a few milliseconds (as in xport_open). */
	for (int tries = 0;; tries++) {
		err = bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)) < 0 ? -errno : 0;
		if (err != -EBUSY || tries == 50)
			break;
		usleep(20000);
	}
out_close:
	close(fd);
out:
	munmap(area, NFRAMES * FRAME);
	return err;
}

int nic_zc_decide(int key, const struct nic_zc *ports, int n, int *bad)
{
	*bad = -1;
	if (key == NIC_ZC_OFF)
		return 0;
	for (int i = 0; i < n; i++)
		if (ports[i].skb || ports[i].err) {
			*bad = i;
			break;
		}
	if (*bad < 0)
		return n > 0;
	return key == NIC_ZC_ON ? -EOPNOTSUPP : 0;
}

static const char *nic_errname(int err)
{
	const char *s = strerrorname_np(-err);

	return s ? s : "error";
}

void nic_zc_reason(char *buf, size_t len, int key, const struct nic_zc *ports, int n, int i)
{
	int bad;

	if (key == NIC_ZC_OFF) {
		snprintf(buf, len, "zero_copy = off");
		return;
	}
	if (ports[i].skb) {
		snprintf(buf, len, "zero-copy needs native XDP, this port is generic (skb)");
		return;
	}
	if (ports[i].err) {
		snprintf(buf, len, "zero-copy not supported by %s: %s", ports[i].driver,
			 nic_errname(ports[i].err));
		return;
	}
	if (nic_zc_decide(key, ports, n, &bad) == 0 && bad >= 0) {
		snprintf(buf, len, "port %s (%s) cannot do zero-copy and the ports share one UMEM",
			 ports[bad].name, ports[bad].driver);
		return;
	}
	snprintf(buf, len, "zero-copy");
}

int nic_pause_get(const char *ifname, struct nic_pause *pp)
{
	struct ethtool_pauseparam ep = { .cmd = ETHTOOL_GPAUSEPARAM };
	int err = nic_ethtool(ifname, &ep);

	if (!err)
		*pp = (struct nic_pause){ .autoneg = ep.autoneg, .rx = ep.rx_pause, .tx = ep.tx_pause };
	return err;
}

int nic_pause_set(const char *ifname, const struct nic_pause *pp)
{
	struct ethtool_pauseparam ep = { .cmd = ETHTOOL_SPAUSEPARAM, .autoneg = pp->autoneg,
					 .rx_pause = pp->rx, .tx_pause = pp->tx };

	return nic_ethtool(ifname, &ep);
}

int nic_pfc_get(const char *ifname)
{
	struct {
		struct nlmsghdr nh;
		struct dcbmsg dcb;
		struct nlattr name_hdr;
		char name[IFNAMSIZ];
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETDCB,
			.nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = 1 },
		.dcb = { .dcb_family = AF_UNSPEC, .cmd = DCB_CMD_IEEE_GET },
		.name_hdr = { .nla_len = NLA_HDRLEN + IFNAMSIZ, .nla_type = DCB_ATTR_IFNAME },
	};
	char buf[8192];
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int fd, ret = -EOPNOTSUPP;
	ssize_t len;

	snprintf(req.name, sizeof(req.name), "%s", ifname);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (send(fd, &req, sizeof(req), 0) < 0) {
		ret = -errno;
		goto out;
	}
	len = recv(fd, buf, sizeof(buf), 0);
	if (len < 0) {
		ret = -errno;
		goto out;
	}
	if (!NLMSG_OK(nh, (size_t)len))
		goto out;
	if (nh->nlmsg_type == NLMSG_ERROR) {
		ret = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
		ret = ret ? ret : -EOPNOTSUPP;
		goto out;
	}
	/* dcbmsg, then DCB_ATTR_IFNAME, DCB_ATTR_IEEE { ..., DCB_ATTR_IEEE_PFC } */
	{
		char *p = (char *)NLMSG_DATA(nh) + NLMSG_ALIGN(sizeof(struct dcbmsg));
		char *end = (char *)nh + nh->nlmsg_len;

		while (p + NLA_HDRLEN <= end) {
			struct nlattr *a = (struct nlattr *)p;

			if (a->nla_len < NLA_HDRLEN || p + a->nla_len > end)
				break;
			if ((a->nla_type & NLA_TYPE_MASK) == DCB_ATTR_IEEE) {
				char *q = p + NLA_HDRLEN, *qend = p + a->nla_len;

				while (q + NLA_HDRLEN <= qend) {
					struct nlattr *b = (struct nlattr *)q;

					if (b->nla_len < NLA_HDRLEN || q + b->nla_len > qend)
						break;
					if (b->nla_type == DCB_ATTR_IEEE_PFC &&
					    b->nla_len >= NLA_HDRLEN + sizeof(struct ieee_pfc)) {
						ret = ((struct ieee_pfc *)(q + NLA_HDRLEN))->pfc_en;
						goto out;
					}
					q += NLA_ALIGN(b->nla_len);
				}
			}
			p += NLA_ALIGN(a->nla_len);
		}
		ret = 0; /* DCB without an IEEE PFC object: no PFC */
	}
out:
	close(fd);
	return ret;
}

enum nic_pause_action nic_pause_decide(int get_err, const struct nic_pause *pp, int key)
{
	if (get_err)
		return NIC_PA_UNKNOWN;
	if (!pp->rx && !pp->tx)
		return NIC_PA_NONE;
	switch (key) {
	case NIC_PAUSE_OFF:
		return NIC_PA_TURN_OFF;
	case NIC_PAUSE_KEEP:
		return NIC_PA_KEEP;
	default:
		return NIC_PA_WARN;
	}
}

const char *nic_pause_action_name(enum nic_pause_action a)
{
	static const char *const names[] = { "unknown", "none", "warn", "turn_off", "keep" };

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

static int nic_pause_bits(const struct nic_pause *pp)
{
	return pp->autoneg << 2 | pp->rx << 1 | pp->tx;
}

static struct nic_pause nic_pause_from_bits(int v)
{
	return (struct nic_pause){ .autoneg = v & 4, .rx = v & 2, .tx = v & 1 };
}

const char *nic_pause_found_name(const struct nic_pause_state *st)
{
	static const char *const names[] = { "off", "tx", "rx", "rx_tx" };

	if (st->err)
		return "unknown";
	return names[st->found.rx << 1 | st->found.tx];
}

void nic_pause_begin(struct nic_pause_state *st, const char *dir, const char *tag,
		     const char *ifname, int key)
{
	struct nic_pause now, off;
	bool from_crash = false;
	int saved, err;

	*st = (struct nic_pause_state){ 0 };
	st->pfc = nic_pfc_get(ifname);
	if (st->pfc > 0)
		pr_warn("%s: %s has PFC enabled in the NIC for priorities 0x%02x (DCB): the NIC "
			"answers and sends PFC frames itself; turn it off with `dcb pfc set dev %s "
			"prio-pfc all:off` so that only the daemon acts on them\n",
			tag, ifname, st->pfc, ifname);
	st->err = nic_pause_get(ifname, &now);
	if (st->err) {
		st->action = NIC_PA_UNKNOWN;
		pr_info("%s: pause: not reported by the driver (%s: %s)%s\n", tag, ifname,
			nic_errname(st->err), st->pfc < 0 ? "; PFC: no DCB in the driver" : "");
		return;
	}
	/* A run killed with pause turned off left the original behind. */
	saved = *dir ? ifsave_peek(dir, "pause", ifname, 7) : -ENOENT;
	st->found = saved >= 0 ? nic_pause_from_bits(saved) : now;
	st->action = nic_pause_decide(0, &st->found, key);
	if (saved >= 0 && st->action != NIC_PA_TURN_OFF) {
		err = nic_pause_set(ifname, &st->found);
		pr_info("%s: pause on %s was turned off by a run that did not stop cleanly: "
			"rx %s tx %s restored%s%s\n", tag, ifname, st->found.rx ? "on" : "off",
			st->found.tx ? "on" : "off", err ? ": " : "", err ? strerror(-err) : "");
		if (!err)
			ifsave_end(dir, "pause", ifname);
	}
	switch (st->action) {
	case NIC_PA_NONE:
		pr_info("%s: pause: rx off, tx off in the NIC (%s)\n", tag, ifname);
		break;
	case NIC_PA_WARN:
		pr_warn("%s: pause: the NIC %s acts on 802.3x PAUSE itself (rx %s, tx %s, autoneg "
			"%s): PAUSE frames it answers never reach the daemon; nic_pause = off turns "
			"that off while the daemon runs (or: ethtool -A %s rx off tx off)\n",
			tag, ifname, st->found.rx ? "on" : "off", st->found.tx ? "on" : "off",
			st->found.autoneg ? "on" : "off", ifname);
		break;
	case NIC_PA_KEEP:
		pr_info("%s: pause: rx %s, tx %s in the NIC (%s), kept (nic_pause = keep)\n", tag,
			st->found.rx ? "on" : "off", st->found.tx ? "on" : "off", ifname);
		break;
	case NIC_PA_TURN_OFF:
		if (*dir) {
			saved = ifsave_begin(dir, "pause", ifname, nic_pause_bits(&st->found), 7,
					     &from_crash);
			if (saved < 0)
				pr_warn("%s: save pause settings of %s under %s: %s; they are "
					"restored only at a clean stop\n", tag, ifname, dir,
					strerror(-saved));
		}
		off = (struct nic_pause){ .autoneg = false, .rx = false, .tx = false };
		err = nic_pause_set(ifname, &off);
		if (err) {
			pr_warn("%s: pause: cannot turn rx/tx pause off on %s: %s; the NIC keeps "
				"acting on PAUSE frames\n", tag, ifname, strerror(-err));
			if (*dir && !from_crash)
				ifsave_end(dir, "pause", ifname);
			break;
		}
		st->changed = true;
		pr_info("%s: pause: rx %s, tx %s in the NIC (%s) turned off while we run "
			"(nic_pause = off)\n", tag, st->found.rx ? "on" : "off",
			st->found.tx ? "on" : "off", ifname);
		break;
	default:
		break;
	}
}

void nic_pause_end(struct nic_pause_state *st, const char *dir, const char *ifname)
{
	int err;

	if (!st->changed)
		return;
	err = nic_pause_set(ifname, &st->found);
	if (err) {
		pr_warn("%s: restore pause (rx %s, tx %s): %s\n", ifname, st->found.rx ? "on" : "off",
			st->found.tx ? "on" : "off", strerror(-err));
		return; /* the file stays: the next start restores it */
	}
	st->changed = false;
	if (*dir)
		ifsave_end(dir, "pause", ifname);
}

int nic_zc_plan(int key, const char *const *names, const char *const *ifnames,
		const uint32_t *queues, const bool *skb, int n, struct nic_port *np)
{
	struct nic_zc zc[64];
	int ret, bad;

	if (n > (int)(sizeof(zc) / sizeof(zc[0])))
		return -E2BIG;
	for (int i = 0; i < n; i++) {
		zc[i] = (struct nic_zc){ .name = names[i], .skb = skb[i] };
		nic_driver(ifnames[i], zc[i].driver, sizeof(zc[i].driver));
		/* off never touches the queue; skb would not use it. */
		if (key != NIC_ZC_OFF && !skb[i])
			zc[i].err = nic_zc_probe(ifnames[i], queues[i]);
	}
	ret = nic_zc_decide(key, zc, n, &bad);
	for (int i = 0; i < n; i++) {
		snprintf(np[i].driver, sizeof(np[i].driver), "%s", zc[i].driver);
		if (ret == 1)
			snprintf(np[i].zc_reason, sizeof(np[i].zc_reason), "zero-copy");
		else
			nic_zc_reason(np[i].zc_reason, sizeof(np[i].zc_reason), key, zc, n, i);
	}
	if (ret < 0)
		pr_err("%s: zero_copy = on, but %s (driver %s) cannot bind an AF_XDP socket in "
		       "zero-copy mode: %s; set zero_copy = auto or off\n", names[bad], ifnames[bad],
		       zc[bad].driver, zc[bad].skb ? "generic (skb) XDP" : nic_errname(zc[bad].err));
	return ret;
}

static const char *nic_xdp_name(const struct xport *p)
{
	return p->xdp_skb ? "skb" : "native";
}

void nic_log_port(const char *name, const struct xport *p, const struct nic_port *np)
{
	char native[96] = "";

	if (p->native_err)
		snprintf(native, sizeof(native), " (native refused: %s)", nic_errname(p->native_err));
	if (p->zero_copy)
		pr_info("%s: %s XDP%s, zero-copy (%s, %s)\n", name,
			p->xdp_skb ? "generic (skb)" : "native", native, p->ifname, np->driver);
	else
		pr_info("%s: %s XDP%s, copy mode (%s; %s, %s)\n", name,
			p->xdp_skb ? "generic (skb)" : "native", native, np->zc_reason, p->ifname,
			np->driver);
}

void nic_port_emit(struct jw *w, const struct xport *p, const struct nic_port *np)
{
	jw_str(w, "driver", np->driver);
	jw_str(w, "xdp_mode", nic_xdp_name(p));
	if (p->native_err)
		jw_str(w, "xdp_native_error", nic_errname(p->native_err));
	jw_bool(w, "zero_copy", p->zero_copy);
	if (!p->zero_copy)
		jw_str(w, "zero_copy_reason", np->zc_reason);
	jw_str(w, "nic_pause", nic_pause_found_name(&np->pause));
	jw_str(w, "nic_pause_action", nic_pause_action_name(np->pause.action));
	jw_bool(w, "nic_pfc", np->pause.pfc > 0);
}

void nic_port_labels(char *buf, size_t len, const char *prefix, const struct xport *p,
		     const struct nic_port *np)
{
	char drv[64], ifn[40];

	prom_label_escape(drv, sizeof(drv), np->driver);
	prom_label_escape(ifn, sizeof(ifn), p->ifname);
	snprintf(buf, len, "%s,ifname=\"%s\",driver=\"%s\",xdp_mode=\"%s\",zero_copy=\"%d\","
		 "nic_pause=\"%s\",nic_pfc=\"%d\"", prefix, ifn, drv, nic_xdp_name(p),
		 p->zero_copy, nic_pause_found_name(&np->pause), np->pause.pfc > 0);
}
