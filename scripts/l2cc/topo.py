# SPDX-License-Identifier: BSD-2-Clause
"""Topology files: parse, validate, and render the daemons' configurations.

A topology is a containerlab-like YAML file (docs/testbed.md, "Topology
files"). load() reads and checks all of it and either returns a Topology or
raises TopoError with every problem found, each as FILE:LINE: message. It
never touches the system, so a broken file leaves nothing half-built.

Line numbers come from yaml.compose(): the file is walked node by node so
that every mapping, sequence and scalar remembers the line it started on.

render_configs() turns a Topology into one switchd/hostd configuration per
daemon, remembering for each generated line which YAML line it came from, so
that check_daemon_configs() can run each daemon's own `--check` (the
authority on its keys and values) and report its complaints against the
topology file rather than against a generated file.
"""

import hashlib
import ipaddress
import os
import re
import subprocess
import tempfile

import yaml

# ---- constants ---------------------------------------------------------------

#: Per-link defaults when neither the link nor `defaults:` sets them. They
#: follow the daemons' own defaults, except the rate: hostd cannot pace an
#: unlimited uplink, so a lab's links default to hostd's 1G.
LINK_DEFAULTS = {"rate": "1G", "mtu": 1500, "buffer": "64K", "flow_control": "none"}

#: The l2cc data tag that hostd adds to every data frame (wire-formats.md):
#: a host behind hostd gets this much less MTU than the fabric.
TAG_ROOM = 18
#: The 802.1Q priority tag hostd adds with pcp_from_dscp = yes: 4 bytes more.
VLAN_ROOM = 4

FLOW_CONTROLS = ("none", "pause", "pfc", "credit")
KINDS = ("switch", "host")
IFNAMSIZ = 15               # longest Linux interface name
CTL_SOCKET_MAX = 107        # sun_path, as the daemons check ctl_socket
DAEMON_NAME_MAX = 31        # [switch]/[hostd] name
MAX_RATE = 400 * 10**9      # the daemons' rate range is 0..400G
STATS_INTERVAL = "10ms"     # lab default: fine-grained time series for plots

TOP_KEYS = ("name", "prefix", "subnet", "one_process", "defaults", "nodes", "links")
ONE_PROCESS_MAX = 64         # l2ccd threads (l2ccd -t)
DEFAULT_KEYS = ("rate", "mtu", "buffer", "flow_control", "switch", "hostd", "law", "tcp_ecn",
                "tcp_window")
SWITCH_KEYS = ("kind", "switch", "machine")
HOST_KEYS = ("kind", "hostd", "addr", "mac", "law", "rates", "tcp_ecn", "tcp_window",
             "machine")
#: A host's TCP stack (sysctls in its namespace): tcp_ecn is
#: net.ipv4.tcp_ecn (0 off, 1 on, 2 only when the peer asks); tcp_window
#: clamps every TCP socket's buffers as SO_RCVBUF/SO_SNDBUF of that size
#: would (iperf3 -w), through tcp_rmem/tcp_wmem.
TCP_ECN_VALUES = (0, 1, 2)
TCP_WINDOW_MIN, TCP_WINDOW_MAX = 2048, 1 << 30
LINK_KEYS = ("endpoints", "rate", "mtu", "buffer", "flow_control", "port", "nics")
RATE_KEYS = ("dst", "rate", "ipd", "vlan")

#: Daemon keys the lab sets itself, and where the user sets them instead.
RESERVED = {
    "switch": {"name": "the node's name", "ctl_socket": "the lab's run directory",
               "stats_file": "the lab's run directory"},
    "hostd": {"name": "the node's name", "ctl_socket": "the lab's run directory",
              "stats_file": "the lab's run directory", "host_port": "the lab (cc0)",
              "uplink": "the lab (up0)"},
    "port": {"ifname": "the port name in endpoints", "role": "the node at the other end",
             "rate": "the link's rate", "buffer": "the link's buffer",
             "flow_control": "the link's flow_control", "mtu": "the link's mtu"},
    "law": {},
}

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
# A machine (`machine:`, for `l2cc-lab export`) is an Ansible inventory
# host name and a directory of the export: a host name's characters.
MACHINE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")
PREFIX_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
# No '-' in node names: a namespace is <prefix>-<node>, and `down` must be
# able to tell this lab's namespaces from those of a lab whose prefix
# merely starts with ours ("l2s" vs "l2s-x").
NODE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,%d}$" % (DAEMON_NAME_MAX - 1))
IFNAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
KEY_RE = re.compile(r"^[A-Za-z0-9_]+$")
MAC_RE = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
# The daemons' value syntax (daemon/config.c): rate, size, frame count.
RATE_RE = re.compile(r"^(\d+)(?:\.(\d+))?[ \t]*([kmgt]?)(?:bit|bps|bit/s)?$", re.I)
SIZE_RE = re.compile(r"^(\d+)[ \t]*(?:([kKmMgGtT])i?)?[bB]?$")
FRAMES_RE = re.compile(r"^(\d+)[ \t]*(?:frames|frame|f)$", re.I)

_RATE_MULT = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_SIZE_MULT = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}

RATE_HINT = "expected e.g. 100M, 1G, 2.5G or unlimited"
BUFFER_HINT = "expected a size (e.g. 64K, 1M, 9000) or a frame count (e.g. 4frames)"


class FileErrors(Exception):
    """Every problem of one input file (topology, experiment): a list of
    (line, message), reported as FILE:LINE: message."""

    def __init__(self, path, errors):
        super().__init__(path)
        self.path = path
        self.errors = sorted(errors, key=lambda e: (e[0] or 0))

    def lines(self):
        return ["%s:%s: %s" % (self.path, line or 1, msg) for line, msg in self.errors]

    def __str__(self):
        return "\n".join(self.lines())


class TopoError(FileErrors):
    """Every problem of one topology file: a list of (line, message)."""


# ---- values in the daemons' syntax -------------------------------------------

def parse_rate(s):
    """A rate as the daemons read it -> bit/s (0 = unlimited), or None."""
    s = str(s).strip()
    if s.lower() == "unlimited":
        return 0
    m = RATE_RE.match(s)
    if not m:
        return None
    whole, frac, unit = m.group(1), m.group(2) or "", m.group(3).lower()
    mult = _RATE_MULT[unit]
    num = int(whole + frac) * mult
    den = 10 ** len(frac)
    if num % den:
        return None  # finer than 1 bit/s: the daemons refuse it too
    v = num // den
    return v if v <= MAX_RATE else None


def parse_size(s):
    """A size in bytes as the daemons read it (64K = 65536), or None."""
    m = SIZE_RE.match(str(s).strip())
    if not m:
        return None
    return int(m.group(1)) * _SIZE_MULT[(m.group(2) or "").lower()]


def parse_buffer(s):
    """A buffer: ("bytes", n) or ("frames", n), or None."""
    s = str(s).strip()
    m = FRAMES_RE.match(s)
    if m:
        return ("frames", int(m.group(1)))
    n = parse_size(s)
    return None if n is None else ("bytes", n)


def conf_value(v):
    """A YAML scalar as a daemon config value: YAML's yes/no/on/off become
    booleans on the way in, so they go back out as yes/no."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v).strip()


def host_mtu(n, link_mtu):
    """eth0's MTU for host node n on a link of link_mtu: the link's, less
    hostd's l2cc tag when it runs hostd, less the priority tag too when
    its hostd sets pcp_from_dscp (so a full frame still fits the fabric)."""
    if not n.hostd:
        return link_mtu
    it = n.hostd_keys.get("pcp_from_dscp")
    pcp = it is not None and conf_value(it.value).lower() in ("yes", "true", "on", "1")
    return link_mtu - TAG_ROOM - (VLAN_ROOM if pcp else 0)


def lab_mac(prefix, index):
    """A stable, locally administered unicast MAC for host number `index`
    (1-based) of a lab: the same file always gives the same addresses, so
    [rate] sections can name them before any interface exists."""
    h = hashlib.sha1(prefix.encode()).digest()
    return "02:%02x:%02x:%02x:%02x:%02x" % (h[0], h[1], h[2], (index >> 8) & 0xFF, index & 0xFF)


# ---- YAML with line numbers ---------------------------------------------------

class YMap(dict):
    """A mapping that remembers where it and each of its keys start."""
    line = 0

    def __init__(self):
        super().__init__()
        self.klines = {}   # key -> line of the key
        self.vlines = {}   # key -> line of the value

    def vline(self, key):
        return self.vlines.get(key, self.line)

    def kline(self, key):
        return self.klines.get(key, self.line)


class YSeq(list):
    """A sequence that remembers where it and each of its items start."""
    line = 0

    def __init__(self):
        super().__init__()
        self.ilines = []


def _line(node):
    return node.start_mark.line + 1


def _plain(loader, node, errs):
    """The composed YAML node as YMap/YSeq/scalars, with line numbers."""
    if isinstance(node, yaml.MappingNode):
        m = YMap()
        m.line = _line(node)
        seen = {}
        for k, _ in node.value:
            if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                key = k.value
                if key in seen:
                    errs.append((_line(k), 'key "%s" repeats line %d, expected each key once'
                                 % (key, seen[key])))
                seen.setdefault(key, _line(k))
        loader.flatten_mapping(node)  # YAML merge keys (<<: *anchor)
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                errs.append((_line(k), "a mapping key must be a plain name"))
                continue
            key = loader.construct_object(k, deep=True)
            if not isinstance(key, str):
                key = k.value  # "1: x" or "yes: x": keep what was written
            m[key] = _plain(loader, v, errs)
            m.klines[key] = _line(k)
            m.vlines[key] = _line(v)
        return m
    if isinstance(node, yaml.SequenceNode):
        s = YSeq()
        s.line = _line(node)
        for v in node.value:
            s.append(_plain(loader, v, errs))
            s.ilines.append(_line(v))
        return s
    return loader.construct_object(node, deep=True)


def read_yaml(path):
    """(the file as YMap/YSeq/scalars, [(line, message)] for repeated keys);
    raises TopoError on a syntax error."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TopoError(path, [(0, "cannot read: %s" % e.strerror)])
    loader = yaml.SafeLoader(text)
    errs = []
    try:
        node = loader.get_single_node()
        if node is None:
            raise TopoError(path, [(1, "empty file, expected a mapping with name, nodes "
                                       "and links")])
        doc = _plain(loader, node, errs)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise TopoError(path, [((mark.line + 1) if mark else 1,
                                "YAML syntax: %s" % (e.problem or e.context))])
    except yaml.YAMLError as e:
        raise TopoError(path, [(1, "YAML: %s" % e)])
    finally:
        loader.dispose()
    return doc, errs


# ---- the model ------------------------------------------------------------------

class Item:
    """A daemon key's value and the YAML line it came from."""
    __slots__ = ("value", "line")

    def __init__(self, value, line):
        self.value = value
        self.line = line


class Link:
    """One veth pair. ends: [(node, port), (node, port)] as written."""

    def __init__(self, index, line):
        self.index = index
        self.line = line
        self.ends = []
        self.rate = self.rate_bps = self.mtu = self.buffer = self.flow_control = None
        self.lines = {}         # rate/mtu/buffer/flow_control -> YAML line
        self.endlines = []      # YAML line of each endpoint
        self.port_keys = {}     # extra [port] keys for the switch ends: key -> Item
        self.nics = None        # [ifname, ifname] in endpoint order (export only), or None
        self.nics_line = None

    def endpoint(self, i):
        return "%s:%s" % self.ends[i]


class Node:
    def __init__(self, name, kind, line, index):
        self.name = name
        self.kind = kind
        self.line = line
        self.index = index          # position in `nodes:`
        self.netns = None
        self.machine = None         # `machine:` (export only; the netns lab ignores it)
        self.machine_line = None
        # switch
        self.switch_keys = {}       # [switch] key -> Item
        self.ports = []             # [(port name, Link, peer node name)] in link order
        # host
        self.hostd = True
        self.hostd_keys = {}        # [hostd] key -> Item
        self.tcp_ecn = None         # net.ipv4.tcp_ecn in the host's namespace; None: as is
        self.tcp_window = None      # bytes: tcp_rmem/tcp_wmem clamp; None: as is
        self.law_keys = {}          # [law] key -> Item
        self.rates = []             # [(label, mac, {key: Item}, line)]
        self.addr = None            # ipaddress.IPv4Address
        self.mac = None
        self.link = None            # the host's one Link
        self.switch = None          # the switch it is on ...
        self.port = None            # ... and that switch's port


class Topology:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.shown_path = path      # as given, for messages
        self.name = None
        self.prefix = None
        self.subnet = None
        self.one_process = 0        # l2ccd threads for the lab's daemons; 0: a process each
        self.nodes = {}             # name -> Node, in file order
        self.links = []
        self.notes = []             # things `up` tells the user (not errors)

    def switches(self):
        return [n for n in self.nodes.values() if n.kind == "switch"]

    def hosts(self):
        return [n for n in self.nodes.values() if n.kind == "host"]

    def daemons(self):
        """Nodes that run a daemon: every switch, and hosts behind hostd."""
        return [n for n in self.nodes.values() if n.kind == "switch" or n.hostd]

    def machines(self):
        """Machine names in order of first appearance ([] for a netns-only file)."""
        out = []
        for n in self.nodes.values():
            if n.machine and n.machine not in out:
                out.append(n.machine)
        return out


def netns_name(prefix, node):
    return "%s-%s" % (prefix, node)


def is_lab_netns(prefix, ns):
    """Is namespace `ns` one of lab `prefix`'s (<prefix>-<node name>)?"""
    return ns.startswith(prefix + "-") and bool(NODE_RE.match(ns[len(prefix) + 1:]))


def default_prefix(name):
    # The whole name: namespace names are not interface names (no 15-byte
    # limit), and truncating would let two labs share namespaces.
    return "l2-" + name


# ---- validation ---------------------------------------------------------------------

class _Checker:
    def __init__(self, path):
        self.errs = []
        self.topo = Topology(path)
        self.broken = set()     # nodes already reported: links to them say nothing more

    def err(self, line, msg):
        self.errs.append((line, msg))

    def mapping(self, v, line, what, keys=None):
        """v as a YMap (None for a missing one), checking its keys."""
        if v is None:
            return YMap()
        if not isinstance(v, YMap):
            self.err(getattr(v, "line", line), "%s must be a mapping, got %s"
                     % (what, _kind(v)))
            return None
        if keys is not None:
            for k in v:
                if k not in keys:
                    self.err(v.kline(k), 'unknown key "%s" in %s, expected one of: %s'
                             % (k, what, ", ".join(keys)))
        return v

    def daemon_keys(self, v, line, section, what):
        """A mapping of daemon keys (e.g. `switch: {priority_sched: rr}`) as
        {key: Item}. The daemon's --check validates names and values later;
        here only what would corrupt the generated file, and reserved keys."""
        m = self.mapping(v, line, what)
        out = {}
        if not m:
            return out
        for k, val in m.items():
            kl = m.kline(k)
            if not KEY_RE.match(k):
                self.err(kl, 'key "%s" in %s is not a config key name, expected letters, '
                         'digits and _' % (k, what))
                continue
            if k in RESERVED[section]:
                self.err(kl, 'key "%s" in %s is set by l2cc-lab (from %s), expected it '
                         'left out' % (k, what, RESERVED[section][k]))
                continue
            if val is None or isinstance(val, (YMap, YSeq)):
                self.err(m.vline(k), 'key "%s" in %s needs a single value, got %s'
                         % (k, what, _kind(val)))
                continue
            s = conf_value(val)
            if "\n" in s or "#" in s or ";" in s:
                self.err(m.vline(k), 'value of "%s" in %s contains a newline, "#" or ";", '
                         'expected a plain value' % (k, what))
                continue
            out[k] = Item(val, m.vline(k))
        return out

    def tcp_key(self, k, v, line, what):
        """tcp_ecn (0, 1, 2) or tcp_window (a size); None after an error."""
        if k == "tcp_ecn":
            if isinstance(v, bool):
                v = int(v)      # YAML yes/no: 1/0
            if not isinstance(v, int) or v not in TCP_ECN_VALUES:
                self.err(line, 'tcp_ecn "%s" in %s, expected 0 (off), 1 (on) or 2 (only when '
                         'the peer asks), as net.ipv4.tcp_ecn' % (v, what))
                return None
            return v
        n = None if isinstance(v, (bool, YMap, YSeq, float)) or v is None else parse_size(v)
        if n is None or not TCP_WINDOW_MIN <= n <= TCP_WINDOW_MAX:
            self.err(line, 'tcp_window "%s" in %s, expected a size from 2K to 1G (e.g. 64K)'
                     % (v, what))
            return None
        return n

    def string(self, v, line, what):
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            return str(v)
        self.err(line, "%s must be a string, got %s" % (what, _kind(v)))
        return None

    # -- link attributes (defaults and per link) ---------------------------

    def link_attr(self, key, v, line, what):
        """Check one of rate/mtu/buffer/flow_control; return the value or None."""
        if key == "rate":
            if isinstance(v, bool) or v is None or isinstance(v, (YMap, YSeq, float)) \
                    or parse_rate(v) is None:
                self.err(line, 'rate "%s" in %s is not a rate, %s' % (v, what, RATE_HINT))
                return None
            return str(v).strip()
        if key == "mtu":
            try:
                n = int(str(v).strip(), 10) if not isinstance(v, bool) else None
            except ValueError:
                n = None
            if n is None or not 68 + TAG_ROOM <= n <= 65535:
                self.err(line, 'mtu "%s" in %s is not an MTU, expected a number of bytes '
                         'from %d to 65535' % (v, what, 68 + TAG_ROOM))
                return None
            return n
        if key == "buffer":
            b = None if isinstance(v, (bool, YMap, YSeq, float)) or v is None else parse_buffer(v)
            if b is None:
                self.err(line, 'buffer "%s" in %s is not a size or frame count, %s'
                         % (v, what, BUFFER_HINT))
                return None
            if b[1] == 0:
                self.err(line, "buffer in %s is 0, expected a non-zero size" % what)
                return None
            return str(v).strip()
        if key == "flow_control":
            if v not in FLOW_CONTROLS:
                self.err(line, "flow_control %s in %s is not one of %s"
                         % (_kind(v), what, "|".join(FLOW_CONTROLS)))
                return None
            return v
        raise KeyError(key)

    # -- the file --------------------------------------------------------------

    def run(self, doc):
        t = self.topo
        top = self.mapping(doc, 1, "the topology file", TOP_KEYS)
        if top is None:
            return
        for k in ("name", "nodes", "links"):
            if k not in top:
                self.err(top.line, 'missing key "%s", expected name, nodes and links' % k)

        name = top.get("name")
        if "name" in top:
            name = self.string(name, top.vline("name"), "name")
            if name is not None and not NAME_RE.match(name):
                self.err(top.vline("name"), 'name "%s" is not a lab name, expected up to 32 '
                         'letters, digits, "_", "." or "-", starting with a letter or digit'
                         % name)
                name = None
        t.name = name

        prefix = top.get("prefix")
        if "prefix" in top:
            prefix = self.string(prefix, top.vline("prefix"), "prefix")
            if prefix is not None and not PREFIX_RE.match(prefix):
                self.err(top.vline("prefix"), 'prefix "%s" is not a namespace prefix, expected '
                         'up to 32 letters, digits, "_", "." or "-"' % prefix)
                prefix = None
        elif name:
            prefix = default_prefix(name)
        t.prefix = prefix

        subnet = top.get("subnet", "10.0.0.0/24")
        try:
            t.subnet = ipaddress.IPv4Network(str(subnet), strict=True)
            if t.subnet.prefixlen > 30:
                raise ValueError("too small")
        except ValueError as e:
            self.err(top.vline("subnet"), 'subnet "%s" is not usable (%s), expected an IPv4 '
                     'network of at least 4 addresses such as 10.0.0.0/24' % (subnet, e))
            t.subnet = None

        if "one_process" in top:
            v = top.get("one_process")
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= ONE_PROCESS_MAX:
                self.err(top.vline("one_process"), 'one_process "%s" is not usable, expected '
                         'the number of l2ccd threads to run the lab\'s daemons in, 1..%d, or '
                         '0 for a process per daemon' % (conf_value(v), ONE_PROCESS_MAX))
            else:
                t.one_process = v

        defaults = self.mapping(top.get("defaults"), top.vline("defaults"), "defaults",
                                DEFAULT_KEYS) or YMap()
        self.defaults = {}
        for k, v in LINK_DEFAULTS.items():
            self.defaults[k] = (v, None)
        for k in ("rate", "mtu", "buffer", "flow_control"):
            if k in defaults:
                v = self.link_attr(k, defaults[k], defaults.vline(k), "defaults")
                if v is not None:
                    self.defaults[k] = (v, defaults.vline(k))
        self.def_switch = self.daemon_keys(defaults.get("switch"), defaults.vline("switch"),
                                           "switch", "defaults.switch")
        self.def_hostd = self.daemon_keys(defaults.get("hostd"), defaults.vline("hostd"),
                                          "hostd", "defaults.hostd")
        self.def_law = self.daemon_keys(defaults.get("law"), defaults.vline("law"),
                                        "law", "defaults.law")
        self.def_tcp = {k: self.tcp_key(k, defaults[k], defaults.vline(k), "defaults")
                        for k in ("tcp_ecn", "tcp_window") if k in defaults}

        nodes = self.mapping(top.get("nodes"), top.vline("nodes"), "nodes")
        rate_specs = []
        if nodes is not None:
            if not nodes and "nodes" in top:
                self.err(top.vline("nodes"), "nodes is empty, expected at least one switch")
            for i, (nn, spec) in enumerate(nodes.items()):
                self.node(nn, spec, nodes.kline(nn), i, rate_specs)

        links = top.get("links")
        if links is not None and not isinstance(links, YSeq):
            self.err(top.vline("links"), "links must be a list, got %s" % _kind(links))
        elif links:
            for i, spec in enumerate(links):
                self.link(i, spec, links.ilines[i])

        self.cross_checks(rate_specs)

    def node(self, name, spec, line, index, rate_specs):
        t = self.topo
        if not NODE_RE.match(name):
            self.broken.add(name)
            self.err(line, 'node name "%s" is not usable, expected a letter then up to %d '
                     'letters, digits or "_" (no "-": namespaces are <prefix>-<node>)'
                     % (name, DAEMON_NAME_MAX - 1))
            return
        spec = self.mapping(spec, line, "node %s" % name)
        if spec is None:
            self.broken.add(name)
            return
        kind = spec.get("kind")
        if kind not in KINDS:
            self.broken.add(name)
            if "kind" not in spec:
                self.err(spec.line or line, "node %s has no kind, expected kind: switch or "
                         "kind: host" % name)
            else:
                self.err(spec.vline("kind"), 'unknown kind "%s" of node %s, expected switch '
                         'or host' % (conf_value(kind) if kind is not None else "", name))
            return
        keys = SWITCH_KEYS if kind == "switch" else HOST_KEYS
        self.mapping(spec, line, "node %s (kind %s)" % (name, kind), keys)
        n = Node(name, kind, line, index)
        if t.prefix:
            n.netns = netns_name(t.prefix, name)
        if "machine" in spec:
            m = self.string(spec["machine"], spec.vline("machine"), "machine of node %s" % name)
            if m is not None and not MACHINE_RE.match(m):
                self.err(spec.vline("machine"), 'machine "%s" of node %s is not a machine name, '
                         'expected up to 63 letters, digits, "_", "." or "-" (a host name)'
                         % (m, name))
                m = None
            n.machine = m
            n.machine_line = spec.vline("machine")
        if kind == "switch":
            n.switch_keys = dict(self.def_switch)
            n.switch_keys.update(self.daemon_keys(spec.get("switch"), spec.vline("switch"),
                                                  "switch", "node %s switch" % name))
        else:
            hd = spec.get("hostd", True)
            n.hostd_keys = dict(self.def_hostd)
            if isinstance(hd, bool):
                n.hostd = hd
            elif isinstance(hd, YMap):
                n.hostd = True
                n.hostd_keys.update(self.daemon_keys(hd, spec.vline("hostd"), "hostd",
                                                     "node %s hostd" % name))
            else:
                self.err(spec.vline("hostd"), "hostd of node %s must be true, false or a "
                         "mapping of [hostd] keys, got %s" % (name, _kind(hd)))
            n.law_keys = dict(self.def_law)
            n.law_keys.update(self.daemon_keys(spec.get("law"), spec.vline("law"), "law",
                                               "node %s law" % name))
            if not n.hostd:
                for k in ("law", "rates"):
                    if k in spec:
                        self.err(spec.kline(k), "node %s has %s but hostd: false, expected "
                                 "%s only on hosts behind hostd" % (name, k, k))
            for k in ("tcp_ecn", "tcp_window"):
                v = self.tcp_key(k, spec[k], spec.vline(k), "node %s" % name) \
                    if k in spec else self.def_tcp.get(k)
                setattr(n, k, v)
            if "addr" in spec:
                a = spec["addr"]
                try:
                    n.addr = ipaddress.IPv4Address(str(a))
                except ValueError:
                    self.err(spec.vline("addr"), 'addr "%s" of node %s is not an IPv4 address'
                             % (a, name))
                    n.addr = False  # given but broken: do not assign one
            if "mac" in spec:
                m = spec["mac"]
                if not (isinstance(m, str) and MAC_RE.match(m)) or int(m[:2], 16) & 1 \
                        or m.replace(":", "").strip("0") == "":
                    self.err(spec.vline("mac"), 'mac "%s" of node %s is not a unicast MAC, '
                             'expected e.g. 02:00:00:00:00:01' % (m, name))
                else:
                    n.mac = m.lower()
            rates = spec.get("rates")
            if rates is not None:
                if not isinstance(rates, YSeq):
                    self.err(spec.vline("rates"), "rates of node %s must be a list of "
                             "{dst, rate} mappings, got %s" % (name, _kind(rates)))
                else:
                    for r, rl in zip(rates, rates.ilines):
                        rate_specs.append((n, r, rl))
        t.nodes[name] = n

    def link(self, i, spec, line):
        t = self.topo
        what = "link %d" % (i + 1)
        spec = self.mapping(spec, line, what, LINK_KEYS)
        if spec is None:
            return
        lk = Link(i, spec.line or line)
        eps = spec.get("endpoints")
        el = spec.vline("endpoints")
        if not isinstance(eps, YSeq) or len(eps) != 2:
            self.err(el if "endpoints" in spec else lk.line,
                     '%s needs endpoints: ["NODE:PORT", "NODE:PORT"], two of them' % what)
            return
        ok = True
        for ep, epl in zip(eps, eps.ilines):
            if not isinstance(ep, str) or ep.count(":") != 1:
                self.err(epl, 'endpoint "%s" of %s is not NODE:PORT' % (ep, what))
                ok = False
                continue
            nn, port = ep.split(":")
            if nn in self.broken:
                ok = False
                continue
            if nn not in t.nodes:
                known = ", ".join(t.nodes) or "none"
                self.err(epl, 'endpoint "%s" of %s names unknown node "%s", expected one of '
                         'the nodes: %s' % (ep, what, nn, known))
                ok = False
                continue
            node = t.nodes[nn]
            if node.kind == "host":
                if port != "eth0":
                    self.err(epl, 'endpoint "%s" of %s: a host\'s end is its eth0, expected '
                             '"%s:eth0"' % (ep, what, nn))
                    ok = False
                    continue
            else:
                if len(port) > IFNAMSIZ:
                    self.err(epl, 'port "%s" of switch %s is %d characters, expected at most '
                             '%d (it is the interface name)' % (port, nn, len(port), IFNAMSIZ))
                    ok = False
                    continue
                if not IFNAME_RE.match(port) or port in (".", "..", "lo"):
                    self.err(epl, 'port "%s" of switch %s is not an interface name, expected '
                             'letters, digits, "_", "." or "-"' % (port, nn))
                    ok = False
                    continue
            lk.ends.append((nn, port))
        if not ok:
            return
        (na, pa), (nb, pb) = lk.ends
        if na == nb:
            self.err(el, "%s connects node %s to itself, expected two different nodes"
                     % (what, na))
            return
        if t.nodes[na].kind == "host" and t.nodes[nb].kind == "host":
            self.err(el, "%s connects host %s to host %s, expected a switch at one end at "
                     "least" % (what, na, nb))
            return
        for k in ("rate", "mtu", "buffer", "flow_control"):
            if k in spec:
                v = self.link_attr(k, spec[k], spec.vline(k), what)
                lin = spec.vline(k)
            else:
                v, lin = self.defaults[k]
            setattr(lk, k, v)
            lk.lines[k] = lin
        if lk.rate is not None:
            lk.rate_bps = parse_rate(lk.rate)
        lk.port_keys = self.daemon_keys(spec.get("port"), spec.vline("port"), "port",
                                        "%s port" % what)
        lk.endlines = list(eps.ilines)
        if "nics" in spec:
            lk.nics_line = spec.vline("nics")
            self.nics(lk, spec["nics"], spec.vline("nics"), what)
        t.links.append(lk)

    def nics(self, lk, v, line, what):
        """nics: [IFNAME, IFNAME], the real interfaces of the two ends in
        endpoint order, for `export` (the netns lab makes veths instead)."""
        if not isinstance(v, YSeq) or len(v) != 2:
            self.err(line, "nics of %s must be a list of two interface names, one per "
                     "endpoint in the same order, got %s" % (what, _kind(v)))
            return
        ok = True
        for nic, nl, (nn, _) in zip(v, v.ilines, lk.ends):
            if not isinstance(nic, str) or not IFNAME_RE.match(nic) or nic in (".", "..", "lo") \
                    or len(nic) > IFNAMSIZ:
                self.err(nl, 'nic "%s" of %s (node %s) is not an interface name, expected up '
                         'to %d letters, digits, "_", "." or "-"' % (nic, what, nn, IFNAMSIZ))
                ok = False
        if ok:
            lk.nics = [str(x) for x in v]

    def cross_checks(self, rate_specs):
        t = self.topo
        # Ports: each node:port once; hosts exactly one link.
        seen = {}
        for lk in t.links:
            for i, (nn, port) in enumerate(lk.ends):
                key = (nn, port)
                node = t.nodes[nn]
                if key in seen:
                    prev = seen[key]
                    if node.kind == "host":
                        self.err(lk.endlines[i], "host %s has a second link (the first is "
                                 "link %d, line %d), expected exactly one"
                                 % (nn, prev.index + 1, prev.line))
                    else:
                        self.err(lk.endlines[i], 'port "%s:%s" is used again (link %d, line '
                                 '%d), expected each switch port once'
                                 % (nn, port, prev.index + 1, prev.line))
                    continue
                seen[key] = lk
                peer = lk.ends[1 - i][0]
                if node.kind == "switch":
                    node.ports.append((port, lk, peer))
                else:
                    node.link = lk
                    node.switch, node.port = lk.ends[1 - i]
        for n in t.nodes.values():
            if n.kind == "switch" and not n.ports:
                self.err(n.line, "switch %s has no link, expected at least one (switchd "
                         "needs a port)" % n.name)
            if n.kind == "host" and n.link is None:
                self.err(n.line, "host %s has no link, expected exactly one to a switch"
                         % n.name)
        # Loops among switches: switchd floods unknown and broadcast frames
        # and has no spanning tree, so a loop would circulate them forever.
        parent = {}

        def find(x):
            while parent.get(x, x) != x:
                x = parent[x]
            return x

        for lk in t.links:
            (na, _), (nb, _) = lk.ends
            if t.nodes[na].kind == "switch" and t.nodes[nb].kind == "switch":
                ra, rb = find(na), find(nb)
                if ra == rb:
                    self.err(lk.line, "link %d (%s - %s) closes a loop among the switches, "
                             "expected a tree: switchd has no spanning tree, so broadcasts "
                             "(ARP) would circle forever" % (lk.index + 1, lk.endpoint(0),
                                                              lk.endpoint(1)))
                else:
                    parent[ra] = rb

        self.machine_checks()
        hosts = t.hosts()
        # Hosts behind hostd: tag room and an uplink rate hostd can pace.
        for h in hosts:
            if not h.hostd or h.link is None:
                continue
            lk = h.link
            if lk.rate_bps == 0 and "link_rate" not in h.hostd_keys:
                self.err(lk.lines["rate"] or lk.line,
                         "link %d to host %s (behind hostd) has rate unlimited, expected a "
                         "rate: hostd paces its uplink at it (or set hostd: {link_rate: ...})"
                         % (lk.index + 1, h.name))
        # Addresses: the Nth host gets subnet + N unless it sets addr.
        if t.subnet is not None:
            owner = {}
            for i, h in enumerate(hosts, 1):
                line = h.line
                if h.addr is False:
                    continue
                if h.addr is None:
                    if i >= t.subnet.num_addresses - 1:
                        self.err(h.line, "subnet %s has no address for host %s (host number "
                                 "%d), expected a larger subnet or an addr" % (t.subnet, h.name, i))
                        continue
                    h.addr = t.subnet.network_address + i
                else:
                    if h.addr not in t.subnet or h.addr in (t.subnet.network_address,
                                                          t.subnet.broadcast_address):
                        self.err(line, "addr %s of host %s is not a host address of subnet %s"
                                 % (h.addr, h.name, t.subnet))
                        continue
                if h.addr in owner:
                    o = owner[h.addr]
                    self.err(line, "address %s of host %s is already host %s's (line %d), "
                             "expected each host its own (the Nth host gets the Nth address "
                             "unless it sets addr)" % (h.addr, h.name, o.name, o.line))
                    continue
                owner[h.addr] = h
        # MACs: explicit ones, else derived from the prefix.
        macs = {}
        for i, h in enumerate(hosts, 1):
            if h.mac is None and t.prefix:
                h.mac = lab_mac(t.prefix, i)
            if h.mac in macs:
                self.err(h.line, "mac %s of host %s is already host %s's, expected each host "
                         "its own" % (h.mac, h.name, macs[h.mac].name))
            elif h.mac:
                macs[h.mac] = h
        # [rate] sections, now that every host has its MAC.
        labels = {}
        for n, r, rl in rate_specs:
            what = "a rates entry of node %s" % n.name
            r = self.mapping(r, rl, what, RATE_KEYS)
            if r is None:
                continue
            if "dst" not in r:
                self.err(r.line or rl, "%s has no dst, expected dst: HOST" % what)
                continue
            dst = r["dst"]
            if isinstance(dst, str) and MAC_RE.match(dst):
                mac, label = dst.lower(), dst.replace(":", "")
            elif isinstance(dst, str) and dst in t.nodes and t.nodes[dst].kind == "host":
                mac, label = t.nodes[dst].mac, dst
            else:
                self.err(r.vline("dst"), 'dst "%s" in %s is not a host, expected one of: %s '
                         '(or a MAC)' % (dst, what, ", ".join(h.name for h in hosts)))
                continue
            keys = {}
            for k in ("rate", "ipd", "vlan"):
                if k in r:
                    v = r[k]
                    if k == "rate" and parse_rate(conf_value(v)) is None:
                        self.err(r.vline(k), 'rate "%s" in %s is not a rate, %s'
                                 % (v, what, RATE_HINT))
                        continue
                    if isinstance(v, (YMap, YSeq)) or v is None:
                        self.err(r.vline(k), "%s in %s needs a single value" % (k, what))
                        continue
                    keys[k] = Item(v, r.vline(k))
            if "vlan" in keys:
                label += "_v%s" % conf_value(keys["vlan"].value)
            if (n.name, label) in labels:
                self.err(r.line or rl, "%s repeats the one on line %d (same dst and vlan)"
                         % (what, labels[(n.name, label)]))
                continue
            labels[(n.name, label)] = r.line or rl
            n.rates.append((label, mac, keys, r.line or rl))
        # A host stack cannot read the l2cc tag: with a host that has no
        # hostd in the lab, the hostds do not tag unless the file says so.
        plain = [h.name for h in hosts if not h.hostd]
        if plain:
            for h in hosts:
                if h.hostd and "tag" not in h.hostd_keys:
                    h.hostd_keys["tag"] = Item(False, None)
            if any(h.hostd for h in hosts):
                t.notes.append("host%s %s ha%s no hostd: the hostds send untagged (tag = no) "
                               "so that %s can read their frames; set hostd: {tag: yes} to "
                               "override" % ("s" if len(plain) > 1 else "", ", ".join(plain),
                                             "ve" if len(plain) > 1 else "s",
                                             "they" if len(plain) > 1 else "it"))


    def machine_checks(self):
        """machine: on every node or none; a link between two machines needs
        nics; a NIC serves one link end per machine."""
        t = self.topo
        placed = [n for n in t.nodes.values() if n.machine]
        if not placed:
            for lk in t.links:
                if lk.nics_line is not None:
                    self.err(lk.nics_line, "link %d has nics but no node has a machine, "
                             "expected machine: on every node (nics are for l2cc-lab export)"
                             % (lk.index + 1))
            return
        first = placed[0]
        for n in t.nodes.values():
            if not n.machine and n.name not in self.broken:
                self.err(n.line, "node %s has no machine, expected one on every node once "
                         "any has (node %s: line %d)" % (n.name, first.name, first.machine_line))
        used = {}
        for lk in t.links:
            ma, mb = (t.nodes[nn].machine for nn, _ in lk.ends)
            if not (ma and mb):
                continue
            if ma != mb and lk.nics_line is None:
                self.err(lk.line, "link %d (%s - %s) joins machines %s and %s, expected "
                         "nics: [IFNAME, IFNAME], the NIC of each end (in endpoint order)"
                         % (lk.index + 1, lk.endpoint(0), lk.endpoint(1), ma, mb))
            for i, nic in enumerate(lk.nics or ()):
                m = (ma, mb)[i]
                if (m, nic) in used:
                    self.err(lk.nics_line, 'nic "%s" of machine %s is already link %d\'s, '
                             'expected each NIC on one link end' % (nic, m, used[(m, nic)] + 1))
                else:
                    used[(m, nic)] = lk.index


def _kind(v):
    if v is None:
        return "nothing"
    if isinstance(v, YMap):
        return "a mapping"
    if isinstance(v, YSeq):
        return "a list"
    if isinstance(v, bool):
        return "a YAML boolean (on/off/yes/no/true/false: quote it if you mean a word)"
    return '"%s"' % v


def load(path):
    """Read and validate a topology file: a Topology, or TopoError."""
    doc, errs = read_yaml(path)
    c = _Checker(path)
    c.errs.extend(errs)
    c.run(doc)
    if c.errs:
        raise TopoError(path, c.errs)
    return c.topo


def peek_name(path):
    """(name, prefix) of a topology file that may not validate, for `down`:
    whatever can be read, None where nothing can."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return None, None
    if not isinstance(doc, dict):
        return None, None
    name = doc.get("name")
    name = str(name) if isinstance(name, (str, int)) and NAME_RE.match(str(name)) else None
    prefix = doc.get("prefix")
    prefix = str(prefix) if isinstance(prefix, str) and PREFIX_RE.match(prefix) else None
    if prefix is None and name:
        prefix = default_prefix(name)
    return name, prefix


# ---- the lab's files ---------------------------------------------------------------

def node_files(rundir, name, daemon=True):
    """Paths of a node's files in the run directory (None for a host
    without hostd, except its log-less nothing)."""
    j = lambda ext: os.path.join(rundir, name + ext)  # noqa: E731
    if not daemon:
        return {"config": None, "ctl": None, "stats": None, "log": None, "pid": None}
    return {"config": j(".conf"), "ctl": j(".sock"), "stats": j(".jsonl"),
            "log": j(".log"), "pid": j(".pid")}


def path_errors(topo, rundir):
    """Problems with the run directory for this topology (socket paths)."""
    errs = []
    for n in topo.daemons():
        sock = node_files(rundir, n.name)["ctl"]
        if len(sock) > CTL_SOCKET_MAX:
            errs.append("control socket %s is %d characters, expected at most %d: use a "
                        "shorter --rundir" % (sock, len(sock), CTL_SOCKET_MAX))
    return errs


# ---- daemon configurations ---------------------------------------------------------

class Conf:
    """A generated config file and, per line, the YAML line it came from."""

    def __init__(self, node, daemon):
        self.node = node
        self.daemon = daemon       # "switchd" or "hostd"
        self.lines = []
        self.src = []

    def add(self, text, src=None):
        self.lines.append(text)
        self.src.append(src)

    def key(self, k, v, src=None):
        self.add("%s = %s" % (k, conf_value(v)), src)

    def text(self):
        return "\n".join(self.lines) + "\n"


def _header(c, topo, what):
    c.add("# Generated by l2cc-lab from %s (node %s, %s)." % (topo.path, c.node.name, what))
    c.add("# Edit the topology file instead: `l2cc-lab up` rewrites this file.")
    c.add("")


def render_switch(topo, n, rundir, ifnames=None):
    """ifnames: {port: interface} where the interfaces are not the ports'
    own names (export: the NICs); None in the netns lab."""
    ifnames = ifnames or {}
    f = node_files(rundir, n.name)
    c = Conf(n, "switchd")
    _header(c, topo, "switchd")
    c.add("[switch]")
    c.key("name", n.name, n.line)
    c.key("ctl_socket", f["ctl"], n.line)
    c.key("stats_file", f["stats"], n.line)
    if "stats_interval" not in n.switch_keys:
        c.key("stats_interval", STATS_INTERVAL, n.line)
    for k, it in n.switch_keys.items():
        c.key(k, it.value, it.line)
    for port, lk, peer in n.ports:
        c.add("")
        c.add("[port %s]" % port, lk.line)
        c.add("# link %d: %s - %s" % (lk.index + 1, lk.endpoint(0), lk.endpoint(1)))
        c.key("ifname", ifnames.get(port, port), lk.line)
        c.key("rate", lk.rate, lk.lines["rate"] or lk.line)
        c.key("mtu", lk.mtu, lk.lines["mtu"] or lk.line)
        c.key("buffer", lk.buffer, lk.lines["buffer"] or lk.line)
        c.key("flow_control", lk.flow_control, lk.lines["flow_control"] or lk.line)
        c.key("role", topo.nodes[peer].kind, lk.line)
        for k, it in lk.port_keys.items():
            c.key(k, it.value, it.line)
    return c


def render_hostd(topo, n, rundir, ifnames=None):
    """ifnames: {"host_port": ..., "uplink": ...} where they are not the
    lab's cc0 and up0 (export); None in the netns lab."""
    ifnames = ifnames or {}
    f = node_files(rundir, n.name)
    c = Conf(n, "hostd")
    lk = n.link
    _header(c, topo, "hostd")
    c.add("[hostd]")
    c.key("name", n.name, n.line)
    c.key("ctl_socket", f["ctl"], n.line)
    c.key("stats_file", f["stats"], n.line)
    if "stats_interval" not in n.hostd_keys:
        c.key("stats_interval", STATS_INTERVAL, n.line)
    c.key("host_port", ifnames.get("host_port", "cc0"), n.line)
    c.key("uplink", ifnames.get("uplink", "up0"), n.line)
    if "link_rate" not in n.hostd_keys:
        c.key("link_rate", lk.rate, lk.lines["rate"] or lk.line)
    for k, it in n.hostd_keys.items():
        if it.line is None and k == "tag":
            c.add("# untagged: a host stack without hostd (%s) cannot read the l2cc tag"
                  % ", ".join(h.name for h in topo.hosts() if not h.hostd))
        c.key(k, it.value, it.line or n.line)
    if n.law_keys:
        c.add("")
        c.add("[law]", n.line)
        for k, it in n.law_keys.items():
            c.key(k, it.value, it.line)
    for label, mac, keys, line in n.rates:
        c.add("")
        c.add("[rate %s]" % label, line)
        c.key("dst", mac, line)
        for k, it in keys.items():
            c.key(k, it.value, it.line)
    return c


def render_configs(topo, rundir, ifnames=None, nodes=None):
    """{node name: Conf} for every daemon of the lab (of `nodes`, names,
    if given). ifnames: {node name: its render_*() ifnames} (export)."""
    out = {}
    ifnames = ifnames or {}
    for n in topo.daemons():
        if nodes is not None and n.name not in nodes:
            continue
        out[n.name] = render_switch(topo, n, rundir, ifnames.get(n.name)) \
            if n.kind == "switch" else render_hostd(topo, n, rundir, ifnames.get(n.name))
    return out


_CHECK_RE = re.compile(r"^(?:switchd|hostd): (.+?):(\d+): (.*)$")


def check_daemon_configs(topo, confs, bindir):
    """Run each daemon's --check on its generated config. Returns (errors as
    (yaml line, message), notes): the daemons know their keys best, and
    their complaints are mapped back to the topology line they came from."""
    errs, notes = [], []
    with tempfile.TemporaryDirectory(prefix="l2cc-check.") as tmp:
        for name, c in confs.items():
            binary = os.path.join(bindir, c.daemon)
            if not os.access(binary, os.X_OK):
                notes.append("%s is missing (make all): %s keys not checked"
                             % (binary, c.daemon))
                continue
            path = os.path.join(tmp, name + ".conf")
            with open(path, "w") as f:
                f.write(c.text())
            r = subprocess.run([binary, "--check", "-c", path], capture_output=True,
                               text=True, stdin=subprocess.DEVNULL)
            if r.returncode == 0:
                continue
            out = (r.stderr + r.stdout).strip().splitlines()
            got = False
            for line in out:
                m = _CHECK_RE.match(line.strip())
                if m and m.group(1) == path:
                    ln = int(m.group(2))
                    src = c.src[ln - 1] if 0 < ln <= len(c.src) else None
                    errs.append((src or c.node.line, "node %s: %s: %s (generated line: %s)"
                                 % (name, c.daemon, m.group(3),
                                    c.lines[ln - 1].strip() if 0 < ln <= len(c.lines)
                                    else "?")))
                    got = True
            if not got:
                errs.append((c.node.line, "node %s: %s --check failed (status %d): %s"
                             % (name, c.daemon, r.returncode,
                                " / ".join(out[-3:]) or "no message")))
    return errs, notes
