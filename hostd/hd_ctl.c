// SPDX-License-Identifier: BSD-2-Clause
/*
 * hostd's control socket commands, Prometheus metrics and JSON-lines time
 * series. All of it runs on the control path, between two datapath passes.
 */
#define LOG_SUBSYS "ctl"
#include "hostd_private.h"
#include "config.h"
#include "ctl.h"
#include "ctrs.h"
#include "dctl.h"
#include "json.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "prom.h"
#include "tseries.h"
#include "version.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

/* Flows listed per time-series line and in the metrics: bounds the line. */
#define HD_TS_MAX_FLOWS 256

static const char *const fc_str[] = { "auto", "none", "pause", "pfc", "credit" };
static const char *const gran_str[] = { "dst", "5tuple", "prio" };
static const char *const mode_str[] = { "unreliable", "reliable" };
static const char *const limit_str[] = { "none", "rate", "window" };

static void mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* A flow key as people read it: "02:..:01", "02:..:01 vlan 5",
 * "tcp 10.0.0.1:5201 > 10.0.0.2:40000", "prio 3", "default". */
static void key_str(const struct flow_key *k, char *buf, size_t n)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], mac[18];
	const char *proto = k->proto == 6 ? "tcp" : k->proto == 17 ? "udp" : NULL;
	char pnum[8];

	switch (k->type) {
	case FLOW_KEY_DST:
	case FLOW_KEY_PEER:
		mac_str(k->mac, mac);
		if (k->vid)
			snprintf(buf, n, "%s vlan %u", mac, k->vid);
		else
			snprintf(buf, n, "%s", mac);
		break;
	case FLOW_KEY_IP4:
	case FLOW_KEY_IP6: {
		int af = k->type == FLOW_KEY_IP4 ? AF_INET : AF_INET6;

		inet_ntop(af, k->src, a, sizeof(a));
		inet_ntop(af, k->dst, b, sizeof(b));
		if (!proto) {
			snprintf(pnum, sizeof(pnum), "ip%u", k->proto);
			proto = pnum;
		}
		if (af == AF_INET6)
			snprintf(buf, n, "%s [%s]:%u > [%s]:%u", proto, a, k->sport, b, k->dport);
		else
			snprintf(buf, n, "%s %s:%u > %s:%u", proto, a, k->sport, b, k->dport);
		break;
	}
	case FLOW_KEY_PRIO:
		snprintf(buf, n, "prio %u", k->prio);
		break;
	default:
		snprintf(buf, n, "default");
		break;
	}
}

static uint64_t drops_sum(const struct hd_port_stats *p)
{
	uint64_t n = 0;

	for (int i = 0; i < HD_DROP_MAX; i++)
		n += p->drop[i];
	return n;
}

static void emit_port(struct jw *w, const char *key, const struct hd *h, int port)
{
	const struct hd_port_stats *p = port == HD_PORT_UP ? &h->ust : &h->hst;
	const struct xport *x = port == HD_PORT_UP ? h->up : h->host;

	jw_obj_begin(w, key);
	jw_str(w, "link", h->link_up[port] ? "up" : "down");
	jw_str(w, "operstate", lnk_operstate_name(h->operstate[port]));
	jw_u64(w, "link_down_events", p->link_down_events);
	jw_u64(w, "link_up_events", p->link_up_events);
	jw_u64(w, "rx_frames", p->rx_frames);
	jw_u64(w, "rx_bytes", p->rx_bytes);
	jw_u64(w, "tx_frames", p->tx_frames);
	jw_u64(w, "tx_bytes", p->tx_bytes);
	/* Link-local control, the uplink's only (the host port has none):
	 * what is left is what crossed the fabric. */
	if (port == HD_PORT_UP) {
		jw_u64(w, "ctrl_rx_frames", p->ctrl_rx_frames);
		jw_u64(w, "ctrl_tx_frames", p->ctrl_tx_frames);
	}
	jw_u64(w, "drops", drops_sum(p));
	jw_obj_begin(w, "drop");
	for (int i = 0; i < HD_DROP_MAX; i++)
		jw_u64(w, hd_drop_names[i], p->drop[i]);
	jw_obj_end(w);
	/* Frames the XDP program found no socket for: not in drops, which
	 * counts what reached us. */
	jw_u64(w, "no_socket", x ? xport_no_socket(x) : 0);
	jw_u64(w, "rx_queues", x ? x->nq_if : 0);
	jw_u64(w, "rx_queues_served", x ? x->nq : 0);
	jw_u64(w, "tx_kicks", x ? x->kicks : 0);
	jw_obj_end(w);
}

/* The daemon-wide counters, declared once (daemon/ctrs.h): `counters`, the
 * time series and the metrics (l2cc_hostd_<name>_total) read this table. */
#define C(f, h) CTR_FIELD(struct hd_stats, f, #f "_total", CTR_COUNTER, CTR_TS, h)
static const struct ctr hd_ctrs[] = {
	C(pause_rx, "802.3x PAUSE frames received from the switch"),
	C(pfc_rx, "PFC frames received from the switch"),
	C(credit_rx, "Credit updates received from the switch"),
	C(credit_tx, "Credit updates sent to the switch (our sent counts)"),
	C(fc_ignored, "PAUSE/PFC/credits received but not honoured (flow_control)"),
	C(fc_blocked, "Times a flow's head frame waited on PAUSE/PFC/credits"),
	C(window_blocked, "Times a flow waited for ACKs with its window full"),
	C(ack_timeouts, "Windows given up on after ack_timeout without an ACK"),
	C(tagged, "Data frames sent with the l2cc tag"),
	C(pass_frames, "ARP/ND/broadcast/multicast frames passed to the fabric untagged"),
	C(pcp_tagged, "Frames given an 802.1p priority tag from their DSCP (pcp_from_dscp)"),
	C(unclassified, "Frames put on the default flow (table full or no key)"),
	C(stripped, "Tagged frames delivered to the host untagged"),
	C(fecn_rx, "Received frames marked FECN by a switch"),
	C(seq_gaps, "Sequence gaps in a remote sender's flow (reliable mode)"),
	C(not_ours, "Tagged frames for another host (flooded unicast): delivered, not answered"),
	C(rx_holds, "Passes that left frames in the uplink ring (host ring full)"),
	C(cnp_tx, "CNPs sent"),
	C(cnp_rx, "CNPs received"),
	C(ack_tx, "ACKs sent"),
	C(ack_rx, "ACKs received"),
	C(cnp_unknown, "CNPs naming a flow that does not exist (ignored)"),
	C(ack_unknown, "ACKs naming a flow that does not exist (ignored)"),
	C(notify_forged, "CNPs/ACKs not to our host, not from the flow's peer, or acknowledging "
	  "frames never sent (ignored)"),
	C(ack_clamped, "ACKs covering more frames than were in flight (clamped to those)"),
	C(cnm_rx, "802.1Qau CNMs from a switch about one of our flows (to the law)"),
	C(cnm_unknown, "CNMs about no flow of ours: an untagged sample or a flow gone (ignored)"),
	C(cnm_bad, "CNMs that do not decode: another version or cut short (dropped)"),
	C(discover_rx, "DISCOVERs for our host, as a path's destination (to the notification point)"),
	C(echo_tx, "DISCOVER_ECHOs sent back to a path's source"),
	C(echo_rx, "DISCOVER_ECHOs for one of our paths (to the law)"),
	C(feedback_tx, "FEEDBACKs sent to a path's source, as its egress"),
	C(feedback_rx, "FEEDBACKs for one of our paths (to the law)"),
	C(path_msg_unknown, "DISCOVER, ECHO or FEEDBACK for another host, or naming no path of ours from its "
	  "destination (ignored)"),
	C(ce_set, "IP CE set on ECN-capable packets leaving a backed-up flow (the law's: PRC_ECN)"),
	C(notify_drops, "CNPs/ACKs not sent: queue full, no frame or peer table full"),
	C(law_saves, "Law states kept when a flow ended ([law] persistent)"),
	C(law_resumes, "New flows that took up their key's kept law state"),
};
#undef C
#define HD_NCTRS (sizeof(hd_ctrs) / sizeof(hd_ctrs[0]))

/* Where the emulation failed, read from the uplink's wire clock and the
 * pacer (not hd_stats fields): top-level keys of `counters` and the time
 * series, l2cc_hostd_<metric>. A run where these grew did not get the link
 * and the rates it asked for (docs/hostd.md, Wire time lost). */
#define HD_GET(fn, expr)                                                          \
	static uint64_t fn(const void *obj, uint64_t now)                         \
	{                                                                         \
		const struct hd *h = obj;                                         \
		(void)now;                                                        \
		return (expr);                                                    \
	}
static uint64_t hd_pace_lost_total(const struct hd *h)
{
	struct pacer_stats ps;

	pacer_get_stats(h->pacer, &ps);
	return ps.lost_ns;
}
HD_GET(g_wire_lost, h->wc.lost_ns)
HD_GET(g_wire_late, h->wc.late_events)
HD_GET(g_wire_lost_max, h->wc.lost_max_ns)
HD_GET(g_pace_lost, hd_pace_lost_total(h))
#undef HD_GET
static const struct ctr hd_emu_ctrs[] = {
	CTR_GET("wire_lost_ns", "wire_lost_seconds_total", CTR_COUNTER, CTR_TS | CTR_NS,
	  "Wire time lost on the uplink: time it had frames waiting for its emulated wire, but "
	  "hostd woke too late (beyond the burst) to send them", g_wire_lost),
	CTR_GET("wire_late_events", "wire_late_events_total", CTR_COUNTER, CTR_TS,
	  "Passes that found the uplink backlogged and its wire clock late beyond the burst",
	  g_wire_late),
	CTR_GET("wire_lost_max_ns", "wire_lost_max_seconds", CTR_GAUGE, CTR_NS,
	  "The largest single loss of uplink wire time", g_wire_lost_max),
	CTR_GET("pace_lost_ns", "pace_lost_seconds_total", CTR_COUNTER, CTR_TS | CTR_NS,
	  "Pacing time lost by backlogged flows whose deadlines hostd noticed late (beyond "
	  "their burst), summed over the flows", g_pace_lost),
};
#define HD_NEMU (sizeof(hd_emu_ctrs) / sizeof(hd_emu_ctrs[0]))

static void emit_fc(const struct hd *h, struct jw *w, uint64_t now)
{
	uint64_t paused[L2CC_NPRIO];

	for (int i = 0; i < L2CC_NPRIO; i++)
		paused[i] = fc_tx_paused_ns(&h->etx, i, now);
	jw_u64(w, "paused_ns", fc_tx_paused_max_ns(&h->etx, now));
	jw_arr_begin(w, "paused_ns_prio");
	for (int i = 0; i < L2CC_NPRIO; i++)
		jw_u64(w, NULL, paused[i]);
	jw_arr_end(w);
	jw_u64(w, "paused_mask", fc_tx_paused_mask(&h->etx, now));
	jw_bool(w, "credit_granted", h->etx.credit_have);
}

static void emit_counters(const struct hd *h, struct jw *w, bool full, uint64_t now)
{
	struct flow_table_stats fs;

	emit_port(w, "host", h, HD_PORT_HOST);
	emit_port(w, "uplink", h, HD_PORT_UP);
	ctr_json(w, hd_ctrs, HD_NCTRS, &h->st, now, false);
	emit_fc(h, w, now);
	ctr_json(w, hd_emu_ctrs, HD_NEMU, h, now, !full);
	flow_table_get_stats(h->flows, &fs);
	jw_u64(w, "flows", fs.flows);
	jw_u64(w, "pass_queue", h->pass.n);
	/* In the time series too: how many flows the ON/OFF periods made. */
	jw_u64(w, "flows_created", fs.created);
	jw_u64(w, "flows_expired", fs.expired);
	if (!full)
		return;
	jw_u64(w, "flows_table_full", fs.full);
	xport_xdp_stats_emit(w, "xdp_host", h->host);
	xport_xdp_stats_emit(w, "xdp_uplink", h->up);
}

static int cmd_counters(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;

	jw_obj_begin(w, NULL);
	jw_str(w, "hostd", h->cfg->name);
	emit_counters(h, w, true, loop_now_ns());
	jw_obj_end(w);
	return 0;
}

/* tx_bps < 0: not measured here (the time series measures it per interval). */
static void emit_flow(const struct hd *h, struct jw *w, const struct flow *f, bool full,
		      double tx_bps, uint64_t now)
{
	const struct hd_flow *x = &h->hf[f->id];
	char key[128];

	key_str(&f->key, key, sizeof(key));
	jw_obj_begin(w, NULL);
	jw_u64(w, "id", f->id);
	jw_str(w, "key", key);
	jw_u64(w, "rate_bps", pacer_rate(h->pacer, f->id));
	if (x->out.by_ipd)
		jw_u64(w, "ipd", x->out.ipd);
	jw_u64(w, "window", x->out.window);
	jw_u64(w, "queue_frames", f->q.frames);
	jw_u64(w, "queue_bytes", f->q.bytes);
	jw_u64(w, "frames_out", f->cnt.frames_out);
	jw_u64(w, "bytes_out", f->cnt.bytes_out);
	jw_u64(w, "pace_lost_ns", hd_pace_lost_ns(h, f));
	jw_u64(w, "drops", f->cnt.drops);
	jw_u64(w, "marks", f->cnt.marks);
	jw_u64(w, "cnp_in", f->cnt.cnp_in);
	jw_u64(w, "ack_in", f->cnt.ack_in);
	jw_u64(w, "cnm_in", f->cnt.cnm_in);
	if (tx_bps >= 0)
		jw_double(w, "tx_bps", tx_bps);
	if (full) {
		jw_u64(w, "gen", f->gen);
		jw_u64(w, "frames_in", f->cnt.frames_in);
		jw_u64(w, "bytes_in", f->cnt.bytes_in);
		jw_u64(w, "drop_bytes", f->cnt.drop_bytes);
		jw_u64(w, "queue_limit", f->q.limit);
		jw_u64(w, "seq_next", f->seq_next);
		jw_str(w, "limited_by", limit_str[x->last_limit]);
		jw_bool(w, "pinned", f->pinned);
		if (x->parked == HD_PARK_WINDOW)
			jw_str(w, "waiting", "window");
		else if (x->parked)
			jw_u64(w, "waiting_prio", x->parked - 1u);
		jw_u64(w, "idle_ms", (now - f->last_seen_ns) / 1000000);
	}
	if (h->rpo->describe) {
		/* The law's own per-flow state (rate, ipd, RPI, APSN, marks, ...). */
		jw_obj_begin(w, "law");
		h->rpo->describe(h->rp, f, w);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

static int cmd_flows(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	uint32_t max = flow_table_id_end(h->flows);
	uint64_t now = loop_now_ns();

	jw_obj_begin(w, NULL);
	jw_str(w, "law", h->rpo->name);
	jw_str(w, "granularity", gran_str[h->cfg->granularity]);
	jw_arr_begin(w, "flows");
	for (uint32_t id = 0; id < max; id++) {
		const struct flow *f = flow_by_id(h->flows, (uint16_t)id);

		if (f)
			emit_flow(h, w, f, true, -1, now);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	return 0;
}

static int cmd_peers(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	uint32_t max = flow_table_id_end(h->peers);
	char mac[18];

	jw_obj_begin(w, NULL);
	jw_str(w, "mode", mode_str[h->cfg->mode]);
	jw_arr_begin(w, "peers");
	for (uint32_t id = 1; id < max; id++) {
		const struct flow *pf = flow_by_id(h->peers, (uint16_t)id);
		const struct hd_peer *p = &h->pr[id];

		if (!pf)
			continue;
		mac_str(p->src, mac);
		jw_obj_begin(w, NULL);
		jw_str(w, "src", mac);
		jw_u64(w, "vlan", p->vid);
		jw_u64(w, "flow", p->flow);
		jw_u64(w, "frames", p->frames);
		jw_u64(w, "marked", p->marked);
		jw_u64(w, "cnp_out", p->cnp_tx);
		jw_u64(w, "ack_out", p->ack_tx);
		jw_u64(w, "next_seq", p->next_seq);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	return 0;
}

/* "FLOW RATE" or "FLOW ipd=N"; FLOW is an id or a destination MAC. */
static int cmd_set_rate(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	char fl[64], val[64];
	struct flow *f = NULL;
	uint64_t rate = 0;
	int64_t ipd = -1;
	uint8_t mac[6];

	if (sscanf(args, "%63s %63s", fl, val) != 2)
		return ctl_errorf(w, -EINVAL, "usage: set-rate FLOW-ID|DST-MAC RATE|ipd=N");
	if (!cfg_parse_mac(fl, mac)) {
		struct flow_key k = { .type = FLOW_KEY_DST };

		memcpy(k.mac, mac, 6);
		f = flow_lookup(h->flows, &k);
	} else {
		char *end;
		unsigned long id = strtoul(fl, &end, 10);

		if (*end || id > UINT16_MAX)
			return ctl_errorf(w, -EINVAL, "\"%s\" is neither a flow id nor a MAC", fl);
		f = flow_by_id(h->flows, (uint16_t)id);
	}
	if (!f)
		return ctl_errorf(w, -ENOENT, "no flow %s (see `flows`)", fl);
	if (!strncmp(val, "ipd=", 4)) {
		char *end;

		ipd = strtoll(val + 4, &end, 10);
		if (*end || ipd < 0 || ipd > 65535)
			return ctl_errorf(w, -EINVAL, "ipd: expected 0..65535, got \"%s\"", val + 4);
	} else if (cfg_parse_rate(val, &rate)) {
		return ctl_errorf(w, -EINVAL, "rate: expected bit/s like 50M, 1G or unlimited, "
				  "got \"%s\"", val);
	}
	/* A request the loop applies before its next pass (hd_apply_requests):
	 * handlers never write the datapath's state themselves. */
	if (h->nreqs == HD_MAX_REQS)
		return ctl_errorf(w, -EBUSY, "%d requests not yet applied; try again", HD_MAX_REQS);
	h->reqs[h->nreqs++] = (struct hd_req){ .type = HD_REQ_SET_RATE, .flow = f->id,
					       .gen = f->gen, .rate_bps = rate, .ipd = ipd };
	jw_obj_begin(w, NULL);
	jw_u64(w, "id", f->id);
	jw_u64(w, "rate_bps", ipd >= 0 ? h->cfg->link_rate / (1 + (uint64_t)ipd) : rate);
	jw_bool(w, "pinned", true);
	jw_obj_end(w);
	return 0;
}

static int cmd_status(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	struct xport *xps[2] = { h->host, h->up };
	int err = xport_check(h->umem, xps, 2);
	struct flow_table_stats fs, ps;
	uint64_t now = loop_now_ns();

	flow_table_get_stats(h->flows, &fs);
	flow_table_get_stats(h->peers, &ps);
	jw_obj_begin(w, NULL);
	jw_str(w, "daemon", "hostd");
	jw_str(w, "name", h->cfg->name);
	jw_str(w, "version", l2cc_version);
	jw_u64(w, "uptime_ms", (now - h->start_ns) / 1000000);
	jw_str(w, "host_port", h->cfg->host_port);
	jw_str(w, "uplink", h->cfg->uplink);
	jw_u64(w, "link_rate_bps", h->cfg->link_rate);
	jw_u64(w, "host_mtu", h->host_mtu);
	if (h->host_mac_known) {
		char mac[18];

		mac_str(h->host_mac, mac);
		jw_str(w, "host_mac", mac);
	}
	jw_u64(w, "max_frame", h->max_frame);
	jw_str(w, "law", h->rpo->name);
	jw_str(w, "granularity", gran_str[h->cfg->granularity]);
	jw_str(w, "mode", mode_str[h->cfg->mode]);
	jw_str(w, "flow_control", fc_str[h->cfg->fc]);
	jw_bool(w, "tag", h->cfg->tag);
	if (h->host && h->up) {
		jw_obj_begin(w, "ports");
		jw_obj_begin(w, "host");
		jw_str(w, "ifname", h->cfg->host_port);
		nic_port_emit(w, h->host, &h->nic[HD_PORT_HOST]);
		jw_obj_end(w);
		jw_obj_begin(w, "uplink");
		jw_str(w, "ifname", h->cfg->uplink);
		nic_port_emit(w, h->up, &h->nic[HD_PORT_UP]);
		jw_obj_end(w);
		jw_obj_end(w);
	}
	jw_u64(w, "flows", fs.flows);
	jw_u64(w, "peers", ps.flows - 1);
	jw_obj_begin(w, "umem");
	jw_u64(w, "frames", h->umem->nframes);
	jw_u64(w, "frame_size", h->umem->frame_size);
	jw_u64(w, "free", h->umem->nfree);
	jw_u64(w, "held", h->umem->held);
	jw_u64(w, "fill", h->host->fill_out + h->up->fill_out);
	jw_u64(w, "tx", h->host->tx_out + h->up->tx_out);
	jw_bool(w, "consistent", err == 0);
	jw_obj_end(w);
	if (h->lnk) {
		const struct lnk_stats *ls = lnk_stats(h->lnk);

		jw_obj_begin(w, "netlink");
		jw_u64(w, "link_events", ls->events);
		jw_u64(w, "resyncs", ls->resyncs);
		jw_obj_end(w);
	}
	jw_u64(w, "loops", h->loops);
	jw_u64(w, "wakeups", h->wakeups);
	jw_obj_end(w);
	return 0;
}

static int cmd_metrics(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	char labels[256], hn[64], key[128], esc[160];
	const struct { const char *port; const struct hd_port_stats *p; bool up; } ports[] = {
		{ "host", &h->hst, h->link_up[HD_PORT_HOST] },
		{ "uplink", &h->ust, h->link_up[HD_PORT_UP] },
	};
	uint32_t max = flow_table_id_end(h->flows), listed = 0;
	uint64_t now = loop_now_ns();
	const void *st = &h->st, *hobj = h;
	const char *lp[1] = { labels };

	prom_label_escape(hn, sizeof(hn), h->cfg->name);
	snprintf(labels, sizeof(labels), "hostd=\"%s\"", hn);
	ctr_prom(w, "l2cc_hostd_", hd_ctrs, HD_NCTRS, &st, lp, 1, now);
	ctr_prom(w, "l2cc_hostd_", hd_emu_ctrs, HD_NEMU, &hobj, lp, 1, now);
	prom_family(w, "l2cc_hostd_paused_seconds_total", "counter",
		    "Time the uplink was held by PAUSE/PFC from the switch");
	prom_sample_double(w, "l2cc_hostd_paused_seconds_total", labels,
			   fc_tx_paused_max_ns(&h->etx, now) / 1e9);
	prom_family(w, "l2cc_hostd_umem_free_frames", "gauge", "Frames in the free pool");
	prom_sample_u64(w, "l2cc_hostd_umem_free_frames", labels, h->umem->nfree);
	prom_loop(w, "l2cc_hostd_", labels, h->loops, h->wakeups);
	prom_build_info(w);

#define PORT_FAMILY(metric, help, field)                                              \
	prom_family(w, metric, "counter", help);                                      \
	for (size_t i = 0; i < 2; i++) {                                              \
		snprintf(labels, sizeof(labels), "hostd=\"%s\",port=\"%s\"", hn,     \
			 ports[i].port);                                              \
		prom_sample_u64(w, metric, labels, ports[i].p->field);                \
	}
	PORT_FAMILY("l2cc_hostd_rx_frames_total", "Frames received", rx_frames)
	PORT_FAMILY("l2cc_hostd_rx_bytes_total", "Bytes received", rx_bytes)
	PORT_FAMILY("l2cc_hostd_tx_frames_total", "Frames sent", tx_frames)
	PORT_FAMILY("l2cc_hostd_tx_bytes_total", "Bytes sent", tx_bytes)
	PORT_FAMILY("l2cc_hostd_link_down_events_total", "Times the port's link went down",
		    link_down_events)
	PORT_FAMILY("l2cc_hostd_link_up_events_total", "Times the port's link came back up",
		    link_up_events)
#undef PORT_FAMILY
	prom_family(w, "l2cc_hostd_port_up", "gauge",
		    "1 if the port's link is up (IFF_UP and IFF_RUNNING), 0 if down");
	for (size_t i = 0; i < 2; i++) {
		snprintf(labels, sizeof(labels), "hostd=\"%s\",port=\"%s\"", hn, ports[i].port);
		prom_sample_u64(w, "l2cc_hostd_port_up", labels, ports[i].up);
	}
	{
		const struct xport *xs[2] = { h->host, h->up };
		static const struct { const char *name, *type, *help; } qf[] = {
			{ "l2cc_hostd_rx_no_socket_frames_total", "counter",
			  "Frames that arrived on a receive queue without an AF_XDP socket "
			  "(rx_queues leaves it out): dropped by the XDP program" },
			{ "l2cc_hostd_rx_queues", "gauge", "Receive queues the port's interface has" },
			{ "l2cc_hostd_rx_queues_served", "gauge",
			  "Receive queues with an AF_XDP socket of this port" },
			{ "l2cc_hostd_tx_kicks_total", "counter",
			  "sendto() calls that kicked the port's AF_XDP TX ring (copy mode "
			  "sends at most 32 frames per call)" },
		};

		for (size_t m = 0; m < 4; m++) {
			prom_family(w, qf[m].name, qf[m].type, qf[m].help);
			for (size_t i = 0; i < 2; i++) {
				uint64_t v = !xs[i] ? 0 : m == 0 ? xport_no_socket(xs[i])
						      : m == 1 ? xs[i]->nq_if
						      : m == 2 ? xs[i]->nq : xs[i]->kicks;

				snprintf(labels, sizeof(labels), "hostd=\"%s\",port=\"%s\"", hn,
					 ports[i].port);
				prom_sample_u64(w, qf[m].name, labels, v);
			}
		}
	}
	if (h->host && h->up) {
		struct xport *xp[2] = { h->host, h->up };

		prom_family(w, "l2cc_hostd_port_info", "gauge",
			    "Always 1: how the port's socket was set up at start (XDP attach mode, "
			    "zero-copy) and what its NIC does with 802.3x PAUSE/PFC");
		for (size_t i = 0; i < 2; i++) {
			char il[512];

			snprintf(labels, sizeof(labels), "hostd=\"%s\",port=\"%s\"", hn, ports[i].port);
			nic_port_labels(il, sizeof(il), labels, xp[i], &h->nic[i]);
			prom_sample_u64(w, "l2cc_hostd_port_info", il, 1);
		}
	}
	prom_family(w, "l2cc_hostd_drops_total", "counter", "Frames dropped, by port and reason");
	for (size_t i = 0; i < 2; i++)
		for (int r = 0; r < HD_DROP_MAX; r++) {
			snprintf(labels, sizeof(labels), "hostd=\"%s\",port=\"%s\",reason=\"%s\"",
				 hn, ports[i].port, hd_drop_names[r]);
			prom_sample_u64(w, "l2cc_hostd_drops_total", labels, ports[i].p->drop[r]);
		}

	/* Per flow, bounded: the first HD_TS_MAX_FLOWS flows in use. */
	static const struct { const char *name, *type, *help; } ff[] = {
		{ "l2cc_hostd_flow_rate_bytes_per_second", "gauge",
		  "Pacing rate of the flow, bytes (of frames on the wire) per second; 0 = unpaced" },
		{ "l2cc_hostd_flow_queue_bytes", "gauge", "Bytes queued at the host edge" },
		{ "l2cc_hostd_flow_tx_bytes_total", "counter", "Bytes sent toward the fabric" },
		{ "l2cc_hostd_flow_drops_total", "counter", "Frames dropped at the host edge" },
		{ "l2cc_hostd_flow_marks_total", "counter", "Congestion marks learnt of (CNP, ACK)" },
		{ "l2cc_hostd_flow_cnp_total", "counter", "CNPs received for the flow" },
	};
	for (size_t m = 0; m < sizeof(ff) / sizeof(ff[0]); m++) {
		prom_family(w, ff[m].name, ff[m].type, ff[m].help);
		listed = 0;
		for (uint32_t id = 0; id < max && listed < HD_TS_MAX_FLOWS; id++) {
			const struct flow *f = flow_by_id(h->flows, (uint16_t)id);
			uint64_t v;

			if (!f)
				continue;
			listed++;
			key_str(&f->key, key, sizeof(key));
			prom_label_escape(esc, sizeof(esc), key);
			snprintf(labels, sizeof(labels), "hostd=\"%s\",flow=\"%u\",key=\"%s\"", hn,
				 id, esc);
			v = m == 0 ? pacer_rate(h->pacer, id) / 8 : m == 1 ? f->q.bytes
			  : m == 2 ? f->cnt.bytes_out : m == 3 ? f->cnt.drops
			  : m == 4 ? f->cnt.marks : f->cnt.cnp_in;
			prom_sample_u64(w, ff[m].name, labels, v);
		}
	}
	/* The law's own per-flow gauges (a current and a target rate, ...). */
	for (size_t m = 0; m < h->rpo->ngauges; m++) {
		const struct rp_gauge *g = &h->rpo->gauges[m];
		char name[128];

		snprintf(name, sizeof(name), "l2cc_hostd_%s_%s", h->rpo->name, g->metric);
		prom_family(w, name, "gauge", g->help);
		listed = 0;
		for (uint32_t id = 0; id < max && listed < HD_TS_MAX_FLOWS; id++) {
			const struct flow *f = flow_by_id(h->flows, (uint16_t)id);

			if (!f)
				continue;
			listed++;
			key_str(&f->key, key, sizeof(key));
			prom_label_escape(esc, sizeof(esc), key);
			snprintf(labels, sizeof(labels), "hostd=\"%s\",flow=\"%u\",key=\"%s\"", hn,
				 id, esc);
			prom_sample_double(w, name, labels, g->get(h->rp, f));
		}
	}
	return 0;
}

void hd_stats_tick(struct hd *h)
{
	uint32_t max = flow_table_id_end(h->flows), listed = 0, omitted = 0;
	double dt = (h->now - h->last_stats_ns) / 1e9;
	struct timespec rt;
	struct jw w;

	if (!h->ts)
		return;
	clock_gettime(CLOCK_REALTIME, &rt);
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_double(&w, "t", rt.tv_sec + rt.tv_nsec / 1e9);
	jw_str(&w, "daemon", "hostd");
	jw_str(&w, "name", h->cfg->name);
	emit_counters(h, &w, false, h->now);
	/* The flows that were active in the interval (sent, or have a queue),
	 * with their sending rate over it as measured: what a plot of
	 * per-flow rate needs without differencing. Every flow's mark moves
	 * on each line, listed or not, so a rate always covers one interval. */
	jw_arr_begin(&w, "flow");
	for (uint32_t id = 0; id < max; id++) {
		struct flow *f = flow_by_id(h->flows, (uint16_t)id);
		struct hd_flow *x = &h->hf[id];
		uint64_t sent;

		if (!f)
			continue;
		sent = f->cnt.bytes_out >= x->rate_bytes ? f->cnt.bytes_out - x->rate_bytes : 0;
		x->rate_bytes = f->cnt.bytes_out;
		if (!sent && !f->q.frames)
			continue;
		if (listed == HD_TS_MAX_FLOWS) {
			omitted++;
			continue;
		}
		listed++;
		emit_flow(h, &w, f, false, dt > 0 ? sent * 8 / dt : 0, h->now);
	}
	jw_arr_end(&w);
	jw_u64(&w, "flows_omitted", omitted);
	jw_obj_end(&w);
	h->last_stats_ns = h->now;
	if (!w.err && tseries_write_line(h->ts, jw_str_get(&w)))
		pr_warn_rl("time series %s: write failed\n", h->cfg->stats_file);
	jw_free(&w);
}

/* `reload`: what SIGHUP does, the outcome in the reply (a refusal's reason
 * too, which SIGHUP leaves in the log only). */
static int cmd_reload(struct jw *w, const char *args, void *ctx)
{
	struct hd *h = ctx;
	char why[1024] = "";

	if (*args)
		return ctl_errorf(w, -EINVAL, "reload takes no arguments");
	if (!h->reload)
		return ctl_errorf(w, -EOPNOTSUPP, "this hostd cannot reload");
	return dctl_reload_reply(w, h->reload(h, why, sizeof(why)), why);
}

static const struct dctl_cmd hd_cmds[] = {
	{ "status", CTL_READS, "daemon, uptime, settings and UMEM frame accounting", cmd_status },
	{ "counters", CTL_READS, "port, flow control and notification counters", cmd_counters },
	{ "flows", CTL_READS, "flows with rate, ipd, queue, frames, marks, CNPs/ACKs in", cmd_flows },
	{ "peers", CTL_READS, "remote senders' flows we notify: frames, marks, CNPs/ACKs out", cmd_peers },
	{ "set-rate", CTL_CHANGES, "FLOW-ID|DST-MAC RATE|ipd=N: pin a flow's rate", cmd_set_rate },
	{ "metrics", CTL_READS, "Prometheus text exposition", cmd_metrics },
	{ "reload", CTL_CHANGES, "re-read the configuration as SIGHUP does; the reply says what "
	  "changed or why nothing did", cmd_reload },
};

int hd_ctl_init(struct hd *h)
{
	const struct dctl_cfg c = {
		.ctl_socket = h->cfg->ctl_socket, .metrics_listen = h->cfg->metrics_listen,
		.stats_file = h->cfg->stats_file, .stats_file_max = h->cfg->stats_file_max,
		.cmds = hd_cmds,
		.ncmds = sizeof(hd_cmds) / sizeof(hd_cmds[0]), .ctx = h,
	};

	h->last_stats_ns = h->now;
	return dctl_open(&c, h->loop, &h->ctl, &h->ts);
}

void hd_ctl_fini(struct hd *h)
{
	dctl_close(&h->ctl, &h->ts);
}
