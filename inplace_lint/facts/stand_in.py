"""Stand-in aliases: a name that one arm of an if/else binds to another tensor on purpose.

``if mean: r_ts = r.expand(n).repeat(k) else: r_ts = ts`` where ``ts = t.expand(n).repeat(k)``:
``r_ts`` is a quantity of its own, built exactly as ``ts`` is but from ``r``; in the mode where
the two coincide the code makes it the very same tensor. A later in-place write to ``ts``
(``ts[:, :n] = 0``) is then meant for both, so reading ``r_ts`` afterwards is not a stale read.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Sequence

import libcst as cst

from inplace_lint.facts.syntax import binding_target
from inplace_lint.facts.walk import walk

_CODE = cst.Module(body=[])
#: tokens that carry no meaning for the comparison
_LAYOUT = frozenset({tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER})


def stand_in(node: cst.If, block: Sequence[cst.CSTNode], index: int) -> tuple[str, str] | None:
    """``(stand_in, tensor)`` when one arm of ``node`` (``block[index]``) ends by binding
    ``stand_in = tensor`` and the other builds ``stand_in`` by the same chain of assignments
    that built ``tensor`` in the statements before ``node`` in ``block``, from another root
    name."""
    if not isinstance(node.orelse, cst.Else):
        return None
    arms = (node.body.body, node.orelse.body.body)
    for alias_arm, other_arm in (arms, arms[::-1]):
        pair = _final_alias(alias_arm)
        if pair is None:
            continue
        name, tensor = pair
        if name == tensor or _binds(other_arm, tensor) or _binds(alias_arm, tensor, last=1):
            continue
        built = _chain(other_arm, name)
        original = _chain(block[:index], tensor)
        if (
            built
            and original
            and len(built) == len(original)
            and _mirrors(built, original, name, tensor)
        ):
            return name, tensor
    return None


def _simple_assign(stmt: cst.CSTNode) -> tuple[str, cst.BaseExpression] | None:
    """``name = value`` alone on its line."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target = small.targets[0].target
    if not isinstance(target, cst.Name):
        return None
    return target.value, small.value


def _final_alias(arm: Sequence[cst.BaseStatement]) -> tuple[str, str] | None:
    """The arm's last statement is ``name = other_name``."""
    if not arm:
        return None
    assign = _simple_assign(arm[-1])
    if assign is None or not isinstance(assign[1], cst.Name):
        return None
    return assign[0], assign[1].value


def _binds(body: Sequence[cst.CSTNode], name: str, last: int = 0) -> bool:
    """Whether any statement of ``body`` (but the final ``last``) may rebind ``name``."""
    stmts = body[: len(body) - last] if last else body
    for stmt in stmts:
        for node in walk(stmt):
            target = binding_target(node)
            if target is not None and any(
                type(n) is cst.Name and n.value == name for n in walk(target)
            ):
                return True
    return False


def _chain(body: Sequence[cst.CSTNode], name: str) -> list[cst.BaseExpression] | None:
    """The values of the run of assignments that last built ``name`` in ``body``: a first
    ``name = f(...)`` that does not read ``name``, then ``name = g(name)`` steps. None when
    ``name`` is bound any other way after that first assignment, or not at all."""
    steps: list[cst.BaseExpression] = []
    for stmt in reversed(body):
        assign = _simple_assign(stmt)
        if assign is not None and assign[0] == name:
            steps.append(assign[1])
            if not _reads(assign[1], name):
                steps.reverse()
                return steps
        elif _binds([stmt], name):
            return None
    return None


def _reads(expression: cst.BaseExpression, name: str) -> bool:
    return any(type(n) is cst.Name and n.value == name for n in walk(expression))


def _mirrors(
    built: list[cst.BaseExpression], original: list[cst.BaseExpression], name: str, tensor: str
) -> bool:
    """Token by token the same code, reading ``name`` where the original reads ``tensor`` and
    one other name (the root) in place of the original's; at least one call on the way."""
    roots: set[tuple[str, str]] = set()
    for mine, theirs in zip(built, original, strict=True):
        a, b = _tokens(mine), _tokens(theirs)
        if a is None or b is None or len(a) != len(b):
            return False
        for (kind_a, text_a), (kind_b, text_b) in zip(a, b, strict=True):
            if kind_a != kind_b:
                return False
            if text_a == text_b:
                continue
            if kind_a != tokenize.NAME:
                return False
            if (text_a, text_b) != (name, tensor):
                roots.add((text_a, text_b))
    calls = any(isinstance(n, cst.Call) for step in built for n in walk(step))
    return calls and len(roots) == 1


def _tokens(expression: cst.BaseExpression) -> list[tuple[int, str]] | None:
    try:
        code = _CODE.code_for_node(expression)
        tokens = tokenize.generate_tokens(io.StringIO(code).readline)
        return [(t.type, t.string) for t in tokens if t.type not in _LAYOUT]
    except (tokenize.TokenError, SyntaxError):
        return None
