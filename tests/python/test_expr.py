# SPDX-License-Identifier: BSD-2-Clause
"""Sweep expressions (scripts/l2cc/expr.py): what they accept, what they
refuse, and that nothing reaches Python's eval."""

import unittest

from l2cc import expr as X

RES = {"groups.victim.sum_bps": 7.5e6, "groups.remote.sum_bps": 1.5e6,
       "links[A>B].rate_bps": 10e6, "fabric_drops": 0, "none": None,
       "topology.defaults.rate": "10M", "ports[B:c].saturation.held": True}


def paths(ref):
    return RES[ref.path]


def evaluate(text, resolve=paths, convert=None):
    return X.Expr(text).evaluate(resolve, convert)[0]


class TestExpr(unittest.TestCase):
    def test_bare_path(self):
        e = X.Expr("links[A>B].rate_bps")
        self.assertEqual(e.path, "links[A>B].rate_bps")
        self.assertFalse(e.test)
        self.assertEqual(evaluate("links[A>B].rate_bps"), 10e6)

    def test_arithmetic(self):
        v = evaluate("groups.victim.sum_bps / (links[A>B].rate_bps - groups.remote.sum_bps)")
        self.assertAlmostEqual(v, 7.5 / 8.5)
        self.assertEqual(evaluate("-fabric_drops + 2 * 3 - 1e1 / 4"), 6 - 2.5)
        self.assertEqual(evaluate("max(1, 2, groups.remote.sum_bps) - min(3, abs(-4))"),
                         1.5e6 - 3)
        self.assertEqual(evaluate("mean(1, 2, 6)"), 3)
        self.assertEqual(evaluate("ports[B:c].saturation.held + 1"), 2)

    def test_tests(self):
        e = X.Expr("groups.victim.sum_bps >= 7e6 and fabric_drops == 0")
        self.assertTrue(e.test)
        self.assertIs(e.evaluate(paths)[0], True)
        v, operand, seen = X.Expr("groups.remote.sum_bps / 1e6 > 2").evaluate(paths)
        self.assertEqual((v, operand), (False, 1.5))
        self.assertEqual(seen, {"groups.remote.sum_bps": 1.5e6})
        self.assertIs(evaluate("1 < fabric_drops + 2 < 3"), True)
        self.assertIs(evaluate("not fabric_drops > 0"), True)

    def test_settings(self):
        conv = {"rate": lambda s: {"10M": 10e6}.get(s)}
        self.assertEqual(evaluate("rate(topology.defaults.rate) / 2", convert=conv), 5e6)
        with self.assertRaisesRegex(X.ExprError, 'a text: read it with rate'):
            evaluate("topology.defaults.rate / 2", convert=conv)
        with self.assertRaisesRegex(X.ExprError, "size\\(\\) is not available"):
            evaluate("size(topology.defaults.rate)", convert=conv)

    def test_metric_refs(self):
        e = X.Expr("min(victim_share@santos-lipd_r1, victim_share@santos-lipd_r5:min) >= 0.8")
        self.assertEqual([(r.name, r.label, r.stat) for r in e.refs],
                         [("victim_share", "santos-lipd_r1", "mean"),
                          ("victim_share", "santos-lipd_r5", "min")])
        vals = {"santos-lipd_r1": 0.88, "santos-lipd_r5": 0.82}
        v, operand, _ = e.evaluate(lambda r: vals[r.label])
        self.assertEqual((v, operand), (True, 0.82))
        e = X.Expr("max(fabric_drops@*) == 0")
        self.assertTrue(e.refs[0].glob)
        self.assertEqual(e.refs[0].matches(["a", "b_1"]), ["a", "b_1"])
        self.assertIs(e.evaluate(lambda r: [0, 0, 0])[0], True)
        self.assertIs(e.evaluate(lambda r: [0, 3])[0], False)

    def test_refused(self):
        for text, why in [
                ("__import__('os').system('true')", "quotes"),
                ("__import__(1)", "not allowed"),
                ("groups.victim.sum_bps.__class__()", "not allowed"),
                ("open(1)", "not allowed"),
                ("(lambda: 1)()", "cannot read"),
                ("a if b else c", "cannot read"),
                ("2 ** 10", "not allowed"),
                ("[1, 2]", "must follow a key"),
                ("x = 1", "cannot read"),
                ("x@a:median", "not a statistic"),
                ("a.b@lbl", "a metric name before @"),
                ("x@a* > 1", "inside min"),
                ("@a", "must follow a metric name"),
                ("min(x, key=1)", "not allowed"),
                ("_r0 + 1", "not a usable name"),
                ("", "expected an expression")]:
            with self.assertRaises(X.ExprError, msg=text) as cm:
                X.Expr(text).evaluate(lambda r: 1)
            self.assertIn(why, str(cm.exception), text)

    def test_errors_at_evaluation(self):
        with self.assertRaisesRegex(X.ExprError, "division by zero \\(fabric_drops is 0\\)"):
            evaluate("1 / fabric_drops")
        with self.assertRaisesRegex(X.ExprError, "none has no value"):
            evaluate("none + 1")

    def test_is_rate(self):
        bps = lambda p: p.endswith("_bps")
        self.assertTrue(X.Expr("groups.victim.sum_bps").is_rate(bps))
        self.assertTrue(X.Expr("links[A>B].rate_bps - groups.remote.sum_bps").is_rate(bps))
        self.assertFalse(X.Expr("groups.victim.sum_bps / links[A>B].rate_bps").is_rate(bps))
        self.assertFalse(X.Expr("fabric_drops").is_rate(bps))


if __name__ == "__main__":
    unittest.main()
