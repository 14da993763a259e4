"""One pass over a parsed file that follows tensors through each function in statement order.

The pass is a small abstract interpreter. For each function (and the module body) it keeps
an environment from names to abstract values, follows branches (merging both sides) and
loops (two passes, so a write in iteration k meets a save from iteration k-1), and records
events: saves for backward, in-place writes, reads after writes, backward calls. Rules in
``inplace_lint.checks`` turn the events into findings; nothing here knows about rule codes.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.classes import (
    ClassFacts,
    ModuleResolver,
    collect_attributes,
    collect_classes,
    global_pool,
    literal_bool,
)
from inplace_lint.facts.containers import container_params
from inplace_lint.facts.memo import FunctionMemo
from inplace_lint.facts.model import Group, Kind, ModuleSpec, SaveRecord, Value, Write, new_value
from inplace_lint.facts.names import ImportTable, dotted_name
from inplace_lint.facts.ops import (
    MAYBE_SELF_METHODS,
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    OpInfo,
    OpTable,
    load_table,
)
from inplace_lint.facts.stand_in import stand_in
from inplace_lint.facts.summaries import (
    Mutation,
    destination,
    grad_target_params,
    replaces_element,
    returns,
    summarize,
)
from inplace_lint.facts.walk import (
    Walker,
    children_of,
    is_expression,
    nested_scope,
    shared_children,
    walk,
)

_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
_ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
_CHECKPOINT = frozenset(
    {"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"}
)
_METADATA_CALLS = frozenset({"len", "isinstance", "type", "id", "print", "repr", "str", "hash"})
_NON_TENSOR_TORCH = (
    "torch.is_tensor", "torch.device", "torch.Size", "torch.finfo", "torch.iinfo",
    "torch.get_default_dtype", "torch.manual_seed", "torch.set_grad_enabled", "torch.cuda.",
    "torch.jit.", "torch.distributed.", "torch.compile", "torch.is_grad_enabled", "torch.numel",
    "torch.backends.", "torch.utils.data.", "torch.save", "torch.load", "torch.set_",
    "torch.is_floating_point", "torch.typename", "torch.is_inference_mode_enabled",
)  # fmt: skip
_FACTORY_FALLBACK = frozenset(
    {
        "torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.randn", "torch.rand",
        "torch.randint", "torch.arange", "torch.linspace", "torch.logspace", "torch.tensor",
        "torch.as_tensor", "torch.from_numpy", "torch.eye", "torch.zeros_like", "torch.ones_like",
        "torch.empty_like", "torch.full_like", "torch.randn_like", "torch.rand_like",
        "torch.randint_like", "torch.randperm", "torch.normal", "torch.bernoulli",
        "torch.multinomial", "torch.empty_strided", "torch.Tensor", "torch.FloatTensor",
        "torch.LongTensor", "torch.tril_indices", "torch.triu_indices",
    }
)  # fmt: skip
_BINARY_OPS: dict[type, str] = {
    cst.Multiply: "mul",
    cst.Divide: "div",
    cst.MatrixMultiply: "matmul",
    cst.Power: "pow",
    cst.Add: "add",
    cst.Subtract: "sub",
    cst.FloorDivide: "floor_divide",
    cst.Modulo: "remainder",
}
_AUG_OPS: dict[type, str] = {
    cst.AddAssign: "+=",
    cst.SubtractAssign: "-=",
    cst.MultiplyAssign: "*=",
    cst.DivideAssign: "/=",
    cst.FloorDivideAssign: "//=",
    cst.ModuloAssign: "%=",
    cst.PowerAssign: "**=",
    cst.BitAndAssign: "&=",
    cst.BitOrAssign: "|=",
    cst.BitXorAssign: "^=",
    cst.LeftShiftAssign: "<<=",
    cst.RightShiftAssign: ">>=",
}
_AUG_METHOD = {"+=": "add_", "-=": "sub_", "*=": "mul_", "/=": "div_", "**=": "pow_"}
_EXEMPT_DATA_WORDS = (
    "init", "reset", "step", "ema", "update", "load", "clip", "copy", "sync", "transfer",
    "offload", "device", "swap", "move", "optim", "adam", "sgd", "lamb", "lion", "belief",
    "single_tensor", "multi_tensor", "foreach",
)  # fmt: skip


#: Constants: never tensors.
_LITERALS = frozenset(
    {
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.SimpleString,
        cst.ConcatenatedString,
        cst.FormattedString,
        cst.Ellipsis,
    }
)


def _short(qualname: str) -> str:
    for prefix, short in (("torch.nn.functional.", "F."), ("torch.nn.", "nn.")):
        if qualname.startswith(prefix):
            return short + qualname[len(prefix) :]
    return qualname


def _literal_zero(node: cst.BaseExpression | None) -> bool:
    if isinstance(node, cst.Integer | cst.Float):
        try:
            return float(node.value) == 0.0
        except ValueError:
            return False
    return False


#: In-place methods that change a tensor's shape but not its values (the version still moves).
_SHAPE_ONLY = frozenset(
    {"squeeze_", "unsqueeze_", "transpose_", "t_", "swapdims_", "swapaxes_", "as_strided_"}
)
#: Ops that keep an input only to compute the gradient of the other operand.
_SAVES_INPUT_FOR_OTHER = frozenset(
    {"mul", "mul_", "multiply", "div", "div_", "divide", "true_divide", "__mul__", "__truediv__"}
)
#: Parameter names of integer or boolean tensors, which never require grad.
_INTEGER_NAME = re.compile(
    r"(.*_)?(ids|mask|labels?|positions|indices|index)|.*_mask|.*_ids|.*_labels?|.*_indices"
)
#: Parameter names that hold sizes and counts, never tensors, even in a forward().
_SIZE_NAME = re.compile(r".*(shape|size)s?|num_.*|n_.*|.*_dims?|.*_idx|.*_index")


def _indices_only(op: str, extra: list[tuple[str, cst.Arg, list[Value]]]) -> bool:
    """``max(x, dim)`` / ``min(x, dim)`` save only the integer indices, not ``x``."""
    if op.rsplit(".", 1)[-1] not in ("max", "min"):
        return False
    return any(
        keyword == "dim" or (not keyword and all(v.kind is not Kind.TENSOR for v in values))
        for keyword, _, values in extra
    )


def _merge_arms(
    branch: int,
    merged: dict[str, list[Value]],
    envs: list[dict[str, list[Value]]],
    tags: list[dict[str, dict[int, tuple[tuple[int, int], ...]]]],
) -> dict[str, dict[int, tuple[tuple[int, int], ...]]]:
    """After a branch: the values a name holds only because one arm left them there."""
    out: dict[str, dict[int, tuple[tuple[int, int], ...]]] = {}
    for name, values in merged.items():
        found: dict[int, tuple[tuple[int, int], ...]] = {}
        for value in values:
            arms = [i for i, env in enumerate(envs) if any(v is value for v in env.get(name, ()))]
            inner = {tags[i].get(name, {}).get(value.id, ()) for i in arms}
            if len(arms) == 1:
                found[value.id] = ((branch, arms[0]), *inner.pop())
            elif len(arms) == len(envs) and len(inner) == 1 and (tag := inner.pop()):
                found[value.id] = tag  # every arm kept it, under the same earlier condition
        if found:
            out[name] = found
    return out


#: Ops whose two results are (values, integer indices) when unpacked: ``v, i = x.topk(k)``.
_VALUES_AND_INDICES = frozenset(
    {"topk", "sort", "max", "min", "kthvalue", "mode", "median", "nanmedian", "cummax", "cummin"}
)


def _returns_indices(source: cst.BaseExpression | None) -> bool:
    """Whether ``source`` is a call of an op returning values and their integer indices."""
    if not isinstance(source, cst.Call) or not isinstance(source.func, cst.Attribute):
        return False  # ``x.topk(k)``, ``torch.sort(x)``; not the builtin ``max(pairs)``
    return source.func.attr.value in _VALUES_AND_INDICES


def _is_none(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


@dataclass
class Context:
    """The function being analysed."""

    name: str
    node: cst.FunctionDef | None
    cls: ClassFacts | None = None
    role: str = ""  # "fn_forward", "fn_backward", "forward" or ""
    no_grad: bool = False
    exempt_data: bool = False
    state_update: bool = False  # an optimizer step, EMA or buffer update by its name
    exempt_args: str = ""
    mark_dirty: frozenset[str] = frozenset()


@dataclass
class _Pending:
    groups: frozenset[int]
    write: Write
    seq: int
    written_name: str | None
    written: list[Value] = field(default_factory=list)
    done: bool = False
    #: the loops the write sits in (innermost last) and the index it writes at, if any
    loops: tuple[int, ...] = ()
    target_node: cst.CSTNode | None = None
    #: written through a view: stale only once the in-place result is bound to another name
    through_view: bool = False
    bound_away: bool = False

    def soft_alias(self, value: Value) -> bool:
        """``value`` and a written value may be copies of each other (``x.float()``)."""
        if any(value is w for w in self.written):
            return False  # the very tensor that was written, not a maybe-copy of it
        roots = {w.soft_of or w.id for w in self.written}
        return (value.soft_of or value.id) in roots and any(
            value.soft_of or w.soft_of for w in self.written
        )

    @property
    def bound_elsewhere(self) -> bool:
        return self.write.elsewhere


@dataclass
class _LoopFrame:
    """A loop being analysed: its counters (names that differ in every iteration)."""

    key: int
    counters: frozenset[str]
    started: int  # the sequence number at which the current pass began


@dataclass
class _Scope:
    ctx: Context
    env: dict[str, list[Value]] = field(default_factory=dict)
    bindings: dict[str, int] = field(default_factory=dict)
    bound_inplace: dict[str, Write] = field(default_factory=dict)
    stale: list[_Pending] = field(default_factory=list)
    hidden: list[_Pending] = field(default_factory=list)
    escapes: list[Value] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)
    no_grad: bool = False
    stmt: cst.CSTNode | None = None
    callables: dict[str, Group] = field(default_factory=dict)
    pending_by_node: dict[int, list[_Pending]] = field(default_factory=dict)
    backward_seen: bool = False
    #: name -> {value id: the branch arms through which that value reached the name}
    arms: dict[str, dict[int, tuple[tuple[int, int], ...]]] = field(default_factory=dict)
    #: ``self.attr`` -> the target node of its latest assignment in this function
    stores: dict[str, cst.CSTNode] = field(default_factory=dict)
    #: writes to a tensor that an earlier ``self.attr = ...`` of this function keeps
    stored_writes: list[tuple[_Pending, str, int]] = field(default_factory=list)
    #: name -> (its binding, the groups it holds only as a stand-in for another tensor)
    stand_ins: dict[str, tuple[int, frozenset[int]]] = field(default_factory=dict)


_MAX_TWICE_DEPTH = 2
#: factories whose result is a buffer to fill in (not data): a helper writing it is expected
_BLANK_FACTORIES = frozenset(
    {"zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like"}
)
_CONTAINER_ANNOTATIONS = (
    "List[", "list[", "Sequence[", "Tuple[", "tuple[", "Iterable[", "Dict[", "dict[",
    "Mapping[",
)  # fmt: skip
_OPTIMIZER_WORDS = frozenset({"opt", "optim", "optimizer", "optimiser"})
_MODEL_WORDS = frozenset({"net", "model", "module", "self", "network"})


def _words(name: str) -> list[str]:
    last = name.rsplit(".", 1)[-1]
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", last)
    return [w for w in re.split(r"[_\d]+", spaced.lower()) if w]


def _optimizer_hint(name: str) -> str | None:
    """For an optimizer-looking name (``opt_d``, ``optimizerG``) the rest of it, else None."""
    words = _words(name)
    if not any(w in _OPTIMIZER_WORDS for w in words):
        return None
    return "".join(w for w in words if w not in _OPTIMIZER_WORDS)


def _model_matches(hint: str, name: str) -> bool:
    norm = "".join(w for w in _words(name) if w not in _MODEL_WORDS)
    if not hint:
        return True
    return bool(norm) and (norm == hint or norm.startswith(hint) or hint.startswith(norm))


class Analyzer:
    """Runs the dataflow pass over one module and fills a :class:`Facts`."""

    def __init__(
        self, module: cst.Module, table: OpTable | None = None, memo: FunctionMemo | None = None
    ) -> None:
        self.module = module
        self.table = table or load_table()
        self._memo = memo
        # one walk over the statements (not into expressions) finds imports, classes, defs
        statements = list(walk(module, skip=is_expression))
        self._defs = [n for n in statements if type(n) is cst.FunctionDef]
        self.imports = ImportTable.from_statements(statements)
        if memo is not None:
            memo.start(self.imports, self.table, self._defs, module.body)
        self.classes = collect_classes(statements, self.imports, self.table)
        self._containers_of: dict[int, frozenset[str]] = {}
        self._members: dict[int, Value] = {}
        self._grad_params: dict[int, dict[str, int]] = {}
        #: enclosing loops: [id, names counting distinct iterations, seq the pass started at]
        self._loops: list[_LoopFrame] = []
        #: id of a name node -> the subscript it is the base of (``x`` in ``x[i]``)
        self._subscript_of: dict[int, cst.Subscript] = {}
        self.resolver = ModuleResolver(self.imports, self.table, self.classes)
        for facts in self.classes.values():
            collect_attributes(facts, self.resolver)
        self.facts = ev.Facts()
        self.functions: dict[str, cst.FunctionDef] = {}
        self.class_values: dict[tuple[str, str], Value] = {}
        self.globals: dict[str, list[Value]] = {}
        self._seq = itertools.count(1)
        self._scope: _Scope | None = None
        self._meta = 0
        self._loop_depth = 0
        self._path: list[tuple[int, int]] = []
        self._indexing = 0
        self._inplace_guard = 0
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
        #: module class -> the op whose saved output its forward returns
        self.forward_saves_output: dict[str, str] = {}
        #: module class -> (tuple length, position -> the write that makes differentiating
        #: against that returned tensor wrong)
        self.returned_targets: dict[str, tuple[int, dict[int, tuple[Write, str]]]] = {}

    # ------------------------------------------------------------------ driver
    def run(self) -> ev.Facts:
        self._collect_functions()
        calls: list[cst.Call] = []
        self.call_modes = _call_modes(self.module, self.imports, calls, self._memo)
        self._summarize()
        self._chain_hazards(calls)
        module_ctx = Context(name="<module>", node=None)
        scope = self._run_scope(module_ctx, self.module.body, params=())
        self.globals = scope.env
        for cls in self.classes.values():
            methods = sorted(cls.methods.values(), key=lambda f: f.name.value != "__init__")
            for method in methods:
                self._run_function(method, cls)
        for func in self._plain:
            self._run_function(func, None)
        if self.returned_targets:
            self._module_grad_targets()
        self.facts.chain_hazards = [
            chain
            for chain in self.facts.chain_hazards
            if True in self.sequential_calls.get(chain.sequential, {True})
        ]
        return self.facts

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
        owners = {id(m): cls for cls in self.classes.values() for m in cls.methods.values()}
        for func in [
            *self._plain,
            *(m for cls in self.classes.values() for m in cls.methods.values()),
        ]:
            cls = owners.get(id(func))
            if cls is not None and cls.is_function:
                continue
            skip_first = cls is not None and not _is_static(func)
            containers = self._container_params(func)
            summary = (
                summarize(func, skip_first, self.imports, self.table)
                if self._memo is None
                else self._memo.summary(func, skip_first, self.imports, self.table)
            )
            mutations = [m for m in summary if m.elementwise or m.param not in containers]
            if mutations:
                exempt = self._context(func, cls).exempt_args
                self.summaries.setdefault(func.name.value, (mutations, exempt))
                if cls is not None:
                    self.summaries[f"{cls.name}.{func.name.value}"] = (mutations, exempt)

    @functools.cached_property
    def _plain(self) -> list[cst.FunctionDef]:
        return self._plain_functions()

    def _plain_functions(self) -> list[cst.FunctionDef]:
        methods = {id(m) for cls in self.classes.values() for m in cls.methods.values()}
        return [node for node in self._defs if id(node) not in methods]

    def _run_function(self, func: cst.FunctionDef, cls: ClassFacts | None) -> None:
        ctx = self._context(func, cls)
        params = [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]
        self._run_scope(
            ctx,
            func.body.body,
            params=params,
        )

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
        for deco in func.decorators:
            target = deco.decorator
            if isinstance(target, cst.Call):
                target = target.func
            qualified = self.imports.qualify(target) or ""
            if qualified in _NO_GRAD:
                ctx.no_grad = True
        if self.call_modes.get(name) == {False}:
            ctx.no_grad = True  # every call in this file runs it with grad off
        lowered = name.lower()
        ctx.state_update = any(word in lowered for word in _EXEMPT_DATA_WORDS) or (
            cls is not None and cls.is_optimizer
        )
        ctx.exempt_data = ctx.no_grad or ctx.state_update
        param_names = {p.name.value for p in (*func.params.params, *func.params.kwonly_params)}
        if name.endswith("_") and not name.endswith("__"):
            ctx.exempt_args = "its name ends in `_`"
        elif any(_inplace_flag(p) for p in param_names):
            ctx.exempt_args = "it takes an `inplace` flag"
        elif ctx.no_grad:
            ctx.exempt_args = "it runs under no_grad"
        elif "init" in lowered or "reset" in lowered:
            ctx.exempt_args = "it initialises tensors"
        return ctx

    def _run_scope(
        self,
        ctx: Context,
        body: Sequence[cst.BaseStatement] | Sequence[cst.BaseSmallStatement],
        params: Sequence[cst.Param],
    ) -> _Scope:
        outer = self._scope
        scope = _Scope(ctx=ctx, no_grad=ctx.no_grad)
        self._scope = scope
        first_arg_write = len(self.facts.arg_writes)
        try:
            self._bind_params(params)
            self._block(body)
            for pending, name, stored_at in scope.stored_writes:
                if not pending.done and scope.bindings.get(name) == stored_at:
                    pending.done = True  # still stored when the method returns
                    how = "the attribute keeps the tensor"
                    self.facts.stale_reads.append(
                        ev.StaleRead(pending.write, scope.stores[name], name, how, stored=True)
                    )
            escaped = {v.group.id for v in scope.escapes if v.kind is Kind.TENSOR}
            for event in self.facts.arg_writes[first_arg_write:]:
                if event.side_effect and event.groups & escaped:
                    event.side_effect = False  # it hands back the tensor it wrote (in a dict)
            if ctx.node is not None and scope.escapes:
                self._backward(scope.escapes, None, retain=False, what="the caller's backward")
            if ctx.role == "forward" and ctx.cls is not None:
                # forward's output is saved only if every tensor it may return was saved
                saved_by = [
                    [r.op for r in value.hist if r.role == "result" and r.group is value.group]
                    for value in scope.escapes
                    if value.kind is Kind.TENSOR
                ]
                if saved_by and all(saved_by):
                    self.forward_saves_output[ctx.cls.name] = saved_by[0][0]
        finally:
            self._scope = outer
        return scope

    # ------------------------------------------------------------------ helpers
    @property
    def scope(self) -> _Scope:
        assert self._scope is not None
        return self._scope

    def _next(self) -> int:
        return next(self._seq)

    def _bind(self, name: str, values: list[Value]) -> None:
        scope = self.scope
        scope.env[name] = values
        scope.bindings[name] = self._next()
        scope.bound_inplace.pop(name, None)
        scope.arms.pop(name, None)

    def _bind_params(self, params: Sequence[cst.Param]) -> None:
        ctx = self.scope.ctx
        is_method = ctx.cls is not None and not _is_static(ctx.node)
        for index, param in enumerate(params):
            name = param.name.value
            if index == 0 and (is_method or ctx.role.startswith("fn_")):
                self._bind(name, [new_value(Kind.OTHER, name)])
                continue
            value = self._param_value(param, index)
            position = index - 1 if is_method else index  # as callers count their arguments
            module = self._passed_module(name, position)
            if module is not None and (value.origin == "arg" or value.kind is Kind.MODULE):
                value = new_value(Kind.MODULE, name, module=module)
            if value.kind is Kind.TENSOR and ctx.node is not None:
                passed = self.arg_grads.get(ctx.name, {})
                value.grad = max(value.grad, passed.get(position, 0), passed.get(name, 0))
            self._bind(name, [value])

    def _passed_module(self, name: str, position: int) -> ModuleSpec | None:
        """The same-file module class instance that every same-file call of this plain
        function passes for this parameter (``grad_cam(model, x)`` after
        ``model = SmallCNN()``), by position or by keyword."""
        ctx = self.scope.ctx
        if ctx.node is None or ctx.cls is not None:
            return None
        passed = self.arg_modules.get(ctx.name, {})
        found = [passed[key] for key in (position, name) if key in passed]
        if not found or any(spec is None for spec in found):
            return None
        specs = {spec.user_class for spec in found if spec is not None}
        return found[0] if len(specs) == 1 else None

    def _param_value(self, param: cst.Param, index: int) -> Value:
        ctx = self.scope.ctx
        name = param.name.value
        annotation = param.annotation.annotation if param.annotation else None
        ann_text = self.module.code_for_node(annotation) if annotation is not None else ""
        if ctx.role == "fn_backward":
            return new_value(Kind.TENSOR, name, origin="grad_output", arg_name=name, grad=0)
        if ctx.role == "fn_forward":
            return new_value(Kind.TENSOR, name, origin="fn_input", arg_name=name, sure=False)
        if any(w in ann_text for w in _CONTAINER_ANNOTATIONS) or (
            ctx.node is not None and name in self._container_params(ctx.node)
        ):
            return new_value(Kind.CONTAINER, name)
        if "Module" in ann_text or "Sequential" in ann_text:
            return new_value(Kind.MODULE, name, module=ModuleSpec(qualname=None, node=None))
        if ann_text and "Tensor" not in ann_text and "Any" not in ann_text:
            return new_value(Kind.OTHER, name)
        default = param.default
        if default is not None and not _is_none(default):
            return new_value(Kind.OTHER, name)
        if "Tensor" not in ann_text and _SIZE_NAME.fullmatch(name):
            return new_value(Kind.OTHER, name)
        sure = "Tensor" in ann_text or ctx.role == "forward"
        grad = 2 if ctx.cls is not None and ctx.cls.is_module else 1
        if _INTEGER_NAME.fullmatch(name):
            grad = 0  # token ids, masks, labels, positions: integer or bool, never differentiated
        return new_value(Kind.TENSOR, name, origin="arg", arg_name=name, sure=sure, grad=grad)

    def _container_params(self, func: cst.FunctionDef) -> frozenset[str]:
        found = self._containers_of.get(id(func))
        if found is None:
            found = self._containers_of[id(func)] = (
                container_params(func) if self._memo is None else self._memo.containers(func)
            )
        return found

    def _lookup(self, name: str) -> list[Value] | None:
        scope = self.scope
        if name in scope.env:
            return scope.env[name]
        cls = scope.ctx.cls
        if name.startswith("self.") and cls is not None and name.count(".") == 1:
            attr = name[5:]
            key = (cls.name, attr)
            if key in self.class_values:
                return [self.class_values[key]]
            value: Value | None = None
            if attr in cls.modules:
                spec = cls.modules[attr]
                value = new_value(Kind.MODULE, name, module=spec)
                self.class_values[key] = value
            elif attr in cls.parameters:
                value = new_value(Kind.TENSOR, name, grad=2, leaf=True)
                value.group.leaf = True
            elif attr in cls.buffers:
                value = new_value(Kind.TENSOR, name, grad=0)
            elif attr in cls.lists and attr not in cls.assigned:
                # ``self.cache_k = []`` in __init__: a list this method may append to and read
                value = new_value(Kind.CONTAINER, name, literal_container=True)
                scope.env[name] = [value]
                scope.bindings.setdefault(name, 0)
                return [value]
            if value is not None:
                scope.env[name] = [value]
                scope.bindings.setdefault(name, 0)
                return [value]
            return None
        if scope.ctx.node is not None and name in self.globals:
            kept = [v for v in self.globals[name] if v.kind in (Kind.MODULE, Kind.OPTIMIZER)]
            return kept or None
        return None

    def _text(self, node: cst.CSTNode) -> str:
        text = self.module.code_for_node(node).strip()
        return text if len(text) <= 40 else text[:37] + "..."

    def _unknown(self, name: str = "", inputs: Iterable[Value] = (), sure: bool = False) -> Value:
        inputs = self._flatten(inputs)
        value = new_value(Kind.TENSOR, name, sure=sure, grad=self._grad_of(inputs, default=1))
        for item in inputs:
            value.hist |= item.hist
        return value

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

    # ------------------------------------------------------------------ statements
    def _block(self, body: Sequence[cst.CSTNode]) -> None:
        for index, stmt in enumerate(body):
            if isinstance(stmt, cst.If):
                self._if(stmt, body, index)
            else:
                self._statement(stmt)

    def _if(self, stmt: cst.If, block: Sequence[cst.CSTNode], index: int) -> None:
        """``block[index]``, an if statement, noting a stand-in alias one of its arms makes
        (see stand_in)."""
        scope = self.scope
        pair = stand_in(stmt, block, index)
        bound = scope.bindings.get(pair[1]) if pair is not None else None
        self._statement(stmt)
        if pair is None or bound is None or scope.bindings.get(pair[1]) != bound:
            return
        name, tensor = pair
        held = {v.group.id for v in scope.env.get(tensor, []) if v.kind is Kind.TENSOR}
        own = {v.group.id for v in scope.env.get(name, []) if v.kind is Kind.TENSOR} - held
        if held and own and name in scope.bindings:
            scope.stand_ins[name] = (scope.bindings[name], frozenset(held))

    def _statement(self, stmt: cst.CSTNode) -> None:
        scope = self.scope
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                scope.stmt = stmt
                self._small(small)
        elif isinstance(stmt, cst.BaseSmallStatement):  # ``if c: x.mul_(2)`` on one line
            self._small(stmt)
        elif isinstance(stmt, cst.If):
            scope.stmt = stmt
            self._eval(stmt.test)
            self._branches(
                [stmt.body.body, _orelse(stmt.orelse)], guarded=_mentions_inplace(stmt.test)
            )
        elif isinstance(stmt, cst.For):
            scope.stmt = stmt
            self._for(stmt)
        elif isinstance(stmt, cst.While):
            scope.stmt = stmt
            self._eval(stmt.test)
            self._loop(stmt.body.body, None)
            if stmt.orelse is not None:
                self._block(stmt.orelse.body.body)
        elif isinstance(stmt, cst.With):
            scope.stmt = stmt
            self._with(stmt)
        elif isinstance(stmt, cst.Try | cst.TryStar):
            self._block(stmt.body.body)
            handlers = [h.body.body for h in stmt.handlers]
            if stmt.orelse is not None:
                handlers.append(stmt.orelse.body.body)
            if handlers:
                self._branches([*handlers, []])
            if stmt.finalbody is not None:
                self._block(stmt.finalbody.body.body)
        elif isinstance(stmt, cst.Match):
            self._eval(stmt.subject)
            self._branches([case.body.body for case in stmt.cases] + [[]])
        elif isinstance(stmt, cst.FunctionDef | cst.ClassDef):
            self._bind(stmt.name.value, [new_value(Kind.OTHER, stmt.name.value)])

    def _branches(self, bodies: list[Sequence[cst.CSTNode]], guarded: bool = False) -> None:
        scope = self.scope
        start_env = dict(scope.env)
        start_bindings = dict(scope.bindings)
        start_arms = dict(scope.arms)
        envs: list[dict[str, list[Value]]] = []
        arm_tags: list[dict[str, dict[int, tuple[tuple[int, int], ...]]]] = []
        marks = (len(scope.stale), len(scope.hidden))
        held: tuple[list[_Pending], list[_Pending]] = ([], [])
        branch = self._next()
        newest: dict[str, int] = {}
        for arm, body in enumerate(bodies):
            scope.env = dict(start_env)
            scope.bindings = dict(start_bindings)
            scope.arms = dict(start_arms)
            self._path.append((branch, arm))
            flag = guarded and arm == 0
            self._inplace_guard += flag
            self._block(body)
            self._inplace_guard -= flag
            self._path.pop()
            if _terminates(body):
                # ``if c: ...; return``: nothing after the branch runs after this arm
                del scope.stale[marks[0] :], scope.hidden[marks[1] :]
                continue
            envs.append(scope.env)
            arm_tags.append(scope.arms)
            for name, seq in scope.bindings.items():
                newest[name] = max(newest.get(name, 0), seq)
            # a write in one branch is not seen by reads in its sibling branches
            held[0].extend(scope.stale[marks[0] :])
            held[1].extend(scope.hidden[marks[1] :])
            del scope.stale[marks[0] :], scope.hidden[marks[1] :]
        if not envs:  # every arm returns or raises: what follows is unreachable
            envs.append(dict(start_env))
            arm_tags.append(dict(start_arms))
            newest.update(start_bindings)
        scope.stale.extend(held[0])
        scope.hidden.extend(held[1])
        merged: dict[str, list[Value]] = {}
        for env in envs:
            for name, values in env.items():
                bucket = merged.setdefault(name, [])
                for value in values:
                    if all(value is not seen for seen in bucket):
                        bucket.append(value)
        scope.env = merged
        scope.bindings = newest
        scope.arms = _merge_arms(branch, merged, envs, arm_tags)

    def _for(self, stmt: cst.For) -> None:
        parts = self._zipped(stmt)
        counters = _counters(stmt)
        if parts is not None:
            self._loop(stmt.body.body, (stmt.target, []), parts, counters)
        else:
            elements = self._iterate(self._eval(stmt.iter))
            self._loop(stmt.body.body, (stmt.target, elements), counters=counters)
        if stmt.orelse is not None:
            self._block(stmt.orelse.body.body)

    def _iterate(self, iterable: list[Value]) -> list[Value]:
        """What one iteration over ``iterable`` may yield."""
        elements: list[Value] = []
        for value in iterable:
            if value.kind is Kind.CONTAINER:
                elements.extend(value.elements)
            elif value.kind is Kind.PARAM_ITER:
                param = Value(kind=Kind.TENSOR, group=value.group, grad=2, leaf=True)
                param.origin = value.origin
                elements.append(param)
            elif value.kind is Kind.TENSOR and value.sure:
                elements.append(self._view(value))  # each iteration yields one row
            elif (
                value.kind is Kind.MODULE
                and value.module is not None
                and value.module.qualname == "torch.nn.ModuleList"
                and value.module.members
            ):
                elements.append(self._member(value))
        return elements

    def _zipped(self, stmt: cst.For) -> dict[str, list[Value]] | None:
        """``for i, block in enumerate(self.blocks)`` / ``for p, q in zip(a.parameters(),
        b.parameters())``: the modules or parameters each name of the target tuple gets;
        ``reversed(xs)`` iterates like ``xs``. None when the loop is not over these calls."""
        call = stmt.iter
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Name)
            and call.func.value in ("enumerate", "zip", "reversed")
            and call.func.value not in self.functions
            and self._lookup(call.func.value) is None
            and call.args
            and not any(arg.star or arg.keyword for arg in call.args)
        ):
            return None
        kind = call.func.value
        sources = [self._iterate(self._eval(arg.value)) for arg in call.args]
        target = stmt.target
        if kind == "reversed":
            names: list[cst.BaseExpression] = [target]
        elif isinstance(target, cst.Tuple | cst.List):
            names = [element.value for element in target.elements]
        else:
            return {}
        if kind == "enumerate":
            sources = [[], sources[0]]
        if len(names) != len(sources):
            return {}
        # only modules and parameters: elements of tensor lists stay unknown, as before
        return {
            name.value: values
            for name, values in zip(names, sources, strict=True)
            if isinstance(name, cst.Name)
            and values
            and all(v.kind is Kind.MODULE or (v.kind is Kind.TENSOR and v.leaf) for v in values)
        }

    def _member(self, modules: Value) -> Value:
        """A member of an nn.ModuleList: a module of one of its same-file member classes."""
        assert modules.module is not None
        key = id(modules.module)
        member = self._members.get(key)
        if member is None:
            spec = ModuleSpec(qualname=None, node=None, candidates=modules.module.members)
            member = self._members[key] = new_value(Kind.MODULE, module=spec)
        return member

    def _loop(
        self,
        body: Sequence[cst.CSTNode],
        target: tuple[cst.BaseExpression, list[Value]] | None,
        parts: dict[str, list[Value]] | None = None,
        counters: frozenset[str] = frozenset(),
    ) -> None:
        scope = self.scope
        start_env = dict(scope.env)
        # Two passes let iteration k meet iteration k-1; deep nests get one to stay linear.
        self._loop_depth += 1
        passes = 2 if self._loop_depth <= _MAX_TWICE_DEPTH else 1
        frame = _LoopFrame(key=self._next(), counters=counters, started=0)
        self._loops.append(frame)
        for _ in range(passes):
            frame.started = self._next()
            if target is not None:
                node, elements = target
                if isinstance(node, cst.Tuple) and elements and elements[0].origin == "named":
                    last = node.elements[-1].value
                    if isinstance(last, cst.Name):
                        self._bind(last.value, list(elements))
                elif isinstance(node, cst.Name) and elements:
                    self._bind(node.value, list(elements))
                else:
                    self._assign(node, [self._unknown()], None)
                for name, values in (parts or {}).items():
                    self._bind(name, list(values))
            self._block(body)
        self._loops.pop()
        self._loop_depth -= 1
        for name, values in start_env.items():
            bucket = scope.env.setdefault(name, [])
            for value in values:
                if all(value is not seen for seen in bucket):
                    bucket.append(value)

    def _with(self, stmt: cst.With) -> None:
        scope = self.scope
        saved = scope.no_grad
        for item in stmt.items:
            call = item.item
            qualified = ""
            if isinstance(call, cst.Call):
                qualified = self.imports.qualify(call.func) or ""
                if qualified == "torch.set_grad_enabled" and call.args:
                    flag = literal_bool(call.args[0].value)
                    if flag is not None:
                        scope.no_grad = not flag
                        continue
            if qualified in _NO_GRAD:
                scope.no_grad = True
            elif qualified in _ENABLE_GRAD:
                scope.no_grad = False
            else:
                values = self._eval(call)
                if item.asname is not None:
                    self._assign(item.asname.name, values, None)
        self._block(stmt.body.body)
        scope.no_grad = saved

    def _small(self, small: cst.BaseSmallStatement) -> None:
        scope = self.scope
        if isinstance(small, cst.Expr):
            values = self._eval(small.value)
            self._settle(small.value, None)
            if isinstance(small.value, cst.Yield | cst.Await):
                scope.escapes.extend(values)
        elif isinstance(small, cst.Assign):
            values = self._eval(small.value)
            for target in small.targets:
                self._assign(target.target, values, small.value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value), small.value)
        elif isinstance(small, cst.AugAssign):
            self._augassign(small)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                scope.escapes.extend(self._flatten(self._eval(small.value)))
                self._settle(small.value, None)
                self._note_returned_targets(small.value)
        elif isinstance(small, cst.Del):
            target = small.target
            if isinstance(target, cst.Name):
                scope.env.pop(target.value, None)

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

    # ------------------------------------------------------------------ assignment
    def _assign(
        self, target: cst.BaseExpression, values: list[Value], source: cst.BaseExpression | None
    ) -> None:
        scope = self.scope
        if isinstance(target, cst.Name):
            self._bind(target.value, values)
            write = self._inplace_results.get(id(source)) if source is not None else None
            if write is not None:
                scope.bound_inplace[target.value] = write
            self._settle(source, target.value)
            self._bound_away(source)
            return
        if isinstance(target, cst.Tuple | cst.List):
            elements = [e.value for e in target.elements]
            for element in elements:  # ``x, aux = helper(x)`` rebinds what the helper wrote
                name = self._written_name(element)
                if source is not None and name is not None:
                    self._settle(source, name)
            sources = values[0].elements if len(values) == 1 else []
            if values and values[0].kind is Kind.CONTAINER and len(sources) == len(elements):
                for element, value in zip(elements, sources, strict=True):
                    self._assign(element, [value], None)
                return
            indices = len(elements) == 2 and _returns_indices(source)
            for position, element in enumerate(elements):
                inner = element.value if isinstance(element, cst.StarredElement) else element
                if indices and position == 1:  # integer indices: no gradient flows back
                    sure = any(v.kind is Kind.TENSOR and v.sure for v in values)
                    self._assign(inner, [new_value(Kind.TENSOR, grad=0, sure=sure)], None)
                    continue
                derived = self._unknown(inputs=values)
                if any(v.kind is Kind.TENSOR and v.sure for v in values):
                    derived.sure = True  # ``values, indices = torch.sort(x)``: tensors both
                if values and all(v.origin == "saved" for v in values):
                    derived.origin = "saved"
                    derived.sure = True
                self._assign(inner, [derived], None)
            return
        if isinstance(target, cst.Attribute):
            if target.attr.value == "data":
                base = self._eval(target.value)
                self._write(
                    base, target, "assignment to `.data`", hidden=True, target_node=target.value
                )
                return
            if target.attr.value == "requires_grad":
                self._set_requires_grad(target.value, source)
                return
            self._meta += 1  # setting ``obj.attr`` does not read obj's old value
            try:
                self._eval(target.value)
            finally:
                self._meta -= 1
            name = dotted_name(target)
            scope.escapes.extend(v for v in values if v.kind is Kind.TENSOR)
            if name is not None:
                self._bind(name, values)
                scope.stores[name] = target
            return
        if isinstance(target, cst.Subscript):
            self._settle(source, self._written_name(target))
            self._meta += 1  # storing into ``base[...]`` does not read base's old value
            try:
                base = self._eval(target.value)
            finally:
                self._meta -= 1
            self._eval_slices(target)
            key = _string_key(target)
            now = self._next()
            if key is not None:
                for container in base:
                    if container.kind in (Kind.TENSOR, Kind.CONTAINER) and not container.hist:
                        container.kind = Kind.CONTAINER
                        container.items[key] = values
                        container.elements.extend(values)
                        container.added.update((v.id, now) for v in values)
                return
            if replaces_element(target, source):
                for value in base:  # ``maps[k] = block(maps[k])``: a list of feature maps
                    if value.kind is Kind.TENSOR and value.origin == "arg" and not value.hist:
                        value.kind = Kind.CONTAINER
            if any(v.kind is Kind.CONTAINER for v in base):
                for container in base:
                    if container.kind is Kind.CONTAINER:
                        container.elements.extend(values)
                        container.added.update((v.id, now) for v in values)
                return
            tensors = [v for v in base if v.kind is Kind.TENSOR and v.sure]
            if tensors:
                self._use(values)
                self._write(
                    tensors, target, "subscript assignment", extra=values, target_node=target
                )

    def _set_requires_grad(
        self, owner: cst.BaseExpression, source: cst.BaseExpression | None
    ) -> None:
        """``t.requires_grad = False`` makes ``t`` an ordinary tensor until it is set back."""
        base = self._eval(owner)
        flag = literal_bool(source) if source is not None else None
        for value in base:
            if value.kind is not Kind.TENSOR:
                continue
            if flag is False:
                value.grad = 0
                value.leaf = False
                value.group.leaf = False
            elif flag is True:  # torch allows this only on a leaf, which it then is
                value.grad = 2
                value.hist = set()
                value.leaf = True
                value.group.leaf = True
        name = dotted_name(owner)
        if name is not None and base:
            self._bind(name, base)  # later reads of ``layer.weight`` see this same tensor

    def _augassign(self, node: cst.AugAssign) -> None:
        op = _AUG_OPS.get(type(node.operator))
        right = self._eval(node.value)
        target = node.target
        if isinstance(target, cst.Subscript):
            base = self._eval(target.value)
            self._eval_slices(target)
            tensors = [v for v in base if v.kind is Kind.TENSOR and v.sure]
            if tensors and op is not None:
                self._use(right)
                self._write(tensors, target, f"`{op}` on a slice", extra=right, target_node=target)
            return
        current = self._eval(target)
        tensors = [v for v in current if v.kind is Kind.TENSOR and v.sure]
        if op is None or not tensors:
            result = self._binary_result(current, right, _aug_binary(node.operator), target)
            self._assign(target, [result], None)
            return
        self._use(right)
        write = self._write(tensors, node, f"`{op}`", extra=right, target_node=target)
        method = _AUG_METHOD.get(op)
        info = self.table.methods.get(method) if method else None
        if info is not None and write is not None:
            self._record_saves(info, {"self": tensors, "other": right}, tensors, node, method or "")

    # ------------------------------------------------------------------ expressions
    def _eval(self, node: cst.BaseExpression | None) -> list[Value]:
        if node is None:
            return []
        # libcst's node classes have an ABC metaclass, which makes isinstance slow; these
        # are concrete classes without subclasses, so their type says the same
        kind = type(node)
        if kind is cst.Name:
            return self._eval_name(node)  # type: ignore[arg-type]
        if kind is cst.Attribute:
            return self._eval_attribute(node)  # type: ignore[arg-type]
        if kind is cst.Call:
            return self._eval_call(node)  # type: ignore[arg-type]
        if kind in _LITERALS:
            return [new_value(Kind.OTHER)]
        if isinstance(node, cst.BinaryOperation):
            left = self._eval(node.left)
            right = self._eval(node.right)
            if (
                isinstance(node.operator, cst.Add)
                and left
                and right
                and all(v.kind is Kind.CONTAINER for v in left + right)
            ):  # ``list(a.parameters()) + list(b.parameters())``
                joined = new_value(Kind.CONTAINER)
                joined.elements = [e for v in left + right for e in v.elements]
                return [joined]
            return [self._binary_result(left, right, node.operator, node)]
        if isinstance(node, cst.UnaryOperation):
            inner = self._eval(node.expression)
            if isinstance(node.operator, cst.Not):
                return [new_value(Kind.OTHER)]
            return [self._derived(inner, node)]
        if isinstance(node, cst.Comparison):
            metadata = any(
                isinstance(c.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
                for c in node.comparisons
            )
            if metadata:
                self._meta += 1
            try:
                values = list(self._eval(node.left))
                for comp in node.comparisons:
                    values.extend(self._eval(comp.comparator))
            finally:
                if metadata:
                    self._meta -= 1
            tensors = [v for v in values if v.kind is Kind.TENSOR and v.sure]
            if tensors and not metadata:
                return [new_value(Kind.TENSOR, grad=0)]
            return [new_value(Kind.OTHER)]
        if isinstance(node, cst.BooleanOperation):
            return self._eval(node.left) + self._eval(node.right)
        if isinstance(node, cst.Subscript):
            unknown_index = not _constant_index(node)
            self._subscript_of[id(node.value)] = node
            self._indexing += unknown_index
            try:
                base = self._eval(node.value)
            finally:
                self._indexing -= unknown_index
            advanced = self._eval_slices(node)
            out: list[Value] = []
            key = _string_key(node)
            for value in base:
                if key is not None and key in value.items:
                    out.extend(value.items[key])
                elif key is not None and value.kind is Kind.TENSOR:
                    # ``outputs["loss"]``: no tensor takes a string index, so ``outputs`` is a
                    # mapping (a dict, a ModelOutput) and its items are not views of it
                    item = self._unknown(inputs=[value], sure=value.sure)
                    value.kind = Kind.CONTAINER
                    value.items[key] = [item]
                    value.elements.append(item)
                    out.append(item)
                elif key is not None:
                    out.append(self._unknown())
                elif value.kind is Kind.CONTAINER:
                    out.extend(value.elements or [self._unknown()])
                elif value.kind is Kind.MODULE and value.module and value.module.members:
                    out.append(self._member(value))
                elif value.kind is Kind.MODULE and key is None:
                    # ``model[0]`` of a Sequential or ModuleList: a submodule, whose
                    # parameters are the container's
                    spec = ModuleSpec(qualname=None, node=None)
                    out.append(Value(kind=Kind.MODULE, group=value.group, module=spec))
                elif value.kind is Kind.TENSOR and advanced:
                    # gathered by a tensor, list or mask index: a new tensor, never a view
                    copy = new_value(Kind.TENSOR, grad=value.grad, sure=value.sure)
                    copy.hist |= value.hist
                    out.append(copy)
                elif value.kind is Kind.TENSOR:
                    out.append(self._view(value))
                else:
                    out.append(self._unknown())
            return out
        if isinstance(node, cst.List | cst.Tuple | cst.Set):
            container = new_value(Kind.CONTAINER, literal_container=True)
            start = self._next()
            held: list[tuple[str, cst.Name, set[int], int]] = []
            for element in node.elements:
                values = self._eval(element.value)
                if isinstance(element, cst.StarredElement):
                    values = self._flatten(values)
                elif isinstance(element.value, cst.Name):
                    groups = {v.group.id for v in values if v.kind is Kind.TENSOR}
                    held.append((element.value.value, element.value, groups, self._next()))
                container.elements.extend(values)
            if held and not self._meta:
                self._stale_in_display(start, held)
            return [container]
        if isinstance(node, cst.Dict):
            container = new_value(Kind.CONTAINER, literal_container=True)
            for element in node.elements:
                values = self._eval(element.value)
                if isinstance(element, cst.DictElement):
                    self._eval(element.key)
                    if isinstance(element.key, cst.SimpleString):
                        key = element.key.evaluated_value
                        if isinstance(key, str):
                            container.items[key] = values
                container.elements.extend(values)
            return [container]
        if isinstance(node, cst.IfExp):
            self._eval(node.test)
            scope = self.scope
            marks = (len(scope.stale), len(scope.hidden))
            branch = self._next()
            guarded = _mentions_inplace(node.test)
            self._path.append((branch, 0))
            self._inplace_guard += guarded
            body = self._eval(node.body)
            self._inplace_guard -= guarded
            self._path[-1] = (branch, 1)
            held = (scope.stale[marks[0] :], scope.hidden[marks[1] :])
            del scope.stale[marks[0] :], scope.hidden[marks[1] :]
            orelse = self._eval(node.orelse)
            self._path.pop()
            scope.stale.extend(held[0])
            scope.hidden.extend(held[1])
            return body + orelse
        if isinstance(node, cst.NamedExpr):
            values = self._eval(node.value)
            self._assign(node.target, values, node.value)
            return values
        if isinstance(node, cst.Await):
            return self._eval(node.expression)
        if isinstance(node, cst.Yield):
            value = node.value
            if isinstance(value, cst.BaseExpression):
                values = self._eval(value)
                self.scope.escapes.extend(values)
            return [self._unknown()]
        if isinstance(node, cst.ListComp | cst.GeneratorExp | cst.SetComp | cst.DictComp):
            return [self._comprehension(node)]
        if isinstance(node, cst.Lambda):
            return [new_value(Kind.OTHER)]
        return [self._unknown()]

    def _stale_in_display(
        self, start: int, held: list[tuple[str, cst.Name, set[int], int]]
    ) -> None:
        """``return x, x.tanh_()``: the display holds x, which a later element overwrites."""
        for pending in self.scope.stale:
            if pending.done or pending.seq <= start:
                continue
            for name, node, groups, seq in held:
                if seq < pending.seq and groups & pending.groups:
                    pending.done = True
                    how = "the same expression holds the old value"
                    self.facts.stale_reads.append(ev.StaleRead(pending.write, node, name, how))
                    break

    def _settle(self, expr: cst.BaseExpression | None, name: str | None) -> None:
        """An in-place call used as a statement, or rebinding its own target, is not stale."""
        pending_by_node = self.scope.pending_by_node
        if isinstance(expr, cst.IfExp):
            self._settle(expr.body, name)
            self._settle(expr.orelse, name)
            return
        node = expr
        while isinstance(node, cst.Call):
            for pending in pending_by_node.get(id(node), ()):
                if name is None or pending.written_name == name:
                    pending.write.elsewhere = False
            func = node.func
            node = func.value if isinstance(func, cst.Attribute) else None

    def _bound_away(self, expr: cst.BaseExpression | None) -> None:
        """``mixed = x[:8].lerp_(y)``: the in-place results in ``expr`` are now held by a
        name, so a later read of the written base may want the old values."""
        node = expr
        while isinstance(node, cst.Call):
            for pending in self.scope.pending_by_node.get(id(node), ()):
                pending.bound_away = True
            func = node.func
            node = func.value if isinstance(func, cst.Attribute) else None

    def _comprehension(self, node: cst.BaseExpression) -> Value:
        container = new_value(Kind.CONTAINER)
        inner: list[Value] = []
        comp_for = getattr(node, "for_in", None)
        while comp_for is not None:
            inner += self._eval(comp_for.iter)
            comp_for = comp_for.inner_for_in
        element = self._unknown(inputs=inner)
        container.elements.append(element)
        return container

    def _eval_slices(self, node: cst.Subscript) -> bool:
        """Evaluate the index; True when it is advanced (a tensor, list or mask): a copy."""
        advanced = False
        self._meta += 1
        try:
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    index = element.slice.value
                    values = self._eval(index)
                    advanced = advanced or isinstance(
                        index, cst.List | cst.ListComp | cst.Comparison
                    )
                    advanced = advanced or any(v.kind is Kind.TENSOR and v.sure for v in values)
                else:
                    for part in (element.slice.lower, element.slice.upper, element.slice.step):
                        if part is not None:
                            self._eval(part)
        finally:
            self._meta -= 1
        return advanced

    def _eval_name(self, node: cst.Name) -> list[Value]:
        name = node.value
        values = self._lookup(name)
        if values is None:
            if name in ("True", "False", "None"):
                return [new_value(Kind.OTHER)]
            if name in self.classes or name in self.functions or self.imports.qualify(node):
                return [new_value(Kind.OTHER, name)]
            return [self._unknown(name)]
        self._load(name, values, node)
        return list(values)  # a copy: callers may extend what they get

    def _load(self, name: str, values: list[Value], node: cst.CSTNode) -> None:
        if self._meta:
            return
        scope = self.scope
        now = self._next()
        binding = scope.bindings.get(name, 0)
        groups = {v.group.id for v in values if v.kind is Kind.TENSOR}
        stand = scope.stand_ins.get(name)
        own = groups - stand[1] if stand is not None and stand[0] == binding else groups
        indexing, self._indexing = self._indexing, 0
        held = [  # (group, when it was put in the container); x[i] picks an unknown element
            (e.group.id, v.added.get(e.id, 0))
            for v in values
            if v.kind is Kind.CONTAINER and v.literal_container and not indexing
            for e in v.elements
        ]
        matched: list[_Pending] = []
        for pending in scope.stale:
            if pending.done or now <= pending.seq or binding >= pending.seq:
                continue
            stored = {g for g, when in held if when < pending.seq}
            if not (own | stored) & pending.groups:
                continue
            if any(pending.soft_alias(v) for v in values if v.group.id in pending.groups):
                continue
            if name == pending.written_name and not pending.bound_elsewhere:
                continue
            if pending.through_view and not (pending.bound_away and pending.bound_elsewhere):
                continue  # the write was meant for the view's base
            if pending.loops and self._other_iteration_element(pending, node):
                continue
            matched.append(pending)
        if matched:
            for pending in matched:
                pending.done = True
            # every write that changed the value since the read's name took it is a finding
            for pending in sorted(matched, key=lambda p: p.seq):
                how = (
                    "the in-place result was bound to a new name"
                    if (name == pending.written_name)
                    else "it aliases the written tensor"
                )
                self.facts.stale_reads.append(ev.StaleRead(pending.write, node, name, how))
        groups |= {g for g, _ in held}
        if scope.no_grad:
            return
        for pending in scope.hidden:
            if pending.done or now <= pending.seq or not groups & pending.groups:
                continue
            pending.done = True
            self.facts.hidden_reads.append(ev.HiddenWriteRead(pending.write, node, name))

    def _other_iteration_element(self, pending: _Pending, node: cst.CSTNode) -> bool:
        """The write ran in an earlier iteration of a loop, at an index built from that loop's
        counter, and this read indexes by the same expression: another element.

        ``for c in range(n): buf[:, c] = ...; ... buf[:, c]`` reads column c+1 after column c
        was written. Only ``range`` counters (and ``enumerate``'s) count: they never repeat.
        """
        subscript = self._subscript_of.get(id(node))
        if subscript is None:
            return False
        common = [frame for frame in self._loops if frame.key in pending.loops]
        if not common or pending.seq >= common[-1].started or not common[-1].counters:
            return False  # the write ran earlier in this same iteration
        written = _index_texts(self.module, pending.target_node, self.table)
        read = _subscript_texts(self.module, subscript)
        if written is None or len(read) != len(written):
            return False
        counters = common[-1].counters
        return any(
            mine == theirs and _mentions(part, counters)
            for mine, theirs, part in zip(read, written, subscript.slice, strict=True)
        )

    def _eval_attribute(self, node: cst.Attribute) -> list[Value]:
        attr = node.attr.value
        name = dotted_name(node)
        if name is not None and "." in name:
            values = self._lookup(name)
            if values is not None:
                if attr in METADATA_ATTRIBUTES:
                    return [new_value(Kind.OTHER)]
                self._load(name, values, node)
                return list(values)
            if self.imports.qualify(node) is not None:
                return [new_value(Kind.OTHER, name)]
        if attr in METADATA_ATTRIBUTES:
            self._meta += 1
            try:
                base = self._eval(node.value)
            finally:
                self._meta -= 1
            if attr == "grad":
                return [new_value(Kind.TENSOR, grad=0, sure=True)]
            return [new_value(Kind.OTHER)]
        base = self._eval(node.value)
        out: list[Value] = []
        for value in base:
            if value.kind is Kind.TENSOR and attr == "data":
                data = Value(kind=Kind.TENSOR, group=value.group, grad=0, via_data=True)
                data.origin = value.origin
                data.arg_name = value.arg_name
                out.append(data)
            elif value.kind is Kind.TENSOR and attr in self.table.view_methods:
                out.append(self._view(value))
            elif value.kind is Kind.MODULE:
                out.append(self._module_attribute(value, attr))
            elif (value.kind is Kind.OTHER and value.group.name == "ctx") or (
                self.scope.ctx.role == "fn_backward"
                and attr in ("saved_tensors", "saved_variables")
            ):
                saved = new_value(Kind.CONTAINER)
                saved.origin = "saved"
                out.append(saved)
            else:
                out.append(self._unknown(inputs=[value] if value.kind is Kind.TENSOR else ()))
        return out

    def _module_attribute(self, module: Value, attr: str) -> Value:
        """``module.weight``: a parameter, unless the module's class made it a buffer."""
        cls = self.classes.get(module.module.user_class or "") if module.module else None
        if cls is not None and attr in cls.buffers:
            return Value(kind=Kind.TENSOR, group=Group(name=attr), grad=0)
        if attr in ("weight", "bias") or (cls is not None and attr in cls.parameters):
            return Value(kind=Kind.TENSOR, group=module.group, grad=2, leaf=True)
        if cls is not None and attr in cls.modules:
            # a submodule: its parameters are the owner's, saved by the owner's forward
            return Value(kind=Kind.MODULE, group=module.group, module=cls.modules[attr])
        return self._unknown()

    def _view(self, value: Value) -> Value:
        """A view of ``value``: same storage group, same history."""
        view = Value(
            view=True,
            kind=Kind.TENSOR,
            group=value.group,
            sure=value.sure,
            grad=value.grad,
            leaf=value.leaf,
            origin=value.origin,
            arg_name=value.arg_name,
            via_data=value.via_data,
            via_detach=value.via_detach,
        )
        view.hist = set(value.hist)
        return view

    def _derived(self, inputs: list[Value], node: cst.CSTNode) -> Value:
        tensors = [v for v in inputs if v.kind is Kind.TENSOR]
        if not tensors:
            return new_value(Kind.OTHER)
        self._use(tensors)
        value = self._unknown(inputs=tensors, sure=any(v.sure for v in tensors))
        return value

    def _binary_result(
        self, left: list[Value], right: list[Value], operator: object, node: cst.CSTNode
    ) -> Value:
        lt = [v for v in left if v.kind is Kind.TENSOR]
        rt = [v for v in right if v.kind is Kind.TENSOR]
        if not lt and not rt:
            return new_value(Kind.OTHER)
        self._use(lt + rt)
        result = new_value(
            Kind.TENSOR,
            sure=any(v.sure for v in lt + rt),
            grad=self._grad_of(lt + rt),
        )
        for value in lt + rt:
            result.hist |= value.hist
        op = _BINARY_OPS.get(type(operator))
        info = self.table.functions.get(f"torch.{op}") if op else None
        if info is not None and len(info.params) >= 2:
            self._record_saves(info, {info.params[0]: lt, info.params[1]: rt}, [result], node, op)
        return result

    # ------------------------------------------------------------------ calls
    def _eval_call(self, node: cst.Call) -> list[Value]:
        func = node.func
        qualified = self.imports.qualify(func)
        if qualified is not None and qualified.startswith("torch"):
            return self._torch_call(qualified, node)
        if isinstance(func, cst.Attribute):
            callee = dotted_name(func)
            receiver_values = self._lookup(callee) if callee else None
            if receiver_values is not None and any(v.kind is Kind.MODULE for v in receiver_values):
                args = self._args(node)
                return self._call_modules(receiver_values, args, node, callee or "")
            return self._method_call(node, func)
        if isinstance(func, cst.Name):
            name = func.value
            values = self._lookup(name)
            if values is not None and any(v.kind is Kind.MODULE for v in values):
                args = self._args(node)
                return self._call_modules(values, args, node, name)
            if (
                name in ("list", "tuple")
                and values is None
                and len(node.args) == 1
                and not node.args[0].keyword
            ):
                inner = self._eval(node.args[0].value)
                if any(v.kind in (Kind.PARAM_ITER, Kind.CONTAINER) for v in inner):
                    listed = new_value(Kind.CONTAINER)  # ``list(model.parameters())``
                    listed.elements = self._iterate(inner)
                    return [listed]
                return [self._unknown(inputs=inner)]
            if name in _METADATA_CALLS:
                self._meta += 1
                try:
                    self._args(node)
                finally:
                    self._meta -= 1
                return [new_value(Kind.OTHER)]
            if name in self.classes:
                return self._construct(name, node)
            if values is not None and any(v.kind is Kind.TENSOR and not v.sure for v in values):
                for value in values:  # called like a function: a model, not a tensor
                    if value.kind is Kind.TENSOR and not value.sure:
                        value.kind = Kind.MODULE
                        value.module = ModuleSpec(qualname=None, node=None)
                return self._call_modules(values, self._args(node), node, name)
            spec = None if name in self.functions else self.resolver.spec(node)
            args = self._args(node)
            if spec is not None:
                return [new_value(Kind.MODULE, name, module=spec)]
            given_back = self._record_call(name, node, args)
            return given_back or [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
        called = self._eval(func)
        args = self._args(node)
        if any(v.kind is Kind.MODULE for v in called):  # ``self.blocks[i](x)``
            return self._call_modules(called, args, node, self._text(func))
        return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]

    def _args(self, node: cst.Call) -> list[tuple[str, cst.Arg, list[Value]]]:
        out: list[tuple[str, cst.Arg, list[Value]]] = []
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else ""
            values = self._eval(arg.value)
            if arg.star:
                values = self._flatten(values)
            out.append((keyword, arg, values))
        return out

    def _construct(self, name: str, node: cst.Call) -> list[Value]:
        args = self._args(node)
        cls = self.classes[name]
        if cls.is_module:
            spec = ModuleSpec(qualname=None, node=node, user_class=name)
            return [new_value(Kind.MODULE, name, module=spec)]
        self._record_call(name, node, args)
        return [new_value(Kind.OTHER, name)]

    def _note_passed_module(self, callee: str, key: int | str, values: list[Value]) -> None:
        modules = self.arg_modules.setdefault(callee, {})
        specs = {
            v.module.user_class: v.module
            for v in values
            if v.kind is Kind.MODULE and v.module is not None and v.module.user_class
        }
        spec = next(iter(specs.values())) if len(specs) == 1 and len(values) == 1 else None
        earlier = modules.get(key, spec)
        same = earlier is not None and spec is not None and earlier.user_class == spec.user_class
        modules[key] = spec if same else None

    def _record_call(
        self, callee: str, node: cst.Call, args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> list[Value]:
        """Note a call to a same-file function; apply its writes to the arguments passed.

        Returns the tensors passed where the callee writes and then returns that argument
        (``x = normalize_(x)``): the call's result is the caller's own tensor.
        """
        self.facts.called.add(callee)
        grads = self.arg_grads.setdefault(callee, {})
        position = 0
        for keyword, arg, values in args:
            key: int | str = keyword or position
            if not keyword and not arg.star:
                position += 1
            if not arg.star:
                self._note_passed_module(callee, key, values)
                passed = self.facts.passed_tensor.setdefault((callee, key), False)
                self.facts.passed_tensor[(callee, key)] = passed or any(
                    v.kind is Kind.TENSOR for v in values
                )
                if any(v.kind is Kind.CONTAINER for v in values):
                    self.facts.passed_container.add((callee, key))
            tensors = [v for v in values if v.kind is Kind.TENSOR]
            if tensors:
                grads[key] = max(grads.get(key, 0), max(v.grad for v in tensors))
        self._grad_targets_passed(callee, node, args)
        entry = self.summaries.get(callee)
        if entry is None:
            return []
        given_back: list[Value] = []
        mutations, exempt = entry
        positional = [(arg, values) for kw, arg, values in args if not kw and not arg.star]
        keywords = {kw: (arg, values) for kw, arg, values in args if kw}
        for mutation in mutations:
            passed = keywords.get(mutation.param)
            if passed is None and mutation.index < len(positional):
                passed = positional[mutation.index]
            if passed is None:
                continue
            arg, values = passed
            if mutation.elementwise:  # ``sgd_(model.parameters())`` writes each parameter
                values = self._iterate(values)
            if mutation.guard is not None and not _passes_true(
                keywords, positional, mutation.guard, mutation.guard_index
            ):
                continue
            tensors = [
                v for v in values if v.kind is Kind.TENSOR and (v.sure or not mutation.augmented)
            ]
            if tensors and mutation.returned:
                given_back += tensors
            if tensors:
                leaves = [v for v in tensors if v.leaf and v.grad == 2]
                write = self._write(
                    tensors,
                    mutation.node,
                    f"{mutation.what} in `{callee}()`",
                    target_node=arg.value,
                    via_call=node,
                    callee=callee,
                    param=mutation.param,
                    returned=mutation.returned,
                    # a module's forward returns outputs: writing its input is a surprise;
                    # a helper returning something else may be called for its effect
                    # a helper returning something else may be called for its effect on
                    # a container or array; on a known tensor the write is a side effect,
                    # unless the parameter is named as a destination (``out``, ``buffer``)
                    side_effect=mutation.side_effect
                    and (
                        callee.endswith(".forward")
                        or (
                            all(v.sure for v in tensors)
                            and not all(v.blank for v in tensors)  # a buffer the helper fills
                            and not destination(mutation.param)
                        )
                    ),
                    stmt=mutation.stmt,
                )
                if leaves and write is not None and not exempt and not self.scope.no_grad:
                    # torch raises at the call: a leaf that requires grad written in place
                    self.facts.leaf_arg_writes.append(ev.LeafWrite(write, self._text(arg.value)))
        return given_back

    def _grad_targets_passed(
        self, callee: str, node: cst.Call, args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        """``jacobian(y, h)`` where the same-file ``jacobian`` differentiates against its
        second parameter: ``h`` is a grad target here, as if passed to autograd.grad."""
        func = self.functions.get(callee)
        if func is None:
            return
        wanted = self._grad_params.get(id(func))
        if wanted is None:
            wanted = self._grad_params[id(func)] = grad_target_params(func, self.imports)
        if not wanted:
            return
        positional = [arg for kw, arg, _ in args if not kw and not arg.star]
        keywords = {kw: arg for kw, arg, _ in args if kw}
        for name, index in wanted.items():
            arg = keywords.get(name) or (positional[index] if index < len(positional) else None)
            if arg is not None:
                self._check_grad_targets(node, arg.value, None)

    def _method_call(self, node: cst.Call, func: cst.Attribute) -> list[Value]:
        method = func.attr.value
        scope = self.scope
        if method in METADATA_METHODS:
            self._meta += 1
            try:
                receiver = self._eval(func.value)
            finally:
                self._meta -= 1
            args = self._args(node)
            if method == "backward":
                self._backward_call(node, receiver, args)
            return [new_value(Kind.OTHER)]
        receiver = self._eval(func.value)
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            args = self._args(node)
            given_back = self._record_call(method, node, args)
            return given_back or [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
        if isinstance(func.value, cst.Name) and func.value.value == "ctx":
            args = self._args(node)
            return [new_value(Kind.OTHER)]
        args = self._args(node)
        kinds = {v.kind for v in receiver}
        if method == "step":
            stepped = self._optimizer_params(func.value, receiver, args)
            # With no gradients yet (straight-line code before any backward) step() skips
            # every parameter; in a loop, a function or after a backward it updates them.
            may_have_grads = scope.backward_seen or self._loop_depth or scope.ctx.node
            if stepped is not None and may_have_grads:
                self._write(stepped, node, f"`{self._text(func)}()`", optimizer=True)
                return [new_value(Kind.OTHER)]
        if method in ("parameters", "named_parameters") and receiver:
            named = "named" if method == "named_parameters" else ""
            return [Value(kind=Kind.PARAM_ITER, group=receiver[0].group, origin=named)]
        if Kind.MODULE in kinds:
            modules = [v for v in receiver if v.kind is Kind.MODULE]
            if method == "forward":
                return self._call_modules(modules, args, node, self._text(func.value))
            if method in ("to", "cuda", "cpu", "train", "eval", "float", "double", "half"):
                return modules
            return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
        if Kind.CONTAINER in kinds:
            containers = [v for v in receiver if v.kind is Kind.CONTAINER]
            if method in ("append", "extend", "insert", "add"):
                now = self._next()
                for container in containers:
                    for _, _, values in args:
                        for element in self._flatten(values):
                            container.elements.append(element)
                            # the first time counts: a loop appending the tensor it then
                            # writes in place keeps one tensor, changed, in every slot
                            container.added.setdefault(element.id, now)
                return [new_value(Kind.OTHER)]
            if method in ("pop", "get", "popleft"):
                return [e for c in containers for e in c.elements] or [self._unknown()]
            if method in ("values", "items", "copy"):
                return containers
        tensors = [v for v in receiver if v.kind is Kind.TENSOR]
        if not tensors:
            return [self._unknown(inputs=[v for _, _, vs in args for v in vs])]
        return self._tensor_method(node, func, method, tensors, args, scope)

    def _optimizer_params(
        self,
        receiver_node: cst.BaseExpression,
        receiver: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
    ) -> list[Value] | None:
        """The parameters an ``X.step()`` call updates, or None if it is no optimizer step."""
        optimizers = [v for v in receiver if v.kind is Kind.OPTIMIZER]
        if optimizers:
            return [e for o in optimizers for e in o.elements]
        if args and not args[0][0]:
            inner = [v for v in args[0][2] if v.kind is Kind.OPTIMIZER]
            if inner:
                return [e for o in inner for e in o.elements]
            name = dotted_name(args[0][1].value)
            hint = _optimizer_hint(name) if name else None
            return self._hinted_params(hint) if hint is not None else None
        name = dotted_name(receiver_node)
        hint = _optimizer_hint(name) if name else None
        if hint is None or any(v.kind is Kind.TENSOR and v.sure for v in receiver):
            return None
        return self._hinted_params(hint)

    def _hinted_params(self, hint: str) -> list[Value]:
        """Parameters of the models whose names match an optimizer's name (``opt_d`` -> ``D``)."""
        groups: dict[int, Group] = {}
        for name, group in self.scope.callables.items():
            if _model_matches(hint, name):
                groups[group.id] = group
        return [Value(kind=Kind.TENSOR, group=g, grad=2) for g in groups.values()]

    def _tensor_method(
        self,
        node: cst.Call,
        func: cst.Attribute,
        method: str,
        receiver: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
        scope: _Scope,
    ) -> list[Value]:
        if method in ("clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_"):
            self._check_clamp(node, method, [a for _, a, _ in args], receiver)
        if method == "requires_grad_":
            flag = literal_bool(args[0][1].value) if args else True
            for value in receiver:
                if flag is not False:
                    value.grad = 2
                    if not value.hist:
                        value.leaf = True
                        value.group.leaf = True
            return receiver
        if method == "detach":
            out = []
            for value in receiver:
                view = Value(kind=Kind.TENSOR, group=value.group, grad=0, via_detach=True)
                view.sure = True
                out.append(view)
            return out
        if method == "clone":
            value = self._unknown(inputs=receiver, sure=True)
            value.grad = self._grad_of(receiver)
            return [value]
        if self.table.is_inplace_method(method):
            for value in receiver:
                value.sure = True
            info = self.table.methods.get(method)
            extra = [v for _, _, vs in args for v in vs]
            self._use(extra)
            write = self._write(
                receiver,
                node,
                f"`{self._text(func)}()`",
                extra=extra,
                target_node=func.value,
                values_kept=method in _SHAPE_ONLY,
            )
            if info is not None and write is not None:
                bound = self._bind_args(info, receiver, args)
                self._record_saves(info, bound, receiver, node, method)
            if write is not None:
                self._inplace_results[id(node)] = write
            return receiver
        if method in MAYBE_SELF_METHODS:  # returns self only sometimes: a soft alias
            out = [self._view(v) for v in receiver]
            for view, base in zip(out, receiver, strict=True):
                view.soft_of = base.soft_of or base.id
                view.view = base.view
            return out
        if method in self.table.view_methods:
            return [self._view(v) for v in receiver]
        info = self.table.methods.get(method)
        inputs = receiver + [v for _, _, vs in args for v in vs]
        self._use(inputs)
        result = self._unknown(
            inputs=inputs, sure=info is not None or any(v.sure for v in receiver)
        )
        result.grad = self._grad_of(inputs)
        if info is not None:
            if info.view:
                return [self._view(v) for v in receiver]
            if _indices_only(method, args):
                return [result]
            bound = self._bind_args(info, receiver, args)
            self._record_saves(info, bound, [result], node, method)
        return [result]

    def _bind_args(
        self,
        info: OpInfo,
        receiver: list[Value] | None,
        args: list[tuple[str, cst.Arg, list[Value]]],
    ) -> dict[str, list[Value]]:
        params = list(info.params)
        bound: dict[str, list[Value]] = {}
        position = 0
        if receiver is not None and params:
            bound[params[0]] = receiver
            position = 1
        for keyword, _, values in args:
            if keyword:
                bound[keyword] = values
            elif position < len(params):
                bound[params[position]] = values
                position += 1
        return bound

    def _record_saves(
        self,
        info: OpInfo,
        bound: dict[str, list[Value]],
        results: list[Value],
        node: cst.CSTNode,
        op: str,
    ) -> None:
        if self.scope.no_grad:
            return
        tensor_params = {
            name: [v for v in values if v.kind is Kind.TENSOR]
            for name, values in bound.items()
            if any(v.kind is Kind.TENSOR for v in values)
        }
        all_inputs = [v for values in tensor_params.values() for v in values]
        if self._grad_of(all_inputs) < 2:  # only a graph known to need grad saves anything
            return
        for name in info.saves:
            if name == "result":
                for value in results:
                    self._save(value, op, node, "result", results)
                continue
            values = tensor_params.get(name, [])
            others = [v for n, vs in tensor_params.items() if n != name for v in vs]
            if not others and op.rsplit(".", 1)[-1] in _SAVES_INPUT_FOR_OTHER:
                continue  # ``x * 2``, ``x / n``: x is kept only for the gradient of a tensor other
            needed = self._grad_of(others) == 2 if others else self._grad_of(values) == 2
            if not needed:
                continue
            for value in values:
                self._save(value, op, node, "input", results)

    def _save(self, value: Value, op: str, node: cst.CSTNode, role: str, into: list[Value]) -> None:
        """``op`` saved ``value`` for backward: every value in ``into`` now depends on it.

        A soft alias (``x.float()``, ``x.to(dtype)``) is a copy as often as it is ``x``
        itself, so what an op keeps of it says nothing definite about ``x``.
        """
        if value.soft_of is not None:
            return
        record = SaveRecord(
            group=value.group,
            version=value.group.version,
            hidden=value.group.hidden,
            op=op,
            node=node,
            role=role,
            tensor=value.group.name or value.arg_name,
            path=tuple(self._path),
        )
        for result in into:
            result.hist.add(record)

    def _torch_call(self, qualified: str, node: cst.Call) -> list[Value]:
        table = self.table
        if qualified in _CHECKPOINT:
            return self._checkpoint_call(node)
        if qualified in ("torch.autograd.grad",):
            return self._grad_call(node)
        if qualified in ("torch.autograd.backward",):
            args = self._args(node)
            tensors = args[0][2] if args else []
            self._backward_point(node, tensors, args)
            return [new_value(Kind.OTHER)]
        if any(qualified.startswith(p) for p in _NON_TENSOR_TORCH):
            self._meta += 1
            try:
                self._args(node)
            finally:
                self._meta -= 1
            return [new_value(Kind.OTHER)]
        if qualified.startswith("torch.optim.") and qualified.rsplit(".", 1)[1][:1].isupper():
            args = self._args(node)
            if "lr_scheduler" in qualified:
                return [new_value(Kind.OTHER)]
            optimizer = new_value(Kind.OPTIMIZER)
            optimizer.elements = self._param_groups(args)
            return [optimizer]
        if qualified == "torch.nn.Parameter":
            args = self._args(node)
            flag = _arg(node, 1, "requires_grad")
            if flag is not None and literal_bool(flag.value) is False:
                return [new_value(Kind.TENSOR, grad=0)]
            value = new_value(Kind.TENSOR, grad=2, leaf=True)
            value.group.leaf = True
            return [value]
        if qualified.startswith("torch.nn.init."):
            args = self._args(node)
            if args and qualified.endswith("_"):
                self._write(
                    args[0][2],
                    node,
                    f"`{_short(qualified)}()`",
                    no_grad=True,
                    target_node=node.args[0].value,
                )
            return [args[0][2][0]] if args and args[0][2] else [new_value(Kind.OTHER)]
        spec = self.resolver.spec(node)
        if spec is not None:
            self._args(node)
            return [new_value(Kind.MODULE, module=spec)]
        args = self._args(node)
        if qualified in ("torch.clamp", "torch.clip", "torch.clamp_min"):
            clamped = args[0][2] if args and not args[0][0] else []
            self._check_clamp(node, qualified.rsplit(".", 1)[1], list(node.args[1:]), clamped)
        if qualified in table.factory_functions or qualified in _FACTORY_FALLBACK:
            requires = any(
                kw == "requires_grad" and literal_bool(arg.value) is True for kw, arg, _ in args
            )
            value = new_value(Kind.TENSOR, grad=2 if requires else 0, leaf=requires)
            value.group.leaf = requires
            value.blank = qualified.rsplit(".", 1)[-1] in _BLANK_FACTORIES
            return [value]
        info = table.functions.get(qualified)
        positional = [values for kw, _, values in args if not kw]
        first = positional[0] if positional else []
        out_values = [v for kw, _, vs in args if kw == "out" for v in vs]
        inplace_mode = False
        if info is not None and info.inplace_index is not None:
            for kw, arg, _ in args:
                if kw == "inplace":
                    inplace_mode = literal_bool(arg.value) is True
            if len(positional) > info.inplace_index and not inplace_mode:
                flag_arg = [a for kw, a, _ in args if not kw][info.inplace_index]
                inplace_mode = literal_bool(flag_arg.value) is True
        name_inplace = (
            qualified.rsplit(".", 1)[1].endswith("_")
            and not qualified.endswith("__")
            and not qualified.startswith("torch.nn.utils.")  # clip_grad_norm_ writes .grad
        )
        inputs = [v for _, _, vs in args for v in self._flatten(vs) if v.kind is Kind.TENSOR]
        self._use(inputs)
        if (inplace_mode or (info is not None and info.inplace) or name_inplace) and first:
            tensors = [v for v in first if v.kind is Kind.TENSOR]
            for value in tensors:
                value.sure = True
            label = (
                f"`{_short(qualified)}(..., inplace=True)`"
                if inplace_mode
                else (f"`{_short(qualified)}()`")
            )
            write = self._write(tensors, node, label, extra=inputs, target_node=node.args[0].value)
            if info is not None and write is not None:
                self._record_saves(info, self._bind_args(info, None, args), tensors, node, label)
            if write is not None:
                self._inplace_results[id(node)] = write
            return tensors
        if out_values:
            out_node = next(arg.value for kw, arg, _ in args if kw == "out")
            write = self._write(
                out_values,
                node,
                f"`{_short(qualified)}(..., out=)`",
                extra=inputs,
                target_node=out_node,
            )
            if write is not None:
                self._inplace_results[id(node)] = write
            return out_values
        if info is not None and info.view and first:
            return [self._view(v) for v in first if v.kind is Kind.TENSOR] or [self._unknown()]
        if qualified in table.view_functions and first:
            return [self._view(v) for v in first if v.kind is Kind.TENSOR] or [self._unknown()]
        if qualified in ("torch.autograd.Variable",) and first:
            return first
        result = self._unknown(inputs=inputs, sure=True)
        result.grad = self._grad_of(inputs)
        if (
            "adaptive_avg_pool" in qualified
            and len(node.args) > 1
            and global_pool(node.args[1].value)
        ):
            return [result]
        if info is not None and not _indices_only(qualified, args[1:]):
            saves = info.saves_out_of_place if info.saves_out_of_place is not None else info.saves
            patched = OpInfo(info.params, saves, info.view, False, None, None)
            self._record_saves(
                patched, self._bind_args(info, None, args), [result], node, _short(qualified)
            )
        return [result]

    def _param_groups(self, args: list[tuple[str, cst.Arg, list[Value]]]) -> list[Value]:
        found: list[Value] = []

        def visit(values: list[Value]) -> None:
            for value in values:
                if value.kind is Kind.PARAM_ITER or (value.kind is Kind.TENSOR and value.leaf):
                    found.append(Value(kind=Kind.TENSOR, group=value.group, grad=2, leaf=True))
                elif value.kind is Kind.CONTAINER:
                    visit(value.elements)

        for keyword, _, values in args:
            if keyword in ("", "params"):
                visit(values)
        return found

    def _call_modules(
        self,
        modules: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
        node: cst.Call,
        callee: str,
    ) -> list[Value]:
        inputs = [v for kw, _, vs in args if not kw for v in vs]
        first = args[0][2] if args and not args[0][0] else []
        results: list[Value] = []
        for module in modules:
            if module.kind is not Kind.MODULE or module.module is None:
                continue
            self.scope.callables[callee] = module.group
            spec = module.module
            for name in spec.classes:  # their forward's argument writes
                key = f"{name}.forward"
                mutations, _ = self.summaries.get(key, ((), ""))
                self.facts.judged.update((key, m.param) for m in mutations)
                self._record_call(key, node, args)
            if spec.user_class is not None and self._returns_record(spec.user_class):
                # a tuple or ModelOutput: reading one field is not reading the others
                produced = self._apply_module(spec, module, first, inputs, node, callee)
                results.append(self._returned_record(spec.user_class, produced))
                continue
            results += self._apply_module(module.module, module, first, inputs, node, callee)
        return results or [self._unknown(inputs=inputs)]

    def _returned_record(self, class_name: str, produced: list[Value]) -> Value:
        """What a same-file module's tuple-returning forward gives its caller: an opaque
        record. Its elements depend on the module's parameters (an optimizer step before
        their backward is still IPL001) and carry the grad-target hazards the forward left."""
        record = new_value(Kind.CONTAINER)
        uses = {r for v in produced for r in v.hist if r.role == "parameters"}
        known = self.returned_targets.get(class_name)
        size, hazards = known if known is not None else (1, {})
        for position in range(size):
            element = self._unknown(sure=known is not None)
            element.hist |= uses
            element.grad_hazard = hazards.get(position)
            record.elements.append(element)
        return record

    def _returns_record(self, class_name: str) -> bool:
        """The same-file module's forward returns a tuple, dict or ``...Output(...)``."""
        cls = self.classes.get(class_name)
        forward = cls.methods.get("forward") if cls is not None else None
        if forward is None:
            return False
        for node in walk(forward.body, skip=nested_scope):
            if not isinstance(node, cst.Return) or node.value is None:
                continue
            value = node.value
            if isinstance(value, cst.Tuple | cst.Dict):
                return True
            name = dotted_name(value.func) if isinstance(value, cst.Call) else None
            if name is not None and re.fullmatch(r"(.*\.)?([A-Z]\w*Output\w*|tuple|dict)", name):
                return True
        return False

    def _apply_module(
        self,
        spec: ModuleSpec,
        owner: Value,
        first: list[Value],
        inputs: list[Value],
        node: cst.Call,
        callee: str,
    ) -> list[Value]:
        tensors = [v for v in first if v.kind is Kind.TENSOR]
        if spec.elements is not None and spec.node is not None:
            modes = self.sequential_calls.setdefault(id(spec.node), set())
            modes.add(not self.scope.no_grad)
        if spec.elements is not None:
            current = tensors
            for element in spec.elements:
                if current is not tensors and element.inplace:
                    continue  # writes a fresh intermediate; the chain check covers it
                current = self._apply_module(element, owner, current, current, node, callee)
            return current
        if spec.is_view:
            return tensors or [self._unknown(inputs=inputs)]
        self._use(inputs)
        if spec.inplace and tensors:
            kind = _short(spec.qualname) if spec.qualname else "module"
            related: tuple[tuple[cst.CSTNode, str], ...] = ()
            if spec.node is not None:
                related = ((spec.node, f"{kind} created with inplace=True here"),)
            write = self._write(
                tensors,
                node,
                f"`{callee}` ({kind}(inplace=True))",
                extra=[v for v in inputs if v not in tensors],
                target_node=node.args[0].value if node.args else node,
                related=related,
            )
            if write is not None:
                self._inplace_results[id(node)] = write
                if spec.saves_result and self._grad_of(tensors) == 2:
                    for value in tensors:
                        self._save(value, kind, node, "result", tensors)
            return tensors
        result = self._unknown(inputs=inputs, sure=True)
        result.grad = (
            0
            if self.scope.no_grad
            else (2 if spec.has_parameters else self._grad_of(inputs, default=1))
        )
        if self.scope.no_grad or result.grad < 2:
            return [result]
        label = _short(spec.qualname) if spec.qualname else callee
        if spec.saves_input:
            for value in tensors:
                self._save(value, label, node, "input", [result])
        if spec.saves_result:
            self._save(result, label, node, "result", [result])
        saved_by = self.forward_saves_output.get(spec.user_class or "")
        if saved_by is not None:
            op = f"{saved_by} in {spec.user_class}.forward"
            self._save(result, op, node, "result", [result])
        if spec.has_parameters:
            record = SaveRecord(
                group=owner.group,
                version=owner.group.version,
                hidden=owner.group.hidden,
                op=f"the forward pass of `{callee}`",
                node=node,
                role="parameters",
                tensor=f"{callee}'s parameters",
                path=tuple(self._path),
            )
            result.hist.add(record)
        return [result]

    def _checkpoint_call(self, node: cst.Call) -> list[Value]:
        if node.args:
            target = dotted_name(node.args[0].value)
            if target is not None:
                self.facts.checkpointed.setdefault(target.split(".")[-1], node)
        args = self._args(node)
        for value in args[0][2] if args else []:  # ``checkpoint(block, h)`` runs block.forward
            spec = value.module if value.kind is Kind.MODULE else None
            for name in spec.classes if spec is not None else ():
                self.facts.checkpointed.setdefault(f"{name}.forward", node)
        return [self._unknown(inputs=[v for _, _, vs in args[1:] for v in vs], sure=True)]

    # ------------------------------------------------------------------ backward
    def _grad_call(self, node: cst.Call) -> list[Value]:
        before = self._next()
        outputs_arg = _arg(node, 0, "outputs")
        inputs_arg = _arg(node, 1, "inputs")
        outputs = self._eval(outputs_arg.value) if outputs_arg is not None else []
        if inputs_arg is not None:
            self._meta += 1
            try:
                self._eval(inputs_arg.value)
            finally:
                self._meta -= 1
        for arg in node.args:
            if arg is not outputs_arg and arg is not inputs_arg:
                self._eval(arg.value)
        if inputs_arg is not None:
            self._check_grad_targets(node, inputs_arg.value, before)
        retain = _retains(node)
        self._backward(self._flatten(outputs), node, retain, "`torch.autograd.grad`")
        return [self._gradients(node, inputs_arg, outputs)]

    def _gradients(self, node: cst.Call, inputs_arg: cst.Arg | None, outputs: list[Value]) -> Value:
        """The tuple ``torch.autograd.grad`` returns: one tensor per input. They require grad
        (and backward runs through the graph they came from) only with ``create_graph=True``."""
        create = _arg(node, 4, "create_graph")
        differentiable = (
            create is not None and literal_bool(create.value) is True and not self.scope.no_grad
        )
        inputs = inputs_arg.value if inputs_arg is not None else None
        count = len(inputs.elements) if isinstance(inputs, cst.List | cst.Tuple) else 1
        result = new_value(Kind.CONTAINER)
        for _ in range(count):
            gradient = self._unknown(inputs=outputs if differentiable else (), sure=True)
            gradient.grad = 2 if differentiable else 0
            result.elements.append(gradient)
        return result

    def _backward_call(
        self, node: cst.Call, receiver: list[Value], args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        self._backward_point(node, receiver, args)

    def _backward_point(
        self, node: cst.Call, tensors: list[Value], args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> None:
        for keyword, arg, _ in args:
            if keyword == "inputs":
                self._check_grad_targets(node, arg.value, None)
        self._backward(self._flatten(tensors), node, _retains(node), "`backward()`")

    def _grad_targets(self, inputs: cst.BaseExpression) -> list[tuple[str, Value, int]]:
        """(name, value, binding seq) for each tensor an autograd call differentiates against."""
        scope = self.scope
        found: list[tuple[str, Value, int]] = []
        nodes = (
            [e.value for e in inputs.elements]
            if isinstance(inputs, cst.List | cst.Tuple)
            else [inputs]
        )
        for node in nodes:
            name = dotted_name(node)
            if name is None:
                continue
            binding = scope.bindings.get(name, 0)
            for value in scope.env.get(name, []):
                if value.kind is Kind.CONTAINER:
                    found += [(name, e, binding) for e in value.elements if e.is_tensor]
                elif value.is_tensor:
                    found.append((name, value, binding))
        return found

    def _check_grad_targets(
        self, node: cst.Call, inputs: cst.BaseExpression, since: int | None
    ) -> None:
        scope = self.scope
        for name, value, binding in self._grad_targets(inputs):
            if value.leaf:
                continue
            writes = [w for _, w in value.group.writes if not w.no_grad and w.via_call is None]
            inside = [w for w in writes if since is not None and w.seq > since]
            if inside:
                how = "is overwritten in place inside this call"
                self.facts.grad_targets.append(
                    ev.GradTarget(node, scope.stmt, name, how, node, inside[0])
                )
                continue
            found = value.grad_hazard or self._stale_target(name, value, binding)
            if found is not None:
                write, how = found
                self.facts.grad_targets.append(
                    ev.GradTarget(write.node, write.stmt, name, how, node, write)
                )

    def _stale_target(self, name: str, value: Value, binding: int) -> tuple[Write, str] | None:
        """The in-place write that makes differentiating against ``name`` wrong, if any: the
        name was bound to an in-place result, or its tensor was overwritten in place after
        it entered the graph."""
        scope = self.scope
        if name in scope.bound_inplace:
            return scope.bound_inplace[name], "was bound to the result of an in-place op"
        for _, write in value.group.writes:
            if write.no_grad or write.via_call is not None or write.seq <= binding:
                continue
            used_before = value.first_use is not None and write.seq > value.first_use
            other_name = write.name is not None and write.name != name
            if value.origin == "arg" or write.elsewhere or used_before or other_name:
                return write, "was overwritten in place after it entered the graph"
        return None

    def _note_returned_targets(self, returned: cst.BaseExpression) -> None:
        """``return logits, feats`` from a forward after ``act = F.relu_(feats)``: a caller
        that differentiates against ``feats`` gets the gradient of the wrong tensor."""
        scope = self.scope
        cls = scope.ctx.cls
        if scope.ctx.role != "forward" or cls is None or not isinstance(returned, cst.Tuple):
            return
        hazards: dict[int, tuple[Write, str]] = {}
        for position, element in enumerate(returned.elements):
            if not isinstance(element.value, cst.Name):
                continue
            name = element.value.value
            binding = scope.bindings.get(name, 0)
            for value in scope.env.get(name, []):
                found = (
                    None
                    if value.leaf or not value.is_tensor
                    else (self._stale_target(name, value, binding))
                )
                if found is not None:
                    write, how = found
                    hazards[position] = (write, f"{how} in `{cls.name}.forward`")
                    break
        if hazards:
            self.returned_targets[cls.name] = (len(returned.elements), hazards)

    def _backward(
        self, values: list[Value], node: cst.CSTNode | None, retain: bool, what: str
    ) -> None:
        scope = self.scope
        if node is not None:
            scope.backward_seen = True
        records: set[SaveRecord] = set()
        for value in values:
            records |= value.hist
        for record in sorted(records, key=lambda r: r.id):
            if record.id in scope.consumed:
                continue
            group = record.group
            write = None
            if group.version > record.version:
                write = group.first_write_after(record.version, record.path)
            if write is None and group.hidden > record.hidden:
                write = group.first_hidden_after(record.hidden, record.path)
            if write is not None:
                self.facts.saved_overwrites.append(ev.SavedOverwrite(write, record, node, what))
        if not retain and node is not None:
            scope.consumed |= {r.id for r in records}

    # ------------------------------------------------------------------ writes
    def _write(
        self,
        values: list[Value],
        node: cst.CSTNode,
        what: str,
        *,
        hidden: bool = False,
        extra: list[Value] | None = None,
        target_node: cst.CSTNode | None = None,
        related: tuple[tuple[cst.CSTNode, str], ...] = (),
        no_grad: bool = False,
        optimizer: bool = False,
        via_call: cst.CSTNode | None = None,
        callee: str = "",
        param: str = "",
        returned: bool = False,
        side_effect: bool = False,
        stmt: cst.CSTNode | None = None,
        values_kept: bool = False,
    ) -> Write | None:
        """Record an in-place write to every group in ``values``."""
        scope = self.scope
        tensors = [v for v in values if v.kind is Kind.TENSOR]
        if not tensors:
            return None
        hidden = hidden or all(v.via_data for v in tensors)
        via_detach = any(v.via_detach for v in tensors)
        target = self._text(target_node) if target_node is not None else ""
        if target_node is not None and isinstance(target_node, cst.Subscript):
            target = self._text(target_node.value)
        write = Write(
            node=node,
            stmt=stmt or scope.stmt,
            what=what,
            target=target,
            seq=self._next(),
            hidden=hidden,
            via_detach=via_detach,
            no_grad=scope.no_grad or no_grad,
            related=related,
            via_call=via_call,
            callee=callee,
            param=param,
            path=tuple(self._path),
            shape_only=values_kept,
        )
        groups: dict[int, Group] = {v.group.id: v.group for v in tensors}
        written_name = self._written_name(target_node)
        tags = scope.arms.get(written_name, {}) if written_name is not None else {}
        for value in tensors:
            if value.id in tags:  # the name holds this tensor only on some arms
                value.group.write_paths[id(write)] = write.path + tags[value.id]
        for group in groups.values():
            if hidden:
                group.hidden += 1
                group.hidden_writes.append((group.hidden, write))
            else:
                group.version += 1
                group.writes.append((group.version, write))
        for value in tensors:
            if extra:
                for other in extra:
                    value.hist |= other.hist
        write.name = written_name
        group_ids = frozenset(groups)
        pending = _Pending(group_ids, write, write.seq, written_name, tensors)
        if self._loops:
            pending.loops = tuple(frame.key for frame in self._loops)
            pending.target_node = target_node
        if via_call is not None:
            # A helper that is in place by contract surprises only a caller that uses its
            # result as a new tensor; any other helper surprises every later read.
            write.elsewhere = returned or side_effect
            if returned:
                scope.pending_by_node.setdefault(id(via_call), []).append(pending)
            # A procedure (it returns nothing) is called to change the tensor: reads through
            # the name passed want the new value, reads through other aliases see a surprise.
            scope.stale.append(pending)
            if not scope.ctx.role.startswith("fn_"):
                self._note_arg_write(write, tensors)  # our own caller's tensor changes too
            return write
        if isinstance(node, cst.Call) and written_name is not None:
            write.elsewhere = True
            scope.pending_by_node[id(node)] = [pending]
        meant_to_share = (
            hidden
            or values_kept  # ``squeeze_()``: a new shape, the same values
            # under no_grad, writes through attributes are state updates (buffers, EMA);
            # a local tensor read again through an alias is stale with or without autograd
            or (
                scope.no_grad
                and (written_name is None or "." in written_name or scope.ctx.state_update)
            )
            or any(v.leaf for v in tensors)  # parameter updates are meant to be seen
        )
        # writing through a view is writing its base, unless the in-place result is then
        # used as a new tensor (``mixed = x[:8].lerp_(y)``): decided when it is bound
        pending.through_view = all(v.view for v in tensors)
        if pending.through_view and not write.elsewhere:
            meant_to_share = True
        if not meant_to_share:
            scope.stale.append(pending)
            self._note_stored(pending)
        self._classify_write(write, tensors, group_ids, optimizer or no_grad)
        return write

    def _note_stored(self, pending: _Pending) -> None:
        """The written tensor was stored in ``self.attr`` earlier in this method: the object
        keeps it, so the next call (or any later reader) sees the new value."""
        scope = self.scope
        written = pending.written_name
        if scope.ctx.cls is None or written is None or "." in written:
            return
        for name, target in scope.stores.items():
            stored_at = scope.bindings.get(name, 0)
            if not name.startswith("self.") or not 0 < stored_at < pending.seq:
                continue
            values = scope.env.get(name, [])
            held = any(v.kind is Kind.TENSOR and v.group.id in pending.groups for v in values)
            held = held or any(
                e.kind is Kind.TENSOR
                and e.group.id in pending.groups
                and v.added.get(e.id, 0) < pending.seq
                for v in values
                if v.kind is Kind.CONTAINER and v.literal_container
                for e in v.elements
            )
            if held and target is not None:
                scope.stored_writes.append((pending, name, stored_at))

    def _written_name(self, target_node: cst.CSTNode | None) -> str | None:
        """The name a write goes through: ``x`` for ``x``, ``x[i]``, ``x.data``, ``x.mul_(a)``."""
        node = target_node
        while True:
            if isinstance(node, cst.Subscript) or (
                isinstance(node, cst.Attribute) and node.attr.value == "data"
            ):
                node = node.value
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and (
                    self.table.is_inplace_method(node.func.attr.value)
                    or node.func.attr.value in self.table.view_methods
                )
            ):
                node = node.func.value
            else:
                break
        return dotted_name(node) if isinstance(node, cst.BaseExpression) else None

    def _classify_write(
        self, write: Write, tensors: list[Value], groups: frozenset[int], internal_no_grad: bool
    ) -> None:
        scope = self.scope
        ctx = scope.ctx
        if not write.hidden and not write.via_detach and not scope.no_grad and not internal_no_grad:
            leaves = [v for v in tensors if v.leaf]
            if leaves:
                self.facts.leaf_writes.append(ev.LeafWrite(write, write.target or "tensor"))
        if ctx.role == "fn_backward":
            for value in tensors:
                if value.origin in ("grad_output", "saved"):
                    role = "grad_output" if value.origin == "grad_output" else "saved tensor"
                    self.facts.function_writes.append(
                        ev.FunctionWrite(write, role, value.arg_name or write.target)
                    )
                    break
        elif ctx.role == "fn_forward":
            for value in tensors:
                if value.origin == "fn_input" and value.arg_name not in ctx.mark_dirty:
                    self.facts.function_writes.append(
                        ev.FunctionWrite(write, "input", value.arg_name)
                    )
                    break
        else:
            self._note_arg_write(write, tensors)
        if (write.hidden or write.via_detach) and not scope.no_grad and not ctx.exempt_data:
            graph = [v for v in tensors if not v.leaf]
            if graph and any(self._group_in_graph(v) for v in graph):
                scope.hidden.append(_Pending(groups, write, write.seq, None))

    def _note_arg_write(self, write: Write, tensors: list[Value]) -> None:
        """Record a write to a tensor this function received as an argument."""
        if write.shape_only:
            return  # the caller's tensor changes shape, not values
        scope = self.scope
        ctx = scope.ctx
        for value in tensors:
            if value.origin == "arg" and self._still_bound(value):
                exempt = (
                    ctx.exempt_args
                    or ("it runs under no_grad" if scope.no_grad else "")
                    or ("it is guarded by an inplace flag" if self._inplace_guard else "")
                    or ("it copies into the argument, a destination" if _copies(write) else "")
                    or ("it zeroes padding, which callers do not read" if _pads(write) else "")
                )
                self.facts.arg_writes.append(
                    ev.ArgWrite(
                        write,
                        ctx.name,
                        value.arg_name,
                        self._param_index(value.arg_name),
                        exempt,
                        evidence=value.sure or self._tensor_evidence(value.arg_name),
                        qualified=f"{ctx.cls.name}.{ctx.name}" if ctx.cls else ctx.name,
                        role=ctx.role,
                        side_effect=self._side_effect(value.arg_name, write.name),
                        groups=frozenset(v.group.id for v in tensors),
                    )
                )
                return

    def _side_effect(self, param: str, written: str | None) -> bool:
        """The current function returns a value other than the argument it wrote."""
        func = self.scope.ctx.node
        if func is None:
            return False
        gives, roots = returns(func)
        return gives and param not in roots and (written is None or written not in roots)

    def _group_in_graph(self, value: Value) -> bool:
        """A tensor of ``value``'s storage is part of a graph not yet differentiated (a graph
        a backward without retain_graph already consumed is done with)."""
        consumed = self.scope.consumed
        for values in self.scope.env.values():
            for other in values:
                if (
                    other.group is value.group
                    and other.kind is Kind.TENSOR
                    and other.grad > 0
                    and not other.leaf
                    and not other.via_data
                    and (any(r.id not in consumed for r in other.hist) or other.origin == "arg")
                ):
                    return True
        return False

    def _still_bound(self, value: Value) -> bool:
        scope = self.scope
        for values in scope.env.values():
            if any(v.group is value.group and v.origin == "arg" for v in values):
                return True
        return False

    def _param_index(self, name: str) -> int:
        func = self.scope.ctx.node
        if func is None:
            return -1
        params = [p.name.value for p in func.params.params]
        if self.scope.ctx.cls is not None and params and not _is_static(func):
            params = params[1:]
        return params.index(name) if name in params else -1

    def _tensor_evidence(self, name: str) -> bool:
        func = self.scope.ctx.node
        if func is None:
            return False
        return name in _tensor_names(func, self.imports, self.table)

    # ------------------------------------------------------------------ rules needing syntax
    def _check_clamp(
        self, node: cst.Call, method: str, args: list[cst.Arg], clamped: list[Value]
    ) -> None:
        tensors = [v for v in clamped if v.kind is Kind.TENSOR]
        if tensors and all(v.grad == 0 for v in tensors):
            return  # no gradient flows through it: its slope at 0 never matters
        keyword = {a.keyword.value: a.value for a in args if a.keyword is not None}
        positional = [a.value for a in args if a.keyword is None and not a.star]
        if method.startswith("clamp_min"):
            hit = (bool(positional) and _literal_zero(positional[0])) or _literal_zero(
                keyword.get("min")
            )
        else:
            low = keyword.get("min", positional[0] if positional else None)
            high = keyword.get("max", positional[1] if len(positional) > 1 else None)
            hit = _literal_zero(low) and (high is None or _is_none(high))
        if hit and not self.scope.no_grad:
            self.facts.clamp_relus.append(ev.ClampRelu(node, self.scope.stmt, self._text(node)))

    def _chain_hazards(self, calls: list[cst.Call]) -> None:
        """``nn.Sequential(..., <saves its output>, <in place>, ...)`` among ``calls``."""
        for node in calls:
            if self.imports.qualify(node.func) != "torch.nn.Sequential":
                continue
            spec = self.resolver.spec(node)
            if spec is None or not spec.elements:
                continue
            previous: ModuleSpec | None = None
            for element in spec.elements:
                if element.is_view:
                    continue
                if (
                    previous is not None
                    and previous.saves_result
                    and element.inplace
                    and element.node is not None
                    and previous.node is not None
                ):
                    self.facts.chain_hazards.append(
                        ev.ChainHazard(
                            id(node),
                            element.node,
                            None,
                            previous.node,
                            _short(previous.qualname or "module"),
                            _short(element.qualname or "module"),
                        )
                    )
                previous = element


#: One event of the call walk: a call (node, callee name or None, caller, under no_grad) or
#: an alias assignment (None, target name, the functions it may hold, "").
CallEvent = tuple[cst.Call | None, str | None, frozenset[str] | str, bool | str]


def _call_modes(
    module: cst.Module,
    imports: ImportTable,
    every_call: list[cst.Call],
    memo: FunctionMemo | None = None,
) -> dict[str, set[bool]]:
    """For each function name, whether its calls in this file run with grad on (True) or off.

    Every call in the module is appended to ``every_call``, in source order, on the way.
    """
    modes: dict[str, set[bool]] = {}

    def no_grad_call(node: cst.BaseExpression) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        return (imports.qualify(target) or "") in _NO_GRAD

    calls: list[tuple[str, str, bool]] = []  # (callee, caller, lexically under no_grad)
    aliases: dict[str, set[str]] = {}
    decorated: set[str] = set()
    for statement in children_of(module):
        if memo is None:
            events, named = _call_events(statement, no_grad_call)
        else:
            events, named = memo.call_events(statement, lambda s: _call_events(s, no_grad_call))
        decorated |= named
        for node, short, caller, off in events:
            if node is None:  # func = _single_tensor_adam, then func(...)
                aliases.setdefault(short, set()).update(caller)  # type: ignore[arg-type]
                continue
            every_call.append(node)
            if short is not None:
                for callee in aliases.get(short, {short}):
                    calls.append((callee, caller, off))  # type: ignore[arg-type]
    sites: dict[str, list[tuple[str, bool]]] = {}
    for callee, caller, off in calls:
        sites.setdefault(callee, []).append((caller, off))
    no_grad = set(decorated)
    changed = True
    while changed:  # a helper called only from no-grad code runs without grad too
        changed = False
        for callee in sites.keys() - no_grad:
            if all(off or caller in no_grad for caller, off in sites[callee]):
                no_grad.add(callee)
                changed = True
    for callee, caller, off in calls:
        modes.setdefault(callee, set()).add(not (off or caller in no_grad))
    return modes


def _call_events(
    root: cst.CSTNode, no_grad_call: Callable[[cst.BaseExpression], bool]
) -> tuple[tuple[CallEvent, ...], frozenset[str]]:
    """The calls and function aliases under one top-level statement, in source order, and
    the functions it decorates with no_grad."""
    events: list[CallEvent] = []
    grad_off: list[bool] = [False]
    callers: list[str] = [""]
    decorated: set[str] = set()
    stack: list[object] = [root]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is tuple:  # leaving a function (True) or a with block (False)
            grad_off.pop()
            if node[0]:  # type: ignore[index]
                callers.pop()
            continue
        if kind is cst.Call:
            name = dotted_name(node.func)  # type: ignore[attr-defined]
            short = None
            if name is not None and (name.count(".") == 0 or name.startswith("self.")):
                short = name.rsplit(".", 1)[-1]
            events.append((node, short, callers[-1], grad_off[-1]))  # type: ignore[arg-type]
        elif kind is cst.FunctionDef:
            assert isinstance(node, cst.FunctionDef)
            off = any(no_grad_call(d.decorator) for d in node.decorators)
            grad_off.append(off)
            callers.append(node.name.value)
            if off:
                decorated.add(node.name.value)
            stack.append((True,))
        elif kind is cst.With:
            assert isinstance(node, cst.With)
            grad_off.append(grad_off[-1] or any(no_grad_call(i.item) for i in node.items))
            stack.append((False,))
        elif kind is cst.Assign:
            # func = _single_tensor_adam (or an if/else of two functions), then func(...)
            assert isinstance(node, cst.Assign)
            choices = [node.value]
            if isinstance(node.value, cst.IfExp):
                choices = [node.value.body, node.value.orelse]
            names = frozenset(c.value for c in choices if isinstance(c, cst.Name))
            for target in node.targets:
                if isinstance(target.target, cst.Name) and names:
                    events.append((None, target.target.value, names, ""))
        stack.extend(reversed(children_of(node)))  # type: ignore[arg-type]
    return tuple(events), frozenset(decorated)


def _mentions_inplace(test: cst.BaseExpression) -> bool:
    """Whether a condition reads an ``inplace`` flag (``inplace``, ``self.inplace``,
    ``inplace_safe``)."""
    name = dotted_name(test)
    return name is not None and _inplace_flag(name.rsplit(".", 1)[-1])


def _inplace_flag(name: str) -> bool:
    """``inplace``, ``in_place``, ``inplace_safe``, ``use_inplace``: a flag opting into
    in-place writes."""
    lowered = name.lower()
    return "inplace" in lowered or "in_place" in lowered


def _passes_true(
    keywords: dict[str, tuple[cst.Arg, list[Value]]],
    positional: list[tuple[cst.Arg, list[Value]]],
    name: str,
    index: int,
) -> bool:
    """Whether a call passes the literal True for parameter ``name`` (at ``index``)."""
    passed = keywords.get(name)
    if passed is None and 0 <= index < len(positional):
        passed = positional[index]
    return passed is not None and literal_bool(passed[0].value) is True


def _constant_index(node: cst.Subscript) -> bool:
    """``x[0]``, ``x[-1]`` or ``x["key"]``: an element the source names exactly."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    value = node.slice[0].slice.value
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    return isinstance(value, cst.Integer | cst.SimpleString)


def _string_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        key = value.evaluated_value
        return key if isinstance(key, str) else None
    return None


def _terminates(body: Sequence[cst.CSTNode]) -> bool:
    """The block always ends in ``return`` or ``raise``."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], cst.Return | cst.Raise)
    if isinstance(last, cst.Return | cst.Raise):
        return True
    if isinstance(last, cst.If):
        return (
            _terminates(last.body.body)
            and last.orelse is not None
            and _terminates(_orelse(last.orelse))
        )
    return False


def _copies(write: Write) -> bool:
    """``dst.copy_(src)`` (or into a slice of dst): an explicit write into a destination."""
    node = write.node
    return (
        write.via_call is None
        and isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "copy_"
    )


#: Mask names whose ``False`` positions are padding.
_PADDING_MASKS = ("attention_mask", "padding_mask", "pad_mask")


def _pads(write: Write) -> bool:
    """``h[~attention_mask] = 0``: a constant written over the padding positions only, which
    no caller reads as data (a write the caller can see is judged at its call site)."""
    node = write.node
    if write.via_call is not None or not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    small = write.small_statement()
    source = small.value if isinstance(small, cst.Assign) else None
    index = node.slice[0].slice
    if not _literal_zero(source) or not isinstance(index, cst.Index):
        return False
    mask = index.value
    if not isinstance(mask, cst.UnaryOperation) or not isinstance(mask.operator, cst.BitInvert):
        return False
    inner = mask.expression
    while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
        inner = inner.func.value  # ``~mask.bool()``
    name = dotted_name(inner) if isinstance(inner, cst.Name | cst.Attribute) else None
    return name is not None and any(word in name.lower() for word in _PADDING_MASKS)


def _counters(stmt: cst.For) -> frozenset[str]:
    """``for i in range(n)`` and ``for i, x in enumerate(xs)``: ``i`` never repeats."""
    call = stmt.iter
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
        return frozenset()
    target = stmt.target
    if call.func.value == "range" and isinstance(target, cst.Name):
        return frozenset({target.value})
    if (
        call.func.value == "enumerate"
        and isinstance(target, cst.Tuple)
        and target.elements
        and isinstance(target.elements[0].value, cst.Name)
    ):
        return frozenset({target.elements[0].value.value})
    return frozenset()


def _subscript_texts(module: cst.Module, node: cst.Subscript) -> tuple[str, ...]:
    """The source of each index of ``x[a, b:c]``: ``("a", "b:c")``."""
    return tuple(module.code_for_node(element.slice).strip() for element in node.slice)


def _index_texts(
    module: cst.Module, target: cst.CSTNode | None, table: OpTable
) -> tuple[str, ...] | None:
    """The index a write goes to: ``x[i]``, ``x[i].view(-1)`` or ``x[i].unsqueeze(0)``."""
    node = target
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in table.view_methods
    ):
        node = node.func.value
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name | cst.Attribute):
        return _subscript_texts(module, node)
    return None


def _mentions(element: cst.SubscriptElement, names: frozenset[str]) -> bool:
    """A plain index (not a slice) that uses one of ``names``."""
    index = element.slice
    if not isinstance(index, cst.Index):
        return False
    return any(type(n) is cst.Name and n.value in names for n in walk(index.value))


def _orelse(node: cst.If | cst.Else | None) -> Sequence[cst.BaseStatement]:
    if node is None:
        return []
    if isinstance(node, cst.If):
        return [node]
    return node.body.body


def _arg(node: cst.Call, index: int, keyword: str) -> cst.Arg | None:
    positional = [a for a in node.args if a.keyword is None and not a.star]
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return positional[index] if index < len(positional) else None


def _retains(node: cst.Call) -> bool:
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value in ("retain_graph", "create_graph"):
            return literal_bool(arg.value) is not False
    return False


def _aug_binary(operator: cst.BaseAugOp) -> object:
    mapping = {
        cst.AddAssign: cst.Add,
        cst.SubtractAssign: cst.Subtract,
        cst.MultiplyAssign: cst.Multiply,
        cst.DivideAssign: cst.Divide,
        cst.MatrixMultiplyAssign: cst.MatrixMultiply,
        cst.PowerAssign: cst.Power,
    }
    op = mapping.get(type(operator))
    return op() if op is not None else cst.Add()


def _is_static(func: cst.FunctionDef | None) -> bool:
    if func is None:
        return False
    return any(dotted_name(deco.decorator) == "staticmethod" for deco in func.decorators)


def _mark_dirty_names(func: cst.FunctionDef) -> set[str]:
    names: set[str] = set()

    class _Visitor(Walker):
        def visit_Call(self, node: cst.Call) -> None:
            callee = dotted_name(node.func) or ""
            if callee.endswith(".mark_dirty"):
                for arg in node.args:
                    if isinstance(arg.value, cst.Name):
                        names.add(arg.value.value)

    _Visitor().run(func)
    return names


def _tensor_names(func: cst.FunctionDef, imports: ImportTable, table: OpTable) -> set[str]:
    """Names that the function body uses the way only tensors are used."""
    names: set[str] = set()

    class _Visitor(Walker):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if isinstance(node.value, cst.Name):
                attr = node.attr.value
                if (
                    attr in METADATA_ATTRIBUTES
                    or attr in table.view_methods
                    or attr in table.methods
                    or table.is_inplace_method(attr)
                    or attr in ("size", "dim", "numel", "data", "detach", "clone")
                ):
                    names.add(node.value.value)

        def visit_Call(self, node: cst.Call) -> None:
            qualified = imports.qualify(node.func) or ""
            if qualified.startswith("torch.") and node.args:
                first = node.args[0].value
                if isinstance(first, cst.Name):
                    names.add(first.value)

    _Visitor().run(func.body)
    return names


def analyze(
    module: cst.Module, table: OpTable | None = None, memo: FunctionMemo | None = None
) -> ev.Facts:
    """Run the dataflow pass over ``module`` (``memo``: per-function facts kept between
    versions of one document)."""
    with shared_children():
        return Analyzer(module, table, memo).run()
