"""Torch calls and tensor methods, driven by the generated op table: what each op returns
(view, copy, its input), what it saves for backward, and which calls write in place.
"""

from __future__ import annotations

import functools

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts import ledger
from inplace_lint.facts.classes import (
    global_pool,
    literal_bool,
    param_defaults,
)
from inplace_lint.facts.containers import CONTAINER_METHODS
from inplace_lint.facts.flag_loops import InplaceFlip, find_flip, flipped
from inplace_lint.facts.instance_config import assigned_outside_init, holds_for_instances
from inplace_lint.facts.model import Kind, ModuleSpec, Value, new_value
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.op_extras import (
    _BLANK_FACTORIES,
    _CHECKPOINT,
    _FACTORY_FALLBACK,
    _NON_TENSOR_TORCH,
    _RENORM_LOOKUPS,
    _SAVES_INPUT_FOR_OTHER,
    _SHAPE_ONLY,
)
from inplace_lint.facts.ops import (
    OpInfo,
    maybe_self_methods,
)
from inplace_lint.facts.state import AnalyzerBase, _Scope
from inplace_lint.facts.syntax import (
    _arg,
    _indices_only,
    short_name,
)
from inplace_lint.facts.vanishing import VANISHING_METHODS

#: A function's parameter defaults and its fixed literal lists, by name (None when empty).
_Named = tuple[
    dict[str, cst.BaseExpression] | None, dict[str, tuple[cst.BaseExpression, ...]] | None
]


class TorchSemantics(AnalyzerBase):
    """The torch semantics room of the interpreter (see the module docstring)."""

    def _note_reader(self, method: str, receiver: cst.BaseExpression, node: cst.Call) -> None:
        """Remember reads that pass no gradient (``softmax`` at minus infinity, ``detach``),
        receivers a call overwrites whole without reading them (``copy_``), and receivers
        updated in place again (``exp_avg.mul_(b)``)."""
        if self.table.inplace_call(method, node.args):
            self._updating_reads.add(id(receiver))
        if method in VANISHING_METHODS:
            self._vanishing_reads.add(id(receiver))
        elif method == "detach":
            self._untracked_reads.add(id(receiver))
        elif method in self.table.overwrites:  # ``x.copy_(y)`` writes x without reading it
            self._overwriting_reads.add(id(receiver))
            if isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
                self._overwriting_reads.add(id(receiver.value))  # ``p.data.copy_(q)``

    def _not_tensors(self, method: str, receiver: list[Value], node: cst.Call) -> list[Value]:
        """``self.prev_preds.items()``: only a mapping or a list has ``items``, ``append``,
        ``get`` (``containers.CONTAINER_METHODS``), so a value taken for a tensor that is
        called so is a container, here and for every name that holds it. And a tensor's
        method takes at most so many positional arguments (the table's ``max_args``):
        ``semiring.zero_(x)`` calls no ``Tensor.zero_``, so ``semiring`` is no tensor."""
        if method in CONTAINER_METHODS:
            for value in receiver:
                if value.kind is Kind.TENSOR:
                    value.kind = Kind.CONTAINER
            return receiver
        if not self.table.fits(method, node.args):
            for value in receiver:  # a parameter is taken for a tensor by its place alone
                if value.kind is Kind.TENSOR and (not value.sure or value.origin == "arg"):
                    value.kind = Kind.OTHER
        return receiver

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
        if method in self.table.uninitialized and not self.table.is_inplace_method(method):
            return [_uninitialized_tensor()]  # ``x.new_empty(n)``: storage to fill
        if method == "requires_grad_":
            # ``requires_grad_(flag)`` with a flag not written out: it may or may not
            flag = literal_bool(args[0][1].value) if args else True
            for value in receiver:
                if flag is None:
                    value.grad = max(value.grad, 1)
                elif not flag:  # ``requires_grad_(False)``: needs no grad from here on
                    _drop_grad(value)
                elif flag:
                    value.grad = 2
                    if not value.saved:
                        value.leaf = True
                        value.group.leaf = True
            if flag:
                self._note_instance_grad(func.value)
            return receiver
        if method == "detach":
            out = []
            for value in receiver:
                value.sure = True  # only a tensor has ``detach()``: ``x += y`` then writes x
                # of a tensor that needs no grad here (``if not x.requires_grad: x =
                # x.detach()``), a plain alias: a write through it hides nothing from autograd
                hides = value.grad != 0
                view = Value(kind=Kind.TENSOR, group=value.group, grad=0, via_detach=hides)
                view.sure = True
                out.append(view)
            return out
        if method == "clone":
            value = self._unknown(inputs=receiver, sure=True)
            value.grad = self._grad_of(receiver)
            value.grad_assumed = self._assumed_of(receiver)
            return [value]
        if self.table.inplace_call(method, node.args):
            return self._inplace_method(node, func, method, receiver, args)
        if method == "detach_":
            for value in receiver:  # ``pos.detach_()``: the tensor itself leaves the graph
                _drop_grad(value)
                value.hist.clear()  # a leaf now, whatever graph it came from
            return receiver
        if method in maybe_self_methods():  # returns self only sometimes: a soft alias
            return self._maybe_self(method, receiver)
        info = self.table.methods.get(method)
        if method in self.table.view_methods:
            return self._method_views(method, info, receiver)
        inputs = receiver + [v for _, _, vs in args for v in vs]
        self._use(inputs)
        result = self._unknown(
            inputs=inputs, sure=info is not None or any(v.sure for v in receiver)
        )
        result.grad = 0 if info is not None and info.detached else self._grad_of(inputs)
        result.grad_assumed = info is not None and self._assumed_of(inputs)
        if info is not None and info.detached:
            result.hist = set()  # ``argmax``, ``eq``: no graph, so no saved tensor behind it
        if info is not None:
            if info.view:
                return [self._view(v) for v in receiver]
            if _indices_only(method, args):
                return [result]
            bound = self._bind_args(info, receiver, args)
            self._record_saves(info, bound, [result], node, method)
        return [result]

    def _maybe_self(self, method: str, receiver: list[Value]) -> list[Value]:
        """``x.float()``, ``x.to(...)``, ``x.contiguous()``: ``x`` itself or a copy (a soft
        alias of it), except a cast to another kind of dtype than ``x``'s, which copies."""
        cast = _CASTS.get(method, "")
        tensors = [v for v in receiver if v.kind is Kind.TENSOR]
        if cast and tensors and all(v.dtype and v.dtype != cast for v in tensors):
            copy = self._unknown(inputs=receiver, sure=True)  # ``(a / b).long()``
            copy.grad, copy.dtype = self._grad_of(receiver), cast
            copy.grad_assumed = self._assumed_of(receiver)
            return [copy]
        out = [self._view(v) for v in receiver]
        for view, base in zip(out, receiver, strict=True):
            view.soft_of = base.soft_of or base.id
            view.view = base.view
            view.dtype = cast or base.dtype
        return out

    def _inplace_method(
        self,
        node: cst.Call,
        func: cst.Attribute,
        method: str,
        receiver: list[Value],
        args: list[tuple[str, cst.Arg, list[Value]]],
    ) -> list[Value]:
        """``x.mul_(y)``: a write to the receiver, with what the op saves."""
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
        # a sandbox computing a helper's result records no write (the summary applies it),
        # but what the op saves is part of the value the helper hands back
        # (``return out.scatter_reduce_(...)``: its caller's ``out += h`` breaks the backward)
        if info is not None and (write is not None or self._inlining):
            bound = self._bind_args(info, receiver, args)
            before = {id(r) for v in receiver for r in v.hist}
            self._record_saves(info, bound, receiver, node, method)
            self._rebase_views(receiver, before)
        if write is not None:
            self._inplace_results[id(node)] = write
            copied = dotted_name(func.value) if method == "copy_" else None
            if copied is not None and copied in self.scope.bindings:
                # ``self.v.copy_(normalize(self.v))``: the name now holds the copy, so
                # reading it later wants what was copied (other aliases do not)
                self.scope.bindings[copied] = self._next()
        return receiver

    def _rebase_views(self, receiver: list[Value], before: set[int]) -> None:
        """An in-place op on a view (``y[:, 2:].sigmoid_()``) joins the graph of its base and of
        every view of the same storage (autograd rebases them onto the op): what it saved
        reaches whatever differentiates ``y``."""
        added = {r for v in receiver if v.view for r in v.hist if id(r) not in before}
        if not added:
            return
        groups = {v.group.id for v in receiver}
        for values in self.scope.env.values():
            for value in values:
                if value.kind is Kind.TENSOR and value.group.id in groups:
                    value.hist |= added

    def _method_views(self, method: str, info: OpInfo | None, receiver: list[Value]) -> list[Value]:
        """``x.view(...)``, ``x.chunk(2)``: views of the receiver (several, for ``chunk``)."""
        multi = method if info is not None and info.multi_view else ""
        views = self._views(receiver, multi)
        if multi and not _builtin_method(method):
            for view in views:  # ``x.chunk(2)``: no list or str has ``chunk``
                view.sure = view.sure or view.kind is Kind.TENSOR
        return views

    def _tensors_by_use(self, info: OpInfo, args: list[tuple[str, cst.Arg, list[Value]]]) -> None:
        """What a program passes where only a tensor may go (``torch.norm(v)``, the table's
        ``tensor_params``) is a tensor, here and for every name that holds it: ``v /= n``
        then writes it in place."""
        for name, values in self._bind_args(info, None, args).items():
            if name in info.tensor_params:
                for value in values:
                    if value.kind is Kind.TENSOR:
                        value.sure = True

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
            elif position < len(params) and params[position].startswith("*"):
                bound.setdefault(params[position], []).extend(values)  # ``einsum(eq, *ops)``
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
        # a list argument (``einsum(eq, [q, k])``, ``multi_dot([a, b])``) saves its tensors
        flat = {name: self._flatten(values) for name, values in bound.items()}
        tensor_params = {
            name: [v for v in values if v.kind is Kind.TENSOR]
            for name, values in flat.items()
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
            if not name.startswith("*"):
                alone = name in info.saves_alone
                devices = info.device_saves.upper()
                label = f"{op} on {devices}" if name in info.device_kept else op
                device = devices if name in info.device_alone else ""
                self._save_operand(values, others, alone, label, node, results, device)
                continue
            # ``einsum(eq, a, b)``: each operand of a star parameter is one input, kept for the
            # others' gradients (the table's probe gave them grad together: no own saves told)
            for index, value in enumerate(values):
                rest = [*values[:index], *values[index + 1 :], *others]
                self._save_operand([value], rest, False, op, node, results)

    def _save_operand(
        self,
        values: list[Value],
        others: list[Value],
        alone: bool,
        op: str,
        node: cst.CSTNode,
        results: list[Value],
        device: str = "",
    ) -> None:
        """Save ``values`` (one parameter's tensors) where the op keeps them: for the
        gradient of ``others`` that need grad, or for their own (``alone``: the table says
        the op keeps that input when it alone needs grad). ``device``: the device whose
        kernel alone keeps it that way (named in the message when only it saves)."""
        if not others and op.rsplit(".", 1)[-1] in _SAVES_INPUT_FOR_OTHER:
            return  # ``x * 2``, ``x / n``: x is kept only for the gradient of a tensor other
        # kept for another input's gradient only when that input is a tensor (a value not
        # known to be one, ``w`` of ``h, w = orig_hw``, may be a Python number) known to
        # need grad: torch saves an operand only for the gradients it computes, and an
        # assumed one (``L @ x`` with a Laplacian passed beside the features) may need none
        sure_others = [v for v in others if (v.sure or self._evident_arg(v)) and not v.grad_assumed]
        for_others = bool(others) and self._grad_of(sure_others) == 2
        own = plain = not others and self._grad_of(values) == 2
        if alone and self._grad_of(values) == 2:
            own = not for_others  # kept for its own gradient (``gather``'s input)
        if not (for_others or own):
            return
        if device and not for_others and not plain:
            op = f"{op} on {device}"  # kept only by that device's kernel
        for value in values:
            self._save(value, op, node, "input", results, own=own)

    def _save(
        self,
        value: Value,
        op: str,
        node: cst.CSTNode,
        role: str,
        into: list[Value],
        own: bool = False,
    ) -> None:
        """``op`` saved ``value`` for backward: every value in ``into`` now depends on it.

        A soft alias (``x.float()``, ``x.to(dtype)``) is a copy as often as it is ``x``
        itself, so what an op keeps of it says nothing definite about ``x``: the save counts
        only for writes through such an alias (``x = x.float(); v = x.var(); x -= m``).
        """
        tensor = value.group.name or value.arg_name
        path = tuple(self._path)
        record = ledger.save(value.group, op, node, role, tensor, path, own, value.soft_of)
        for result in into:
            result.hist.add(record)

    def _forward_argument_saves(
        self,
        spec: ModuleSpec,
        args: list[tuple[str, cst.Arg, list[Value]]],
        node: cst.Call,
        produced: list[Value],
    ) -> None:
        """A same-file module called with tensors at parameters its forward keeps for every
        result's backward (beyond the first input, ``_module_result_saves``): those tensors
        are saved by this call."""
        if self.scope.no_grad or not spec.classes:
            return
        into = [v for v in self._flatten(produced) if v.kind is Kind.TENSOR]
        kept = [self.forward_saves_inputs.get(c, {}) for c in spec.classes]
        if not into or not all(kept):
            return
        positional = [values for kw, arg, values in args if not kw and not arg.star]
        keywords = {kw: values for kw, _, values in args if kw}
        for (position, name), op in kept[0].items():
            if not all((position, name) in other for other in kept[1:]):
                continue
            passed = keywords.get(name)
            if passed is None and position < len(positional):
                passed = positional[position]
            # kept for another argument's gradient (``adj @ x`` keeps ``adj`` for ``x``):
            # only when another tensor this call passes requires grad
            others = [v for _, _, vs in args if vs is not passed for v in vs]
            if self._grad_of(others) < 2:
                continue
            for value in passed or ():
                if value.kind is Kind.TENSOR:
                    self._save(value, f"{op} in {spec.classes[0]}.forward", node, "input", into)

    def _configured_output_save(self, spec: ModuleSpec, node: cst.Call) -> str | None:
        """The op that saved what a same-file module returns when its forward saves it only on
        some arms (``if self.relued: x = self.relu(x)``) and every instance the source shows
        being built takes them (``instance_config``); else None."""
        if len(spec.classes) != 1:
            return None
        name = spec.classes[0]
        when = self.method_saves_output_when.get((name, "forward"))
        cls = self.classes.get(name)
        if when is None or cls is None:
            return None
        built = [c for c in (spec.node, *spec.instances) if isinstance(c, cst.Call)]
        reassigned = self._source_fact(
            "reassigned", cls.node, lambda: assigned_outside_init(cls.node)
        )
        init, forward = cls.methods.get("__init__"), cls.methods.get("forward")
        if not holds_for_instances(when, init, forward, built, node, reassigned):
            return None
        return when[0]

    def _torch_call(self, qualified: str, node: cst.Call) -> list[Value]:
        """A call of a ``torch`` function or class: autograd entry points, optimizers,
        parameters, init functions and modules first, then ops from the table."""
        special = self._torch_api_call(qualified, node)
        if special is not None:
            return special
        spec = self.resolver.spec(node)
        if spec is not None:
            self._args(node)
            return [new_value(Kind.MODULE, module=spec)]
        if qualified in self.table.metadata_factories:
            with self._meta:  # ``torch.zeros_like(x)`` reads x's shape, not its values
                args = self._args(node)
        else:
            args = self._args(node)
        if qualified in ("torch.clamp", "torch.clip", "torch.clamp_min"):
            clamped = args[0][2] if args and not args[0][0] else []
            self._check_clamp(node, qualified.rsplit(".", 1)[1], list(node.args[1:]), clamped)
        factory = qualified in self.table.factory_functions or qualified in _FACTORY_FALLBACK
        if factory and not any(kw == "out" for kw, _, _ in args):  # ``out=``: a write, below
            requires = any(
                kw == "requires_grad" and literal_bool(arg.value) is True for kw, arg, _ in args
            )
            value = new_value(Kind.TENSOR, grad=2 if requires else 0, leaf=requires)
            value.group.leaf = requires
            value.blank = qualified.rsplit(".", 1)[-1] in _BLANK_FACTORIES
            value.group.uninitialized = qualified in self.table.uninitialized
            return [value]
        return self._torch_op(qualified, node, args)

    def _torch_api_call(self, qualified: str, node: cst.Call) -> list[Value] | None:
        """Torch calls that are not tensor ops: checkpointing, autograd, metadata helpers,
        optimizers, ``nn.Parameter`` and ``nn.init``; None for anything else."""
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
            with self._meta:
                self._args(node)
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
                    f"`{short_name(qualified)}()`",
                    no_grad=True,
                    target_node=node.args[0].value,
                )
            return [args[0][2][0]] if args and args[0][2] else [new_value(Kind.OTHER)]
        return None

    def _torch_op(
        self, qualified: str, node: cst.Call, args: list[tuple[str, cst.Arg, list[Value]]]
    ) -> list[Value]:
        """A torch function from the op table: an in-place call, an ``out=`` write, a view,
        or an op whose result depends on (and may save) its inputs."""
        info = self.table.functions.get(qualified)
        if info is not None and info.tensor_params:
            self._tensors_by_use(info, args)
        positional = [values for kw, _, values in args if not kw]
        first = positional[0] if positional else []
        if qualified in _RENORM_LOOKUPS and len(node.args) > 1 and len(positional) > 1:
            weight = node.args[1].value
            what = short_name(qualified)
            self._renorm_lookup(node, qualified, positional[1], node, what, self._text(weight))
        inputs = [v for _, _, vs in args for v in self._flatten(vs) if v.kind is Kind.TENSOR]
        self._use(inputs)
        inplace_mode = _inplace_mode(info, args)
        name_inplace = self.table.may_be_inplace_function(qualified)
        if (inplace_mode or (info is not None and info.inplace) or name_inplace) and first:
            return self._torch_inplace(qualified, node, args, info, inplace_mode, inputs)
        out_values = [v for kw, _, vs in args if kw == "out" for v in vs]
        if out_values:
            self._out_write(qualified, node, args, info, inputs, out_values)
            return out_values
        if info is not None and info.view and first:
            tensors = [v for v in first if v.kind is Kind.TENSOR]
            multi = short_name(qualified) if info.multi_view else ""
            return self._views(tensors, multi) or [self._unknown()]
        if qualified in self.table.view_functions and first:
            return [self._view(v) for v in first if v.kind is Kind.TENSOR] or [self._unknown()]
        if qualified in ("torch.autograd.Variable",) and first:
            return first
        result = self._unknown(inputs=inputs, sure=True)
        result.grad = 0 if info is not None and info.detached else self._grad_of(inputs)
        result.grad_assumed = self._assumed_of(inputs)  # a torch function: its inputs' grad
        if info is not None and info.detached:
            result.hist = set()  # ``argmax``, ``eq``: no graph, so no saved tensor behind it
        if (
            "adaptive_avg_pool" in qualified
            and len(node.args) > 1
            and global_pool(node.args[1].value)
        ):
            return [result]
        if info is not None and not _indices_only(qualified, args[1:]):
            saves = info.saves_out_of_place if info.saves_out_of_place is not None else info.saves
            patched = OpInfo(
                info.params,
                saves,
                info.view,
                False,
                None,
                None,
                saves_alone=info.saves_alone,
                device_saves=info.device_saves,
                device_alone=info.device_alone,
                device_kept=info.device_kept,
            )
            self._record_saves(
                patched, self._bind_args(info, None, args), [result], node, short_name(qualified)
            )
        return [result]

    def _out_write(
        self,
        qualified: str,
        node: cst.Call,
        args: list[tuple[str, cst.Arg, list[Value]]],
        info: OpInfo | None,
        inputs: list[Value],
        out_values: list[Value],
    ) -> None:
        """``torch.f(..., out=t)``: a write to ``t``, refused by torch at once where an input
        requires grad."""
        out_node = next(arg.value for kw, arg, _ in args if kw == "out")
        write = self._write(
            out_values,
            node,
            f"`{short_name(qualified)}(..., out=)`",
            extra=inputs,
            target_node=out_node,
        )
        if write is not None:
            self._inplace_results[id(node)] = write
            given = [v for v in inputs if all(v is not o for o in out_values)]
            sure = all(v.kind is Kind.TENSOR and v.sure and v.origin != "arg" for v in out_values)
            evident = [v for v in given if not self._grad_guessed(v)]
            differentiable = info is None or not info.detached  # not ``nonzero``'s
            if sure and differentiable and not self.scope.no_grad and self._grad_of(evident) == 2:
                # torch refuses it at once: 'functions with out=... arguments don't
                # support automatic differentiation, but one of the arguments requires
                # grad' (an ``out=`` leaf that requires grad is IPL003's); not for an
                # ``out`` the caller gives (``out=None`` by default, given on a path whose
                # inputs the caller correlates with it: the grad is not known there), nor
                # for inputs computed by a parameter taken for a model (a solver's
                # ``matmul_closure(v)``), whose grad is a guess where torch fails loudly
                self.facts.multi_view_writes.append(ev.MultiViewWrite(write, ev.OUT_GRAD))

    def _grad_guessed(self, value: Value) -> bool:
        """``value`` was computed through a parameter called like a function, taken for a
        model with parameters (``matmul_closure(v)``): its grad rests on that guess."""
        guessed = self._guessed_groups
        return any(r.role == "parameters" and r.group.id in guessed for r in value.hist)

    def _torch_inplace(
        self,
        qualified: str,
        node: cst.Call,
        args: list[tuple[str, cst.Arg, list[Value]]],
        info: OpInfo | None,
        inplace_mode: bool,
        inputs: list[Value],
    ) -> list[Value]:
        """``torch.relu_(x)``, ``F.relu(x, inplace=True)``: a write to the first argument."""
        positional = [values for kw, _, values in args if not kw]
        tensors = [v for v in positional[0] if v.kind is Kind.TENSOR]
        for value in tensors:
            value.sure = True
        label = (
            f"`{short_name(qualified)}(..., inplace=True)`"
            if inplace_mode
            else (f"`{short_name(qualified)}()`")
        )
        write = self._write(tensors, node, label, extra=inputs, target_node=node.args[0].value)
        if info is not None and write is not None:
            self._record_saves(info, self._bind_args(info, None, args), tensors, node, label)
        if write is not None:
            self._inplace_results[id(node)] = write
        return tensors

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

    def _check_clamp(
        self, node: cst.Call, method: str, args: list[cst.Arg], clamped: list[Value]
    ) -> None:
        """Note a clamp call made with grad on; IPL008 reads its bounds."""
        if self.scope.no_grad:
            return
        tensors = [v for v in clamped if v.kind is Kind.TENSOR]
        no_gradient = bool(tensors) and all(v.grad == 0 for v in tensors)
        event = ev.ClampCall(
            node, self.scope.stmt, self._text(node), method, tuple(args), no_gradient
        )
        self.facts.clamp_calls.append(event)

    @functools.cached_property
    def _inplace_flips(self) -> dict[int, InplaceFlip]:
        """``__init__`` (by id) -> its loop setting ``inplace = True`` on submodules."""
        found: dict[int, InplaceFlip] = {}
        for cls in self.classes.values():
            init = cls.methods.get("__init__")
            flip = find_flip(init, self.imports) if init is not None else None
            if init is not None and flip is not None:
                found[id(init)] = flip
        return found

    def _note_sequentials(self, calls: list[cst.Call]) -> None:
        """Each ``nn.Sequential(...)`` among ``calls`` whose members the source lists, in the
        call or in a fixed literal list it unpacks (``nn.Sequential(*layers)``); a member
        built from a parameter (``activation(inplace=True)``) is the parameter's default."""
        for node in calls:
            if self.imports.qualify(node.func) != "torch.nn.Sequential":
                continue
            defaults, lists = None, None
            if any(arg.star == "*" or self._bare_call(arg.value) for arg in node.args):
                defaults, lists = self._named_at(node)
            spec = self.resolver.spec(node, defaults, lists=lists)
            flip = self._inplace_flips.get(id(self._owner(node)))
            if spec is not None and flip is not None:  # ``m.inplace = True`` in a loop
                spec = flipped(spec, flip, self.table)
            if spec is not None and spec.elements:
                self.facts.sequentials.append(ev.SequentialBuilt(node, spec))
            elif spec is not None and any(arg.star == "*" for arg in node.args):
                self._note_grown_sequential(node, spec, defaults)

    def _note_grown_sequential(
        self, node: cst.Call, spec: ModuleSpec, defaults: dict[str, cst.BaseExpression] | None
    ) -> None:
        """``nn.Sequential(*layers)`` over a list its function grows by appends: the pairs of
        members that may run one right after the other (``grown_lists``)."""
        found = self._grown_by(self._owner(node))[0]
        pairs: list[tuple[ModuleSpec, ModuleSpec]] = []
        for arg in node.args:
            if arg.star == "*" and isinstance(arg.value, cst.Name):
                for first, second in found.get(arg.value.value, ()):
                    specs = (
                        self.resolver.spec(first, defaults),
                        self.resolver.spec(second, defaults),
                    )
                    if specs[0] is not None and specs[1] is not None:
                        pairs.append((specs[0], specs[1]))
        if pairs:
            self.facts.sequentials.append(ev.SequentialBuilt(node, spec, tuple(pairs)))

    def _bare_call(self, value: cst.BaseExpression) -> bool:
        """``activation(inplace=True)``: a call of a bare name no import explains (a
        parameter whose default may be a module class)."""
        return (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and self.imports.qualify(value.func) is None
        )

    def _named_at(self, call: cst.Call) -> _Named:
        """The parameter defaults and fixed literal lists of the function holding ``call``
        (so ``activation(inplace=True)`` under ``activation=nn.LeakyReLU`` builds the
        default's module, as it does in ``self.x = activation(...)``)."""
        func = self._owner(call)
        if not isinstance(func, cst.FunctionDef):
            return None, None
        return param_defaults(func) or None, self._fixed_lists(func) or None


def _inplace_mode(info: OpInfo | None, args: list[tuple[str, cst.Arg, list[Value]]]) -> bool:
    """Whether a call of an op with an ``inplace`` argument passes ``inplace=True``
    (by keyword, or at the op's position for that flag)."""
    if info is None or info.inplace_index is None:
        return False
    inplace_mode = False
    for kw, arg, _ in args:
        if kw == "inplace":
            inplace_mode = literal_bool(arg.value) is True
    positional = [arg for kw, arg, _ in args if not kw]
    if len(positional) > info.inplace_index and not inplace_mode:
        inplace_mode = literal_bool(positional[info.inplace_index].value) is True
    return inplace_mode


def _builtin_method(name: str) -> bool:
    """``name`` is also a method of a builtin value (``str.split``, ``list.index``)."""
    return any(hasattr(kind, name) for kind in (str, bytes, list, tuple, dict, set, int, float))


def _uninitialized_tensor() -> Value:
    """A new tensor of storage torch leaves uninitialized (``x.new_empty(n)``)."""
    fresh = new_value(Kind.TENSOR, sure=True)
    fresh.group.uninitialized = True
    return fresh


def _drop_grad(value: Value) -> None:
    """The tensor stops requiring grad in place (``requires_grad_(False)``, ``detach_()``):
    no longer a leaf that torch guards against in-place writes."""
    value.grad = 0
    if value.leaf:
        value.leaf = False
        value.group.leaf = False


#: dtype conversion methods, by the category of dtype they give
_CASTS = {
    **dict.fromkeys(("float", "double", "half", "bfloat16"), "float"),
    **dict.fromkeys(("long", "int", "short", "char", "byte"), "int"),
    "bool": "bool",
}
