# SPDX-License-Identifier: BSD-2-Clause
"""Arithmetic over named values, for sweep metrics and checks
(docs/testbed.md, "Metrics and checks").

    groups.victim.sum_bps / (links[A>B].rate_bps - groups.remote.sum_bps)
    min(victim_share@santos-lipd_r1, victim_share@santos-lipd_r5) >= 0.8
    max(fabric_drops@*) == 0

A reference is a dotted path (`groups.victim.sum_bps`, `links[A>B].rate_bps`:
a key with `-` or `.` goes in brackets) or, in a check, a metric of a point
(`NAME@LABEL`, `NAME@LABEL:min`; LABEL may be a shell pattern, which gives
the list of every matching point's value: only min, max, sum and mean take
it). The references are swapped for placeholders and the rest is read by
Python's own parser (ast), then walked with a whitelist: numbers,
+ - * /, comparisons, and/or/not, and the functions in FUNCS. Nothing is
ever evaluated by Python itself. Plain Python, no dependencies.
"""

import ast
import fnmatch
import math
import operator
import re

#: Functions an expression may call. rate(), size() and time() read a
#: setting written as text (10M, 64K, 10ms); the caller provides them.
FUNCS = ("min", "max", "abs", "sum", "mean", "rate", "size", "time")
LIST_FUNCS = ("min", "max", "sum", "mean")
CONVERT = ("rate", "size", "time")
STATS = ("mean", "min", "max")

_NUM_RE = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+|\[[^\[\]]*\])*")
_AT_RE = re.compile(r"@([A-Za-z0-9_.*?-]+)(?::([A-Za-z]+))?")
_KEYWORDS = ("and", "or", "not")

_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
        ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_SYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Lt: "<", ast.LtE: "<=",
        ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class ExprError(Exception):
    pass


class Ref:
    """One reference in an expression: text as written; a path's text, or
    for NAME@LABEL[:STAT] name, label (a pattern if glob) and stat."""

    def __init__(self, text, path, name=None, label=None, stat=None):
        self.text = text
        self.path = path
        self.name = name
        self.label = label
        self.stat = stat
        self.glob = bool(label and any(c in label for c in "*?"))

    def matches(self, labels):
        """The labels this reference names, in the order given."""
        if not self.glob:
            return [self.label] if self.label in labels else []
        return [x for x in labels if fnmatch.fnmatchcase(x, self.label)]


def _scan(text):
    """(text with every reference replaced by _rN, [Ref])."""
    out, refs, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            raise ExprError("text in quotes is not allowed: a reference is written bare, "
                            "e.g. groups.victim.sum_bps")
        if c.isdigit() or (c == "." and text[i + 1:i + 2].isdigit()):
            m = _NUM_RE.match(text, i)
            out.append(m.group(0))
            i = m.end()
            continue
        if c.isalpha() or c == "_":
            m = _PATH_RE.match(text, i)
            tok, j = m.group(0), m.end()
            at = _AT_RE.match(text, j)
            bare = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok)
            if not at and bare and (tok in _KEYWORDS or
                                    (tok in FUNCS and text[j:].lstrip().startswith("("))):
                out.append(tok)
                i = j
                continue
            if tok.startswith("_r") and bare:
                raise ExprError('"%s" is not a usable name' % tok)
            if at:
                if not bare:
                    raise ExprError('%s@%s: a metric name before @, expected e.g. '
                                    'victim_bps@santos_b4' % (tok, at.group(1)))
                if at.group(2) and at.group(2) not in STATS:
                    raise ExprError('%s: ":%s" is not a statistic, expected one of: %s'
                                    % (text[i:at.end()], at.group(2), ", ".join(STATS)))
                ref = Ref(text[i:at.end()], None, tok, at.group(1), at.group(2) or "mean")
                j = at.end()
            else:
                ref = Ref(tok, tok)
            out.append("_r%d" % len(refs))
            refs.append(ref)
            i = j
            continue
        if c == "@":
            raise ExprError("@ must follow a metric name, e.g. victim_bps@santos_b4")
        if c in "[]":
            raise ExprError("[ must follow a key, e.g. links[A>B].utilisation")
        out.append(c)
        i += 1
    return "".join(out), refs


class Expr:
    """An expression, parsed and checked. refs: its references in order;
    path: the path when the expression is one bare path; test: whether it
    is a comparison or a combination of them (what a check must be)."""

    def __init__(self, text):
        if not isinstance(text, str) or not text.strip():
            raise ExprError("expected an expression, e.g. groups.victim.sum_bps / 1e6")
        self.text = text.strip()
        code, self.refs = _scan(self.text)
        try:
            self.tree = ast.parse(code.strip(), mode="eval").body
        except SyntaxError:
            raise ExprError('cannot read "%s" as an expression (numbers, paths, + - * /, '
                            'comparisons, and/or/not, %s())' % (self.text, "(), ".join(FUNCS)))
        self._check(self.tree, None)
        self.path = self.refs[0].path if isinstance(self.tree, ast.Name) and self.refs else None
        self.test = isinstance(self.tree, (ast.Compare, ast.BoolOp)) or \
            (isinstance(self.tree, ast.UnaryOp) and isinstance(self.tree.op, ast.Not))

    @classmethod
    def of_path(cls, text):
        """The expression that is path `text` alone, read whole: its keys
        may hold a `-` (groups.my-group.sum_bps), which an expression
        would read as a minus."""
        self = cls.__new__(cls)
        self.text = text
        self.refs = [Ref(text, text)]
        self.tree = ast.Name(id="_r0", ctx=ast.Load())
        self.path, self.test = text, False
        return self

    def _ref(self, node):
        return self.refs[int(node.id[2:])]

    def _check(self, node, parent):
        bad = None
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                bad = "%r" % (node.value,)
        elif isinstance(node, ast.Name):
            if not re.fullmatch(r"_r\d+", node.id):
                bad = '"%s"' % node.id
            elif self._ref(node).glob and not (
                    isinstance(parent, ast.Call) and parent.func.id in LIST_FUNCS):
                raise ExprError("%s names every point matching %s: use it inside %s()"
                                % (self._ref(node).text, self._ref(node).label,
                                   "(), ".join(LIST_FUNCS)))
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BIN:
                bad = "operator %s" % type(node.op).__name__
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.UAdd, ast.USub, ast.Not)):
                bad = "operator %s" % type(node.op).__name__
        elif isinstance(node, ast.BoolOp):
            pass
        elif isinstance(node, ast.Compare):
            if any(type(o) not in _CMP for o in node.ops):
                bad = "a comparison other than < <= > >= == !="
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCS or \
                    node.keywords or not node.args or \
                    any(isinstance(a, ast.Starred) for a in node.args):
                bad = "this call"
            elif node.func.id in CONVERT + ("abs",) and len(node.args) != 1:
                raise ExprError("%s() takes one argument" % node.func.id)
            else:
                for a in node.args:
                    self._check(a, node)
                return
        else:
            bad = type(node).__name__
        if bad:
            raise ExprError('"%s": %s is not allowed, expected numbers, paths, + - * /, '
                            'comparisons, and/or/not, %s()' % (self.text, bad,
                                                               "(), ".join(FUNCS)))
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
                                      ast.expr_context)):
                self._check(child, node)

    def evaluate(self, resolve, convert=None):
        """The value, with resolve(Ref) giving each reference's value (a
        number, a bool, a text for rate()/size()/time(), or a list for a
        pattern) and convert {name: fn} the conversions. Returns (value,
        operand, {reference text: value}): operand is the left side of a
        top-level comparison, else the value. Raises ExprError."""
        seen = {}
        ev = _Eval(self, resolve, convert or {}, seen)
        v = ev.run(self.tree)
        operand = ev.left if isinstance(self.tree, ast.Compare) else v
        return v, operand, seen

    def is_rate(self, is_rate_path):
        """Whether the value is a rate: sums, differences, min/max of rates."""
        def rate(n):
            if isinstance(n, ast.Name):
                r = self._ref(n)
                return bool(r.path and is_rate_path(r.path))
            if isinstance(n, ast.BinOp):
                return isinstance(n.op, (ast.Add, ast.Sub)) and rate(n.left) and rate(n.right)
            if isinstance(n, ast.UnaryOp):
                return isinstance(n.op, (ast.UAdd, ast.USub)) and rate(n.operand)
            if isinstance(n, ast.Call):
                return n.func.id in ("min", "max", "abs", "mean") and all(map(rate, n.args))
            return False
        return rate(self.tree)


class _Eval:
    def __init__(self, ex, resolve, convert, seen):
        self.ex, self.resolve, self.convert, self.seen = ex, resolve, convert, seen
        self.left = None

    def num(self, v, what):
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, (int, float)):
            return v
        if v is None:
            raise ExprError("%s has no value" % what)
        if isinstance(v, str):
            raise ExprError('%s is "%s", a text: read it with %s()'
                            % (what, v, "(), ".join(CONVERT)))
        raise ExprError("%s is not a number" % what)

    def what(self, node):
        return self.ex._ref(node).text if isinstance(node, ast.Name) else "a part of it"

    def run(self, n):
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            ref = self.ex._ref(n)
            v = self.resolve(ref)
            self.seen[ref.text] = v
            return v
        if isinstance(n, ast.BinOp):
            a = self.num(self.run(n.left), self.what(n.left))
            b = self.num(self.run(n.right), self.what(n.right))
            if isinstance(n.op, ast.Div) and b == 0:
                raise ExprError("division by zero (%s is 0)" % self.what(n.right))
            return _BIN[type(n.op)](a, b)
        if isinstance(n, ast.UnaryOp):
            v = self.run(n.operand)
            if isinstance(n.op, ast.Not):
                return not v
            v = self.num(v, self.what(n.operand))
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BoolOp):
            vals = [bool(self.run(x)) for x in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare):
            left = self.num(self.run(n.left), self.what(n.left))
            if self.left is None:
                self.left = left
            ok = True
            for op, right in zip(n.ops, n.comparators):
                r = self.num(self.run(right), self.what(right))
                ok = ok and _CMP[type(op)](left, r)
                left = r
            return ok
        if isinstance(n, ast.Call):
            return self.call(n)
        raise ExprError("cannot evaluate %s" % type(n).__name__)

    def call(self, n):
        fn = n.func.id
        if fn in CONVERT:
            v = self.run(n.args[0])
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return v
            if fn not in self.convert:
                raise ExprError("%s() is not available here" % fn)
            if not isinstance(v, str):
                raise ExprError("%s(%s): expected a setting such as 10M, 64K or 10ms"
                                % (fn, self.what(n.args[0])))
            r = self.convert[fn](v)
            if r is None:
                raise ExprError('%s(%s): "%s" is not a %s' % (fn, self.what(n.args[0]), v, fn))
            return r
        vals = []
        for a in n.args:
            v = self.run(a)
            for x in (v if isinstance(v, list) else [v]):
                vals.append(self.num(x, self.what(a)))
        if not vals:
            raise ExprError("%s() of no values (the pattern matched no point that has one)"
                            % fn)
        if fn == "abs":
            return abs(vals[0])
        if fn == "mean":
            return math.fsum(vals) / len(vals)
        if fn == "sum":
            return math.fsum(vals)
        return min(vals) if fn == "min" else max(vals)
