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

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const fc_names[] = { "none", "pause", "pfc", "credit", NULL };
static const char *const role_names[] = { "host", "switch", NULL };
static const char *const sched_names[] = { "strict", "rr", NULL };
static const char *const xdp_mode_names[] = { "native", "skb", NULL };
static const char *const level_names[] = { "error", "warn", "info", "debug", NULL };

#define G(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct sw_cfg, f), .size = sizeof(((struct sw_cfg *)0)->f), \
	  .def = d, .min = lo, .max = hi, .help = h }
#define GE(k, f, d, n, h) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct sw_cfg, f), .def = d, .names = n, .help = h }
#define P(k, t, f, d, lo, hi, h) \
	{ .key = k, .type = t, .off = offsetof(struct port_cfg, f), .size = sizeof(((struct port_cfg *)0)->f), \
	  .def = d, .min = lo, .max = hi, .help = h }
#define PE(k, f, d, n, h) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct port_cfg, f), .def = d, .names = n, .help = h }

static const struct cfg_item sw_items[] = {
	G("name", CFG_STR, name, "switchd", 1, 0, "name used in logs, metrics labels and the time series"),
	G("ctl_socket", CFG_STR, ctl_socket, "/run/l2cc/switchd.sock", 1, 0,
	  "control socket path (l2ccctl -s PATH)"),
	G("metrics_listen", CFG_STR, metrics_listen, "", 1, 0,
	  "address:port serving Prometheus metrics over HTTP; empty = off (also `l2ccctl metrics`)"),
	G("stats_file", CFG_STR, stats_file, "", 1, 0,
	  "JSON-lines time series of the counters; empty = off"),
	G("stats_interval", CFG_DURATION, stats_interval, "100ms", 1000000, 3600000000000LL,
	  "time between two time-series lines"),
	G("fdb_aging", CFG_DURATION, fdb_aging, "300s", 0, 86400000000000LL,
	  "forget a learned address not seen for this long; 0 = never"),
	G("fdb_size", CFG_UINT, fdb_size, "4096", 16, 1048576, "maximum learned addresses"),
	GE("priority_sched", sched, "strict", sched_names,
	   "across priorities at an output: strict (7 first) or round-robin"),
	G("frame_size", CFG_UINT, frame_size, "0", 0, 4096,
	  "UMEM frame size, 2048 or 4096; 0 = 2048 unless an MTU needs 4096"),
	G("ring_size", CFG_UINT, ring_size, "1024", 64, 16384,
	  "AF_XDP ring size per port (rx, tx, fill, completion); a power of two"),
	G("batch", CFG_UINT, batch, "64", 1, 256, "frames taken from an RX ring per pass"),
	G("umem_frames", CFG_UINT, umem_frames, "0", 0, 1048576,
	  "frames in the shared UMEM; 0 = enough for every ring and input buffer"),
	G("busy_poll", CFG_DURATION, busy_poll, "0", 0, 10000000,
	  "keep polling the rings this long after the last frame before sleeping: fewer "
	  "wake-ups and lower latency for a CPU core's worth of spinning while busy"),
	GE("marking", marking, "none", cp_names,
	   "congestion point of ports that do not name one: none, or a scheme listed under "
	   "\"Congestion points\" below"),
	G("cpu_queue", CFG_UINT, cpu_queue, "64", 1, 4096,
	  "frames per priority that congestion points may have queued toward outputs "
	  "(notifications they originate through the CPU pseudo-port)"),
	G("cpu_share", CFG_UINT, cpu_share, "10", 1, 100,
	  "percent of an output's rate that frames from the CPU pseudo-port may take, so "
	  "notifications never starve data"),
	GE("log_level", log_level, "info", level_names, "least severe message logged"),
};

static const struct cfg_item port_items[] = {
	P("ifname", CFG_STR, ifname, NULL, 1, 0, "interface (veth or NIC); default: the port's label"),
	P("queue", CFG_UINT, queue, "0", 0, 63, "receive queue the AF_XDP socket binds to"),
	P("rate", CFG_RATE, rate, "unlimited", 0, 400000000000LL,
	  "emulated line rate in bit/s (100M, 1G, 2.5G, unlimited): the port never sends faster"),
	P("burst", CFG_SIZE, burst, "0", 0, 16777216,
	  "bytes the wire clock may send back to back after idle; 0 = max(2 frames, 500 us at rate)"),
	P("wire_overhead", CFG_UINT, wire_overhead, "0", 0, 64,
	  "bytes charged per frame on top of its length (24 = Ethernet preamble, FCS and gap)"),
	P("mtu", CFG_UINT, mtu, "0", 0, 3818,
	  "largest payload accepted; 0 = the interface's MTU (3818 at most: a 4096-byte UMEM "
	  "frame less the kernel's 256 bytes of headroom and the Ethernet/VLAN headers)"),
	P("buffer", CFG_QTY, buffer, "64K", 1, 0,
	  "input buffer per priority: bytes (64K) or frames (4frames)"),
	PE("flow_control", fc, "none", fc_names,
	   "toward the upstream sender: none (tail drop), pause (802.3x), pfc (802.1Qbb), credit"),
	P("xoff", CFG_QTY, xoff, NULL, 1, 0,
	  "send PAUSE/PFC when a buffer reaches this; default buffer - (burst + 2 frames + rate x reaction_time)"),
	P("xon", CFG_QTY, xon, NULL, 1, 0, "send resume when every buffer is at or below this; default xoff - 2 frames"),
	P("pause_quanta", CFG_UINT, pause_quanta, "65535", 1, 65535,
	  "pause_time sent in PAUSE/PFC, in 512-bit-time quanta at the port's rate (refreshed at half)"),
	P("reaction_time", CFG_DURATION, reaction_time, "500us", 0, 100000000,
	  "PAUSE/PFC headroom allowance for the daemons' scheduling delay (frames keep arriving meanwhile)"),
	P("credit_interval", CFG_DURATION, credit_interval, "1ms", 10000, 1000000000,
	  "credit mode: how often changed credits are re-advertised (lost updates heal this fast)"),
	PE("role", role, "host", role_names,
	   "what is on the other end: a host may not send switch-only control frames (credits)"),
	PE("xdp_mode", xdp_mode, "native", xdp_mode_names, "XDP attach mode"),
	P("quiet_stack", CFG_BOOL, quiet_stack, "yes", 1, 0,
	  "turn IPv6 off on the interface while switchd runs, so the kernel's own router "
	  "solicitations and MLD reports do not leave a switch port"),
	PE("marking", marking, "switch", cp_port_names,
	   "congestion point of this port (its input buffer and its output); switch = the "
	   "[switch] setting"),
};

static const struct cfg_item fdb_items[] = {
	{ .key = "port", .type = CFG_STR, .off = offsetof(struct fdb_static_cfg, port),
	  .size = sizeof(((struct fdb_static_cfg *)0)->port), .def = NULL, .min = 1, .max = 0,
	  .help = "port the address is on (required)" },
	{ .key = "vlan", .type = CFG_UINT, .off = offsetof(struct fdb_static_cfg, vlan),
	  .def = "0", .min = 0, .max = 4095, .help = "VLAN id (0 = untagged)" },
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
	return dconf_list_open(&port_list, ctx, label, err, errlen);
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
	  .find = dconf_find_self, .help = "Daemon-wide settings (at most one section)." },
	{ .name = "port", .labelled = true, .items = port_items,
	  .nitems = sizeof(port_items) / sizeof(port_items[0]), .open = sw_open_port,
	  .find = sw_find_port, .help = "One per switch port; the label names the port." },
	{ .name = "fdb", .labelled = true, .items = fdb_items,
	  .nitems = sizeof(fdb_items) / sizeof(fdb_items[0]), .open = sw_open_fdb,
	  .help = "A static forwarding entry; the label is the MAC address." },
};
const size_t sw_cfg_nsections = sizeof(sw_cfg_sections) / sizeof(sw_cfg_sections[0]);

/* Checks that span keys or sections; each names what was expected. */
static int sw_cfg_validate(struct sw_cfg *cfg, const char *path, char *err, size_t errlen)
{
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
		for (int k = 0; k < i; k++) {
			if (!strcmp(cfg->ports[k].ifname, p->ifname) &&
			    cfg->ports[k].queue == p->queue) {
				snprintf(err, errlen, "%s: ports %s and %s both use %s queue %llu, "
					 "expected one port per interface queue", path,
					 cfg->ports[k].name, p->name, p->ifname,
					 (unsigned long long)p->queue);
				return -EINVAL;
			}
		}
		if (!p->buffer.n) {
			snprintf(err, errlen, "%s: [port %s] buffer is 0, expected room for at least one frame",
				 path, p->name);
			return -EINVAL;
		}
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
