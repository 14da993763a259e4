"""Small questions about syntax nodes that the interpreter asks: no state, no rules."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from inplace_lint.facts.classes import (
    literal_bool,
)
from inplace_lint.facts.model import Kind, Value, Write
from inplace_lint.facts.names import ImportTable, dotted_name
from inplace_lint.facts.op_extras import _VALUES_AND_INDICES
from inplace_lint.facts.ops import (
    METADATA_ATTRIBUTES,
    OpTable,
)
from inplace_lint.facts.walk import (
    Walker,
    is_expression,
    nested_scope,
    own_nodes,
    walk,
)

#: Constants: never tensors.
_LITERALS = frozenset(
    {
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.ConcatenatedString,
        cst.FormattedString,
        cst.Ellipsis,
    }
)


_BINARY_OPS: dict[type, str] = {
    cst.Multiply: "mul",
    cst.Divide: "div",
    cst.MatrixMultiply: "matmul",
    cst.Power: "pow",
    cst.Add: "add",
    cst.Subtract: "sub",
    cst.FloorDivide: "floor_divide",
    cst.Modulo: "remainder",
}


_AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+=",
    cst.SubtractAssign: "-=",
    cst.MultiplyAssign: "*=",
    cst.DivideAssign: "/=",
    cst.FloorDivideAssign: "//=",
    cst.ModuloAssign: "%=",
    cst.PowerAssign: "**=",
    cst.BitAndAssign: "&=",
    cst.BitOrAssign: "|=",
    cst.BitXorAssign: "^=",
    cst.LeftShiftAssign: "<<=",
    cst.RightShiftAssign: ">>=",
}


def short_name(qualname: str) -> str:
    for prefix, short in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if qualname.startswith(prefix):
            return short + qualname[len(prefix) :]
    return qualname


def _indices_only(op: str, extra: list[tuple[str, cst.Arg, list[Value]]]) -> bool:
    """``max(x, dim)`` / ``min(x, dim)`` save only the integer indices, not ``x``."""
    if op.rsplit(".", 1)[-1] not in ("max", "min"):
        return False
    return any(
        keyword == "dim" or (not keyword and all(v.kind is not Kind.TENSOR for v in values))
        for keyword, _, values in extra
    )


def _returns_indices(source: cst.BaseExpression | None) -> bool:
    """Whether ``source`` is a call of an op returning values and their integer indices."""
    if not isinstance(source, cst.Call) or not isinstance(source.func, cst.Attribute):
        return False  # ``x.topk(k)``, ``torch.sort(x)``; not the builtin ``max(pairs)``
    return source.func.attr.value in _VALUES_AND_INDICES


def is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def none_comparison(test: cst.BaseExpression) -> tuple[cst.BaseExpression, bool] | None:
    """``x is None``: (x, True); ``x is not None``: (x, False); None for any other test."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    (target,) = test.comparisons
    if not is_none(target.comparator) or not isinstance(target.operator, cst.Is | cst.IsNot):
        return None
    return test.left, isinstance(target.operator, cst.Is)


def _constant_index(node: cst.Subscript) -> bool:
    """``x[0]``, ``x[-1]`` or ``x["key"]``: an element the source names exactly."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    value = node.slice[0].slice.value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, cst.Integer | cst.SimpleString)


def constant_element(node: cst.BaseExpression) -> tuple[str, int] | None:
    """``outputs[0]`` (also under ``.data``, a view call or a further subscript): the name
    whose element at a constant position a write goes through, and that position."""
    while True:
        if isinstance(node, cst.Subscript):
            if isinstance(node.value, cst.Name):
                index = int_index(node)
                return (node.value.value, index) if index is not None else None
            node = node.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None


def int_index(node: cst.Subscript) -> int | None:
    """``xs[2]`` or ``xs[-1]``: the constant position, else None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return _int_literal(node.slice[0].slice.value)


def literal_key(node: cst.BaseExpression) -> str | None:
    """The string of a literal mapping key (``"gamma"``), or None."""
    if isinstance(node, cst.SimpleString):
        key = node.evaluated_value
        return key if isinstance(key, str) else None
    return None


def _string_key(node: cst.Subscript) -> str | None:
    """The key of ``d["k"]``, or of ``td[(name, "k")]`` (a nested-key tuple with a string in
    it): no tensor takes a string index, so the subscripted value is a mapping."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        return literal_key(value)
    if isinstance(value, cst.Tuple) and any(
        isinstance(e.value, cst.SimpleString) for e in value.elements
    ):
        parts = [
            e.value.evaluated_value
            if isinstance(e.value, cst.SimpleString)
            else (dotted_name(e.value) or "?")
            for e in value.elements
        ]
        return repr(tuple(parts))
    return None


def leaves_iteration(body: Sequence[cst.CSTNode]) -> bool:
    """The block ends in ``continue`` or ``break``: nothing after it runs in this iteration."""
    last = body[-1] if body else None
    return (
        isinstance(last, cst.SimpleStatementLine)
        and bool(last.body)
        and isinstance(last.body[-1], cst.Continue | cst.Break)
    )


def always_raises(func: cst.FunctionDef) -> bool:
    """Every way through ``func`` ends in ``raise`` (a stub for a kernel this build lacks,
    ``raise NotImplementedError(...)`` after checks): a call of it never returns."""
    return _terminates(func.body.body) and not any(
        isinstance(node, cst.Return) for node in own_nodes(func)
    )


def _terminates(body: Sequence[cst.CSTNode]) -> bool:
    """The block always ends in ``return`` or ``raise``."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], cst.Return | cst.Raise)
    if isinstance(last, cst.Return | cst.Raise):
        return True
    if isinstance(last, cst.If):
        return (
            _terminates(last.body.body)
            and last.orelse is not None
            and _terminates(_orelse(last.orelse))
        )
    return False


def copies_into(write: Write) -> bool:
    """``dst.copy_(src)`` (or into a slice of dst): an explicit write into a destination."""
    node = write.node
    return (
        write.via_call is None
        and isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "copy_"
    )


def iterations(iterable: cst.BaseExpression, constants: dict[str, int] | None = None) -> int | None:
    """How many times a loop over ``iterable`` runs, where the source shows it: ``[a, b]``,
    ``range(4)``, ``range(n)`` with ``n = 1`` bound once in the function (``constants``)."""
    if isinstance(iterable, cst.List | cst.Tuple):
        elements = iterable.elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return len(elements)
    if not (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value == "range"
        and 1 <= len(iterable.args) <= 3
        and not any(arg.star or arg.keyword for arg in iterable.args)
    ):
        return None
    bounds = [_int_literal(arg.value, constants) for arg in iterable.args]
    if any(b is None for b in bounds):
        return None
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if step == 0:
        return None
    return len(range(start, stop, step))  # type: ignore[arg-type]


def local_int_constants(func: cst.FunctionDef, counts: dict[str, int]) -> dict[str, int]:
    """Names ``func`` binds exactly once (``counts``, from ``bound_names``), by an assignment
    of an integer literal (``critic_updates = 1``), and that are no parameter, nor declared
    ``global`` or ``nonlocal`` anywhere in it (a nested function may rebind them)."""
    params = {p.name.value for p in (*func.params.posonly_params, *func.params.params)}
    params |= {p.name.value for p in func.params.kwonly_params}
    params |= {
        item.name.value
        for node in walk(func.body, skip=is_expression)
        if isinstance(node, cst.Global | cst.Nonlocal)
        for item in node.names
    }
    found: dict[str, int] = {}
    for node in own_nodes(func):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        value = _int_literal(node.value)
        if isinstance(target, cst.Name) and value is not None and counts.get(target.value) == 1:
            found[target.value] = value
    return {n: v for n, v in found.items() if n not in params}


def _int_literal(node: cst.BaseExpression, constants: dict[str, int] | None = None) -> int | None:
    if constants and isinstance(node, cst.Name):
        return constants.get(node.value)
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    if negative:
        node = node.expression  # type: ignore[attr-defined]
    if isinstance(node, cst.Integer):
        return -int(node.value) if negative else int(node.value)
    return None


def _counters(stmt: cst.For) -> frozenset[str]:
    """``for i in range(n)`` and ``for i, x in enumerate(xs)``: ``i`` never repeats."""
    call = stmt.iter
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return frozenset()
    target = stmt.target
    if call.func.value == "range" and isinstance(target, cst.Name):
        return frozenset({target.value})
    if (
        call.func.value == "enumerate"
        and isinstance(target, cst.Tuple)
        and target.elements
        and isinstance(target.elements[0].value, cst.Name)
    ):
        return frozenset({target.elements[0].value.value})
    return frozenset()


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names a ``for`` target binds."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        return [n for e in target.elements for n in target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def variable_index(module: cst.Module, node: cst.Subscript) -> tuple[str, frozenset[str]] | None:
    """``xs[j]``, ``xs[i + 1]``: one index that is no constant and calls nothing (so it
    names one element for as long as the names it reads keep their values): its source and
    those names; None for any other subscript."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    if _constant_index(node):
        return None
    index = node.slice[0].slice.value
    names: set[str] = set()
    for part in walk(index):
        if isinstance(part, cst.Call | cst.Subscript | cst.Lambda | cst.NamedExpr):
            return None
        if isinstance(part, cst.Name):
            names.add(part.value)
    return module.code_for_node(index).strip(), frozenset(names)


def _subscript_texts(module: cst.Module, node: cst.Subscript) -> tuple[str, ...]:
    """The source of each index of ``x[a, b:c]``: ``("a", "b:c")``."""
    return tuple(module.code_for_node(element.slice).strip() for element in node.slice)


def _index_texts(
    module: cst.Module, target: cst.CSTNode | None, table: OpTable
) -> tuple[str, ...] | None:
    """The index a write goes to: ``x[i]``, ``x[i].view(-1)``, ``x[i].unsqueeze(0)``, or
    ``x[i][None, :n]`` (a part of row ``i``: the innermost index bounds it)."""
    node = target
    while True:
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in table.view_methods
        ):
            node = node.func.value
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Subscript | cst.Call):
            node = node.value
        else:
            break
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name | cst.Attribute):
        return _subscript_texts(module, node)
    return None


def _mentions(element: cst.SubscriptElement, names: frozenset[str]) -> bool:
    """A plain index that uses one of ``names`` (counters stepping by one), or a slice one
    step of them wide (``i : i + 1``, ``i * k : (i + 1) * k``): no two iterations share an
    element."""
    index = element.slice
    if isinstance(index, cst.Slice):
        return _one_step_slice(index, names)
    if not isinstance(index, cst.Index):
        return False
    return _uses(index.value, names)


def _uses(node: cst.CSTNode, names: frozenset[str]) -> bool:
    return any(type(n) is cst.Name and n.value in names for n in walk(node))


def _one_step_slice(index: cst.Slice, names: frozenset[str]) -> bool:
    lower, upper = index.lower, index.upper
    if lower is None or upper is None or index.step is not None or not _uses(lower, names):
        return False
    # ``i : i + 1``
    if (
        isinstance(upper, cst.BinaryOperation)
        and isinstance(upper.operator, cst.Add)
        and isinstance(upper.right, cst.Integer)
        and upper.right.value == "1"
        and upper.left.deep_equals(lower)
    ):
        return True
    # ``i * k : (i + 1) * k``
    return (
        isinstance(lower, cst.BinaryOperation)
        and isinstance(lower.operator, cst.Multiply)
        and isinstance(lower.left, cst.Name)
        and lower.left.value in names
        and isinstance(upper, cst.BinaryOperation)
        and isinstance(upper.operator, cst.Multiply)
        and upper.right.deep_equals(lower.right)
        and isinstance(upper.left, cst.BinaryOperation)
        and isinstance(upper.left.operator, cst.Add)
        and upper.left.left.deep_equals(lower.left)
        and isinstance(upper.left.right, cst.Integer)
        and upper.left.right.value == "1"
    )


def _orelse(node: cst.If | cst.Else | None) -> Sequence[cst.BaseStatement]:
    if node is None:
        return []
    if isinstance(node, cst.If):
        return [node]
    return node.body.body


def _arg(node: cst.Call, index: int, keyword: str) -> cst.Arg | None:
    positional = [a for a in node.args if a.keyword is None and not a.star]
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return positional[index] if index < len(positional) else None


def _retains(node: cst.Call) -> bool:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value in ("retain_graph", "create_graph"):
            return literal_bool(arg.value) is not False
    return False


def _aug_binary(operator: cst.BaseAugOp) -> object:
    mapping = {
        cst.AddAssign: cst.Add,
        cst.SubtractAssign: cst.Subtract,
        cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide,
        cst.MatrixMultiplyAssign: cst.MatrixMultiply,
        cst.PowerAssign: cst.Power,
    }
    op = mapping.get(type(operator))
    return op() if op is not None else cst.Add()


def _is_static(func: cst.FunctionDef | None) -> bool:
    if func is None:
        return False
    return any(dotted_name(deco.decorator) == "staticmethod" for deco in func.decorators)


def _mark_dirty_names(func: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class _Visitor(Walker):
        def visit_Call(self, node: cst.Call) -> None:
            callee = dotted_name(node.func) or ""
            if callee.endswith(".mark_dirty"):
                for arg in node.args:
                    if isinstance(arg.value, cst.Name):
                        names.add(arg.value.value)

    _Visitor().run(func)
    return names


def _tensor_names(func: cst.FunctionDef, imports: ImportTable, table: OpTable) -> set[str]:
    """Names that the function body uses the way only tensors are used."""
    names: set[str] = set()

    class _Visitor(Walker):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name):
                attr = node.attr.value
                if (
                    attr in METADATA_ATTRIBUTES
                    or attr in table.view_methods
                    or attr in table.methods
                    or table.is_inplace_method(attr)
                    or attr in ("size", "dim", "numel", "data", "detach", "clone")
                ):
                    names.add(node.value.value)

        def visit_Call(self, node: cst.Call) -> None:
            qualified = imports.qualify(node.func) or ""
            # a factory's first argument is a size or data (``torch.zeros(n, k)``), except
            # the ones that read a tensor's metadata (``zeros_like``)
            factory = (
                qualified in table.factory_functions and qualified not in table.metadata_factories
            )
            if qualified.startswith("torch.") and node.args and not factory:
                first = node.args[0].value
                if isinstance(first, cst.Name):
                    names.add(first.value)

    _Visitor().run(func.body)
    return names


def foreign_names(root: cst.CSTNode, table: OpTable) -> set[str]:
    """Names the code of ``root`` (a function, or a module's own statements: not the functions
    and classes inside) reads or sets an attribute of that no ``torch.Tensor`` has
    (``dataset.targets``): whatever they hold, it is not a plain tensor. Private names
    (``p._sharded``) are left out: code tags tensors with those."""
    names: set[str] = set()
    known = table.tensor_attributes

    class _Visitor(Walker):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            attr = node.attr.value
            if isinstance(node.value, cst.Name) and not attr.startswith("_") and attr not in known:
                names.add(node.value.value)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is root  # a nested function's names are its own

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

    if known:
        _Visitor().run(root)
    return names


def conditionally_copied(func: cst.FunctionDef, imports: ImportTable) -> frozenset[str]:
    """Parameters the function replaces by a copy of themselves on one arm of a branch
    (``if not self.inplace: batch = batch.clone()``): it handles the aliasing itself, so
    writing the caller's tensor on the other arm is the caller's choice."""
    params = {p.name.value for p in (*func.params.params, *func.params.kwonly_params)}
    found: set[str] = set()

    def copy_of(value: cst.BaseExpression) -> str | None:
        if not isinstance(value, cst.Call):
            return None
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "clone":
            root = value.func.value
            while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
                root = root.func.value  # ``x.detach().clone()``
            return root.value if isinstance(root, cst.Name) else None
        qualified = imports.qualify(value.func) or ""
        first = value.args[0].value if value.args else None
        copying = qualified in ("torch.clone", "copy.copy", "copy.deepcopy")
        return first.value if copying and isinstance(first, cst.Name) else None

    class _Visitor(Walker):
        def visit_If(self, node: cst.If) -> None:
            for arm in (node.body, node.orelse):
                for inner in walk(arm, skip=nested_scope) if arm is not None else ():
                    if isinstance(inner, cst.Assign) and len(inner.targets) == 1:
                        target = inner.targets[0].target
                        name = target.value if isinstance(target, cst.Name) else None
                        if name in params and copy_of(inner.value) == name:
                            found.add(name)

    _Visitor().run(func.body)
    return frozenset(found)


#: The node types that bind names, and the field holding their target (libcst's node
#: classes have no subclasses, so a lookup by exact type stands for ``isinstance``).
_BINDING_FIELDS: dict[type, str] = {
    cst.AssignTarget: "target",
    cst.AugAssign: "target",
    cst.AnnAssign: "target",
    cst.For: "target",
    cst.CompFor: "target",
    cst.AsName: "name",
    cst.NamedExpr: "target",
}


def binding_target(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The target through which ``node`` binds names (``x = ``, ``x += ``, ``x: T``,
    ``for x in``, a comprehension's ``for x in``, ``as x``, ``x :=``), or None."""
    field = _BINDING_FIELDS.get(type(node))
    return getattr(node, field) if field is not None else None


def bound_names(root: cst.Module | cst.FunctionDef) -> tuple[dict[str, int], set[str]]:
    """How often each name is bound directly in ``root`` (a module or one function body:
    nested functions, classes and comprehensions, each a scope of its own, are skipped), and
    the names its functions declare ``global``."""
    counts: dict[str, int] = {}

    def count(target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            counts[target.value] = counts.get(target.value, 0) + 1
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                count(element.value)
        elif isinstance(target, cst.StarredElement):
            count(target.value)

    fields = _BINDING_FIELDS
    for node in walk(root, skip=nested_scope):
        kind = type(node)
        if kind not in fields or kind is cst.CompFor:
            continue
        if kind is cst.AnnAssign and node.value is None:  # type: ignore[attr-defined]
            continue
        count(getattr(node, fields[kind]))
    declared = {
        item.name.value
        for node in walk(root, skip=is_expression)
        if isinstance(node, cst.Global)
        for item in node.names
    }
    return counts, declared


def self_sourced(target: cst.Subscript, source: cst.BaseExpression) -> bool:
    """``mean[model_indices] = mean``: a tensor written whole into a part of itself (rows
    permuted, a subset): the source overlaps what is written, and torch refuses the copy
    ("some elements of the input tensor and the written-to tensor refer to a single memory
    location"); older versions read rows already overwritten. ``x[:] = x`` writes every
    element from itself and is left alone."""
    if not source.deep_equals(target.value):
        return False
    return not all(_whole(element.slice) for element in target.slice)


def _whole(index: cst.BaseSlice) -> bool:
    """``:`` or ``...``: every element along the dimensions it covers."""
    if isinstance(index, cst.Slice):
        return index.lower is None and index.upper is None and index.step is None
    return isinstance(index, cst.Index) and isinstance(index.value, cst.Ellipsis)


def shifted_slices(target: cst.Subscript, source: cst.BaseExpression) -> bool:
    """``x[..., 1:] = x[..., :-1]``: the source is the same tensor's slice shifted along one
    dimension (every other index the same, no step), overlapping what is written.

    Shifted towards higher indices, the copy reads elements it already overwrote (torch
    smears them, or refuses contiguous slices); shifted towards lower ones (``x[:-1] =
    x[1:]``) it reads ahead, which comes out right unless the slices are contiguous and torch
    refuses the copy: reported only along the first index, where the slices are contiguous
    whenever the trailing dimensions are taken whole."""
    if not isinstance(source, cst.Subscript) or not source.value.deep_equals(target.value):
        return False
    if len(source.slice) != len(target.slice) or not basic_index(target):
        return False  # ``x[mask, 1:]`` gathers a copy: no view overlaps
    differing = [
        (position, a.slice, b.slice)
        for position, (a, b) in enumerate(zip(target.slice, source.slice, strict=True))
        if not a.slice.deep_equals(b.slice)
    ]
    if len(differing) != 1:
        return False
    position, written, read = differing[0]
    if not isinstance(written, cst.Slice) or not isinstance(read, cst.Slice):
        return False
    if written.step is not None or read.step is not None:
        return False
    return _shift(written, read) or (position == 0 and _shift(read, written))


def _shift(head: cst.Slice, tail: cst.Slice) -> bool:
    """``k:`` against ``:-k`` (the same ``k``, written the same way)."""
    if head.upper is not None or tail.lower is not None or head.lower is None:
        return False
    upper = tail.upper
    return (
        isinstance(upper, cst.UnaryOperation)
        and isinstance(upper.operator, cst.Minus)
        and upper.expression.deep_equals(head.lower)
    )


def basic_index(node: cst.Subscript) -> bool:
    """Indexing that returns a view: integer constants, slices, ``...`` and ``None`` only
    (a name may hold an index tensor, which gathers a copy)."""
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Slice):
            continue
        value = index.value
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
            value = value.expression
        if not isinstance(value, cst.Integer | cst.Ellipsis) and not (
            isinstance(value, cst.Name) and value.value == "None"
        ):
            return False
    return True


def copying_index(node: cst.Subscript) -> bool:
    """Indexing that surely gathers a copy: an index that is a comparison (a bool mask,
    ``x[labels <= label]``), its negation or conjunction (``x[~m]``, ``x[(a > 0) & m]``) or a
    list display (``x[[0, 2]]``). A name may hold an int, so it proves nothing."""

    def mask(value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Comparison | cst.List | cst.ListComp):
            return True
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.BitInvert):
            return True
        return (
            isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, cst.BitAnd | cst.BitOr)
            and (mask(value.left) or mask(value.right))
        )

    return any(
        isinstance(element.slice, cst.Index) and mask(element.slice.value) for element in node.slice
    )


def overlapping_copy(node: cst.CSTNode) -> bool:
    """``x[..., 1:] = x[..., :-1]``, ``x[perm] = x``: one subscript target assigned from a
    shifted slice of the same tensor (``shifted_slices``) or from the tensor whole
    (``self_sourced``)."""
    if not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return False
    target = node.targets[0].target
    return isinstance(target, cst.Subscript) and (
        shifted_slices(target, node.value) or self_sourced(target, node.value)
    )


def tuple_annotation(node: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """The element annotations of ``tuple[A, B]`` / ``Tuple[A, B]`` (``typing.`` too); None
    for any other annotation, ``tuple[A, ...]`` included."""
    if not isinstance(node, cst.Subscript):
        return None
    head = node.value
    name = head.attr.value if isinstance(head, cst.Attribute) else getattr(head, "value", None)
    if name not in ("tuple", "Tuple"):
        return None
    parts: list[cst.BaseExpression] = []
    for element in node.slice:
        index = element.slice
        if not isinstance(index, cst.Index) or isinstance(index.value, cst.Ellipsis):
            return None
        parts.append(index.value)
    return parts or None


def rewritten_mapping(loop: cst.For) -> str | None:
    """``for k, v in d.items(): d[k] = f(v)`` (an assignment at the top of the body, keyed by
    the loop's own key): every entry of ``d`` is replaced, so after the loop it holds none of
    the values it held before. The mapping's dotted name, else None."""
    call = loop.iter
    if not (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "items"
        and not call.args
    ):
        return None
    mapping = dotted_name(call.func.value)
    target = loop.target
    if mapping is None or not (
        isinstance(target, cst.Tuple | cst.List)
        and len(target.elements) == 2
        and isinstance(target.elements[0].value, cst.Name)
    ):
        return None
    key = target.elements[0].value.value
    for stmt in loop.body.body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and _stores_at(small, mapping, key):
                return mapping
    return None


def _stores_at(assign: cst.Assign, mapping: str, key: str) -> bool:
    """``mapping[key] = ...``, the only target."""
    if len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Subscript) or dotted_name(target.value) != mapping:
        return False
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return False
    index = target.slice[0].slice.value
    return isinstance(index, cst.Name) and index.value == key
