# SPDX-License-Identifier: BSD-2-Clause
"""`l2cc-lab up --one-process`: how many l2ccd threads, the one command line
that names every node, each node's PID file and log, and how down and
status recognise the process (docs/l2ccd.md). The process table and
subprocess are faked."""

import os
import shutil
import tempfile
import types
import unittest
from unittest import mock

from l2cc import lab as L
from l2cc import topo as T


class TestThreads(unittest.TestCase):
    def test_default_is_a_process_per_daemon(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertIsNone(L.one_process_threads())

    def test_option_and_environment(self):
        with mock.patch.dict(os.environ, {"L2CC_ONE_PROCESS": "3"}):
            self.assertEqual(L.one_process_threads(), 3)
            self.assertEqual(L.one_process_threads("2"), 2)   # the option wins

    def test_topology_key(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(L.one_process_threads(None, 2), 2)
            self.assertIsNone(L.one_process_threads(None, 0))
            self.assertIsNone(L.one_process_threads("0", 2))   # 0 overrides the file
            self.assertEqual(L.one_process_threads("3", 1), 3)
        with mock.patch.dict(os.environ, {"L2CC_ONE_PROCESS": "0"}):
            self.assertIsNone(L.one_process_threads(None, 1))

    def test_bad_values(self):
        for v in ("65", "two", "-1"):
            with self.assertRaises(L.UsageError, msg=v) as cm:
                L.one_process_threads(v)
            self.assertIn("--one-process:", str(cm.exception))
        with mock.patch.dict(os.environ, {"L2CC_ONE_PROCESS": "x"}):
            with self.assertRaises(L.UsageError) as cm:
                L.one_process_threads(None, 1)
            self.assertIn("L2CC_ONE_PROCESS:", str(cm.exception))


TOPO = """name: t1p
{key}
nodes:
  S: {{kind: switch}}
  h1: {{kind: host}}
links:
  - endpoints: ["S:p1", "h1:eth0"]
"""


class TestTopologyKey(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="l2cc-1p-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def load(self, key):
        p = os.path.join(self.dir, "t.yaml")
        with open(p, "w") as f:
            f.write(TOPO.format(key=key))
        return T.load(p)

    def test_values(self):
        self.assertEqual(self.load("").one_process, 0)
        self.assertEqual(self.load("one_process: 0").one_process, 0)
        self.assertEqual(self.load("one_process: 2").one_process, 2)

    def test_bad(self):
        for v in ("65", "-1", "yes", "two", "1.5"):
            with self.assertRaises(T.TopoError, msg=v) as cm:
                self.load("one_process: " + v)
            self.assertIn("t.yaml:2:", str(cm.exception))
            self.assertIn("expected the number of l2ccd threads", str(cm.exception))


class TestStartShared(unittest.TestCase):
    def setUp(self):
        self.rundir = tempfile.mkdtemp(prefix="l2cc-1p-")

    def tearDown(self):
        shutil.rmtree(self.rundir, ignore_errors=True)

    def test_command_pids_logs(self):
        nodes = [types.SimpleNamespace(name="S1", netns="p-S1", kind="switch"),
                 types.SimpleNamespace(name="h1", netns="p-h1", kind="host")]
        topo = types.SimpleNamespace(nodes={n.name: n for n in nodes})
        got = {}

        def popen(cmd, **kw):
            got["cmd"] = cmd
            return types.SimpleNamespace(pid=4242)
        with mock.patch.object(L.subprocess, "Popen", popen):
            procs = L._start_shared(topo, nodes, self.rundir, "/b", 2)
        self.assertEqual(got["cmd"][:5], ["/b/l2ccd", "-t", "2", "--realtime", "10"])
        self.assertEqual(got["cmd"][5:], [
            "switchd@p-S1:%s/S1.conf" % self.rundir, "hostd@p-h1:%s/h1.conf" % self.rundir])
        self.assertEqual(sorted(procs), ["S1", "h1"])
        for n in ("S1", "h1"):
            with open(os.path.join(self.rundir, n + ".pid")) as f:
                self.assertEqual(f.read(), "4242\n")
            self.assertEqual(os.readlink(os.path.join(self.rundir, n + ".log")), "l2ccd.log")

    def test_is_our_daemon(self):
        argv = ["/b/l2ccd", "-t", "1", "switchd@p-S1:/r/S1.conf", "hostd@p-h1:/r/h1.conf"]
        with mock.patch.object(L, "_proc_argv", lambda pid: argv):
            self.assertTrue(L.is_our_daemon(7, "/r/h1.conf"))
            self.assertFalse(L.is_our_daemon(7, "/r/h2.conf"))
            self.assertFalse(L.is_our_daemon(7, "/r/S1"))   # a whole path, not a prefix


if __name__ == "__main__":
    unittest.main()
