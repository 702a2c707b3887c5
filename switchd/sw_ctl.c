// SPDX-License-Identifier: BSD-2-Clause
/*
 * switchd's control socket commands, Prometheus metrics and JSON-lines time
 * series. All of it runs on the control path, between two datapath passes.
 */
#define LOG_SUBSYS "ctl"
#include "switch_private.h"
#include "ctl.h"
#include "ctrs.h"
#include "dctl.h"
#include "l2cc_shared.h"
#include "json.h"
#include "link.h"
#include "log.h"
#include "loop.h"
#include "prom.h"
#include "tseries.h"
#include "version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

static const char *const fc_str[] = { "none", "pause", "pfc", "credit" };
static const char *const role_str[] = { "host", "switch" };

static void mac_str(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* ---- per-port counters, declared once (daemon/ctrs.h) --------------------- */

#define PORT_GET(fn, expr)                                                        \
	static uint64_t fn(const void *obj, uint64_t now)                         \
	{                                                                         \
		const struct sw_port *p = obj;                                    \
		(void)now;                                                        \
		return (expr);                                                    \
	}

static uint64_t port_drops(const struct sw_port *p)
{
	uint64_t n = 0;

	for (int i = 0; i < SW_DROP_MAX; i++)
		n += p->st.drop[i];
	return n;
}

/* A counter of the port's XDP fast path (forwarding = xdp), from its
 * per-CPU map: the control path only. */
static uint64_t port_fwd_stat(const struct sw_port *p, int k)
{
	uint64_t st[L2CC_FWD_STAT_MAX];

	if (!p->xp || xport_fwd_stats(p->xp, st))
		return 0;
	return st[k];
}

PORT_GET(g_rx_frames, p->st.rx_frames)
PORT_GET(g_rx_bytes, p->st.rx_bytes)
PORT_GET(g_tx_frames, p->st.tx_frames)
PORT_GET(g_tx_bytes, p->st.tx_bytes)
PORT_GET(g_drops, port_drops(p))
PORT_GET(g_pause_tx, p->frx.st.pause_tx)
PORT_GET(g_pause_rx, p->st.pause_rx)
PORT_GET(g_pfc_tx, p->frx.st.pfc_tx)
PORT_GET(g_pfc_rx, p->st.pfc_rx)
PORT_GET(g_credit_tx, p->frx.st.credit_tx)
PORT_GET(g_credit_rx, p->st.credit_rx)
PORT_GET(g_fc_ignored, p->st.fc_ignored)
/* PAUSE stops all priorities at once: the longest, not the sum. */
PORT_GET(g_paused, fc_tx_paused_max_ns(&p->etx, now))
PORT_GET(g_credit_stall, sw_credit_stall_ns(p, now))
PORT_GET(g_wire_lost, p->wc.lost_ns)
PORT_GET(g_wire_late, p->wc.late_events)
PORT_GET(g_wire_lost_max, p->wc.lost_max_ns)
PORT_GET(g_voq, p->sw->voq->out_total[p->idx])
PORT_GET(g_xoff_mask, p->frx.xoff_mask)
PORT_GET(g_marked, p->st.marked)
PORT_GET(g_mark_untagged, p->st.mark_untagged)
PORT_GET(g_mark_pending, p->mark_pending)
PORT_GET(g_full_events, p->st.buffer_full_events)
PORT_GET(g_cpu_tx, p->st.cpu_tx)
PORT_GET(g_cpu_drops, p->st.cpu_drops)
PORT_GET(g_flood_tx, p->st.flood_tx)
PORT_GET(g_mac_moves, p->st.mac_moves)
PORT_GET(g_macs, p->sw->fdb->learned[p->idx])
PORT_GET(g_flood_refused, p->st.flood_refused)
PORT_GET(g_flood_waiting, p->flood_waiting)
PORT_GET(g_flood_held, p->flood_held)
PORT_GET(g_storms, p->st.pause_storms)
PORT_GET(g_storm_restores, p->st.pause_storm_restores)
PORT_GET(g_storm_drops, p->st.pause_storm_drops)
PORT_GET(g_storm_mask, p->wd_storm)
PORT_GET(g_rx_holds, p->st.rx_holds)
PORT_GET(g_ctrl_tx, p->st.ctrl_tx_frames)
PORT_GET(g_ctrl_rx, p->st.ctrl_rx_frames)
PORT_GET(g_flood_unsent, p->st.flood_unsent)
PORT_GET(g_link_up, p->link_up)
PORT_GET(g_link_down_events, p->st.link_down_events)
PORT_GET(g_link_up_events, p->st.link_up_events)
PORT_GET(g_link_down_drops, p->st.link_down_drops)
PORT_GET(g_fdb_flushed, p->st.fdb_flushed)
/* The XDP program's count, read from its map: the control path only. */
PORT_GET(g_no_socket, p->xp ? xport_no_socket(p->xp) : 0)
PORT_GET(g_rx_queues, p->xp ? p->xp->nq_if : 0)
PORT_GET(g_tx_kicks, p->xp ? p->xp->kicks : 0)
PORT_GET(g_xdp_fwd, port_fwd_stat(p, L2CC_FWD_FORWARDED))
PORT_GET(g_xdp_fwd_daemon, port_fwd_stat(p, L2CC_FWD_DAEMON) + port_fwd_stat(p, L2CC_FWD_NO_SLOT))
PORT_GET(g_xdp_redirect_errors, p->st.xdp_redirect_errors)
PORT_GET(g_rx_queues_served, p->xp ? p->xp->nq : 0)

static const struct ctr port_ctrs[] = {
	CTR_GET("link_up", "port_up", CTR_GAUGE, CTR_TS,
	  "1 if the port's link is up (IFF_UP and IFF_RUNNING), 0 if down", g_link_up),
	CTR_GET("link_down_events", "link_down_events_total", CTR_COUNTER, CTR_TS,
	  "Times the port's link went down", g_link_down_events),
	CTR_GET("link_up_events", "link_up_events_total", CTR_COUNTER, CTR_TS,
	  "Times the port's link came back up", g_link_up_events),
	CTR_GET("link_down_drops", "link_down_drops_total", CTR_COUNTER, CTR_TS,
	  "Frames queued for this output dropped as its link went down (counted by input in "
	  "drops{reason=\"link_down\"})", g_link_down_drops),
	CTR_GET("fdb_flushed", "fdb_flushed_total", CTR_COUNTER, 0,
	  "Addresses learnt on this port forgotten as its link went down", g_fdb_flushed),
	CTR_GET("rx_frames", "rx_frames_total", CTR_COUNTER, CTR_TS,
	  "Frames received (that reached switchd or its XDP control path), data and control",
	  g_rx_frames),
	CTR_GET("ctrl_rx_frames", "ctrl_rx_frames_total", CTR_COUNTER, CTR_TS,
	  "Well-formed PAUSE, PFC and CREDIT frames received and consumed (applied, ignored, "
	  "or void on a link that is down; in rx_frames)", g_ctrl_rx),
	CTR_GET("no_socket", "rx_no_socket_frames_total", CTR_COUNTER, CTR_TS,
	  "Frames that arrived on a receive queue of the interface without an AF_XDP socket "
	  "(queue or rx_queues leaves it out): dropped by the XDP program", g_no_socket),
	CTR_GET("rx_queues", "rx_queues", CTR_GAUGE, 0,
	  "Receive queues the port's interface has", g_rx_queues),
	CTR_GET("rx_queues_served", "rx_queues_served", CTR_GAUGE, 0,
	  "Receive queues with an AF_XDP socket of this port", g_rx_queues_served),
	CTR_GET("rx_bytes", "rx_bytes_total", CTR_COUNTER, CTR_TS, "Bytes received (no FCS)", g_rx_bytes),
	CTR_GET("xdp_forwarded", "xdp_forwarded_frames_total", CTR_COUNTER, CTR_TS,
	  "Frames received on this port and forwarded in XDP without reaching switchd "
	  "(forwarding = xdp; not in rx_frames, nor in the output's tx_frames)", g_xdp_fwd),
	CTR_GET("xdp_to_daemon", "xdp_to_daemon_frames_total", CTR_COUNTER, 0,
	  "Frames the XDP fast path of this port left for switchd (unknown or group "
	  "destination, new source, control frame, ...; forwarding = xdp)", g_xdp_fwd_daemon),
	CTR_GET("xdp_redirect_errors", "xdp_redirect_errors_total", CTR_COUNTER, CTR_TS,
	  "Frames redirected to this output in XDP that the kernel could not send (the veth "
	  "peer's ring full; forwarding = xdp)",
	  g_xdp_redirect_errors),
	CTR_GET("tx_frames", "tx_frames_total", CTR_COUNTER, CTR_TS, "Frames sent, data and control",
		g_tx_frames),
	CTR_GET("tx_bytes", "tx_bytes_total", CTR_COUNTER, CTR_TS, "Bytes sent (no FCS)", g_tx_bytes),
	CTR_GET("tx_kicks", "tx_kicks_total", CTR_COUNTER, 0,
	  "sendto() calls that kicked the port's AF_XDP TX ring (copy mode sends at most 32 "
	  "frames per call)", g_tx_kicks),
	/* By reason in the metrics: l2cc_switch_drops_total{reason}. */
	CTR_GET("drops", NULL, CTR_COUNTER, CTR_TS, "Frames dropped", g_drops),
	CTR_GET("pause_tx", "pause_tx_total", CTR_COUNTER, CTR_TS, "802.3x PAUSE frames sent",
		g_pause_tx),
	CTR_GET("pause_rx", "pause_rx_total", CTR_COUNTER, CTR_TS, "802.3x PAUSE frames received",
		g_pause_rx),
	CTR_GET("pfc_tx", "pfc_tx_total", CTR_COUNTER, CTR_TS, "PFC frames sent", g_pfc_tx),
	CTR_GET("pfc_rx", "pfc_rx_total", CTR_COUNTER, CTR_TS, "PFC frames received", g_pfc_rx),
	CTR_GET("credit_tx", "credit_tx_total", CTR_COUNTER, CTR_TS, "Credit updates sent", g_credit_tx),
	CTR_GET("credit_rx", "credit_rx_total", CTR_COUNTER, CTR_TS, "Credit updates received",
		g_credit_rx),
	CTR_GET("fc_ignored", "fc_ignored_total", CTR_COUNTER, CTR_TS,
	  "PAUSE/PFC/credits received on a port not configured for them", g_fc_ignored),
	CTR_GET("paused_ns", "paused_seconds_total", CTR_COUNTER, CTR_TS | CTR_NS,
	  "Time the port's egress was held by PAUSE/PFC from its peer", g_paused),
	CTR_GET("credit_stall_ns", "credit_stall_seconds_total", CTR_COUNTER, CTR_TS | CTR_NS,
	  "Time the port had data queued and no credits to send any of it", g_credit_stall),
	/* The emulation's own failure: a run where these grew did not get
	 * the link it asked for (docs/switchd.md, Wire time lost). */
	CTR_GET("wire_lost_ns", "wire_lost_seconds_total", CTR_COUNTER, CTR_TS | CTR_NS,
	  "Wire time lost: time the output had frames waiting for its emulated wire, but "
	  "switchd woke too late (beyond the burst) to send them; the link carried less than "
	  "its rate", g_wire_lost),
	CTR_GET("wire_late_events", "wire_late_events_total", CTR_COUNTER, CTR_TS,
	  "Passes that found the output backlogged and its wire clock late beyond the burst "
	  "(each added to wire_lost)", g_wire_late),
	CTR_GET("wire_lost_max_ns", "wire_lost_max_seconds", CTR_GAUGE, CTR_NS,
	  "The largest single loss of wire time on this output", g_wire_lost_max),
	CTR_GET("voq_frames", "voq_frames", CTR_GAUGE, CTR_TS, "Frames queued for this output",
		g_voq),
	CTR_GET("xoff_mask", NULL, CTR_GAUGE, CTR_TS, "Priorities held paused upstream", g_xoff_mask),
	CTR_GET("pause_storms", "pause_storms_total", CTR_COUNTER, CTR_TS,
	  "Pause storms the watchdog found on this output (a priority paused with frames waiting "
	  "for pause_watchdog)", g_storms),
	CTR_GET("pause_storm_restores", "pause_storm_restores_total", CTR_COUNTER, CTR_TS,
	  "Pause storms over (no pause for pause_watchdog_restore)", g_storm_restores),
	CTR_GET("pause_storm_drops", "pause_storm_drops_total", CTR_COUNTER, CTR_TS,
	  "Frames for this output dropped by the pause watchdog (action drop)", g_storm_drops),
	CTR_GET("pause_storm_mask", NULL, CTR_GAUGE, CTR_TS,
	  "Priorities of this output in a pause storm now", g_storm_mask),
	CTR_GET("marked", "marked_total", CTR_COUNTER, CTR_TS, "Data frames sent with FECN set",
		g_marked),
	CTR_GET("mark_untagged", "mark_untagged_total", CTR_COUNTER, CTR_TS,
	  "Frames that would have been marked but carry no l2cc tag", g_mark_untagged),
	CTR_GET("mark_pending", "mark_pending_frames", CTR_GAUGE, CTR_TS,
	  "Marks set by hand still to set on this output's next tagged frames", g_mark_pending),
	CTR_GET("buffer_full_events", "buffer_full_events_total", CTR_COUNTER, CTR_TS,
	  "Times this port's input buffer became full", g_full_events),
	CTR_GET("cpu_tx", "cpu_tx_total", CTR_COUNTER, CTR_TS,
	  "Frames the CPU pseudo-port queued for this output", g_cpu_tx),
	CTR_GET("cpu_drops", "cpu_drops_total", CTR_COUNTER, CTR_TS,
	  "CPU-originated frames for this output refused (cpu_share, queue or pool full)",
		g_cpu_drops),
	CTR_GET("flood_tx", "flood_tx_total", CTR_COUNTER, 0,
	  "Flood copies made of frames received on this port", g_flood_tx),
	CTR_GET("flood_unsent", "flood_unsent_frames_total", CTR_COUNTER, 0,
	  "Flooded frames received on this port that no output took (each refused its copy: "
	  "flood_limit, reserve): freed unsent", g_flood_unsent),
	CTR_GET("flood_refused", "flood_refused_total", CTR_COUNTER, CTR_TS,
	  "Flood copies this output refused: flood_queue copies were waiting for it", g_flood_refused),
	CTR_GET("flood_waiting", "flood_waiting_frames", CTR_GAUGE, CTR_TS,
	  "Flood copies waiting for this output", g_flood_waiting),
	CTR_GET("flood_held", "flood_held_frames", CTR_GAUGE, CTR_TS,
	  "Flooded frames this input buffer holds until their last copy leaves", g_flood_held),
	CTR_GET("mac_moves", "mac_moves_total", CTR_COUNTER, CTR_TS,
	  "Learned addresses that moved to this port from another", g_mac_moves),
	CTR_GET("macs_learned", "macs_learned", CTR_GAUGE, CTR_TS,
	  "Addresses the FDB has learned on this port (static entries aside)", g_macs),
	CTR_GET("rx_holds", "rx_holds_total", CTR_COUNTER, 0,
	  "Passes that left frames in the RX ring (input buffer full)", g_rx_holds),
	CTR_GET("ctrl_tx_frames", "ctrl_tx_frames_total", CTR_COUNTER, CTR_TS,
	  "Link-local control frames built and sent (PAUSE, PFC, CREDIT; in tx_frames)", g_ctrl_tx),
};
#define N_PORT_CTRS (sizeof(port_ctrs) / sizeof(port_ctrs[0]))

static void emit_u64_arr(struct jw *w, const char *key, const uint64_t *v, int n)
{
	jw_arr_begin(w, key);
	for (int i = 0; i < n; i++)
		jw_u64(w, NULL, v[i]);
	jw_arr_end(w);
}

/* The backlog of p as an output, per priority: the sum of the VOQs that
 * feed it (the "queue" of QCN, BCN, RED and IB CC). */
static void port_outq(const struct sw_port *p, uint64_t bytes[L2CC_NPRIO],
		      uint64_t frames[L2CC_NPRIO])
{
	const size_t base = (size_t)p->idx * VOQ_NPRIO;

	for (int i = 0; i < L2CC_NPRIO; i++) {
		bytes[i] = p->sw->voq->out_bytes[base + i];
		frames[i] = p->sw->voq->out_frames[base + i];
	}
}

/* The counters of one port: `counters` (full) and the time series. */
static void emit_port_counters(const struct sw_port *p, struct jw *w, bool full, uint64_t now)
{
	uint64_t paused[L2CC_NPRIO], ob[L2CC_NPRIO], of[L2CC_NPRIO];

	for (int i = 0; i < L2CC_NPRIO; i++)
		paused[i] = fc_tx_paused_ns(&p->etx, i, now);
	port_outq(p, ob, of);
	ctr_json(w, port_ctrs, N_PORT_CTRS, p, now, !full);
	jw_obj_begin(w, "drop");
	for (int i = 0; i < SW_DROP_MAX; i++)
		jw_u64(w, sw_drop_names[i], p->st.drop[i]);
	jw_obj_end(w);
	emit_u64_arr(w, "paused_ns_prio", paused, L2CC_NPRIO);
	emit_u64_arr(w, "buffer", p->occ, L2CC_NPRIO);
	emit_u64_arr(w, "buffer_peak", p->peak, L2CC_NPRIO);
	emit_u64_arr(w, "outq_bytes", ob, L2CC_NPRIO);
	emit_u64_arr(w, "outq_frames", of, L2CC_NPRIO);
	if (p->cpo) {
		const char *st = p->cpo->port_stats(p->cp, p->idx);

		for (size_t k = 0; k < p->cpo->nctrs; k++) {
			const struct cp_ctr *ct = &p->cpo->ctrs[k];
			const uint64_t *v = (const uint64_t *)(st + ct->off);
			char name[96];
			uint64_t sum = 0;

			if (!(ct->kind & CP_PER_PRIO)) {
				jw_u64(w, ct->name, *v);
				continue;
			}
			for (int i = 0; i < L2CC_NPRIO; i++)
				sum += v[i];
			jw_u64(w, ct->name, sum);
			snprintf(name, sizeof(name), "%s_prio", ct->name);
			emit_u64_arr(w, name, v, L2CC_NPRIO);
		}
	}
	if (!full)
		return;
	jw_arr_begin(w, "prio");
	for (int i = 0; i < L2CC_NPRIO; i++) {
		const struct sw_prio_stats *ps = &p->st.prio[i];

		jw_obj_begin(w, NULL);
		jw_u64(w, "rx_frames", ps->rx_frames);
		jw_u64(w, "rx_bytes", ps->rx_bytes);
		jw_u64(w, "tx_frames", ps->tx_frames);
		jw_u64(w, "tx_bytes", ps->tx_bytes);
		jw_u64(w, "drop_buffer_full", ps->drop_buffer_full);
		jw_u64(w, "pfc_tx", p->frx.st.pfc_tx_prio[i]);
		jw_u64(w, "pfc_rx", ps->pfc_rx);
		jw_u64(w, "credit_blocked", ps->credit_blocked);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	xport_xdp_stats_emit(w, "xdp", p->xp);
}

/* The CPU pseudo-port (sw_emit): what it queued, its queued frames that
 * were dropped (by reason, as a port's drop), and what it refused before
 * queueing (no frame of the account). */
static void emit_cpu_port(const struct sw *s, struct jw *w)
{
	static const enum sw_drop refusals[] = {
		SW_DROP_MALFORMED, SW_DROP_FILTERED, SW_DROP_NO_FRAME,
	};
	const struct sw_port *cpu = &s->ports[s->nports];

	jw_obj_begin(w, "cpu_port");
	jw_u64(w, "rx_frames", cpu->st.rx_frames);
	jw_obj_begin(w, "drop");
	for (int i = 0; i < SW_DROP_MAX; i++)
		jw_u64(w, sw_drop_names[i], cpu->st.drop[i]);
	jw_obj_end(w);
	jw_obj_begin(w, "refused");
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		jw_u64(w, sw_drop_names[refusals[i]], s->cpu_refused[refusals[i]]);
	jw_obj_end(w);
	jw_obj_end(w);
}

static int cmd_counters(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	uint64_t now = loop_now_ns();

	if (args && *args) {
		bool found = false;

		for (int i = 0; i < s->nports; i++)
			found |= !strcmp(args, s->ports[i].cfg->name);
		if (!found)
			return ctl_errorf(w, -ENOENT, "no port \"%s\"", args);
	}
	jw_obj_begin(w, NULL);
	jw_str(w, "switch", s->cfg->name);
	jw_obj_begin(w, "ports");
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		if (args && *args && strcmp(args, p->cfg->name))
			continue;
		jw_obj_begin(w, p->cfg->name);
		emit_port_counters(p, w, true, now);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	if (!args || !*args)
		emit_cpu_port(s, w);
	jw_obj_end(w);
	return 0;
}

static int cmd_ports(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	uint64_t now = loop_now_ns();
	char mac[18], qs[192];

	jw_obj_begin(w, NULL);
	jw_arr_begin(w, "ports");
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];
		uint8_t paused = fc_tx_paused_mask(&p->etx, now);

		mac_str(p->xp->mac, mac);
		jw_obj_begin(w, NULL);
		jw_str(w, "name", p->cfg->name);
		jw_str(w, "ifname", p->cfg->ifname);
		jw_u64(w, "ifindex", p->xp->ifindex);
		jw_str(w, "link", p->link_up ? "up" : "down");
		jw_str(w, "operstate", lnk_operstate_name(p->operstate));
		jw_str(w, "mac", mac);
		/* The lowest served: the one it transmits on. */
		jw_u64(w, "queue", p->xp->nq ? p->xp->q[0].queue : 0);
		xport_queues_fmt(p->xp->qmask, qs, sizeof(qs));
		jw_u64(w, "rx_queues", p->xp->nq_if);
		jw_str(w, "rx_queues_served", qs);
		jw_u64(w, "no_socket", xport_no_socket(p->xp));
		nic_port_emit(w, p->xp, &p->nic);
		jw_u64(w, "rate_bps", p->cfg->rate);
		jw_u64(w, "burst_ns", p->wc.burst_ns);
		jw_u64(w, "mtu", p->max_frame - L2CC_ETH_HLEN - 2 * L2CC_VLAN_HLEN);
		jw_str(w, "flow_control", fc_str[p->cfg->fc]);
		jw_str(w, "role", role_str[p->cfg->role]);
		jw_str(w, "buffer_unit", p->unit_frames ? "frames" : "bytes");
		jw_u64(w, "buffer", p->cap);
		jw_u64(w, "xoff", p->frx.cfg.xoff);
		jw_u64(w, "xon", p->frx.cfg.xon);
		jw_u64(w, "paused_mask", paused);
		jw_u64(w, "xoff_mask", p->frx.xoff_mask);
		jw_u64(w, "pause_storm_mask", p->wd_storm);
		jw_str(w, "marking", p->cpo ? p->cpo->name : "none");
		/* xdp-refused: its veth peer has no XDP program, its frames take the daemon. */
		jw_str(w, "forwarding", !p->fwd_xdp ? "daemon" : p->fwd_refused ? "xdp-refused" : "xdp");
		if (p->cfg->fc == FC_CREDIT) {
			int64_t avail[L2CC_NPRIO];

			jw_bool(w, "credit_granted", p->etx.credit_have);
			jw_arr_begin(w, "credit_available");
			for (int k = 0; k < L2CC_NPRIO; k++) {
				avail[k] = (int64_t)(p->etx.credit_limit[k] - p->etx.credit_sent[k]);
				jw_i64(w, NULL, p->etx.credit_have ? avail[k] : 0);
			}
			jw_arr_end(w);
		}
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	return 0;
}

static int cmd_fdb(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	const struct fdb *f = s->fdb;
	uint64_t now = loop_now_ns();
	char mac[18];

	jw_obj_begin(w, NULL);
	jw_u64(w, "count", f->count);
	jw_u64(w, "max", f->max_entries);
	jw_u64(w, "learn_full", f->learn_full);
	jw_u64(w, "moves", f->moves);
	jw_u64(w, "limit_refused", f->limit_refused);
	jw_u64(w, "move_refused", f->move_refused);
	jw_u64(w, "static_refused", f->static_refused);
	jw_arr_begin(w, "entries");
	for (uint32_t i = 0; i <= f->mask; i++) {
		const struct fdb_entry *e = &f->tab[i];
		uint8_t m[6];

		if (!e->key)
			continue;
		if (!e->is_static && f->aging_ns && now - e->last_seen_ns > f->aging_ns)
			continue;
		fdb_key_mac(e->key, m);
		mac_str(m, mac);
		jw_obj_begin(w, NULL);
		jw_str(w, "mac", mac);
		jw_u64(w, "vlan", fdb_key_vid(e->key));
		jw_str(w, "port", s->ports[e->port].cfg->name);
		jw_bool(w, "static", e->is_static);
		if (!e->is_static)
			jw_u64(w, "age_ms", (now - e->last_seen_ns) / 1000000);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	return 0;
}

static int cmd_queues(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	const struct voq *v = s->voq;

	jw_obj_begin(w, NULL);
	jw_arr_begin(w, "outputs");
	for (int o = 0; o < s->nports; o++) {
		jw_obj_begin(w, NULL);
		jw_str(w, "port", s->ports[o].cfg->name);
		jw_u64(w, "frames", v->out_total[o]);
		jw_arr_begin(w, "voqs");
		for (int in = 0; in < s->nports; in++)
			for (int p = 0; p < L2CC_NPRIO; p++) {
				const struct voq_q *q = voq_q(v, in, o, p);

				if (!q->frames)
					continue;
				jw_obj_begin(w, NULL);
				jw_str(w, "input", s->ports[in].cfg->name);
				jw_u64(w, "prio", p);
				jw_u64(w, "frames", q->frames);
				jw_u64(w, "bytes", q->bytes);
				jw_obj_end(w);
			}
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_arr_begin(w, "inputs");
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		jw_obj_begin(w, NULL);
		jw_str(w, "port", p->cfg->name);
		jw_str(w, "unit", p->unit_frames ? "frames" : "bytes");
		jw_u64(w, "capacity", p->cap);
		emit_u64_arr(w, "occupancy", p->occ, L2CC_NPRIO);
		emit_u64_arr(w, "peak", p->peak, L2CC_NPRIO);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_obj_end(w);
	return 0;
}

/* "PORT N": set FECN on the next N tagged data frames sent on PORT. A
 * test and debugging aid: congestion marking by hand, end to end. Like
 * every change asked for here it is a request the loop applies before its
 * next pass (sw_apply_requests), not a write into the datapath. */
static int cmd_mark(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	char port[32];
	unsigned long long n;

	if (sscanf(args, "%31s %llu", port, &n) != 2)
		return ctl_errorf(w, -EINVAL, "usage: mark PORT N");
	for (int i = 0; i < s->nports; i++) {
		struct sw_port *p = &s->ports[i];

		if (strcmp(p->cfg->name, port))
			continue;
		if (s->nreqs == SW_MAX_REQS)
			return ctl_errorf(w, -EBUSY, "%d requests not yet applied; try again",
					  SW_MAX_REQS);
		s->reqs[s->nreqs++] = (struct sw_req){ .type = SW_REQ_MARK, .port = (uint32_t)i,
						       .n = n };
		jw_obj_begin(w, NULL);
		jw_str(w, "port", port);
		jw_u64(w, "mark_pending", n);
		jw_u64(w, "marked", p->st.marked);
		jw_obj_end(w);
		return 0;
	}
	return ctl_errorf(w, -ENOENT, "no port \"%s\"", port);
}

/* `cp PORT ARGS...`: a command for the port's congestion point (its ctl). */
static int cmd_cp(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	char port[32], err[160] = "";
	const struct cp_ops *ops;
	int n = 0, r;

	if (sscanf(args, "%31s %n", port, &n) != 1 || !n)
		return ctl_errorf(w, -EINVAL, "usage: cp PORT ARGS...");
	for (int i = 0; i < s->nports; i++) {
		if (strcmp(s->ports[i].cfg->name, port))
			continue;
		ops = s->ports[i].cpo;
		if (!ops || !ops->ctl)
			return ctl_errorf(w, -EOPNOTSUPP, "port \"%s\": marking %s takes no commands",
					  port, ops ? ops->name : "none");
		for (int k = 0; k < s->ncps; k++) {
			if (s->cps[k].ops != ops)
				continue;
			jw_obj_begin(w, NULL);
			jw_str(w, "port", port);
			jw_str(w, "marking", ops->name);
			r = ops->ctl(s->cps[k].cp, (uint32_t)i, args + n, w, err, sizeof(err));
			jw_obj_end(w);
			if (r)
				return ctl_errorf(w, r, "port \"%s\": %s", port, err);
			return 0;
		}
	}
	return ctl_errorf(w, -ENOENT, "no port \"%s\"", port);
}

static int cmd_status(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	uint64_t fill = 0, tx = 0;
	int err;

	for (int i = 0; i < s->nports; i++) {
		fill += s->ports[i].xp->fill_out;
		tx += s->ports[i].xp->tx_out;
	}
	err = xport_check(s->umem, s->xps, s->nports);
	jw_obj_begin(w, NULL);
	jw_str(w, "daemon", "switchd");
	jw_str(w, "name", s->cfg->name);
	jw_str(w, "version", l2cc_version);
	jw_double(w, "uptime_s", (loop_now_ns() - s->start_ns) / 1e9);
	jw_u64(w, "ports", s->nports);
	jw_u64(w, "loops", s->loops);
	jw_u64(w, "wakeups", s->wakeups);
	jw_obj_begin(w, "umem");
	jw_u64(w, "frames", s->umem->nframes);
	jw_u64(w, "frame_size", s->umem->frame_size);
	jw_u64(w, "free", s->umem->nfree);
	jw_u64(w, "reserve", s->reserve);
	jw_u64(w, "held", s->umem->held);
	jw_u64(w, "fill", fill);
	jw_u64(w, "tx", tx);
	jw_bool(w, "conserved", err == 0);
	jw_obj_end(w);
	if (s->lnk) {
		const struct lnk_stats *ls = lnk_stats(s->lnk);

		jw_obj_begin(w, "netlink");
		jw_u64(w, "link_events", ls->events);
		jw_u64(w, "resyncs", ls->resyncs);
		jw_obj_end(w);
	}
	jw_obj_end(w);
	return 0;
}

/* One sample of a scheme's counter, nanoseconds as seconds. */
static void prom_cp_sample(struct jw *w, const char *name, const char *labels,
			   const struct cp_ctr *ct, uint64_t v)
{
	if ((ct->kind & ~CP_PER_PRIO) == CP_COUNTER_NS)
		prom_sample_double(w, name, labels, (double)v / 1e9);
	else
		prom_sample_u64(w, name, labels, v);
}

/* The counters of the congestion points in use, one family per counter:
 * l2cc_switch_<scheme>_<metric>, sampled on the ports of that scheme. */
static void prom_cps(struct jw *w, struct sw *s)
{
	char labels[256], esc[64], sw[64], name[128];

	prom_label_escape(sw, sizeof(sw), s->cfg->name);
	for (int c = 0; c < s->ncps; c++) {
		const struct cp_ops *ops = s->cps[c].ops;

		for (size_t k = 0; k < ops->nctrs; k++) {
			const struct cp_ctr *ct = &ops->ctrs[k];

			snprintf(name, sizeof(name), "l2cc_switch_%s_%s", ops->name, ct->metric);
			prom_family(w, name, (ct->kind & ~CP_PER_PRIO) == CP_GAUGE ? "gauge" : "counter", ct->help);
			for (int i = 0; i < s->nports; i++) {
				const struct sw_port *p = &s->ports[i];
				const char *st;

				if (p->cpo != ops)
					continue;
				st = ops->port_stats(p->cp, p->idx);
				prom_label_escape(esc, sizeof(esc), p->cfg->name);
				if (!(ct->kind & CP_PER_PRIO)) {
					snprintf(labels, sizeof(labels), "switch=\"%s\",port=\"%s\"",
						 sw, esc);
					prom_cp_sample(w, name, labels, ct,
						       *(const uint64_t *)(st + ct->off));
					continue;
				}
				for (int k2 = 0; k2 < L2CC_NPRIO; k2++) {
					snprintf(labels, sizeof(labels),
						 "switch=\"%s\",port=\"%s\",prio=\"%d\"", sw, esc, k2);
					prom_cp_sample(w, name, labels, ct,
						       ((const uint64_t *)(st + ct->off))[k2]);
				}
			}
		}
	}
}

/* The per-priority gauges: the input buffer's occupancy (in its unit: one
 * family for the ports that count bytes, one for those that count frames)
 * and each output's backlog. */
static void prom_prio(struct jw *w, struct sw *s)
{
	static const struct {
		const char *name, *help;
		int what;       /* 0 buffer in bytes, 1 buffer in frames, 2 outq bytes, 3 outq frames */
	} fam[] = {
		{ "l2cc_switch_buffer_bytes", "Input buffer occupancy per priority (ports that count bytes)", 0 },
		{ "l2cc_switch_buffer_frames", "Input buffer occupancy per priority (ports that count frames)", 1 },
		{ "l2cc_switch_outq_bytes", "Backlog of the output per priority (the sum of its VOQs)", 2 },
		{ "l2cc_switch_outq_frames", "Frames queued for the output per priority", 3 },
	};
	char labels[256], esc[64], sw[64];

	prom_label_escape(sw, sizeof(sw), s->cfg->name);
	for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		prom_family(w, fam[f].name, "gauge", fam[f].help);
		for (int i = 0; i < s->nports; i++) {
			const struct sw_port *p = &s->ports[i];
			uint64_t ob[L2CC_NPRIO], of[L2CC_NPRIO];

			if ((fam[f].what == 0 && p->unit_frames) || (fam[f].what == 1 && !p->unit_frames))
				continue;
			port_outq(p, ob, of);
			prom_label_escape(esc, sizeof(esc), p->cfg->name);
			for (int k = 0; k < L2CC_NPRIO; k++) {
				uint64_t v = fam[f].what < 2 ? p->occ[k] : fam[f].what == 2 ? ob[k] : of[k];

				snprintf(labels, sizeof(labels), "switch=\"%s\",port=\"%s\",prio=\"%d\"",
					 sw, esc, k);
				prom_sample_u64(w, fam[f].name, labels, v);
			}
		}
	}
}

static int cmd_metrics(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	char labels[256], esc[64], sw[64], plabels[SW_MAX_PORTS][160];
	const void *objs[SW_MAX_PORTS];
	const char *lp[SW_MAX_PORTS];
	uint64_t now = loop_now_ns();

	prom_label_escape(sw, sizeof(sw), s->cfg->name);
	for (int i = 0; i < s->nports; i++) {
		prom_label_escape(esc, sizeof(esc), s->ports[i].cfg->name);
		snprintf(plabels[i], sizeof(plabels[i]), "switch=\"%s\",port=\"%s\"", sw, esc);
		objs[i] = &s->ports[i];
		lp[i] = plabels[i];
	}
	ctr_prom(w, "l2cc_switch_", port_ctrs, N_PORT_CTRS, objs, lp, (size_t)s->nports, now);
	prom_cps(w, s);
	prom_prio(w, s);
	prom_build_info(w);

	prom_label_escape(sw, sizeof(sw), s->cfg->name);
	prom_family(w, "l2cc_switch_drops_total", "counter", "Frames dropped, by reason");
	for (int i = 0; i < s->nports; i++) {
		prom_label_escape(esc, sizeof(esc), s->ports[i].cfg->name);
		for (int r = 0; r < SW_DROP_MAX; r++) {
			snprintf(labels, sizeof(labels), "switch=\"%s\",port=\"%s\",reason=\"%s\"",
				 sw, esc, sw_drop_names[r]);
			prom_sample_u64(w, "l2cc_switch_drops_total", labels, s->ports[i].st.drop[r]);
		}
	}
	prom_family(w, "l2cc_switch_cpu_port_drops_total", "counter",
		    "Frames the CPU pseudo-port (congestion points) queued that were dropped, by reason");
	for (int r = 0; r < SW_DROP_MAX; r++) {
		snprintf(labels, sizeof(labels), "switch=\"%s\",reason=\"%s\"", sw, sw_drop_names[r]);
		prom_sample_u64(w, "l2cc_switch_cpu_port_drops_total", labels,
				s->ports[s->nports].st.drop[r]);
	}
	prom_family(w, "l2cc_switch_xdp_total", "counter",
		    "AF_XDP socket statistics (XDP_STATISTICS) and XDP program counters");
	for (int i = 0; i < s->nports; i++) {
		struct xport_xdp_stats xs;

		xport_xdp_stats(s->ports[i].xp, &xs);
		const struct { const char *k; uint64_t v; } rows[] = {
			{ "rx_dropped", xs.rx_dropped },
			{ "rx_invalid_descs", xs.rx_invalid_descs },
			{ "tx_invalid_descs", xs.tx_invalid_descs },
			{ "rx_ring_full", xs.rx_ring_full },
			{ "rx_fill_ring_empty_descs", xs.rx_fill_ring_empty_descs },
			{ "tx_ring_empty_descs", xs.tx_ring_empty_descs },
			{ "prog_redirect", xs.prog_redirect },
			{ "prog_no_socket", xs.prog_no_socket },
			{ "prog_runt", xs.prog_runt },
			{ "prog_ctrl", xs.prog_ctrl },
		};

		prom_label_escape(esc, sizeof(esc), s->ports[i].cfg->name);
		for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
			snprintf(labels, sizeof(labels), "switch=\"%s\",port=\"%s\",stat=\"%s\"",
				 sw, esc, rows[k].k);
			prom_sample_u64(w, "l2cc_switch_xdp_total", labels, rows[k].v);
		}
	}
	prom_family(w, "l2cc_switch_port_info", "gauge",
		    "Always 1: how the port's socket was set up at start (XDP attach mode, "
		    "zero-copy) and what its NIC does with 802.3x PAUSE/PFC");
	for (int i = 0; i < s->nports; i++) {
		char pl[192], il[512];

		prom_label_escape(esc, sizeof(esc), s->ports[i].cfg->name);
		snprintf(pl, sizeof(pl), "switch=\"%s\",port=\"%s\"", sw, esc);
		nic_port_labels(il, sizeof(il), pl, s->ports[i].xp, &s->ports[i].nic);
		prom_sample_u64(w, "l2cc_switch_port_info", il, 1);
	}
	prom_family(w, "l2cc_switch_fdb_entries", "gauge", "Addresses in the forwarding database");
	snprintf(labels, sizeof(labels), "switch=\"%s\"", sw);
	prom_sample_u64(w, "l2cc_switch_fdb_entries", labels, s->fdb->count);
	prom_loop(w, "l2cc_switch_", labels, s->loops, s->wakeups);
	prom_family(w, "l2cc_switch_umem_free_frames", "gauge", "Frames in the free pool");
	prom_sample_u64(w, "l2cc_switch_umem_free_frames", labels, s->umem->nfree);
	prom_family(w, "l2cc_switch_umem_reserve_frames", "gauge",
		    "Free frames kept for fill rings and control frames: flood copies may not take them");
	prom_sample_u64(w, "l2cc_switch_umem_reserve_frames", labels, s->reserve);
	return 0;
}

void sw_stats_tick(struct sw *s)
{
	struct timespec rt;
	struct jw w;

	if (!s->ts)
		return;
	clock_gettime(CLOCK_REALTIME, &rt);
	jw_init(&w);
	jw_obj_begin(&w, NULL);
	jw_double(&w, "t", rt.tv_sec + rt.tv_nsec / 1e9);
	jw_str(&w, "daemon", "switchd");
	jw_str(&w, "name", s->cfg->name);
	jw_obj_begin(&w, "ports");
	for (int i = 0; i < s->nports; i++) {
		jw_obj_begin(&w, s->ports[i].cfg->name);
		emit_port_counters(&s->ports[i], &w, false, s->now);
		jw_obj_end(&w);
	}
	jw_obj_end(&w);
	jw_obj_end(&w);
	if (!w.err && tseries_write_line(s->ts, jw_str_get(&w)))
		pr_warn_rl("time series %s: write failed\n", s->cfg->stats_file);
	jw_free(&w);
}

/* `reload`: what SIGHUP does, the outcome in the reply (a refusal's reason
 * too, which SIGHUP leaves in the log only). */
static int cmd_reload(struct jw *w, const char *args, void *ctx)
{
	struct sw *s = ctx;
	char why[1024] = "";

	if (*args)
		return ctl_errorf(w, -EINVAL, "reload takes no arguments");
	if (!s->reload)
		return ctl_errorf(w, -EOPNOTSUPP, "this switch cannot reload");
	return dctl_reload_reply(w, s->reload(s, why, sizeof(why)), why);
}

static const struct dctl_cmd sw_cmds[] = {
	{ "status", CTL_READS, "daemon, uptime and UMEM frame accounting", cmd_status },
	{ "ports", CTL_READS, "ports with rate, flow control, thresholds, pause state", cmd_ports },
	{ "fdb", CTL_READS, "learned and static forwarding entries", cmd_fdb },
	{ "queues", CTL_READS, "VOQ and input buffer occupancy", cmd_queues },
	{ "counters", CTL_READS, "per port (and priority) counters [PORT]", cmd_counters },
	{ "metrics", CTL_READS, "Prometheus text exposition", cmd_metrics },
	{ "mark", CTL_CHANGES, "PORT N: set FECN on the next N tagged frames sent on PORT", cmd_mark },
	{ "cp", CTL_CHANGES, "PORT ARGS...: a command for PORT's congestion point (its scheme's: l2ccctl.md)",
	  cmd_cp },
	{ "reload", CTL_CHANGES, "re-read the configuration as SIGHUP does; the reply says what "
	  "changed or why nothing did", cmd_reload },
};

int sw_ctl_init(struct sw *s)
{
	const struct dctl_cfg c = {
		.ctl_socket = s->cfg->ctl_socket, .metrics_listen = s->cfg->metrics_listen,
		.stats_file = s->cfg->stats_file, .stats_file_max = s->cfg->stats_file_max,
		.cmds = sw_cmds,
		.ncmds = sizeof(sw_cmds) / sizeof(sw_cmds[0]), .ctx = s,
	};

	return dctl_open(&c, s->loop, &s->ctl, &s->ts);
}

void sw_ctl_fini(struct sw *s)
{
	dctl_close(&s->ctl, &s->ts);
}
