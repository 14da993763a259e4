"""Methods of plain classes run again with what their later callers pass.

A plain class's methods (not a module's, not an ``autograd.Function``'s) are analysed before
the file's plain functions, so a parameter is bound before any call from those functions is
seen: it may or may not require grad, and an op saves nothing for a graph not known to need
grad. ``mitigator(embeddings, direction)`` in ``main`` passing a tensor that requires grad to
``LinearBiasMitigator.__call__``, whose ``direction /= torch.linalg.norm(direction)`` then
overwrites what ``norm`` saved, is found only when the method is read with that fact. Code
outside the class may also make an attribute require grad (``system.positions.requires_grad_(
True)`` before ``system.wrap_positions()``, ``instance_grads``): the class's methods then
read that attribute as a leaf that requires grad.

A module's methods bind their tensor parameters as requiring grad, by assumption
(``Value.grad_assumed``): an op keeps a tensor for such a parameter's gradient only once a
call is seen passing one known to need grad, which a later method's call may show
(``forward`` passing ``key_fc``'s output to ``self._query``).

After the plain functions, each such method that some call passed a tensor requiring grad
(``arg_grads``, keyed ``Class.method``; for a module's method, ``arg_certain``), or whose
class has such an attribute, is run once
more in a scratch ``Facts`` (in rounds: such a run may record a call to another method of its
class that now qualifies)
(``AssumedGrad._scratch_run``; its parameters bind the recorded grads, as a plain function's
do), and its new saved-for-backward overwrites and writes to the views of a multi-view op
(``pad_img.copy_(img)`` over a row of a batch, with ``img`` requiring grad) are kept.
Limits: only those (what the first run found stays as it was); calls through an instance
of unknown class reach a method only where one plain class defines that name
(``_owned_method_writes``).
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.assumed_grad import writes_after_calls
from inplace_lint.facts.classes import ClassFacts
from inplace_lint.facts.state import AnalyzerBase


class LateCallers(AnalyzerBase):
    """The late-callers room of the interpreter (see the module docstring)."""

    def _late_callers_pass(self) -> None:
        """Run again each plain-class method a call passed a tensor requiring grad; a run
        may show a method of the class it calls such a call (``forward`` passing the images
        it was given to ``self.batch_images``), so up to three rounds, each method once."""
        reported = {id(e.write.node) for e in self.facts.saved_overwrites}
        reported |= {id(e.write.node) for e in self.facts.multi_view_writes}
        done: set[int] = set()
        for _ in range(3):
            due = [
                (cls, method)
                for cls in list(self.classes.values())
                if not (cls.is_function or cls.is_optimizer)
                for name, method in cls.methods.items()
                if id(method) not in done and self._called_late(cls, name, method)
            ]
            if not due:
                return
            for cls, method in due:
                done.add(id(method))
                self._keep_late_events(self._scratch_run(method, cls), reported)

    def _called_late(self, cls: ClassFacts, name: str, method: cst.FunctionDef) -> bool:
        """Whether a later call (or code outside the class) gives ``cls.name`` a grad its
        first run did not see."""
        key = f"{cls.name}.{name}"
        if cls.is_module:  # bound with grad already: run again where the grad of a
            # parameter was assumed and a later call passes one known to need it
            passed = any(self.arg_certain.get(key, {}).values())
        else:  # or code outside made an attribute its methods read require grad
            passed = 2 in self.arg_grads.get(key, {}).values()
            passed = passed or bool(self.instance_grads.get(cls.name))
        return name != "__init__" and passed and writes_after_calls(method, self.table)

    def _keep_late_events(self, scratch: ev.Facts, reported: set[int]) -> None:
        """The saved overwrites and refused multi-view writes a late run found anew."""
        for event in scratch.saved_overwrites:
            if id(event.write.node) not in reported:
                reported.add(id(event.write.node))
                self.facts.saved_overwrites.append(event)
        for refused in scratch.multi_view_writes:
            if id(refused.write.node) not in reported:
                reported.add(id(refused.write.node))
                self.facts.multi_view_writes.append(refused)
