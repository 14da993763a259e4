"""What a same-file module's ``forward`` returns, read from its source alone.

Limits: only ``return`` statements of ``forward`` itself count (not helpers it calls), and a
record is recognised by its display (a tuple or dict) or by its constructor's name
(``ModelOutput``, ``tuple``, ``dict``).
"""

from __future__ import annotations

import re

import libcst as cst

from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.walk import nested_scope, own_nodes, walk


def returned_tuple_size(forward: cst.FunctionDef | None) -> int | None:
    """How many elements ``forward`` returns, where every ``return`` in it is a tuple display
    of one length (``return pi, q, q_pi``)."""
    if forward is None:
        return None
    returns = [n for n in own_nodes(forward) if isinstance(n, cst.Return)]
    values = [r.value for r in returns if r.value is not None]
    if not values or not all(isinstance(v, cst.Tuple) for v in values):
        return None
    tuples = [v for v in values if isinstance(v, cst.Tuple)]
    sizes = {len(t.elements) for t in tuples}
    starred = any(isinstance(e, cst.StarredElement) for t in tuples for e in t.elements)
    return sizes.pop() if len(sizes) == 1 and not starred else None


def returns_record(forward: cst.FunctionDef | None) -> bool:
    """``forward`` returns a tuple, dict or ``...Output(...)``."""
    if forward is None:
        return False
    for node in walk(forward.body, skip=nested_scope):
        if not isinstance(node, cst.Return) or node.value is None:
            continue
        value = node.value
        if isinstance(value, cst.Tuple | cst.Dict):
            return True
        name = dotted_name(value.func) if isinstance(value, cst.Call) else None
        if name is not None and re.fullmatch(r"(.*\.)?([A-Z]\w*Output\w*|tuple|dict)", name):
            return True
    return False
