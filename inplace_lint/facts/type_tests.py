"""Type tests that say a name holds no tensor in the arm they guard.

``if isinstance(imgs, (tuple, list)):`` (alone or as a part of an ``and``): in its body
``imgs[i] = crop`` stores into a Python list, however much ``imgs`` looked like a module's
tensor input. The same holds for a call of a same-file predicate whose every truthy return
is guarded by such a test of one of its parameters (``def _is_pair(x): if isinstance(x,
(tuple, list)) and len(x) >= 2: return True``), at the position the call passes. In the
``else`` arm of ``if isinstance(out, torch.Tensor):`` (and after it, when that arm returns)
``out`` is no tensor either; ``not`` swaps the arms, ``or`` is read for the ``else`` arm.

Limits: only builtin and ``collections.abc``/``typing`` container types count (``Iterable``
and ``Collection`` do not: a tensor is both), and ``torch.Tensor`` itself (not its
subclasses); a predicate is read only from its own body, without following further calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

import libcst as cst

from inplace_lint.facts.conditions import _negated, _parts
from inplace_lint.facts.names import dotted_name, isinstance_test
from inplace_lint.facts.syntax import _orelse

#: types whose instances are never tensors, and that a tensor is never an instance of
_CONTAINER_TYPES = frozenset(
    {
        "list",
        "tuple",
        "dict",
        "set",
        "frozenset",
        "Sequence",
        "MutableSequence",
        "Mapping",
        "MutableMapping",
        "OrderedDict",
        "defaultdict",
    }
)

#: per same-file predicate, the positions of the parameters it tests to be containers
Predicates = Mapping[str, frozenset[int]]
Qualify = Callable[[cst.BaseExpression], str | None]


def type_arms(
    test: cst.BaseExpression, predicates: Predicates, qualify: Qualify
) -> tuple[dict[str, bool], dict[str, bool]]:
    """Per arm of ``if test:`` (body, ``else``), the names it says hold no tensor, each with
    whether it holds a container (else: some other non-tensor)."""
    return _holding(test, predicates, qualify, True), _holding(test, predicates, qualify, False)


def container_names(test: cst.BaseExpression, predicates: Predicates) -> frozenset[str]:
    """The names ``test`` being true says hold containers."""
    held = _holding(test, predicates, lambda _: None, True)
    return frozenset(name for name, container in held.items() if container)


def _holding(
    test: cst.BaseExpression, predicates: Predicates, qualify: Qualify, outcome: bool
) -> dict[str, bool]:
    """The names ``test`` having ``outcome`` says hold no tensor: every part of an ``and``
    when true, of an ``or`` when false."""
    found: dict[str, bool] = {}
    while (inner := _negated(test)) is not None:
        test, outcome = inner, not outcome
    for part in _parts(test, cst.And if outcome else cst.Or):
        polarity = outcome
        while (inner := _negated(part)) is not None:
            part, polarity = inner, not polarity
        if polarity:
            found.update(dict.fromkeys(_tested(part, predicates), True))
        elif (name := _tensor_tested(part, qualify)) is not None:
            found[name] = False
    return found


def container_predicates(functions: Mapping[str, cst.FunctionDef]) -> dict[str, frozenset[int]]:
    """The same-file functions that return something truthy only when some of their
    parameters hold containers, with those parameters' positions."""
    found: dict[str, frozenset[int]] = {}
    for name, func in functions.items():
        params = func.params
        if params.posonly_params or isinstance(params.star_arg, cst.Param):
            continue
        names = [p.name.value for p in params.params]
        tested = _always_tested(func.body.body, frozenset()) or frozenset()
        positions = frozenset(names.index(n) for n in tested if n in names)
        if positions:
            found[name] = positions
    return found


def _always_tested(body: Sequence[cst.CSTNode], held: frozenset[str]) -> frozenset[str] | None:
    """The names every truthy ``return`` in ``body`` has tested to be containers (``held``:
    tested by the enclosing ``if``s), or None when a return may be truthy untested."""
    common: frozenset[str] | None = None
    for stmt, guard in _returns(body, held):
        value = stmt.value
        if value is None or _falsy(value):
            continue
        tested = guard | container_names(value, {})
        common = tested if common is None else common & tested
        if not common:
            return None
    return common


def _returns(
    body: Sequence[cst.CSTNode], held: frozenset[str]
) -> Iterator[tuple[cst.Return, frozenset[str]]]:
    """Each ``return`` in ``body`` (not in nested functions) with the names the ``if`` tests
    around it say hold containers."""
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Return):
                    yield small, held
        elif isinstance(stmt, cst.If):
            yield from _returns(stmt.body.body, held | container_names(stmt.test, {}))
            if stmt.orelse is not None:
                yield from _returns(_orelse(stmt.orelse), held)
        elif isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            continue
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for child in stmt.children:
                if isinstance(child, cst.BaseSuite):
                    yield from _returns(child.body, held)  # type: ignore[arg-type]


def _falsy(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("False", "None")


def _tested(part: cst.BaseExpression, predicates: Predicates) -> Iterator[str]:
    """``isinstance(x, (list, tuple))``: ``x``; ``pred(x)``: the names at the positions
    ``pred`` tests."""
    if not isinstance(part, cst.Call) or not isinstance(part.func, cst.Name):
        return
    args = part.args
    if any(a.keyword is not None or a.star for a in args):
        return
    if part.func.value == "isinstance":
        test = isinstance_test(part)
        if test is not None and _containers(test[1]):
            yield test[0]
        return
    for position in predicates.get(part.func.value, ()):
        if position < len(args) and isinstance(args[position].value, cst.Name):
            yield args[position].value.value  # type: ignore[attr-defined]


def _containers(types: cst.BaseExpression) -> bool:
    """Whether ``types`` (a type or a tuple of types) names only container types."""
    elements = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    names = [dotted_name(e) for e in elements]
    return bool(names) and all(
        n is not None and n.rsplit(".", 1)[-1] in _CONTAINER_TYPES for n in names
    )


def _tensor_tested(part: cst.BaseExpression, qualify: Qualify) -> str | None:
    """``isinstance(x, torch.Tensor)``: ``x``."""
    test = isinstance_test(part)
    return test[0] if test is not None and qualify(test[1]) == "torch.Tensor" else None
