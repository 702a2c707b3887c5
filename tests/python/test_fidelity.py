# SPDX-License-Identifier: BSD-2-Clause
"""The fidelity gate (scripts/l2cc/fidelity.py) and the frame account
(scripts/l2cc/account.py) on synthetic runs and counter snapshots: when a
run held, and where frames went missing."""

import copy
import unittest

from l2cc import account as A
from l2cc import checks as C

try:
    import numpy as np
    from l2cc import fidelity as F
except ImportError:         # numpy: python3-numpy
    np = F = None

LAB = {"nodes": {
    "S": {"kind": "switch", "netns": "t-S", "ctl": "S.sock",
          "ports": {"p1": {"ifname": "p1", "peer": "h1"}, "p2": {"ifname": "p2", "peer": "h2"}}},
    "h1": {"kind": "host", "netns": "t-h1", "hostd": True, "ctl": "h1.sock"},
    "h2": {"kind": "host", "netns": "t-h2", "hostd": False, "ctl": None}},
    "links": [{"a": "S:p1", "b": "h1:eth0"}, {"a": "S:p2", "b": "h2:eth0"}]}


def port(rx, tx, ctrl_rx=0, ctrl_tx=0, drop=None, voq=0, xdp=None, **kw):
    d = {"rx_frames": rx, "tx_frames": tx, "ctrl_rx_frames": ctrl_rx,
         "ctrl_tx_frames": ctrl_tx, "cpu_tx": 0, "flood_tx": 0, "flood_unsent": 0,
         "voq_frames": voq, "xdp_forwarded": 0, "drop": drop or {},
         "xdp": dict({"rx_ring_full": 0, "rx_dropped": 0, "prog_no_socket": 0,
                      "prog_runt": 0}, **(xdp or {}))}
    d.update(kw)
    return d


def iface(name, tx, rx, tx_dropped=0, rx_dropped=0):
    return {"ifname": name, "stats64": {"tx": {"packets": tx, "dropped": tx_dropped},
                                        "rx": {"packets": rx, "dropped": rx_dropped}}}


def snap(p1, p2, up, h2, links_s=None):
    """h1 (hostd) sends up[0] frames (up[2] of them its CREDITs) and
    receives up[1] (up[3] control); h2's stack (tx, rx)."""
    return {"daemons": {
        "S": {"ports": {"p1": p1, "p2": p2}, "cpu_port": {"drop": {}}},
        "h1": {"uplink": {"tx_frames": up[0], "rx_frames": up[1], "ctrl_tx_frames": up[2],
                          "ctrl_rx_frames": up[3]},
               "xdp_uplink": {"rx_ring_full": 0, "rx_dropped": 0, "prog_no_socket": 0,
                              "prog_runt": 0}}},
        "links": {"t-S": links_s or [iface("p1", 0, 0), iface("p2", 0, 0)],
                  "t-h1": [iface("up0", 0, 0)], "t-h2": [iface("eth0", h2[0], h2[1])]},
        "quiet": True}


class TestAccount(unittest.TestCase):
    def setUp(self):
        self.before = snap(port(0, 0), port(0, 0), (0, 0, 0, 0), (0, 0))
        # h1 sent 1000 data frames and 20 CREDITs; S took them on p1 and
        # sent 990 data frames (10 dropped buffer_full) and 5 PAUSE on p2;
        # h2 sent 300 frames, S sent them to h1 with 15 CREDITs of its own.
        self.after = snap(port(1020, 315, ctrl_rx=20, ctrl_tx=15),
                          port(300, 995, ctrl_tx=5, drop={"buffer_full": 10,
                                                          "flood_limit": 4}),
                          (1020, 315, 20, 15), (300, 995))

    def test_closes(self):
        a = A.take(LAB, self.before, self.after)
        self.assertTrue(a["closed"], a["why"])
        self.assertEqual(a["sent_into_fabric"], 1000 + 300)
        # buffer_full is a dropped frame; flood_limit a refused copy, no frame.
        self.assertEqual(a["fabric_drops"]["total"], 10)
        self.assertEqual(a["fabric_drops"]["by_reason"], {"buffer_full": 10})
        self.assertEqual(a["switches"][0]["residual"], 0)

    def test_missing_frame_names_the_link(self):
        after = copy.deepcopy(self.after)
        after["daemons"]["S"]["ports"]["p1"]["rx_frames"] -= 3     # 3 never arrived
        after["daemons"]["S"]["ports"]["p1"]["tx_frames"] -= 0
        a = A.take(LAB, self.before, after)
        self.assertFalse(a["closed"])
        self.assertIn("link h1:uplink>S:p1: +3 frames unaccounted", a["why"])

    def test_kernel_drops_explain_and_count(self):
        after = copy.deepcopy(self.after)
        after["daemons"]["S"]["ports"]["p1"]["rx_frames"] -= 3
        after["daemons"]["S"]["ports"]["p1"]["xdp"]["rx_dropped"] = 3
        # The switch lost them before it saw them: its own equation still closes.
        after["daemons"]["S"]["ports"]["p2"]["tx_frames"] -= 3
        after["links"]["t-h2"][0]["stats64"]["rx"]["packets"] -= 3
        a = A.take(LAB, self.before, after)
        self.assertTrue(a["closed"], a["why"])
        self.assertEqual(a["fabric_drops"]["by_reason"].get("kernel_xsk_rx_dropped"), 3)
        self.assertEqual(a["fabric_drops"]["by_port"].get("h1:uplink>S:p1"), 3)

    def test_plain_host_discards_are_not_drops(self):
        after = copy.deepcopy(self.after)
        # h2's stack discarded the 5 PAUSE it received: not a fabric drop.
        after["links"]["t-h2"][0]["stats64"]["rx"]["dropped"] = 5
        a = A.take(LAB, self.before, after)
        self.assertTrue(a["closed"], a["why"])
        self.assertEqual(a["fabric_drops"]["total"], 10)

    def test_switch_residual(self):
        after = copy.deepcopy(self.after)
        after["daemons"]["S"]["ports"]["p2"]["tx_frames"] -= 2        # lost inside S
        after["links"]["t-h2"][0]["stats64"]["rx"]["packets"] -= 2
        a = A.take(LAB, self.before, after)
        self.assertFalse(a["closed"])
        self.assertIn("switch S: +2 frames unaccounted", a["why"])

    def test_cannot_take(self):
        self.assertEqual(A.take(LAB, None, self.after)["closed"], None)
        after = copy.deepcopy(self.after)
        after["daemons"]["S"] = None
        self.assertIs(A.take(LAB, self.before, after)["closed"], False)
        after = copy.deepcopy(self.after)
        del after["daemons"]["S"]["ports"]["p1"]["ctrl_rx_frames"]
        self.assertEqual(A.take(LAB, self.before, after)["closed"], None)
        self.assertTrue(A.take(LAB, self.before, after)["excused"])
        self.assertIs(A.take(LAB, self.before, after, strict=True)["closed"], False)
        after = copy.deepcopy(self.after)
        after["daemons"]["S"]["ports"]["p1"]["xdp_forwarded"] = 7
        self.assertTrue(A.take(LAB, self.before, after, strict=True)["excused"])


class _Run:
    """What fidelity.judge reads of a results.Run."""

    def __init__(self, lost_ns, t=None, phases=None):
        self.t0, self.duration, self.window = 100.0, 10.0, [4.0, 6.0]
        self.exp = {"phases": phases or {}, "fidelity": {}}
        t = np.array(t if t is not None else [100.0 + i for i in range(11)])
        self.sw = {"B": {"t": t, "ports": {"c": {
            "wire_lost_ns": np.array(lost_ns, dtype=float),
            "wire_late_events": np.arange(len(t), dtype=float)}}}}
        self.hd = {}


@unittest.skipIf(F is None, "python3-numpy is missing")
class TestFidelity(unittest.TestCase):
    def res(self, closed=True, flows=()):
        return {"flows": list(flows), "cpu": {"run_delay_max_s": 4.4, "wall_s": 10.8,
                                              "run_delay_max_daemon": "l2ccd"}}

    def test_held(self):
        R = _Run([0] * 11)
        f = F.judge(R, self.res(), {"closed": True}, strict=True)
        self.assertTrue(f["held"], f["why"])
        self.assertEqual(f["wire_lost_max_fraction"], 0.0)
        self.assertIsNone(f["wire_lost_max_port"])

    def test_lost_in_the_window(self):
        # 44 ms lost between 104 and 105 s: 2.2% of the 2 s window.
        R = _Run([0, 0, 0, 0, 0, 44e6, 44e6, 44e6, 44e6, 44e6, 44e6])
        f = F.judge(R, self.res(), {"closed": True}, strict=True)
        self.assertFalse(f["held"])
        self.assertIn("B:c lost 44 ms (2.2% of the window)", f["why"])
        self.assertIn("l2ccd waited 4.40 s of 10.8 s for a CPU", f["why"])

    def test_steal_named(self):
        # A run that did not hold names the hypervisor's steal, when it took
        # a share worth naming; a held run does not (and it is no criterion).
        R = _Run([0, 0, 0, 0, 0, 44e6, 44e6, 44e6, 44e6, 44e6, 44e6])
        res = self.res()
        res["cpu"]["machine_steal_fraction"] = 0.23
        f = F.judge(R, res, {"closed": True}, strict=True)
        self.assertIn("the hypervisor took 23% of the machine's CPU time (steal)", f["why"])
        self.assertEqual(f["machine_steal_fraction"], 0.23)
        res["cpu"]["machine_steal_fraction"] = 0.005
        f = F.judge(R, res, {"closed": True}, strict=True)
        self.assertNotIn("steal", f["why"])
        f = F.judge(_Run([0] * 11), res, {"closed": True}, strict=True)
        self.assertTrue(f["held"])

    def test_lost_outside_the_window(self):
        # 150 ms lost at 1-2 s: nothing in the window, 1.5% of the run.
        R = _Run([0, 0, 150e6] + [150e6] * 8)
        f = F.judge(R, self.res(), {"closed": True}, strict=True)
        self.assertEqual(f["wire_lost_max_fraction"], 0.0)
        self.assertFalse(f["held"])
        self.assertIn("1.5% of the run", f["why"])
        # ... and in a phase it spoils.
        f = F.judge(_Run([0, 0, 150e6] + [150e6] * 8, phases={"p1": [1, 3]}), self.res(),
                    {"closed": True}, strict=True)
        self.assertIn("7.5% of phase p1", f["why"])

    def test_shortfall_and_account(self):
        R = _Run([0] * 11)
        fl = [{"name": "u", "kind": "iperf", "proto": "udp", "offered_bps": 10e6,
               "iperf3": {"sent_bps": 9.5e6}}]
        f = F.judge(R, self.res(flows=fl), {"closed": True}, strict=True)
        self.assertFalse(f["held"])
        self.assertIn("flow u's generator sent 9.5 Mbit/s of the 10 asked (5.0% short)",
                      f["why"])
        # Short, but the path took far less than it sent: not the generator.
        fl[0]["iperf3"]["received_bps"] = 0.24e6
        f = F.judge(R, self.res(flows=fl), {"closed": True}, strict=True)
        self.assertTrue(f["held"], f["why"])
        self.assertTrue(f["shortfall"]["u"]["path_limited"])
        # Sent nothing: its iperf3 test never began (the control connection
        # starved in the fabric).
        fl[0]["iperf3"] = {"sent_bps": 0}
        f = F.judge(R, self.res(flows=fl), {"closed": True}, strict=True)
        self.assertTrue(f["held"], f["why"])
        f = F.judge(R, self.res(), {"closed": False, "why": "link X>Y: +3"}, strict=True)
        self.assertIn("the frame account did not close: link X>Y: +3", f["why"])
        # Not taken: a fault of the run when the daemons are new enough.
        f = F.judge(R, self.res(), {"closed": None, "why": "no snapshots"}, strict=True)
        self.assertFalse(f["held"])
        f = F.judge(R, self.res(), {"closed": None, "excused": True, "why": "xdp"},
                    strict=True)
        self.assertTrue(f["held"])
        self.assertIn("frames not accounted: xdp", f["notes"])


class TestPointsAndExit(unittest.TestCase):
    def run_(self, rep, status, **m):
        return {"label": "p", "point": None, "axes": {}, "axis_labels": {}, "set": {},
                "repeat": rep, "status": status, "error": None, "metrics": m,
                "metric_errors": ["x"] if status == "not-held" else [],
                "result_dir": "r", "seconds": 1.0}

    def test_every_repeat_must_hold(self):
        ms = [C.Metric("v", "v", None, 1)]
        rows = C.point_rows([self.run_(1, "ok", v=1), self.run_(2, "not-held"),
                             self.run_(2, "not-held"), self.run_(2, "not-held")], ms)
        self.assertEqual(rows[0]["status"], "inconclusive")
        # The metric errors of tries that did not hold are not the sweep's.
        self.assertEqual(rows[0]["metric_errors"], [])
        self.assertEqual(C.exit_status([], rows), C.EXIT_INCONCLUSIVE)
        rows = C.point_rows([self.run_(1, "ok", v=1), self.run_(2, "not-held"),
                             self.run_(2, "ok", v=2)], ms)
        self.assertEqual((rows[0]["status"], rows[0]["metrics"]["v"]), ("ok", 1.5))
        self.assertEqual(C.exit_status([], rows), C.EXIT_OK)
        self.assertEqual(C.exit_status([], rows, broken=True), C.EXIT_FAILED)
        failed = [{"ok": False, "verdict": C.FAILED}]
        self.assertEqual(C.exit_status(failed, rows), C.EXIT_FAILED)
        self.assertEqual(C.exit_status(failed, rows, report_only=True), C.EXIT_OK)


if __name__ == "__main__":
    unittest.main()
