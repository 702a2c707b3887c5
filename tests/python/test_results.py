# SPDX-License-Identifier: BSD-2-Clause
"""Pieces of scripts/l2cc/results.py that need no result directory: when a
group's rates settle within a phase, the output-queue statistics."""

import unittest
import warnings

try:
    from l2cc import results as R
except ImportError:           # python3-numpy is a testbed dependency
    R = None

NAN = float("nan")


@unittest.skipIf(R is None, "python3-numpy is missing" if R is None else "")
class TestSettle(unittest.TestCase):
    grid = [i / 10 for i in range(11)]      # 0 .. 1 s

    def test_settles(self):
        # b runs at twice a's rate until 0.4 s, then within 10 % of it.
        a = [1.0] * 11
        b = [2.0] * 5 + [1.05] * 6
        self.assertEqual(R.settle_time(self.grid, [a, b], 0, 1), (0.5, True))
        # Measured from the phase start, and only inside the phase.
        s, ok = R.settle_time(self.grid, [a, b], 0.2, 0.9)
        self.assertAlmostEqual(s, 0.3)
        self.assertTrue(ok)
        self.assertEqual(R.settle_time(self.grid, [a, a], 0, 1), (0.0, True))

    def test_never_settles(self):
        a = [1.0] * 11
        b = [1.05] * 10 + [1.2]         # uneven at the very end
        self.assertEqual(R.settle_time(self.grid, [a, b], 0, 1), (1, False))
        z = [1.0] * 5 + [0.0] * 6       # a member at 0: infinitely uneven
        self.assertEqual(R.settle_time(self.grid, [a, z], 0, 1), (1, False))

    def test_members_come_and_go(self):
        # b is not active before 0.6 s (NaN): a alone is even with itself;
        # from 0.6 the two are 3x apart until 0.8.
        a = [1.0] * 11
        b = [NAN] * 6 + [3.0] * 3 + [1.0] * 2
        s, ok = R.settle_time(self.grid, [a, b], 0, 1)
        self.assertAlmostEqual(s, 0.9)
        self.assertTrue(ok)
        # Nothing sent by anyone is even too.
        self.assertEqual(R.settle_time(self.grid, [[0.0] * 11, [0.0] * 11], 0, 1), (0.0, True))

    def test_settles_on_jain(self):
        # A steady 15 % offset never enters a 1.1x band, but its Jain index
        # (0.995) is even for settle_jain_s; before 0.3 s b is 3x a (0.8).
        a = [1.0] * 11
        b = [3.0] * 3 + [1.15] * 8
        self.assertEqual(R.settle_time(self.grid, [a, b], 0, 1), (1, False))
        s, ok = R.settle_time(self.grid, [a, b], 0, 1, jain_min=0.98)
        self.assertAlmostEqual(s, 0.3)
        self.assertTrue(ok)
        # Uneven at the end: not settled; a member not yet active is not counted.
        c = [1.0] * 10 + [3.0]
        self.assertEqual(R.settle_time(self.grid, [a, c], 0, 1, jain_min=0.98), (1, False))
        d = [NAN] * 6 + [1.1] * 5
        self.assertEqual(R.settle_time(self.grid, [a, d], 0, 1, jain_min=0.98), (0.0, True))

    def test_outq_stats(self):
        st = R.outq_stats([0, 0, 100, 100])
        self.assertEqual((st["mean_bytes"], st["std_bytes"], st["max_bytes"]), (50, 50, 100))
        self.assertAlmostEqual(st["p99_bytes"], 100)
        self.assertEqual(R.outq_stats([])["mean_bytes"], None)

    def test_jain(self):
        self.assertAlmostEqual(R.jain([1, 1, 1, 1]), 1.0)
        self.assertAlmostEqual(R.jain([1, 0, 0, 0]), 0.25)
        self.assertIsNone(R.jain([]))


@unittest.skipIf(R is None, "python3-numpy is missing" if R is None else "")
class TestNoSocket(unittest.TestCase):
    """Frames lost on a receive queue without a socket count as drops:
    a switch's as the fabric's (reason no_socket), a hostd's at the edge."""

    def test_switch_no_socket_is_a_drop_reason(self):
        recs = [{"t": 0.0, "ports": {"p1": {"drop": {"buffer_full": 1}, "no_socket": 0}}},
                {"t": 1.0, "ports": {"p1": {"drop": {"buffer_full": 1}, "no_socket": 40}}}]
        a = R.Run._switch_arrays(None, recs)["ports"]["p1"]
        self.assertEqual(list(a["drop"]["no_socket"]), [0, 40])
        # A switchd that predates the counter: no such reason.
        a = R.Run._switch_arrays(None, [{"t": 0.0, "ports": {"p1": {"drop": {}}}}])
        self.assertNotIn("no_socket", a["ports"]["p1"]["drop"])

    def test_hostd_no_socket_at_the_edge(self):
        recs = [{"t": 0.0, "host": {"drops": 1, "no_socket": 2}, "uplink": {"drops": 0}},
                {"t": 1.0, "host": {"drops": 3, "no_socket": 7}, "uplink": {"no_socket": 5}}]
        a = R.Run._hostd_arrays(None, recs)
        self.assertEqual(list(a["host_drops"]), [3, 10])
        self.assertEqual(list(a["uplink_drops"]), [0, 5])


@unittest.skipIf(R is None, "python3-numpy is missing" if R is None else "")
class TestLimitReach(unittest.TestCase):
    """limit_reach_s: from the flow's start until its rate limit first comes
    within 10 % of its mean over the window."""

    def reach(self, rates, start=1.0, win=(3.0, 5.0), keys=("k",)):
        import numpy as np
        t = np.arange(len(rates)) * 0.5 + 100.0         # t0 = 100, a sample per 0.5 s
        run = type("Run", (), {"t0": 100.0})()
        hd = {"flows": {"k": {"t": t, "rate_bps": np.array(rates, dtype=float)}}}
        return R._limit_reach(run, {"start_s": start}, hd, list(keys), win)

    def test_falls_to_its_share(self):
        # 0 .. 5 s: unlimited before the start, then 20 → 10 → 5.2 → 5 ± 0.2.
        self.assertEqual(self.reach([20, 20, 20, 10, 5.2, 5.1, 4.9, 5.0, 5.2, 4.8, 5.0]), 1.0)

    def test_from_the_start_not_before(self):
        # Within 10 % at 0 s (an earlier flow on the same key) does not count.
        self.assertEqual(self.reach([5, 5, 20, 20, 20, 5, 5, 5, 5, 5, 5]), 1.5)

    def test_gaps_and_unpaced(self):
        # NaN: the flow not listed in a line; 0: unpaced (never "near").
        self.assertEqual(self.reach([20, NAN, 0, 20, NAN, 5, 5, 5, 5, 5, 5]), 1.5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            self.assertIsNone(self.reach([20, 20] + [NAN] * 9))          # window empty
            self.assertIsNone(self.reach([NAN] * 2 + [20] * 3 + [0] * 6))  # unpaced in it

    def test_none(self):
        self.assertIsNone(self.reach([20] * 11))                    # never moved
        self.assertIsNone(self.reach([20] * 11, keys=("k", "j")))   # not one flow
        self.assertIsNone(self.reach([20, 10] * 5 + [20], win=None))


if __name__ == "__main__":
    unittest.main()


@unittest.skipIf(R is None, "python3-numpy is missing" if R is None else "")
class TestFctStats(unittest.TestCase):
    def test_cv(self):
        # FCTs 1, 2, 3 ms: mean 2 ms, population std sqrt(2/3) ms.
        st = R._fct_stats([{"fct_us": 1000}, {"fct_us": 2000}, {"fct_us": 3000}])
        self.assertEqual(st["count"], 3)
        self.assertAlmostEqual(st["mean_us"], 2000)
        self.assertAlmostEqual(st["std_us"], (2 / 3) ** 0.5 * 1000)
        self.assertAlmostEqual(st["cv"], (2 / 3) ** 0.5 / 2)
        # Flows alike complete alike: no spread.
        self.assertEqual(R._fct_stats([{"fct_us": 5}] * 4)["cv"], 0)
        self.assertIsNone(R._fct_stats([])["cv"])

    def test_bucket_keys(self):
        # Every bucket has a key a metric path can name.
        self.assertEqual(sorted(R.FCT_BUCKET_KEYS), sorted(b[2] for b in R.FCT_BUCKETS))
