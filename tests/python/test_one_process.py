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


class TestThreads(unittest.TestCase):
    def test_default_is_a_process_per_daemon(self):
        with mock.patch.dict(os.environ, {}, clear=True):
            self.assertIsNone(L.one_process_threads())

    def test_option_and_environment(self):
        with mock.patch.dict(os.environ, {"L2CC_ONE_PROCESS": "3"}):
            self.assertEqual(L.one_process_threads(), 3)
            self.assertEqual(L.one_process_threads("2"), 2)   # the option wins

    def test_bad_values(self):
        for v in ("0", "65", "two", "-1"):
            with self.assertRaises(L.UsageError, msg=v):
                L.one_process_threads(v)


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
