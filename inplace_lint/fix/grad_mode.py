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

from inplace_lint.finding import Edit
from inplace_lint.fix.lines import Built, LineEdits, parameter_names
from inplace_lint.outofplace import is_inplace_name

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
