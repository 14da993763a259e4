"""Expression handlers: names, attributes, subscripts, operators and displays.

A read of a name is where stale reads and uses of hidden writes are noticed (:meth:`_load`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.callables import FUNCTION_ORIGIN, NONE_ORIGIN, function_value
from inplace_lint.facts.classes import ClassFacts
from inplace_lint.facts.conditions import condition_key
from inplace_lint.facts.function_saves import saved_tensor
from inplace_lint.facts.heuristics import (
    _mentions_inplace,
)
from inplace_lint.facts.index_disjoint import disjoint_indices
from inplace_lint.facts.ledger import Pending as _Pending
from inplace_lint.facts.model import (
    Group,
    Kind,
    ModuleSpec,
    Value,
    Write,
    at_position,
    held_elements,
    new_value,
)
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.ops import (
    METADATA_ATTRIBUTES,
)
from inplace_lint.facts.read_apart import ReadApart, read_indices
from inplace_lint.facts.state import _Scope
from inplace_lint.facts.syntax import (
    _BINARY_OPS,
    _LITERALS,
    _constant_index,
    _string_key,
    _subscript_texts,
    int_index,
    none_comparison,
    target_names,
)
from inplace_lint.facts.vanishing import fill_value, minus_infinity


def _saved_element(saved: Value, index: int | None) -> Value:
    """One of the tensors a custom Function saved: the one at ``index`` when forward's saves
    are known by position (``function_saves``), else a saved tensor."""
    elements = saved.elements
    if saved.literal_container and index is not None and -len(elements) <= index < len(elements):
        return elements[index]
    return saved_tensor()


class Expressions(ReadApart):
    """The expressions room of the interpreter (see the module docstring)."""

    def _eval(self, node: cst.BaseExpression | None) -> list[Value]:
        """The values ``node`` may evaluate to, noting reads, saves and writes on the way."""
        if node is None:
            return []
        # libcst's node classes have an ABC metaclass, which makes isinstance slow; these
        # are concrete classes without subclasses, so their type says the same
        kind = type(node)
        if kind is cst.Call:
            return self._eval_call(node)  # type: ignore[attr-defined,arg-type]  # the calls room
        handler = _HANDLERS.get(kind)
        if handler is None:
            return [self._unknown()]
        return handler(self, node)

    def _eval_literal(self, node: cst.BaseExpression) -> list[Value]:
        return [new_value(Kind.OTHER)]

    def _eval_binary(self, node: cst.BinaryOperation) -> list[Value]:
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

    def _eval_unary(self, node: cst.UnaryOperation) -> list[Value]:
        inner = self._eval(node.expression)
        if isinstance(node.operator, cst.Not):
            return [new_value(Kind.OTHER)]
        return [self._derived(inner, node)]

    def _eval_comparison(self, node: cst.Comparison) -> list[Value]:
        metadata = any(
            isinstance(c.operator, cst.Is | cst.IsNot | cst.In | cst.NotIn)
            for c in node.comparisons
        )
        with self._meta.raised(metadata):
            values = list(self._eval(node.left))
            for comp in node.comparisons:
                values.extend(self._eval(comp.comparator))
        if metadata:
            return [new_value(Kind.OTHER)]
        # a comparison with a tensor is a bool tensor; with what may be one, a bool of no
        # known kind (as an index a mask, which gathers a copy: ``logits[labels != -100]``)
        if any(v.kind is Kind.TENSOR and v.sure for v in values):
            return [new_value(Kind.TENSOR, grad=0, dtype="bool")]
        if any(v.kind is Kind.TENSOR for v in values):
            return [new_value(Kind.OTHER, dtype="bool")]
        return [new_value(Kind.OTHER)]

    def _eval_boolean(self, node: cst.BooleanOperation) -> list[Value]:
        return self._eval(node.left) + self._eval(node.right)

    def _eval_subscript(self, node: cst.Subscript) -> list[Value]:
        self._subscript_of[id(node.value)] = node
        with self._indexing.raised(not _constant_index(node)):
            base = self._eval(node.value)
        advanced = self._eval_slices(node)
        key = _string_key(node)
        out: list[Value] = []
        for value in base:
            if value.kind is Kind.CONTAINER and value.origin == "saved":
                out.append(_saved_element(value, int_index(node)))  # ``ctx.saved_tensors[0]``
                continue
            stored = self._stored_item(value, node) if key is None else None
            if stored is not None:  # ``out[j]`` right after ``out[j] = pred_layer(out[j])``
                out.extend(stored)
                continue
            elements = self._element(value, key, advanced)
            if value.kind is Kind.CONTAINER and key is None:
                elements = at_position(value, elements, int_index(node))
            if value.kind is Kind.TENSOR and not value.view and not advanced and key is None:
                texts = _subscript_texts(self.module, node)
                for element in elements:
                    if element.view and element.group is value.group:
                        element.index = texts
            out.extend(elements)
        return out

    def _element(self, value: Value, key: str | None, advanced: bool) -> list[Value]:
        """What ``value[...]`` gives: a string-keyed item, a container element, a submodule,
        a gathered copy or a view."""
        if key is not None and key in value.items:
            return list(value.items[key])
        if key is not None and value.kind is Kind.TENSOR:
            # ``outputs["loss"]``: no tensor takes a string index, so ``outputs`` is a
            # mapping (a dict, a ModelOutput) and its items are not views of it
            # (a parameter taken for a tensor only by its place, ``forward(self, batch)``,
            # says nothing of what its items hold)
            item = self._unknown(inputs=[value], sure=value.sure and value.origin != "arg")
            item.grad_assumed = value.grad_assumed  # an item of what was assumed to need grad
            value.kind = Kind.CONTAINER
            value.items[key] = [item]
            value.elements.append(item)
            return [item]
        if key is not None:  # ``dict(m.named_parameters())["w"]``: any of its parameters
            named = value.kind is Kind.CONTAINER and value.origin == "named"
            return (value.elements if named else []) or [self._unknown()]
        if value.kind is Kind.CONTAINER:
            return value.elements or [self._unknown_element(value)]
        listed = value.module is not None and (value.module.members or value.module.member_specs)
        if value.kind is Kind.MODULE and listed:
            return self._list_members(value)
        if value.kind is Kind.MODULE:
            # ``model[0]`` of a Sequential or ModuleList: a submodule, whose
            # parameters are the container's
            spec = ModuleSpec(qualname=None, node=None)
            return [Value(kind=Kind.MODULE, group=value.group, module=spec)]
        if value.kind is Kind.TENSOR and value.several:
            return [self._part(value)]  # ``x.chunk(2)[0]``: one of the views
        if value.kind is Kind.TENSOR and advanced:
            # gathered by a tensor, list or mask index: a new tensor, never a view
            copy = new_value(Kind.TENSOR, grad=value.grad, sure=value.sure)
            copy.grad_assumed = value.grad_assumed
            copy.hist |= value.hist
            return [copy]
        if value.kind is Kind.TENSOR:
            return [self._view(value)]
        return [self._unknown()]

    def _eval_display(self, node: cst.List | cst.Tuple | cst.Set) -> list[Value]:
        container = new_value(Kind.CONTAINER, literal_container=True)
        container.py_list = isinstance(node, cst.List)
        start = self._next()
        held: list[tuple[str, cst.Name, set[int], int]] = []
        starred = any(isinstance(e, cst.StarredElement) for e in node.elements)
        for position, element in enumerate(node.elements):
            values = self._eval(element.value)
            if isinstance(element, cst.StarredElement):
                values = self._flatten(values)
            elif isinstance(element.value, cst.Name):
                groups = {v.group.id for v in values if v.kind is Kind.TENSOR}
                held.append((element.value.value, element.value, groups, self._next()))
            if not starred:  # each value's position: ``(kind, x)``, ``x`` one of two values
                container.slots.update((v.id, position) for v in values)
            container.elements.extend(values)
        if held and not self._meta.depth:
            self._stale_in_display(start, held)
        return [container]

    def _eval_dict(self, node: cst.Dict) -> list[Value]:
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

    def _eval_ifexp(self, node: cst.IfExp) -> list[Value]:
        decided = self._function_none_test(node.test)
        if decided is not None:  # ``loss_fn if loss_fn is not None else F.mse_loss``
            return self._eval(node.body if decided else node.orelse)
        self._eval(node.test)
        scope = self.scope
        marks = (len(scope.stale), len(scope.hidden))
        branch = self._next()
        self._path.append((branch, 0))
        with self._inplace_guard.raised(_mentions_inplace(node.test)):
            body = self._eval(node.body)
        self._path[-1] = (branch, 1)
        held = (scope.stale[marks[0] :], scope.hidden[marks[1] :])
        del scope.stale[marks[0] :], scope.hidden[marks[1] :]
        orelse = self._eval(node.orelse)
        self._path.pop()
        scope.stale.extend(held[0])
        scope.hidden.extend(held[1])
        condition = condition_key(node.test, scope.bindings)
        if condition is not None:  # ``t = a if c else b``: which value goes with which arm
            self._conditions[branch] = condition
            both = {v.id for v in body} & {v.id for v in orelse}
            for arm, values in enumerate((body, orelse)):
                for value in values:
                    if value.id not in both:
                        self._chosen[value.id] = ((branch, arm),)
        return body + orelse

    def _function_none_test(self, test: cst.BaseExpression) -> bool | None:
        """``f is None`` / ``f is not None`` where ``f`` holds a function only (a same-file
        or a torch function every caller or construction passes): the test's value."""
        tested = none_comparison(test)
        if tested is None or not isinstance(tested[0], cst.Name):
            return None
        values = self._lookup(tested[0].value)
        if not values or any(v.origin not in ("def", FUNCTION_ORIGIN) for v in values):
            return None
        return not tested[1]

    def _eval_named(self, node: cst.NamedExpr) -> list[Value]:
        values = self._eval(node.value)
        self._assign(node.target, values, node.value)
        return values

    def _eval_await(self, node: cst.Await) -> list[Value]:
        return self._eval(node.expression)

    def _eval_yield(self, node: cst.Yield) -> list[Value]:
        value = node.value
        if isinstance(value, cst.BaseExpression):
            values = self._eval(value)
            self.scope.escapes.extend(values)
        return [self._unknown()]

    def _eval_comprehension(self, node: cst.BaseExpression) -> list[Value]:
        container = self._comprehension(node)
        container.py_list = isinstance(node, cst.ListComp)
        return [container]

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
        if isinstance(expr, cst.IfExp):
            self._settle(expr.body, name)
            self._settle(expr.orelse, name)
            return
        for pending in self._chain_pendings(expr):
            if name is None or pending.written_name == name:
                pending.write.elsewhere = False

    def _rebuilds(self, target: cst.BaseExpression | None) -> bool:
        """The assignment being evaluated assigns ``target`` again (written the same)."""
        if target is None or not self._assigning:
            return False
        text = self.module.code_for_node(target)
        return any(self.module.code_for_node(t) == text for t in self._assigning)

    def _bound_away(self, expr: cst.BaseExpression | None) -> None:
        """``mixed = x[:8].lerp_(y)``: the in-place results in ``expr`` are now held by a
        name, so a later read of the written base may want the old values."""
        for pending in self._chain_pendings(expr):
            pending.bound_away = True

    def _comprehension(self, node: cst.BaseExpression) -> Value:
        """A comprehension's container. For a list, set or generator its element is ``elt``
        computed once with the loop targets bound to what one iteration yields (so
        ``[conv(x) for conv in self.convs]`` holds what each conv returns, with its saves);
        the targets' outer bindings are put back after, as they are in Python 3."""
        container = new_value(Kind.CONTAINER)
        elt = getattr(node, "elt", None)
        if elt is None:  # a dict comprehension: its items stay unknown
            inner: list[Value] = []
            comp_for = getattr(node, "for_in", None)
            while comp_for is not None:
                inner += self._eval(comp_for.iter)
                comp_for = comp_for.inner_for_in
            container.elements.append(self._unknown(inputs=inner))
            return container
        scope = self.scope
        kept: dict[str, tuple[object, ...]] = {}
        comp_for = node.for_in  # type: ignore[attr-defined]
        while comp_for is not None:
            for name in target_names(comp_for.target):
                if name not in kept:
                    kept[name] = tuple(
                        table.get(name, _MISSING)
                        for table in (scope.env, scope.bindings, scope.bound_inplace, scope.arms)
                    )
            zipped = self._zipped(comp_for)
            elements = [] if zipped is not None else self._iterate(self._eval(comp_for.iter))
            self._bind_loop_target(comp_for.target, elements, zipped[0] if zipped else {})
            for test in comp_for.ifs:
                self._eval(test.test)
            comp_for = comp_for.inner_for_in
        try:
            values = self._eval(elt)
        finally:
            for name, saved in kept.items():
                tables = (scope.env, scope.bindings, scope.bound_inplace, scope.arms)
                for table, old in zip(tables, saved, strict=True):
                    if old is _MISSING:
                        table.pop(name, None)  # type: ignore[attr-defined]
                    else:
                        table[name] = old  # type: ignore[index]
        container.elements.extend(values or [self._unknown()])
        return container

    def _eval_slices(self, node: cst.Subscript) -> bool:
        """Evaluate the index; True when it is advanced (a tensor, list or mask): a copy."""
        advanced = False
        with self._meta:
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    index = element.slice.value
                    values = self._eval(index)
                    advanced = advanced or isinstance(
                        index, cst.List | cst.ListComp | cst.Comparison
                    )
                    # a tensor, a bool mask, or a Python list (``x[idx]`` after ``idx = []``)
                    advanced = advanced or any(
                        (v.kind is Kind.TENSOR and v.sure)
                        or v.dtype == "bool"
                        or (v.kind is Kind.CONTAINER and v.py_list)
                        for v in values
                    )
                else:
                    for part in (element.slice.lower, element.slice.upper, element.slice.step):
                        if part is not None:
                            self._eval(part)
        return advanced

    def _eval_name(self, node: cst.Name) -> list[Value]:
        name = node.value
        values = self._lookup(name)
        if values is None:
            if name in ("True", "False", "None"):
                return [new_value(Kind.OTHER, origin=NONE_ORIGIN if name == "None" else "")]
            qualified = self.imports.qualify(node)
            if qualified in self.table.functions and name not in self.functions:
                return [function_value(qualified)]  # ``act = sigmoid`` (from torch import ...)
            if name in self.functions and name not in self.classes:
                return [new_value(Kind.OTHER, name, origin="def")]  # ``fn = radial``: that def
            if name in self.classes or qualified:
                return [new_value(Kind.OTHER, name)]
            return [self._unknown(name)]
        self._load(name, values, node)
        return list(values)  # a copy: callers may extend what they get

    def _second_update(
        self, pending: _Pending, name: str, values: list[Value], node: cst.CSTNode
    ) -> bool:
        """In a state update (``pending.alias_only``), the one stale read: another plain name
        bound to the very tensor written (``update = exp_avg = state["exp_avg"]``) that is
        itself updated in place, so two update rules compound on one state."""
        return (
            len(pending.written) == 1
            and pending.snapshot_read(name, values)
            and id(node) in self._updating_reads
        )

    def _load(self, name: str, values: list[Value], node: cst.CSTNode) -> None:
        if self._meta.depth:
            return
        scope = self.scope
        now = self._next()
        binding = scope.bindings.get(name, 0)
        groups = {v.group.id for v in values if v.kind is Kind.TENSOR}
        stand = scope.stand_ins.get(name)
        own = groups - stand[1] if stand is not None and stand[0] == binding else groups
        indexing = self._indexing.take()
        subscript = self._subscript_of.get(id(node))
        position = int_index(subscript) if subscript is not None else None
        key = _string_key(subscript) if subscript is not None else None
        held = held_elements(values, position, key, not indexing)
        matched: list[_Pending] = []
        overwriting = id(node) in self._overwriting_reads
        for pending in () if overwriting else scope.stale:
            if pending.done or now <= pending.seq or binding >= pending.seq:
                continue
            stored = {g for g, when in held if when < pending.seq}
            if not (own | stored) & pending.groups:
                continue
            snapshot = pending.snapshot_only and pending.snapshot_read(name, values)
            if pending.snapshot_only and not snapshot:
                continue
            if pending.alias_only and not (
                snapshot or self._second_update(pending, name, values, node)
            ):
                continue
            if any(pending.soft_alias(v) for v in values if v.group.id in pending.groups):
                continue
            if name == pending.written_name and not pending.bound_elsewhere:
                continue
            if name == pending.written_name and self._rebuilds(pending.bound_target):
                continue  # ``x_dict[k] = F.relu_(x)`` then ``x_dict[k] = F.dropout(x)``
            if pending.through_view and not (pending.bound_away and pending.bound_elsewhere):
                continue  # the write was meant for the view's base
            if self._meant_for(pending, values, node):
                continue  # ``for t in tensors: normalize_(t)`` then ``tensors`` read
            if pending.loops and self._other_iteration_element(pending, node):
                continue
            if pending.loops and self._apart_by_once_arm(pending, values):
                continue
            read = read_indices(values, pending, self._read_texts(node))
            written = self._written_indices(pending)
            if disjoint_indices(written, read) and not self._indices_moved(pending, written, read):
                continue  # ``s[:, i] = ...`` then ``next_word = s[:, i + 1]`` read
            matched.append(pending)
        if matched:
            for pending in matched:
                pending.done = True
            # every write that changed the value since the read's name took it is a finding
            for pending in sorted(matched, key=lambda p: p.seq):
                how = (
                    "it aliases the written tensor"
                    if name != pending.written_name
                    else "the in-place result was bound to a new name"
                    if pending.bound_away
                    else "the in-place result is used as a new tensor"
                )
                self.facts.stale_reads.append(ev.StaleRead(pending.write, node, name, how))
        groups |= {g for g, _ in held}
        self._stale_snapshot(values, node, name, now)
        if scope.no_grad:
            return
        for pending in scope.hidden:
            if pending.done or now <= pending.seq or not groups & pending.groups:
                continue
            if id(node) in self._untracked_reads or not any(v.grad for v in values if v.is_tensor):
                continue  # ``x.data``, ``x.detach()``, its detached alias: no use autograd records
            if id(node) in self._vanishing_reads and self._fills_minus_infinity(pending.write):
                continue  # softmax of a -inf fill: zero gradient there either way
            pending.done = True
            back = id(node) in self._handed_back and all(v.origin == "arg" for v in values)
            by = scope.ctx.name if back else ""  # ``return tensor``: the caller's own
            self.facts.hidden_reads.append(ev.HiddenWriteRead(pending.write, node, name, by))

    def _meant_for(self, pending: _Pending, values: list[Value], node: cst.CSTNode) -> bool:
        """The write went through a loop's target into the list read here, and the read
        wants the new values: any read after a procedure wrote the element; after a direct
        write (``for acc in accs: acc.add_(g)``) or one by a helper that returns what it
        wrote (``tile = blend(row[j - 1], tile)``), a read inside the loop working through
        the list, or the function handing the list back (``return accs``)."""
        if not pending.meant_for:
            return False
        # the list itself, or what it holds (a list of lists read as its tensors)
        if not all(v.id in pending.meant_for or v.group.id in pending.groups for v in values):
            return False
        at = pending.meant_at
        if at is None or id(node) in self._handed_back:
            return True
        return any(id(node) in nodes for nodes in at)

    def _fills_minus_infinity(self, write: Write) -> bool:
        value = fill_value(write)
        cls = self.scope.ctx.cls
        constants = cls.constants if cls is not None else None
        return value is not None and minus_infinity(value, self.imports, constants)

    def _stale_snapshot(
        self, values: list[Value], node: cst.CSTNode, name: str, now: int, stored: bool = False
    ) -> None:
        """``best = model.state_dict()`` read after an optimizer step (or, ``stored``, kept on
        ``self`` when the method returns): the dict holds the parameters themselves, so the
        update meant for the model changed the snapshot too."""
        held: dict[int, int] = {}  # group -> when the earliest snapshot the name may hold took it
        for value in values:
            if value.kind is Kind.CONTAINER and value.snapshot:
                for element in value.elements:
                    when = value.added.get(element.id, 0)
                    held[element.group.id] = min(when, held.get(element.group.id, when))
        if not held:
            return
        # each snapshot carries its own time: a name bound on only some paths (``if better:
        # best = model.state_dict()`` in a loop) may still hold one taken before the update
        for pending in self.scope.updates:
            if pending.done or now <= pending.seq:
                continue
            if any(held[g] < pending.seq for g in pending.groups & held.keys()):
                pending.done = True
                how = "`state_dict()` returns the module's own tensors, not copies"
                event = ev.StaleRead(pending.write, node, name, how, stored=stored)
                self.facts.stale_reads.append(event)

    def _stored_snapshots(self, scope: _Scope) -> None:
        """At a method's end: a ``state_dict()`` kept on ``self`` that an update changed
        since, which whoever reads the attribute later gets."""
        now = self._next()
        for name, values in scope.env.items():
            if name.startswith("self.") and name in scope.stores:
                self._stale_snapshot(values, scope.stores[name], name, now, stored=True)

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
            qualified = self.imports.qualify(node)
            if qualified in self.table.functions:
                return [function_value(qualified)]  # ``self.act = F.relu``
            if qualified is not None:
                return [new_value(Kind.OTHER, name)]
            cls = self.scope.ctx.cls
            if name == f"self.{attr}" and cls is not None and self._plain_method(cls, attr):
                return [new_value(Kind.OTHER, name)]  # ``view_func = self._channel_view``
            if (
                name.count(".") == 1
                and name.startswith("self.")
                and attr not in METADATA_ATTRIBUTES
            ):
                # ``self.cumulative`` set in another method: unknown, but one value for every
                # read in this method until it is rebound (``location = self.cumulative
                # .unsqueeze(1)`` then ``self.cumulative += a`` write the same storage)
                value = self._unknown(name)
                self.scope.env[name] = [value]
                self.scope.bindings.setdefault(name, 0)
                return [value]
        if attr in METADATA_ATTRIBUTES:
            with self._meta:
                base = self._eval(node.value)
            if attr == "grad":
                return [new_value(Kind.TENSOR, grad=0, sure=True)]
            return [new_value(Kind.OTHER)]
        if attr == "data":
            self._untracked_reads.add(id(node.value))
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
                in_backward = self.scope.ctx.role == "fn_backward"
                known = self._saved_in_backward(attr) if in_backward else None
                out.append(known or new_value(Kind.CONTAINER, origin="saved"))
            else:
                out.append(self._unknown(inputs=[value] if value.kind is Kind.TENSOR else ()))
        return out

    @staticmethod
    def _plain_method(cls: ClassFacts, attr: str) -> bool:
        """``self.attr`` names a method of a class that is no module (an optimizer, a plain
        helper class) and is never assigned: a bound method, whose results need grad only
        as far as its arguments do, not a tensor or a model."""
        return attr in cls.methods and attr not in cls.assigned and not cls.is_module

    def _module_attribute(self, module: Value, attr: str) -> Value:
        """``module.weight``: a parameter, unless the module's class made it a buffer."""
        cls = self.classes.get(module.module.user_class or "") if module.module else None
        if cls is None and module.module is not None and module.module.user_class:
            return self._unknown()  # another file's class (project mode): its attributes unseen
        if cls is not None and attr in cls.buffers:
            return Value(kind=Kind.TENSOR, group=Group(name=attr), grad=0)
        frozen = module.group.is_frozen() or attr in module.group.frozen_attributes
        grad = 0 if frozen else 2  # ``requires_grad_(False)`` froze it
        if cls is not None and attr in cls.parameters:
            # one of the owner's parameters: a write to it is not a write to its submodules
            group = self._owned_group(module, attr)
            return Value(kind=Kind.TENSOR, group=group, grad=grad, leaf=grad == 2)
        if attr in self._torch_parameters(module.module):
            return Value(kind=Kind.TENSOR, group=module.group, grad=grad, leaf=grad == 2)
        if cls is not None and attr in cls.modules:
            # a submodule: its parameters are also the owner's, saved by the owner's forward
            return self._submodule(module, cls, attr)
        known = self._instance_attribute(cls, attr) if cls is not None else None
        return known or self._unknown()

    def _torch_parameters(self, spec: ModuleSpec | None) -> frozenset[str] | tuple[str, ...]:
        """The parameter names of a torch module the table knows (``nn.LSTM``: ``weight_ih_l0``
        ...), or, for a module of unknown class, every name torch gives a parameter."""
        info = self.table.modules.get(spec.qualname or "") if spec is not None else None
        return info.parameters if info is not None else self.table.parameter_names

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
        result.grad_assumed = self._assumed_of(lt + rt)
        for value in lt + rt:
            result.hist |= value.hist
        if isinstance(operator, cst.Divide):
            result.dtype = "float"  # true division of tensors gives a floating tensor
        op = _BINARY_OPS.get(type(operator))
        info = self.table.functions.get(f"torch.{op}") if op else None
        if info is not None and len(info.params) >= 2:
            self._record_saves(info, {info.params[0]: lt, info.params[1]: rt}, [result], node, op)
        return result


#: The handler of each expression node type; any other expression is an unknown value.
_HANDLERS: dict[type, Callable[[Expressions, Any], list[Value]]] = {
    cst.Name: Expressions._eval_name,
    cst.Attribute: Expressions._eval_attribute,
    **dict.fromkeys(_LITERALS, Expressions._eval_literal),
    cst.BinaryOperation: Expressions._eval_binary,
    cst.UnaryOperation: Expressions._eval_unary,
    cst.Comparison: Expressions._eval_comparison,
    cst.BooleanOperation: Expressions._eval_boolean,
    cst.Subscript: Expressions._eval_subscript,
    **dict.fromkeys((cst.List, cst.Tuple, cst.Set), Expressions._eval_display),
    cst.Dict: Expressions._eval_dict,
    cst.IfExp: Expressions._eval_ifexp,
    cst.NamedExpr: Expressions._eval_named,
    cst.Await: Expressions._eval_await,
    cst.Yield: Expressions._eval_yield,
    **dict.fromkeys(
        (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp),
        Expressions._eval_comprehension,
    ),
    cst.Lambda: Expressions._eval_literal,
}


_MISSING = object()
