# SPDX-License-Identifier: BSD-2-Clause
"""Experiment-file keys the McAlpine experiments need (docs/testbed.md):
request/response flows (rr), per-flow priority (prio), and what the
runner makes of them (l2cc-flowgen/iperf3 command lines)."""

import os
import sys
import tempfile
import textwrap
import unittest

from l2cc import experiment as E
from l2cc import topo as T
from l2cc import traffic as TR


def load(text):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "e.yaml")
        with open(p, "w") as f:
            f.write(textwrap.dedent(text))
        return E.load(p)


def errors(text):
    try:
        load(text)
    except E.ExperimentError as e:
        return str(e)
    raise AssertionError("no error")


HEAD = """\
name: t
topology: ../x.yaml
duration: 5
flows:
"""


class FakeTraffic(TR.Traffic):
    """Traffic whose lab is a dict: command lines without a lab."""

    def __init__(self, exp):
        nodes = {h: {"kind": "host", "netns": "ns-" + h, "addr": "10.0.0.%d/24" % i,
                     "rate_bps": 100_000_000} for i, h in enumerate(("c1", "c2", "srv"), 1)}
        super().__init__(exp, {"nodes": nodes}, "/nonexistent", "/bin", say=lambda *a: None)
        self._mtu = lambda host: 1482

    def cmd(self, name):
        f = self.e.flow(name)
        return self._client_cmd(f, 100.0)[0]


class TestRrAndPrio(unittest.TestCase):
    def test_parse(self):
        e = load(HEAD + """\
          - {name: ipc, src: [c1, c2], dst: srv, rr: {rate: 200, req: 100}, prio: 3}
          - {name: video, src: c1, dst: srv, onoff: {on: 1000, off: 0.001}, proto: udp, rate: 10M, prio: 5}
          - {name: db, src: c2, dst: srv}
        """)
        ipc = e.flow("ipc-c1").to_dict()
        self.assertEqual(ipc["kind"], "rr")
        self.assertEqual(ipc["rr"], {"rate": 200.0, "req": 100, "resp": 64})
        self.assertEqual((ipc["proto"], ipc["prio"]), ("udp", 3))
        self.assertEqual(e.flow("video").prio, 5)
        self.assertIsNone(e.flow("db").prio)
        self.assertNotIn("prio", e.flow("db").to_dict())

    def test_errors(self):
        msg = errors(HEAD + """\
          - {name: ipc, src: c1, dst: srv, rr: {rate: 0, req: 10}, prio: 9, rate: 5M}
          - {name: x, src: c1, dst: srv, rr: {rate: 1}, onoff: {on: 1, off: 1}}
          - {name: y, src: c1, dst: srv, prio: 1, iperf_args: [-S, "32"]}
          - {name: z, src: c1, dst: srv, prio: true}
        """)
        for want in ("rate is not for rr flows", "rr.rate: expected requests per second",
                     'rr.req "10"', 'flow "ipc": prio: expected a priority 0..7',
                     "onoff and rr exclude each other", "drop -S from iperf_args",
                     'flow "z": prio'):
            self.assertIn(want, msg)

    def test_command_lines(self):
        e = load(HEAD + """\
          - {name: ipc, src: c1, dst: srv, rr: {rate: 200, req: 100, resp: 1K}, prio: 3}
          - {name: video, src: c1, dst: srv, onoff: {on: 1000, off: 0.001}, proto: udp, rate: 10M, prio: 5}
          - {name: db, src: c2, dst: srv, prio: 2}
          - {name: plain, src: c2, dst: srv}
        """)
        t = FakeTraffic(e)
        t.flowgen = sys.executable          # make_plan only checks it runs
        t.make_plan()
        c = t.cmd("ipc")
        self.assertEqual(c[c.index("--rr") + 1], "200")
        self.assertEqual(c[c.index("--req-size") + 1], "100")
        self.assertEqual(c[c.index("--resp-size") + 1], "1024")
        self.assertEqual(c[c.index("--tos") + 1], "96")       # CS3 = 24 << 2
        self.assertEqual(t.plan["ipc"]["rate_bps"], 200 * 100 * 8)
        c = t.cmd("video")
        self.assertEqual(c[c.index("--tos") + 1], "160")      # CS5
        c = t.cmd("db")
        c = c[c.index("iperf3"):]           # after the launcher's own python -S
        self.assertEqual(c[c.index("-S") + 1], "64")          # CS2
        c = t.cmd("plain")
        self.assertNotIn("-S", c[c.index("iperf3"):])
        self.assertEqual([TR.tos_of(p) >> 5 for p in range(8)], list(range(8)))


    def test_onoff_udp_len(self):
        # An ON/OFF UDP flow's datagram size reaches l2cc-flowgen's --chunk;
        # without len it is the path's MTU less 28.
        e = load(HEAD + """\
          - {name: v, src: c1, dst: srv, onoff: {on: 1000, off: 0.001}, proto: udp, rate: 40k, len: 64}
          - {name: w, src: c1, dst: srv, onoff: {on: 1000, off: 0.001}, proto: udp, rate: 40k}
        """)
        t = FakeTraffic(e)
        t.flowgen = sys.executable
        t.make_plan()
        c = t.cmd("v")
        self.assertEqual(c[c.index("--chunk") + 1], "64")
        c = t.cmd("w")
        self.assertGreater(int(c[c.index("--chunk") + 1]), 1000)
        msg = errors(HEAD + """\
          - {name: a, src: c1, dst: srv, onoff: {on: 1, off: 1}, len: 64}
          - {name: b, src: c1, dst: srv, onoff: {on: 1, off: 1}, proto: udp, len: 16}
          - {name: c, src: c1, dst: srv, poisson: {rate: 1, size: {fixed: 1K}}, len: 64}
        """)
        for want in ('flow "a": len is for UDP ON/OFF flows', 'flow "b": len 16, at least 32',
                     'flow "c": len is for iperf3 flows'):
            self.assertIn(want, msg)


class TestHostMtu(unittest.TestCase):
    class Node:
        def __init__(self, hostd, keys):
            self.hostd = hostd
            self.hostd_keys = {k: T.Item(v, 1) for k, v in keys.items()}

    def test_room_for_the_tags(self):
        N = self.Node
        self.assertEqual(T.host_mtu(N(False, {}), 1500), 1500)
        self.assertEqual(T.host_mtu(N(True, {}), 1500), 1482)
        self.assertEqual(T.host_mtu(N(True, {"pcp_from_dscp": True}), 1500), 1478)
        self.assertEqual(T.host_mtu(N(True, {"pcp_from_dscp": "yes"}), 9000), 8978)
        self.assertEqual(T.host_mtu(N(True, {"pcp_from_dscp": False}), 1500), 1482)


class TestWindowAndEcn(unittest.TestCase):
    def test_flow_window(self):
        e = load(HEAD + """\
          - {name: db, src: c1, dst: srv, window: 64K}
          - {name: u, src: c2, dst: srv, proto: udp}
        """.replace("flows:", "defaults: {window: 32K}\nflows:"))
        self.assertEqual(e.flow("db").window, 65536)
        self.assertIsNone(e.flow("u").window)      # defaults.window: TCP flows only
        t = FakeTraffic(e)
        t.flowgen = sys.executable
        t.make_plan()
        c = t.cmd("db")
        c = c[c.index("iperf3"):]
        self.assertEqual(c[c.index("-w") + 1], "65536")
        msg = errors(HEAD + """\
          - {name: a, src: c1, dst: srv, window: 1K}
          - {name: b, src: c1, dst: srv, proto: udp, window: 64K}
          - {name: c, src: c1, dst: srv, window: 64K, iperf_args: [-w, 1M]}
          - {name: d, src: c1, dst: srv, rr: {rate: 10}, window: 64K}
        """)
        for want in ('flow "a": window "1K"', 'flow "b": window is for TCP flows',
                     "drop -w from iperf_args", 'flow "d": window is for iperf3 flows'):
            self.assertIn(want, msg)

    def topo(self, text):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "t.yaml")
            with open(p, "w") as f:
                f.write(textwrap.dedent(text))
            return T.load(p)

    def test_host_keys(self):
        from l2cc import lab as L
        t = self.topo("""\
            name: t
            defaults: {tcp_ecn: 1, tcp_window: 64K}
            nodes:
              S: {kind: switch}
              a: {kind: host}
              b: {kind: host, tcp_ecn: 0, tcp_window: 1M}
            links:
              - endpoints: ["S:p1", "a:eth0"]
              - endpoints: ["S:p2", "b:eth0"]
        """)
        a, b = t.nodes["a"], t.nodes["b"]
        self.assertEqual((a.tcp_ecn, a.tcp_window), (1, 65536))
        self.assertEqual((b.tcp_ecn, b.tcp_window), (0, 1 << 20))
        self.assertEqual(L.host_sysctls(a), [("net.ipv4.tcp_ecn", "1"),
                                             ("net.ipv4.tcp_rmem", "4096 131072 131072"),
                                             ("net.ipv4.tcp_wmem", "4096 16384 131072")])
        self.assertEqual(L.host_sysctls(b)[1], ("net.ipv4.tcp_rmem", "4096 131072 2097152"))
        t = self.topo("""\
            name: t
            nodes:
              S: {kind: switch}
              a: {kind: host}
            links:
              - endpoints: ["S:p1", "a:eth0"]
        """)
        self.assertEqual(L.host_sysctls(t.nodes["a"]), [])

    def test_host_key_errors(self):
        try:
            self.topo("""\
                name: t
                nodes:
                  S: {kind: switch, tcp_ecn: 1}
                  a: {kind: host, tcp_ecn: 3, tcp_window: lots}
                links:
                  - endpoints: ["S:p1", "a:eth0"]
            """)
        except T.FileErrors as e:
            msg = str(e)
        else:
            self.fail("no error")
        self.assertIn('tcp_ecn "3" in node a', msg)
        self.assertIn('tcp_window "lots" in node a', msg)
        self.assertIn('unknown key "tcp_ecn" in node S (kind switch)', msg)


if __name__ == "__main__":
    unittest.main()
