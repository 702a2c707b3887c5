// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostd's configuration schema: every key with its type, default, range and
 * a one-line description. `hostd --help-config` prints these tables, and
 * docs/hostd.md is generated from the same output.
 */
#include "hostd.h"
#include "dconf.h"
#include "flow.h"
#include "nic.h"
#include "rp.h"
#include "xport.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* The order of each list is its enum's (hostd.h, flow.h): the parser stores
 * the index. */
static const char *const fc_names[] = { "auto", "none", "pause", "pfc", "credit", NULL };
static const char *const gran_names[] = { "dst", "5tuple", "prio", NULL };
static const char *const mode_names[] = { "unreliable", "reliable", NULL };
static const char *const xdp_mode_names[] = { "native", "skb", "auto", NULL };
static const char *const zc_names[] = { "auto", "on", "off", NULL };
static const char *const nic_pause_names[] = { "warn", "off", "keep", NULL };
static const char *const level_names[] = { "error", "warn", "info", "debug", NULL };

_Static_assert(HD_FC_AUTO == 0 && HD_FC_NONE == 1 && HD_FC_PAUSE == 2 && HD_FC_PFC == 3 &&
	       HD_FC_CREDIT == 4, "fc_names[] follows enum hd_fc");
_Static_assert(FLOW_BY_DST == 0 && FLOW_BY_5TUPLE == 1 && FLOW_BY_PRIO == 2,
	       "gran_names[] follows enum flow_granularity");
_Static_assert(HD_MODE_UNRELIABLE == 0 && HD_MODE_RELIABLE == 1, "mode_names[] follows enum hd_mode");
_Static_assert(HD_XDP_NATIVE == 0 && HD_XDP_SKB == 1 && HD_XDP_AUTO == 2,
	       "xdp_mode_names[] follows enum hd_xdp_mode");
_Static_assert(NIC_ZC_AUTO == 0 && NIC_ZC_ON == 1 && NIC_ZC_OFF == 2, "zc_names[] follows enum nic_zc_key");
_Static_assert(NIC_PAUSE_WARN == 0 && NIC_PAUSE_OFF == 1 && NIC_PAUSE_KEEP == 2,
	       "nic_pause_names[] follows enum nic_pause_key");

/* The last argument says what a reload does with a changed value (config.h):
 * LIVE applies it (hd_apply_cfg), KEEP keeps the running one with a warning
 * (bound to something made at start: log ident, control socket, listener,
 * time-series file, pass ring, the pacer's wheel and per-frame overhead, the
 * flow table's queue limit and idle time; wire_overhead too, as the pacer
 * took it at creation and changing only the uplink's share would pace flows
 * and the link with two different frame costs), RESTART refuses the reload
 * (it shapes the sockets, the UMEM, the flow and peer tables or what is on
 * the wire, which a peer hostd relies on). Move a key to LIVE when
 * hd_apply_cfg() learns to change it. */
#define LIVE .reload = CFG_LIVE
#define KEEP .reload = CFG_KEEP
#define RESTART .reload = CFG_RESTART
#define H(k, t, f, d, lo, hi, h, ...) \
	{ .key = k, .type = t, .off = offsetof(struct hd_cfg, f), .size = sizeof(((struct hd_cfg *)0)->f), \
	  .def = d, .min = lo, .max = hi, .help = h, __VA_ARGS__ }
#define HE(k, f, d, n, h, ...) \
	{ .key = k, .type = CFG_ENUM, .off = offsetof(struct hd_cfg, f), .def = d, .names = n, .help = h, \
	  __VA_ARGS__ }
#define R(k, t, f, d, lo, hi, h, ...) \
	{ .key = k, .type = t, .off = offsetof(struct hd_rate_cfg, f), \
	  .size = sizeof(((struct hd_rate_cfg *)0)->f), .def = d, .min = lo, .max = hi, .help = h, \
	  __VA_ARGS__ }

/* 400G is switchd's port rate bound too: a rate above it is a typo. */
#define HD_MAX_RATE 400000000000LL

static const struct cfg_item hd_items[] = {
	H("name", CFG_STR, name, "hostd", 1, 0, "name used in logs, metrics labels and the time series", KEEP),
	H("ctl_socket", CFG_STR, ctl_socket, "/run/l2cc/hostd.sock", 1, 0,
	  "control socket path (l2ccctl -s PATH)", KEEP),
	H("runtime_dir", CFG_STR, runtime_dir, "/run/l2cc", 1, 0,
	  "where the ports' original disable_ipv6 is saved, by network namespace and interface, "
	  "so that the next start restores it after a crash; empty = not saved", KEEP),
	H("metrics_listen", CFG_STR, metrics_listen, "", 1, 0,
	  "address:port serving Prometheus metrics over HTTP: :PORT is loopback, *:PORT every "
	  "address; empty = off (also `l2ccctl metrics`)", KEEP),
	H("stats_file", CFG_STR, stats_file, "", 1, 0,
	  "JSON-lines time series of the counters; empty = off (never followed through a symbolic link)",
	  KEEP),
	H("stats_file_max", CFG_SIZE, stats_file_max, "256M", 0, 1LL << 40,
	  "the time series is renamed to stats_file.1 (replacing it) when a line would take it "
	  "past this; 0 = no bound", KEEP),
	H("stats_interval", CFG_DURATION, stats_interval, "100ms", 1000000, 3600000000000LL,
	  "time between two time-series lines", LIVE),
	H("host_port", CFG_STR, host_port, NULL, 1, 0,
	  "the host stack's veth peer, e.g. cc0 (required): what the host sends arrives here", RESTART),
	H("uplink", CFG_STR, uplink, NULL, 1, 0, "interface toward the switch, e.g. up0 (required)", RESTART),
	H("link_rate", CFG_RATE, link_rate, "1G", 1000, HD_MAX_RATE,
	  "the uplink is paced at this rate (not unlimited); also the largest flow rate and the "
	  "base of ipd", LIVE),
	H("burst", CFG_SIZE, burst, "0", 0, 16777216,
	  "bytes the uplink may send back to back after idle; 0 = max(2 frames, 500 us at link_rate)", LIVE),
	H("flow_burst", CFG_DURATION, flow_burst, "2ms", 0, 1000000000,
	  "per flow, time at its rate (at least 2 frames) it may send back to back after idle; "
	  "also how late hostd may serve a backlogged flow without it losing rate", LIVE),
	H("wire_overhead", CFG_UINT, wire_overhead, "0", 0, 64,
	  "bytes charged per frame on top of its length (24 = Ethernet preamble, FCS and gap)", KEEP),
	HE("flow_control", fc, "auto", fc_names,
	   "what to honour from the switch: auto (whatever it sends), none, pause, pfc, credit "
	   "(send nothing before the first grant)", RESTART),
	H("xdp_control", CFG_BOOL, xdp_control, "yes", 1, 0,
	  "apply the switch's PAUSE/PFC and credit limits in the uplink's XDP program, so they "
	  "take effect while the uplink's receive ring waits for the host; no = in hostd, after "
	  "the frames before them", LIVE),
	HE("granularity", granularity, "dst", gran_names,
	   "what a flow is: dst (destination MAC + VLAN), 5tuple (IP addresses, protocol, ports), "
	   "prio (802.1Q priority)", RESTART),
	H("max_flows", CFG_UINT, max_flows, "1024", 2, 65535,
	  "flows tracked, the shared default flow (id 0) included; beyond, frames share it", RESTART),
	H("flow_idle", CFG_DURATION, flow_idle, "10s", 0, 86400000000000LL,
	  "forget a flow with nothing queued and no frame for this long; 0 = never", KEEP),
	H("queue", CFG_SIZE, queue, "256K", 2048, 268435456,
	  "bytes queued per flow at the host edge; beyond, frames from the host are dropped", KEEP),
	H("pass_queue", CFG_UINT, pass_queue, "256", 8, 4096,
	  "frames of ARP, ND, broadcast and multicast waiting for the uplink (not paced per flow)", KEEP),
	H("tag", CFG_BOOL, tag, "yes", 1, 0,
	  "tag data frames with the l2cc data tag (0x88B5) so switches can mark them; every "
	  "receiver must run hostd to strip it", RESTART),
	H("pcp_from_dscp", CFG_BOOL, pcp_from_dscp, "no", 1, 0,
	  "give an untagged IPv4/IPv6 data frame whose DSCP class (DSCP >> 3) is not 0 an 802.1Q "
	  "priority tag (VID 0, PCP = the class), so the fabric queues it at that priority; the "
	  "host's MTU must leave 4 more bytes", RESTART),
	H("ack_first", CFG_BOOL, ack_first, "yes", 1, 0,
	  "a flow sends pure TCP ACKs ahead of the data of their priority waiting in its queue, "
	  "so the other direction's connections are not clocked by this one's rate limit", LIVE),
	H("subflow_share", CFG_BOOL, subflow_share, "no", 1, 0,
	  "a flow holding several connections (granularity dst or prio) shares its queue among "
	  "them: a connection (5-tuple) may hold at most as many bytes as the queue has free, so "
	  "backlogged connections are served about equally, as an HCA serves the QPs of one SL "
	  "in turn under the SL's rate (IB CC at SL level); no = first come, first served", LIVE),
	HE("mode", mode, "unreliable", mode_names,
	   "congestion feedback: unreliable (receivers send CNPs for marked frames) or reliable "
	   "(receivers send ACKs echoing the marks)", RESTART),
	H("cnp_interval", CFG_DURATION, cnp_interval, "0", 0, 1000000000,
	  "at most one CNP per flow per interval, covering the marks since; 0 = the law's interval "
	  "if it has one (--help-config, [law] keys), else one CNP per marked frame", LIVE),
	H("ack_every", CFG_UINT, ack_every, "1", 1, 65535,
	  "reliable mode: an ACK per this many frames of a flow ...", LIVE),
	H("ack_delay", CFG_DURATION, ack_delay, "100us", 1000, 1000000000,
	  "... or at most this long after the first frame not yet acknowledged", LIVE),
	H("ack_timeout", CFG_DURATION, ack_timeout, "1s", 0, 60000000000LL,
	  "reliable mode: a flow whose window stays full this long without an ACK gives up on its "
	  "unacknowledged frames and goes on (a receiver that restarted); 0 = wait for ever", LIVE),
	H("slot", CFG_DURATION, slot, "1us", 100, 1000000,
	  "pacer timing-wheel slot: frames of paced flows leave at most this late", KEEP),
	H("frame_size", CFG_UINT, frame_size, "0", 0, 4096,
	  "UMEM frame size, 2048 or 4096; 0 = 2048 unless the MTU needs 4096", RESTART),
	H("ring_size", CFG_UINT, ring_size, "1024", 64, 16384,
	  "AF_XDP ring size per port (rx, tx, fill, completion); a power of two", RESTART),
	H("batch", CFG_UINT, batch, "64", 1, 256, "frames taken from an RX ring per pass", LIVE),
	H("umem_frames", CFG_UINT, umem_frames, "0", 0, 1048576,
	  "frames in the UMEM; 0 = enough for the rings and the queues", RESTART),
	H("busy_poll", CFG_DURATION, busy_poll, "0", 0, 10000000,
	  "keep polling the rings this long after the last frame before sleeping: fewer "
	  "wake-ups and lower latency for a CPU core's worth of spinning while busy", LIVE),
	HE("xdp_mode", xdp_mode, "native", xdp_mode_names,
	   "XDP attach mode of both interfaces: native (the driver's), skb (generic), auto = "
	   "native, else skb if the driver refuses (logged)", RESTART),
	HE("zero_copy", zero_copy, "auto", zc_names,
	   "AF_XDP zero-copy on both interfaces: auto = if both drivers can (else copy, logged), "
	   "on = refuse to start unless both can, off = copy mode; one mode for both, as they "
	   "share one UMEM", RESTART),
	HE("nic_pause", nic_pause, "warn", nic_pause_names,
	   "802.3x PAUSE handled by the NICs themselves (ethtool -a): warn = log it, off = turn "
	   "rx/tx pause off while hostd runs and restore it at exit (also after a crash, at the "
	   "next start), keep = leave it quietly; PFC enabled in a NIC (DCB) is always warned about",
	   RESTART),
	H("rx_queues", CFG_STR, rx_queues, "all", 1, 0,
	  "receive queues served on each of host_port and uplink, an AF_XDP socket on each: all "
	  "(every queue the interface has, so RSS spreads nothing to a queue without one), N "
	  "(queues 0..N-1, or all an interface has if fewer), or a list such as 0,2 or 0-3 (2-2: "
	  "queue 2 alone); frames on a queue left out are dropped (no_socket)", RESTART),
	HE("log_level", log_level, "info", level_names, "least severe message logged", LIVE),
};

static const struct cfg_item law_items[] = {
	/* The law list is the registry's (rp_registry.c), so the name is a
	 * string here and checked against rp_find() after parsing. */
	H("law", CFG_STR, law, "static", 1, 0,
	  "rate-control law of every flow (hostd --help-config lists them after the tables)", RESTART),
	H("rate", CFG_RATE, rate, "unlimited", 0, HD_MAX_RATE,
	  "static rate of every flow without a [rate] section, bit/s, and the starting rate of "
	  "the other laws; unlimited = link_rate (the papers' start at Rmax)", LIVE),
	H("ipd", CFG_INT, ipd, "-1", -1, 65535,
	  "when >= 0, pace by inter-packet delay instead of rate: rate = link_rate / (1 + ipd)", LIVE),
	H("window", CFG_UINT, window, "0", 0, 65535,
	  "reliable mode: frames a flow may have sent and not yet acknowledged; 0 = no window "
	  "(a law may take 0 as its own default)", LIVE),
	H("persistent", CFG_BOOL, persistent, "no", 1, 0,
	  "a new flow resumes the law state its key's last flow left when it expired (the rate, "
	  "for the laws that keep state), instead of starting at the configured rate", LIVE),
};

/* `law` picks a law, and with it the table of its own keys (rp_ops.keys). */
static bool hd_law_variant(size_t i, struct cfg_variant *v)
{
	const struct rp_ops *o;

	if (!rp_names[i])
		return false;
	o = rp_find(rp_names[i]);
	*v = (struct cfg_variant){ .name = o->name, .help = o->help, .items = o->keys,
				   .nitems = o->nkeys, .size = o->cfg_size,
				   .check = o->check_keys };
	return true;
}

static const struct cfg_selector law_sel = {
	.key = "law", .variant = hd_law_variant,
	.store_off = offsetof(struct hd_cfg, law_cfg), .store_size = HD_LAW_CFG_MAX,
};

static const struct cfg_item rate_items[] = {
	R("dst", CFG_MAC, dst, NULL, 1, 0, "destination MAC (required)", LIVE),
	R("vlan", CFG_UINT, vlan, "0", 0, 4095, "VLAN id (0 = untagged)", LIVE),
	R("rate", CFG_RATE, rate, "unlimited", 0, HD_MAX_RATE,
	  "rate of the flow toward dst, bit/s; unlimited = link_rate", LIVE),
	R("ipd", CFG_INT, ipd, "-1", -1, 65535,
	  "when >= 0, pace by inter-packet delay instead of rate: rate = link_rate / (1 + ipd)", LIVE),
};

/* [rate NAME]: cfg->rates[], each named by its label. */
static const struct dconf_list rate_list =
	DCONF_LIST(struct hd_cfg, rates, nrates, HD_MAX_RATES, "[rate] sections", "rate");

static void *hd_find_rate(void *ctx, const char *label)
{
	return dconf_list_find(&rate_list, ctx, label);
}

static void *hd_open_rate(void *ctx, const char *label, char *err, size_t errlen)
{
	return dconf_list_open(&rate_list, ctx, label, err, errlen);
}

static bool hd_rate_label(void *ctx, size_t i, char *buf, size_t len)
{
	return dconf_list_label(&rate_list, ctx, i, buf, len);
}

const struct cfg_section hd_cfg_sections[] = {
	{ .name = "hostd", .labelled = false, .items = hd_items,
	  .nitems = sizeof(hd_items) / sizeof(hd_items[0]), .open = dconf_open_self,
	  .find = dconf_find_self,
	  .help = "Daemon-wide settings (at most one section; host_port and uplink are required)." },
	{ .name = "law", .labelled = false, .items = law_items,
	  .nitems = sizeof(law_items) / sizeof(law_items[0]), .open = dconf_open_self,
	  .find = dconf_find_self, .sel = &law_sel,
	  .help = "The rate-control law, its parameters and the default static (and starting) "
		  "rate (at most one section)." },
	/* hd_apply_cfg() follows [rate] sections added, removed or changed. */
	{ .name = "rate", .labelled = true, .items = rate_items,
	  .nitems = sizeof(rate_items) / sizeof(rate_items[0]), .open = hd_open_rate,
	  .find = hd_find_rate, .label_at = hd_rate_label, .reload = CFG_LIVE,
	  .help = "The static (and starting) rate of the flows toward one destination; the label "
		  "names it. It applies to flows keyed by destination: every flow with granularity "
		  "dst, only non-IP frames with 5tuple, none with prio." },
};
const size_t hd_cfg_nsections = sizeof(hd_cfg_sections) / sizeof(hd_cfg_sections[0]);

static bool mac_is_zero(const uint8_t m[6])
{
	static const uint8_t zero[6];

	return !memcmp(m, zero, 6);
}

static void fmt_mac(char *buf, size_t len, const uint8_t m[6])
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static int hd_validate_rates(struct hd_cfg *cfg, const char *path, char *err, size_t errlen)
{
	char mac[18];

	for (int i = 0; i < cfg->nrates; i++) {
		const struct hd_rate_cfg *r = &cfg->rates[i];

		fmt_mac(mac, sizeof(mac), r->dst);
		/* The parser has no "was this key given" for a MAC; an all-zero
		 * address is no host's, so it stands for "missing". */
		if (mac_is_zero(r->dst)) {
			snprintf(err, errlen, "%s: [rate %s] has no dst, expected dst = aa:bb:cc:dd:ee:ff "
				 "(a host's MAC)", path, r->name);
			return -EINVAL;
		}
		/* Broadcast and multicast frames go through the pass queue, never
		 * a flow, so such a section would silently do nothing. */
		if (r->dst[0] & 1) {
			snprintf(err, errlen, "%s: [rate %s] dst %s is a multicast address, expected a "
				 "unicast destination (broadcast and multicast frames are not paced per flow)",
				 path, r->name, mac);
			return -EINVAL;
		}
		/* rate defaults to 0 (unlimited), so a non-zero rate was written:
		 * with ipd as well one of them would be ignored without a word. */
		if (r->ipd >= 0 && r->rate) {
			snprintf(err, errlen, "%s: [rate %s] sets both rate and ipd, expected one of them",
				 path, r->name);
			return -EINVAL;
		}
		for (int k = 0; k < i; k++) {
			const struct hd_rate_cfg *o = &cfg->rates[k];

			if (o->vlan == r->vlan && !memcmp(o->dst, r->dst, 6)) {
				snprintf(err, errlen, "%s: [rate %s] and [rate %s] both set dst %s vlan %llu, "
					 "expected one [rate] section per destination", path, o->name,
					 r->name, mac, (unsigned long long)r->vlan);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* Checks that span keys or sections; each names what was expected. */
static int hd_cfg_validate(struct hd_cfg *cfg, const char *path, char *err, size_t errlen)
{
	struct xport_qsel sel;
	int n, ret;

	if (xport_qsel_parse(cfg->rx_queues, &sel)) {
		snprintf(err, errlen, "%s: [hostd] rx_queues \"%s\": expected all, a count 1..%d, or "
			 "queues and ranges 0..%d with a comma or a dash (0,2 or 0-3; 2-2 for queue "
			 "2 alone)", path, cfg->rx_queues, L2CC_XSKMAP_MAX, L2CC_XSKMAP_MAX - 1);
		return -EINVAL;
	}
	if (!cfg->host_port[0]) {
		snprintf(err, errlen, "%s: [hostd] host_port is not set, expected the host stack's veth "
			 "peer, e.g. host_port = cc0", path);
		return -EINVAL;
	}
	if (!cfg->uplink[0]) {
		snprintf(err, errlen, "%s: [hostd] uplink is not set, expected the interface toward "
			 "the switch, e.g. uplink = up0", path);
		return -EINVAL;
	}
	if (!strcmp(cfg->host_port, cfg->uplink)) {
		snprintf(err, errlen, "%s: host_port and uplink are both %s, expected two interfaces",
			 path, cfg->uplink);
		return -EINVAL;
	}
	ret = dconf_check_rings(path, cfg->ring_size, cfg->frame_size, err, errlen);
	if (ret)
		return ret;
	if (cfg->zero_copy == NIC_ZC_ON && cfg->xdp_mode == HD_XDP_SKB) {
		snprintf(err, errlen, "%s: zero_copy = on with xdp_mode = skb, expected xdp_mode "
			 "native or auto (zero-copy needs the driver's XDP)", path);
		return -EINVAL;
	}
	/* ACKs quote the tag's sequence numbers and flow id: without the tag
	 * a receiver has nothing to acknowledge. */
	if (cfg->mode == HD_MODE_RELIABLE && !cfg->tag) {
		snprintf(err, errlen, "%s: mode = reliable with tag = no, expected tag = yes "
			 "(ACKs carry the data tag's flow and sequence numbers)", path);
		return -EINVAL;
	}
	if (!rp_find(cfg->law)) {
		n = snprintf(err, errlen, "%s: [law] law \"%s\" is not known, expected one of: ",
			     path, cfg->law);
		for (int i = 0; rp_names[i] && n >= 0 && (size_t)n < errlen; i++)
			n += snprintf(err + n, errlen - n, "%s%s", i ? ", " : "", rp_names[i]);
		return -EINVAL;
	}
	if (rp_find(cfg->law)->per_path && cfg->granularity != FLOW_BY_DST) {
		snprintf(err, errlen, "%s: [law] law = %s rates paths to a destination, expected "
			 "[hostd] granularity = dst", path, cfg->law);
		return -EINVAL;
	}
	/* Its receivers answer per sender flow, which only the tag names. */
	if (rp_find(cfg->law)->np && !cfg->tag) {
		snprintf(err, errlen, "%s: [law] law = %s with tag = no, expected tag = yes (the "
			 "path's egress names the path by the data tag's flow id)", path, cfg->law);
		return -EINVAL;
	}
	if (cfg->ipd >= 0 && cfg->rate) {
		snprintf(err, errlen, "%s: [law] sets both rate and ipd, expected one of them", path);
		return -EINVAL;
	}
	return hd_validate_rates(cfg, path, err, errlen);
}

int hd_cfg_load(struct hd_cfg *cfg, const char *path, char *const *overrides, int noverrides,
		char *err, size_t errlen)
{
	int ret;

	/* [hostd] and [law] are optional in the file: their defaults apply
	 * without them (host_port and uplink may come from overrides). */
	ret = dconf_load(cfg, sizeof(*cfg), hd_cfg_sections, hd_cfg_nsections, path, overrides,
			 noverrides, err, errlen);
	if (ret)
		return ret;
	return hd_cfg_validate(cfg, path, err, errlen);
}
