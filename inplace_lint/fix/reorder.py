"""IPL001 at ``optimizer.step()``: move the step after the last backward that still needs the
old weights.

The fix is offered only where the order is plain: the step is a statement of its own, and
the backward calls after it in the same block are statements of that block too (none inside
an ``if``, a loop or a ``with`` after the step, none in a nested function); between the step
and the last of them the same optimizer is neither zeroed nor stepped, and the statements there
do not read the name the optimizer is bound to otherwise. The step line is cut and pasted,
comment and all, after the last backward statement.

Safety: always **unsafe**. The update now happens after the later backward, so its gradients
(which may include the later loss's contribution, when that loss reaches the stepped
parameters) and every read of the weights in between change: that is the point of the fix.
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts.walk import walk
from inplace_lint.finding import Edit
from inplace_lint.fix.lines import Built, LineEdits
from inplace_lint.outofplace import dotted_name

__all__ = ["StepReorder"]


class StepReorder(LineEdits):
    """Moves an optimizer step after the last backward of its block."""

    def step_move_fix(self, call: cst.Call) -> Built | None:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "step") or call.args:
            return None
        optimizer = dotted_name(func.value)
        line = self.own_line(call)
        if optimizer is None or line is None or not self.is_statement(call):
            return None
        block = self.parent[line]
        statements = list(block.body)
        index = statements.index(line)
        last = self._last_backward(statements[index + 1 :], optimizer)
        if last is None:
            return None
        cut = self.whole_lines(line)
        paste = self.after_line(last)
        if cut is None or paste is None:
            return None
        begin, end, text = cut
        edits = [Edit(begin, end, ""), Edit(paste, paste, text)]
        where = self.start(last).line
        return f"Move `{optimizer}.step()` after the backward on line {where}", edits, False

    def _last_backward(
        self, after: list[cst.CSTNode], optimizer: str
    ) -> cst.SimpleStatementLine | None:
        """The last statement of ``after`` that is a backward call, if the order is plain."""
        last: cst.SimpleStatementLine | None = None
        seen: list[cst.CSTNode] = []
        for statement in after:
            if self._has_backward(statement):
                if not _backward_statement(statement):
                    return None  # a backward inside a block: the order is not plain
                assert isinstance(statement, cst.SimpleStatementLine)
                last = statement
            seen.append(statement)
        if last is None:
            return None
        for statement in seen[: seen.index(last) + 1]:
            if self._touches(statement, optimizer):
                return None
        return last

    def _has_backward(self, statement: cst.CSTNode) -> bool:
        for node in walk(statement):
            if isinstance(node, cst.Call) and _is_backward(node, self):
                return True
        return False

    def _touches(self, statement: cst.CSTNode, optimizer: str) -> bool:
        """``statement`` names the optimizer (``opt.zero_grad()``, ``opt.step()``, ``f(opt)``)."""
        for node in walk(statement):
            if isinstance(node, cst.Name | cst.Attribute) and dotted_name(node) == optimizer:
                return True
        return False


def _is_backward(call: cst.Call, tree: LineEdits) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        return True
    name = tree.qualified(func) or dotted_name(func) or ""
    return name.endswith(("autograd.backward", "autograd.grad"))


def _backward_statement(statement: cst.CSTNode) -> bool:
    """A line that is one backward call statement (``loss.backward()``)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr | cst.Assign)
    )
