"""Build the out-of-place twin of a source file.

The twin is the same program with the in-place tensor operations on chosen lines replaced by
their out-of-place counterparts. Running a program and its twin side by side shows what an
in-place operation does to autograd: the twin of a hazard runs (or computes other numbers),
the twin of a safe program computes the same numbers.

Rewrites, on the chosen lines:

* ``x.add_(y)`` as a statement -> ``x = x.add(y)``; as a value -> ``x.add(y)``. Methods
  without an out-of-place name become ``x.clone().zero_()``; ``x.copy_(y)`` ->
  ``x.where(x.new_zeros(x.shape).bool(), y.to(x))`` (``y`` in ``x``'s shape and dtype).
* ``torch.relu_(x)`` / ``F.relu_(x)`` -> ``x = torch.relu(x)`` (statement) or ``torch.relu(x)``.
* ``inplace=True`` (and a positional ``True`` for known signatures) -> ``False``.
* ``x += y`` -> ``x = x + y``; ``torch.add(a, b, out=c)`` -> ``c = torch.add(a, b)``.
* writes to an element or a view (``x[i] = v``, ``x[i] += y``, ``x[0].add_(1)``) clone the
  base tensor first, on the same line.
* ``x.data.mul_(2)`` / ``x.detach().mul_(2)`` -> ``x = x.mul(2)``, the visible write.
* ``x.clamp(min=0)`` / ``torch.clamp(x, min=0)`` -> ``x.relu()`` / ``torch.relu(x)``; the
  in-place ``x.clamp_(min=0)`` as a statement -> ``x = x.relu()``.
* on a chosen line where nothing else matched, ``self.act(out)`` -> ``self.act(out.clone())``.

Every rewrite keeps the statement on the line it started on (extra statements are joined
with ``;``), so line numbers in the twin match the original. Text outside the rewritten
nodes is kept byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from inplace_lint.facts.syntax import overlapping_copy
from inplace_lint.outofplace import (
    Form,
    binary_form,
    dotted_name,
    function_out_of_place,
    is_inplace_name,
    is_true,
    keyword,
    method_chain,
    method_form,
    needs_parens,
    positional,
    positional_inplace,
)

__all__ = ["out_of_place_twin"]

#: Roots of dotted names whose ``name_`` functions are the in-place twins of ``name``.
_FUNCTION_ROOTS = frozenset({"torch", "F", "functional"})

#: Roots of dotted names that are namespaces of functions, never tensors.
_NAMESPACE_ROOTS = frozenset({"torch", "nn", "F", "init", "functional", "np", "numpy", "math"})

#: Callables that never take a tensor to mutate; the call-site fallback leaves them alone.
_FALLBACK_SKIP = frozenset(
    {
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "enumerate",
        "filter",
        "float",
        "getattr",
        "hasattr",
        "id",
        "int",
        "isinstance",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "print",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "setattr",
        "sorted",
        "str",
        "sum",
        "super",
        "tuple",
        "type",
        "zip",
    }
)

#: Names that stand for the instance or the class in a method: ``self.data = v`` is an
#: attribute, not a write through ``.data``.
_OWNER_NAMES = ("self", "cls")


def out_of_place_twin(source: str, lines: set[int] | None = None) -> str:
    """Return ``source`` with the in-place operations on ``lines`` (1-based) made out of place.

    ``None`` means every line. A site is on a line when the in-place call or statement starts
    there. On chosen lines where nothing else matched, the first call ``NAME(arg)`` or
    ``self.NAME(arg)`` gets ``arg.clone()`` instead, for modules that act in place.
    """
    module = cst.parse_module(source)
    first = _TwinTransformer(lines)
    # a fresh parse holds no node twice: no defensive deep copy before reading positions (the
    # rewritten tree may, since a rewrite can use one name node twice: that one is copied)
    module = MetadataWrapper(module, unsafe_skip_copy=True).visit(first)
    if lines:
        left = set(lines) - first.matched
        if left:
            module = MetadataWrapper(module).visit(_CloneArgument(left))
    return module.code


# --------------------------------------------------------------------------- node helpers


def _is_dotted(node: cst.BaseExpression) -> bool:
    """``x``, ``self.buf``, ``a.b.c``: a name that can be assigned to."""
    return dotted_name(node) is not None


def _public_inplace(name: str) -> bool:
    """``add_`` yes; ``__iadd__``, ``_private_`` and ``x__`` no: the twin rewrites only public
    in-place names (a private ``_name_`` has no public out-of-place stem)."""
    return is_inplace_name(name) and not name.startswith("_")


def _alias_owner(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """``B`` for ``B.data`` or ``B.detach()`` with ``B`` dotted, else ``None``."""
    if isinstance(node, cst.Attribute) and node.attr.value == "data" and _is_dotted(node.value):
        return node.value
    if (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "detach"
        and _is_dotted(node.func.value)
    ):
        return node.func.value
    return None


def _base_of(node: cst.BaseExpression) -> cst.BaseExpression | None:
    """The dotted name whose storage a written expression belongs to (``x`` for ``x[0]``)."""
    if _is_dotted(node):
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            return node.value
        return node
    if isinstance(node, cst.Subscript | cst.Attribute):
        return _base_of(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return _base_of(node.func.value)
    return None


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` wrapped in parentheses unless it is atomic or already wrapped."""
    if not needs_parens(node):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_zero(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Integer | cst.Float) and not node.lpar:
        try:
            return float(node.value.replace("_", "")) == 0.0
        except ValueError:
            return False
    return False


def _without_last_comma(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    out = list(args)
    if out:
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out


def _drop_keyword(call: cst.Call, name: str) -> cst.Call:
    """``call`` without its ``name=...`` argument."""
    kept = [a for a in call.args if not (a.keyword and a.keyword.value == name)]
    if len(kept) == len(call.args):
        return call
    dropped_last = call.args[-1].keyword is not None and call.args[-1].keyword.value == name
    return call.with_changes(args=_without_last_comma(kept) if dropped_last else kept)


def _assign(target: cst.BaseExpression, value: cst.BaseExpression) -> cst.Assign:
    return cst.Assign(targets=[cst.AssignTarget(target=target)], value=value)


def _clone_of(base: cst.BaseExpression, guarded: bool = False) -> cst.Assign:
    """``base = base.clone()``; guarded: ``... if hasattr(base, "clone") else base``.

    The guard keeps containers (``feats[0]``, ``cache["gate"]``) working: a list or dict is
    left alone and the element itself is rebound by the statement that follows.
    """
    clone: cst.BaseExpression = cst.Call(func=cst.Attribute(value=base, attr=cst.Name("clone")))
    if guarded:
        test = cst.Call(
            func=cst.Name("hasattr"), args=[cst.Arg(base), cst.Arg(cst.SimpleString('"clone"'))]
        )
        clone = cst.IfExp(test=test, body=clone, orelse=base)
    return _assign(base, clone)


def _through_subscript(node: cst.BaseExpression) -> bool:
    """Whether a written expression reaches its base through an index (maybe a container)."""
    if isinstance(node, cst.Subscript):
        return True
    if isinstance(node, cst.Attribute):
        return _through_subscript(node.value)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return _through_subscript(node.func.value)
    return False


def _write_through(
    target: cst.BaseExpression, value: cst.BaseExpression, stmt: cst.BaseSmallStatement
) -> list[cst.BaseSmallStatement] | None:
    """Out-of-place form of a write to ``target``, an element or view of a named tensor.

    ``x[0].add_(1)`` -> ``x = x.clone() if hasattr(x, "clone") else x; x[0] = x[0].add(1)``:
    a tensor is cloned first, so the write lands in a private copy; a container is kept and
    only its element is rebound to ``value``, the out-of-place result. When ``target`` cannot
    be assigned to (``x.view(-1)``), ``stmt`` itself follows the clone.
    """
    base = _base_of(target)
    if base is None:
        return None
    clone = _clone_of(base, guarded=_through_subscript(target))
    if isinstance(target, cst.Subscript):
        return [clone, _assign(target, value).with_changes(semicolon=stmt.semicolon)]
    return [clone, stmt]


def _chain_root(call: cst.Call, rewritten: bool = False) -> cst.BaseExpression | None:
    """``h`` for ``h.mul_(2).add_(1)`` (in-place methods, at least two, on a dotted name that
    is not ``.data``, or on an element of one: ``ema[k]``), else ``None``. In the
    ``rewritten`` tree the inner calls are already out of place (``h.mul(2).add_(1)``), so
    there any method call counts below the outermost."""
    methods, node = method_chain(call, lambda _: True)
    checked = methods[-1:] if rewritten else methods
    if any(method_form(method.attr.value) is None for method in checked):
        return None
    element = isinstance(node, cst.Subscript) and _is_dotted(node.value)
    if len(methods) < 2 or not (_is_dotted(node) or element):
        return None
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        return None
    return node


def _inplace_function(call: cst.Call) -> str | None:
    """The dotted name of ``torch.relu_`` / ``F.relu_`` style calls, else ``None``."""
    name = dotted_name(call.func)
    if name is None or "." not in name:
        return None
    parts = name.split(".")
    if parts[0] not in _FUNCTION_ROOTS and parts[:2] != ["nn", "functional"]:
        return None
    if "init" in parts[:-1] or not _public_inplace(parts[-1]):
        return None
    return name


def _inplace_method(call: cst.Call) -> bool:
    """``recv.name_(...)`` on something that may be a tensor (not ``nn.init.zeros_``)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or method_form(func.attr.value) is None:
        return False
    receiver = dotted_name(func.value)
    if receiver is None:
        return True
    parts = receiver.split(".")
    return parts[0] not in _NAMESPACE_ROOTS and "init" not in parts


def _clamp_as_relu(call: cst.Call) -> cst.Call | None:
    """``x.clamp(min=0)`` -> ``x.relu()``, ``torch.clamp(x, min=0)`` -> ``torch.relu(x)``.

    The in-place spellings (``x.clamp_(min=0)``) get the out-of-place ``relu`` too: the
    caller rebinds the written name when the call is a statement.
    """
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    name = func.attr.value
    inplace = name.endswith("_")
    stem = name[:-1] if inplace else name
    if stem not in {"clamp", "clip", "clamp_min"}:
        return None
    args = positional(call)
    keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
    is_function = dotted_name(func.value) == "torch"
    operands = args[1:] if is_function else args
    if is_function and not args:
        return None
    if set(keywords) - {"min"} or len(operands) + len(keywords) != 1:
        return None
    bound = keywords["min"].value if keywords else operands[0].value
    if not _is_zero(bound):
        return None
    relu = cst.Name("relu")
    if is_function:
        return call.with_changes(
            func=func.with_changes(attr=relu), args=_without_last_comma(args[:1])
        )
    return call.with_changes(func=func.with_changes(attr=relu), args=[])


def _zero_plus(receiver: cst.BaseExpression, value: cst.BaseExpression) -> cst.BaseExpression:
    """``receiver.where(receiver.new_zeros(receiver.shape).bool(), value.to(receiver))``:
    ``value`` broadcast to ``receiver``'s shape, cast to its dtype and device as ``copy_``
    casts, both in the graph (``receiver``'s gradient zero). Not ``receiver * 0 + value``:
    a buffer from ``torch.empty`` may hold NaN or inf, and ``nan * 0`` is NaN, so the twin
    differed from a ``copy_`` that never reads the old values."""
    owner = _paren(receiver)
    shape = cst.Attribute(value=owner, attr=cst.Name("shape"))
    zeros = cst.Call(cst.Attribute(value=owner, attr=cst.Name("new_zeros")), [cst.Arg(shape)])
    never = cst.Call(cst.Attribute(value=zeros, attr=cst.Name("bool")))
    cast = cst.Call(cst.Attribute(value=_paren(value), attr=cst.Name("to")), [cst.Arg(receiver)])
    return cst.Call(
        cst.Attribute(value=owner, attr=cst.Name("where")), [cst.Arg(never), cst.Arg(cast)]
    )


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _out_of_place_method(call: cst.Call, receiver: cst.BaseExpression) -> cst.BaseExpression:
    """The out-of-place form of ``recv.name_(args)`` applied to ``receiver``."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    name = func.attr.value
    form = method_form(name)
    source = positional(call)
    if form is Form.COPY and source:
        return _zero_plus(receiver, source[0].value)
    if form is Form.CLONE:
        clone = cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name("clone")))
        return call.with_changes(func=func.with_changes(value=clone))
    return call.with_changes(func=func.with_changes(value=receiver, attr=cst.Name(name[:-1])))


def _out_of_place_function(call: cst.Call) -> cst.Call:
    """``torch.relu_(x)`` -> ``torch.relu(x)``; ``torch.zero_(x)`` -> ``torch.zeros_like(x)``."""
    func = call.func
    assert isinstance(func, cst.Attribute)
    name = func.attr.value
    new = function_out_of_place(name)
    return call.with_changes(func=func.with_changes(attr=cst.Name(new)))


# --------------------------------------------------------------------------- transformers


class _TwinTransformer(cst.CSTTransformer):
    """Rewrite the in-place operations on the chosen lines; record the lines it changed."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int] | None) -> None:
        super().__init__()
        self.lines = lines
        self.matched: set[int] = set()
        #: Top-level calls of statements that ``_rewrite_call_statement`` rewrites itself.
        self._owned: set[int] = set()
        #: Calls whose ``inplace=True`` was turned off.
        self._flipped: set[int] = set()
        #: Owned calls that end a chain of in-place methods on a name (``h.mul_(2).add_(1)``).
        self._chains: set[int] = set()

    # -- positions

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _chosen(self, *lines: int) -> bool:
        return self.lines is None or any(line in self.lines for line in lines)

    def _call_lines(self, call: cst.Call) -> tuple[int, ...]:
        if isinstance(call.func, cst.Attribute):
            return (self._line(call), self._line(call.func.attr))
        return (self._line(call),)

    # -- statements

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._claim(node.body)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._claim(node.body)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine:
        return updated_node.with_changes(body=self._rewrite_body(original_node, updated_node))

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        return updated_node.with_changes(body=self._rewrite_body(original_node, updated_node))

    def _claim(self, body: Sequence[cst.BaseSmallStatement]) -> None:
        """Claim the top-level calls of expression statements that write in place."""
        for stmt in body:
            if not (isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call)):
                continue
            call = stmt.value
            if not self._chosen(*self._call_lines(call)):
                continue
            if _clamp_as_relu(call) is not None:
                if _public_inplace(cast(cst.Attribute, call.func).attr.value):
                    self._owned.add(id(call))
            elif _inplace_function(call) or _inplace_method(call) or keyword(call, "out"):
                self._owned.add(id(call))
                if _chain_root(call) is not None:
                    self._chains.add(id(call))

    def _rewrite_body(
        self,
        original: cst.SimpleStatementLine | cst.SimpleStatementSuite,
        updated: cst.SimpleStatementLine | cst.SimpleStatementSuite,
    ) -> list[cst.BaseSmallStatement]:
        body: list[cst.BaseSmallStatement] = []
        for old, new in zip(original.body, updated.body, strict=True):
            replaced = self._rewrite_statement(old, new)
            if replaced is None:
                body.append(new)
            else:
                self.matched.add(self._line(old))
                body.extend(replaced)
        return body

    def _rewrite_statement(
        self, old: cst.BaseSmallStatement, new: cst.BaseSmallStatement
    ) -> list[cst.BaseSmallStatement] | None:
        if isinstance(old, cst.Expr) and isinstance(new, cst.Expr):
            if not (isinstance(old.value, cst.Call) and isinstance(new.value, cst.Call)):
                return None
            if id(old.value) in self._chains:
                root = _chain_root(new.value, rewritten=True)
                if root is not None:  # ``h.mul_(2).add_(1)`` -> ``h = h.mul(2).add(1)``
                    receiver = cast(cst.Attribute, new.value.func).value
                    value = _out_of_place_method(new.value, receiver)
                    if isinstance(root, cst.Subscript):  # ``ema[k]``: through a clone of ema
                        return _write_through(root, value, new)
                    return [_assign(root, value).with_changes(semicolon=new.semicolon)]
            if id(old.value) in self._owned:
                return _rewrite_owned_call(new.value, new)
            if id(old.value) in self._flipped:
                return _rewrite_flipped_call(old.value, new.value, new)
            return None
        if not self._chosen(self._line(old)):
            return None
        if isinstance(new, cst.AugAssign):
            return _rewrite_aug_assign(new)
        if isinstance(new, cst.Assign) and overlapping_copy(new):
            # ``x[..., 1:] = x[..., :-1]``: the copy meant is of the old values
            return [new.with_changes(value=_cloned_source(new.value))]
        if isinstance(new, cst.Assign):
            return _rewrite_assign(new)
        return None

    # -- expressions

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        if id(original_node) in self._owned:
            return updated_node
        call_lines = self._call_lines(original_node)
        chosen = self._chosen(*call_lines)
        if chosen:
            relu = _clamp_as_relu(updated_node)
            if relu is not None:
                self.matched.update(call_lines)
                return relu
        call = self._flip_inplace_flag(original_node, updated_node)
        if not chosen:
            return call
        if keyword(call, "out") is not None:
            call = _drop_keyword(call, "out")
            self.matched.update(call_lines)
        if _inplace_function(call) is not None:
            self.matched.update(call_lines)
            return _out_of_place_function(call)
        if _inplace_method(call):
            self.matched.update(call_lines)
            assert isinstance(call.func, cst.Attribute)
            return _out_of_place_method(call, call.func.value)
        return call

    def _flip_inplace_flag(self, original: cst.Call, call: cst.Call) -> cst.Call:
        """``inplace=True`` -> ``inplace=False``, also when passed by position."""
        call_line = self._line(original)
        args = list(call.args)
        flipped: list[int] = []
        for index, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "inplace" and is_true(arg.value):
                flipped.append(index)
        name = dotted_name(call.func)
        flag = positional_inplace(call, name.split(".")[-1]) if name else None
        if flag is not None and is_true(flag.value):
            flipped.append(next(i for i, a in enumerate(args) if a is flag))
        flipped = [i for i in flipped if self._chosen(call_line, self._line(original.args[i]))]
        if not flipped:
            return call
        for index in flipped:
            args[index] = args[index].with_changes(value=cst.Name("False"))
            self.matched.add(self._line(original.args[index]))
        self._flipped.add(id(original))
        self.matched.add(call_line)
        return call.with_changes(args=args)


# --------------------------------------------------------------------------- statement rewrites


def _rebind(
    target: cst.BaseExpression, value: cst.BaseExpression, stmt: cst.BaseSmallStatement
) -> list[cst.BaseSmallStatement]:
    """``target = value`` in place of ``stmt`` (keeping its semicolon)."""
    return [_assign(target, value).with_changes(semicolon=stmt.semicolon)]


def _write(
    target: cst.BaseExpression,
    make: Callable[[cst.BaseExpression], cst.BaseExpression],
    stmt: cst.BaseSmallStatement,
    kept: cst.BaseSmallStatement | None = None,
) -> list[cst.BaseSmallStatement] | None:
    """Rebind the tensor written through ``target`` to ``make(name)``, its out-of-place value.

    ``x`` / ``self.x`` are rebound directly; ``x.data`` and ``x.detach()`` rebind ``x``;
    elements and views go through ``_write_through`` (``kept`` replaces ``stmt`` there).
    """
    owner = _alias_owner(target)
    if owner is not None:
        return _rebind(owner, make(owner), stmt)
    if _is_dotted(target):
        return _rebind(target, make(target), stmt)
    return _write_through(target, make(target), kept if kept is not None else stmt)


def _rewrite_owned_call(call: cst.Call, stmt: cst.Expr) -> list[cst.BaseSmallStatement]:
    """A statement whose call writes in place: rebind the written tensor to the result."""
    relu = _clamp_as_relu(call)
    if relu is not None:
        func = cast(cst.Attribute, relu.func)
        if dotted_name(func.value) == "torch":
            operands = positional(relu)
            written = _write(operands[0].value, lambda t: _replace_first_arg(relu, t), stmt)
        else:
            written = _write(
                cast(cst.Attribute, call.func).value,
                lambda t: relu.with_changes(func=func.with_changes(value=t)),
                stmt,
            )
        return written if written is not None else [stmt.with_changes(value=relu)]
    if _inplace_function(call) is not None:
        value = _out_of_place_function(call)
        operands = positional(call)
        if operands:
            written = _write(operands[0].value, lambda t: _replace_first_arg(value, t), stmt)
            if written is not None:
                return written
        return [stmt.with_changes(value=value)]
    if _inplace_method(call):
        assert isinstance(call.func, cst.Attribute)
        written = _write(call.func.value, lambda t: _out_of_place_method(call, t), stmt)
        if written is not None:
            return written
        return [stmt.with_changes(value=_out_of_place_method(call, call.func.value))]
    out = keyword(call, "out")
    assert out is not None
    plain = _drop_keyword(call, "out")
    written = _write(out.value, lambda _: plain, stmt)
    return written if written is not None else [stmt.with_changes(value=plain)]


def _rewrite_flipped_call(
    original: cst.Call, call: cst.Call, stmt: cst.Expr
) -> list[cst.BaseSmallStatement] | None:
    """``F.relu(x, inplace=True)`` as a statement -> ``x = F.relu(x, inplace=False)``."""
    name = dotted_name(call.func)
    operands = positional(call)
    if name is None or not operands or not name.split(".")[-1].islower():
        return None
    kept = stmt.with_changes(value=original)
    return _write(operands[0].value, lambda t: _replace_first_arg(call, t), stmt, kept)


def _rewrite_aug_assign(stmt: cst.AugAssign) -> list[cst.BaseSmallStatement] | None:
    """``x += y`` -> ``x = x + y``; ``x[i] += y`` -> ``x = <clone>; x[i] = x[i] + y``."""
    form = binary_form(stmt.operator)
    if form is None:
        return None
    op = form[0](
        whitespace_before=stmt.operator.whitespace_before,
        whitespace_after=stmt.operator.whitespace_after,
    )
    return _write(
        stmt.target,
        lambda t: cst.BinaryOperation(left=t, operator=op, right=_paren(stmt.value)),
        stmt,
    )


#: Values that are never a tensor: ``self.data = []`` stores a list, not tensor data.
_NOT_TENSORS = (
    cst.List,
    cst.Dict,
    cst.Set,
    cst.Tuple,
    cst.ListComp,
    cst.DictComp,
    cst.SetComp,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
)


def _rewrite_assign(stmt: cst.Assign) -> list[cst.BaseSmallStatement] | None:
    """``x[i] = v`` -> ``x = <clone of x>; x[i] = v``; ``x.data = v`` -> ``x`` rebound to
    ``v`` in ``x``'s shape and dtype (``_zero_plus``)."""
    if len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Attribute):
        owner = _alias_owner(stmt.targets[0].target)
        if (
            owner is not None
            and not (isinstance(owner, cst.Name) and owner.value in _OWNER_NAMES)
            and not isinstance(stmt.value, _NOT_TENSORS)
        ):
            return _rebind(owner, _zero_plus(owner, stmt.value), stmt)
    bases: dict[str, cst.BaseExpression] = {}
    for target in stmt.targets:
        for sub in _subscript_targets(target.target):
            base = _base_of(sub)
            if base is not None:
                bases.setdefault(_code(base), base)
    if not bases:
        return None
    return [*(_clone_of(b, guarded=True) for b in bases.values()), stmt]


def _subscript_targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The subscript expressions among an assignment target (unpacking tuples and lists)."""
    if isinstance(target, cst.Subscript):
        return [target]
    if isinstance(target, cst.Tuple | cst.List):
        found: list[cst.BaseExpression] = []
        for element in target.elements:
            found.extend(_subscript_targets(element.value))
        return found
    return []


def _replace_first_arg(value: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """``value`` (a call) with its first positional argument replaced by ``new``."""
    if not isinstance(value, cst.Call):
        return value
    args = list(value.args)
    for index, arg in enumerate(args):
        if arg.keyword is None and not arg.star:
            args[index] = arg.with_changes(value=new)
            break
    return value.with_changes(args=args)


class _CloneArgument(cst.CSTTransformer):
    """On each given line, ``NAME(arg)`` / ``self.NAME(arg)`` -> ``NAME(arg.clone())``."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, lines: set[int]) -> None:
        super().__init__()
        self.left = set(lines)
        self._targets: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        line = self.get_metadata(PositionProvider, node).start.line
        if line not in self.left or not _callable_module(node.func):
            return
        if not any(a.keyword is None and not a.star for a in node.args):
            return
        self.left.discard(line)
        self._targets.add(id(node))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if id(original_node) not in self._targets:
            return updated_node
        args = list(updated_node.args)
        for index, arg in enumerate(args):
            if arg.keyword is None and not arg.star:
                clone = cst.Call(
                    func=cst.Attribute(value=_paren(arg.value), attr=cst.Name("clone"))
                )
                args[index] = arg.with_changes(value=clone)
                break
        return updated_node.with_changes(args=args)


def _callable_module(func: cst.BaseExpression) -> bool:
    """``net`` or ``self.act``: something that may be a module applied to a tensor."""
    if isinstance(func, cst.Name):
        return func.value not in _FALLBACK_SKIP
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and func.value.value == "self"
    )


def _cloned_source(node: cst.BaseExpression) -> cst.Call:
    """``node.clone()``."""
    return cst.Call(func=cst.Attribute(value=_paren(node), attr=cst.Name("clone")))
