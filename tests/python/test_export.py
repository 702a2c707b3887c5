# SPDX-License-Identifier: BSD-2-Clause
"""`l2cc-lab export` (issue 19, one topology over several machines): the
machine:/nics: keys and their errors (FILE:LINE), the export's layout,
that each exported daemon config is what the netns lab runs for the same
node except for interface names, that each passes its daemon's --check,
that the units named are the shipped templates reading those files, and
that ansible-playbook --syntax-check accepts the playbook."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(REPO, "build", "bin")
TWO = os.path.join(REPO, "config", "topologies", "two-machines.yaml")

from l2cc import export as X  # noqa: E402
from l2cc import topo as T  # noqa: E402

#: The keys whose values are interface names: the only ones an export may change.
IF_KEYS = ("ifname", "host_port", "uplink")

BASE = """\
name: m
nodes:
  s1: {kind: switch, machine: A}
  s2: {kind: switch, machine: B}
  h1: {kind: host, machine: A}
  h2: {kind: host, machine: B}
links:
  - endpoints: ["s1:p1", "h1:eth0"]
  - endpoints: ["s1:p2", "s2:p2"]
    nics: [eth1, eth1]
  - endpoints: ["s2:p1", "h2:eth0"]
"""


class Tmp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="l2cc-export-test.")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, text, name="t.yaml"):
        p = os.path.join(self.tmp, name)
        with open(p, "w") as f:
            f.write(textwrap.dedent(text))
        return p

    def errors(self, text):
        """[(line, message)] of a topology that must not load."""
        with self.assertRaises(T.TopoError) as cm:
            T.load(self.write(text))
        return cm.exception.errors

    def assertError(self, text, line, pattern):
        errs = self.errors(text)
        self.assertTrue(any(ln == line and re.search(pattern, msg) for ln, msg in errs),
                        "expected line %d: /%s/, got %s" % (line, pattern, errs))


class TestKeys(Tmp):
    def test_base_loads(self):
        t = T.load(self.write(BASE))
        self.assertEqual(t.machines(), ["A", "B"])
        self.assertEqual(t.nodes["h2"].machine, "B")
        self.assertEqual(t.links[1].nics, ["eth1", "eth1"])
        self.assertIsNone(t.links[0].nics)

    def test_shipped_topologies_unchanged(self):
        d = os.path.join(REPO, "config", "topologies")
        for fn in sorted(os.listdir(d)):
            t = T.load(os.path.join(d, fn))
            if fn != "two-machines.yaml":
                self.assertEqual(t.machines(), [], fn)
        t = T.load(TWO)
        self.assertEqual(t.machines(), ["A", "B"])
        nics = sum(len(lk.nics or ()) for lk in t.links)
        self.assertEqual(nics, 4, "the README's two machines have four NIC ports")

    def test_machine_on_every_node(self):
        self.assertError(BASE.replace("h2: {kind: host, machine: B}", "h2: {kind: host}"),
                         6, r"node h2 has no machine.*node s1: line 3")

    def test_link_between_machines_needs_nics(self):
        self.assertError(BASE.replace("    nics: [eth1, eth1]\n", ""), 9,
                         r"link 2 \(s1:p2 - s2:p2\) joins machines A and B, expected nics")

    def test_nics_two_names(self):
        self.assertError(BASE.replace("[eth1, eth1]", "[eth1]"), 10, r"list of two interface")
        self.assertError(BASE.replace("[eth1, eth1]", "eth1"), 10, r"list of two interface")
        self.assertError(BASE.replace("[eth1, eth1]", "[eth1, averyveryverylongname]"), 10,
                         r'nic "averyveryverylongname" of link 2 \(node s2\)')
        self.assertError(BASE.replace("[eth1, eth1]", "[eth1, 'a b']"), 10,
                         r'nic "a b" of link 2 \(node s2\) is not an interface name')

    def test_nic_once_per_machine(self):
        text = BASE.replace('  - endpoints: ["s1:p1", "h1:eth0"]\n',
                            '  - endpoints: ["s1:p1", "h1:eth0"]\n    nics: [eth1, eth2]\n')
        self.assertError(text, 11, r'nic "eth1" of machine A is already link 1\'s')

    def test_nics_need_machines(self):
        text = re.sub(r", machine: [AB]", "", BASE)
        self.assertError(text, 10, r"link 2 has nics but no node has a machine")

    def test_machine_name(self):
        self.assertError(BASE.replace("machine: A}", "machine: 'A B'}", 1), 3,
                         r'machine "A B" of node s1 is not a machine name')
        self.assertError(BASE.replace("machine: A}", "machine: [A]}", 1), 3,
                         r"machine of node s1 must be a string")

    def test_lab_configs_ignore_machines(self):
        """The netns lab renders the same configs with or without machine: and nics:."""
        plain = re.sub(r", machine: [AB]|    nics: .*\n", "", BASE)
        a = T.render_configs(T.load(self.write(BASE, "a.yaml")), "/run/x")
        b = T.render_configs(T.load(self.write(plain, "a.yaml")), "/run/x")
        self.assertEqual({k: c.text() for k, c in a.items()}, {k: c.text() for k, c in b.items()})

    def test_export_needs_machines(self):
        p = self.write(re.sub(r", machine: [AB]|    nics: .*\n", "", BASE))
        with self.assertRaises(T.TopoError) as cm:
            X.export(p, os.path.join(self.tmp, "out"), BIN)
        self.assertIn("no node has a machine", str(cm.exception))

    def test_plain_host_on_a_nic(self):
        """A host without hostd on a NIC: the NIC is its stack interface
        (address, MAC, checksum offload off), not a daemon's port."""
        text = BASE.replace("h2: {kind: host, machine: B}",
                            "h2: {kind: host, hostd: false, machine: B}")
        text = text.replace('  - endpoints: ["s2:p1", "h2:eth0"]\n',
                            '  - endpoints: ["s2:p1", "h2:eth0"]\n    nics: [eth3, eth4]\n')
        out = os.path.join(self.tmp, "out")
        topo, man, _ = X.export(self.write(text), out, BIN)
        with open(os.path.join(out, "B", X.NICS_SCRIPT)) as f:
            b = f.read()
        self.assertIn("host eth4 %s 10.0.0.2/24 1500\n" % topo.nodes["h2"].mac, b)
        self.assertNotIn("port eth4", b)
        self.assertIn("port eth3 1500\n", b)
        self.assertEqual(man["machines"]["B"]["nics"], ["eth1", "eth3", "eth4"])

    def test_cli_exit_status(self):
        """`l2cc-lab export` on a file without machines: status 2, FILE:LINE."""
        p = self.write(re.sub(r", machine: [AB]|    nics: .*\n", "", BASE))
        r = subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "l2cc-lab"),
                            "--bin", BIN, "export", p, "--out", os.path.join(self.tmp, "o")],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn(p + ":1: no node has a machine", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "o")))

    def test_interface_name_collision(self):
        text = BASE.replace("[eth1, eth1]", "[l2l1a, eth1]")
        p = self.write(text)
        with self.assertRaises(T.TopoError) as cm:
            X.export(p, os.path.join(self.tmp, "out"), BIN)
        self.assertRegex(str(cm.exception), r"t.yaml:\d+: interface l2l1a on machine A is both")


def conf_map(text):
    """[(key or section, value)] of a daemon config, comments dropped."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            out.append(("#", s))
        elif s.startswith("["):
            out.append((s, None))
        else:
            k, v = (x.strip() for x in s.split("=", 1))
            out.append((k, v))
    return out


class TestExport(Tmp):
    def setUp(self):
        super().setUp()
        self.out = os.path.join(self.tmp, "out")
        self.topo, self.man, self.notes = X.export(TWO, self.out, BIN)

    def path(self, *p):
        return os.path.join(self.out, *p)

    def test_layout(self):
        want = {"inventory.yml", "playbook.yml", "export.json", "A", "B"}
        self.assertEqual(set(os.listdir(self.out)), want)
        with open(self.path("export.json")) as f:
            man = json.load(f)
        self.assertEqual(man, self.man)
        a, b = man["machines"]["A"], man["machines"]["B"]
        self.assertEqual(a["nodes"], ["sA", "h1"])
        self.assertEqual(a["units"], ["switchd@sA.service", "hostd@h1.service"])
        self.assertEqual(b["units"], ["switchd@sB.service"])     # h2 has no hostd
        self.assertEqual(sorted(a["nics"]), ["enp1s0f0", "enp1s0f1", "enp1s0f2"])
        self.assertEqual(b["nics"], ["enp1s0f0"])
        for m, e in man["machines"].items():
            with open(self.path(m, "units")) as f:
                self.assertEqual(f.read().split(), e["units"])
            for rel in e["configs"].values():
                self.assertTrue(os.path.isfile(self.path(m, rel)), rel)
            for s in (e["script"], e["install"]):
                self.assertTrue(os.access(self.path(m, s), os.X_OK), s)
                r = subprocess.run(["sh", "-n", self.path(m, s)], capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("inventory.yml")) as f:
            inv = f.read()
        self.assertIn("l2cc_units: [switchd@sA.service, hostd@h1.service]", inv)

    def test_refuses_nonempty_out(self):
        from l2cc import lab as L
        with self.assertRaises(L.UsageError):
            X.export(TWO, self.out, BIN)

    def test_units_are_the_shipped_templates(self):
        """Each unit is an instance of a shipped template whose ExecStart
        reads the config the export wrote, and whose runtime directory
        holds the ctl_socket (the units are checked as files: PID 1 here
        is not systemd)."""
        for m, e in self.man["machines"].items():
            for node, rel in e["configs"].items():
                unit = next(u for u in e["units"] if u.endswith("@%s.service" % node))
                daemon = unit.split("@")[0]
                tpl = os.path.join(REPO, "config", "systemd", daemon + "@.service")
                with open(tpl) as f:
                    text = f.read()
                execs = re.search(r"^ExecStart=(.*)$", text, re.M).group(1)
                self.assertIn("-c /" + rel.replace(node, "%i"), execs, unit)
                with open(self.path(m, rel)) as f:
                    conf = f.read()
                self.assertIn("ctl_socket = /run/l2cc/%s.sock" % node, conf)
                self.assertRegex(text, r"(?m)^RuntimeDirectory=l2cc\b")

    def test_configs_are_the_labs_but_interfaces(self):
        """What `l2cc-lab up` writes into its run directory (lab.prepare's
        configs, for the same file) against the export: equal line for line
        once the run directory is the same, except interface names, which
        must be the topology's NICs or the export's own veths."""
        from l2cc import lab as L
        rundir = os.path.join(self.tmp, "run")
        _, _, lab_confs, _ = L.prepare(TWO, rundir, BIN)
        self.assertEqual(set(lab_confs), {n for e in self.man["machines"].values()
                                          for n in e["configs"]})
        nics = {"sA": {"p1": "enp1s0f2", "p2": "enp1s0f0"},
                "sB": {"p2": "enp1s0f0", "p1": "l2l3a"},
                "h1": {"host_port": "l2c1", "uplink": "enp1s0f1"}}
        for m, e in self.man["machines"].items():
            for node, rel in e["configs"].items():
                with open(self.path(m, rel)) as f:
                    got = f.read()
                want = lab_confs[node].text().replace(rundir + "/", X.RUNDIR + "/")
                g, w = conf_map(got), conf_map(want)
                self.assertEqual(len(g), len(w), node)
                section = None
                for (gk, gv), (wk, wv) in zip(g, w):
                    self.assertEqual(gk, wk, node)
                    if gk.startswith("["):
                        section = gk
                    if gk in IF_KEYS:
                        label = section[len("[port "):-1] if gk == "ifname" else gk
                        self.assertEqual(gv, nics[node][label], "%s %s %s" % (node, section, gk))
                        self.assertNotEqual(gv, wv)
                    else:
                        self.assertEqual(gv, wv, "%s: %s" % (node, gk))

    @unittest.skipUnless(os.access(os.path.join(BIN, "switchd"), os.X_OK)
                         and os.access(os.path.join(BIN, "hostd"), os.X_OK),
                         "switchd/hostd are not built (make)")
    def test_daemon_check(self):
        n = 0
        for m, e in self.man["machines"].items():
            for node, rel in e["configs"].items():
                daemon = "switchd" if self.topo.nodes[node].kind == "switch" else "hostd"
                r = subprocess.run([os.path.join(BIN, daemon), "-c", self.path(m, rel),
                                    "--check"], capture_output=True, text=True,
                                   stdin=subprocess.DEVNULL)
                self.assertEqual(r.returncode, 0, "%s: %s" % (rel, r.stderr + r.stdout))
                n += 1
        self.assertEqual(n, 3)

    @unittest.skipUnless(shutil.which("ansible-playbook"),
                         "ansible-playbook is missing (apt-get install ansible-core, "
                         "scripts/setup.sh): the playbook's syntax is not checked")
    def test_ansible_syntax(self):
        env = dict(os.environ, ANSIBLE_LOCAL_TEMP=os.path.join(self.tmp, "ansible"),
                   ANSIBLE_HOME=os.path.join(self.tmp, "ansible"), ANSIBLE_NOCOLOR="1")
        r = subprocess.run(["ansible-playbook", "-i", self.path("inventory.yml"),
                            "--syntax-check", self.path("playbook.yml")],
                           capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        # The inventory parses and has both machines with their units.
        r = subprocess.run(["ansible-inventory", "-i", self.path("inventory.yml"), "--list"],
                           capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        inv = json.loads(r.stdout)
        self.assertEqual(sorted(inv["l2cc"]["hosts"]), ["A", "B"])
        self.assertEqual(inv["_meta"]["hostvars"]["A"]["l2cc_units"],
                         ["switchd@sA.service", "hostd@h1.service"])
        # Builtin modules only: every task's module is ansible.builtin.*.
        with open(self.path("playbook.yml")) as f:
            mods = re.findall(r"^      (ansible\.[a-z_.]+|[a-z_]+):", f.read(), re.M)
        mods = [x for x in mods if x not in ("loop", "name", "when", "become")]
        self.assertTrue(mods)
        for x in mods:
            self.assertTrue(x.startswith("ansible.builtin."), x)

    def test_interface_script(self):
        with open(self.path("A", X.NICS_SCRIPT)) as f:
            a = f.read()
        with open(self.path("B", X.NICS_SCRIPT)) as f:
            b = f.read()
        # The lab's eth0 settings (MAC, address, MTU less hostd's tag,
        # checksum offload off) on the host stack interfaces.
        h1, h2 = self.topo.nodes["h1"], self.topo.nodes["h2"]
        self.assertIn("host l2e1 %s 10.0.0.1/24 1482\n" % h1.mac, a)
        self.assertIn("host l2l3b %s 10.0.0.2/24 1500\n" % h2.mac, b)
        self.assertIn('ethtool -K "$1" tx off', a)
        for nic in ("enp1s0f0", "enp1s0f1", "enp1s0f2"):
            self.assertIn("nic %s\n" % nic, a)
            self.assertIn("port %s 1500\n" % nic, a)
        self.assertIn("veth l2e1 l2c1\n", a)
        self.assertIn("veth l2l3a l2l3b\n", b)
        self.assertNotIn("enp1s0f1", b)


if __name__ == "__main__":
    unittest.main()
