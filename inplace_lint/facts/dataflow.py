"""One pass over a parsed file that follows tensors through each function in statement order.

The pass is a small abstract interpreter. For each function (and the module body) it keeps
an environment from names to abstract values, follows branches (merging both sides) and
loops (two passes, so a write in iteration k meets a save from iteration k-1), and records
events: saves for backward, in-place writes, reads after writes, backward calls. Rules in
``inplace_lint.checks`` turn the events into findings; nothing here knows about rule codes.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.assumed_grad import AssumedGrad
from inplace_lint.facts.backward import Backward
from inplace_lint.facts.binder import Binder
from inplace_lint.facts.call_order import callers_first
from inplace_lint.facts.callables import Callables
from inplace_lint.facts.callmodes import _call_modes
from inplace_lint.facts.calls import Calls
from inplace_lint.facts.classes import (
    ClassFacts,
)
from inplace_lint.facts.dispatch import dispatching_inherited
from inplace_lint.facts.effects import attribute_writes, step_effects
from inplace_lint.facts.expressions import Expressions
from inplace_lint.facts.foreign import Foreign
from inplace_lint.facts.function_saves import FunctionSaves
from inplace_lint.facts.heuristics import (
    compiled_for_arrays,
    exempt_reason,
    runs_without_grad,
    state_update_name,
)
from inplace_lint.facts.hooks import find_backward_hooks
from inplace_lint.facts.inline import BUDGET, Inline
from inplace_lint.facts.instance_config import SavedWhen, assigned_only_by
from inplace_lint.facts.late_callers import LateCallers
from inplace_lint.facts.ledger import next_id
from inplace_lint.facts.memo import FunctionMemo
from inplace_lint.facts.model import Kind, Value
from inplace_lint.facts.module_results import ModuleResults
from inplace_lint.facts.ops import (
    OpTable,
)
from inplace_lint.facts.optimizers import Optimizers
from inplace_lint.facts.param_aliases import hands_back
from inplace_lint.facts.params import Params
from inplace_lint.facts.passed import Passed
from inplace_lint.facts.scoped_names import ScopedNames
from inplace_lint.facts.state import Context, _Scope
from inplace_lint.facts.statements import Statements
from inplace_lint.facts.steps import Steps
from inplace_lint.facts.summaries import (
    Callees,
    Mutation,
    summarize,
    tensor_writes,
)
from inplace_lint.facts.syntax import (
    _is_static,
    _mark_dirty_names,
)
from inplace_lint.facts.torch_semantics import TorchSemantics
from inplace_lint.facts.walk import (
    own_nodes,
    shared_children,
)
from inplace_lint.facts.writes import Writes
from inplace_lint.project_view import ProjectView


class Analyzer(
    Statements,
    Expressions,
    Calls,
    ModuleResults,
    ScopedNames,
    Callables,
    Optimizers,
    Inline,
    Steps,
    TorchSemantics,
    Backward,
    Writes,
    FunctionSaves,
    Passed,
    Params,
    Binder,
    Foreign,
    LateCallers,
    AssumedGrad,
):
    """Runs the dataflow pass over one module and fills a :class:`Facts`."""

    def run(self) -> ev.Facts:
        self._inline_budget = BUDGET
        self._collect_functions()
        calls: list[cst.Call] = []
        elsewhere = self.project.modes_elsewhere if self.project is not None else ()
        self.call_modes = _call_modes(self.module, self.imports, calls, self._memo, elsewhere)
        leaf_classes = frozenset(
            n for n, c in self.classes.items() if c.is_module and not c.modules
        )
        self.backward_hooks = find_backward_hooks(
            self.module, calls, self.imports, frozenset(self.classes), leaf_classes
        )
        self.facts.backward_hooks = self.backward_hooks
        self._summarize_foreign()
        self._summarize()
        self._note_sequentials(calls)
        module_ctx = Context(name="<module>", node=None)
        scope = self._run_scope(module_ctx, self.module.body, params=())
        self.globals = scope.env
        for cls in self.classes.values():
            methods = sorted(cls.methods.values(), key=lambda f: f.name.value != "__init__")
            for method in methods:
                self._run_function(method, cls)
            for method in dispatching_inherited(cls, self.classes):
                self._run_function(method, cls)  # as the subclass's: its overrides called
        for func in callers_first(self._plain):
            self._run_function(func, None)
        self._late_callers_pass()
        if self.returned_targets:
            self._module_grad_targets()
        if self.assume_grad:
            self._assumed_grad_pass(self._plain)
        self.facts.sequential_calls = self.sequential_calls
        return self.facts

    def _note_saved_inputs(self, scope: _Scope, class_name: str) -> None:
        """The forward inputs an op kept on the way to every tensor the forward returns."""
        given = scope.first_input
        if given is None or given.kind is not Kind.TENSOR:
            return
        op, own = _kept_for_every_return(scope, given)
        if op is not None:
            self.forward_saves_input[class_name] = op
            if own:
                self.own_saves.add(class_name)
        for position, name, value in scope.forward_inputs[1:]:
            op, _ = _kept_for_every_return(scope, value)
            if op is not None:  # ``DenseSAGEConv.forward(x, adj)``: ``adj @ x`` keeps adj
                self.forward_saves_inputs.setdefault(class_name, {})[(position, name)] = op

    def _module_grad_targets(self) -> None:
        """Module-level code ran before the forwards that return hazardous grad targets were
        analysed: run it again for its autograd calls only, keeping just those findings."""
        kept, self.facts = self.facts, ev.Facts()
        try:
            self._run_scope(Context(name="<module>", node=None), self.module.body, params=())
        finally:
            found, self.facts = self.facts, kept
        self.facts.grad_targets.extend(found.grad_targets)

    def _collect_functions(self) -> None:
        for node in self._defs:
            self.functions.setdefault(node.name.value, node)

    def _summarize(self) -> None:
        self._named_by: dict[str, int] = {}  # a plain name's summary: whose function's
        owners = {id(m): cls for cls in self.classes.values() for m in cls.methods.values()}
        for func in [
            *self._plain,
            *(m for cls in self.classes.values() for m in cls.methods.values()),
        ]:
            cls = owners.get(id(func))
            if cls is not None and cls.is_function:
                continue
            skip_first = cls is not None and not _is_static(func)
            effects = step_effects(func, skip_first)
            if effects:
                self.step_summaries.setdefault(func.name.value, effects)
                if cls is not None:
                    self.step_summaries[f"{cls.name}.{func.name.value}"] = effects
            if skip_first and cls is not None:
                written = attribute_writes(func, self.table)
                if written:
                    no_grad = self._context(func, cls).no_grad
                    self.attribute_summaries[f"{cls.name}.{func.name.value}"] = (written, no_grad)
            containers = self._not_tensor_params(func)
            summary = (
                summarize(func, skip_first, self.imports, self.table)
                if self._memo is None
                else self._memo.summary(func, skip_first, self.imports, self.table)
            )
            self._publish_summary(func, cls, summary, containers)
        for _ in range(_THROUGH_ROUNDS):
            if not self._summarize_through(owners):
                break

    def _publish_summary(
        self,
        func: cst.FunctionDef,
        cls: ClassFacts | None,
        summary: Sequence[Mutation],
        containers: frozenset[str],
    ) -> None:
        mutations = tensor_writes(summary, containers)
        if mutations:
            exempt = self._context(func, cls).exempt_args
            name = func.name.value
            if self._named_by.setdefault(name, id(func)) == id(func):  # the first of its name
                self.summaries[name] = (mutations, exempt)
            if cls is None:
                self.summaries_by_def[id(func)] = (mutations, exempt)
            else:
                self.summaries[f"{cls.name}.{func.name.value}"] = (mutations, exempt)

    def _summarize_through(self, owners: dict[int, ClassFacts]) -> bool:
        """One more round of summaries through calls: a function that passes its parameter
        to a same-file function writing it writes it too (``forward(batch)`` calling
        ``self.normalize(batch["ego"])``). Whether any summary grew."""
        by_name = {name: mutations for name, (mutations, _) in self.summaries.items()}
        passes = self._passes
        grew = False
        for func in [*self._plain, *(m for c in self.classes.values() for m in c.methods.values())]:
            cls = owners.get(id(func))
            if cls is not None and cls.is_function:
                continue
            if not (_calls_any(func, by_name) or _calls_any(func, passes)):
                continue
            skip_first = cls is not None and not _is_static(func)
            owner = cls.name if cls is not None else None
            callees = Callees(by_name, owner, self._method_owners, passes)
            summary = summarize(func, skip_first, self.imports, self.table, callees)
            own = f"{cls.name}.{func.name.value}" if cls is not None else func.name.value
            if len(summary) > len(by_name.get(own, ())):
                containers = self._not_tensor_params(func)
                self._publish_summary(func, cls, summary, containers)
                grew = True
        return self._summarize_inherited(by_name) or grew

    def _summarize_inherited(self, by_name: dict[str, list[Mutation]]) -> bool:
        """A method a class inherits from a same-file base that calls, through ``self``, a
        method the class overrides (``dispatch``) writes what the override writes: its
        summary as the class's (``FID()(pred, targ)``: the base's ``forward`` calls
        ``self.compute_metric``, FID's, which centres ``pred``). Whether any summary grew."""
        grew = False
        for cls in self.classes.values():
            if cls.is_function:
                continue
            for func in dispatching_inherited(cls, self.classes):
                callees = Callees(by_name, cls.name, self._method_owners, self._passes)
                summary = summarize(func, not _is_static(func), self.imports, self.table, callees)
                key = f"{cls.name}.{func.name.value}"
                mutations = tensor_writes(summary, self._not_tensor_params(func))
                if len(mutations) > len(by_name.get(key, ())):
                    self.summaries[key] = (mutations, self._context(func, cls).exempt_args)
                    grew = True
        return grew

    @functools.cached_property
    def _passes(self) -> dict[str, frozenset[int]]:
        """The same-file plain functions that may hand back one of their parameters (a
        ``_summarize_through`` round reads a name bound to their result as that argument)."""
        found = {func.name.value: hands_back(func, self.table) for func in self._plain}
        return {name: positions for name, positions in found.items() if positions}

    @functools.cached_property
    def _plain(self) -> list[cst.FunctionDef]:
        return self._plain_functions()

    def _plain_functions(self) -> list[cst.FunctionDef]:
        return [node for node in self._defs if id(node) not in self._method_ids]

    def _run_function(self, func: cst.FunctionDef, cls: ClassFacts | None) -> None:
        if compiled_for_arrays(func, self.imports):
            return  # ``@numba.njit``: NumPy arrays only
        ctx = self._context(func, cls)
        params = [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]
        scope = self._run_scope(
            ctx,
            func.body.body,
            params=params,
        )
        self._note_returned_saves(scope)
        self._note_returned_flows(scope)
        self._note_closures(func, scope)
        if cls is not None and ctx.name == "__init__":
            self._publish_init(scope, cls)
        elif cls is not None:
            # ``initialize()`` building what no other method assigns: its optimizers too
            self._publish_init(scope, cls, only=assigned_only_by(cls.node, func))
            self._publish_attributes(scope, cls)

    def _note_closures(self, func: cst.FunctionDef, scope: _Scope) -> None:
        """The modules ``func``'s names hold, for the functions it defines to read as free
        names (``def f(x): y, _ = model(x)`` inside a function given ``model``); only
        modules: a tensor a closure writes is the enclosing call's, judged there."""
        inner = [node for node in own_nodes(func) if type(node) is cst.FunctionDef]
        if not inner:
            return
        held = {
            name: modules
            for name, values in scope.env.items()
            if (modules := [v for v in values if v.kind is Kind.MODULE])
        }
        for node in inner:
            self._closure_values[id(node)] = held

    def _context(self, func: cst.FunctionDef, cls: ClassFacts | None) -> Context:
        name = func.name.value
        ctx = Context(name=name, node=func, cls=cls)
        if cls is not None and cls.is_function and name in ("forward", "backward"):
            ctx.role = f"fn_{name}"
            ctx.no_grad = True
            if name == "forward":
                ctx.mark_dirty = frozenset(_mark_dirty_names(func))
        elif cls is not None and cls.is_module and name == "forward":
            ctx.role = "forward"
        if runs_without_grad(func, self.imports, self.call_modes.get(name)):
            ctx.no_grad = True
        ctx.state_update = state_update_name(name) or (cls is not None and cls.is_optimizer)
        ctx.exempt_args = exempt_reason(func, ctx.no_grad)
        return ctx

    def _run_scope(
        self,
        ctx: Context,
        body: Sequence[cst.BaseStatement] | Sequence[cst.BaseSmallStatement],
        params: Sequence[cst.Param],
    ) -> _Scope:
        outer = self._scope
        scope = _Scope(ctx=ctx, no_grad=ctx.no_grad, start_id=next_id(), start_seq=self._next())
        self._scope = scope
        first_arg_write = len(self.facts.arg_writes)
        try:
            self._bind_params(params)
            inputs = [v for vs in scope.env.values() for v in vs]
            self._mark_flows()
            self._block(body)
            for pending, name, stored_at in scope.stored_writes:
                if not pending.done and scope.bindings.get(name) == stored_at:
                    pending.done = True  # still stored when the method returns
                    how = "the attribute keeps the tensor"
                    self.facts.stale_reads.append(
                        ev.StaleRead(pending.write, scope.stores[name], name, how, stored=True)
                    )
            self._stored_snapshots(scope)
            if ctx.role == "fn_forward":
                self._settle_function_saves(scope, inputs)
            escaped = {v.group.id for v in scope.escapes if v.kind is Kind.TENSOR}
            for event in self.facts.arg_writes[first_arg_write:]:
                if event.side_effect and event.groups & escaped:
                    event.side_effect = False  # it hands back the tensor it wrote (in a dict)
            if ctx.node is not None and scope.escapes:
                self._backward(scope.escapes, None, retain=False, what="the caller's backward")
            if ctx.cls is not None and ctx.cls.is_module and ctx.name != "__init__":
                op = _saved_for_every_return(scope)
                if op is not None:  # ``model.forward_head(x)`` returns what a ReLU kept
                    self.method_saves_output[(ctx.cls.name, ctx.name)] = op
                positions = _saved_per_position(scope)
                if positions is not None:  # ``return attn_h, attn``: the softmax kept ``attn``
                    self.method_saves_positions[(ctx.cls.name, ctx.name)] = positions
                when = _saved_when(scope, self._branch_tests) if op is None else None
                if when is not None:  # ``if self.relued: x = self.relu(x)``
                    self.method_saves_output_when[(ctx.cls.name, ctx.name)] = when
            if ctx.role == "forward" and ctx.cls is not None:
                self._note_saved_inputs(scope, ctx.cls.name)
        finally:
            self._scope = outer
        return scope


#: rounds of summaries through calls after the first: writes seen through this many
#: levels of same-file helpers
_THROUGH_ROUNDS = 3


def _calls_any(func: cst.FunctionDef, names: Mapping[str, object]) -> bool:
    """Whether ``func`` calls a function (or ``self`` method) of one of these names."""
    for node in own_nodes(func):
        if type(node) is cst.Call:
            callee = node.func
            if type(callee) is cst.Name and callee.value in names:
                return True
            if type(callee) is cst.Attribute and callee.attr.value in names:
                return True
    return False


def _saved_for_every_return(scope: _Scope) -> str | None:
    """The op that saved every tensor the function may return, on the way to that return
    (``if self.act: x = self.relu_(x)`` saves on one arm only), or None."""
    saved_by = [
        _saved_on_path(value, path)
        for path, values in scope.returned_at
        for value in values
        if value.kind is Kind.TENSOR
    ]
    return saved_by[0][0] if saved_by and all(saved_by) else None


def _saved_per_position(scope: _Scope) -> list[str | None] | None:
    """Position by position of the tuple every ``return`` gives (one length), the op that
    saved what each ``return`` gives there as its output on the way to it; None when no
    position has one."""
    positions = scope.returned_positions()
    if positions is None or len(scope.returns) != len(scope.returned_at):
        return None
    ops = [_saved_at(scope, position) for position in range(len(positions))]
    return ops if any(ops) else None


def _saved_at(scope: _Scope, position: int) -> str | None:
    """The op that saved as its output what every ``return`` gives at ``position``."""
    ops: list[str] = []
    for shape, (path, _) in zip(scope.returns, scope.returned_at, strict=True):
        values = shape[position] if shape is not None else []
        saved = [_saved_on_path(v, path) for v in values if v.kind is Kind.TENSOR]
        if not saved or not all(saved):
            return None
        ops.append(saved[0][0])
    return ops[0]


def _saved_when(scope: _Scope, tests: dict[int, cst.BaseExpression]) -> SavedWhen | None:
    """The op that saved what every ``return`` hands back when the ``if`` tests on the way to
    the save take its arm (``if self.relued: x = self.relu(x)``), with those tests; None
    when some return holds no such value, or also a value made after it (a later arm's)."""
    op, needed = None, {}
    for path, values in scope.returned_at:
        tensors = [v for v in values if v.kind is Kind.TENSOR]
        guarded = [
            (value, record, record.path[_common(record.path, path) :])
            for value in tensors
            for record in value.hist
            if record.role == "result" and record.group is value.group
        ]
        guarded = [g for g in guarded if all(branch in tests for branch, _ in g[2])]
        if not guarded:
            return None
        value, record, arms = max(guarded, key=lambda g: g[0].id)
        if any(v.id > value.id for v in tensors):
            return None
        op = op or record.op
        for branch, arm in arms:
            if needed.get(branch, arm == 0) != (arm == 0):
                return None
            needed[branch] = arm == 0
    if op is None or not needed:
        return None
    return op, tuple((tests[branch], arm) for branch, arm in needed.items())


def _common(a: tuple[tuple[int, int], ...], b: tuple[tuple[int, int], ...]) -> int:
    """The length of the longest common prefix of two paths."""
    size = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        size += 1
    return size


def _kept_for_every_return(scope: _Scope, given: Value) -> tuple[str | None, bool]:
    """The op that saved the input ``given`` on the way to every tensor the function
    returns (the first one found), or None; and whether on some way only ops that keep it
    for its own gradient did (``pad(x)`` before a conv: no graph when ``x`` needs none)."""
    if given.kind is not Kind.TENSOR:
        return None, False
    saved_in = [
        [r for r in value.hist if r.group is given.group and r.role == "input"]
        for _, values in scope.returned_at
        for value in values
        if value.kind is Kind.TENSOR
    ]
    if not saved_in or not all(saved_in):
        return None, False
    return saved_in[0][0].op, any(all(r.own for r in records) for records in saved_in)


def _saved_on_path(value: Value, path: tuple[tuple[int, int], ...]) -> list[str]:
    """The ops that saved ``value`` as their output on every way to a ``return`` at
    ``path``: a save made inside an arm counts only for returns inside that arm."""
    return [
        r.op
        for r in value.hist
        if r.role == "result" and r.group is value.group and path[: len(r.path)] == r.path
    ]


def analyze(
    module: cst.Module,
    table: OpTable | None = None,
    memo: FunctionMemo | None = None,
    project: ProjectView | None = None,
    assume_grad: bool = False,
) -> ev.Facts:
    """Run the dataflow pass over ``module`` (``memo``: per-function facts kept between
    versions of one document; ``project``: what the other files of the run say;
    ``assume_grad``: the opt-in pass of ``assumed_grad.py``)."""
    with shared_children():
        analyzer = Analyzer(module, table, memo, project)
        analyzer.assume_grad = assume_grad
        return analyzer.run()
