"""Out-of-place rewrites of writes through a container's element and inside a grad call.

* ``feats[0].mul_(0.5)``, ``ema[k].mul_(d).add_(p)`` as a statement, where ``feats`` / ``ema``
  is provably a list or dict (every binding in its scope is a display, a comprehension,
  ``list(...)`` or ``dict(...)``, or the key is a string literal, which no tensor takes):
  ``ema[k] = ema[k].mul(d).add(p)``, which stores a new tensor in the container instead of
  writing into the one it holds. A tensor's own item (``t[0]``)
  is never rewritten this way, since ``t[0] = ...`` writes into ``t`` again.
* IPL006 at ``torch.autograd.grad(F.relu_(h).sum(), h)``: the in-place ops inside the grad
  call's outputs that write a differentiated name go out of place (``F.relu(h)``).

Safety: both **unsafe**. The element's tensor usually has other holders (the name it was
appended from, a graph that saved it), which no longer see the write; out of place, ``h`` keeps
its old value for later readers.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.ops import load_table
from inplace_lint.facts.walk import walk
from inplace_lint.finding import Edit
from inplace_lint.fix.lines import Built, LineEdits, parameter_names
from inplace_lint.fix.safety import has_twin
from inplace_lint.outofplace import (
    binary_form,
    dotted_name,
    is_inplace_name,
    keyword,
    method_chain,
)

__all__ = ["ElementRewrites"]

_CONTAINERS = (cst.List, cst.Dict, cst.ListComp, cst.DictComp)
_KEYS = (cst.Name, cst.Integer, cst.SimpleString, cst.UnaryOperation)
#: what a key may not contain when the rewrite evaluates it twice
_IMPURE = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda)


class ElementRewrites(LineEdits):
    """Element-chain and grad-call rewrites."""

    def element_chain_fix(self, call: cst.Call) -> Built | None:
        top = self._chain_top(call)
        methods, root = method_chain(top, is_inplace_name)
        if not methods or not self.is_statement(top):
            return None
        if not all(has_twin(m.attr.value) for m in methods):
            return None
        if not isinstance(root, cst.Subscript) or not isinstance(root.value, cst.Name):
            return None
        if not self._simple_key(root):
            return None
        key = root.slice[0].slice.value  # type: ignore[attr-defined]
        if not isinstance(key, cst.SimpleString) and not self._is_container(root.value):
            return None  # a string key is a mapping's: a tensor takes no string index
        element = self.text(self.start(root), self.end(root))
        edits = [Edit(self.start(top), self.start(top), f"{element} = ")]
        edits += [Edit(self.start(m.attr), self.end(m.attr), m.attr.value[:-1]) for m in methods]
        return f"Store `{element}` out of place instead of writing into it", edits, False

    def element_augassign_fix(self, node: cst.AugAssign, operand_edits: list[Edit]) -> Built | None:
        """``laterals[i - 1] += up`` where ``laterals`` is provably a list or dict:
        ``laterals[i - 1] = laterals[i - 1] + up``, a new tensor stored in the container
        (cloning the container, as for a tensor's item, would call ``.clone()`` on a list).
        ``operand_edits``: the parentheses the operand needs, from the caller."""
        target = node.target
        if not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
            return None
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return None
        key = target.slice[0].slice.value
        if any(isinstance(n, _IMPURE) for n in walk(key)):
            return None  # the key is evaluated twice in the rewrite
        if not isinstance(key, cst.SimpleString) and not self._is_container(target.value):
            return None
        form = binary_form(node.operator)
        if form is None:
            return None
        element = self.text(self.start(target), self.end(target))
        operator = Edit(
            self.start(node.operator), self.end(node.operator), f"= {element} {form[1]}"
        )
        return (
            f"Store `{element}` out of place instead of writing into it",
            [operator, *operand_edits],
            False,
        )

    def view_write_fix(self, call: cst.Call, capable: bool) -> Built | None:
        """``w.diagonal().zero_()``, ``h[0].mul_(2)`` on a tensor: ``w = w.clone()`` first, so
        the write lands in a copy (exact whether the view op returned a view or a copy)."""
        top = self._chain_top(call)
        methods, root = method_chain(top, is_inplace_name)
        if not methods or not self.is_statement(top):
            return None
        views = load_table().view_methods
        base, steps = root, 0
        while True:
            if isinstance(base, cst.Subscript):
                if any(_string_key(e) for e in base.slice):
                    return None  # a mapping's item: the element rewrite's case
                base = base.value
            elif (
                isinstance(base, cst.Call)
                and isinstance(base.func, cst.Attribute)
                and base.func.attr.value in views
                and base.func.attr.value != "detach"  # a bypass: IPL007's, not a view write
            ):
                base = base.func.value
            else:
                break
            steps += 1
        if steps == 0 or not isinstance(base, cst.Name) or self._is_container(base):
            return None
        function = self.function_of(top)
        if function is not None and base.value in parameter_names(function):
            return None  # an argument's view: IPL004's clone at the top, when it applies
        line = self.own_line(top)
        if line is None:
            return None
        start = self.start(line)
        name = base.value
        text = f"{name} = {name}.clone(){self.newline_of(start.line)}{self.indent_of(line)}"
        safe = capable and self.rebind_is_safe(name, line.body[0])
        return (
            f"Write into a clone: insert `{name} = {name}.clone()` first",
            [Edit(start, start, text)],
            safe,
        )

    def _chain_top(self, call: cst.Call) -> cst.Call:
        """The outermost call of the in-place chain ``call`` sits in."""
        top = call
        while True:
            attribute = self.parent.get(top)
            outer = self.parent.get(attribute) if attribute is not None else None
            if not (
                isinstance(attribute, cst.Attribute)
                and isinstance(outer, cst.Call)
                and outer.func is attribute
                and is_inplace_name(attribute.attr.value)
            ):
                return top
            top = outer

    def _simple_key(self, subscript: cst.Subscript) -> bool:
        if len(subscript.slice) != 1:
            return False
        index = subscript.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(index.value, _KEYS)

    def may_be_container(self, name: cst.Name) -> bool:
        """Some use of ``name`` in its scope shows a list or dict: a binding to a display,
        comprehension, ``list()`` or ``dict()``, or ``name.append``/``extend``/``insert``
        (methods no tensor has). Cloning it, as a tensor's item write is fixed, would fail."""
        found = self._own_uses(name)
        for node in found[0] if found is not None else ():
            holder = self.parent.get(node)
            if isinstance(holder, cst.Attribute) and holder.value is node:
                if holder.attr.value in ("append", "extend", "insert"):
                    return True
            elif isinstance(holder, cst.AssignTarget):
                assign = self.parent.get(holder)
                if isinstance(assign, cst.Assign) and _makes_container(assign.value):
                    return True
        return False

    def _own_uses(self, name: cst.Name) -> tuple[list[cst.Name], set[str]] | None:
        """The ``Name`` nodes of ``name`` in its scope (not in nested scopes), and the names
        the scope declares ``global``/``nonlocal``; None outside a function or module."""
        scope = next(
            (a for a in self.ancestors(name) if isinstance(a, cst.FunctionDef | cst.Module)),
            None,
        )
        if scope is None:
            return None
        names, declared = self._scope_index(scope)
        return [node for node, nested in names.get(name.value, ()) if not nested], declared

    def _is_container(self, name: cst.Name) -> bool:
        """Every binding of ``name`` in its scope makes a list or a dict."""
        found = self._own_uses(name)
        if found is None or name.value in found[1]:
            return False
        bound = False
        for node in found[0]:
            holder = self.parent.get(node)
            if isinstance(holder, cst.Param) or (
                isinstance(holder, cst.For) and holder.target is node
            ):
                return False
            if isinstance(holder, cst.Element):
                display = self.parent.get(holder)
                outer = self.parent.get(display) if display is not None else None
                if isinstance(outer, cst.AssignTarget | cst.For | cst.CompFor):
                    return False  # ``feats, rest = ...``: bound to an unpacked item
            if isinstance(holder, cst.AssignTarget):
                assign = self.parent.get(holder)
                if not isinstance(assign, cst.Assign) or not _makes_container(assign.value):
                    return False
                bound = True
        return bound

    def grad_call_fix(self, call: cst.Call) -> Built | None:
        """IPL006 at a grad call: its outputs' in-place ops on its inputs go out of place."""
        name = self.qualified(call.func) or dotted_name(call.func) or ""
        if not name.endswith("autograd.grad") or len(call.args) < 2:
            return None
        outputs, inputs = call.args[0].value, call.args[1].value
        elements = inputs.elements if isinstance(inputs, cst.List | cst.Tuple) else None
        targets = [e.value for e in elements] if elements is not None else [inputs]
        differentiated = {t.value for t in targets if isinstance(t, cst.Name)}
        edits = []
        for node in walk(outputs):
            if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
                continue
            method = node.func.attr.value
            if not is_inplace_name(method) or not has_twin(method):
                continue
            if self.is_torch(node.func.value):
                written = node.args[0].value if node.args else None
            else:
                written = node.func.value
            if (
                isinstance(written, cst.Name)
                and written.value in differentiated
                and keyword(node, "out") is None
            ):
                attr = node.func.attr
                edits.append(Edit(self.start(attr), self.end(attr), method[:-1]))
        if not edits:
            return None
        return "Use the out-of-place op inside the grad call", edits, False


def _makes_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, _CONTAINERS):
        return True
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value in ("list", "dict")
    )


def _string_key(element: cst.SubscriptElement) -> bool:
    index = element.slice
    return isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString)
