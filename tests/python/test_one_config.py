# SPDX-License-Identifier: BSD-2-Clause
"""One configuration per scheme (docs/ibcc.md, "One configuration"): every
Gran lab runs IB CC with the same switch and host keys, and no Gran sweep
changes them for all of its points. A sweep that needs another value for
a reason of its own varies it per point or per axis, where the tables show
it, or is listed here with that reason."""

import glob
import os
import unittest

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPOS = sorted(glob.glob(os.path.join(ROOT, "config/topologies/gran-ibcc-*.yaml")))
SWEEPS = sorted(glob.glob(os.path.join(ROOT, "config/sweeps/gran-*.yaml")))

# The keys that make up IB CC's configuration (switchd's and hostd's).
SWITCH_KEYS = ("marking", "threshold", "marking_rate", "hysteresis", "threshold_mode",
               "victim_mask", "packet_size")
# Sweep-wide overrides allowed, with why.
ALLOWED = {
    # The hysteresis bound is about the single-threshold fault, which this
    # switch shows only near the top of the buffer (gran-type1's axis).
    ("gran-hysteresis", "topology.defaults.switch.threshold"): 2,
}


def _load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


class TestIbccOneConfiguration(unittest.TestCase):
    def test_labs_share_the_keys(self):
        self.assertGreaterEqual(len(TOPOS), 4)
        seen = {}
        for path in TOPOS:
            d = _load(path).get("defaults", {})
            sw = {k: d.get("switch", {}).get(k) for k in SWITCH_KEYS}
            cfg = (tuple(sorted(sw.items())), tuple(sorted((d.get("law") or {}).items())))
            seen.setdefault(cfg, []).append(os.path.basename(path))
        self.assertEqual(len(seen), 1, "the Gran labs differ in IB CC's keys: %s" % seen)

    def test_labs_set_no_key_per_port(self):
        # A per-link or per-node override would be a second configuration.
        for path in TOPOS:
            t = _load(path)
            for link in t.get("links", []):
                for k in SWITCH_KEYS:
                    self.assertNotIn(k, link.get("port") or {}, "%s: a link sets %s" % (path, k))
            for name, node in (t.get("nodes") or {}).items():
                for k in SWITCH_KEYS:
                    self.assertNotIn(k, (node or {}).get("switch") or {},
                                     "%s: node %s sets %s" % (path, name, k))
                self.assertNotIn("law", node or {}, "%s: node %s sets its law" % (path, name))

    def test_sweeps_change_no_key_for_every_point(self):
        self.assertGreaterEqual(len(SWEEPS), 6)
        for path in SWEEPS:
            sw = _load(path)
            name = sw["name"]
            for k, v in (sw.get("set") or {}).items():
                touches = k.startswith("topology.defaults.law") or any(
                    k == "topology.defaults.switch" or k == "topology.defaults.switch." + s
                    for s in SWITCH_KEYS)
                if touches:
                    self.assertEqual(ALLOWED.get((name, k)), v,
                                     "%s: set %s for every point (a second configuration)"
                                     % (path, k))


if __name__ == "__main__":
    unittest.main()
