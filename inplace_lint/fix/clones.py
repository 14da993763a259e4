"""Clones that keep a write away from the caller's tensor.

* IPL004, an argument written in place: ``x = x.clone()`` first in the function's body (after
  its docstring), so every write in the function lands in the function's own copy. Offered
  for a plain parameter (not ``self``, not ``*args``, not one whose default is ``None``)
  that the function never rebinds before the write. **Unsafe**: the caller no longer sees the
  change, which is the point, and code that relied on it must now use the return value.
* IPL005 in a custom ``autograd.Function``'s ``forward``: ``x = x.clone()`` before the first
  write to an input. **Unsafe** for the same reason (the caller's input keeps its values), and
  it gives up the memory the in-place write saved; ``ctx.mark_dirty`` is the other way out.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.ops import load_table
from inplace_lint.facts.summaries import destination
from inplace_lint.facts.syntax import _mark_dirty_names, constant_element
from inplace_lint.finding import Edit
from inplace_lint.fix.lines import Built, LineEdits
from inplace_lint.outofplace import is_inplace_name

__all__ = ["CloneRewrites"]


class CloneRewrites(LineEdits):
    """Clone-first fixes for writes to a caller's tensor."""

    def written_name(self, node: cst.CSTNode) -> str | None:
        """The plain name whose tensor ``node`` (a call, an augmented or item assignment)
        writes: ``x`` in ``x.add_(1)``, ``x[m].clamp_(0)``, ``x.view(-1).zero_()``,
        ``torch.relu_(x)``, ``x += 1``, ``x[0] = 1``."""
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            node = node.targets[0].target
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute) and is_inplace_name(func.attr.value):
                if self.is_torch(func.value):
                    written = node.args[0].value if node.args else None
                else:
                    written = _viewed(func.value)
                return written.value if isinstance(written, cst.Name) else None
            return None
        if isinstance(node, cst.AugAssign):
            target = node.target
            if isinstance(target, cst.Subscript):
                target = target.value
            return target.value if isinstance(target, cst.Name) else None
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            return node.value.value
        return None

    def writes_argument(self, node: cst.CSTNode) -> bool:
        """The write goes to a plain parameter of its function that is not named as a place
        to write into (``cls`` of ``add_pos(cls, pos)``, not ``out``): a side effect on the
        caller's tensor, which a clone at the top keeps to the function."""
        name = self.written_name(node)
        function = self.function_of(node)
        if name is None or function is None or name == "self" or destination(name):
            return False
        return _plain_parameter(function, name) is not None

    def clone_argument_fix(self, node: cst.CSTNode, cloned: set[tuple[int, str]]) -> Built | None:
        """IPL004: ``x = x.clone()`` at the top of the function whose argument ``x`` is written."""
        name = self.written_name(node)
        function = self.function_of(node)
        if name is None or function is None or name == "self":
            return None
        param = _plain_parameter(function, name)
        if param is None or _defaults_to_none(param):
            return None
        if self._rebound_before(function, name, node):
            return None
        if _through_constant_element(node, name):
            return None  # ``outputs[0].masked_fill_()``: ``outputs`` may be a list (no clone)
        key = (id(function), name)
        if key in cloned:
            return None  # the clone inserted for an earlier write covers this one
        edit = self.insert_at_top(function, f"{name} = {name}.clone()")
        if edit is None:
            return None
        cloned.add(key)
        return f"Clone argument `{name}` at the top of `{function.name.value}()`", [edit], False

    def _rebound_before(self, function: cst.FunctionDef, name: str, site: cst.CSTNode) -> bool:
        """``name`` is assigned in ``function`` somewhere before ``site``."""
        names, declared = self._scope_index(function)
        if name in declared:
            return True
        statement = site if isinstance(site, cst.BaseSmallStatement) else self.statement(site)
        here = self.start(statement if statement is not None else site)
        for node, nested in names.get(name, ()):
            if nested:
                continue
            holder = self.parent.get(node)
            binds = (
                isinstance(holder, cst.AssignTarget | cst.AnnAssign | cst.NamedExpr)
                or (isinstance(holder, cst.For) and holder.target is node)
                or isinstance(holder, cst.Element | cst.Tuple | cst.List)
            )
            if binds and (self.start(node).line, self.start(node).column) < (
                here.line,
                here.column,
            ):
                return True
        return False

    def clone_in_forward(self, node: cst.CSTNode, cloned: set[tuple[int, str]]) -> Built | None:
        """IPL005 in ``forward``: ``x = x.clone()`` before the first write to input ``x``."""
        function = self.function_of(node)
        if function is None or function.name.value != "forward":
            return None
        name = self.written_name(node)
        params = [p.name.value for p in function.params.params]
        if name is None or name not in params[1:]:  # ``ctx`` comes first
            return None
        if name in _mark_dirty_names(function):  # declared written: it must be returned
            return None
        if self._rebound_before(function, name, node):
            return None
        key = (id(function), name)
        line = self.own_line(node)
        if key in cloned or line is None:
            return None
        start = self.start(line)
        newline = self.newline_of(start.line)
        text = f"{name} = {name}.clone(){newline}{self.indent_of(line)}"
        cloned.add(key)
        edits = [Edit(start, start, text)]
        return f"Clone input `{name}` before writing to it in forward", edits, False


def _plain_parameter(function: cst.FunctionDef, name: str) -> cst.Param | None:
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if param.name.value == name:
            return param
    return None


def _defaults_to_none(param: cst.Param) -> bool:
    default = param.default
    return isinstance(default, cst.Name) and default.value == "None"


def _viewed(receiver: cst.BaseExpression) -> cst.BaseExpression:
    """The expression under items and view calls: ``x`` for ``x[m]`` or ``x.view(-1)[0]``."""
    views = load_table().view_methods
    while True:
        if isinstance(receiver, cst.Subscript):
            receiver = receiver.value
        elif (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value in views
            and receiver.func.attr.value != "detach"
        ):
            receiver = receiver.func.value
        else:
            return receiver


def _through_constant_element(node: cst.CSTNode, name: str) -> bool:
    """The write reaches ``name`` through a constant position (``outputs[0].add_(1)``,
    ``outputs[0] += 1``): ``name`` may hold a list or tuple, which has no ``clone()``."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        target: cst.BaseExpression = node.func.value
    elif isinstance(node, cst.AugAssign):
        target = node.target
    elif isinstance(node, cst.Assign) and node.targets:
        target = node.targets[0].target
        if isinstance(target, cst.Subscript):
            target = target.value
    else:
        return False
    found = constant_element(target)
    return found is not None and found[0] == name
