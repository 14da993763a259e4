"""IPL007: a write through ``.data`` or ``.detach()``, rewritten out of place on the name.

``h.data.clamp_(a, b)`` and ``h.detach().clamp_(a, b)`` become ``h = h.clamp(a, b)``,
``h.data *= s`` becomes ``h = h * s`` and ``h.data[i] = v`` becomes ``h = h.clone()`` then
``h[i] = v``: the change is recorded by autograd, so the gradient is that of what the program
computes. A write through a plain name that holds a detached alias (``t = h.detach()``,
``t.clamp_(...)``) is rewritten as IPL001 writes are (``t = t.clamp(...)``).

Safety: always **unsafe**. The original write reached every holder of the storage (the graph's
saved tensor among them); afterwards only the name sees the new value, and the gradients change
(to the correct ones). No fix is offered where rebinding the name cannot stand for the write:
a ``for`` target (``for p in model.parameters(): p.data.clamp_()``: the next iteration drops
the new value, and the parameters would not change at all) or a name bound to an item, another
name or an attribute other than a plain name's ``.data`` (``w = layer.weight``: the module keeps
the old tensor). Those writes want to move out of the window between forward and backward, a
decision left to the user.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.finding import Edit
from inplace_lint.fix.lines import Built, LineEdits
from inplace_lint.fix.safety import has_twin
from inplace_lint.outofplace import binary_form, is_inplace_name, needs_parens

__all__ = ["BypassRewrites"]

_ALIASING = (cst.Attribute, cst.Subscript, cst.Name)


class BypassRewrites(LineEdits):
    """The out-of-place fixes of ``.data`` / ``.detach()`` writes (IPL007)."""

    def bypass_fix(self, node: cst.CSTNode) -> Built | None:
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            target = node.targets[0].target
            return self._item_write(target, node) if isinstance(target, cst.Subscript) else None
        if isinstance(node, cst.Subscript):
            holder = self.statement(node)
            return self._item_write(node, holder) if holder is not None else None
        if isinstance(node, cst.AugAssign):
            return self._augmented(node)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._method(node, node.func)
        return None

    def _bypassed_name(self, receiver: cst.BaseExpression) -> cst.Name | None:
        """``h`` for ``h.data`` and ``h.detach()``, when ``h`` may be rebound for the write."""
        name: cst.BaseExpression | None = None
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            name = receiver.value
        elif (
            isinstance(receiver, cst.Call)
            and not receiver.args
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "detach"
        ):
            name = receiver.func.value
        if not isinstance(name, cst.Name) or not self.rebind_stands_for_write(name.value, name):
            return None
        return name

    def rebind_stands_for_write(self, name: str, site: cst.CSTNode) -> bool:
        """Rebinding ``name`` keeps the write's effect for later readers of the name: it is
        no ``for`` target and never bound to an attribute, an item or another name."""
        if name == "self":
            return False
        scope = next(
            (a for a in self.ancestors(site) if isinstance(a, cst.FunctionDef | cst.Module)),
            None,
        )
        if scope is None:
            return False
        names, declared = self._scope_index(scope)
        if name in declared:
            return False
        for node, nested in names.get(name, ()):
            if nested or self._not_a_variable(node):
                continue
            holder = self.parent.get(node)
            if isinstance(holder, cst.For | cst.CompFor) and holder.target is node:
                return False
            if isinstance(holder, cst.AssignTarget):
                assign = self.parent.get(holder)
                value = assign.value if isinstance(assign, cst.Assign) else None
                if isinstance(value, _ALIASING) and not _is_data(value):
                    return False
            if isinstance(holder, cst.Element | cst.Tuple | cst.List):
                return False  # ``a, b = pair`` / ``for a, b in pairs``: another holder's item
        return True

    def _method(self, call: cst.Call, func: cst.Attribute) -> Built | None:
        method = func.attr.value
        if not is_inplace_name(method) or not has_twin(method) or not self.is_statement(call):
            return None
        receiver = func.value
        if isinstance(receiver, cst.Name):  # ``t = h.detach(); t.clamp_()``
            if not self.rebind_stands_for_write(receiver.value, receiver):
                return None
            name = receiver.value
            edits = [Edit(self.start(call), self.start(call), f"{name} = ")]
        else:
            bypassed = self._bypassed_name(receiver)
            if bypassed is None:
                return None
            name = bypassed.value
            edits = [
                Edit(self.start(call), self.start(call), f"{name} = "),
                Edit(self.start(receiver), self.end(receiver), name),
            ]
        edits.append(Edit(self.start(func.attr), self.end(func.attr), method[:-1]))
        return f"Write `{name} = {name}.{method[:-1]}(...)` so autograd sees it", edits, False

    def _augmented(self, node: cst.AugAssign) -> Built | None:
        target = node.target
        if isinstance(target, cst.Subscript):
            return self._item_write(target, node)
        bypassed = self._bypassed_name(target)
        form = binary_form(node.operator)
        if bypassed is None or form is None:
            return None
        name = bypassed.value
        edits = [
            Edit(self.start(target), self.end(target), name),
            Edit(self.start(node.operator), self.end(node.operator), f"= {name} {form[1]}"),
        ]
        value = node.value
        if needs_parens(value):
            edits.append(Edit(self.start(value), self.start(value), "("))
            edits.append(Edit(self.end(value), self.end(value), ")"))
        return f"Write `{name} = {name} {form[1]} ...` so autograd sees it", edits, False

    def _item_write(self, target: cst.Subscript, holder: cst.CSTNode) -> Built | None:
        """``h.data[i] = v`` -> ``h = h.clone()`` then ``h[i] = v``."""
        receiver = target.value
        if isinstance(receiver, cst.Name):
            if not self.rebind_stands_for_write(receiver.value, receiver):
                return None
            name, edits = receiver.value, []
        else:
            bypassed = self._bypassed_name(receiver)
            if bypassed is None:
                return None
            name = bypassed.value
            edits = [Edit(self.start(receiver), self.end(receiver), name)]
        line = self.own_line(holder)
        if line is None:
            return None
        start = self.start(line)
        newline = self.newline_of(start.line)
        clone = f"{name} = {name}.clone(){newline}{self.indent_of(line)}"
        edits.insert(0, Edit(start, start, clone))
        return f"Write into a clone of `{name}` so autograd sees it", edits, False


def _is_data(node: cst.BaseExpression) -> bool:
    """``h.data`` on a plain name: a detached alias of a local tensor, which is what the
    rewrite replaces (``self.fc.weight.data`` is a parameter's, which rebinding cannot update)."""
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == "data"
        and isinstance(node.value, cst.Name)
        and node.value.value != "self"
    )
