"""IPL003: a leaf that requires grad written in place, fixed by turning grad mode off.

Two forms, both for a write that stands alone on its line:

* in init-like code (``__init__``, ``reset_parameters``, any function whose name says
  ``init``), ``w.fill_(v)`` / ``zero_()`` / ``normal_(m, s)`` / ``uniform_(a, b)`` become the
  matching ``nn.init`` call (``nn.init.constant_(w, v)``), which writes under ``no_grad``;
* any other write is wrapped in ``with torch.no_grad():``.

Safety. Torch refuses an in-place write to a leaf that requires grad whenever grad mode is
on, so the original statement raises each time it runs with grad on, and with grad off the
wrapped statement does exactly what it did. No run that finished changes. The rewrite is
still marked **safe** only in init-like code, where the write is an initialisation and never
meant to be differentiated; elsewhere (a manual SGD step, a clip, a MAML inner step) the
author may have wanted the write in the graph, and ``no_grad`` leaves it out, so it is
**unsafe** there. No form is offered where the module has no name for ``torch``.
"""

from __future__ import annotations

import re

import libcst as cst

from inplace_lint.facts.walk import walk
from inplace_lint.finding import Edit, Position
from inplace_lint.fix.lines import Built, LineEdits, parameter_names
from inplace_lint.outofplace import dotted_name, is_inplace_name, is_true, keyword

__all__ = ["GradModeRewrites"]

#: Function names whose in-place writes are initialisation.
INIT_LIKE = re.compile(r"init|reset_param", re.IGNORECASE)

#: Tensor methods with an ``nn.init`` twin taking the same positional arguments after the
#: tensor, and how many positional arguments each accepts (``fill_(v)`` -> ``constant_(w, v)``;
#: ``uniform_(from, to)`` and ``uniform_(w, a, b)`` only agree positionally).
_NN_INIT = {
    "fill_": ("constant_", 1, 1),
    "zero_": ("zeros_", 0, 0),
    "normal_": ("normal_", 0, 2),
    "uniform_": ("uniform_", 0, 2),
}


class GradModeRewrites(LineEdits):
    """The grad-mode fixes of leaf writes (IPL003)."""

    def differentiable_update(self, node: cst.CSTNode) -> bool:
        """The write reads a gradient taken with ``create_graph=True`` (``fast_w.sub_(lr * g)``
        after ``g, = torch.autograd.grad(..., create_graph=True)``): the author wants the update
        in the graph (MAML's inner step), so ``no_grad`` is the wrong form and the out-of-place
        rewrite (``fast_w = fast_w.sub(lr * g)``) is the one to offer."""
        statement = node if isinstance(node, cst.BaseSmallStatement) else self.statement(node)
        scope = next(
            (a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef | cst.Module)),
            None,
        )
        if statement is None or scope is None:
            return False
        graded = self._higher_order_gradients(scope)
        return any(isinstance(n, cst.Name) and n.value in graded for n in walk(statement))

    def grad_calls_precede(self, names: set[str], site: cst.CSTNode) -> bool:
        """Rebinding ``names`` at ``site`` hides nothing from a grad call: every call that
        differentiates one of them runs before ``site``, and one inside a loop around ``site``
        sees the name bound afresh earlier in that loop (``fast_w = w`` at the top of a MAML
        task loop), so no iteration hands it the rebound tensor."""
        statement = site if isinstance(site, cst.BaseSmallStatement) else self.statement(site)
        scope = next(
            (a for a in self.ancestors(site) if isinstance(a, cst.FunctionDef | cst.Module)),
            None,
        )
        if statement is None or scope is None:
            return False
        here = _key(self.start(statement))
        loops = []
        for ancestor in self.ancestors(statement):
            if ancestor is scope:
                break
            if isinstance(ancestor, cst.For | cst.While):
                loops.append(ancestor)
        for call in walk(scope):
            if not isinstance(call, cst.Call) or not names & self._differentiated(call):
                continue
            if _key(self.start(call)) >= here:
                return False
            for loop in loops:
                inside = _key(self.start(loop)) <= _key(self.start(call)) <= _key(self.end(loop))
                if inside and not self._bound_in_loop_before(names, loop, call):
                    return False
        return True

    def _differentiated(self, call: cst.Call) -> set[str]:
        """The plain names a grad call differentiates (``inputs=`` or ``grad``'s second)."""
        qualified = self.qualified(call.func) or dotted_name(call.func) or ""
        inputs = keyword(call, "inputs")
        if inputs is None and qualified.endswith("autograd.grad") and len(call.args) > 1:
            inputs = call.args[1] if call.args[1].keyword is None else None
        if inputs is None:
            return set()
        value = inputs.value
        elements = (
            [e.value for e in value.elements]
            if isinstance(value, cst.List | cst.Tuple)
            else [value]
        )
        return {e.value for e in elements if isinstance(e, cst.Name)}

    def _bound_in_loop_before(self, names: set[str], loop: cst.CSTNode, call: cst.Call) -> bool:
        """The loop binds ``names`` afresh before ``call``, or recomputes what ``call``
        differentiates (its first argument's names), so each iteration's grad call sees the
        tensor its outputs were computed from."""
        bound: set[str] = set()
        limit = _key(self.start(call))
        for node in walk(loop):
            if isinstance(node, cst.AssignTarget) and _key(self.start(node)) < limit:
                bound.update(n.value for n in walk(node.target) if isinstance(n, cst.Name))
        if names <= bound:
            return True
        if not call.args or call.args[0].keyword is not None:
            return False
        used = {
            n.value
            for n in walk(call.args[0].value)
            if isinstance(n, cst.Name) and not self._not_a_variable(n)
        }
        return bool(used) and used - self.aliases.keys() <= bound

    def _higher_order_gradients(self, scope: cst.CSTNode) -> set[str]:
        """Names bound in ``scope`` to the result of a ``create_graph=True`` grad call."""
        names: set[str] = set()
        for node in walk(scope):
            if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
                continue
            call = node.value
            flag = keyword(call, "create_graph")
            qualified = self.qualified(call.func) or dotted_name(call.func) or ""
            if flag is None or not is_true(flag.value) or not qualified.endswith("grad"):
                continue
            for target in node.targets:
                names.update(n.value for n in walk(target.target) if isinstance(n, cst.Name))
        return names

    def leaf_write_fix(self, node: cst.CSTNode) -> Built | None:
        line = self.own_line(node)
        if line is None:
            return None
        function = self.function_of(node)
        init_like = function is not None and INIT_LIKE.search(function.name.value) is not None
        if init_like and function is not None:
            built = self._nn_init(line, function)
            if built is not None:
                return built
        return self.no_grad_wrap(line, init_like)

    def no_grad_wrap(self, line: cst.SimpleStatementLine, safe: bool) -> Built | None:
        """``with torch.no_grad():`` on the line before ``line``, which moves one level in."""
        torch = self.torch_name()
        if torch is None:
            return None
        indent = self.indent_of(line)
        unit = "\t" if "\t" in indent else self.module.default_indent
        start = self.start(line)
        newline = self.newline_of(start.line)
        text = f"with {torch}.no_grad():{newline}{indent}{unit}"
        return "Wrap the write in `with torch.no_grad():`", [Edit(start, start, text)], safe

    def _nn_init(self, line: cst.SimpleStatementLine, function: cst.FunctionDef) -> Built | None:
        statement = line.body[0]
        call = statement.value if isinstance(statement, cst.Expr) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return None
        method = call.func.attr.value
        if method not in _NN_INIT:
            return None
        target, least, most = _NN_INIT[method]
        args = list(call.args)
        if any(a.keyword is not None or a.star for a in args) or not least <= len(args) <= most:
            return None
        receiver = call.func.value
        chained = isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute)
        if chained and is_inplace_name(receiver.func.attr.value):  # type: ignore[union-attr]
            return None  # ``w.mul_(2).fill_(1)``: a chain, not one initialisation
        init = self._nn_init_module()
        if init is None or self._binds(function, init.split(".")[0]):
            return None  # ``def __init__(self, init=...)`` hides the module's ``init``
        parts = [self.text(self.start(receiver), self.end(receiver))]
        parts += [self.text(self.start(a.value), self.end(a.value)) for a in args]
        text = f"{init}.{target}({', '.join(parts)})"
        edit = Edit(self.start(call), self.end(call), text)
        return f"Use `{init}.{target}()`, which writes under no_grad", [edit], True

    def _nn_init_module(self) -> str | None:
        """How this module spells ``torch.nn.init``: ``init``, ``nn.init`` or ``torch.nn.init``."""
        for full, suffix in (("torch.nn.init", ""), ("torch.nn", ".init")):
            names = sorted(local for local, value in self.aliases.items() if value == full)
            if names:
                return names[0] + suffix
        torch = self.torch_name()
        return f"{torch}.nn.init" if torch is not None else None

    def _binds(self, function: cst.FunctionDef, name: str) -> bool:
        """``function`` binds ``name`` itself (a parameter, an assignment, a loop target)."""
        if name in parameter_names(function):
            return True
        for node, _ in self._scope_index(function)[0].get(name, ()):
            holder = self.parent.get(node)
            if isinstance(holder, cst.AssignTarget | cst.AsName | cst.NamedExpr):
                return True
            if isinstance(holder, cst.For | cst.AnnAssign) and holder.target is node:
                return True
        return False


def _key(position: Position) -> tuple[int, int]:
    return position.line, position.column
