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
local CREDIT_LEN = 72

local l2cc = Proto("l2cc", "l2cc control")

local ctrl_types = { [1] = "CREDIT" }
local credit_units = { [0] = "bytes", [1] = "frames" }

local f = {
	version   = ProtoField.uint8("l2cc.version", "Version", base.DEC),
	type      = ProtoField.uint8("l2cc.type", "Type", base.DEC, ctrl_types),
	length    = ProtoField.uint16("l2cc.length", "Length", base.DEC),
	unit      = ProtoField.uint8("l2cc.credit.unit", "Unit", base.DEC, credit_units),
	prio_mask = ProtoField.uint8("l2cc.credit.prio_mask", "Priority mask", base.HEX),
	reserved  = ProtoField.uint16("l2cc.credit.reserved", "Reserved", base.HEX),
	session   = ProtoField.uint32("l2cc.credit.session", "Session", base.HEX),
	body      = ProtoField.bytes("l2cc.body", "Body"),
	padding   = ProtoField.bytes("l2cc.padding", "Padding"),
}
-- One named field per priority, so a display filter can say l2cc.credit.limit5 > 0.
for p = 0, 7 do
	f["limit" .. p] = ProtoField.uint64("l2cc.credit.limit" .. p,
		"Limit[" .. p .. "]", base.DEC)
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
l2cc.experts = { e_version, e_length, e_short, e_unit }

local function dissect_credit(tvb, pinfo, tree)
	if tvb:len() < CREDIT_LEN then
		tree:add_proto_expert_info(e_short, "CREDIT body shorter than 72 bytes")
		return
	end
	local unit = tvb(0, 1):uint()
	local ui = tree:add(f.unit, tvb(0, 1))
	if credit_units[unit] == nil then
		ui:add_proto_expert_info(e_unit)
	end
	tree:add(f.prio_mask, tvb(1, 1))
	tree:add(f.reserved, tvb(2, 2))
	tree:add(f.session, tvb(4, 4))
	local mask = tvb(1, 1):uint()
	for p = 0, 7 do
		local item = tree:add(f["limit" .. p], tvb(8 + 8 * p, 8))
		if bit.band(mask, bit.lshift(1, p)) == 0 then
			item:append_text(" (not in prio_mask)")
		end
	end
	pinfo.cols.info:append(string.format(" session 0x%08x, mask 0x%02x, unit %s",
		tvb(4, 4):uint(), mask, credit_units[unit] or tostring(unit)))
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
