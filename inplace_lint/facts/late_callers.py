"""Methods of plain classes run again with what their later callers pass.

A plain class's methods (not a module's, not an ``autograd.Function``'s) are analysed before
the file's plain functions, so a parameter is bound before any call from those functions is
seen: it may or may not require grad, and an op saves nothing for a graph not known to need
grad. ``mitigator(embeddings, direction)`` in ``main`` passing a tensor that requires grad to
``LinearBiasMitigator.__call__``, whose ``direction /= torch.linalg.norm(direction)`` then
overwrites what ``norm`` saved, is found only when the method is read with that fact.

A module's methods bind their tensor parameters as requiring grad, by assumption
(``Value.grad_assumed``): an op keeps a tensor for such a parameter's gradient only once a
call is seen passing one known to need grad, which a later method's call may show
(``forward`` passing ``key_fc``'s output to ``self._query``).

After the plain functions, each such method that some call passed a tensor requiring grad
(``arg_grads``, keyed ``Class.method``; for a module's method, ``arg_certain``) is run once
more in a scratch ``Facts``
(``AssumedGrad._scratch_run``; its parameters bind the recorded grads, as a plain function's
do), and its new saved-for-backward overwrites are kept. Limits: only those overwrites (what
the first run found stays as it was); calls through an instance of unknown class reach a
method only where one plain class defines that name (``_owned_method_writes``).
"""

from __future__ import annotations

from inplace_lint.facts.assumed_grad import writes_after_calls
from inplace_lint.facts.state import AnalyzerBase


class LateCallers(AnalyzerBase):
    """The late-callers room of the interpreter (see the module docstring)."""

    def _late_callers_pass(self) -> None:
        """Run again each plain-class method a call passed a tensor requiring grad."""
        reported = {id(e.write.node) for e in self.facts.saved_overwrites}
        for cls in list(self.classes.values()):
            if cls.is_function or cls.is_optimizer:
                continue
            for name, method in cls.methods.items():
                key = f"{cls.name}.{name}"
                if cls.is_module:  # bound with grad already: run again where the grad of a
                    # parameter was assumed and a later call passes one known to need it
                    passed = any(self.arg_certain.get(key, {}).values())
                else:
                    passed = 2 in self.arg_grads.get(key, {}).values()
                if name == "__init__" or not passed:
                    continue
                if not writes_after_calls(method, self.table):
                    continue
                for event in self._scratch_run(method, cls).saved_overwrites:
                    if id(event.write.node) not in reported:
                        reported.add(id(event.write.node))
                        self.facts.saved_overwrites.append(event)
