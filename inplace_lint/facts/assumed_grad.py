"""Opt-in: hazards of a function no caller in the run is seen calling, certain if its
tensor inputs require grad (``--assume-grad``, ``assume-grad = true``).

A plain function's tensor parameters may or may not require grad, and the ordinary pass
saves nothing for a graph not known to need grad, so ``y = x.reciprocal(); y.clamp_(max=m)``
in a helper no one here calls is silent. This room analyses each such function once more
with those parameters taken to require grad, in a scratch ``Facts``, and keeps only the new
saved-for-backward overwrites (IPL001): they hold whenever a caller passes a tensor that
requires grad, which their message says. Parameters known to carry no grad (an integer-like
name, a caller passing a tensor without grad) are not assumed. A function whose name
appears anywhere else in the file (called, passed on, stored), or that another file of the
run calls (project mode), is left to what its callers say. Limits: plain top-level functions
(a module's methods already take their inputs to require grad); what the assumption changes
elsewhere (stale reads, leaf writes) is not reported.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.summaries import may_write
from inplace_lint.facts.walk import own_nodes, walk


class AssumedGrad(AnalyzerBase):
    """The assumed-grad room of the interpreter (see the module docstring)."""

    #: whether to run the pass at all (``analyze(assume_grad=True)``)
    assume_grad: bool = False
    #: the function being analysed with its maybe-grad tensor parameters taken to need grad
    _assuming: cst.FunctionDef | None = None
    #: the names of the parameters assumed in that run
    _assumed: list[str]

    def _assumed_grad_pass(self, functions: list[cst.FunctionDef]) -> None:
        """Run each uncalled function with a write and a call again, assuming grad."""
        reported = {id(e.write.node) for e in self.facts.saved_overwrites}
        named = Counter(n.value for n in walk(self.module) if type(n) is cst.Name)
        for func in functions:
            name = func.name.value
            called = named[name] > 1 or name in self.facts.called
            if called or not _writes_after_calls(func, self.table):
                continue  # called or passed on here (a kernel handed to a backward): not ours
            kept, self.facts = self.facts, ev.Facts()
            self._assuming, self._assumed = func, []
            try:
                self._run_function(func, None)
            finally:
                found, self.facts, self._assuming = self.facts, kept, None
            names = tuple(dict.fromkeys(self._assumed))
            for event in found.saved_overwrites:
                node = event.write.node
                if id(node) in reported or event.write.via_call is not None or not names:
                    continue
                reported.add(id(node))
                kept.saved_overwrites.append(event)
                kept.assumed_grad[id(node)] = names

    def _assume_grad(self, name: str, value: Value) -> None:
        """In the assumed run, a maybe-grad tensor parameter of that function needs grad."""
        if (
            self._assuming is not None
            and self.scope.ctx.node is self._assuming
            and value.kind is Kind.TENSOR
            and value.grad == 1
        ):
            value.grad = 2
            self._assumed.append(name)


def _writes_after_calls(func: cst.FunctionDef, table: OpTable) -> bool:
    """A cheap screen: the body calls something (an op that may save) and may write in place
    (the summaries' own screen of writes)."""
    nodes = own_nodes(func)
    return any(type(n) is cst.Call for n in nodes) and may_write(nodes, table)
