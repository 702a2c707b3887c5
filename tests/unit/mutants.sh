#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Deliberate breakage: each row below breaks one rule of the datapath in a
# copy of one source file, rebuilds the unit test that pins the rule
# against the broken object, and requires that test to FAIL. A test that
# still passes with the rule broken cannot fail, and says so here.
#
# Needs a full build (`make`): the test objects and the other library
# objects are reused; only the mutated file is compiled again.
#
# Prints "PASS mutant_NAME: caught by TEST" or "FAIL mutant_NAME: ..." per
# row; exits non-zero if any row fails.
set -uo pipefail
cd "$(dirname "$0")/../.."

B=${B:-build}
CC=${CC:-gcc}
PKGS="libbpf libxdp libnl-3.0 libnl-route-3.0"
CFLAGS="-O1 -g -std=gnu11 -D_GNU_SOURCE -Idaemon -Ibpf -I$B $(pkg-config --cflags $PKGS 2>/dev/null)"
LDLIBS="$(pkg-config --libs $PKGS 2>/dev/null) -lm"
TMP=$(mktemp -d) || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"; [ -n "${KEEP:-}" ] && echo "kept $TMP"' EXIT

# name @@ file @@ perl substitution (must match once) @@ test binary @@ test that must fail
MUTANTS=(
"pacer_own_gap_ignored@@hostd/pacer.c@@s/\tif \(!f->own_gap \|\| !f->den\)/\tif (1)/@@test_hostd_pacer@@test_pacer_own_gap"
"prc_charged_after@@hostd/rp_prc.c@@s/\.pace_own_gap = true,/.pace_own_gap = false,/@@test_hostd_prc@@test_prc_priority_own_gap"
"own_gap_head_ignored@@hostd/hd_path.c@@s/\telse if \(h->rpo->pace_own_gap\)/\telse if (0)/@@test_hostd_prc@@test_prc_priority_own_gap"
"prc_ecn_never@@hostd/rp_prc.c@@s/return rp->k->ecn_queue && f->q.bytes > rp->k->ecn_queue;/return false;/@@test_hostd_prc@@test_prc_ecn"
"pure_ack_with_fin@@daemon/wire.c@@s/\(tcp\[13\] & 0x17\) == 0x10/(tcp[13] \& 0x10) == 0x10/@@test_wire@@test_tcp_pure_ack"
"dcqcn_cut_at_once@@hostd/rp_dcqcn.c@@s/if \(p->rate_decrease_interval\) \{/if (0) {/@@test_dcqcn@@test_dcqcn_hpcc_rules"
"dcqcn_always_clamp@@hostd/rp_dcqcn.c@@s/bool clamp = rp->p.clamp \|\| /bool clamp = 1 || /@@test_dcqcn@@test_dcqcn_hpcc_rules"
"dcqcn_alpha_after_cut@@hostd/rp_dcqcn.c@@s/\} else if \(p->alpha_before_cut\) \{/} else if (0) {/@@test_dcqcn@@test_dcqcn_ns3_nic_rules"
"dcqcn_first_cnp_rate_ignored@@hostd/rp_dcqcn.c@@s/if \(d->cnps == 1 && p->rate_on_first_cnp > 0\)/if (0)/@@test_dcqcn@@test_dcqcn_ns3_nic_rules"
"qcn_stage_counted_after@@hostd/rp_qcn_inc.c@@s/\tif \(c->stage_before\) \{/\tif (0) {/@@test_dcqcn@@test_qcn_inc_stage_before"
"subflow_share_off@@hostd/hd_path.c@@s/\tif \(!h->cfg->subflow_share \|\|/\tif (1 ||/@@test_hostd_core@@test_hd_core_subflow_share"
"subflow_no_quota@@hostd/flow.c@@s/if \(q->sub_bytes\[slot\] \+ len > FLOW_SUB_ALPHA/if (0 \&\& q->sub_bytes[slot] + len > FLOW_SUB_ALPHA/@@test_hostd_flow@@test_queue_subflow_share"
"subflow_bytes_kept@@hostd/flow.c@@s/\tif \(t->frames\[frame\].sub != FLOW_SUB_NONE\)\n\t\tf->q.sub_bytes\[t->frames\[frame\].sub\] -= l;\n//@@test_hostd_flow@@test_queue_subflow_share"
"flow_prio_fifo_only@@hostd/flow.c@@s/q->head = q->lh\[flow_top\(q\)\];\n\tq->frames\+\+;/if (q->frames == 0) q->head = frame;\n\tq->frames++;/@@test_hostd_flow@@test_queue_priorities"
"l2ci_egress_counts_unflushed@@hostd/hd_path.c@@s/used = used > h->host_unflushed \? used - h->host_unflushed : 0;//@@test_hostd_prc@@test_prc_egress_backlog"
"l2ci_egress_level_zero@@hostd/np_l2ci.c@@s/\.level = np_host_backlog\(np->h\)/.level = 0/@@test_hostd_prc@@test_prc_egress_backlog"
"l2ci_discover_no_min@@daemon/wire.c@@s/if \(egress_bps && egress_bps < bps\)/if (0)/@@test_wire@@test_l2ci_transit"
"l2ci_feedback_no_speed@@daemon/wire.c@@s/put_be16\(body \+ offsetof\(struct l2cc_feedback, speed\), wire_speed_mbps\(port_bps\)\);//@@test_wire@@test_l2ci_transit"
"prc_unit_own_link@@hostd/rp_prc.c@@s/s->unit_bps = fb->speed_bps;//@@test_hostd_prc@@test_prc_feedback_unit"
"l2ci_feedback_overwrites@@daemon/wire.c@@s/if \(level <= get_be16\(body \+ offsetof\(struct l2cc_feedback, level\)\)\)/if (0)/@@test_wire@@test_l2ci_transit"
"l2ci_level_of_out@@switchd/cp_l2ci.c@@s/l2ci_ours\(cp, in\) \? l2ci_level\(cp, in\) : 0/l2ci_ours(cp, out) ? l2ci_level(cp, out) : 0/@@test_switch_l2ci@@test_l2ci_feedback_level"
"l2ci_level_no_wire@@switchd/cp_l2ci.c@@s/wire = sw_port_wire_bytes\(cp->h.s, out\) \* 10000;/wire = 0;/@@test_switch_l2ci@@test_l2ci_level_wire"
"l2ci_prios_ignored@@switchd/cp_l2ci.c@@s/if \(p->prios & \(1u << q\)\)/if (1)/@@test_switch_l2ci@@test_l2ci_level_prios"
"prc_no_retry@@hostd/rp_prc.c@@s/if \(s->tries < rp->k->discover_tries\)/if (0)/@@test_hostd_prc@@test_prc_no_l2ci"
"prc_dup_feedback@@hostd/rp_prc.c@@s/\(int32_t\)\(fb->seq - s->fb_seq\) <= 0/0/@@test_hostd_prc@@test_prc_feedback"
"l2ci_fb_no_spacing@@hostd/np_l2ci.c@@s/since >= k->fb_min\)/1)/@@test_hostd_prc@@test_prc_egress"
"l2ci_fb_any_source@@hostd/hd_path.c@@s/return !memcmp\(f->key.mac, ei->src, 6\);/return 1;/@@test_hostd_prc@@test_prc_feedback"
"notify_any_source@@hostd/hd_path.c@@s/return !memcmp\(f->key.mac, ei->src, 6\);/return 1;/@@test_hostd_core@@test_hd_core_ctrl_senders"
"notify_unchecked@@hostd/hd_path.c@@s/if \(!hd_ctrl_allowed\(h, ei, type, f\)\) \{\n\t\t\th->st.notify_forged/if (0) {\n\t\t\th->st.notify_forged/@@test_hostd_core@@test_hd_core_ctrl_senders"
"ctrl_any_destination@@hostd/hd_path.c@@s/\(h->host_mac_known && memcmp\(ei->dst, h->host_mac, 6\)\)\)\n\t\treturn false;/0)\n\t\treturn false;/@@test_hostd_core@@test_hd_core_ctrl_senders"
"notify_prio_any_source@@hostd/hd_path.c@@s/x->many_peers \|\| !memcmp\(x->peer, ei->src, 6\)/1/@@test_hostd_core@@test_hd_core_notify_peer_by_prio"
"ack_unclamped@@hostd/hd_path.c@@s/if \(m->ack.frames > in_flight\)/if (0)/@@test_hostd_core@@test_hd_core_ack_clamp"
"ack_ahead_taken@@hostd/hd_path.c@@s/ \|\|\n\t\t    \(int32_t\)\(m->ack.cum_seq \+ 1 - f->seq_next\) > 0\)/)/@@test_hostd_core@@test_hd_core_ack_clamp"
"santos_never_revokes@@switchd/cp_santos.c@@s/if \(!prios \|\| !op->cnt2\)/if (1)/@@test_switch_core@@test_core_santos_blocked_revokes"
"santos_marks_one_more@@switchd/cp_santos.c@@s/op->cnt2 = sw_out_frames\(cp->h.s, o\);/op->cnt2 = sw_out_frames(cp->h.s, o) + 1;/@@test_switch_core@@test_core_santos_root_marks_cnt1"
"santos_arms_victims@@switchd/cp_santos.c@@s/\|\| !sw_out_is_root\(cp->h.s, o, prio\)//@@test_switch_core@@test_core_santos_root_marks_cnt1"
"ctrl_forged_unchecked@@switchd/switch.c@@s/ \|\|\n\t     \(ei.ethertype == L2CC_ETH_P_CTRL && sw_ctrl_forged\(frame, len, &ei\)\)//@@test_switch_core@@test_core_ctrl_senders"
"ctrl_switch_type_from_host@@daemon/ctrl_msg.c@@s/ && !\(from_host && t->sender == CTRL_BY_SWITCH\)//@@test_switch_core@@test_core_ctrl_senders"
"ctrl_link_local_unicast@@daemon/ctrl_msg.c@@s/return t->link_local && link_local_dst;/return 1;/@@test_switch_core@@test_core_ctrl_senders"
"static_mac_forwarded@@switchd/switch.c@@s/if \(out == -EPERM \|\| out == -EDQUOT \|\| out == -EBUSY\)/if (out == -EDQUOT || out == -EBUSY)/@@test_switch_core@@test_core_fdb_static_contradiction"
"plain_host_l2cc_passes@@switchd/switch.c@@s/\(\(!p->cfg->l2cc_host && /((0 \&\& /@@test_switch_core@@test_core_plain_host_port"
"vlan_flood_everywhere@@switchd/switch.c@@s/if \(\(uint32_t\)o == p->idx \|\| !sw_vlan_ok\(op, vid\)\)/if ((uint32_t)o == p->idx)/@@test_switch_core@@test_core_vlans"
"vlan_ingress_unchecked@@switchd/switch.c@@s/\tif \(!sw_vlan_ok\(p, ei.vid\)\) \{/\tif (0) {/@@test_switch_core@@test_core_vlans"
"mac_limit_one_more@@switchd/fdb.c@@s/f->learned\[port\] < f->port_limit\[port\]/f->learned[port] <= f->port_limit[port]/@@test_switch_core@@test_core_fdb_mac_limit"
"mac_limit_switch_ports@@switchd/switch.c@@s/c->role == ROLE_HOST \? \(uint32_t\)c->mac_limit : 0/(uint32_t)c->mac_limit/@@test_switch_core@@test_core_fdb_mac_limit"
"mac_count_kept_on_age@@switchd/fdb.c@@s/\tif \(!f->tab\[i\].is_static\)\n\t\tfdb_count\(f, f->tab\[i\].port, -1\);\n//@@test_switch_core@@test_core_fdb_mac_limit"
"mac_move_unlimited@@switchd/fdb.c@@s/if \(!fdb_move_ok\(f, port, now\)\)/if (0)/@@test_switch_core@@test_core_fdb_move_limit"
"mac_move_window_stuck@@switchd/fdb.c@@s/now - f->move_start\[port\] >= 1000000000ull \|\| //@@test_switch_core@@test_core_fdb_move_limit"
"admit_one_short@@switchd/switch.c@@s/if \(p->occ\[prio\] \+ u > p->cap\)/if (p->occ[prio] + u >= p->cap)/@@test_switch_core@@test_core_admission_tail_drop"
"flood_no_bound@@switchd/switch.c@@s/if \(op->flood_waiting >= s->cfg->flood_queue\)/if (0)/@@test_switch_core@@test_core_flood_bounded_charged"
"fwd_move_not_told@@switchd/fdb.c@@s/tell = e->port != port;/tell = false;/@@test_switch_fwd@@test_fwd_learn_move"
"fwd_aging_ignores_xdp@@switchd/fdb.c@@s/if \(f->sync.seen && f->aging_ns\)/if (0)/@@test_switch_fwd@@test_fwd_aging"
"fwd_down_port_kept@@switchd/sw_fwd.c@@s/p->fwd_xdp && p->link_up && sw_vlan_ok/p->fwd_xdp \&\& sw_vlan_ok/@@test_switch_fwd@@test_fwd_link"
"fwd_refused_port_keeps_slot@@switchd/sw_fwd.c@@s/on && !p->fwd_refused/on/@@test_switch_fwd@@test_fwd_refuse"
"fwd_rate_allowed@@switchd/sw_config.c@@s/\tif \(p->rate\) \{/\tif (0) {/@@test_switch_fwd@@test_fwd_eligibility"
"flood_charge_first_copy@@switchd/switch.c@@s/s->floods\[g\].refs\+\+;/s->floods[g].refs = 1;/@@test_switch_core@@test_core_flood_bounded_charged"
"flood_into_reserve@@switchd/switch.c@@s/if \(s->umem->nfree <= s->reserve\)/if (!s->umem->nfree)/@@test_switch_core@@test_core_flood_reserve"
"wd_never_detects@@switchd/switch.c@@s/if \(s->now - p->wd_since\[i\] < c->pause_watchdog\) \{/if (1) {/@@test_switch_core@@test_core_watchdog_drop"
"wd_default_detect_100ms@@switchd/sw_config.c@@s/pause_watchdog, \x22200ms\x22/pause_watchdog, \x22100ms\x22/@@test_switch_core@@test_core_watchdog_drop"
"wd_pauses_add_up@@switchd/switch.c@@s/if \(!\(waiting & bit\)\) \{\n\t\t\tp->wd_timing &= ~bit;/if (!(waiting & bit)) {/@@test_switch_core@@test_core_watchdog_short_pauses"
"wd_never_restores@@switchd/switch.c@@s/if \(s->now < end\) \{/if (1) {/@@test_switch_core@@test_core_watchdog_drop"
"wd_restore_ignores_refresh@@switchd/switch.c@@s/\t\t\tp->wd_last_pause\[i\] = s->now;\n//@@test_switch_core@@test_core_watchdog_drop"
"wd_restore_from_old_pause@@switchd/switch.c@@s/\(p->wd_last_pause\[i\] > p->wd_since\[i\] \? p->wd_last_pause\[i\]\n\t+: p->wd_since\[i\]\)/p->wd_last_pause[i]/@@test_switch_core@@test_core_watchdog_long_pause"
"fc_refresh_due_in_deadline@@daemon/fc_rx.c@@s/f->told_mask & f->xoff_mask & ~f->refresh_mask & /f->told_mask & f->xoff_mask & /@@test_switch_core@@test_core_pause_refresh_ring_full"
"wd_forward_drops@@switchd/switch.c@@s/if \(storm && p->cfg->pause_watchdog_action == SW_WD_DROP\)/if (storm)/@@test_switch_core@@test_core_watchdog_forward"
"wd_alert_acts@@switchd/switch.c@@s/return c->pause_watchdog_action == SW_WD_ALERT \? 0 : p->wd_storm;/return p->wd_storm;/@@test_switch_core@@test_core_watchdog_alert"
"pfc_xon_below@@daemon/fc_rx.c@@s/else if \(occ\[i\] <= f->cfg.xon\)\n\t\t\t\tf->xoff_mask &=/else if (occ[i] < f->cfg.xon)\n\t\t\t\tf->xoff_mask &=/@@test_switch_core@@test_core_pfc_per_priority"
"pause_xon_below@@daemon/fc_rx.c@@s/under &= occ\[i\] <= f->cfg.xon;/under &= occ[i] < f->cfg.xon;/@@test_switch_core@@test_core_pause_xoff_xon"
"credit_no_step@@daemon/fc_rx.c@@s/if \(lim - f->adv_limit\[i\] >= f->cfg.credit_step\)/if (0)/@@test_switch_core@@test_core_credit_grants"
"pause_ignored@@daemon/fc_tx.c@@s/mask &= ~\(1u << i\);/;/@@test_switch_core@@test_core_egress_pause"
"cnp_no_coalescing@@hostd/np_cnp.c@@s/now - c->last_cnp_ns >= interval/1/@@test_hostd_core@@test_hd_core_cnp_coalescing"
"ack_every_plus_one@@hostd/np_ack.c@@s/a->frames >= cfg->ack_every/a->frames > cfg->ack_every/@@test_hostd_core@@test_hd_core_acks"
"window_one_more@@hostd/hd_path.c@@s/f->seq_next - x->acked_next >= x->out.window/f->seq_next - x->acked_next > x->out.window/@@test_hostd_core@@test_hd_core_window"
"ack_timeout_stuck@@hostd/hd_path.c@@s/x->acked_next = f->seq_next;\n\t\thd_window_release\(h, f\);/x->acked_next = f->seq_next;/@@test_hostd_core@@test_hd_core_ack_timeout"
"bcn_increase_to_any@@switchd/cp_qcn.c@@s/\(cn_cpid\(cp, out, prio, cpid\), !memcmp\(t.cpid, cpid, sizeof\(cpid\)\)\)/1/@@test_switch_core@@test_core_bcn_classify"
"qcn_fixed_sample_base@@switchd/cp_qcn.c@@s/ \/ \(1 \+ fbq \/ 8\);/;/@@test_switch_core@@test_core_qcn_sampling"
"bcn_rp_increase_from_any@@hostd/rp_bcn.c@@s/x > 0 && b->assoc && !memcmp\(b->cpid, fb->cpid, sizeof\(b->cpid\)\)/x > 0/@@test_hostd_core@@test_hd_core_bcn_events"
"qcn_rp_target_always@@hostd/rp_qcn.c@@s/			 !first_cycle\);/			 true);/@@test_hostd_core@@test_hd_core_qcn_events"
"qcn_rp_no_min_dec_fac@@hostd/rp_qcn.c@@s/return x < min_dec_fac \? min_dec_fac : x;/return x;/@@test_hostd_core@@test_hd_core_qcn_events"
"bcn_rp_ignores_pin@@hostd/rp_bcn.c@@s/if \(b->stopped \|\| f->pinned\) \{/if (b->stopped) {/@@test_hostd_core@@test_hd_core_bcn_events"
"qcn_no_byte_jitter@@hostd/rp_qcn_inc.c@@s/	s->jit_pm = \(uint16_t\)\(850 \+ x % 301\);/	s->jit_pm = 1000;/@@test_dcqcn@@test_qcn_inc_byte_jitter"
"cnm_from_host_passes@@switchd/switch.c@@s/ \|\| ei.ethertype == L2CC_ETH_P_CNM \|\|/ ||/@@test_switch_core@@test_core_forged_from_host"
"red_no_ramp@@switchd/cp_red.c@@s/return pmax \* \(q - \(double\)kmin\) \/ \(double\)\(kmax - kmin\);/return pmax;/@@test_red@@test_red_curve"
"red_average_ignored@@switchd/cp_red.c@@s/double q = c->wq > 0.0 \? rp->avg\[prio\] : \(double\)rp->q\[prio\];/double q = (double)rp->q[prio];/@@test_red@@test_red_average"
"red_not_ect_passes@@switchd/cp_red.c@@s/if \(c->not_ect == RED_NOT_ECT_PASS\)/if (1)/@@test_red@@test_red_ce"
"red_drop_sent@@switchd/switch.c@@s/if \(sw_mark\(s, p, prio, idx, len\) == CP_DROP\) \{/if (sw_mark(s, p, prio, idx, len) == CP_DROP \&\& 0) {/@@test_red@@test_red_drop"
"ce_checksum_kept@@daemon/wire.c@@s/ip\[11\] = \(uint8_t\)~sum;//@@test_red@@test_ce_ipv4"
"ce_ipv6_wrong_bits@@daemon/wire.c@@s/ip\[1\] \|= IP_ECN_CE << 4;/ip[1] |= IP_ECN_CE;/@@test_red@@test_ce_ipv6_tagged"
"dcqcn_alpha_no_cnp@@hostd/rp_dcqcn.c@@s/\(!rp->p.alpha_before_cut\)\n\t\t\td->alpha = \(1.0 - rp->p.g\) \* d->alpha \+ rp->p.g;/(!rp->p.alpha_before_cut)\n\t\t\td->alpha = (1.0 - rp->p.g) * d->alpha;/@@test_dcqcn@@test_dcqcn_cut_alpha"
"dcqcn_cut_by_alpha@@hostd/rp_dcqcn.c@@s/d->inc.rc \* \(1.0 - d->alpha \/ 2.0\)/d->inc.rc * (1.0 - d->alpha)/@@test_dcqcn@@test_dcqcn_cut_alpha"
"qcn_fast_recovery_one_more@@hostd/rp_qcn_inc.c@@s/: bs >= f \|\| ts >= f\) \{/: bs > f || ts > f) {/@@test_dcqcn@@test_qcn_inc_stages"
"qcn_no_hyper@@hostd/rp_qcn_inc.c@@s/\? ts > f : bs >= f && ts >= f\) \{/? ts > f : 0) {/@@test_dcqcn@@test_qcn_inc_stages"
"qcn_no_guard@@hostd/rp_qcn_inc.c@@s/if \(s->byte_stage \+ s->time_stage == 1 && s->rt > 10.0 \* s->rc\)/if (0)/@@test_dcqcn@@test_qcn_inc_guard_floor_release"
"qcn_no_rmin@@hostd/rp_qcn_inc.c@@s/s->rc = rc_new < c->rpg_min_rate \? c->rpg_min_rate : rc_new;/s->rc = rc_new;/@@test_dcqcn@@test_qcn_inc_guard_floor_release"
"dcqcn_receiver_interval_ignored@@hostd/hd_path.c@@s/if \(h->cfg->cnp_interval \|\| !h->rpo->cnp_interval\)/if (1)/@@test_dcqcn@@test_dcqcn_core_receiver"
"credit_count_untold@@hostd/hd_path.c@@s/fc_rx_sent_changed\(&h->frx, h->now\);//@@test_hostd_core@@test_hd_core_credits"
"pcp_from_ecn_bits@@hostd/hd_path.c@@s/cls = p\[ei->hlen \+ 1\] >> 5;/cls = (p[ei->hlen + 1] >> 2) \& 7;/@@test_hostd_core@@test_hd_core_pcp_from_dscp"
"pcp_no_room_check@@hostd/hd_path.c@@s/if \(!cls \|\| headroom < L2CC_VLAN_HLEN \+ \(h->cfg->tag \? L2CC_TAG_LEN : 0\)\)/if (!cls)/@@test_hostd_core@@test_hd_core_pcp_from_dscp"
"ibcc_no_hysteresis@@switchd/cp_ibcc.c@@s/\*lo = \*hi > hyst \? \*hi - hyst : 0;/*lo = *hi;/@@test_switch_ibcc@@test_ibcc_enter_leave"
"ibcc_victims_enter@@switchd/cp_ibcc.c@@s/\(op->victim \|\| \(!v->held && sw_out_is_root\(cp->h.s, out, prio\)\)\)/(1)/@@test_switch_ibcc@@test_ibcc_root_victim"
"ibcc_victim_mask_auto_off@@switchd/cp_ibcc.c@@s/\(k->victim_mask == IBCC_VICTIM_AUTO && g.host\)/0/@@test_switch_ibcc@@test_ibcc_root_victim"
"ibcc_held_backlog_roots@@switchd/cp_ibcc.c@@s/\(!v->held && sw_out_is_root/(sw_out_is_root/@@test_switch_ibcc@@test_ibcc_root_victim"
"ibcc_common_as_voq@@switchd/cp_ibcc.c@@s/if \(op->common\) \{/if (0) {/@@test_switch_ibcc@@test_ibcc_threshold_mode"
"ibcc_threshold_from_output@@switchd/cp_ibcc.c@@s/ibcc_thr\(k, cp->in\[in\].buf, cp->in\[in\].max_frame,/ibcc_thr(k, cp->in[i].buf, cp->in[i].max_frame,/@@test_switch_ibcc@@test_ibcc_unequal_buffers"
"ibcc_common_unsized@@switchd/cp_ibcc.c@@s/cp->in\[in\].buf < cp->min_buf\)/cp->in[in].buf < cp->min_buf \&\& 0)/@@test_switch_ibcc@@test_ibcc_unequal_buffers"
"ibcc_small_marked@@switchd/cp_ibcc.c@@s/\|\| len < op->packet_size//@@test_switch_ibcc@@test_ibcc_packet_size"
"ibcc_rate_off_by_one@@switchd/cp_ibcc.c@@s/% \(op->mr \+ 1\)/% (op->mr + 2)/@@test_switch_ibcc@@test_ibcc_marking_rate"
"ibcc_marks_on_output@@switchd/cp_ibcc.c@@s/cp->port\[in\].in_marked\+\+/op->in_marked++/@@test_switch_ibcc@@test_ibcc_marks_per_input"
"ibcc_law_shift_off@@hostd/rp_ibcc.c@@s/\(1u << \(e >> 14\)\)/(1u << ((e >> 14) + 1))/@@test_hostd_ibcc@@test_ibcc_cct_rate"
"ibcc_law_no_limit@@hostd/rp_ibcc.c@@s/c = c > rp->k->ccti_limit \? rp->k->ccti_limit : c;//@@test_hostd_ibcc@@test_ibcc_becns"
"ibcc_law_one_becn_per_cnp@@hostd/rp_ibcc.c@@s/n = fb->marked \? fb->marked : 1;/n = 1;/@@test_hostd_ibcc@@test_ibcc_becns"
"ibcc_law_timer_once@@hostd/rp_ibcc.c@@s/if \(st.above\) \{/if (0) {/@@test_hostd_ibcc@@test_ibcc_lockstep"
"ibcc_law_below_min@@hostd/rp_ibcc.c@@s/s->ccti <= rp->k->ccti_min\)\n\t\treturn 0;/!s->ccti)\n\t\treturn 0;/@@test_hostd_ibcc@@test_ibcc_lockstep"
"ibcc_law_timer_rearmed@@hostd/rp_ibcc.c@@s/if \(rp->running\[sl\] \|\| !rp->env.h\)/if (!rp->env.h)/@@test_hostd_ibcc@@test_ibcc_lockstep"
"ibcc_law_one_timer@@hostd/rp_ibcc.c@@s/if \(s->sl != st->sl \|\| /if (/@@test_hostd_ibcc@@test_ibcc_timer_per_priority"
"link_fdb_kept@@switchd/switch.c@@s/p->st.fdb_flushed \+= fdb_flush_port\(s->fdb, p->idx\);//@@test_switch_core@@test_core_link_down"
"link_voq_kept@@switchd/switch.c@@s/\tsw_link_drain\(s, p\);\n//@@test_switch_core@@test_core_link_down"
"link_pause_kept@@switchd/switch.c@@s/\tfc_tx_link_down\(&p->etx, s->now\);\n//@@test_switch_core@@test_core_link_down"
"link_flood_to_down@@switchd/switch.c@@s/if \(!op->link_up\) \{\n\t\t\tdown = true;\n\t\t\tcontinue;\n\t\t\}//@@test_switch_core@@test_core_link_down"
"hd_link_queues_kept@@hostd/hd_path.c@@s/while \(\(idx = flow_dequeue\(h->flows, f, h->now, &len\)\)/while (0 && (idx = flow_dequeue(h->flows, f, h->now, &len))/@@test_hostd_core@@test_hd_core_link_down"
"hd_link_rate_lost@@hostd/hd_path.c@@s/\t\tx->out.rate_bps = o.rate_bps \+ 1;\n//@@test_hostd_core@@test_hd_core_link_down"
"ibcc_law_timer_us@@hostd/rp_ibcc.c@@s/\*ns = v \* IBCC_TIMER_UNIT_NS;/*ns = v * 1000;/@@test_hostd_ibcc@@test_ibcc_keys"
"tseries_follows_links@@daemon/tseries.c@@s/ \| O_NOFOLLOW \| O_NONBLOCK/ | O_NONBLOCK/@@test_ctl@@test_tseries_safe_bounded"
"tseries_unbounded@@daemon/tseries.c@@s/if \(ts->max && ts->size && ts->size \+ len > ts->max\)/if (0)/@@test_ctl@@test_tseries_safe_bounded"
"ctl_anyone_all@@daemon/ctl.c@@s/if \(cr.uid == 0 \|\| cr.uid == c->owner\)/if (1)/@@test_ctl@@test_ctl_access"
"ctl_group_changes@@daemon/ctl.c@@s/if \(may != CTL_MAY_ALL\) \{/if (0) {/@@test_ctl@@test_ctl_access"
"ctl_stranger_reads@@daemon/ctl.c@@s/\treturn CTL_MAY_NOTHING;\n\}/\treturn CTL_MAY_READ;\n}/@@test_ctl@@test_ctl_access"
"metrics_all_addresses@@daemon/ctl.c@@s/strcpy\(host, \\x22127.0.0.1\\x22\);/strcpy(host, \\x22*\\x22);/@@test_ctl@@test_ctl_access"
"room_underflow@@switchd/switch.c@@s/room\[i\] = p->cap > p->occ\[i\] \? p->cap - p->occ\[i\] : 0;/room[i] = p->cap - p->occ[i];/@@test_switch_core@@test_core_buffer_shrunk_below_occupancy"
"full_room_underflow@@switchd/switch.c@@s/uint64_t room = p->cap > p->occ\[prio\] \? p->cap - p->occ\[prio\] : 0;/uint64_t room = p->cap - p->occ[prio];/@@test_switch_core@@test_core_buffer_shrunk_below_occupancy"
"buffer_limit_capped_need@@switchd/sw_config.c@@s/other = sw_cfg_umem_need_raw\(c->new_cfg\) - sw_buffer_frames\(n\);/other = need - sw_buffer_frames(n);/@@test_switch_config@@test_reload_validators"
"zc_one_port_decides@@daemon/nic.c@@s/if \(ports\[i\].skb \|\| ports\[i\].err\) \{/if (i == 0 \&\& (ports[i].skb || ports[i].err)) {/@@test_nic@@test_zc_decide"
"zc_on_falls_back@@daemon/nic.c@@s/return key == NIC_ZC_ON \? -EOPNOTSUPP : 0;/return 0;/@@test_nic@@test_zc_decide"
"zc_off_still_zc@@daemon/nic.c@@s/if \(key == NIC_ZC_OFF\)\n\t\treturn 0;/if (0)\n\t\treturn 0;/@@test_nic@@test_zc_decide"
"zc_generic_port_ignored@@daemon/nic.c@@s/if \(ports\[i\].skb \|\| ports\[i\].err\) \{/if (ports[i].err) {/@@test_nic@@test_zc_decide"
"pause_unknown_acted_on@@daemon/nic.c@@s/if \(get_err\)\n\t\treturn NIC_PA_UNKNOWN;/if (0)\n\t\treturn NIC_PA_UNKNOWN;/@@test_nic@@test_pause_decide"
"pause_tx_only_ignored@@daemon/nic.c@@s/if \(!pp->rx && !pp->tx\)/if (!pp->rx)/@@test_nic@@test_pause_decide"
"pause_off_only_warns@@daemon/nic.c@@s/case NIC_PAUSE_OFF:\n\t\treturn NIC_PA_TURN_OFF;/case NIC_PAUSE_OFF:\n\t\treturn NIC_PA_WARN;/@@test_nic@@test_pause_decide"
"zc_on_with_skb_allowed@@switchd/sw_config.c@@s/cfg->zero_copy == NIC_ZC_ON && p->xdp_mode == XDP_MODE_SKB/0/@@test_switch_config@@test_scheme_key_errors"
"hd_zc_on_with_skb_allowed@@hostd/hd_config.c@@s/cfg->zero_copy == NIC_ZC_ON && cfg->xdp_mode == HD_XDP_SKB/0/@@test_hostd_config@@test_bad_values"
"pause_crash_original_lost@@daemon/ifsave.c@@s/\tif \(saved >= 0\) \{\n\t\t\*from_crash = true;/\tif (0) {\n\t\t*from_crash = true;/@@test_nic@@test_pause_saved"
"rxq_no_rotation@@daemon/xport.c@@s/\tp->rx_next = xport_qnext\(p, p->rx_next\);\n//@@test_xport@@test_rx_no_starvation"
"rxq_hold_releases_all@@daemon/xport.c@@s/t = taken < q->peeked \? taken : q->peeked;/t = q->peeked;/@@test_xport@@test_rx_hold"
"rxq_check_ignores_queues@@daemon/xport.c@@s/if \(p->nq && fill != p->fill_out\)/if (0)/@@test_xport@@test_check_per_queue"
"rxq_count_past_interface@@daemon/xport.c@@s/\*mask = xport_low_mask\(sel->first\) & have;/*mask = xport_low_mask(sel->first);/@@test_xport@@test_qsel_resolve"
"rxq_queue_with_rx_queues@@switchd/sw_config.c@@s/if \(p->queue != SW_QUEUE_UNSET && strcmp\(p->rx_queues, \x22all\x22\)\)/if (0)/@@test_switch_config@@test_rx_queues"
"rxq_overlap_unchecked@@switchd/sw_config.c@@s/\(sw_port_qmask\(&cfg->ports\[k\]\) & sw_port_qmask\(p\)\)/0/@@test_switch_config@@test_rx_queues"
"rxq_queue_default_zero@@switchd/sw_config.c@@s/p->queue = SW_QUEUE_UNSET;/p->queue = 0;/@@test_switch_config@@test_rx_queues"
"fc_xdp_pause_at_now@@daemon/fc_xdp.c@@s/uint64_t at = fc_xdp_at\(c->pause_at\[i\], now\)/uint64_t at = now/@@test_fc_xdp@@test_pause_at_arrival"
"fc_xdp_grants_once@@daemon/fc_xdp.c@@s/f->credit_grants \+= c->credit_n - o->credit_n - 1;//@@test_fc_xdp@@test_credit"
"wire_lost_when_idle@@daemon/wclock.c@@s/if \(c->backlog\) \{/if (1) {/@@test_switch_units@@test_wclock_lost"
"wire_lost_no_burst@@daemon/wclock.c@@s/uint64_t lost = now - c->burst_ns - wclock_next\(c\);/uint64_t lost = now - wclock_next(c);/@@test_switch_units@@test_wclock_lost"
"sw_backlog_when_idle@@switchd/switch.c@@s/wclock_backlog\(&p->wc, backlog\);/wclock_backlog(\&p->wc, true);/@@test_switch_core@@test_core_wire_lost"
"sw_hold_not_over_lost@@switchd/switch.c@@s/\t\tif \(!sw_hold_over\(p, open\)\)\n\t\t\twclock_backlog\(&p->wc, false\);\n//@@test_switch_core@@test_core_wire_lost_hold"
"hd_backlog_flows_not_due@@hostd/hd_path.c@@s/backlog = t != UINT64_MAX \|\| h->held_refused;/backlog = true;/@@test_hostd_core@@test_hd_core_wire_lost"
"pace_lost_after_idle@@hostd/pacer.c@@s/\tflow_pull_up\(f, now, f->burst_ns \+ flow_own_gap_ns\(p, f, next_len\)\);\n/\tflow_noticed(p, f, now);\n\tflow_pull_up(f, now, f->burst_ns + flow_own_gap_ns(p, f, next_len));\n/@@test_hostd_pacer@@test_pacer_lost"
"pace_lost_behind_wire@@hostd/pacer.c@@s/\tp->f\[id\].state = F_SERVING;/\tflow_noticed(p, \&p->f[id], now);\n\tp->f[id].state = F_SERVING;/@@test_hostd_pacer@@test_pacer_lost"
"acct_flood_unsent_uncounted@@switchd/switch.c@@s/\t\tp->st.flood_unsent\+\+;\n//@@test_switch_account@@test_account_closes"
"acct_void_ctrl_as_data@@switchd/switch.c@@s/\tp->st.ctrl_rx_frames\+\+;\n\tif \(!p->link_up\)\n\t\treturn;/\tif (!p->link_up)\n\t\treturn;\n\tp->st.ctrl_rx_frames++;/@@test_switch_account@@test_account_closes"
"acct_cpu_drain_uncounted@@switchd/switch.c@@s/sw_drop_frame\(s, &s->ports\[in\], idx, SW_DROP_LINK_DOWN\);/if (in == (uint32_t)s->nports) umem_free(s->umem, idx); else sw_drop_frame(s, \&s->ports[in], idx, SW_DROP_LINK_DOWN);/@@test_switch_account@@test_account_closes"
"acct_xdp_ctrl_all@@daemon/fc_xdp.c@@s/n->ctrl_frames = n->frames - n->malformed - n->unsupported;/n->ctrl_frames = n->frames;/@@test_fc_xdp@@test_ctrl_frames"
"hd_ctrl_tx_uncounted@@hostd/hd_path.c@@s/\t\th->ust.ctrl_tx_frames\+\+;\n//@@test_hostd_core@@test_hd_core_uplink_ctrl"
"hd_void_ctrl_as_data@@hostd/hd_path.c@@s/\th->ust.ctrl_rx_frames\+\+;\n\tif \(!h->link_up\[HD_PORT_UP\]\)\n\t\treturn;/\tif (!h->link_up[HD_PORT_UP])\n\t\treturn;\n\th->ust.ctrl_rx_frames++;/@@test_hostd_core@@test_hd_core_uplink_ctrl"
)

lib_objs() { # the object of every library source but $1 (a source path)
	local c
	for c in daemon/*.c switchd/*.c hostd/*.c; do
		case $c in "$1"|switchd/main.c|hostd/main.c) continue ;; esac
		echo "$B/${c%.c}.o"
	done
}

pass=0 fail=0
for row in "${MUTANTS[@]}"; do
	IFS=$'\x01' read -r name file subst bin test <<<"${row//@@/$'\x01'}"
	m="$TMP/$name"
	mkdir -p "$m"
	cp "$file" "$m/src.c"
	# The copy compiles with the include paths of the original's folder.
	n=$(perl -0777 -i -pe "\$n += $subst; END { print STDERR \$n + 0 }" "$m/src.c" 2>&1 >/dev/null)
	if [ "$n" != 1 ]; then
		echo "FAIL mutant_$name: the change to $file matched $n times, expected once (stale row?)"
		fail=$((fail + 1)); continue
	fi
	if ! $CC $CFLAGS -I"$(dirname "$file")" -c "$m/src.c" -o "$m/src.o" 2>"$m/cc.log"; then
		echo "FAIL mutant_$name: does not compile: $(head -3 "$m/cc.log")"
		fail=$((fail + 1)); continue
	fi
	# shellcheck disable=SC2046
	if ! $CC -o "$m/test" "$B/tests/unit/$bin.o" "$m/src.o" $(lib_objs "$file") $LDLIBS \
		2>"$m/ld.log"; then
		echo "FAIL mutant_$name: does not link: $(head -3 "$m/ld.log")"
		fail=$((fail + 1)); continue
	fi
	"$m/test" >"$m/out.txt" 2>&1
	if grep -q "^FAIL $test\$" "$m/out.txt"; then
		echo "PASS mutant_$name: $file broken, caught by $test"
		pass=$((pass + 1))
	else
		echo "FAIL mutant_$name: $file broken ($subst) and $test still passes"
		fail=$((fail + 1))
	fi
done
echo "# unit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
