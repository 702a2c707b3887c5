# SPDX-License-Identifier: BSD-2-Clause
"""`l2cc-lab export`: one topology deployed over several machines.

A topology whose nodes say `machine:` (and whose links between machines
say `nics:`) is turned into, per machine, the daemon configurations, the
systemd instances to enable and a shell script with the interface settings
the netns lab would apply to its veths, plus an Ansible inventory and
playbook (builtin modules only) that install and start all of it. Ansible
is the deployment engine; nothing here deploys.

The daemon configurations come from the lab's own generator
(topo.render_configs) with the control sockets in /run/l2cc, where the
units expect them; only the interface names differ from what `l2cc-lab up`
writes (the NICs, or a machine's local veths, instead of the lab's names).

Interfaces on a machine all live in its root namespace, so names the lab
can reuse in every namespace (eth0, cc0, up0, a port called p1 on two
switches) are replaced by names unique per machine, derived from the link
number k (1-based, in file order):
  l2e<k>   a host's stack interface when it is behind hostd (the lab's eth0)
  l2c<k>   its hostd's host_port, the veth peer of l2e<k> (the lab's cc0)
  l2l<k>a, l2l<k>b   a link between two nodes of one machine without nics:
           a veth pair, ends in endpoint order
"""

import json
import os
import re
import shlex

from . import REPO
from . import lab as L
from . import topo as T

#: Where the units expect the control sockets (and where stats go).
RUNDIR = "/run/l2cc"
UNIT_DIR = os.path.join(REPO, "config", "systemd")
DAEMON_UNIT = {"switchd": "switchd@.service", "hostd": "hostd@.service"}
NICS_SCRIPT = "l2cc-nics.sh"
INSTALL_SCRIPT = "install.sh"


def unit_conf_path(daemon, instance, unit_dir=UNIT_DIR):
    """The config file unit DAEMON@INSTANCE reads: its ExecStart's -c,
    with %i filled in (the unit files are the authority, not this code)."""
    path = os.path.join(unit_dir, DAEMON_UNIT[daemon])
    with open(path) as f:
        for line in f:
            if line.startswith("ExecStart="):
                m = re.search(r"(?:^|\s)-c\s+(\S+)", line)
                if m:
                    return m.group(1).replace("%i", instance)
    raise L.LabError("%s: no ExecStart with -c CONFIG: cannot tell where its config goes"
                     % path)


class End:
    """One end of a link on its machine: the node, its port label, the
    interface it is on there, and whether that is a NIC or a local veth."""

    def __init__(self, node, port, ifname, nic):
        self.node, self.port, self.ifname, self.nic = node, port, ifname, nic


def plan_interfaces(topo):
    """({node: render ifnames}, {machine: [shell lines]}, errors as (line,
    message)). The shell lines set up every interface of the machine the
    way lab._make_links() sets up the lab's veths."""
    ifnames = {n: {} for n in topo.nodes}
    lines = {m: [] for m in topo.machines()}
    owner = {}      # (machine, ifname) -> what, for collisions
    errs = []

    def claim(m, ifname, what, line):
        if (m, ifname) in owner:
            errs.append((line, "interface %s on machine %s is both %s and %s, expected "
                         "distinct names (the export's own are l2e<k>, l2c<k>, l2l<k>a/b)"
                         % (ifname, m, owner[(m, ifname)], what)))
        owner[(m, ifname)] = what

    for lk in topo.links:
        k = lk.index + 1
        ends = []
        for i, (nn, port) in enumerate(lk.ends):
            n = topo.nodes[nn]
            if lk.nics:
                ifn, nic = lk.nics[i], True
            else:
                ifn, nic = "l2l%d%s" % (k, "ab"[i]), False
            claim(n.machine, ifn, "link %d's end %s" % (k, lk.endpoint(i)), lk.line)
            ends.append(End(n, port, ifn, nic))
        what = "link %d (%s - %s)" % (k, lk.endpoint(0), lk.endpoint(1))
        out = lines[ends[0].node.machine]
        if not lk.nics:
            out.append("# %s: a veth pair on this machine" % what)
            out.append("veth %s %s" % (ends[0].ifname, ends[1].ifname))
        mtu = lk.mtu
        for e in ends:
            out = lines[e.node.machine]
            n = e.node
            if e.nic:
                out.append("# %s: %s's end is NIC %s" % (what, n.name, e.ifname))
                out.append("nic %s" % e.ifname)
            if n.kind == "switch":
                ifnames[n.name][e.port] = e.ifname
                out.append("port %s %d" % (e.ifname, mtu))
            elif not n.hostd:
                out.append("host %s %s %s/%d %d" % (e.ifname, n.mac, n.addr,
                                                     topo.subnet.prefixlen, mtu))
                out.extend(_sysctls(n))
            else:
                stack, hport = "l2e%d" % k, "l2c%d" % k
                claim(n.machine, stack, "host %s's stack" % n.name, n.line)
                claim(n.machine, hport, "hostd %s's host_port" % n.name, n.line)
                ifnames[n.name] = {"host_port": hport, "uplink": e.ifname}
                out.append("# host %s behind hostd: %s -veth- %s [hostd] %s"
                           % (n.name, stack, hport, e.ifname))
                out.append("veth %s %s" % (stack, hport))
                out.append("port %s %d" % (hport, mtu))
                out.append("port %s %d" % (e.ifname, mtu))
                out.append("host %s %s %s/%d %d" % (stack, n.mac, n.addr, topo.subnet.prefixlen,
                                                     T.host_mtu(n, mtu)))
                out.extend(_sysctls(n))
    return ifnames, lines, errs


def _sysctls(h):
    # The lab sets these in the host's namespace; here they are the machine's.
    return ["sysctl -qw %s" % shlex.quote("%s=%s" % kv) for kv in L.host_sysctls(h)]


#: The functions the machine script's lines call. Idempotent: the script
#: can run again (after a reboot, from the playbook on every run).
_SCRIPT_HEAD = r'''#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Generated by l2cc-lab export from %(topo)s (machine %(machine)s).
# The interface settings of this machine's part of lab %(name)s: what
# `l2cc-lab up` does to its veths, done to NICs and local veths. Run as root
# before the daemons start (install.sh and the playbook do). Idempotent.
set -eu

die() { echo "l2cc-nics: $*" >&2; exit 1; }
warn() { echo "l2cc-nics: $*" >&2; }

# NAME: a NIC that must exist already.
nic() {
	ip link show dev "$1" >/dev/null 2>&1 || die "NIC $1 does not exist on $(hostname): rename it in the topology's nics:"
}

# A B: a veth pair on this machine, unless it exists.
veth() {
	ip link show dev "$1" >/dev/null 2>&1 || ip link add name "$1" type veth peer name "$2"
}

# IF MTU: an interface a daemon binds (AF_XDP): MTU, no IPv6 chatter in the
# counters, one receive queue (each port serves queue 0 only, and the XDP
# program drops what arrives on a queue without a socket), up.
port() {
	ip link set dev "$1" mtu "$2"
	sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" || warn "$1: could not turn IPv6 off"
	if ethtool -l "$1" >/dev/null 2>&1; then
		ethtool -L "$1" combined 1 2>/dev/null || ethtool -L "$1" rx 1 tx 1 2>/dev/null ||
			warn "$1: could not set one queue (ethtool -L): check ethtool -l $1"
	fi
	ip link set dev "$1" up
}

# IF MAC ADDR/LEN MTU: a host's stack interface.
host() {
	ip link set dev "$1" address "$2" mtu "$4"
	sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" || warn "$1: could not turn IPv6 off"
	ip addr replace "$3" dev "$1"
	# Checksums left to the "hardware" would arrive never computed through
	# AF_XDP copy mode (a veth, or a daemon in between), and be dropped.
	ethtool -K "$1" tx off >/dev/null
	ip link set dev "$1" up
}

'''


def machine_script(topo, machine, lines):
    head = _SCRIPT_HEAD % {"topo": topo.path, "machine": machine, "name": topo.name}
    return head + "\n".join(lines[machine]) + "\n"


def _install_script(machine, confs, units):
    q = shlex.quote
    out = ["#!/bin/sh",
           "# SPDX-License-Identifier: BSD-2-Clause",
           "# Generated by l2cc-lab export (machine %s): what the playbook does, for a" % machine,
           "# machine without Ansible. Run as root from this directory, after",
           "# `make install` of l2cc (the daemons in /usr/local/sbin, the units).",
           "set -eu",
           'cd "$(dirname "$0")"',
           "sh ./%s" % NICS_SCRIPT,
           "install -d -m 0755 /etc/l2cc"]
    for rel in confs:
        out.append("install -m 0644 %s %s" % (q(rel), q("/" + rel)))
    out.append("systemctl daemon-reload")
    for u in units:
        out.append("systemctl enable %s" % q(u))
        out.append("systemctl restart %s" % q(u))
    return "\n".join(out) + "\n"


PLAYBOOK = """\
# SPDX-License-Identifier: BSD-2-Clause
# Generated by l2cc-lab export from %(topo)s (lab %(name)s).
# Installs each machine's part of the lab and starts its daemons:
#   ansible-playbook -i inventory.yml playbook.yml
# Needs on each machine: l2cc installed (`make install`: the daemons, l2ccctl
# and the switchd@/hostd@ units) and root (become). Builtin modules only.
- name: l2cc lab %(name)s
  hosts: l2cc
  become: true
  tasks:
    - name: Interfaces (NICs, local veths, addresses), as l2cc-lab up sets its veths
      ansible.builtin.script: "{{ playbook_dir }}/{{ inventory_hostname }}/%(nics)s"

    - name: Configuration directory
      ansible.builtin.file:
        path: /etc/l2cc
        state: directory
        mode: "0755"

    - name: Daemon configurations
      ansible.builtin.copy:
        src: "{{ playbook_dir }}/{{ inventory_hostname }}/etc/l2cc/"
        dest: /etc/l2cc/
        mode: "0644"

    - name: systemd sees the units that make install put there
      ansible.builtin.systemd:
        daemon_reload: true

    - name: Daemons (systemd instances), restarted to read their configurations
      ansible.builtin.systemd:
        name: "{{ item }}"
        enabled: true
        state: restarted
      loop: "{{ l2cc_units }}"
"""


def _inventory(topo, machines):
    out = ["# SPDX-License-Identifier: BSD-2-Clause",
           "# Generated by l2cc-lab export from %s (lab %s)." % (topo.path, topo.name),
           "# One host per machine of the topology; set ansible_host (and ansible_user)",
           "# to reach each one.",
           "l2cc:",
           "  hosts:"]
    for m, units in machines.items():
        out.append("    %s:" % m)
        out.append("      ansible_host: %s" % m)
        out.append("      l2cc_units: [%s]" % ", ".join(units))
    return "\n".join(out) + "\n"


def export(topo_path, outdir, bindir=None):
    """Write the export of topo_path into outdir (new or empty). Returns
    (topology, manifest, notes); raises T.TopoError, L.UsageError, L.LabError."""
    topo = T.load(topo_path)
    machines = topo.machines()
    if not machines:
        raise T.TopoError(topo_path, [(1, "no node has a machine, expected machine: NAME on "
                                          "every node to export (docs/testbed.md, "
                                          "\"Machines\")")])
    ifnames, lines, errs = plan_interfaces(topo)
    if errs:
        raise T.TopoError(topo_path, errs)
    confs = T.render_configs(topo, RUNDIR, ifnames)
    errs = T.path_errors(topo, RUNDIR)
    if errs:
        raise L.UsageError("\n".join(errs))
    derrs, notes = T.check_daemon_configs(topo, confs, L.bindir_of(bindir))
    if derrs:
        raise T.TopoError(topo_path, derrs)
    if os.path.exists(outdir) and (not os.path.isdir(outdir) or os.listdir(outdir)):
        raise L.UsageError("--out %s exists and is not an empty directory" % outdir)
    for m in machines:
        hosts = [n.name for n in topo.hosts() if n.machine == m]
        if len(hosts) > 1:
            notes.append("machine %s has hosts %s: their addresses share its one stack, so "
                         "traffic between them stays inside the machine" % (m, ", ".join(hosts)))

    manifest = {"name": topo.name, "topology": topo.path, "rundir": RUNDIR, "machines": {}}
    for m in machines:
        mdir = os.path.join(outdir, m)
        entry = {"nodes": [], "configs": {}, "units": [], "nics": [],
                 "script": NICS_SCRIPT, "install": INSTALL_SCRIPT}
        for n in topo.nodes.values():
            if n.machine != m:
                continue
            entry["nodes"].append(n.name)
            if n.name in confs:
                c = confs[n.name]
                conf = unit_conf_path(c.daemon, n.name)
                rel = conf.lstrip("/")
                _write(os.path.join(mdir, rel), c.text())
                entry["configs"][n.name] = rel
                entry["units"].append("%s@%s.service" % (c.daemon, n.name))
        for lk in topo.links:
            for i, (nn, _) in enumerate(lk.ends):
                if lk.nics and topo.nodes[nn].machine == m:
                    entry["nics"].append(lk.nics[i])
        _write(os.path.join(mdir, NICS_SCRIPT), machine_script(topo, m, lines), 0o755)
        _write(os.path.join(mdir, INSTALL_SCRIPT),
               _install_script(m, entry["configs"].values(), entry["units"]), 0o755)
        _write(os.path.join(mdir, "units"), "".join(u + "\n" for u in entry["units"]))
        manifest["machines"][m] = entry
    _write(os.path.join(outdir, "inventory.yml"),
           _inventory(topo, {m: e["units"] for m, e in manifest["machines"].items()}))
    _write(os.path.join(outdir, "playbook.yml"),
           PLAYBOOK % {"topo": topo.path, "name": topo.name, "nics": NICS_SCRIPT})
    _write(os.path.join(outdir, "export.json"), json.dumps(manifest, indent=2) + "\n")
    return topo, manifest, notes


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
