# SPDX-License-Identifier: BSD-2-Clause
"""One-way delay and request/response statistics: l2cc-flowgen's (through
`l2cc-flowgen stats`, no network) against an independent reference here,
and the testbed's per-flow and per-group delay fields (results.py)."""

import json
import math
import os
import random
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
FLOWGEN = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "bin", "l2cc-flowgen")

try:
    from l2cc import results as R
except ImportError:           # python3-numpy is a testbed dependency
    R = None

WIN = 100_000_000             # the running mean's window, ns


def rank(v, pct):
    """Nearest rank, as l2cc-flowgen: the smallest value with pct% at or below."""
    v = sorted(v)
    k = math.ceil(pct / 100 * len(v))
    return v[max(k, 1) - 1]


def reference(samples):
    """The statistics of [(arrival_ns, delay_ns)], in us, by definition: the
    deviation of each sample from the mean of those that arrived in the
    100 ms before it (strictly before; none there: no deviation)."""
    s = sorted(samples)
    d = [x[1] / 1e3 for x in s]
    dev = []
    for at, dl in s:
        w = [y for a, y in s if at - WIN <= a < at]
        if w:
            dev.append(abs(dl - sum(w) / len(w)) / 1e3)
    return {"count": len(d), "mean": sum(d) / len(d), "p50": rank(d, 50), "p99": rank(d, 99),
            "max": max(d), "dev_p99": rank(dev, 99) if dev else None,
            "dev_max": max(dev) if dev else None}


@unittest.skipUnless(os.access(FLOWGEN, os.X_OK), "l2cc-flowgen is not built (make)")
class TestFlowgenStats(unittest.TestCase):
    def stats(self, samples):
        txt = "".join("%d %d\n" % x for x in samples)
        r = subprocess.run([FLOWGEN, "stats"], input=txt, capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["window_s"], 0.1)
        return doc["delay_us"]

    def check(self, samples):
        got, want = self.stats(samples), reference(samples)
        for k, v in want.items():
            if v is None:
                self.assertIsNone(got[k], k)
            else:
                self.assertAlmostEqual(got[k], v, delta=1e-6 * max(1, abs(v)), msg=k)
        return got

    def test_step(self):
        # 1 ms delay every ms for 1 s, then 11 ms: the first samples after
        # the step deviate by 10 ms from a window of 1 ms delays.
        s = [(t * 1_000_000, 1_000_000) for t in range(1000)]
        s += [(t * 1_000_000, 11_000_000) for t in range(1000, 2000)]
        got = self.check(s)
        self.assertAlmostEqual(got["dev_max"], 10_000)
        self.assertAlmostEqual(got["mean"], 6_000)
        self.assertEqual(got["p50"], 1_000)
        self.assertEqual(got["p99"], 11_000)
        # The 99 samples after the step that still see old ones, of 1999
        # with a window: dev_p99 is one of them.
        self.assertGreater(got["dev_p99"], 1_000)

    def test_constant(self):
        got = self.check([(t * 10_000_000, 5_000) for t in range(50)])
        self.assertEqual((got["dev_p99"], got["dev_max"]), (0, 0))
        self.assertEqual(got["count"], 50)

    def test_window_is_100ms_and_strict(self):
        # Samples 150 ms apart: nothing in any window, no deviation at all;
        # at exactly 100 ms apart the earlier one is in the window.
        got = self.stats([(0, 1000), (150_000_000, 5000)])
        self.assertIsNone(got["dev_p99"])
        got = self.stats([(0, 1000), (100_000_000, 5000)])
        self.assertEqual(got["dev_max"], 4)
        # Same arrival stamp: neither is before the other.
        got = self.stats([(7, 1000), (7, 5000)])
        self.assertIsNone(got["dev_max"])

    def test_random_against_reference(self):
        rnd = random.Random(16)
        for n in (1, 2, 17, 300):
            at = sorted(rnd.randrange(0, 2_000_000_000) for _ in range(n))
            s = [(a, rnd.randrange(1000, 5_000_000)) for a in at]
            rnd.shuffle(s)      # any order in: sorted by arrival inside
            self.check(s)

    def test_empty_and_bad(self):
        got = self.stats([])
        self.assertEqual(got["count"], 0)
        self.assertIsNone(got["mean"])
        r = subprocess.run([FLOWGEN, "stats"], input="1 two\n", capture_output=True,
                           text=True, timeout=10)
        self.assertEqual(r.returncode, 1)
        self.assertIn("stdin:1", r.stderr)


@unittest.skipIf(R is None, "python3-numpy is missing")
class TestDelayFields(unittest.TestCase):
    ST = {"count": 10, "mean": 50.0, "p50": 40.0, "p99": 90.0, "max": 95.0,
          "dev_p99": 30.0, "dev_max": 45.0}

    def test_udp_onoff_from_the_server(self):
        c = {"stream": 7}
        s = {"udp_streams": [{"stream": 3, "lost": 9, "owd_us": {"count": 1, "mean": 1e6}},
                             {"stream": 7, "lost": 2, "owd_us": self.ST}]}
        d = R.flow_delays("onoff", "udp", c, s)
        self.assertEqual(d["owd_mean_us"], 50.0)
        self.assertEqual(d["owd_dev_p99_us"], 30.0)
        self.assertEqual(d["owd_count"], 10)
        self.assertEqual(d["owd_lost"], 2)
        # No stream of ours at the server: nothing measured, not a neighbour's.
        d = R.flow_delays("onoff", "udp", {"stream": 8}, s)
        self.assertEqual(d["owd_count"], 0)
        self.assertIsNone(d["owd_mean_us"])
        self.assertEqual(R.flow_delays("onoff", "tcp", c, s), {})
        self.assertEqual(R.flow_delays("iperf", "udp", c, s), {})

    def test_rr(self):
        c = {"lost": 1, "rtt_us": dict(self.ST, mean=200.0), "owd_us": self.ST,
             "req_owd_us": {"mean": 60.0}, "resp_owd_us": {"mean": 40.0}}
        d = R.flow_delays("rr", "udp", c, None)
        self.assertEqual(d["rr_mean_us"], 200.0)
        self.assertEqual(d["owd_mean_us"], 50.0)
        self.assertEqual((d["owd_req_mean_us"], d["owd_resp_mean_us"]), (60.0, 40.0))
        self.assertEqual(d["rr_lost"], 1)

    def test_group(self):
        a = R.delay_fields("owd", dict(self.ST, count=30, mean=10.0, p99=20.0), 0)
        b = R.delay_fields("owd", dict(self.ST, count=10, mean=50.0, p99=80.0), 3)
        none = R.delay_fields("owd", None, None)
        g = R.group_delays([a, b, none, {}])
        self.assertEqual(g["owd_count"], 40)
        self.assertAlmostEqual(g["owd_mean_us"], (30 * 10 + 10 * 50) / 40)
        self.assertEqual(g["owd_p99_us"], 80.0)        # the worst member's
        self.assertEqual(g["owd_lost"], 3)
        self.assertNotIn("rr_mean_us", g)
        self.assertEqual(R.group_delays([{}, none]), {})


if __name__ == "__main__":
    unittest.main()
