// SPDX-License-Identifier: BSD-2-Clause
/*
 * switchd's configuration schema: every key with its type, default, range
 * and a one-line description. `switchd --help-config` prints these tables,
 * and docs/switchd.md is generated from the same output.
 */
#define LOG_SUBSYS "config"
#include "switch_private.h"
#include "dconf.h"
#include "log.h"
#include "nic.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fc_names[] = { "none", "pause", "pfc", "credit", NULL };
static const char *const role_names[] = { "host", "switch", NULL };
static const char *const sched_names[] = { "strict", "rr", NULL };
static const char *const xdp_mode_names[] = { "native", "skb", "auto", NULL };
static const char *const zc_names[] = { "auto", "on", "off", NULL };
static const char *const nic_pause_names[] = { "warn", "off", "keep", NULL };
static const char *const fwd_names[] = { "daemon", "xdp", NULL };
static const char *const pfwd_names[] = { "switch", "daemon", "xdp", NULL };

_Static_assert(SW_FWD_DAEMON == 0 && SW_FWD_XDP == 1, "fwd_names[] follows enum sw_fwd");
_Static_assert(SW_PFWD_SWITCH == 0 && SW_PFWD_DAEMON == 1 && SW_PFWD_XDP == 2,
	       "pfwd_names[] follows enum sw_pfwd");

_Static_assert(XDP_MODE_NATIVE == 0 && XDP_MODE_SKB == 1 && XDP_MODE_AUTO == 2,
	       "xdp_mode_names[] follows enum xdp_mode");
_Static_assert(NIC_ZC_AUTO == 0 && NIC_ZC_ON == 1 && NIC_ZC_OFF == 2, "zc_names[] follows enum nic_zc_key");
_Static_assert(NIC_PAUSE_WARN == 0 && NIC_PAUSE_OFF == 1 && NIC_PAUSE_KEEP == 2,
	       "nic_pause_names[] follows enum nic_pause_key");
static const char *const level_names[] = { "error", "warn", "info", "debug", NULL };
static const char *const wd_action_names[] = { "drop", "forward", "alert", NULL };

static int sw_umem_ok(const struct cfg_change *c, char *err, size_t errlen);
static int sw_buffer_ok(const struct cfg_change *c, char *err, size_t errlen);
static int sw_mtu_ok(const struct cfg_change *c, char *err, size_t errlen);

/* The last argument says what a reload does with a changed value (config.h):
 * LIVE applies it (sw_reload_apply: sw_port_apply_cfg, sw_cps_reset, ...),
 * KEEP keeps the running one with a warning, RESTART refuses the reload. */
#define LIVE .reload = CFG_LIVE
#define KEEP .reload = CFG_KEEP
#define RESTART .reload = CFG_RESTART
#define G(k, t, f, d, lo, hi, h, ...) \
	{ .key = k, .type = t, .off = offsetof(struct sw_cfg, f), .size = sizeof(((struct sw_cfg *)0)->f), \
	  .def = d, .min = lo, .max = hi, .help = h, __VA_ARGS__ }
#define GE(k, f, d, n, h, ...) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct sw_cfg, f), .def = d, .names = n, .help = h, \
	  __VA_ARGS__ }
#define P(k, t, f, d, lo, hi, h, ...) \
	{ .key = k, .type = t, .off = offsetof(struct port_cfg, f), .size = sizeof(((struct port_cfg *)0)->f), \
	  .def = d, .min = lo, .max = hi, .help = h, __VA_ARGS__ }
#define PE(k, f, d, n, h, ...) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct port_cfg, f), .def = d, .names = n, .help = h, \
	  __VA_ARGS__ }

static const struct cfg_item sw_items[] = {
	G("name", CFG_STR, name, "switchd", 1, 0, "name used in logs, metrics labels and the time series", KEEP),
	G("ctl_socket", CFG_STR, ctl_socket, "/run/l2cc/switchd.sock", 1, 0,
	  "control socket path (l2ccctl -s PATH)", KEEP),
	G("runtime_dir", CFG_STR, runtime_dir, "/run/l2cc", 1, 0,
	  "where the ports' original disable_ipv6 is saved, by network namespace and interface, "
	  "so that the next start restores it after a crash; empty = not saved", KEEP),
	G("metrics_listen", CFG_STR, metrics_listen, "", 1, 0,
	  "address:port serving Prometheus metrics over HTTP: :PORT is loopback, *:PORT every "
	  "address; empty = off (also `l2ccctl metrics`)", KEEP),
	G("stats_file", CFG_STR, stats_file, "", 1, 0,
	  "JSON-lines time series of the counters; empty = off (never followed through a symbolic link)",
	  KEEP),
	G("stats_file_max", CFG_SIZE, stats_file_max, "256M", 0, 1LL << 40,
	  "the time series is renamed to stats_file.1 (replacing it) when a line would take it "
	  "past this; 0 = no bound", KEEP),
	G("stats_interval", CFG_DURATION, stats_interval, "100ms", 1000000, 3600000000000LL,
	  "time between two time-series lines", LIVE),
	G("fdb_aging", CFG_DURATION, fdb_aging, "300s", 0, 86400000000000LL,
	  "forget a learned address not seen for this long; 0 = never", LIVE),
	G("fdb_size", CFG_UINT, fdb_size, "4096", 16, 1048576, "maximum learned addresses", KEEP),
	GE("priority_sched", sched, "strict", sched_names,
	   "across priorities at an output: strict (7 first) or round-robin", KEEP),
	G("frame_size", CFG_UINT, frame_size, "0", 0, 4096,
	  "UMEM frame size, 2048 or 4096; 0 = 2048 unless an MTU needs 4096", KEEP),
	G("ring_size", CFG_UINT, ring_size, "1024", 64, 16384,
	  "AF_XDP ring size per port (rx, tx, fill, completion); a power of two", KEEP),
	G("batch", CFG_UINT, batch, "64", 1, 256, "frames taken from an RX ring per pass", LIVE),
	G("umem_frames", CFG_UINT, umem_frames, "0", 0, 1048576,
	  "frames in the shared UMEM; 0 = enough for every ring and input buffer", KEEP),
	G("busy_poll", CFG_DURATION, busy_poll, "0", 0, 10000000,
	  "keep polling the rings this long after the last frame before sleeping: fewer "
	  "wake-ups and lower latency for a CPU core's worth of spinning while busy", LIVE),
	GE("marking", marking, "none", cp_names,
	   "congestion point of ports that do not name one: none, or a scheme listed under "
	   "\"Congestion points\" below", LIVE, .line_at = CFG_LINE_AT(struct sw_cfg, marking_line)),
	GE("forwarding", forwarding, "daemon", fwd_names,
	   "forwarding of ports that do not set their own: daemon = every frame through "
	   "switchd, xdp = known unicast between two such ports leaves in the kernel's XDP "
	   "(docs/xdp-forwarding.md); every port it applies to must have rate = unlimited, "
	   "flow_control = none and marking none", RESTART,
	   .line_at = CFG_LINE_AT(struct sw_cfg, fwd_line)),
	G("cpu_queue", CFG_UINT, cpu_queue, "64", 1, 4096,
	  "frames per priority that congestion points may have queued toward outputs "
	  "(notifications they originate through the CPU pseudo-port)", LIVE, .reload_ok = sw_umem_ok),
	G("cpu_share", CFG_UINT, cpu_share, "10", 1, 100,
	  "percent of an output's rate that frames from the CPU pseudo-port may take, so "
	  "notifications never starve data", LIVE),
	G("flood_queue", CFG_UINT, flood_queue, "64", 1, 1048576,
	  "flood copies (broadcast, multicast, unknown unicast) that may wait for one output; "
	  "more are dropped (flood_limit), so a slow or paused port cannot hold the pool",
	  LIVE, .reload_ok = sw_umem_ok),
	GE("zero_copy", zero_copy, "auto", zc_names,
	   "AF_XDP zero-copy for every port: auto = if every port's driver can (else copy, "
	   "logged), on = refuse to start unless they all can, off = copy mode; one mode for all "
	   "ports, as they share one UMEM", RESTART),
	GE("log_level", log_level, "info", level_names, "least severe message logged", LIVE),
};

static const struct cfg_item port_items[] = {
	P("ifname", CFG_STR, ifname, NULL, 1, 0, "interface (veth or NIC); default: the port's label", RESTART),
	P("queue", CFG_UINT, queue, NULL, 0, 63,
	  "serve this receive queue alone (one AF_XDP socket); what arrives on the interface's "
	  "other queues is dropped and counted (no_socket); unset: rx_queues decides", RESTART),
	P("rx_queues", CFG_STR, rx_queues, "all", 1, 0,
	  "receive queues served, an AF_XDP socket on each: all (every queue the interface "
	  "has, so RSS spreads nothing to a queue without one), N (queues 0..N-1), or a list "
	  "such as 0,2 or 0-3; frames on a queue left out are dropped (no_socket)", RESTART),
	P("rate", CFG_RATE, rate, "unlimited", 0, 400000000000LL,
	  "emulated line rate in bit/s (100M, 1G, 2.5G, unlimited): the port never sends faster", LIVE,
	  .line_at = CFG_LINE_AT(struct port_cfg, rate_line)),
	P("burst", CFG_SIZE, burst, "0", 0, 16777216,
	  "bytes the wire clock may send back to back after idle; 0 = max(2 frames, 500 us at rate)", LIVE),
	P("wire_overhead", CFG_UINT, wire_overhead, "0", 0, 64,
	  "bytes charged per frame on top of its length (24 = Ethernet preamble, FCS and gap)", LIVE),
	P("mtu", CFG_UINT, mtu, "0", 0, 3818,
	  "largest payload accepted; 0 = the interface's MTU (3818 at most: a 4096-byte UMEM "
	  "frame less the kernel's 256 bytes of headroom and the Ethernet/VLAN headers)",
	  LIVE, .reload_ok = sw_mtu_ok),
	P("buffer", CFG_QTY, buffer, "64K", 1, 0,
	  "input buffer per priority: bytes (64K) or frames (4frames)",
	  LIVE, .reload_ok = sw_buffer_ok),
	PE("flow_control", fc, "none", fc_names,
	   "toward the upstream sender: none (tail drop), pause (802.3x), pfc (802.1Qbb), credit", RESTART,
	   .line_at = CFG_LINE_AT(struct port_cfg, fc_line)),
	P("xoff", CFG_QTY, xoff, NULL, 1, 0,
	  "send PAUSE/PFC when a buffer reaches this; default buffer - (burst + 2 frames + rate x reaction_time)",
	  LIVE),
	P("xon", CFG_QTY, xon, NULL, 1, 0,
	  "send resume when every buffer is at or below this; default xoff - 2 frames", LIVE),
	P("pause_quanta", CFG_UINT, pause_quanta, "65535", 1, 65535,
	  "pause_time sent in PAUSE/PFC, in 512-bit-time quanta at the port's rate (refreshed at half)", LIVE),
	P("reaction_time", CFG_DURATION, reaction_time, "500us", 0, 100000000,
	  "PAUSE/PFC headroom allowance for the daemons' scheduling delay (frames keep arriving meanwhile)",
	  LIVE),
	P("pause_watchdog", CFG_DURATION, pause_watchdog, "200ms", 0, 60000000000LL,
	  "output: a priority paused by the peer (PAUSE/PFC) with frames waiting this long is in "
	  "a pause storm (SONiC's pfcwd detection time); 0 = no watchdog", LIVE),
	P("pause_watchdog_restore", CFG_DURATION, pause_watchdog_restore, "200ms", 1000000,
	  600000000000LL, "output: a pause storm is over when no pause for its priority has "
	  "arrived for this long (restoration time)", LIVE),
	PE("pause_watchdog_action", pause_watchdog_action, "drop", wd_action_names,
	   "output: during a pause storm, drop = ignore the pauses and drop the priority's "
	   "queued and arriving frames (pause_watchdog drops), forward = ignore the pauses and "
	   "send, alert = keep honouring them and only count and log", LIVE),
	P("pause_watchdog_switch", CFG_BOOL, pause_watchdog_switch, "no", 1, 0,
	  "output: watch a port toward a switch (role = switch) too; off by default: a host that "
	  "pauses for ever is the threat, while a congested switch's long pauses are the fabric's "
	  "own flow control, which congestion-spreading experiments reproduce", LIVE),
	P("mac_limit", CFG_UINT, mac_limit, "64", 0, 1048576,
	  "role = host: the most source addresses the FDB learns from this port; a frame from "
	  "one more is dropped (mac_limit drops), so one host cannot fill the table; 0 = none",
	  LIVE),
	P("mac_move_limit", CFG_UINT, mac_move_limit, "10", 0, 1000000,
	  "role = host: the most learned addresses that may move to this port per second; a "
	  "frame over it is dropped and the address stays where it was (mac_move drops); 0 = none",
	  LIVE),
	P("l2cc_host", CFG_BOOL, l2cc_host, "yes", 1, 0,
	  "role = host: a hostd is behind this port; no = a plain host, whose l2cc frames "
	  "(0x88B6 messages, data tags) can only be forged and are dropped (forged drops)", LIVE),
	P("vlans", CFG_STR, vlans, "all", 1, 0,
	  "VLAN ids the port carries: all, or a list such as 10,20-29 (1..4094); a frame tagged "
	  "with another is dropped at this input (vlan drops), never sent out of this port, and "
	  "floods stay within the ports that carry its VLAN; untagged and priority-tagged (VID "
	  "0) frames always pass", LIVE),
	P("credit_interval", CFG_DURATION, credit_interval, "1ms", 10000, 1000000000,
	  "credit mode: how often changed credits are re-advertised (lost updates heal this fast)", LIVE),
	PE("role", role, "host", role_names,
	   "what is on the other end: a host may not send switch-only control frames (credits)", LIVE),
	PE("xdp_mode", xdp_mode, "native", xdp_mode_names,
	   "XDP attach mode: native (the driver's), skb (generic), auto = native, else skb if "
	   "the driver refuses (logged)", RESTART),
	P("xdp_control", CFG_BOOL, xdp_control, "yes", 1, 0,
	  "apply received PAUSE/PFC and credit limits in the XDP program, so they take effect "
	  "while the port's receive ring is held behind a full buffer; no = in switchd, after "
	  "the frames before them", LIVE),
	PE("nic_pause", nic_pause, "warn", nic_pause_names,
	   "802.3x PAUSE handled by the NIC itself (ethtool -a): warn = log it, off = turn rx/tx "
	   "pause off while switchd runs and restore it at exit (also after a crash, at the next "
	   "start), keep = leave it quietly; PFC enabled in the NIC (DCB) is always warned about",
	   RESTART),
	P("quiet_stack", CFG_BOOL, quiet_stack, "yes", 1, 0,
	  "turn IPv6 off on the interface while switchd runs, so the kernel's own router "
	  "solicitations and MLD reports do not leave a switch port", KEEP),
	PE("marking", marking, "switch", cp_port_names,
	   "congestion point of this port (its input buffer and its output); switch = the "
	   "[switch] setting", LIVE, .line_at = CFG_LINE_AT(struct port_cfg, marking_line)),
	PE("forwarding", forwarding, "switch", pfwd_names,
	   "switch = the [switch] setting; daemon = every frame through switchd; xdp = known "
	   "unicast to another xdp port is redirected in XDP without a userspace hop, the "
	   "rest (unknown, broadcast, multicast, control frames, new sources) goes to switchd "
	   "as before (docs/xdp-forwarding.md); needs rate = unlimited, flow_control = none "
	   "and marking none (its own or [switch]'s)", RESTART,
	   .line_at = CFG_LINE_AT(struct port_cfg, fwd_line)),
};

/* Static entries go into the FDB at start only. */
static const struct cfg_item fdb_items[] = {
	{ .key = "port", .type = CFG_STR, .off = offsetof(struct fdb_static_cfg, port),
	  .size = sizeof(((struct fdb_static_cfg *)0)->port), .def = NULL, .min = 1, .max = 0,
	  .help = "port the address is on (required)", KEEP },
	{ .key = "vlan", .type = CFG_UINT, .off = offsetof(struct fdb_static_cfg, vlan),
	  .def = "0", .min = 0, .max = 4095, .help = "VLAN id (0 = untagged)", KEEP },
};

/* `marking` picks a congestion point, and with it a table of per-port keys
 * (cp_ops.keys): every scheme of the registry but "none". */
static bool sw_cp_variant(size_t i, struct cfg_variant *v)
{
	const struct cp_ops *o;

	if (!cp_names[i + 1])
		return false;
	o = cp_by_index((int)i + 1);
	*v = (struct cfg_variant){ .name = o->name, .help = o->help, .items = o->keys,
				   .nitems = o->nkeys, .size = o->cfg_size,
				   .check = o->check_keys };
	return true;
}

/* [switch] marking: its keys there are the defaults of its ports. */
static const struct cfg_selector sw_marking_sel = {
	.key = "marking", .variant = sw_cp_variant,
	.store_off = offsetof(struct sw_cfg, cp_cfg), .store_size = SW_CP_CFG_MAX,
};

/* [port] marking: its own, or "switch" for [switch]'s. */
static const struct cfg_selector port_marking_sel = {
	.key = "marking", .variant = sw_cp_variant,
	.store_off = offsetof(struct port_cfg, cp_cfg), .store_size = SW_CP_CFG_MAX,
	.parent = "switch", .follow = "switch",
};

/* [port NAME]: cfg->ports[], each named by its label. */
static const struct dconf_list port_list =
	DCONF_LIST(struct sw_cfg, ports, nports, SW_MAX_PORTS, "ports", "port");

static void *sw_find_port(void *ctx, const char *label)
{
	return dconf_list_find(&port_list, ctx, label);
}

static void *sw_open_port(void *ctx, const char *label, char *err, size_t errlen)
{
	struct port_cfg *p = dconf_list_open(&port_list, ctx, label, err, errlen);

	/* `queue` has no default: set or not decides between it and rx_queues. */
	if (p)
		p->queue = SW_QUEUE_UNSET;
	return p;
}

static bool sw_port_label(void *ctx, size_t i, char *buf, size_t len)
{
	return dconf_list_label(&port_list, ctx, i, buf, len);
}

static void fmt_mac(char *buf, size_t len, const uint8_t m[6])
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* [fdb MAC]: cfg->statics[], each named by its MAC. */
static void *sw_find_fdb(void *ctx, const char *label)
{
	struct sw_cfg *cfg = ctx;
	uint8_t mac[6];

	if (cfg_parse_mac(label, mac))
		return NULL;
	for (int i = 0; i < cfg->nstatic; i++)
		if (!memcmp(cfg->statics[i].mac, mac, 6))
			return &cfg->statics[i];
	return NULL;
}

static bool sw_fdb_label(void *ctx, size_t i, char *buf, size_t len)
{
	struct sw_cfg *cfg = ctx;

	if (i >= (size_t)cfg->nstatic)
		return false;
	fmt_mac(buf, len, cfg->statics[i].mac);
	return true;
}

static void sw_keep_fdb(void *new_ctx, const void *old_ctx)
{
	struct sw_cfg *n = new_ctx;
	const struct sw_cfg *o = old_ctx;

	memcpy(n->statics, o->statics, sizeof(n->statics));
	n->nstatic = o->nstatic;
}

static void *sw_open_fdb(void *ctx, const char *label, char *err, size_t errlen)
{
	struct sw_cfg *cfg = ctx;
	struct fdb_static_cfg *f;

	if (cfg->nstatic == SW_MAX_STATIC) {
		snprintf(err, errlen, "too many static entries, expected at most %d", SW_MAX_STATIC);
		return NULL;
	}
	f = &cfg->statics[cfg->nstatic];
	memset(f, 0, sizeof(*f));
	if (cfg_parse_mac(label, f->mac)) {
		snprintf(err, errlen, "\"%s\" is not a MAC address, expected [fdb aa:bb:cc:dd:ee:ff]",
			 label);
		return NULL;
	}
	cfg->nstatic++;
	return f;
}

const struct cfg_section sw_cfg_sections[] = {
	{ .name = "switch", .labelled = false, .items = sw_items,
	  .nitems = sizeof(sw_items) / sizeof(sw_items[0]), .open = dconf_open_self,
	  .find = dconf_find_self, .sel = &sw_marking_sel,
	  .help = "Daemon-wide settings (at most one section)." },
	/* Ports are sockets, XDP programs and a share of the UMEM made at start. */
	{ .name = "port", .labelled = true, .items = port_items,
	  .nitems = sizeof(port_items) / sizeof(port_items[0]), .open = sw_open_port,
	  .find = sw_find_port, .sel = &port_marking_sel, .label_at = sw_port_label,
	  .reload = CFG_RESTART, .help = "One per switch port; the label names the port." },
	{ .name = "fdb", .labelled = true, .items = fdb_items,
	  .nitems = sizeof(fdb_items) / sizeof(fdb_items[0]), .open = sw_open_fdb,
	  .find = sw_find_fdb, .label_at = sw_fdb_label, .reload = CFG_KEEP, .keep = sw_keep_fdb,
	  .help = "A static forwarding entry; the label is the MAC address." },
};
const size_t sw_cfg_nsections = sizeof(sw_cfg_sections) / sizeof(sw_cfg_sections[0]);

/* Checks that span keys or sections; each names what was expected. */
/* "all" or a comma list of VIDs and VID ranges (1..4094) into a bitmap. */
static int sw_vlans_parse(const char *s, uint64_t map[4096 / 64])
{
	memset(map, 0, 4096 / 8);
	if (!strcmp(s, "all")) {
		for (int v = 1; v <= 4094; v++)
			map[v / 64] |= 1ull << (v % 64);
		return 0;
	}
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s || a < 1 || a > 4094)
			return -EINVAL;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || b < a || b > 4094)
				return -EINVAL;
		}
		for (unsigned long v = a; v <= b; v++)
			map[v / 64] |= 1ull << (v % 64);
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return 0;
}

int sw_port_rx_queues(const struct port_cfg *p, struct xport_qsel *sel)
{
	if (p->queue != SW_QUEUE_UNSET) {
		*sel = xport_qsel_one((uint32_t)p->queue);
		return 0;
	}
	return xport_qsel_parse(p->rx_queues, sel);
}

/* The queues a port may bind, before the interface tells how many it has:
 * two ports on one interface must not both claim one. */
static uint64_t sw_port_qmask(const struct port_cfg *p)
{
	struct xport_qsel sel;

	if (sw_port_rx_queues(p, &sel))
		return ~0ull;
	if (sel.all)
		return ~0ull;
	if (sel.first)
		return sel.first >= 64 ? ~0ull : (1ull << sel.first) - 1;
	return sel.mask;
}

/* Where a value came from (cfg_item.line_at), for a message. */
static const char *sw_where(const char *path, unsigned line, char *buf, size_t len)
{
	if (line == CFG_LINE_OVERRIDE)
		snprintf(buf, len, "an override");
	else if (line)
		snprintf(buf, len, "%s:%u", path, line);
	else
		snprintf(buf, len, "the default");
	return buf;
}

/*
 * A port that forwards in XDP has nothing between its frames and the wire
 * (docs/xdp-forwarding.md): no emulated rate (the frames leave at the
 * interface's speed), no flow control (there is no input buffer to pause
 * upstream about, and no queue the peer's PAUSE could hold) and no
 * congestion point (each must see every frame). A port that asks for it
 * with any of these is refused, naming both keys and where they were set.
 */
static int sw_fwd_check(const struct sw_cfg *cfg, const struct port_cfg *p, const char *path,
			char *err, size_t errlen)
{
	int m = p->marking == SW_MARK_SWITCH ? cfg->marking : p->marking - 1;
	const char *key, *want, *why, *sec = "";
	char val[48], at[300], asked[300];
	unsigned line;

	if (!sw_port_fwd_xdp(cfg, p))
		return 0;
	if (p->rate) {
		key = "rate";
		snprintf(val, sizeof(val), "%llu bit/s", (unsigned long long)p->rate);
		line = p->rate_line;
		want = "rate = unlimited";
		why = "frames forwarded in XDP leave at the interface's own speed, with no "
		      "emulated wire";
	} else if (p->fc != FC_NONE) {
		key = "flow_control";
		snprintf(val, sizeof(val), "%s", fc_names[p->fc]);
		line = p->fc_line;
		want = "flow_control = none";
		why = "frames forwarded in XDP pass no input buffer to send PAUSE/PFC/credits "
		      "about, and no queue the peer's could hold";
	} else if (m > 0) {
		key = "marking";
		snprintf(val, sizeof(val), "%s", cp_names[m]);
		sec = p->marking == SW_MARK_SWITCH ? "[switch] " : "";
		line = p->marking == SW_MARK_SWITCH ? cfg->marking_line : p->marking_line;
		want = "marking = none";
		why = "a congestion point must see every frame, and frames forwarded in XDP "
		      "never reach it";
	} else {
		return 0;
	}
	sw_where(path, line, at, sizeof(at));
	if (p->forwarding == SW_PFWD_XDP)
		snprintf(err, errlen, "%s: [port %s] forwarding = xdp, but %s%s = %s (%s): %s; "
			 "expected %s, or forwarding = daemon",
			 sw_where(path, p->fwd_line, asked, sizeof(asked)), p->name, sec, key, val,
			 at, why, want);
	else
		snprintf(err, errlen, "%s: [switch] forwarding = xdp applies to [port %s], whose "
			 "%s%s = %s (%s): %s; expected %s, or forwarding = daemon in [port %s]",
			 sw_where(path, cfg->fwd_line, asked, sizeof(asked)), p->name, sec, key,
			 val, at, why, want, p->name);
	return -EINVAL;
}

static int sw_cfg_validate(struct sw_cfg *cfg, const char *path, char *err, size_t errlen)
{
	struct xport_qsel sel;
	int ret;

	if (!cfg->nports) {
		snprintf(err, errlen, "%s: no [port NAME] section, expected at least one port", path);
		return -EINVAL;
	}
	ret = dconf_check_rings(path, cfg->ring_size, cfg->frame_size, err, errlen);
	if (ret)
		return ret;
	for (int i = 0; i < cfg->nports; i++) {
		struct port_cfg *p = &cfg->ports[i];

		if (!p->ifname[0])
			strcpy(p->ifname, p->name);
		if (p->queue != SW_QUEUE_UNSET && strcmp(p->rx_queues, "all")) {
			snprintf(err, errlen, "%s: [port %s] sets both queue (%llu) and rx_queues "
				 "(%s), expected one of them", path, p->name,
				 (unsigned long long)p->queue, p->rx_queues);
			return -EINVAL;
		}
		if (sw_port_rx_queues(p, &sel)) {
			snprintf(err, errlen, "%s: [port %s] rx_queues \"%s\": expected all, a count "
				 "1..%d, or queues and ranges 0..%d with a comma or a dash (0,2 or "
				 "0-3; 2-2 for queue 2 alone)", path, p->name, p->rx_queues,
				 L2CC_XSKMAP_MAX, L2CC_XSKMAP_MAX - 1);
			return -EINVAL;
		}
		for (int k = 0; k < i; k++) {
			if (!strcmp(cfg->ports[k].ifname, p->ifname) &&
			    (sw_port_qmask(&cfg->ports[k]) & sw_port_qmask(p))) {
				snprintf(err, errlen, "%s: ports %s and %s both use receive queues of "
					 "%s, expected one port per interface queue (set queue or "
					 "rx_queues on both, apart)", path, cfg->ports[k].name,
					 p->name, p->ifname);
				return -EINVAL;
			}
		}
		if (sw_vlans_parse(p->vlans, p->vlan_map)) {
			snprintf(err, errlen, "%s: [port %s] vlans \"%s\": expected all, or VLAN ids "
				 "and ranges 1..4094 separated by commas (10,20-29)", path, p->name,
				 p->vlans);
			return -EINVAL;
		}
		if (cfg->zero_copy == NIC_ZC_ON && p->xdp_mode == XDP_MODE_SKB) {
			snprintf(err, errlen, "%s: zero_copy = on with [port %s] xdp_mode = skb, "
				 "expected xdp_mode native or auto (zero-copy needs the driver's XDP)",
				 path, p->name);
			return -EINVAL;
		}
		if (!p->buffer.n) {
			snprintf(err, errlen, "%s: [port %s] buffer is 0, expected room for at least one frame",
				 path, p->name);
			return -EINVAL;
		}
		ret = sw_fwd_check(cfg, p, path, err, errlen);
		if (ret)
			return ret;
	}
	for (int i = 0; i < cfg->nstatic; i++) {
		bool found = false;

		for (int k = 0; k < cfg->nports; k++)
			found |= !strcmp(cfg->ports[k].name, cfg->statics[i].port);
		if (!found) {
			snprintf(err, errlen, "%s: static fdb entry names port \"%s\", expected one of "
				 "the [port NAME] sections", path, cfg->statics[i].port);
			return -EINVAL;
		}
	}
	return 0;
}

int sw_cfg_load(struct sw_cfg *cfg, const char *path, char *const *overrides, int noverrides,
		char *err, size_t errlen)
{
	int ret;

	/* The [switch] section is optional: its defaults apply without it. */
	ret = dconf_load(cfg, sizeof(*cfg), sw_cfg_sections, sw_cfg_nsections, path, overrides,
			 noverrides, err, errlen);
	if (ret)
		return ret;
	return sw_cfg_validate(cfg, path, err, errlen);
}

/* ---- what a running switch can take (reload validators) ------------------ */

/* Frames the buffer of a port reserves in the UMEM: a byte budget counted
 * in minimum-size frames, bounded so that a large buffer does not pin
 * gigabytes; at most 4096 frames for the eight priorities together unless
 * one priority alone needs more. */
static uint64_t sw_buffer_frames(const struct cfg_qty *b)
{
	uint64_t per_prio = b->frames ? b->n : (b->n + L2CC_ETH_MIN_FRAME - 1) / L2CC_ETH_MIN_FRAME;
	uint64_t buf = per_prio * L2CC_NPRIO;

	if (buf > 4096 && per_prio <= 4096)
		return 4096;
	return buf > 4096 ? per_prio : buf;
}

/* The rings of one port, its buffer and a few frames for control frames
 * being built. */
static uint64_t sw_port_frames(const struct sw_cfg *cfg, const struct port_cfg *p)
{
	return 2 * cfg->ring_size + sw_buffer_frames(&p->buffer) + 16;
}

static uint64_t sw_cfg_umem_need_raw(const struct sw_cfg *cfg)
{
	uint64_t n = 64 + cfg->cpu_queue * L2CC_NPRIO;

	for (int i = 0; i < cfg->nports; i++)
		n += sw_port_frames(cfg, &cfg->ports[i]) + cfg->flood_queue;
	return n;
}

uint32_t sw_cfg_umem_need(const struct sw_cfg *cfg)
{
	uint64_t n = sw_cfg_umem_need_raw(cfg);

	return n > (1u << 20) ? 1u << 20 : (uint32_t)n;
}

/* The reload may not need more UMEM frames than the switch made at start
 * (unless it already needed more: umem_frames set small by hand): frames
 * beyond it would be promised to input buffers (credits, XON) that the
 * fill rings then cannot back, and the kernel drops what arrives. */
static int sw_umem_check(const struct cfg_change *c, uint64_t *have, uint64_t *need)
{
	const struct sw *s = c->daemon;

	if (!s || !s->umem)
		return 0;
	*have = s->umem->nframes;
	*need = sw_cfg_umem_need(c->new_cfg);
	if (*need <= *have || *need <= sw_cfg_umem_need(c->old_cfg))
		return 0;
	return -ENOSPC;
}

static int sw_umem_ok(const struct cfg_change *c, char *err, size_t errlen)
{
	uint64_t have, need;

	if (!sw_umem_check(c, &have, &need))
		return 0;
	snprintf(err, errlen, "%s needs %llu UMEM frames in all, the UMEM made at start has %llu; "
		 "restart switchd to grow it", c->new_val, (unsigned long long)need,
		 (unsigned long long)have);
	return -ENOSPC;
}

static int sw_buffer_ok(const struct cfg_change *c, char *err, size_t errlen)
{
	const struct cfg_qty *o = (const void *)((const char *)c->old_obj + c->item->off);
	const struct cfg_qty *n = (const void *)((const char *)c->new_obj + c->item->off);
	uint64_t have, need, other, room, max;
	char lim[32];

	/* Occupancy and credits already granted are counted in the old unit. */
	if (o->frames != n->frames) {
		snprintf(err, errlen, "changes unit (%s -> %s), expected %s like the running "
			 "buffer; restart switchd to change the unit", o->frames ? "frames" : "bytes",
			 n->frames ? "frames" : "bytes", o->frames ? "frames" : "bytes");
		return -EINVAL;
	}
	if (!sw_umem_check(c, &have, &need))
		return 0;
	/* The largest buffer of this port the UMEM still holds, the others
	 * as they are in the new file: sw_buffer_frames() inverted (from the
	 * need before its 2^20 cap, which a huge buffer alone passes). */
	other = sw_cfg_umem_need_raw(c->new_cfg) - sw_buffer_frames(n);
	room = have > other ? have - other : 0;
	if (room >= 4096)
		max = room;
	else
		max = room / L2CC_NPRIO;
	if (n->frames)
		snprintf(lim, sizeof(lim), "%lluframes", (unsigned long long)max);
	else if (!(max * L2CC_ETH_MIN_FRAME % 1024))
		snprintf(lim, sizeof(lim), "%lluK", (unsigned long long)max * L2CC_ETH_MIN_FRAME / 1024);
	else
		snprintf(lim, sizeof(lim), "%llu", (unsigned long long)max * L2CC_ETH_MIN_FRAME);
	snprintf(err, errlen, "%s needs %llu UMEM frames in all, the UMEM made at start "
		 "has %llu: at most buffer = %s on this port (the other ports as they are); "
		 "restart switchd to grow the UMEM", c->new_val, (unsigned long long)need,
		 (unsigned long long)have, lim);
	return -ENOSPC;
}

/* The largest frame of the new MTU must fit a UMEM frame of the size made
 * at start (after the kernel's headroom). */
static int sw_mtu_ok(const struct cfg_change *c, char *err, size_t errlen)
{
	const struct sw *s = c->daemon;
	const struct sw_cfg *ncfg = c->new_cfg;
	const struct port_cfg *p = c->new_obj;
	uint32_t hdr = L2CC_ETH_HLEN + 2 * L2CC_VLAN_HLEN, room, mtu;
	int i = (int)(p - ncfg->ports);

	if (!s || !s->umem || i < 0 || i >= s->nports)
		return 0;
	room = s->umem->frame_size - XPORT_UMEM_HEADROOM;
	mtu = p->mtu ? (uint32_t)p->mtu : s->ports[i].if_mtu;
	if (mtu + hdr <= room)
		return 0;
	snprintf(err, errlen, "%u does not fit the %u-byte UMEM frames made at start, expected at "
		 "most %u; restart switchd (frame_size = 4096) to take it", mtu,
		 s->umem->frame_size, room - hdr);
	return -EMSGSIZE;
}
