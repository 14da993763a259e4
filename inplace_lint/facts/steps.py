"""Graphs that outlive one call: instance attributes, helpers that step, methods that forward.

A training step is rarely one function. The forward runs in ``calc_loss()``, the backward and
the optimizer step in ``update_params(optim, loss)``, the optimizer lives on ``self`` since
``__init__``, and the discriminator is reached as ``model.discriminator`` from a loop outside
the class. This room gives each of these the fact it needs:

- **instances**: ``owner.sub`` is a module of its own whose parameters are also the owner's
  (its storage group is adopted by the owner's, :meth:`ledger.Group.adopt`), so stepping an
  optimizer over one submodule does not touch a sibling's saves. For a class constructed once
  in the file, ``model.sub`` outside the class and ``self.sub`` inside its methods are the
  same module, and an optimizer that ``__init__`` stores on ``self`` is known by every
  method and through ``model.opt``.
- **helper steps**: a same-file function's unconditional ``P.backward()`` and ``P.step()``
  on its parameters (:mod:`effects`) are replayed on what each caller passes.
- **returned saves**: a method whose result came through a forward pass of one of ``self``'s
  modules hands its caller a value that depends on those parameters; each call makes a new
  save of them, at the version they have at the call (position by position for a tuple).
- **writes to self**: a method's in-place writes to ``self.queue`` (:mod:`effects`) move the
  version of the caller's ``self.queue``; only the ledger moves.
- **flows**: a plain function's result depends on the parameters it is computed from (flow
  marks in the history, never saves), not on every argument: ``penalty(fake)`` working on
  ``fake.detach()`` does not free the caller's graph of ``fake``.
- **renorming lookups**: ``nn.Embedding(max_norm=...)`` writes the rows it reads.
- **graphs kept on self**: a tensor a method leaves on ``self`` with saves in its history
  (``self.fake = self.netG(x)`` in ``forward``) is what later methods read there; a method's
  backward over such handed graphs is replayed where another method calls it
  (``self.backward_G()``), before that method's own steps, so an optimizer step between two
  backward methods meets the saves (``facts.backward``). A backward over a handed graph
  counts only the writes of its own function and of the calls replayed into it: the order of
  two methods is known only where one calls the other.

Limits: a class constructed several times keeps one ``self`` for all instances (as before);
a method or function analysed after its caller (the driver runs the module body first, then
methods in source order, ``__init__`` first, then plain functions) gives that caller nothing;
only the saves of whole modules' parameters travel back, not those of other tensors the
method saved; a graph kept on ``self`` is followed only for a class made at most once in the
file, and only into methods analysed after the one that kept it.
"""

from __future__ import annotations

import functools

import libcst as cst

from inplace_lint.facts import ledger
from inplace_lint.facts.callables import FUNCTION_ORIGIN, NONE_ORIGIN
from inplace_lint.facts.classes import ClassFacts, literal_bool
from inplace_lint.facts.effects import Effect
from inplace_lint.facts.model import (
    FLOW,
    Group,
    Kind,
    ModuleSpec,
    SaveRecord,
    Value,
    Write,
    instance_class,
    new_value,
    slot_positions,
)
from inplace_lint.facts.op_extras import _RENORM_LOOKUPS
from inplace_lint.facts.state import AnalyzerBase, _Scope
from inplace_lint.facts.walk import nodes_by_type

Args = list[tuple[str, cst.Arg, list[Value]]]


class Steps(AnalyzerBase):
    """The room of graphs that outlive one call (see the module docstring)."""

    @functools.cached_property
    def _constructions(self) -> dict[str, int]:
        """How many times the file calls each same-file class (``GAN()``)."""
        counts: dict[str, int] = {}
        for node in nodes_by_type(self.module).get(cst.Call, ()):
            if isinstance(node.func, cst.Name):  # type: ignore[attr-defined]
                name = node.func.value
                if name in self.classes:
                    counts[name] = counts.get(name, 0) + 1
        return counts

    def _single_instance(self, class_name: str) -> bool:
        """The file makes one instance of the class: its ``self`` is that instance."""
        return self._constructions.get(class_name, 0) == 1

    def _submodule(self, owner: Value, cls: ClassFacts, attr: str) -> Value:
        """``owner.attr`` for a submodule ``attr`` of a same-file class: one module per owner
        and attribute, whose parameter group the owner's adopts."""
        key = (owner.group.id, attr)
        found = self._submodules.get(key)
        if found is not None:
            return found
        spec = cls.modules[attr]
        if self._single_instance(cls.name):
            shared = self.class_values.get((cls.name, attr))
            if shared is None or shared.kind is not Kind.MODULE:
                shared = new_value(Kind.MODULE, f"self.{attr}", module=spec)
                self.class_values[(cls.name, attr)] = shared
            found = shared
        else:
            found = Value(kind=Kind.MODULE, group=Group(name=attr), module=spec)
        if found.group.parent is None and found.group is not owner.group:
            owner.group.adopt(found.group)
        self._submodules[key] = found
        return found

    def _owned_group(self, owner: Value, attr: str) -> Group:
        """The storage of ``owner.attr``, a parameter of a same-file module class: part of
        the owner's parameters (its group adopts this one), not of its submodules."""
        key = (owner.group.id, attr)
        group = self._owned_groups.get(key)
        if group is None:
            group = self._owned_groups[key] = Group(name=attr)
            owner.group.adopt(group)
        return group

    def _class_module(self, name: str, values: list[Value]) -> bool:
        """``self.net = Net()`` in a method: a module the class records for ``self.net``,
        which every method (and ``__init__`` itself, for the optimizers it builds over
        ``self.net.parameters()``) then reads as the same module."""
        cls = self.scope.ctx.cls
        if cls is None or not name.startswith("self.") or name.count(".") != 1:
            return False
        return (
            name[5:] in cls.modules and bool(values) and all(v.kind is Kind.MODULE for v in values)
        )

    def _renorm_lookup(
        self,
        call: cst.Call,
        qualified: str,
        weight: list[Value],
        node: cst.Call,
        what: str,
        weight_text: str,
    ) -> None:
        """``nn.Embedding(..., max_norm=m)`` called (or ``F.embedding(i, w, max_norm=m)``):
        the rows it reads are renormalised in place, without grad, before the lookup."""
        position = _RENORM_LOOKUPS[qualified]
        given = [a for a in call.args if a.keyword is not None and a.keyword.value == "max_norm"]
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if not given and len(positional) > position:
            given = [positional[position]]
        if not given or not _set_literally(given[0].value):
            return  # ``max_norm=layer.max_norm`` is None unless configured: not assumed
        tensors = [
            v if v.kind is Kind.TENSOR else Value(kind=Kind.TENSOR, group=v.group, grad=2)
            for v in weight
        ]
        renorm = f"`{what}(...)` (max_norm renormalises the rows it reads)"
        write = self._write(tensors, node, renorm, no_grad=True)
        if write is not None:
            write.target = weight_text

    def _instance_attribute(self, cls: ClassFacts, attr: str) -> Value | None:
        """``model.opt`` for the one instance of a class: the optimizer its ``__init__``
        stored on ``self``, if it did."""
        if not self._single_instance(cls.name):
            return None
        known = self.class_values.get((cls.name, attr))
        return known if known is not None and known.kind is Kind.OPTIMIZER else None

    def _publish_init(
        self, scope: _Scope, cls: ClassFacts, only: frozenset[str] | None = None
    ) -> None:
        """After ``__init__``: the optimizers it stored on ``self`` (``self.opt =
        Adam(self.net.parameters())``) and the torch or same-file functions (``self.act =
        F.relu``) are what those attributes hold in every method. ``only``: for another
        method that builds them (``initialize()``), the attributes no other method assigns."""
        for name, values in scope.env.items():
            if not name.startswith("self.") or name.count(".") != 1 or not values:
                continue
            if only is not None and name not in only:
                continue
            held = [v for v in values if v.origin in (FUNCTION_ORIGIN, "def")]
            if len({(v.origin, v.group.name) for v in held}) == 1 and all(
                v.origin in (FUNCTION_ORIGIN, "def", NONE_ORIGIN) for v in values
            ):
                # ``self.act = F.relu`` (or None), ``self.radial_function = radial_function``
                # given a same-file function: every method calls that function through it
                self.class_values.setdefault((cls.name, name[5:]), held[0])
                continue
            if any(v.kind is not Kind.OPTIMIZER for v in values):
                continue
            optimizer = new_value(Kind.OPTIMIZER, name)
            optimizer.elements = [e for v in values for e in v.elements]
            if optimizer.elements:  # else the name-based guess stays (``_hinted_params``)
                self.class_values.setdefault((cls.name, name[5:]), optimizer)
        if only is None:
            self._publish_stepped(scope, cls)

    def _publish_attributes(self, scope: _Scope, cls: ClassFacts) -> None:
        """The tensors a method leaves on ``self`` carrying saves (``self.fake =
        self.netG(x)``): later methods that read the attribute differentiate that graph. Only
        for a class made at most once in the file (one ``self``)."""
        if self._constructions.get(cls.name, 0) > 1:
            return
        for name, values in scope.env.items():
            if not name.startswith("self.") or name.count(".") != 1:
                continue
            tensors = [v for v in values if v.kind is Kind.TENSOR]
            if tensors and any(v.saved for v in tensors):
                self.attribute_values[(cls.name, name[5:])] = tensors

    def _publish_stepped(self, scope: _Scope, cls: ClassFacts) -> None:
        """After ``__init__``: what it stored on ``self`` whose parameters one of its
        optimizers updates (``self.model = model`` beside ``self.opt = SGD(model
        .parameters())``) is that object in every method, so ``self.model.state_dict()``
        there shares the storage the optimizer's step writes."""
        stepped = {
            e.group.id
            for values in scope.env.values()
            for v in values
            if v.kind is Kind.OPTIMIZER
            for e in v.elements
        }
        for name, values in scope.env.items():
            if not name.startswith("self.") or name.count(".") != 1 or len(values) != 1:
                continue
            value = values[0]
            if value.group.id in stepped and not value.sure_tensor:
                self.class_values.setdefault((cls.name, name[5:]), value)

    def _replay_steps(
        self, callee: str, node: cst.Call, args: Args, on_self: bool, instance: str = ""
    ) -> None:
        """The backward points and optimizer steps a same-file helper takes on what this
        call passes (``update_params(self.q_optim, q_loss)``), in the helper's order; for a
        method called on ``self``, also its steps of ``self``'s optimizers; for one called on
        the one ``instance`` of its class the file makes, those of that instance's."""
        effects = self.step_summaries.get(callee)
        if not effects:
            return
        positional = [(arg, values) for kw, arg, values in args if not kw and not arg.star]
        keywords = {kw: (arg, values) for kw, arg, values in args if kw}
        for effect in effects:
            if effect.index < 0:
                if on_self:
                    self._replay_step(callee, effect, self._lookup(effect.param) or [])
                elif instance and effect.param.startswith("self."):
                    held = self.class_values.get((instance, effect.param[5:]))
                    self._replay_step(callee, effect, [held] if held is not None else [])
                continue
            passed = keywords.get(effect.param)
            if passed is None and effect.index < len(positional):
                passed = positional[effect.index]
            if passed is None:
                continue
            if effect.kind == "backward":
                retain = _retained(effect, keywords, positional)
                what = f"`{self._text(effect.node.func)}()` in `{callee}()`"
                self._backward(self._flatten(passed[1]), node, retain, what)
            else:
                self._replay_step(callee, effect, passed[1])

    def _replay_step(self, callee: str, effect: Effect, values: list[Value]) -> None:
        """``optim.step()`` inside a helper, on the optimizer the caller passed."""
        stepped = [e for v in values if v.kind is Kind.OPTIMIZER for e in v.elements]
        if not stepped:
            return
        what = f"`{self._text(effect.node.func)}()` in `{callee}()`"
        self._write(stepped, effect.node, what, optimizer=True, stmt=effect.stmt, callee=callee)

    def _replay_attribute_writes(self, class_name: str, method: str) -> None:
        """``self._dequeue_and_enqueue(k)``: the method's in-place writes to ``self.queue``
        move the version of the caller's ``self.queue``, so a save of it made before the
        call is broken. Only the ledger moves: the callee's own analysis judged the writes
        themselves (leaf writes, stale reads)."""
        written, no_grad = self.attribute_summaries.get(f"{class_name}.{method}", ([], False))
        for attribute in written:
            values = self._lookup(f"self.{attribute.attr}") or []
            tensors = [
                v for v in values if v.kind is Kind.TENSOR and (v.sure or not attribute.augmented)
            ]
            if not tensors:
                continue
            write = Write(
                node=attribute.node,
                stmt=attribute.stmt,
                what=f"{attribute.what} in `{method}()`",
                target=f"self.{attribute.attr}",
                seq=self._next(),
                no_grad=no_grad or self.scope.no_grad,
                path=tuple(self._path),
            )
            write.name = f"self.{attribute.attr}"
            for group in {v.group.id: v.group for v in tensors}.values():
                group.bump(write, False)

    def _mark_flows(self) -> None:
        """At the top of a plain function: a mark in the history of each tensor parameter,
        so that what the function returns shows which parameters it was computed from."""
        scope = self.scope
        ctx = scope.ctx
        if ctx.node is None or ctx.cls is not None or ctx.role:
            return
        for param in (*ctx.node.params.posonly_params, *ctx.node.params.params):
            name = param.name.value
            values = scope.env.get(name, [])
            if len(values) != 1 or values[0].kind is not Kind.TENSOR:
                continue
            mark = ledger.save(Group(name=name), "", None, FLOW, name, ())
            values[0].hist.add(mark)
            scope.flow_marks[mark.id] = name

    def _note_returned_flows(self, scope: _Scope) -> None:
        """After a plain function: which of its marked parameters its results came from
        (``x.detach()`` and fresh tensors carry no mark)."""
        func = scope.ctx.node
        if func is None or not scope.flow_marks:
            return
        marks = scope.flow_marks
        flowing = frozenset(marks[r.id] for v in scope.escapes for r in v.hist if r.id in marks)
        self.returned_flows[id(func)] = (flowing, frozenset(marks.values()))

    def _plain_call_inputs(self, name: str, args: Args) -> list[Value]:
        """The values a same-file plain function's result may depend on: every argument,
        or, once the function has been analysed, those it computes its result from."""
        func = self.functions.get(name)
        flows = self.returned_flows.get(id(func)) if func is not None else None
        if func is None or flows is None:
            return [v for _, _, vs in args for v in vs]
        return _flowing(func, flows, args)

    def _note_return_shape(self, node: cst.BaseExpression, values: list[Value]) -> None:
        """One ``return``: the values at each position when it returns a tuple (a display of
        one value per element, or a call that gives back a record), else None. A position
        keeps a container whole (``return feat_masks, edge_masks``, two dicts)."""
        shaped = len(values) == 1 and values[0].kind is Kind.CONTAINER and values[0].elements
        if shaped and isinstance(node, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                shaped = False
            elif len(node.elements) != len(values[0].elements):  # a position of several values
                self.scope.returns.append(slot_positions(values[0], len(node.elements)))
                return
        elif shaped:
            shaped = isinstance(node, cst.Call)
        positions = [[e] for e in values[0].elements] if shaped else None
        self.scope.returns.append(positions)

    def _note_returned_saves(self, scope: _Scope) -> None:
        """What a method's result depends on: the saves of module parameters it carries,
        position by position when every ``return`` gives a tuple of one length."""
        ctx = scope.ctx
        if ctx.cls is None or ctx.node is None or ctx.role.startswith("fn_"):
            return
        positions = scope.returned_positions()
        groups = positions if positions is not None else [scope.escapes]
        saves = [_parameter_saves(self._flatten(values)) for values in groups]
        if any(saves):
            self.returned_saves[(ctx.cls.name, ctx.name)] = saves

    def _method_result(
        self, class_name: str, method: str, owner: Value | None, inputs: list[Value]
    ) -> Value | None:
        """A method's result at this call, with new saves (made here, at the versions the
        parameters have now) of the module parameters it depends on: on ``self`` (``owner``
        None) the same modules; on another instance of the class, that instance's
        submodules of the same names. A tuple is given back position by position. None when
        the method is not known to carry any such save."""
        known = self.returned_saves.get((class_name, method))
        if known is None:
            return None
        if self.scope.no_grad:  # ``with torch.no_grad(): policy.sample(s)``: no graph
            known = [[] for _ in known]
        cls = self.classes.get(class_name)
        parts: list[Value] = []
        for records in known:
            part = self._unknown(inputs=inputs)
            part.hist |= self._saves_here(records, cls, owner)
            parts.append(part)
        if len(parts) == 1:
            return parts[0]
        record = new_value(Kind.CONTAINER)
        record.elements = parts
        return record

    def _saves_here(
        self, records: list[SaveRecord], cls: ClassFacts | None, owner: Value | None
    ) -> set[SaveRecord]:
        """New saves, at this call and at the current versions, of what ``records`` saved
        in a method of ``cls``: the same groups for ``self`` (``owner`` None), else the
        owner's submodule of the same name (the whole owner where there is none)."""
        found: set[SaveRecord] = set()
        path = tuple(self._path)
        for record in records:
            group = record.group if owner is None else self._owner_group(cls, owner, record.group)
            found.add(ledger.save(group, record.op, record.node, "parameters", record.tensor, path))
        return found

    def _owner_group(self, cls: ClassFacts | None, owner: Value, group: Group) -> Group:
        """The group of ``owner``'s submodule that ``group`` is for ``self`` in the class,
        or the owner's own group."""
        if cls is not None and owner.module is not None:
            for attr in cls.modules:
                value = self.class_values.get((cls.name, attr))
                if value is not None and value.group is group:
                    return self._submodule(owner, cls, attr).group
        return owner.group

    def _forward_saves(self, class_name: str, owner: Value, size: int) -> list[set[SaveRecord]]:
        """Position by position, new saves of the submodules a same-file module's forward
        computed each returned element through (empty when not known: the caller falls
        back to the whole module)."""
        shape = self.returned_saves.get((class_name, "forward"))
        if shape is None or len(shape) != size:
            return [set() for _ in range(size)]
        cls = self.classes.get(class_name)
        return [self._saves_here(records, cls, owner) for records in shape]

    def _method_output_saved(
        self, modules: list[Value], method: str, result: Value, node: cst.Call
    ) -> None:
        """``model.forward_head(x)`` whose every return an op in the method saved (a ReLU's
        output, a view of it): the result is saved at this call too."""
        if result.kind is not Kind.TENSOR or self.scope.no_grad:
            return
        classes = [c for m in modules if m.module is not None for c in m.module.classes]
        ops = [self.method_saves_output.get((c, method)) for c in classes]
        if ops and all(ops):
            result.grad = 2
            self._save(result, f"{ops[0]} in {classes[0]}.{method}", node, "result", [result])

    def _instance_method_writes(
        self, modules: list[Value], method: str, node: cst.Call, args: Args
    ) -> list[Value]:
        """``net.encode(images, focal)`` on an instance of one same-file class that defines
        ``encode``: that method's summarised writes to its parameters act on what this call
        passes, as a call of a plain helper's do (pixelNeRF's ``focal[..., 1] *= -1``).
        Returns the tensors the method writes and hands back. On the one instance of its
        class the file makes, the method's backward passes over the graphs it was handed
        and its optimizer steps happen here too (``model.optimize_D()`` after
        ``model.optimize_G()``). Instances that may be of several classes are left alone."""
        classes = {c for m in modules if m.module is not None for c in m.module.classes}
        if len(classes) != 1:
            return []
        (name,) = classes
        cls = self.classes.get(name)
        if cls is None or method not in cls.methods:
            return []
        entry = self.summaries.get(f"{name}.{method}")
        given_back = []
        if entry is not None:
            self._note_call_args(method, args, f"{name}.{method}")
            given_back = self._apply_mutations(method, node, args, *entry)
        if self._single_instance(name):
            self._replay_method_backwards(name, method, node)
            self._replay_steps(f"{name}.{method}", node, args, on_self=False, instance=name)
        return given_back

    def _defines(self, receiver: list[Value], expr: cst.BaseExpression, method: str) -> bool:
        """``receiver`` (``expr``) is ``self`` or an instance of same-file classes, one of
        which defines ``method`` (a ``backward`` of its own, not a tensor's)."""
        cls = self.scope.ctx.cls
        if isinstance(expr, cst.Name) and expr.value == "self" and cls is not None:
            return method in cls.methods
        classes = {c for v in receiver if v.module is not None for c in v.module.classes}
        return any(method in self.classes[c].methods for c in classes if c in self.classes)

    def _instance_call(self, values: list[Value] | None, node: cst.Call) -> list[Value] | None:
        """``mitigator(embeddings, direction)`` on an instance of a same-file plain class
        (built by its constructor here): a call of its ``__call__``, whose parameters then
        know what this call passes. None for any other call."""
        cls = self.classes.get(instance_class(values) or "")
        if cls is None or "__call__" not in cls.methods:
            return None
        args = self._args(node)
        given_back = self._record_call("__call__", node, args, cls.name)
        return given_back or [self._unknown(inputs=[v for _, _, vs in args for v in vs])]

    def _owned_method_writes(
        self, receiver: list[Value], method: str, node: cst.Call, args: Args
    ) -> list[Value] | None:
        """``self.sampler.apply_temperature(logits, t)`` on a value of no known kind, where
        exactly one same-file plain class defines ``apply_temperature`` and no tensor has a
        method of that name: that method's summarised writes act on what this call passes
        (vLLM's sampler dividing the caller's logits). Returns what it hands back written, or
        an unknown value; None where the call is not such (modules, Functions and optimizers
        are known by their own values)."""
        known = [v for v in receiver if v.kind is not Kind.OTHER]
        if any(v.kind is not Kind.TENSOR or v.sure for v in known):
            return None
        owner = self._method_owners.get(method)
        own = f"{owner}.{method}"
        entry = self.summaries.get(own) if owner is not None else None
        if entry is None:
            return None
        self._note_call_args(method, args, own)
        # a method found by its name alone writes only what is known to be a tensor here; on
        # an instance that class's constructor built (``metric.update(pred, target)`` where
        # every call passes ``Procrustes()``), it is that method for sure
        strict = instance_class(receiver) != owner
        given_back = self._apply_mutations(method, node, args, *entry, strict=strict)
        return given_back or [self._unknown(inputs=[v for _, _, vs in args for v in vs])]

    def _module_method(
        self, modules: list[Value], method: str, inputs: list[Value]
    ) -> Value | None:
        """``model.sample(x)`` on a same-file module: its result, with the saves of module
        parameters it carries (None when the method is not known to carry any)."""
        for module in modules:
            spec: ModuleSpec | None = module.module
            for name in spec.classes if spec is not None else ():
                result = self._method_result(name, method, module, inputs)
                if result is not None:
                    return result
        return None


def _set_literally(value: cst.BaseExpression) -> bool:
    """A literal number or ``True`` (``max_norm=1.0``): an argument known to be set."""
    if isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, cst.Integer | cst.Float):
        return True
    return isinstance(value, cst.Name) and value.value == "True"


def _parameter_saves(values: list[Value]) -> list[SaveRecord]:
    """The saves of module parameters in the history of ``values``, oldest first."""
    found = {r for v in values for r in v.hist if r.role == "parameters"}
    return sorted(found, key=lambda r: r.id)


def _flowing(
    func: cst.FunctionDef, flows: tuple[frozenset[str], frozenset[str]], args: Args
) -> list[Value]:
    """What a call passes that the plain function's result may be computed from: the
    arguments for parameters that flow into it, and any argument not matched to a marked
    parameter (a container, ``*args``, an unknown keyword)."""
    flowing, marked = flows
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    out: list[Value] = []
    position = 0
    for keyword, arg, values in args:
        if arg.star:
            out += values
            continue
        if keyword:
            name = keyword
        else:
            name = names[position] if position < len(names) else ""
            position += 1
        if name in flowing or name not in marked:
            out += values
    return out


def _retained(
    effect: Effect,
    keywords: dict[str, tuple[cst.Arg, list[Value]]],
    positional: list[tuple[cst.Arg, list[Value]]],
) -> bool:
    """Whether the helper's backward keeps the graph, given what this call passes."""
    if isinstance(effect.retain, bool):
        return effect.retain
    name, index, default = effect.retain
    passed = keywords.get(name)
    if passed is None and 0 <= index < len(positional):
        passed = positional[index]
    if passed is None:
        return default
    return literal_bool(passed[0].value) is not False
