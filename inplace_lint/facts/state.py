"""The interpreter's state and the helpers every room shares.

:class:`AnalyzerBase` holds what one run over a module knows (the current scope, the sequence
clock, the per-file tables) and the small value constructors. The rooms (binder, statements,
expressions, calls, torch semantics, backward, writes) are mixins over it, assembled into
:class:`~inplace_lint.facts.dataflow.Analyzer`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.classes import (
    ClassFacts,
    ModuleResolver,
    collect_attributes,
    collect_classes,
    given_parameters,
    inherit_attributes,
)
from inplace_lint.facts.conditions import Key
from inplace_lint.facts.constructed import (
    attribute_stores,
    constructed_arguments,
    constructed_modules,
    constructed_strings,
    given_values,
)
from inplace_lint.facts.effects import AttributeWrite, Effect
from inplace_lint.facts.fixed_lists import fixed_lists
from inplace_lint.facts.grown_lists import Leads, Pairs, grown
from inplace_lint.facts.hooks import BackwardHooks
from inplace_lint.facts.instance_config import SavedWhen
from inplace_lint.facts.ledger import Pending as _Pending
from inplace_lint.facts.ledger import next_id
from inplace_lint.facts.memo import FunctionMemo
from inplace_lint.facts.model import (
    ELEMENT_ORIGIN,
    Group,
    Kind,
    ModuleSpec,
    SaveRecord,
    Value,
    Write,
    new_value,
)
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.once_arms import loop_bound_names
from inplace_lint.facts.ops import (
    OpTable,
    load_table,
)
from inplace_lint.facts.summaries import (
    Mutation,
)
from inplace_lint.facts.syntax import _tensor_names, bound_names, foreign_names, variable_index
from inplace_lint.facts.type_tests import container_predicates
from inplace_lint.facts.walk import (
    is_expression,
    own_nodes,
    walk,
)
from inplace_lint.project_view import ProjectView

_T = TypeVar("_T")

if TYPE_CHECKING:
    from inplace_lint.facts.function_saves import SavedByForward


@dataclass
class _LoopFrame:
    """A loop being analysed: its counters (names that differ in every iteration)."""

    key: int
    counters: frozenset[str]
    started: int  # the sequence number at which the current pass began
    body: Sequence[cst.CSTNode] = ()
    #: what arms that ``continue`` put into containers: (container, element, when), seen by
    #: the next iteration and after the loop, not by the rest of this one
    deferred: list[tuple[Value, Value, int]] = field(default_factory=list)
    #: the container elements the loop target holds (``for t in tensors``): the storage
    #: group id of each -> the container's id
    elements: dict[int, int] = field(default_factory=dict)
    #: the loop statement (a ``for``), whose nodes ``nodes`` lists
    statement: cst.CSTNode | None = None

    @functools.cached_property
    def bound(self) -> frozenset[str]:
        """The names the body binds (what a once-only test, or an index trusted across
        iterations, may not mention), read on first use only."""
        return loop_bound_names(self.body)

    @functools.cached_property
    def nodes(self) -> frozenset[int]:
        """The ids of the loop statement's nodes, header and body, read on first use only
        (a write into an element the loop took from a list)."""
        return frozenset(map(id, walk(self.statement))) if self.statement else frozenset()


@dataclass
class Context:
    """The function being analysed."""

    name: str
    node: cst.FunctionDef | None
    cls: ClassFacts | None = None
    role: str = ""  # "fn_forward", "fn_backward", "forward" or ""
    no_grad: bool = False
    state_update: bool = False  # an optimizer step, EMA or buffer update by its name
    exempt_args: str = ""
    mark_dirty: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ItemStore:
    """What ``xs[j] = v`` stored at a variable index (``_Scope.item_stores``)."""

    values: tuple[Value, ...]
    names: frozenset[str]
    seq: int
    path: tuple[tuple[int, int], ...]
    count: int


@dataclass
class _Scope:
    ctx: Context
    env: dict[str, list[Value]] = field(default_factory=dict)
    bindings: dict[str, int] = field(default_factory=dict)
    bound_inplace: dict[str, Write] = field(default_factory=dict)
    stale: list[_Pending] = field(default_factory=list)
    hidden: list[_Pending] = field(default_factory=list)
    #: optimizer steps: meant to be seen by every alias of the parameters, except a
    #: ``state_dict()`` kept as a snapshot
    updates: list[_Pending] = field(default_factory=list)
    escapes: list[Value] = field(default_factory=list)
    #: what the ``return`` statements give, as given (a list stays a list)
    returned: list[Value] = field(default_factory=list)
    #: each ``return``'s tensors, with the (branch, arm) path it sits on
    returned_at: list[tuple[tuple[tuple[int, int], ...], list[Value]]] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    #: saves that a backward point of this function reached, kept or not (retain_graph)
    differentiated: set[int] = field(default_factory=set)
    no_grad: bool = False
    stmt: cst.CSTNode | None = None
    callables: dict[str, Group] = field(default_factory=dict)
    pending_by_node: dict[int, list[_Pending]] = field(default_factory=dict)
    #: in a custom Function's forward: writes to inputs it marks dirty, (write, name, value)
    dirty_writes: list[tuple[Write, str, Value]] = field(default_factory=list)
    #: a helper call's writes to uninitialized storage, by call node and storage groups:
    #: they all fill it
    call_fills: dict[tuple[int, frozenset[int]], bool] = field(default_factory=dict)
    backward_seen: bool = False
    #: name -> {value id: the branch arms through which that value reached the name}
    arms: dict[str, dict[int, tuple[tuple[int, int], ...]]] = field(default_factory=dict)
    #: ``self.attr`` -> the target node of its latest assignment in this function
    stores: dict[str, cst.CSTNode] = field(default_factory=dict)
    #: writes to a tensor that an earlier ``self.attr = ...`` of this function keeps
    stored_writes: list[tuple[_Pending, str, int]] = field(default_factory=list)
    #: flow mark id -> the parameter it marks (plain functions)
    flow_marks: dict[int, str] = field(default_factory=dict)
    #: per ``return``: the values at each position of the tuple it returns, else None
    returns: list[list[list[Value]] | None] = field(default_factory=list)
    #: name -> (its binding, the groups it holds only as a stand-in for another tensor)
    stand_ins: dict[str, tuple[int, frozenset[int]]] = field(default_factory=dict)
    #: the first value id and write sequence number of this function's own analysis: saves
    #: made earlier belong to graphs it was handed (attributes other methods stored)
    start_id: int = 0
    start_seq: int = 0
    #: a module's ``forward``: the value bound to its first input
    first_input: Value | None = None
    #: a forward's parameters after ``self``: (position, name, value as bound)
    forward_inputs: list[tuple[int, str, Value]] = field(default_factory=list)
    #: (container id, index text) -> what ``xs[j] = v`` with a variable index stored: (the
    #: values, the names the index reads, the store's sequence number, the branch path, the
    #: container's element count then), for a read of ``xs[j]`` right after it
    item_stores: dict[tuple[int, str], ItemStore] = field(default_factory=dict)

    def returned_positions(self) -> list[list[Value]] | None:
        """The values at each position of the tuple returned, when every ``return`` gives
        a tuple of one length; else None."""
        sizes = {len(shape) if shape is not None else -1 for shape in self.returns}
        if not self.returns or len(sizes) != 1 or -1 in sizes:
            return None
        return [
            [v for shape in self.returns if shape is not None for v in shape[position]]
            for position in range(sizes.pop())
        ]


_MAX_TWICE_DEPTH = 2


class Mode:
    """A nesting counter raised for the extent of a ``with`` block (like mypy's
    ``frame_context``): ``with self._meta:`` or ``with self._meta.raised(flag):``."""

    __slots__ = ("depth",)

    def __init__(self) -> None:
        self.depth = 0

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1

    def raised(self, flag: bool) -> Mode | contextlib.nullcontext[None]:
        """This counter raised while ``flag`` holds; a block that changes nothing otherwise."""
        return self if flag else _UNCHANGED

    def take(self) -> int:
        """The depth, which is then cleared: the one read it was raised for consumed it. The
        enclosing block still lowers it on exit, so it can go below zero until the next
        take (kept as the interpreter has always done; see docs/architecture.md)."""
        depth, self.depth = self.depth, 0
        return depth


_UNCHANGED: contextlib.nullcontext[None] = contextlib.nullcontext()


def _builders(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The module-level functions, by name: those that return a module build one."""
    return {n.name.value: n for n in module.body if isinstance(n, cst.FunctionDef)}


def _method_ids(classes: dict[str, ClassFacts]) -> frozenset[int]:
    """The ids of the functions that are methods of a class of this file."""
    return frozenset(id(m) for cls in classes.values() for m in cls.methods.values())


class AnalyzerBase:
    """State and shared helpers of one dataflow run; the rooms are mixins over it."""

    def __init__(
        self,
        module: cst.Module,
        table: OpTable | None = None,
        memo: FunctionMemo | None = None,
        project: ProjectView | None = None,
    ) -> None:
        self.module, self.project = module, project
        self.table = table or load_table()
        self._memo = memo
        # one walk over the statements (not into expressions) finds imports, classes, defs
        statements = list(walk(module, skip=is_expression))
        self._defs = [n for n in statements if type(n) is cst.FunctionDef]
        self.imports = ImportTable.from_statements(statements)
        if memo is not None:
            memo.start(self.imports, self.table, self._defs, module.body)
        self.classes = collect_classes(statements, self.imports, self.table)
        self._method_ids = _method_ids(self.classes)
        self._containers_of: dict[int, frozenset[str]] = {}
        #: per function (by id): the names it binds, which Python makes local to it
        self._function_locals: dict[int, dict[str, int]] = {}
        self._members: dict[int, list[Value]] = {}
        self._grad_params: dict[int, dict[str, int]] = {}
        #: enclosing loops: [id, names counting distinct iterations, seq the pass started at]
        self._loops: list[_LoopFrame] = []
        #: per arm being analysed: what it appended to containers (container, element)
        self._arm_appends: list[list[tuple[Value, Value]]] = []
        self._function_views: dict[str, bool] = {}  # Function class -> forward gives a view
        self._start_read_marks()
        self.resolver = ModuleResolver(self.imports, self.table, self.classes, _builders(module))
        self._derived_tables()
        self._collect_attributes()
        self.facts = ev.Facts()
        #: full backward hook registrations (filled by ``Analyzer.run``)
        self.backward_hooks = BackwardHooks([])
        self.functions: dict[str, cst.FunctionDef] = {}
        self.class_values: dict[tuple[str, str], Value] = {}
        self.globals: dict[str, list[Value]] = {}
        self._seq = itertools.count(1)
        self._scope: _Scope | None = None
        self._start_modes()
        self._start_kept_graphs()
        self._start_function_facts()
        self._path: list[tuple[int, int]] = []
        self._inplace_results: dict[int, Write] = {}
        self.summaries: dict[str, tuple[list[Mutation], str]] = {}
        self.call_modes: dict[str, set[bool]] = {}
        #: function name -> argument position or keyword -> strongest grad a caller passed
        self.arg_grads: dict[str, dict[int | str, int]] = {}
        #: function name -> argument position or keyword -> the same-file module every call
        #: analysed so far passed there (None once some call passed anything else)
        self.arg_modules: dict[str, dict[int | str, ModuleSpec | None]] = {}
        #: id of an nn.Sequential constructor -> grad modes it was called in (True: enabled)
        self.sequential_calls: dict[int, set[bool]] = {}
        #: (module class, method) -> the op that saved every tensor the method returns, on
        #: the way to that return (``forward``, or ``forward_head``)
        self.method_saves_output: dict[tuple[str, str], str] = {}
        #: module class -> (tuple length, position -> the write that makes differentiating
        #: against that returned tensor wrong)
        self.returned_targets: dict[str, tuple[int, dict[int, tuple[Write, str]]]] = {}
        #: function name -> the backward points and optimizer steps it takes on parameters
        self.step_summaries: dict[str, list[Effect]] = {}
        #: "Class.method" -> its in-place writes to attributes of ``self``, with whether it
        #: runs without grad
        self.attribute_summaries: dict[str, tuple[list[AttributeWrite], bool]] = {}
        #: id of a plain function -> (the parameters its results come from, those marked)
        self.returned_flows: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
        #: (owner group id, attribute) -> the submodule ``owner.attribute``
        self._submodules: dict[tuple[int, str], Value] = {}
        #: (owner group id, attribute) -> the storage of the parameter ``owner.attribute``
        self._owned_groups: dict[tuple[int, str], Group] = {}
        #: plain functions whose result a call is computing in a sandbox, innermost last
        #: (``inline.py``): no write moves a version counter while one runs
        self._inlining: list[int] = []
        #: in a sandbox of ``module(x)``'s forward: the module ``self`` is
        self._sandbox_owner: Value | None = None
        #: id of a plain function -> its size, if a sandbox may interpret it
        self._inlinable_: dict[int, int | None] = {}
        #: statements the sandboxes may still interpret (``inline.BUDGET`` at the start)
        self._inline_budget = 0

    def _start_read_marks(self) -> None:
        """What the analysis learns of single expressions as it meets them."""
        #: id of a name node -> the subscript it is the base of (``x`` in ``x[i]``)
        self._subscript_of: dict[int, cst.Subscript] = {}
        #: ids of expressions read by softmax, exp or sigmoid (``vanishing``)
        self._vanishing_reads: set[int] = set()
        #: ids of expressions read only through ``.data`` or ``.detach()``: no graph use
        self._untracked_reads: set[int] = set()
        #: ids of expressions a call overwrites whole (``x.copy_(y)``, ``out=x``): no read
        self._overwriting_reads: set[int] = set()
        #: ids of expressions that are the receiver of an in-place method (``x`` of ``x.mul_``)
        self._updating_reads: set[int] = set()
        #: ids of names a ``return`` hands back whole (``return acc``)
        self._handed_back: set[int] = set()
        #: groups of parameters called like functions, taken for models (``_guessed_model``)
        self._guessed_groups: set[int] = set()

    def _start_function_facts(self) -> None:
        #: nested function (by id) -> the modules its enclosing function's names hold at
        #: the end of that function, which the nested one reads as free names (a closure)
        self._closure_values: dict[int, dict[str, list[Value]]] = {}
        #: same-file plain class -> attributes that code outside it makes require grad
        #: (``system.positions.requires_grad_(True)``): its methods read them as such
        self.instance_grads: dict[str, set[str]] = {}
        #: (fact, id of a function or module) -> what ``_source_fact`` read from its source
        self._source_facts: dict[tuple[str, int], Any] = {}
        #: autograd.Function class -> what its forward saved (``function_saves``)
        self.function_saves: dict[str, SavedByForward] = {}
        #: function name -> argument position or keyword -> the same-file function every call
        #: analysed so far passed there (``train(g, d, loss_fn=loss_nonsaturating)``)
        self.arg_functions: dict[str, dict[int | str, str | None]] = {}
        #: per callee and key: every call passes a function that runs no model there (such a
        #: lambda, a closure a same-file function made, a torch function; ``Passed.PLAIN``)
        self.arg_plain: dict[str, dict[int | str, bool | None]] = {}
        #: per callee and key: the same-file plain class every call passes an instance of
        self.arg_instances: dict[str, dict[int | str, str | None]] = {}
        #: function name -> argument position or keyword of an optimizer -> the positions or
        #: keywords of the modules, passed beside it, whose parameters it updates
        self.arg_optimizers: dict[str, dict[int | str, frozenset[int | str] | None]] = {}
        #: function name -> argument position or keyword -> every call seen passes a tensor
        #: known to be one there (not a value that may be a Python number)
        self.arg_sure: dict[str, dict[int | str, bool]] = {}
        #: function name -> argument position or keyword -> some call passes a tensor that
        #: requires grad by more than assumption (``Value.grad_assumed``)
        self.arg_certain: dict[str, dict[int | str, bool]] = {}

    def _start_kept_graphs(self) -> None:
        #: (class, attribute) -> the tensors a method left there, carrying saves (a graph
        #: another method may differentiate: ``self.fake = self.netG(x)`` in ``forward``)
        self.attribute_values: dict[tuple[str, str], list[Value]] = {}
        #: (class, method) -> the backward points it takes over graphs it was handed: the
        #: saves reached, and whether the graph is retained
        self.method_backwards: dict[tuple[str, str], list[tuple[frozenset[SaveRecord], bool]]] = {}
        #: module class -> the op whose save of its forward's first input every return
        #: depends on (``Postnet``'s first conv): a call saves the tensor it is given
        self.forward_saves_input: dict[str, str] = {}
        #: classes whose forward keeps its input only when that input requires grad
        self.own_saves: set[str] = set()
        #: (module class, method) -> the op that saved what the method returns when every
        #: ``if`` test listed takes its arm (``if self.relued: x = self.relu(x)``), with
        #: the arm each needs (True: the body); ``instance_config`` decides them per instance
        self.method_saves_output_when: dict[tuple[str, str], SavedWhen] = {}
        #: (class, method) -> per position of its tuple result, the op that saved the value
        #: every ``return`` gives there as its output (``return attn_h, attn``), or None
        self.method_saves_positions: dict[tuple[str, str], list[str | None]] = {}
        #: module class -> (position, name) of a forward parameter -> the op whose save of it
        #: every return depends on: a call saves the tensor it passes there
        self.forward_saves_inputs: dict[str, dict[tuple[int, str], str]] = {}
        #: (class, method) -> the saves of module parameters its result carries, one set
        #: per position of the tuple it returns (one set when it does not return a tuple)
        self.returned_saves: dict[tuple[str, str], list[list[SaveRecord]]] = {}

    def _collect_attributes(self) -> None:
        """What each class's methods store on ``self``, with what its constructions give
        ``__init__`` (``constructed``); the module classes another file ships (project mode)."""
        if self.project is not None:
            shipped = {f.local for f in self.project.foreign if f.kind == "class"}
            self.resolver.foreign_modules = frozenset(shipped - self.classes.keys())
        given = constructed_arguments(self.module, self._defs, self.classes)
        passed = constructed_modules(given, self.resolver)
        strings = constructed_strings(self.module, self.classes)
        for facts in self.classes.values():
            collect_attributes(facts, self.resolver, self._fixed_lists, passed.get(facts.name))
            facts.constants = given_values(facts, given.get(facts.name, {}))
            for attr, exprs in facts.constants.items():  # ``self.locs = locs``, given one
                if attr not in facts.modules and given_parameters(exprs, self.imports):
                    facts.parameters.add(attr)
            facts.strings = strings.get(facts.name, {})
        for facts in self.classes.values():
            inherit_attributes(facts, self.classes)

    def _start_modes(self) -> None:
        """The interpreter's modes, all off."""
        #: reading for metadata only (``x.shape``, ``x is None``, a store's target): no read
        self._meta = Mode()
        #: enclosing loops, for the two-pass limit
        self._loop_depth = Mode()
        #: the next name read is the base of a subscript with a non-constant index; the read
        #: takes (and clears) it, so only that base counts as indexed
        self._indexing = Mode()
        #: inside the arm of ``if inplace:`` (or a conditional expression on such a flag)
        self._inplace_guard = Mode()
        #: the targets of the assignment whose value is being evaluated
        self._assigning: tuple[cst.BaseExpression, ...] = ()

    @property
    def scope(self) -> _Scope:
        assert self._scope is not None
        return self._scope

    def _derived_tables(self) -> None:
        """Tables filled as the analysis goes: branch conditions, which function holds a
        call, and what each function's lists hold (the last two on first use)."""
        #: branch id -> its condition (``conditions.condition_key``) and arm 0's outcome
        self._conditions: dict[int, tuple[Key, bool]] = {}
        #: branch id -> (loop key, id of the ``if``, last iteration only) for a branch the
        #: loop takes at most once; the ``for`` statements being analysed, innermost last
        self._once_branches: dict[int, tuple[int, int, bool]] = {}
        #: branch id -> the test of the ``if`` statement it is (arm 0: the test holds)
        self._branch_tests: dict[int, cst.BaseExpression] = {}
        self._for_statements: list[cst.For] = []
        #: value id -> the conditional expression arm that chose it (``a if c else b``)
        self._chosen: dict[int, tuple[tuple[int, int], ...]] = {}
        #: call id -> the function whose own code holds the call
        self._owners: dict[int, cst.FunctionDef] | None = None
        #: function id -> its fixed literal lists (``fixed_lists``)
        self._fixed: dict[int, dict[str, tuple[cst.BaseExpression, ...]]] = {}
        #: function id -> what its lists grow by (``grown_lists.grown``)
        self._grown: dict[int, tuple[Pairs, Leads, Leads]] = {}
        self.resolver.leads_of = self._leads_of
        self.resolver.tails_of = self._tails_of

    def _bound_counts(self, func: cst.FunctionDef | cst.Module) -> dict[str, int]:
        """How often each name is bound in ``func`` (``bound_names``), once per function."""
        counts = self._function_locals.get(id(func))
        if counts is None:
            counts = self._function_locals[id(func)] = bound_names(func)[0]
        return counts

    def _fixed_lists(self, func: cst.FunctionDef) -> dict[str, tuple[cst.BaseExpression, ...]]:
        """``fixed_lists`` of ``func``, once per function."""
        found = self._fixed.get(id(func))
        if found is None:
            found = self._fixed[id(func)] = fixed_lists(func, self._bound_counts(func))
        return found

    def _leads_of(self, func: cst.FunctionDef) -> Leads:
        """The leading items of the lists grown by appends in ``func``."""
        return self._grown_by(func)[1]

    def _tails_of(self, func: cst.FunctionDef) -> Leads:
        """The items that may be last in the lists grown by appends in ``func``."""
        return self._grown_by(func)[2]

    def _grown_by(self, func: cst.FunctionDef | cst.Module) -> tuple[Pairs, Leads, Leads]:
        """What the lists of ``func`` grow by (``grown_lists.grown``), once per function."""
        found = self._grown.get(id(func))
        if found is None:
            found = self._grown[id(func)] = grown(func, self._bound_counts(func))
        return found

    def _owner(self, call: cst.Call) -> cst.FunctionDef | cst.Module:
        """The function whose own code holds ``call``, or the module for its top level."""
        if self._owners is None:
            self._owners = {}
            for func in self._defs:
                for node in own_nodes(func):
                    if type(node) is cst.Call:
                        self._owners[id(node)] = func
        return self._owners.get(id(call), self.module)

    def _next(self) -> int:
        return next(self._seq)

    def _text(self, node: cst.CSTNode) -> str:
        text = self.module.code_for_node(node).strip()
        return text if len(text) <= 40 else text[:37] + "..."

    def _unknown_element(self, container: Value) -> Value:
        """An element read from a container whose elements are unknown: a fresh value each
        read, which requires grad where every call put tensors that do in the container."""
        if container.element_grad != 2:
            return self._unknown()
        return grad_element(container.grad_assumed)  # a container's: its elements'

    def _unknown(self, name: str = "", inputs: Iterable[Value] = (), sure: bool = False) -> Value:
        inputs = self._flatten(inputs)
        value = new_value(Kind.TENSOR, name, sure=sure, grad=self._grad_of(inputs, default=1))
        for item in inputs:
            value.hist |= item.hist
        return value

    def _chain_pendings(self, expr: cst.BaseExpression | None) -> list[_Pending]:
        """The writes of the in-place calls that make ``expr``'s value: the call itself and
        the receivers it is chained on (``x[:8].lerp_(y).clamp_(0)``)."""
        found: list[_Pending] = []
        node = expr
        while isinstance(node, cst.Call):
            found += self.scope.pending_by_node.get(id(node), ())
            func = node.func
            node = func.value if isinstance(func, cst.Attribute) else None
        return found

    def _forget_items(self, values: Iterable[Value]) -> None:
        """The containers among ``values`` may have changed in ways a store does not show (a
        method called on them, a call given them): what ``xs[j] = v`` stored no longer
        stands for a read of ``xs[j]``."""
        stores = self.scope.item_stores
        if not stores:
            return
        ids = {v.id for v in values if v.kind is Kind.CONTAINER}
        for key in [k for k in stores if k[0] in ids]:
            del stores[key]

    def _stored_item(self, container: Value, node: cst.Subscript) -> list[Value] | None:
        """What ``xs[j] = v`` stored, for a read of ``xs[j]`` on the same branch path while
        the names in ``j`` keep their values and nothing else changed ``xs``; else None."""
        scope = self.scope
        if not scope.item_stores or container.kind is not Kind.CONTAINER:
            return None
        index = variable_index(self.module, node)
        found = scope.item_stores.get((container.id, index[0])) if index is not None else None
        if found is None or len(container.elements) != found.count:
            return None
        if any(scope.bindings.get(name, 0) > found.seq for name in found.names):
            return None
        if tuple(self._path)[: len(found.path)] != found.path:
            return None
        return list(found.values)

    def _assumed_of(self, inputs: Iterable[Value]) -> bool:
        """Whether the tensors among ``inputs`` that require grad all do so by assumption
        only (``Value.grad_assumed``): so does what a torch op makes of them (not what an
        unknown callable does, which may hold parameters of its own)."""
        needing = [v for v in self._flatten(inputs) if v.kind is Kind.TENSOR and v.grad == 2]
        return bool(needing) and all(v.grad_assumed for v in needing)

    @functools.cached_property
    def _method_owners(self) -> dict[str, str]:
        """Method name -> the one same-file plain class (no module, Function or optimizer)
        that defines it, for names no other class of the file and no tensor method has:
        ``obj.apply_temperature(x)`` on a value of no known kind calls that class's method."""
        counts: Counter[str] = Counter(m for c in self.classes.values() for m in c.methods)
        return {
            method: cls.name
            for cls in self.classes.values()
            if not (cls.is_module or cls.is_function or cls.is_optimizer)
            for method in cls.methods
            if counts[method] == 1
            and not method.startswith("__")
            and method not in self.table.methods
        }

    @functools.cached_property
    def _container_predicates(self) -> dict[str, frozenset[int]]:
        """Same-file predicates that test parameters to be containers (``type_tests``)."""
        return container_predicates(self.functions)

    @functools.cached_property
    def _attribute_stores(self) -> Counter[str]:
        """How often the file assigns each attribute name (``constructed``)."""
        return attribute_stores(self.module)

    def _evident_arg(self, value: Value) -> bool:
        """``value`` is a parameter the function's body uses the way only tensors are used
        (``x.shape``, ``x.view(...)``, ``torch.f(x)``): a tensor, though not annotated so."""
        func, imports, table = self.scope.ctx.node, self.imports, self.table
        if value.origin != "arg" or not value.arg_name or func is None:
            return False
        names = self._source_fact("tensors", func, lambda: _tensor_names(func, imports, table))
        return value.arg_name in names

    def _source_fact(self, fact: str, root: cst.CSTNode, read: Callable[[], _T]) -> _T:
        """``read()``, a fact of ``root`` read from its source alone, once per node."""
        key = (fact, id(root))
        if key not in self._source_facts:
            self._source_facts[key] = read()
        return self._source_facts[key]  # type: ignore[no-any-return]

    def _foreign(self, node: cst.BaseExpression) -> bool:
        """``node`` is a name the scope's code uses with attributes no tensor has
        (``dataset.data = d`` beside ``dataset.targets``), and holds no sure tensor."""
        if not isinstance(node, cst.Name):
            return False
        root = self.scope.ctx.node or self.module
        names = self._source_fact("foreign", root, lambda: foreign_names(root, self.table))
        values = self.scope.env.get(node.value, [])
        return node.value in names and not any(v.sure_tensor for v in values)

    def _grad_of(self, inputs: Iterable[Value], default: int = 0) -> int:
        if self.scope.no_grad:
            return 0
        grads = [v.grad for v in self._flatten(inputs) if v.kind is Kind.TENSOR]
        if not grads:
            return default
        return max(grads)

    def _use(self, values: Iterable[Value]) -> None:
        now = self._next()
        for value in values:
            if value.first_use is None:
                value.first_use = now

    def _flatten(self, values: Iterable[Value]) -> list[Value]:
        """The non-container values inside ``values``, however deeply (and cyclically) held."""
        out: list[Value] = []
        seen: set[int] = set()
        stack = list(values)
        stack.reverse()
        while stack:
            value = stack.pop()
            if value.id in seen:
                continue
            seen.add(value.id)
            if value.kind is Kind.CONTAINER:
                stack.extend(reversed(value.elements))
            else:
                out.append(value)
        return out

    def _view(self, value: Value) -> Value:
        """A view of ``value``: same storage group, same history."""
        view = Value(
            view=True,
            kind=Kind.TENSOR,
            group=value.group,
            sure=value.sure,
            grad=value.grad,
            grad_assumed=value.grad_assumed,
            leaf=value.leaf,
            origin=value.origin,
            arg_name=value.arg_name,
            via_data=value.via_data,
            via_detach=value.via_detach,
            multi_view=value.multi_view,
            dtype=value.dtype,
            # a view of ``w[:, :n]`` covers no element outside it: the base view's index
            # still bounds what it writes or reads (``w[:, :n].reshape(-1, g)``)
            index=value.index,
        )
        view.hist = set(value.hist)
        return view

    def _views(self, values: list[Value], multi: str = "") -> list[Value]:
        """Views of ``values``; ``multi``: the op that returned several views at once (the
        value then stands for all of them, ``several``)."""
        out = [self._view(v) for v in values]
        for view, value in zip(out, values, strict=True):
            if multi and value.kind is Kind.TENSOR:
                view.multi_view = multi
                view.several = True
        return out

    def _part(self, value: Value) -> Value:
        """One of the views ``value`` (a ``several``) stands for: a region of the base's
        storage of its own. Writing it moves the base's version (its group adopts the
        part's); writing the base moves every part's; writing a sibling does neither,
        since the regions are disjoint."""
        part = self._view(value)
        part.group = Group(name=value.group.name)
        value.group.adopt(part.group)
        return part

    def _another(self, value: Value) -> Value:
        """Another element of what ``value`` was taken from: what a later iteration of ``for
        x in xs`` holds is a different tensor (same kind and history, a storage of its own,
        or another region of the same base for the rows of a tensor), so its writes do not
        reach what an earlier iteration kept. A list holding one tensor several times is the
        case this gives up."""
        old = value.group
        group = Group(name=old.name, leaf=old.leaf, tensor=old.tensor, frozen=old.frozen)
        if old.parent is not None:  # another row of the same tensor, another member
            old.parent.adopt(group)
        other = replace(value, group=group, id=next_id(), hist=set(value.hist))
        other.elements, other.items = list(value.elements), dict(value.items)
        other.added, other.slots = dict(value.added), dict(value.slots)
        return other


def grad_element(assumed: bool) -> Value:
    """One tensor of a list its callers fill with tensors that require grad (by assumption
    only, where ``assumed``): unknown but for its grad."""
    element = new_value(Kind.TENSOR, origin=ELEMENT_ORIGIN, grad=2)
    element.grad_assumed = assumed
    return element
