"""Which arm of a module's forward one instance takes, read from the call that built it.

A same-file module often applies a step only when it is configured to (``if self.relued:
x = self.relu(x)``, ``if self.activate is not None:``, ``if active:``), so whether its
output is one an op saved depends on the instance. Given the call that constructed the
instance (its literal arguments, else ``__init__``'s defaults) and the arguments of the
forward call, simple tests are decided: the truth of ``self.attr`` and ``is (not) None``
comparisons, forward parameters, ``not``/``and``/``or``, and ``==``/``!=`` between literals.
``self.attr`` is what ``__init__`` last assigned it on the arms its own tests decide.

Anything else is undecided (None). Limits: only the class's own ``__init__`` (not a
base's), read top to bottom; only literals (negative numbers too), parameters, ``X if c
else Y`` and calls to a capitalised name (a class: an object, true and not None) are
evaluated; an assignment in a loop, ``with`` or ``try`` block, or under an undecided test,
leaves its attribute unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from inplace_lint.facts.constructed import _argument
from inplace_lint.facts.names import assignment_targets, dotted_name
from inplace_lint.facts.syntax import _orelse
from inplace_lint.facts.walk import per_node, walk


class _Unknown:
    """A value the source does not decide."""


class _Object:
    """An object a constructor built: true, and not None."""


UNKNOWN = _Unknown()
OBJECT = _Object()
_LITERAL_NAMES = {"True": True, "False": False, "None": None}

#: what a method returns saved on some arms only: the op, and each ``if`` test with the arm
#: it must take (True: its body)
SavedWhen = tuple[str, tuple[tuple[cst.BaseExpression, bool], ...]]


def bound_arguments(func: cst.FunctionDef, call: cst.Call) -> dict[str, object] | None:
    """``func``'s parameters after ``self`` as ``call`` gives them, defaults for the others
    (``constructed._argument``), evaluated as literals; None when the call passes
    ``*args``/``**kwargs`` or a keyword ``func`` takes neither by name nor in ``**kwargs``."""
    params = [*list(func.params.params)[1:], *func.params.kwonly_params]
    names = {p.name.value for p in params}
    if any(arg.star for arg in call.args):
        return None
    keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
    if func.params.star_kwarg is None and not keywords <= names:
        return None
    env: dict[str, object] = {}
    for param in params:
        expr = _argument(func, param.name.value, call)
        env[param.name.value] = evaluate(expr, {}) if expr is not None else UNKNOWN
    return env


def evaluate(expr: cst.BaseExpression, env: Mapping[str, object]) -> object:
    """The value of ``expr`` where names (``self.attr`` included) have the values of
    ``env``; :data:`UNKNOWN` when the source does not decide it."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)):
        return expr.evaluated_value
    if isinstance(expr, cst.Name):
        if expr.value in _LITERAL_NAMES:
            return _LITERAL_NAMES[expr.value]
        return env.get(expr.value, UNKNOWN)
    if isinstance(expr, cst.Attribute):
        name = dotted_name(expr)
        return env.get(name, UNKNOWN) if name is not None else UNKNOWN
    if isinstance(expr, cst.IfExp):
        test = truth(expr.test, env)
        if test is None:
            return UNKNOWN
        return evaluate(expr.body if test else expr.orelse, env)
    if isinstance(expr, cst.Call):
        name = dotted_name(expr.func)
        last = name.rsplit(".", 1)[-1] if name is not None else ""
        return OBJECT if last[:1].isupper() else UNKNOWN
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        number = evaluate(expr.expression, env)  # ``padding == -1``
        is_number = isinstance(number, (int, float)) and not isinstance(number, bool)
        return -number if is_number else UNKNOWN  # type: ignore[operator]
    negation = isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not)
    if negation or isinstance(expr, (cst.BooleanOperation, cst.Comparison)):
        decided = truth(expr, env)
        return UNKNOWN if decided is None else decided
    return UNKNOWN


def truth(test: cst.BaseExpression, env: Mapping[str, object]) -> bool | None:
    """Whether ``test`` holds, or None when undecided."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = truth(test.expression, env)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left, right = truth(test.left, env), truth(test.right, env)
        if isinstance(test.operator, cst.And):
            if left is False or right is False:
                return False
            return True if left and right else None
        if left or right:
            return True
        return False if left is False and right is False else None
    if isinstance(test, cst.Comparison):
        return _compare(test, env)
    value = evaluate(test, env)
    if isinstance(value, _Unknown):
        return None
    return True if isinstance(value, _Object) else bool(value)


def _compare(test: cst.Comparison, env: Mapping[str, object]) -> bool | None:
    if len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    left, right = evaluate(test.left, env), evaluate(target.comparator, env)
    if isinstance(left, _Unknown) or isinstance(right, _Unknown):
        return None
    operator = target.operator
    if isinstance(operator, (cst.Is, cst.IsNot)):
        if right is not None and left is not None:
            return None  # identity of two objects: not decided here
        same = left is right
        return same if isinstance(operator, cst.Is) else not same
    if isinstance(left, _Object) or isinstance(right, _Object):
        return None
    if isinstance(operator, cst.Equal):
        return left == right
    if isinstance(operator, cst.NotEqual):
        return left != right
    return None


def instance_attributes(init: cst.FunctionDef, env: dict[str, object]) -> dict[str, object]:
    """What ``__init__`` leaves in ``self.<attr>`` for the arguments in ``env`` (keys
    ``"self.attr"``); attributes it may or may not assign are :data:`UNKNOWN`."""
    values = dict(env)
    _run(init.body.body, values, decided=True)
    return {k: v for k, v in values.items() if k.startswith("self.")}


def _run(body: Sequence[cst.CSTNode], values: dict[str, object], decided: bool) -> None:
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                _assign(small, values, decided)
        elif isinstance(stmt, cst.If):
            test = truth(stmt.test, values) if decided else None
            if test is None:
                _run(stmt.body.body, values, decided=False)
                _run(_orelse(stmt.orelse), values, decided=False)
            else:
                _run(stmt.body.body if test else _orelse(stmt.orelse), values, decided)
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for node in _nested_bodies(stmt):
                _run(node, values, decided=False)


def _nested_bodies(stmt: cst.BaseCompoundStatement) -> list[Sequence[cst.CSTNode]]:
    """The statement lists of a loop, ``with`` or ``try`` (not of nested definitions)."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return []
    bodies: list[Sequence[cst.CSTNode]] = [stmt.body.body]  # type: ignore[attr-defined]
    for part in ("orelse", "finalbody"):
        extra = getattr(stmt, part, None)
        if extra is not None and hasattr(extra, "body"):
            bodies.append(extra.body.body)
    bodies.extend(h.body.body for h in getattr(stmt, "handlers", ()))
    return bodies


def _assign(small: cst.BaseSmallStatement, values: dict[str, object], decided: bool) -> None:
    value = small.value if isinstance(small, cst.Assign | cst.AnnAssign) else None
    result = evaluate(value, values) if value is not None and decided else UNKNOWN
    for target in assignment_targets(small):
        name = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if name is not None:
            values[name] = result
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                inner = dotted_name(element.value)
                if inner is not None:
                    values[inner] = UNKNOWN


def holds_for_instances(
    when: SavedWhen,
    init: cst.FunctionDef | None,
    forward: cst.FunctionDef | None,
    constructions: Sequence[cst.Call],
    call: cst.Call,
    reassigned: frozenset[str] = frozenset(),
) -> bool:
    """Every listed test takes the needed arm for every instance built by
    ``constructions`` (at least one) when called by ``call``; ``reassigned``: attributes
    (``"self.attr"``) other methods assign, which ``__init__`` does not decide."""
    if not constructions or forward is None:
        return False
    given = bound_arguments(forward, call)
    if given is None:
        return False
    for construction in constructions:
        env = dict(given)
        if init is not None:
            arguments = bound_arguments(init, construction)
            if arguments is None:
                return False
            attributes = instance_attributes(init, arguments)
            env.update({k: v for k, v in attributes.items() if k not in reassigned})
        if not all(truth(test, env) is arm for test, arm in when[1]):
            return False
    return True


@per_node
def self_stores(func: cst.FunctionDef) -> frozenset[str]:
    """The ``self.attr`` names ``func`` assigns (plainly, annotated or augmented), in its
    nested functions too."""
    found: set[str] = set()
    for node in walk(func):
        for target in assignment_targets(node):
            name = dotted_name(target) if isinstance(target, cst.Attribute) else None
            if name is not None and name.startswith("self.") and name.count(".") == 1:
                found.add(name)
    return frozenset(found)


def assigned_outside_init(cls: cst.ClassDef) -> frozenset[str]:
    """The ``self.attr`` names a method other than ``__init__`` assigns."""
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
    return frozenset().union(*(self_stores(m) for m in methods if m.name.value != "__init__"))


def assigned_only_by(cls: cst.ClassDef, method: cst.FunctionDef) -> frozenset[str]:
    """The ``self.attr`` names ``method`` assigns and no other method of ``cls`` does."""
    others = [s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s is not method]
    return frozenset(self_stores(method).difference(*(self_stores(m) for m in others)))
