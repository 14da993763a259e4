"""Opt-in: hazards of a function no caller in the run is seen calling, certain if its
tensor inputs require grad (``--assume-grad``, ``assume-grad = true``).

A plain function's tensor parameters may or may not require grad, and the ordinary pass
saves nothing for a graph not known to need grad, so ``y = x.reciprocal(); y.clamp_(max=m)``
in a helper no one here calls is silent. This room analyses each such function once more
with those parameters taken to require grad, in a scratch ``Facts``, and keeps only the new
saved-for-backward overwrites (IPL001): they hold whenever a caller passes a tensor that
requires grad, which their message says, naming the parameters any one of which makes the
write a hazard (each assumed alone; all of them when only their combination does).
Parameters known to carry no grad (an integer-like name, a caller passing a tensor without
grad) are not assumed. A function whose name
appears anywhere else in the file (called, passed on, stored), or that another file of the
run calls (project mode), is left to what its callers say. Limits: plain top-level functions
(a module's methods already take their inputs to require grad); what the assumption changes
elsewhere (stale reads, leaf writes) is not reported.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.classes import ClassFacts
from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.state import AnalyzerBase
from inplace_lint.facts.summaries import may_write
from inplace_lint.facts.walk import nodes_by_type, own_nodes


class AssumedGrad(AnalyzerBase):
    """The assumed-grad room of the interpreter (see the module docstring)."""

    #: whether to run the pass at all (``analyze(assume_grad=True)``)
    assume_grad: bool = False
    #: the function being analysed with its maybe-grad tensor parameters taken to need grad
    _assuming: cst.FunctionDef | None = None
    #: the names of the parameters assumed in that run
    _assumed: list[str]
    #: the one parameter assumed, when a run tells which parameter a write needs
    _assume_only: str | None = None

    def _assumed_grad_pass(self, functions: list[cst.FunctionDef]) -> None:
        """Run each uncalled function with a write and a call again, assuming grad."""
        reported = {id(e.write.node) for e in self.facts.saved_overwrites}
        named = Counter(n.value for n in nodes_by_type(self.module).get(cst.Name, ()))  # type: ignore[attr-defined]
        for func in functions:
            name = func.name.value
            called = named[name] > 1 or name in self.facts.called
            if called or not writes_after_calls(func, self.table):
                continue  # called or passed on here (a kernel handed to a backward): not ours
            found, names = self._assumed_run(func, None)
            new = [
                e
                for e in found.saved_overwrites
                if id(e.write.node) not in reported and e.write.via_call is None and names
            ]
            needs = self._needed_parameters(func, names, new)
            for event in new:
                node = event.write.node
                if id(node) in reported:
                    continue
                reported.add(id(node))
                self.facts.saved_overwrites.append(event)
                self.facts.assumed_grad[id(node)] = needs.get(id(node)) or names

    def _assumed_run(
        self, func: cst.FunctionDef, only: str | None
    ) -> tuple[ev.Facts, tuple[str, ...]]:
        """Run ``func`` in a scratch ``Facts`` with its maybe-grad tensor parameters (or only
        the one named ``only``) taken to need grad; the facts and the names assumed."""
        self._assuming, self._assumed, self._assume_only = func, [], only
        try:
            found = self._scratch_run(func, None)
        finally:
            self._assuming = None
        return found, tuple(dict.fromkeys(self._assumed))

    def _scratch_run(self, func: cst.FunctionDef, cls: ClassFacts | None) -> ev.Facts:
        """Run ``func`` (a method of ``cls``, or a plain function) once more in a scratch
        ``Facts``: what that run finds, kept apart from the file's own facts."""
        kept, self.facts = self.facts, ev.Facts()
        try:
            self._run_function(func, cls)
        finally:
            found, self.facts = self.facts, kept
        return found

    def _needed_parameters(
        self, func: cst.FunctionDef, names: tuple[str, ...], events: list[ev.SavedOverwrite]
    ) -> dict[int, tuple[str, ...]]:
        """For each write, the parameters one of which alone makes it a hazard (the message
        names those: ``if `conformer` requires grad``, not every tensor parameter); none for
        a write only their combination makes one."""
        if len(names) < 2 or not events:
            return {}
        wanted = {id(e.write.node) for e in events}
        needs: dict[int, list[str]] = {}
        for name in names:
            found, _ = self._assumed_run(func, name)
            for event in found.saved_overwrites:
                if id(event.write.node) in wanted:
                    needs.setdefault(id(event.write.node), []).append(name)
        return {node: tuple(dict.fromkeys(n)) for node, n in needs.items()}

    def _assume_grad(self, name: str, value: Value) -> None:
        """In the assumed run, a maybe-grad tensor parameter of that function needs grad."""
        if (
            self._assuming is not None
            and self.scope.ctx.node is self._assuming
            and value.kind is Kind.TENSOR
            and value.grad == 1
            and self._assume_only in (None, name)
        ):
            value.grad = 2
            self._assumed.append(name)


def writes_after_calls(func: cst.FunctionDef, table: OpTable) -> bool:
    """A cheap screen: the body calls something (an op that may save) and may write in place
    (the summaries' own screen of writes)."""
    nodes = own_nodes(func)
    return any(type(n) is cst.Call for n in nodes) and may_write(nodes, table)
