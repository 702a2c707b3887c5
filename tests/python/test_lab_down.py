# SPDX-License-Identifier: BSD-2-Clause
"""`l2cc-lab down` removes only what the lab recorded (issue 18, audit L6):
the namespaces named in lab.json, never another one that merely carries
the lab's prefix (another user's, or a lab brought up with another run
directory). The system is faked: `ip` and the process table are not
touched."""

import os
import shutil
import tempfile
import types
import unittest
from unittest import mock

from l2cc import lab as L


class TestDown(unittest.TestCase):
    def setUp(self):
        self.rundir = tempfile.mkdtemp(prefix="l2cc-down-")
        self.ran = []
        self.present = ["l2-x-A", "l2-x-h1", "l2-x-h9", "other"]

    def tearDown(self):
        shutil.rmtree(self.rundir, ignore_errors=True)

    def _run(self, cmd, what=None, check=True):
        self.ran.append(list(cmd))
        if cmd[:3] == ["ip", "netns", "del"]:
            self.present.remove(cmd[3])
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")

    def _down(self, doc):
        tg = L.Target("x", "l2-x", self.rundir, doc)
        with mock.patch.object(L, "_run", self._run), \
                mock.patch.object(L, "_need_root", lambda what: None), \
                mock.patch.object(L, "netns_list", lambda: list(self.present)), \
                mock.patch.object(L, "_warn", lambda m: self.warned.append(m)), \
                mock.patch.object(L, "log", lambda m, out=None: None):
            self.warned = []
            return L.down(tg)

    def deleted(self):
        return sorted(c[3] for c in self.ran if c[:3] == ["ip", "netns", "del"])

    def test_only_recorded_namespaces(self):
        doc = {"name": "x", "prefix": "l2-x", "nodes": {
            "A": {"kind": "switch", "netns": "l2-x-A", "pid": None},
            "h1": {"kind": "host", "netns": "l2-x-h1", "pid": None},
            "h2": {"kind": "host", "netns": "l2-x-h2", "pid": None}}}
        self.assertEqual(self._down(doc), 0)
        # h2's was never made (or is gone already): not an error.
        self.assertEqual(self.deleted(), ["l2-x-A", "l2-x-h1"])
        # The foreign one with the lab's prefix survives, with a word why.
        self.assertIn("l2-x-h9", self.present)
        self.assertTrue(any("l2-x-h9" in w and "lab.json" in w for w in self.warned),
                        self.warned)
        # Nothing was looked for or stopped inside it.
        self.assertFalse([c for c in self.ran if "l2-x-h9" in c], self.ran)

    def test_no_lab_json_deletes_nothing(self):
        self.assertEqual(self._down(None), 0)
        self.assertEqual(self.deleted(), [])
        self.assertEqual(sorted(self.present), ["l2-x-A", "l2-x-h1", "l2-x-h9", "other"])
        self.assertTrue(any("l2-x-A" in w for w in self.warned), self.warned)


if __name__ == "__main__":
    unittest.main()
