# SPDX-License-Identifier: BSD-2-Clause
"""The max-min fair-share oracle (scripts/l2cc/fairshare.py) against
allocations worked out by hand."""

import math
import unittest

from l2cc import fairshare as F


def lab(switches, hosts, rate=10e6):
    """A lab.json `nodes` document: switches {name: [neighbour switches]},
    hosts {name: switch}."""
    nodes = {}
    for sw, nbs in switches.items():
        ports = {"to" + nb: {"peer": nb, "role": "switch", "rate_bps": rate} for nb in nbs}
        nodes[sw] = {"kind": "switch", "ports": ports}
    for h, sw in hosts.items():
        nodes[sw]["ports"]["p" + h] = {"peer": h, "role": "host", "rate_bps": rate}
        nodes[h] = {"kind": "host", "switch": sw, "port": "p" + h, "rate_bps": rate}
    return nodes


def oracle(nodes, pairs, capacity=None, demand=None):
    """max_min over tree paths: pairs {flow: (src, dst)}; every link 10M
    unless capacity says otherwise."""
    flows, cap = {}, {}
    for n, (s, d) in pairs.items():
        path = F.tree_path(nodes, s, d)
        for l in path:
            cap[l] = (capacity or {}).get(l, 10e6)
        flows[n] = F.Flow({l: 1.0 for l in path}, (demand or {}).get(n))
    return F.max_min(cap, flows)


class TestMaxMin(unittest.TestCase):
    def assertRates(self, got, want, places=3):
        for n, r in want.items():
            self.assertAlmostEqual(got[n][0] / 1e6, r / 1e6, places=places, msg=n)

    def test_parking_lot(self):
        # Three links in a row, the long flow over all three, one short
        # flow on each: every link is shared by two flows, so all get half.
        cap = {"L1": 1.0, "L2": 1.0, "L3": 1.0}
        fl = {"long": F.Flow({"L1": 1, "L2": 1, "L3": 1}),
              "s1": F.Flow({"L1": 1}), "s2": F.Flow({"L2": 1}), "s3": F.Flow({"L3": 1})}
        got = F.max_min(cap, fl)
        for n in fl:
            self.assertAlmostEqual(got[n][0], 0.5, msg=n)

    def test_parking_lot_two_switches(self):
        # Gran et al. Fig. 8: h2, h3 on S1 and h6, h7 on S2 all into h5 on
        # S2, S1-S2 at twice the host rate. Max-min gives every contributor
        # a quarter of h5's link; a round-robin switch gives the local flows
        # twice what the remote ones get (gran-fig8 in docs/testbed.md).
        nodes = lab({"S1": ["S2"], "S2": ["S1"]},
                    {"h2": "S1", "h3": "S1", "h6": "S2", "h7": "S2", "h5": "S2"})
        got = oracle(nodes, {"a": ("h2", "h5"), "b": ("h3", "h5"), "c": ("h6", "h5"),
                             "d": ("h7", "h5")}, capacity={"S1>S2": 20e6})
        self.assertRates(got, {"a": 2.5e6, "b": 2.5e6, "c": 2.5e6, "d": 2.5e6})
        self.assertEqual({got[n][1] for n in "abcd"}, {"S2>h5"})

    def santos(self, R):
        hosts = {"bc": "B", "bv": "B", "av": "A"}
        hosts.update({"bl%d" % i: "B" for i in range(1, 6)})
        hosts.update({"ar%d" % i: "A" for i in range(1, R + 1)})
        nodes = lab({"A": ["B"], "B": ["A"]}, hosts)
        pairs = {"local%d" % i: ("bl%d" % i, "bc") for i in range(1, 6)}
        pairs.update({"remote%d" % i: ("ar%d" % i, "bc") for i in range(1, R + 1)})
        pairs["victim"] = ("av", "bv")
        return oracle(nodes, pairs)

    def test_santos_fig1_r1(self):
        # Santos et al. 2003 Fig. 1-2, L = 5, R = 1, 10M links: the six
        # flows into bc get a sixth of the root link each, and the victim
        # what the remote flow leaves of A-B.
        got = self.santos(1)
        share = 10e6 / 6
        self.assertRates(got, {"local1": share, "local5": share, "remote1": share,
                               "victim": 10e6 - share})
        self.assertEqual(got["remote1"][1], "B>bc")
        self.assertEqual(got["victim"][1], "A>B")

    def test_santos_fig3c_r5(self):
        # R = 5: ten flows into bc, 1M each; the victim gets the 5M the
        # five remote flows leave of A-B.
        got = self.santos(5)
        self.assertRates(got, {"local3": 1e6, "remote5": 1e6, "victim": 5e6})

    def test_line_with_slow_link(self):
        # h1 - S1 =2M= S2 - S3 - h3, h2 on S2: h1's flow is held to 2M by
        # the slow link, h2's gets the rest of the 10M toward h3.
        nodes = lab({"S1": ["S2"], "S2": ["S1", "S3"], "S3": ["S2"]},
                    {"h1": "S1", "h2": "S2", "h3": "S3"})
        self.assertEqual(F.tree_path(nodes, "h1", "h3"),
                         ["h1>S1", "S1>S2", "S2>S3", "S3>h3"])
        got = oracle(nodes, {"f1": ("h1", "h3"), "f2": ("h2", "h3")},
                     capacity={"S1>S2": 2e6})
        self.assertRates(got, {"f1": 2e6, "f2": 8e6})
        self.assertEqual(got["f1"][1], "S1>S2")
        self.assertIn(got["f2"][1], ("S2>S3", "S3>h3"))

    def test_offered_rates(self):
        # A flow offering less than its share leaves the rest to the others.
        cap = {"L": 10.0}
        fl = {"small": F.Flow({"L": 1}, demand=1.0), "a": F.Flow({"L": 1}),
              "b": F.Flow({"L": 1})}
        got = F.max_min(cap, fl)
        self.assertAlmostEqual(got["small"][0], 1.0)
        self.assertEqual(got["small"][1], "offered")
        self.assertAlmostEqual(got["a"][0], 4.5)
        self.assertAlmostEqual(got["b"][0], 4.5)
        # Everyone satisfied: nobody is limited by the link.
        got = F.max_min(cap, {"x": F.Flow({"L": 1}, 2.0), "y": F.Flow({"L": 1}, 3.0)})
        self.assertEqual([got["x"], got["y"]], [(2.0, "offered"), (3.0, "offered")])

    def test_wire_overhead(self):
        # 1000-byte frames on a link that charges 24 bytes more per frame:
        # two flows share 10M of wire, 10M / 1.024 of frames.
        got = F.max_min({"L": 10e6}, {"a": F.Flow({"L": 1.024}), "b": F.Flow({"L": 1.024})})
        self.assertAlmostEqual(got["a"][0], 5e6 / 1.024, places=3)

    def test_unconstrained_and_errors(self):
        got = F.max_min({}, {"x": F.Flow({})})
        self.assertEqual(got["x"], (math.inf, None))
        with self.assertRaises(KeyError):
            F.max_min({}, {"x": F.Flow({"nolink": 1})})

    def test_no_path(self):
        nodes = lab({"A": [], "B": []}, {"h1": "A", "h2": "B"})
        self.assertIsNone(F.tree_path(nodes, "h1", "h2"))
        self.assertIsNone(F.tree_path(nodes, "h1", "A"))
        self.assertEqual(F.tree_path(nodes, "h1", "h1"), ["h1>A", "A>h1"])


class TestFrames(unittest.TestCase):
    def test_udp_behind_hostd(self):
        # eth0 MTU 1482 (1500 - the tag), 1454-byte datagrams: a 1496-byte
        # frame in hostd's bytes_out, 1514 on the wire with the tag.
        self.assertEqual(F.frame_sizes("iperf", "udp", "hostd", 1482, 1482, 1454),
                         {"wire": 1514, "measured": 1496, "payload": 1454})
        self.assertEqual(F.frame_sizes("iperf", "udp", "iperf3 receiver", 1482, 1482, 1454),
                         {"wire": 1514, "measured": 1454, "payload": 1454})
        # hostd measured smaller frames on average: scaled alike.
        got = F.frame_sizes("iperf", "udp", "hostd", 1482, 1482, 1454, hostd_frame=748)
        self.assertEqual((got["wire"], got["measured"]), (766, 748))
        self.assertAlmostEqual(got["payload"], 727)

    def test_tcp_untagged(self):
        self.assertEqual(F.frame_sizes("iperf", "tcp", "iperf3 receiver", 1500, 1500,
                                       tagged=False),
                         {"wire": 1514, "measured": 1448, "payload": 1448})
        self.assertIsNone(F.frame_sizes("poisson", "tcp", "l2cc-flowgen", 1500))

    def test_priority_tag(self):
        # pcp_from_dscp: eth0 MTU 1478, a full TCP frame 1492 + 4 in hostd's
        # bytes_out, + 18 on the wire.
        self.assertEqual(F.frame_sizes("iperf", "tcp", "hostd", 1478, 1478, vlan=True),
                         {"wire": 1514, "measured": 1496, "payload": 1426})
        self.assertEqual(F.frame_sizes("rr", "udp", "l2cc-flowgen", 1478, 1478, 100,
                                       vlan=True),
                         {"wire": 164, "measured": 100, "payload": 100})

    def test_epochs(self):
        e = F.epochs({"a": (0, 10), "b": (4, 6), "c": (12, 14)}, 1, 8)
        self.assertEqual(e, [(1, 4, ["a"]), (4, 6, ["a", "b"]), (6, 8, ["a"])])


if __name__ == "__main__":
    unittest.main()
