-- SPDX-License-Identifier: BSD-2-Clause
--
-- Wireshark dissector for l2cc control messages (ethertype 0x88B6, IEEE
-- local experimental 2). PAUSE and PFC need nothing from us: Wireshark's own
-- MAC Control dissector decodes them. Layout: docs/wire-formats.md and
-- bpf/l2cc_shared.h (struct l2cc_ctrl_hdr, struct l2cc_credit).
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

local ctrl_types = { [1] = "CREDIT" }
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
l2cc.experts = { e_version, e_length, e_short, e_unit, e_sent_unit }

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
