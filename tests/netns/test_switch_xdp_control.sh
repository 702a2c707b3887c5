#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# PAUSE and PFC reach the switch while its receive ring is held:
#
#   x --pa (10M, pause/pfc, 8K buffer)-- S --pb (1M)-- hb
#
# x (a raw socket, no daemon) sends 1200 data frames of 1000 bytes to hb and
# then one PAUSE (or PFC) of 65535 quanta. pa's input buffer fills at once
# and S holds the rest in pa's RX ring (rx_holds): the ring drains at pb's
# 1M, 8 ms a frame, so the frames ahead of the PAUSE take seconds to pass.
# With xdp_control = yes the XDP program applies the PAUSE as it arrives and
# S counts it (pause_rx) and honours it (paused_ns) while the ring still
# holds nearly all of them; with no, it waits behind them (or is lost when
# the ring was full). No timing threshold is tight: the drain is paced at
# 1M, and a slow machine only drains slower.
. "$(dirname "$0")/lib.sh"

NDATA=1200
DLEN=1000
# Frames S may have taken off pa's ring by the time it reports the PAUSE:
# 10 s of draining at 1M (125 frames/s) is far below NDATA.
HELD_MAX=600

setup() {
	mk_switch S
	mk_host x
	mk_host hb
	link_host S pa x 1
	link_host S pb hb 2
}

# blast KIND: NDATA data frames from x to hb, then one control frame (pause,
# pfc), back to back from a raw socket on x's eth0.
blast() {
	hx x "$PY" - "$(host_mac x)" "$(host_mac hb)" "$1" "$NDATA" "$DLEN" <<'PYEOF'
import socket, struct, sys
src, dst = (bytes.fromhex(m.replace(":", "")) for m in sys.argv[1:3])
kind, n, dlen = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 22)
data = dst + src + b"\x88\xb7" + bytes(dlen - 14)
for _ in range(n):
    while True:
        try:
            s.send(data)
            break
        except BlockingIOError:
            pass
ll = bytes.fromhex("0180c2000001")
if kind == "pause":
    body = struct.pack("!HH", 1, 65535)
else:
    body = struct.pack("!HH8H", 0x0101, 0x01, 65535, 0, 0, 0, 0, 0, 0, 0)
s.send((ll + src + b"\x88\x08" + body).ljust(60, b"\0"))
PYEOF
}

pa_counters() { # -> JSON of pa's counters
	ctl S counters | "$PY" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["ports"]["pa"]))'
}

# For wait_for: pa has counted a PAUSE/PFC (its counter name in $1).
pa_got() {
	local c
	c=$(pa_counters) || return 1
	echo "$c"
	[ "$(jget "$c" "d['$1']")" -ge 1 ]
}

t_held() { # KIND XDP_CONTROL
	local kind=$1 xdpc=$2 c taken fc
	fc=$kind
	start_switchd S "
[port pa]
ifname = $(ifn pa)
role = switch
rate = 10M
buffer = 8K
flow_control = $fc
xdp_control = $xdpc
[port pb]
ifname = $(ifn pb)
rate = 1M"
	# S learns where both hosts are.
	hx hb ping -c 1 -W 5 10.99.0.1 >/dev/null || fail "ping hb -> x"
	blast "$kind" || fail "sending from x"
	if [ "$xdpc" = yes ]; then
		wait_for -t 10 "S to count the $kind on pa" pa_got "${kind}_rx"
		c=$(pa_counters) || fail "l2ccctl S counters"
		taken=$(jget "$c" 'd["rx_frames"] - d["pause_rx"] - d["pfc_rx"]')
		info "$kind, xdp_control = yes: pa ${kind}_rx $(jget "$c" "d['${kind}_rx']"), paused $(jget "$c" 'd["paused_ns"] / 1e6') ms, rx_holds $(jget "$c" 'd["rx_holds"]'), data frames taken off the ring $taken of $NDATA, consumed in XDP $(jget "$c" 'd["xdp"]["prog_ctrl"]')"
		assert_eq "$(jget "$c" "d['${kind}_rx']")" 1 "$kind: pa ${kind}_rx"
		assert_eq "$(jget "$c" 'd["xdp"]["prog_ctrl"]')" 1 "$kind: pa xdp prog_ctrl"
		assert_eq "$(jget "$c" 'd["fc_ignored"]')" 0 "$kind: pa fc_ignored"
		assert_ge "$(jget "$c" 'd["paused_ns"]')" 1 "$kind: pa paused_ns"
		assert_ge "$(jget "$c" 'd["rx_holds"]')" 1 "$kind: pa rx_holds (the ring was held)"
		assert_le "$taken" "$HELD_MAX" "$kind: data frames S had taken off pa's ring when the $kind counted"
	else
		# The control frame sits behind the held frames: for as long as
		# the ring holds most of them, S has not seen it.
		sleep 2
		c=$(pa_counters) || fail "l2ccctl S counters"
		taken=$(jget "$c" 'd["rx_frames"]')
		info "$kind, xdp_control = no: after 2 s pa ${kind}_rx $(jget "$c" "d['${kind}_rx']"), rx_holds $(jget "$c" 'd["rx_holds"]'), frames taken off the ring $taken of $NDATA"
		assert_ge "$(jget "$c" 'd["rx_holds"]')" 1 "$kind: pa rx_holds (the ring was held)"
		assert_le "$taken" "$HELD_MAX" "$kind: frames S had taken off pa's ring"
		assert_eq "$(jget "$c" "d['${kind}_rx']")" 0 "$kind: pa ${kind}_rx while the ring is held"
		assert_eq "$(jget "$c" 'd["xdp"]["prog_ctrl"]')" 0 "$kind: pa xdp prog_ctrl"
	fi
	stop_switchd S || fail "switchd S did not stop"
}

run_setup setup
run_test xdp_control_pause_held t_held pause yes
run_test xdp_control_pfc_held t_held pfc yes
run_test xdp_control_off_pause_waits t_held pause no
tests_done
