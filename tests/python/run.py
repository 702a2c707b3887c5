#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The `python` layer of tests/run.sh: every tests/python/test_*.py
(unittest, nothing beyond Debian's python3 and the testbed's own
packages), reported the way the C unit tests report: a FAIL or SKIP line
per test that did not pass, then `# unit: N passed, N failed`."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))


class _Result(unittest.TextTestResult):
    def addFailure(self, test, err):
        super().addFailure(test, err)
        print("FAIL %s" % test.id(), flush=True)

    def addError(self, test, err):
        super().addError(test, err)
        print("FAIL %s (error)" % test.id(), flush=True)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print("SKIP %s: %s" % (test.id(), reason), flush=True)


def main():
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    r = unittest.TextTestRunner(stream=sys.stdout, verbosity=0, resultclass=_Result).run(suite)
    bad = len(r.failures) + len(r.errors)
    print("# unit: %d passed, %d failed" % (r.testsRun - bad - len(r.skipped), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
