"""Lists a function grows by appends, and which item may directly follow which.

``layers = []``, then ``layers.append(nn.Linear(a, b))`` and, under ``if i < n - 1:``,
``layers.append(nn.ReLU(inplace=True))`` in a loop, then ``nn.Sequential(*layers)``: the
Sequential runs each ReLU right after a Linear. Here the order is computed as a small flow
over the function's statements: the set of items that may have been appended last, carried
through branches (both arms, or neither when there is no ``else``) and loops (the body twice,
so its last item may precede its first). Each append pairs every possible last item with the
new one; exclusive arms never pair.

A name counts when the function binds it once, to a list display, and otherwise only grows
it (``append``, ``extend`` or ``+=`` with a list display, or ``insert`` at a positive integer
position); any other method call on it, a subscript of it or another binding disqualifies it.
``layers.insert(1, bn)`` into ``[conv, relu]`` puts ``bn`` between items: it may follow and
precede any item put in before it, and it is last only where the list may be that short
(the flow keeps the fewest items the list surely holds). A local name an item refers to is
followed to its one binding (``conv2d = nn.Conv2d(...)``). Limits: ``break``/``continue`` and
``try`` are read as straight-line code; the items of a list built in another function are
not seen.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.syntax import bound_names
from inplace_lint.facts.walk import nested_scope, own_nodes, walk

Pair = tuple[cst.BaseExpression, cst.BaseExpression]
#: stands for "nothing appended yet" among the items that may be last
_START = cst.Name("__start__")
#: list name -> its pairs
Pairs = dict[str, set[Pair]]
#: list name -> the items that may be its first
Leads = dict[str, tuple[cst.BaseExpression, ...]]
_GROW = frozenset({"append", "extend"})


def grown(
    func: cst.FunctionDef | cst.Module, counts: dict[str, int] | None = None
) -> tuple[Pairs, Leads, Leads]:
    """For each list ``func`` (a function, or a module's top level) grows: the pairs (item,
    item that may follow it directly), the items that may be its first (appended while the
    list may still be empty), in source order, and the items that may be its last at the end
    of ``func`` (none when it may be empty there)."""
    if counts is None:  # how often each name is bound (``bound_names``), if not given
        counts = bound_names(func)[0]
    names = _grown_names(func, counts)
    if not names:
        return {}, {}, {}
    locals_ = _single_values(func, counts)
    pairs: Pairs = {}
    leads: Leads = {}
    tails: Leads = {}
    for name in names:
        flow = _flow(func, name, locals_)
        if flow.pairs:
            pairs[name] = flow.pairs
        if flow.leads:
            leads[name] = tuple(flow.leads)
        if flow.last and _START not in flow.last:
            tails[name] = tuple(item for item in flow.items if item in flow.last)
    return pairs, leads, tails


def _flow(
    func: cst.FunctionDef | cst.Module, name: str, locals_: dict[str, cst.BaseExpression]
) -> _Flow:
    flow = _Flow(name, locals_)
    for statement in func.body if isinstance(func, cst.Module) else func.body.body:
        flow.statement(statement)
    return flow


def _own(root: cst.FunctionDef | cst.Module) -> list[cst.CSTNode]:
    if isinstance(root, cst.FunctionDef):
        return own_nodes(root)
    return list(walk(root, skip=nested_scope))


def _grown_names(func: cst.FunctionDef | cst.Module, counts: dict[str, int]) -> set[str]:
    starts: set[str] = set()
    grows: dict[str, int] = {}
    for node in _own(func):
        if isinstance(node, cst.Assign) and _empty_or_display(node.value):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    starts.add(target.target.value)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            grows[node.target.value] = grows.get(node.target.value, 0) + 1
    candidates = {n for n in starts if counts.get(n, 0) == 1 + grows.get(n, 0)}
    for node in _own(func):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            candidates.discard(node.value.value)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            holder = node.func.value
            grows_it = node.func.attr.value in _GROW or _insert_position(node) is not None
            if isinstance(holder, cst.Name) and not grows_it:
                candidates.discard(holder.value)
        elif (
            isinstance(node, cst.AugAssign)
            and isinstance(node.target, cst.Name)
            and not (isinstance(node.operator, cst.AddAssign) and isinstance(node.value, cst.List))
        ):
            candidates.discard(node.target.value)
    return candidates


def _single_values(
    func: cst.FunctionDef | cst.Module, counts: dict[str, int]
) -> dict[str, cst.BaseExpression]:
    """Local names bound exactly once, by a plain assignment, to the value bound."""
    out: dict[str, cst.BaseExpression] = {}
    for node in _own(func):
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and counts.get(target.value) == 1:
                out[target.value] = node.value
    return out


class _Flow:
    """The may-be-last items of one list along the statements of a function."""

    def __init__(self, name: str, locals_: dict[str, cst.BaseExpression]) -> None:
        self.name = name
        self.locals = locals_
        self.last: set[cst.BaseExpression] = {_START}
        self.pairs: set[Pair] = set()
        self.leads: list[cst.BaseExpression] = []
        self.items: list[cst.BaseExpression] = []  # every item put in so far
        self.fewest = 0  # how many items the list surely holds here

    def block(self, suite: cst.BaseSuite | cst.Else | None) -> None:
        if suite is None:
            return
        if isinstance(suite, cst.Else):
            suite = suite.body
        statements = suite.body if isinstance(suite, cst.IndentedBlock) else [suite]
        for statement in statements:
            self.statement(statement)

    def statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                self._small(small)
        elif isinstance(statement, cst.If):
            before, fewest = set(self.last), self.fewest
            self.block(statement.body)
            (taken, self.last), (surely, self.fewest) = (self.last, before), (self.fewest, fewest)
            if isinstance(statement.orelse, cst.If):
                self.statement(statement.orelse)
            else:
                self.block(statement.orelse)
            self.last |= taken
            self.fewest = min(self.fewest, surely)
        elif isinstance(statement, cst.For | cst.While):
            before, fewest = set(self.last), self.fewest
            self.block(statement.body)
            self.block(statement.body)  # the last item may precede the next iteration's first
            self.last |= before
            self.fewest = fewest  # the body may not run
            self.block(statement.orelse)
        elif isinstance(statement, cst.With | cst.Try):
            self.block(statement.body)

    def _small(self, small: cst.BaseSmallStatement) -> None:
        inserted = self._inserted(small)
        if inserted is not None:
            position, item = inserted
            item = self._followed(item)
            self.pairs |= {(other, item) for other in self.items}
            self.pairs |= {(item, other) for other in self.items}
            if position >= self.fewest:  # the list may be that short: appended at its end
                self.pairs |= {(previous, item) for previous in self.last if previous is not _START}
                self.last.add(item)
            self.items.append(item)
            self.fewest += 1
            return
        for item in self._appended(small):
            item = self._followed(item)
            if _START in self.last and all(item is not lead for lead in self.leads):
                self.leads.append(item)
            self.pairs |= {(previous, item) for previous in self.last if previous is not _START}
            self.last = {item}
            self.items.append(item)
            self.fewest += 1

    def _inserted(self, small: cst.BaseSmallStatement) -> tuple[int, cst.BaseExpression] | None:
        """``name.insert(k, item)`` with a positive integer ``k``: ``(k, item)``."""
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return None
        call, func = small.value, small.value.func
        if not (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == self.name
        ):
            return None
        position = _insert_position(call)
        return None if position is None else (position, call.args[1].value)

    def _appended(self, small: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
        """The items ``small`` puts at the end of the list, in order."""
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call, func = small.value, small.value.func
            if not (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == self.name
                and call.args
            ):
                return []
            value = call.args[0].value
            if func.attr.value == "append":
                return [value]
            if func.attr.value == "extend" and isinstance(value, cst.List):
                return _display_items(value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            if small.target.value == self.name and isinstance(small.value, cst.List):
                return _display_items(small.value)
        elif isinstance(small, cst.Assign) and isinstance(small.value, cst.List):
            names = {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
            if self.name in names:
                self.last, self.fewest = {_START}, 0
                return _display_items(small.value)
        return []

    def _followed(self, item: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(item, cst.Name) and item.value in self.locals:
            return self.locals[item.value]
        return item


def _display_items(display: cst.List) -> list[cst.BaseExpression]:
    return [e.value for e in display.elements if isinstance(e, cst.Element)]


def _empty_or_display(value: cst.BaseExpression) -> bool:
    """``[...]`` or ``list()``."""
    if isinstance(value, cst.List):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "list"
        and not value.args
    )


def _insert_position(call: cst.Call) -> int | None:
    """``xs.insert(k, item)`` with an integer constant ``k`` of at least 1: ``k``."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "insert"):
        return None
    if len(call.args) != 2 or any(a.keyword or a.star for a in call.args):
        return None
    index = call.args[0].value
    if isinstance(index, cst.Integer) and int(index.value) >= 1:
        return int(index.value)
    return None
