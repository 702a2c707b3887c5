// SPDX-License-Identifier: BSD-2-Clause
/*
 * The switch's side of the pure-XDP forwarding mode (forwarding = xdp,
 * docs/xdp-forwarding.md). Learning and aging stay in fdb.c; this keeps the
 * XDP program's copy of the FDB and its devmap in step with them, through
 * an ops table (struct sw_fwd_ops) so that the unit tests check it without
 * a kernel:
 *  - an FDB entry is in the map when its port forwards in XDP, is up and
 *    carries the entry's VLAN; fdb.c's
 *    sync tells us of every new, moved, static, aged or flushed entry (a
 *    system call per learning event, never per frame);
 *  - a port's own settings (on, index, largest frame, VLANs) and its devmap
 *    slot follow its link and the configuration; a port whose peer cannot
 *    take redirected frames has no slot, so frames for it reach the daemon;
 *  - when something an entry depends on changes (a link, a reload), the
 *    whole table is told again before the next
 *    pass (fwd_dirty): statics on a port that came back return to the map.
 */
#define LOG_SUBSYS "switch"
#include "switch_private.h"
#include "log.h"

#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

/* Does (port, vid) belong in the map? A refused port's entries stay: its
 * empty devmap slot sends frames for it to the daemon, while its own
 * frames, whose sources the map must know, still take the fast path. */
static bool sw_fwd_ok(const struct sw *s, uint16_t port, uint16_t vid)
{
	const struct sw_port *p;

	if (port >= s->nports)
		return false;
	p = &s->ports[port];
	return p->fwd_xdp && p->link_up && sw_vlan_ok(p, vid);
}

static void sw_fwd_key(uint64_t fk, struct l2cc_fwd_key *k)
{
	memset(k, 0, sizeof(*k));
	fdb_key_mac(fk, k->mac);
	k->vid = fdb_key_vid(fk);
}

static void sw_fwd_set(void *ctx, uint64_t key, uint16_t port)
{
	struct sw *s = ctx;
	struct l2cc_fwd_key k;
	int err;

	sw_fwd_key(key, &k);
	if (sw_fwd_ok(s, port, k.vid))
		err = s->fwd_ops->fdb_set(s->fwd_ctx, &k, port);
	else
		err = s->fwd_ops->fdb_del(s->fwd_ctx, &k);
	if (err && err != -ENOENT)
		s->fwd_map_errors++;
}

static void sw_fwd_del(void *ctx, uint64_t key)
{
	struct sw *s = ctx;
	struct l2cc_fwd_key k;
	int err;

	sw_fwd_key(key, &k);
	err = s->fwd_ops->fdb_del(s->fwd_ctx, &k);
	if (err && err != -ENOENT)
		s->fwd_map_errors++;
}

static uint64_t sw_fwd_seen(void *ctx, uint64_t key)
{
	struct sw *s = ctx;
	struct l2cc_fwd_key k;

	sw_fwd_key(key, &k);
	return s->fwd_ops->fdb_seen ? s->fwd_ops->fdb_seen(s->fwd_ctx, &k) : 0;
}

/* Port p's fast path and devmap slot as its state says. */
static void sw_fwd_port_apply(struct sw *s, struct sw_port *p)
{
	bool on = p->link_up;

	if (s->fwd_ops->port(s->fwd_ctx, p->idx, on, on && !p->fwd_refused))
		s->fwd_map_errors++;
}

void sw_fwd_attach(struct sw *s, const struct sw_fwd_ops *ops, void *ctx)
{
	struct fdb_sync sync = { .set = sw_fwd_set, .del = sw_fwd_del, .seen = sw_fwd_seen,
				 .ctx = s };
	bool any = false;

	for (int i = 0; i < s->nports; i++) {
		s->ports[i].fwd_xdp = sw_port_fwd_xdp(s->cfg, s->ports[i].cfg);
		any |= s->ports[i].fwd_xdp;
	}
	if (!any || !ops)
		return;
	s->fwd_ops = ops;
	s->fwd_ctx = ctx;
	fdb_set_sync(s->fdb, &sync);
	for (int i = 0; i < s->nports; i++)
		if (s->ports[i].fwd_xdp)
			sw_fwd_port_apply(s, &s->ports[i]);
	fdb_sync_all(s->fdb);
	s->fwd_dirty = false;
}

void sw_fwd_port(struct sw *s, struct sw_port *p)
{
	if (!s->fwd_ops || !p->fwd_xdp)
		return;
	sw_fwd_port_apply(s, p);
	s->fwd_dirty = true;
}

void sw_fwd_resync(struct sw *s)
{
	s->fwd_dirty = false;
	if (s->fwd_ops)
		fdb_sync_all(s->fdb);
}

void sw_fwd_refuse(struct sw *s, struct sw_port *p, bool refuse)
{
	if (!s->fwd_ops || !p->fwd_xdp || p->fwd_refused == refuse)
		return;
	p->fwd_refused = refuse;
	if (refuse)
		pr_warn("port %s (%s): its veth peer has no XDP program, so it would drop frames "
			"redirected to it in XDP: frames for it go through switchd until it has "
			"one\n", p->cfg->name, p->cfg->ifname);
	else
		pr_info("port %s (%s): its veth peer has an XDP program now: frames for it "
			"leave in XDP again\n", p->cfg->name, p->cfg->ifname);
	sw_fwd_port(s, p);
}

/* ---- the daemon's maps ------------------------------------------------------ */

/* ctx: the struct sw; the maps of the first port that forwards in XDP. */
static int sw_fwd_map_fd(struct sw *s, bool devs)
{
	for (int i = 0; i < s->nports; i++)
		if (s->ports[i].fwd_xdp && s->ports[i].xp)
			return devs ? xport_fwd_devs_fd(s->ports[i].xp)
				    : xport_fwd_fdb_fd(s->ports[i].xp);
	return -1;
}

static int sw_bpf_fdb_set(void *ctx, const struct l2cc_fwd_key *k, uint32_t port)
{
	struct l2cc_fwd_entry e = { .port = port };

	return bpf_map_update_elem(sw_fwd_map_fd(ctx, false), k, &e, 0) ? -errno : 0;
}

static int sw_bpf_fdb_del(void *ctx, const struct l2cc_fwd_key *k)
{
	return bpf_map_delete_elem(sw_fwd_map_fd(ctx, false), k) ? -errno : 0;
}

static uint64_t sw_bpf_fdb_seen(void *ctx, const struct l2cc_fwd_key *k)
{
	struct l2cc_fwd_entry e;

	return bpf_map_lookup_elem(sw_fwd_map_fd(ctx, false), k, &e) ? 0 : e.seen_ns;
}

static int sw_bpf_port(void *ctx, uint32_t port, bool rx, bool tx)
{
	struct sw *s = ctx;
	struct sw_port *p = &s->ports[port];
	struct l2cc_fwd_port pc = { .port = port, .on = rx, .max_len = p->max_frame };
	int fd = sw_fwd_map_fd(s, true), err;
	uint32_t ifindex = p->xp->ifindex;

	_Static_assert(sizeof(pc.vlans) == sizeof(p->cfg->vlan_map), "one VLAN bitmap");
	memcpy(pc.vlans, p->cfg->vlan_map, sizeof(pc.vlans));
	err = xport_fwd_port(p->xp, &pc);
	if (err)
		return err;
	if (tx)
		return bpf_map_update_elem(fd, &port, &ifindex, 0) ? -errno : 0;
	if (bpf_map_delete_elem(fd, &port) && errno != ENOENT)
		return -errno;
	return 0;
}

const struct sw_fwd_ops sw_fwd_bpf_ops = {
	.fdb_set = sw_bpf_fdb_set,
	.fdb_del = sw_bpf_fdb_del,
	.fdb_seen = sw_bpf_fdb_seen,
	.port = sw_bpf_port,
};

void sw_fwd_watch(struct sw *s)
{
	for (int i = 0; s->fwd_ops && i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];
		uint64_t n;
		int peer;

		if (!p->fwd_xdp || !p->xp)
			continue;
		/* A veth whose peer has no XDP program drops redirected frames
		 * without a trace (its peer has no NAPI to take them). */
		peer = xport_peer_xdp(p->xp);
		if (peer >= 0)
			sw_fwd_refuse(s, p, !peer);
		if (xport_xdp_xmit_errors(p->xp, &n))
			continue;
		if (!p->fwd_err_init) {
			p->fwd_err_base = n;
			p->fwd_err_init = true;
		}
		if (n - p->fwd_err_base == p->st.xdp_redirect_errors)
			continue;
		p->st.xdp_redirect_errors = n - p->fwd_err_base;
		pr_warn_rl("port %s (%s): %llu frames redirected to it in XDP could not be sent "
			   "(its peer's ring was full)\n", p->cfg->name, p->cfg->ifname,
			   (unsigned long long)p->st.xdp_redirect_errors);
	}
}
