-- SPDX-License-Identifier: BSD-2-Clause
--
-- Wireshark dissector for the l2cc data tag (ethertype 0x88B5, IEEE local
-- experimental 1) and l2cc control messages (ethertype 0x88B6, IEEE local
-- experimental 2: CREDIT, CNP, ACK, L2CI DISCOVER/ECHO/FEEDBACK), and the 802.1Qau CNM (0x22E7) and
-- CN-TAG (0x22E9) that Wireshark does not decode. PAUSE and PFC need nothing from us:
-- Wireshark's own MAC Control dissector decodes them. Layout:
-- docs/wire-formats.md and bpf/l2cc_shared.h (struct l2cc_data_tag,
-- struct l2cc_ctrl_hdr, struct l2cc_credit, struct l2cc_cnp, struct l2cc_ack).
--
-- Use:  wireshark -X lua_script:scripts/wireshark/l2cc.lua
--       tshark -X lua_script:scripts/wireshark/l2cc.lua -r capture.pcap -V
-- or copy this file into ~/.local/lib/wireshark/plugins/.

local ETH_P_L2CC_CTRL = 0x88B6
local L2CC_WIRE_VERSION = 1
local CTRL_HLEN = 4
local CREDIT_LEN = 132
local CREDIT_UNIT_NONE = 0xff

local l2cc = Proto("l2cc", "l2cc control")

local ctrl_types = { [1] = "CREDIT", [2] = "CNP", [3] = "ACK", [4] = "DISCOVER",
	[5] = "DISCOVER_ECHO", [6] = "FEEDBACK" }
local DISC_LEN = 24
local FB_LEN = 18
local CNP_LEN = 12
local ACK_LEN = 12
local ACK_ECE = 0x01
local credit_units = { [0] = "bytes", [1] = "frames" }
-- sent_unit may also say that sent[] carries nothing (L2CC_CREDIT_UNIT_NONE).
local sent_units = { [0] = "bytes", [1] = "frames", [CREDIT_UNIT_NONE] = "none" }

local f = {
	version   = ProtoField.uint8("l2cc.version", "Version", base.DEC),
	type      = ProtoField.uint8("l2cc.type", "Type", base.DEC, ctrl_types),
	length    = ProtoField.uint16("l2cc.length", "Length", base.DEC),
	unit      = ProtoField.uint8("l2cc.credit.unit", "Unit", base.DEC, credit_units),
	prio_mask = ProtoField.uint8("l2cc.credit.prio_mask", "Priority mask", base.HEX),
	sent_unit = ProtoField.uint8("l2cc.credit.sent_unit", "Sent unit", base.DEC, sent_units),
	reserved  = ProtoField.uint8("l2cc.credit.reserved", "Reserved", base.HEX),
	body      = ProtoField.bytes("l2cc.body", "Body"),
	cnp_flow     = ProtoField.uint16("l2cc.cnp.flow", "Flow", base.DEC),
	cnp_reserved = ProtoField.uint16("l2cc.cnp.reserved", "Reserved", base.HEX),
	cnp_seq      = ProtoField.uint32("l2cc.cnp.seq", "Seq", base.DEC),
	cnp_marked   = ProtoField.uint32("l2cc.cnp.marked", "Marked", base.DEC),
	ack_flow     = ProtoField.uint16("l2cc.ack.flow", "Flow", base.DEC),
	ack_flags    = ProtoField.uint8("l2cc.ack.flags", "Flags", base.HEX),
	ack_ece      = ProtoField.bool("l2cc.ack.flags.ece", "ECE", 8, nil, ACK_ECE),
	ack_reserved = ProtoField.uint8("l2cc.ack.reserved", "Reserved", base.HEX),
	ack_cum_seq  = ProtoField.uint32("l2cc.ack.cum_seq", "Cumulative seq", base.DEC),
	ack_frames   = ProtoField.uint32("l2cc.ack.frames", "Frames", base.DEC),
	disc_flow     = ProtoField.uint16("l2cc.l2ci.flow", "Path (flow)", base.DEC),
	disc_hops     = ProtoField.uint8("l2cc.l2ci.hops", "Hops", base.DEC),
	disc_flags    = ProtoField.uint8("l2cc.l2ci.flags", "Flags", base.HEX),
	disc_seq      = ProtoField.uint32("l2cc.l2ci.seq", "Seq", base.DEC),
	disc_path_bps = ProtoField.uint64("l2cc.l2ci.path_bps", "Path speed (bit/s)", base.DEC),
	disc_t_tx     = ProtoField.uint64("l2cc.l2ci.t_tx", "Sent at (ns)", base.DEC),
	fb_flow       = ProtoField.uint16("l2cc.fb.flow", "Path (flow)", base.DEC),
	fb_hop        = ProtoField.uint8("l2cc.fb.hop", "Hop", base.DEC),
	fb_max_hop    = ProtoField.uint8("l2cc.fb.max_hop", "Set at hop", base.DEC),
	fb_seq        = ProtoField.uint32("l2cc.fb.seq", "Seq", base.DEC),
	fb_level      = ProtoField.uint16("l2cc.fb.level", "Level (0.01 %)", base.DEC),
	fb_speed      = ProtoField.uint16("l2cc.fb.speed", "Speed of the setter (Mbit/s)", base.DEC),
	fb_setter     = ProtoField.ether("l2cc.fb.setter", "Set by"),
	padding   = ProtoField.bytes("l2cc.padding", "Padding"),
}
-- One named field per priority, so a display filter can say l2cc.credit.limit5 > 0.
for p = 0, 7 do
	f["limit" .. p] = ProtoField.uint64("l2cc.credit.limit" .. p,
		"Limit[" .. p .. "]", base.DEC)
end
for p = 0, 7 do
	f["sent" .. p] = ProtoField.uint64("l2cc.credit.sent" .. p,
		"Sent[" .. p .. "]", base.DEC)
end
l2cc.fields = f

local e_version = ProtoExpert.new("l2cc.version.unknown", "Unknown l2cc wire version",
	expert.group.PROTOCOL, expert.severity.WARN)
local e_length = ProtoExpert.new("l2cc.length.bad", "Length exceeds the frame",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_short = ProtoExpert.new("l2cc.short", "Truncated l2cc message",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_unit = ProtoExpert.new("l2cc.credit.unit.bad", "Unknown credit unit",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_sent_unit = ProtoExpert.new("l2cc.credit.sent_unit.bad", "Unknown sent unit",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_marked = ProtoExpert.new("l2cc.cnp.marked.zero", "CNP standing for no marked frame",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_ece = ProtoExpert.new("l2cc.ack.ece.noframes", "ECE set on an ACK covering no frame",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_bps = ProtoExpert.new("l2cc.l2ci.path_bps.zero", "DISCOVER with a path speed of 0",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_maxhop = ProtoExpert.new("l2cc.fb.max_hop.bad", "FEEDBACK set at a hop not yet passed",
	expert.group.MALFORMED, expert.severity.ERROR)
l2cc.experts = { e_version, e_length, e_short, e_unit, e_sent_unit, e_marked, e_ece,
	e_bps, e_maxhop }

-- Body offsets, as in struct l2cc_credit.
local OFF_LIMIT = 4
local OFF_SENT = OFF_LIMIT + 8 * 8

local function dissect_credit(tvb, pinfo, tree)
	if tvb:len() < CREDIT_LEN then
		tree:add_proto_expert_info(e_short,
			"CREDIT body shorter than " .. CREDIT_LEN .. " bytes")
		return
	end
	local unit = tvb(0, 1):uint()
	local ui = tree:add(f.unit, tvb(0, 1))
	if credit_units[unit] == nil then
		ui:add_proto_expert_info(e_unit)
	end
	tree:add(f.prio_mask, tvb(1, 1))
	local mask = tvb(1, 1):uint()
	local sent_unit = tvb(2, 1):uint()
	local si = tree:add(f.sent_unit, tvb(2, 1))
	if sent_units[sent_unit] == nil then
		si:add_proto_expert_info(e_sent_unit)
	end
	tree:add(f.reserved, tvb(3, 1))
	for p = 0, 7 do
		local item = tree:add(f["limit" .. p], tvb(OFF_LIMIT + 8 * p, 8))
		if bit.band(mask, bit.lshift(1, p)) == 0 then
			item:append_text(" (not in prio_mask)")
		end
	end
	for p = 0, 7 do
		local item = tree:add(f["sent" .. p], tvb(OFF_SENT + 8 * p, 8))
		if sent_unit == CREDIT_UNIT_NONE then
			item:append_text(" (not valid: sent unit none)")
		elseif bit.band(mask, bit.lshift(1, p)) == 0 then
			item:append_text(" (not in prio_mask)")
		end
	end
	if tvb:len() > CREDIT_LEN then
		-- Fields a later release appended: accepted and ignored.
		tree:add(f.body, tvb(CREDIT_LEN))
	end
	pinfo.cols.info:append(string.format(" mask 0x%02x, unit %s, sent unit %s",
		mask, credit_units[unit] or tostring(unit),
		sent_units[sent_unit] or tostring(sent_unit)))
end

local function dissect_cnp(tvb, pinfo, tree)
	if tvb:len() < CNP_LEN then
		tree:add_proto_expert_info(e_short, "CNP body shorter than " .. CNP_LEN .. " bytes")
		return
	end
	tree:add(f.cnp_flow, tvb(0, 2))
	tree:add(f.cnp_reserved, tvb(2, 2))
	tree:add(f.cnp_seq, tvb(4, 4))
	local mi = tree:add(f.cnp_marked, tvb(8, 4))
	if tvb(8, 4):uint() == 0 then
		mi:add_proto_expert_info(e_marked)
	end
	if tvb:len() > CNP_LEN then
		tree:add(f.body, tvb(CNP_LEN))
	end
	pinfo.cols.info:append(string.format(" flow %d, seq %d, marked %d",
		tvb(0, 2):uint(), tvb(4, 4):uint(), tvb(8, 4):uint()))
end

local function dissect_ack(tvb, pinfo, tree)
	if tvb:len() < ACK_LEN then
		tree:add_proto_expert_info(e_short, "ACK body shorter than " .. ACK_LEN .. " bytes")
		return
	end
	local flags = tvb(2, 1):uint()
	local frames = tvb(8, 4):uint()
	tree:add(f.ack_flow, tvb(0, 2))
	local fi = tree:add(f.ack_flags, tvb(2, 1))
	fi:add(f.ack_ece, tvb(2, 1))
	tree:add(f.ack_reserved, tvb(3, 1))
	tree:add(f.ack_cum_seq, tvb(4, 4))
	local ni = tree:add(f.ack_frames, tvb(8, 4))
	local ece = bit.band(flags, ACK_ECE) ~= 0
	if ece and frames == 0 then
		ni:add_proto_expert_info(e_ece)
	elseif ece then
		-- Santos/Turner reliable mode: N frames with a mark = N-1 unmarked + 1 marked
		ni:append_text(string.format(" (%d unmarked + 1 marked)", frames - 1))
	end
	if tvb:len() > ACK_LEN then
		tree:add(f.body, tvb(ACK_LEN))
	end
	pinfo.cols.info:append(string.format(" flow %d, cum seq %d, frames %d%s",
		tvb(0, 2):uint(), tvb(4, 4):uint(), frames, ece and ", ECE" or ""))
end

-- DISCOVER and DISCOVER_ECHO share a body (struct l2cc_discover).
local function dissect_discover(tvb, pinfo, tree)
	if tvb:len() < DISC_LEN then
		tree:add_proto_expert_info(e_short, "DISCOVER body shorter than " .. DISC_LEN .. " bytes")
		return
	end
	tree:add(f.disc_flow, tvb(0, 2))
	tree:add(f.disc_hops, tvb(2, 1))
	tree:add(f.disc_flags, tvb(3, 1))
	tree:add(f.disc_seq, tvb(4, 4))
	local bi = tree:add(f.disc_path_bps, tvb(8, 8))
	if tvb(8, 8):uint64() == UInt64(0) then
		bi:add_proto_expert_info(e_bps)
	end
	tree:add(f.disc_t_tx, tvb(16, 8))
	if tvb:len() > DISC_LEN then
		tree:add(f.body, tvb(DISC_LEN))
	end
	pinfo.cols.info:append(string.format(" path %d, hops %d, %s bit/s",
		tvb(0, 2):uint(), tvb(2, 1):uint(), tostring(tvb(8, 8):uint64())))
end

local function dissect_feedback(tvb, pinfo, tree)
	if tvb:len() < FB_LEN then
		tree:add_proto_expert_info(e_short, "FEEDBACK body shorter than " .. FB_LEN .. " bytes")
		return
	end
	local level = tvb(8, 2):uint()
	tree:add(f.fb_flow, tvb(0, 2))
	tree:add(f.fb_hop, tvb(2, 1))
	local mi = tree:add(f.fb_max_hop, tvb(3, 1))
	if tvb(3, 1):uint() > tvb(2, 1):uint() then
		mi:add_proto_expert_info(e_maxhop)
	elseif tvb(3, 1):uint() == 0 then
		mi:append_text(" (the egress)")
	end
	tree:add(f.fb_seq, tvb(4, 4))
	tree:add(f.fb_level, tvb(8, 2)):append_text(string.format(" = %.2f %%", level / 100))
	local si = tree:add(f.fb_speed, tvb(10, 2))
	if tvb(10, 2):uint() == 0 then
		si:append_text(" (not given)")
	end
	tree:add(f.fb_setter, tvb(12, 6))
	if tvb:len() > FB_LEN then
		tree:add(f.body, tvb(FB_LEN))
	end
	pinfo.cols.info:append(string.format(" path %d, level %.2f %% at hop %d of %d, %d Mbit/s",
		tvb(0, 2):uint(), level / 100, tvb(3, 1):uint(), tvb(2, 1):uint(), tvb(10, 2):uint()))
end

function l2cc.dissector(tvb, pinfo, tree)
	pinfo.cols.protocol = "L2CC"
	local len = tvb:len()
	local t = tree:add(l2cc, tvb())
	if len < CTRL_HLEN then
		t:add_proto_expert_info(e_short, "Header shorter than 4 bytes")
		pinfo.cols.info = "l2cc control [truncated]"
		return len
	end

	local version = tvb(0, 1):uint()
	local vi = t:add(f.version, tvb(0, 1))
	local typ = tvb(1, 1):uint()
	t:add(f.type, tvb(1, 1))
	local blen = tvb(2, 2):uint()
	local li = t:add(f.length, tvb(2, 2))

	local tname = ctrl_types[typ] or string.format("type %d", typ)
	pinfo.cols.info = "l2cc " .. tname
	t:append_text(", " .. tname)

	if version ~= L2CC_WIRE_VERSION then
		-- Another version may lay out everything after the header differently.
		vi:add_proto_expert_info(e_version)
		return len
	end
	if blen > len - CTRL_HLEN then
		li:add_proto_expert_info(e_length)
		return len
	end

	local body = tvb(CTRL_HLEN, blen)
	if typ == 1 then
		dissect_credit(body:tvb(), pinfo, t)
	elseif typ == 2 then
		dissect_cnp(body:tvb(), pinfo, t)
	elseif typ == 3 then
		dissect_ack(body:tvb(), pinfo, t)
	elseif typ == 4 or typ == 5 then
		dissect_discover(body:tvb(), pinfo, t)
	elseif typ == 6 then
		dissect_feedback(body:tvb(), pinfo, t)
	elseif blen > 0 then
		t:add(f.body, body)
	end
	if len > CTRL_HLEN + blen then
		-- Ethernet padding up to the 60-byte minimum
		t:add(f.padding, tvb(CTRL_HLEN + blen))
	end
	return len
end

DissectorTable.get("ethertype"):add(ETH_P_L2CC_CTRL, l2cc)

-- ---- data tag (0x88B5) ----------------------------------------------------
-- DA SA [VLAN tags] 88B5 version flags flow seq cpid inner_type payload:
-- after the tag, the payload is handed to the ethertype table by inner_type,
-- so IP (or anything else) inside a tagged frame is decoded as usual.

local ETH_P_L2CC_TAG = 0x88B5
local TAG_LEN = 18
local TAG_FECN = 0x01
local TAG_RLT = 0x02

local l2cc_tag = Proto("l2cc_tag", "l2cc data tag")

-- Lua cannot reach Wireshark's ethertype names; the common ones are enough
-- here, the payload below is named by its own dissector anyway.
local inner_types = { [0x0800] = "IPv4", [0x0806] = "ARP", [0x86DD] = "IPv6" }

local tf = {
	version    = ProtoField.uint8("l2cc_tag.version", "Version", base.DEC),
	flags      = ProtoField.uint8("l2cc_tag.flags", "Flags", base.HEX),
	fecn       = ProtoField.bool("l2cc_tag.flags.fecn", "FECN", 8, nil, TAG_FECN),
	rlt        = ProtoField.bool("l2cc_tag.flags.rlt", "RLT", 8, nil, TAG_RLT),
	flow       = ProtoField.uint16("l2cc_tag.flow", "Flow", base.DEC),
	seq        = ProtoField.uint32("l2cc_tag.seq", "Seq", base.DEC),
	cpid       = ProtoField.bytes("l2cc_tag.cpid", "CPID"),
	inner_type = ProtoField.uint16("l2cc_tag.inner_type", "Type", base.HEX, inner_types),
}
l2cc_tag.fields = tf

local e_tag_version = ProtoExpert.new("l2cc_tag.version.unknown", "Unknown l2cc wire version",
	expert.group.PROTOCOL, expert.severity.WARN)
local e_tag_short = ProtoExpert.new("l2cc_tag.short", "Truncated l2cc data tag",
	expert.group.MALFORMED, expert.severity.ERROR)
l2cc_tag.experts = { e_tag_version, e_tag_short }

local ethertype_table = DissectorTable.get("ethertype")

function l2cc_tag.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	local t = tree:add(l2cc_tag, tvb(0, math.min(len, TAG_LEN)))
	if len < 1 then
		t:add_proto_expert_info(e_tag_short)
		return len
	end
	local vi = t:add(tf.version, tvb(0, 1))
	if tvb(0, 1):uint() ~= L2CC_WIRE_VERSION then
		-- Another version may lay out the tag differently: decode nothing else.
		vi:add_proto_expert_info(e_tag_version)
		pinfo.cols.protocol = "L2CC"
		pinfo.cols.info = "l2cc data tag, unknown version"
		return len
	end
	if len < TAG_LEN then
		t:add_proto_expert_info(e_tag_short)
		pinfo.cols.protocol = "L2CC"
		pinfo.cols.info = "l2cc data tag [truncated]"
		return len
	end
	local flags = tvb(1, 1):uint()
	local fi = t:add(tf.flags, tvb(1, 1))
	fi:add(tf.fecn, tvb(1, 1))
	fi:add(tf.rlt, tvb(1, 1))
	t:add(tf.flow, tvb(2, 2))
	t:add(tf.seq, tvb(4, 4))
	local ci = t:add(tf.cpid, tvb(8, 8))
	if bit.band(flags, TAG_RLT) == 0 then
		ci:append_text(" (not valid: RLT clear)")
	end
	local inner = tvb(16, 2):uint()
	t:add(tf.inner_type, tvb(16, 2))

	local marks = {}
	if bit.band(flags, TAG_FECN) ~= 0 then marks[#marks + 1] = "FECN" end
	if bit.band(flags, TAG_RLT) ~= 0 then marks[#marks + 1] = "RLT" end
	t:append_text(string.format(", Flow: %d, Seq: %d%s", tvb(2, 2):uint(), tvb(4, 4):uint(),
		#marks > 0 and ", " .. table.concat(marks, ", ") or ""))

	if len > TAG_LEN then
		local payload = tvb(TAG_LEN):tvb()
		-- try() falls back to the data dissector for an unknown ethertype.
		ethertype_table:try(inner, payload, pinfo, tree)
	end
	return len
end

ethertype_table:add(ETH_P_L2CC_TAG, l2cc_tag)

-- ---- 802.1Qau CNM (0x22E7) -------------------------------------------------
-- Wireshark (4.0) has no dissector for the congestion notification message
-- that l2cc's BCN and QCN congestion points send. Layout: struct l2cc_cnm
-- in bpf/l2cc_shared.h, then up to 64 bytes of the sampled frame's MSDU
-- (from its EtherType on). When that MSDU starts with the l2cc data tag, the
-- flow and seq it names are shown (cnm.flow, cnm.seq): what hostd matches.

local ETH_P_CNM = 0x22E7
local CNM_HLEN = 24
local CNM_MSDU_MAX = 64
local CNM_QUNIT = 64

local cnm = Proto("cnm", "802.1Qau congestion notification")
local nf = {
	version    = ProtoField.uint16("cnm.version", "Version", base.DEC, nil, 0xF000),
	reserved   = ProtoField.uint16("cnm.reserved", "Reserved", base.HEX, nil, 0x0FC0),
	qntz_fb    = ProtoField.uint16("cnm.qntz_fb", "QntzFb", base.DEC, nil, 0x003F),
	cpid       = ProtoField.bytes("cnm.cpid", "CPID"),
	qoffset    = ProtoField.int16("cnm.qoffset", "cnmQOffset", base.DEC),
	qdelta     = ProtoField.int16("cnm.qdelta", "cnmQDelta", base.DEC),
	encap_prio = ProtoField.uint16("cnm.encap_prio", "Encapsulated priority", base.DEC, nil, 0xE000),
	encap_da   = ProtoField.ether("cnm.encap_da", "Encapsulated DA"),
	encap_len  = ProtoField.uint16("cnm.encap_len", "Encapsulated MSDU length", base.DEC),
	msdu       = ProtoField.bytes("cnm.msdu", "Encapsulated MSDU"),
	flow       = ProtoField.uint16("cnm.flow", "l2cc flow", base.DEC),
	seq        = ProtoField.uint32("cnm.seq", "l2cc seq", base.DEC),
}
cnm.fields = nf
local e_cnm_version = ProtoExpert.new("cnm.version.unknown", "Unknown CNM version",
	expert.group.PROTOCOL, expert.severity.WARN)
local e_cnm_short = ProtoExpert.new("cnm.short", "Truncated CNM",
	expert.group.MALFORMED, expert.severity.ERROR)
cnm.experts = { e_cnm_version, e_cnm_short }

function cnm.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	pinfo.cols.protocol = "CNM"
	local t = tree:add(cnm, tvb(0, math.min(len, CNM_HLEN)))
	if len < 2 then
		t:add_proto_expert_info(e_cnm_short)
		return len
	end
	local vi = t:add(nf.version, tvb(0, 2))
	if bit.rshift(tvb(0, 2):uint(), 12) ~= 0 then
		vi:add_proto_expert_info(e_cnm_version)
		pinfo.cols.info = "CNM, unknown version"
		return len
	end
	t:add(nf.reserved, tvb(0, 2))
	t:add(nf.qntz_fb, tvb(0, 2))
	if len < CNM_HLEN then
		t:add_proto_expert_info(e_cnm_short)
		pinfo.cols.info = "CNM [truncated]"
		return len
	end
	local fb = bit.band(tvb(0, 2):uint(), 0x3F)
	t:add(nf.cpid, tvb(2, 8))
	t:add(nf.qoffset, tvb(10, 2)):append_text(string.format(" (%d octets)",
		tvb(10, 2):int() * CNM_QUNIT))
	t:add(nf.qdelta, tvb(12, 2)):append_text(string.format(" (%d octets)",
		tvb(12, 2):int() * CNM_QUNIT))
	t:add(nf.encap_prio, tvb(14, 2))
	t:add(nf.encap_da, tvb(16, 6))
	t:add(nf.encap_len, tvb(22, 2))
	local mlen = math.min(tvb(22, 2):uint(), CNM_MSDU_MAX)
	if len < CNM_HLEN + mlen then
		t:add_proto_expert_info(e_cnm_short)
		pinfo.cols.info = "CNM [truncated]"
		return len
	end
	local info = string.format("CNM, QntzFb: %d, CPID: %s", fb,
		string.lower(tostring(tvb(2, 8):bytes())))
	if mlen > 0 then
		t:add(nf.msdu, tvb(CNM_HLEN, mlen))
	end
	-- 88B5, then the tag: version(1) flags(1) flow(2) seq(4)
	if mlen >= 2 + 8 and tvb(CNM_HLEN, 2):uint() == ETH_P_L2CC_TAG and
	   tvb(CNM_HLEN + 2, 1):uint() == L2CC_WIRE_VERSION then
		t:add(nf.flow, tvb(CNM_HLEN + 4, 2))
		t:add(nf.seq, tvb(CNM_HLEN + 6, 4))
		info = info .. string.format(", Flow: %d", tvb(CNM_HLEN + 4, 2):uint())
	end
	t:append_text(string.sub(info, 4))
	pinfo.cols.info = info
	return len
end

ethertype_table:add(ETH_P_CNM, cnm)

-- ---- 802.1Qau CN-TAG (0x22E9) ----------------------------------------------
-- A reaction point may tag its frames with the flow id (RPID) a CNM names;
-- l2cc's data tag does that job (its flow and CPID), so l2cc sends none, but
-- a CN-TAG that arrives is decoded and the frame behind it handed on by its
-- EtherType. Wireshark (4.0) has no dissector for it.

local ETH_P_CNTAG = 0x22E9
local cntag = Proto("cntag", "802.1Qau CN-TAG")
local ctf = {
	rpid = ProtoField.uint16("cntag.rpid", "Flow ID (RPID)", base.DEC),
	type = ProtoField.uint16("cntag.type", "Type", base.HEX, inner_types),
}
cntag.fields = ctf
local e_cntag_short = ProtoExpert.new("cntag.short", "Truncated CN-TAG",
	expert.group.MALFORMED, expert.severity.ERROR)
cntag.experts = { e_cntag_short }

function cntag.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	local t = tree:add(cntag, tvb(0, math.min(len, 4)))
	if len < 4 then
		t:add_proto_expert_info(e_cntag_short)
		return len
	end
	t:add(ctf.rpid, tvb(0, 2))
	t:add(ctf.type, tvb(2, 2))
	t:append_text(string.format(", Flow ID: %d", tvb(0, 2):uint()))
	if len > 4 then
		ethertype_table:try(tvb(2, 2):uint(), tvb(4):tvb(), pinfo, tree)
	end
	return len
end

ethertype_table:add(ETH_P_CNTAG, cntag)
