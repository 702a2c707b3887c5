# SPDX-License-Identifier: BSD-2-Clause
"""Sweep checks (scripts/l2cc/checks.py) and how a sweep file declares
metrics and checks (scripts/l2cc/sweep.py's parser: FILE:LINE errors)."""

import os
import tempfile
import unittest

from l2cc import checks as C
from l2cc import expr as X

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def metric(name):
    return C.Metric(name, name, X.Expr.of_path("groups.g." + name), 1)


def run(label, rep, status, **metrics):
    return {"label": label, "point": None, "axes": {}, "axis_labels": {}, "set": {},
            "repeat": rep, "status": status, "error": None if status == "ok" else "boom",
            "metrics": metrics, "metric_errors": [], "result_dir": "points/%s/run%d"
            % (label, rep), "seconds": 10.0}


def check(name, text, kind="invariant"):
    """A check written over named points (METRIC@POINT), evaluated once."""
    return C.Check(name, text, X.Expr(text), 1, kind=kind)


def paper(name, text, holds, fails=(), kind="paper", metrics=("share", "util")):
    """A check with holds_at and fails_at (labels, or {VAR: LABEL})."""
    def binding(x):
        return C.Binding(x if isinstance(x, dict) else {"point": x}, str(x), 1)
    return C.Check(name, text, None, 1, kind=kind, holds_at=[binding(x) for x in holds],
                   fails_at=[binding(x) for x in fails], source="a paper, Fig. 1",
                   reason="why" if kind == "known_gap" else None, metrics=metrics)


class TestPoints(unittest.TestCase):
    def test_repeat(self):
        ms = [metric("share"), metric("drops")]
        runs = [run("a", 1, "ok", share=0.8, drops=0), run("a", 2, "ok", share=0.9, drops=0),
                run("a", 3, "failed", share=0.1, drops=5), run("b", 1, "ok", share=0.5)]
        rows = C.point_rows(runs, ms)
        self.assertEqual([r["label"] for r in rows], ["a", "b"])
        a, b = rows
        self.assertEqual(a["status"], "failed")
        self.assertEqual(a["error"], "boom")
        self.assertEqual(len(a["runs"]), 3)
        self.assertEqual(a["seconds"], 30.0)
        # The failed run's figures stay in its own row, out of the mean.
        st = a["metric_stats"]["share"]
        self.assertAlmostEqual(st["mean"], 0.85)
        self.assertEqual((st["min"], st["max"], st["n"]), (0.8, 0.9, 2))
        self.assertAlmostEqual(a["metrics"]["share"], 0.85)
        self.assertEqual(b["metrics"], {"share": 0.5, "drops": None})
        self.assertEqual(b["metric_stats"]["drops"]["n"], 0)

    def test_checks(self):
        ms = [metric("share")]
        rows = C.point_rows([run("s_r1", 1, "ok", share=0.88), run("s_r1", 2, "ok", share=0.78),
                             run("s_r5", 1, "ok", share=0.83), run("n_r1", 1, "failed")], ms)
        cs = [check("mean_ok", "share@s_r1 >= 0.8"),
              check("min_fails", "share@s_r1:min >= 0.8"),
              check("all", "min(share@s_r*) > 0.8 and max(share@s_*) < 0.9"),
              check("between", "share@s_r5 > share@s_r1:min"),
              check("no_value", "share@n_r1 >= 0"),
              check("skipped", "share@x_r1 >= 0")]
        got = {c["name"]: c for c in C.evaluate(cs, rows, ["s_r1", "s_r5", "n_r1"])}
        self.assertEqual(got["mean_ok"]["ok"], True)
        self.assertAlmostEqual(got["mean_ok"]["value"], 0.83)
        self.assertEqual(got["min_fails"]["ok"], False)
        self.assertEqual(got["min_fails"]["verdict"], C.FAILED)
        self.assertEqual(got["min_fails"]["value"], 0.78)
        self.assertEqual(got["all"]["ok"], True)
        for v in got["all"]["values"]["share@s_r*"]:
            self.assertAlmostEqual(v, 0.83)
        self.assertEqual(got["between"]["ok"], True)
        self.assertEqual((got["no_value"]["ok"], got["no_value"]["verdict"]),
                         (False, C.ERROR))
        self.assertIn("n_r1 has no value (the point's status: failed", got["no_value"]["why"])
        self.assertEqual((got["skipped"]["ok"], got["skipped"]["verdict"]), (None, C.SKIPPED))
        text = "\n".join(C.lines(list(got.values())))
        self.assertIn("invariants: 3 of 5 held; 1 skipped; FAILED: min_fails, no_value", text)
        self.assertEqual(C.exit_status(list(got.values())), C.EXIT_FAILED)

    def test_stats_interval(self):
        st = C.stats([0.8, 0.9, 1.0])
        self.assertAlmostEqual(st["mean"], 0.9)
        self.assertAlmostEqual(st["sd"], 0.1)
        # t(0.975, 2) = 4.303: 4.303 * 0.1 / sqrt(3)
        self.assertAlmostEqual(st["ci95"], 4.303 * 0.1 / 3 ** 0.5)
        self.assertIsNone(C.stats([0.5])["ci95"])
        self.assertEqual(C.t95(100), 1.96)

    def test_controls(self):
        """A paper check holds where it must and fails at its controls; one
        that also holds at a control cannot tell, and counts as failed."""
        ms = [metric("share"), metric("util")]
        rows = C.point_rows([run("cc_r1", 1, "ok", share=0.88, util=0.97),
                             run("cc_r5", 1, "ok", share=0.83, util=0.99),
                             run("none_r1", 1, "ok", share=0.19, util=1.0),
                             run("none_r5", 1, "ok", share=0.85, util=1.0)], ms)
        labels = ["cc_r1", "cc_r5", "none_r1", "none_r5"]
        cs = [paper("saved_r1", "share >= 0.8", ["cc_r1"], ["none_r1"]),
              paper("saved_all", "share >= 0.8", ["cc_r*"], ["none_r*"]),
              paper("no_control", "share >= 0.8", ["cc_r1"]),
              paper("fails", "share >= 0.85 and util >= 0.9", ["cc_r*"], ["none_r1"]),
              paper("pair", "share@{a} > 2 * share@{b}", [{"a": "cc_r1", "b": "none_r1"}],
                    [{"a": "cc_r5", "b": "none_r5"}]),
              paper("gap", "share >= 0.95", ["cc_r1"], ["none_r1"], kind="known_gap"),
              paper("lossless", "util > 0", ["*"], kind="invariant")]
        got = {r["name"]: r for r in C.evaluate(cs, rows, labels, labels)}
        self.assertEqual((got["saved_r1"]["verdict"], got["saved_r1"]["discriminated"]),
                         (C.OK, True))
        self.assertEqual(got["saved_r1"]["controls"][0]["expr"], "share@none_r1 >= 0.8")
        # none_r5 also gives 0.85: the check cannot tell there.
        self.assertEqual((got["saved_all"]["verdict"], got["saved_all"]["ok"]),
                         (C.CANNOT_TELL, False))
        self.assertIn("none_r5", got["saved_all"]["why"])
        self.assertEqual(len(got["saved_all"]["holds"]), 2)
        self.assertEqual((got["no_control"]["verdict"], got["no_control"]["ok"]),
                         (C.CANNOT_TELL, False))
        self.assertEqual((got["fails"]["verdict"], got["fails"]["ok"]), (C.FAILED, False))
        self.assertEqual(got["pair"]["verdict"], C.OK)
        self.assertEqual(got["pair"]["holds"][0]["expr"], "share@cc_r1 > 2 * share@none_r1")
        self.assertEqual((got["gap"]["verdict"], got["gap"]["ok"], got["gap"]["measured_verdict"]),
                         (C.KNOWN_GAP, None, C.FAILED))
        self.assertEqual(got["lossless"]["verdict"], C.OK)
        self.assertEqual(len(got["lossless"]["holds"]), 4)
        text = "\n".join(C.lines(list(got.values())))
        self.assertIn("paper results: 2 of 5 reproduced (2 cannot tell); invariants: 1 of 1 "
                      "held; known gaps: 1; FAILED: saved_all, no_control, fails", text)

    def test_inconclusive(self):
        """A point whose runs never held makes the checks that need it
        inconclusive (exit status 3), never failed; a held run that fails
        still fails."""
        ms = [metric("share")]
        runs = [run("cc", 1, "not-held"), run("cc", 1, "not-held"),
                run("none", 1, "ok", share=0.2), run("x", 1, "ok", share=0.1)]
        runs[0]["fidelity"] = {"held": False, "why": "switch B waited 4.4 s of 10.8 s"}
        rows = C.point_rows(runs, ms)
        self.assertEqual(rows[0]["status"], "inconclusive")
        self.assertEqual(rows[0]["fidelity"]["held"], 0)
        labels = ["cc", "none", "x"]
        got = C.evaluate([paper("saved", "share >= 0.8", ["cc"], ["none"])], rows, labels,
                         labels)
        self.assertEqual((got[0]["verdict"], got[0]["ok"]), (C.INCONCLUSIVE, None))
        self.assertIn("switch B waited 4.4 s", got[0]["why"])
        self.assertEqual(C.exit_status(got), C.EXIT_INCONCLUSIVE)
        got += C.evaluate([paper("bad", "share >= 0.8", ["x"], ["none"])], rows, labels,
                          labels)
        self.assertEqual(C.exit_status(got), C.EXIT_FAILED)
        # A retry that held counts; the one that did not is left out.
        runs = [run("cc", 1, "not-held", share=0.1), run("cc", 1, "ok", share=0.9)]
        row = C.point_rows(runs, ms)[0]
        self.assertEqual((row["status"], row["metrics"]["share"]), ("ok", 0.9))

    def test_read_expr(self):
        self.assertEqual(C.read_expr("groups.my-group.sum_bps").path, "groups.my-group.sum_bps")
        self.assertEqual(C.read_expr("links[A>B].utilisation").path, "links[A>B].utilisation")
        e = C.read_expr("groups.a.sum_bps - groups.b.sum_bps")
        self.assertIsNone(e.path)
        self.assertEqual([r.path for r in e.refs], ["groups.a.sum_bps", "groups.b.sum_bps"])


class TestSweepFile(unittest.TestCase):
    """The parser of scripts/l2cc/sweep.py (needs python3-yaml)."""

    def setUp(self):
        try:
            from l2cc import sweep
        except ImportError as e:
            self.skipTest("python3-yaml is missing (%s)" % e)
        self.S = sweep
        from l2cc import checks
        self.C = checks

    def parse(self, body):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write("topology: %s/config/topologies/two-host.yaml\n"
                    "experiment: %s/config/experiments/incast3.yaml\n%s" % (REPO, REPO, body))
        self.addCleanup(os.unlink, f.name)
        try:
            return self.S._Parser(f.name).parse(), []
        except self.S.SweepErrors as e:
            return None, [line.split(":", 1)[1] for line in e.lines()]

    def test_good(self):
        sw, errs = self.parse(
            "points: [{label: a}, {label: b}]\n"
            "metrics:\n"
            "  rate: groups.incast.sum_bps\n"
            "  share: groups.incast.sum_bps / rate(topology.defaults.rate)\n"
            "checks:\n"
            "  - {name: fast, expr: \"rate@a >= 1e6 and max(share@*) < 2\"}\n")
        self.assertEqual(errs, [])
        self.assertEqual([m.name for m in sw.metrics], ["rate", "share"])
        self.assertTrue(sw.metrics[0].is_rate())
        self.assertFalse(sw.metrics[1].is_rate())
        self.assertEqual([c.name for c in sw.checks], ["fast"])

    def test_errors_name_their_line(self):
        sw, errs = self.parse(
            "points: [{label: a}]\n"                                    # 3
            "metrics:\n"                                                # 4
            "  bad: groups.incast.sum_bps ** 2\n"                       # 5
            "  pt: x@a\n"                                               # 6
            "  nokey: nosuch.sum_bps + 1\n"                             # 7
            "  ok: groups.incast.sum_bps\n"                             # 8
            "checks:\n"                                                 # 9
            "  - {name: a1, expr: \"ok@a\"}\n"                          # 10
            "  - {name: a2, expr: \"ok@zz > 1\"}\n"                     # 11
            "  - {name: a3, expr: \"nometric@a > 1\"}\n"                # 12
            "  - {name: a4, expr: \"groups.incast.sum_bps > 1\"}\n"     # 13
            "  - {name: a1, expr: \"ok@a > 1\"}\n"                      # 14
            "  - {name: a5, exp: \"ok@a > 1\"}\n")                      # 15
        self.assertIsNone(sw)
        want = ["5: metric bad: ", "6: metric pt: x@a names a point",
                "7: metric nokey: results.json has no nosuch",
                "10: check a1: expected a comparison", "11: check a2: ok@zz: no point zz",
                "12: check a3: nometric@a: no metric nometric",
                "13: check a4: groups.incast.sum_bps: a check without holds_at compares metrics",
                '14: check name "a1" is used twice', '15: unknown key "exp" in check 6',
                "15: check a5: expr is missing"]
        for w in want:
            self.assertTrue(any(e.startswith(w) for e in errs), "%s not in %s" % (w, errs))


    def test_controls_and_kinds(self):
        sw, errs = self.parse(
            "points: [{label: a}, {label: b}, {label: c1}, {label: c2}]\n"   # 3
            "fidelity: {max_wire_lost: 2%, retries: 1}\n"                   # 4
            "metrics:\n"                                                      # 5
            "  rate: groups.incast.sum_bps\n"                                 # 6
            "  drops: {expr: fabric_drops, label: fabric drops, log: yes}\n"  # 7
            "checks:\n"                                                       # 8
            "  - {name: p, expr: \"rate > 1e6\", holds_at: [a, b], fails_at: [c*],\n"
            "     source: \"A paper, Fig. 1\"}\n"                            # 10
            "  - {name: v, expr: \"rate@{x} > 2 * rate@{y}\", holds_at: [{x: a, y: c1}],\n"
            "     fails_at: [{x: b, y: c2}], source: \"A paper, Sec. 2\"}\n"  # 12
            "  - {name: i, kind: invariant, expr: \"drops == 0\", holds_at: [\"*\"]}\n")
        self.assertEqual(errs, [])
        self.assertEqual([c.kind for c in sw.checks], ["paper", "paper", "invariant"])
        self.assertEqual(sw.checks[0].instance({"point": "a"}), "rate@a > 1e6")
        self.assertEqual(sw.checks[1].instance({"x": "a", "y": "c1"}), "rate@a > 2 * rate@c1")
        self.assertEqual((sw.retries, sw.limits), (1, {"max_wire_lost": 0.02}))
        self.assertEqual((sw.metrics[1].label, sw.metrics[1].log), ("fabric drops", True))
        # The sweep's limits go to every point's experiment.
        self.assertTrue(any(o.text == "experiment.fidelity.max_wire_lost"
                            for o in sw.points[0].overrides))
        lines, problems = self.C.audit(sw.checks)
        self.assertEqual(problems, [])

    def test_control_errors(self):
        sw, errs = self.parse(
            "points: [{label: a}, {label: b}]\n"                               # 3
            "metrics: {rate: groups.incast.sum_bps}\n"                         # 4
            "checks:\n"                                                        # 5
            "  - {name: a1, expr: \"rate > 1\", holds_at: [zz], fails_at: [b]}\n"
            "  - {name: a2, expr: \"rate > 1\", fails_at: [b]}\n"            # 7
            "  - {name: a3, expr: \"nope > 1\", holds_at: [a], fails_at: [b]}\n"
            "  - {name: a4, kind: known_gap, expr: \"rate > 1\", holds_at: [a]}\n"
            "  - {name: a5, kind: maybe, expr: \"rate > 1\", holds_at: [a]}\n"   # 10
            "  - {name: a6, expr: \"rate@{x} > 1\", holds_at: [a]}\n"         # 11
            "  - {name: a7, expr: \"rate > 1\"}\n")                           # 12
        self.assertIsNone(sw)
        want = ["6: check a1: holds_at: no point zz", "7: check a2: fails_at needs holds_at",
                "8: check a3: nope: no metric nope", "9: check a4: a known_gap needs its reason",
                '10: check a5: kind "maybe"', "11: check a6: holds_at binds no point for @{x}",
                "12: check a7: rate: a check without holds_at"]
        for w in want:
            self.assertTrue(any(e.startswith(w) for e in errs), "%s not in %s" % (w, errs))

    def test_audit(self):
        from l2cc import checks as C
        self.C = C
        sw, errs = self.parse(
            "points: [{label: a}, {label: b}]\n"
            "metrics: {rate: groups.incast.sum_bps}\n"
            "checks:\n"
            "  - {name: nocontrol, expr: \"rate > 1\", holds_at: [a], source: \"x\"}\n"
            "  - {name: nosource, expr: \"rate > 1\", holds_at: [a], fails_at: [b]}\n"
            "  - {name: gap, kind: known_gap, expr: \"rate > 1\", holds_at: [a],\n"
            "     reason: \"a reason\"}\n")
        self.assertEqual(errs, [])
        _, problems = C.audit(sw.checks)
        text = "\n".join(m for _, m in problems)
        self.assertIn("check nocontrol: a paper check needs a control", text)
        self.assertIn("check nosource: a paper check needs its source", text)
        self.assertIn("check gap: a known gap needs its source", text)
        self.assertEqual(len(problems), 3)

    def test_audit_self_comparison(self):
        from l2cc import checks as C
        sw, errs = self.parse(
            "points: [{label: a}, {label: b}, {label: c}]\n"
            "metrics: {x: groups.incast.sum_bps}\n"
            "checks:\n"
            "  - {name: s1, expr: \"x <= 0.1 * x@b\", holds_at: [a], fails_at: [b],\n"
            "     source: s}\n"
            "  - {name: s2, expr: \"x@{p}:max < x@{q}:min\", holds_at: [{p: a, q: b}],\n"
            "     fails_at: [{p: c, q: c}], source: s}\n"
            "  - {name: ok1, expr: \"x <= 0.1 * x@b\", holds_at: [a], fails_at: [c],\n"
            "     source: s}\n"
            "  - {name: ok2, expr: \"abs(x - x@b) <= 0.25 * x@b and x > 1 and x < 9\",\n"
            "     holds_at: [a], fails_at: [c], source: s}\n")
        self.assertEqual(errs, [])
        _, problems = C.audit(sw.checks, [p.label for p in sw.points])
        text = "\n".join(m for _, m in problems)
        self.assertIn("check s1: control b compares x@b with itself", text)
        self.assertIn("check s2: control p=c, q=c compares x@c with itself", text)
        self.assertEqual(len(problems), 2, text)


if __name__ == "__main__":
    unittest.main()
