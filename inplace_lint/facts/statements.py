"""Statement handlers: blocks, if/for/while/with/try/match, assignments of every target kind."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.binder import model_parts
from inplace_lint.facts.classes import (
    literal_bool,
)
from inplace_lint.facts.conditions import condition_key, grad_off_arms, plain_arms
from inplace_lint.facts.constant_tests import constant_test
from inplace_lint.facts.heuristics import (
    _mentions_inplace,
)
from inplace_lint.facts.model import MAX_HELD, Kind, Value, new_value, slot_positions
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.once_arms import at_most_once, last_iteration
from inplace_lint.facts.op_extras import (
    _AUG_METHOD,
    _ENABLE_GRAD,
    _NO_GRAD,
)
from inplace_lint.facts.stand_in import stand_in
from inplace_lint.facts.state import AnalyzerBase, ItemStore
from inplace_lint.facts.summaries import (
    replaces_element,
)
from inplace_lint.facts.syntax import (
    _AUG_OPS,
    _aug_binary,
    _counters,
    _orelse,
    _returns_indices,
    _string_key,
    _terminates,
    int_index,
    iterations,
    local_int_constants,
    rewritten_mapping,
    self_sourced,
    shifted_slices,
    variable_index,
)
from inplace_lint.facts.type_tests import type_arms


class Statements(AnalyzerBase):
    """The statements room of the interpreter (see the module docstring)."""

    def _block(self, body: Sequence[cst.CSTNode]) -> None:
        for index, stmt in enumerate(body):
            if isinstance(stmt, cst.If):
                self._if(stmt, body, index)
                if self._returns_for_certain(stmt):
                    return  # the rest of the block never runs
            else:
                self._statement(stmt)

    def _returns_for_certain(self, stmt: cst.If) -> bool:
        """An ``if`` whose test every instance settles, on an arm that ends in ``return`` or
        ``raise`` (``if self.inp_merge == "mlp": return ...``)."""
        known = self._constant_flag(stmt.test)
        if known is None:
            return False
        return _terminates(stmt.body.body if known else _orelse(stmt.orelse))

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

    def _constant_flag(self, test: cst.BaseExpression) -> bool | None:
        """The outcome an instance-configuration test has in every instance the file builds
        (``if self.inplace:``, ``if self.inp_merge == "mlp":``), else None."""
        return constant_test(test, self.scope.ctx.cls, self._attribute_stores)

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
            known = self._constant_flag(stmt.test)
            if known is not None:  # ``if self.inplace:`` where every construction gives False
                self._block(stmt.body.body if known else _orelse(stmt.orelse))
                return
            self._branches(
                [stmt.body.body, _orelse(stmt.orelse)],
                guarded=_mentions_inplace(stmt.test),
                condition=condition_key(stmt.test, scope.bindings),
                grad_off=grad_off_arms(stmt.test, self.imports.qualify),
                plain=plain_arms(stmt.test),
                no_tensor=type_arms(stmt.test, self._container_predicates, self.imports.qualify),
                once=self._once_if(stmt),
                test=stmt.test,
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
            self._bind(stmt.name.value, [new_value(Kind.OTHER, stmt.name.value, origin="def")])

    def _once_if(self, stmt: cst.If) -> tuple[int, int, bool] | None:
        """``if step == k:`` in ``for step in range(...)``: the loop, the ``if``, and whether
        the arm runs in the loop's last iteration only (``k`` is the range's stop - 1)."""
        frame = self._loops[-1] if self._loops else None
        if frame is None or not at_most_once(stmt.test, frame.counters, frame.bound):
            return None
        loop = self._for_statements[-1] if self._for_statements else None
        last = loop is not None and last_iteration(stmt.test, loop, self.module.code_for_node)
        return (frame.key, id(stmt), last)

    def _for(self, stmt: cst.For) -> None:
        self._for_statements.append(stmt)
        try:
            self._for_loop(stmt)
        finally:
            self._for_statements.pop()

    def _for_loop(self, stmt: cst.For) -> None:
        started = self._next()
        self._loop_over(stmt)
        rewritten = rewritten_mapping(stmt)
        if rewritten is not None:
            self._replaced_entries(rewritten, started)

    def _replaced_entries(self, name: str, started: int) -> None:
        """After ``for k, v in d.items(): d[k] = f(v)``, ``d`` holds only what the loop put in
        it (``loss.detach().clone()`` for each loss logged), under each of its keys."""
        for container in self._lookup(name) or ():
            if container.kind is not Kind.CONTAINER:
                continue
            new = [e for e in container.elements if container.added.get(e.id, -1) > started]
            if new:
                container.elements = new
                container.items = {key: list(new) for key in container.items}

    def _loop_over(self, stmt: cst.For) -> None:
        distinct: dict[int, int] = {}
        zipped = self._zipped(stmt, distinct)
        counters = _counters(stmt)
        count = iterations(stmt.iter, self._int_constants())
        once = bool(count)
        single = count == 1  # ``for _ in range(critic_updates)`` with ``critic_updates = 1``
        if zipped is not None:
            parts, runs = zipped
            self._loop(
                stmt.body.body,
                (stmt.target, []),
                parts,
                counters,
                once=once or runs,
                single=single,
                distinct=distinct,
                statement=stmt,
            )
        else:
            iterated = self._eval(stmt.iter)
            once = once or model_parts(iterated)
            elements = self._iterate(iterated, distinct)
            if self._calls_builtin(stmt.iter, ("range",)):
                elements = [new_value(Kind.OTHER)]  # ``for i in range(n)``: ints
            self._loop(
                stmt.body.body,
                (stmt.target, elements),
                counters=counters,
                once=once,
                single=single,
                distinct=distinct,
                statement=stmt,
            )
        if stmt.orelse is not None:
            self._block(stmt.orelse.body.body)

    def _int_constants(self) -> dict[str, int]:
        """The function's names bound once to an integer literal (cached per function)."""
        func = self.scope.ctx.node
        if func is None:
            return {}
        counts = self._bound_counts(func)
        return self._source_fact("int_constants", func, lambda: local_int_constants(func, counts))

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
            outer, self._assigning = self._assigning, tuple(t.target for t in small.targets)
            try:
                values = self._eval(small.value)
            finally:
                self._assigning = outer
            for target in small.targets:
                self._assign(target.target, values, small.value)
                for pending in self._chain_pendings(small.value):
                    pending.bound_target = target.target
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self._assign(small.target, self._eval(small.value), small.value)
        elif isinstance(small, cst.AugAssign):
            self._augassign(small)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                self._handed_back.update(id(n) for n in _names_returned(small.value))
                values = self._eval(small.value)
                self._note_return_shape(small.value, values)
                flat = self._flatten(values)
                self._return_arms(small.value, flat)
                scope.escapes.extend(flat)
                scope.returned_at.append((tuple(self._path), flat))
                # a tuple display's items may each be several values, which breaks its
                # positions: the caller unpacks what escapes, one tensor at a time
                scope.returned.extend(flat if isinstance(small.value, cst.Tuple) else values)
                self._settle(small.value, None)
                self._note_returned_targets(small.value)
        elif isinstance(small, cst.Del):
            target = small.target
            if isinstance(target, cst.Name):
                scope.env.pop(target.value, None)

    def _return_arms(self, node: cst.BaseExpression, values: list[Value]) -> None:
        """``return score`` where ``score`` holds a tensor only on some arms of an earlier
        branch (the one before ``if scale: score = scale * score``): a caller binding the
        result holds it on those arms only, as for ``a if c else b``; likewise each name of
        a returned tuple (``return tp, fp``), which a caller unpacks."""
        names = node.elements if isinstance(node, cst.Tuple | cst.List) else [node]
        tags: dict[int, tuple[tuple[int, int], ...]] = {}
        for element in names:
            item = element.value if isinstance(element, cst.Element) else element
            if isinstance(item, cst.Name):
                tags.update(self.scope.arms.get(item.value, {}))
        for value in values:
            if value.id in tags:
                self._chosen.setdefault(value.id, tags[value.id])

    def _assign(
        self, target: cst.BaseExpression, values: list[Value], source: cst.BaseExpression | None
    ) -> None:
        """Bind ``values`` (evaluated from ``source``, if known) to an assignment target."""
        if isinstance(target, cst.Name):
            self._bind(target.value, values)
            arms = self.scope.arms
            if isinstance(source, cst.Name) and source.value in arms:
                # ``features = source_patch``: the alias holds each tensor on the same arms
                arms[target.value] = dict(arms[source.value])
            write = self._inplace_results.get(id(source)) if source is not None else None
            if write is not None:
                self.scope.bound_inplace[target.value] = write
            self._settle(source, target.value)
            self._bound_away(source)
        elif isinstance(target, cst.Tuple | cst.List):
            self._assign_unpacked(target, values, source)
        elif isinstance(target, cst.Attribute):
            self._assign_attribute(target, values, source)
        elif isinstance(target, cst.Subscript):
            self._assign_subscript(target, values, source)

    def _assign_unpacked(
        self,
        target: cst.Tuple | cst.List,
        values: list[Value],
        source: cst.BaseExpression | None,
    ) -> None:
        """``a, b = ...``: element by element when the source is a known container."""
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
        slotted = _by_slot(values, elements)
        if slotted is not None:  # ``a, b = f()``: each name its position's values
            for element, held in zip(elements, slotted, strict=True):
                self._assign(element, held, None)
            return
        stars = [i for i, e in enumerate(target.elements) if isinstance(e, cst.StarredElement)]
        leading = (
            _leading_positions(values, len(elements)) if stars == [len(elements) - 1] else None
        )
        if leading is not None:  # ``boxes_t, *_ = convert(boxes)``: the first positions
            for element, held in zip(elements, leading, strict=False):
                self._assign(element, held, None)
            self._assign(elements[-1], [new_value(Kind.CONTAINER)], None)
            return
        indices = len(elements) == 2 and _returns_indices(source)
        for position, element in enumerate(elements):
            inner = element.value if isinstance(element, cst.StarredElement) else element
            if indices and position == 1:  # integer indices: no gradient flows back
                sure = any(v.kind is Kind.TENSOR and v.sure for v in values)
                self._assign(inner, [new_value(Kind.TENSOR, grad=0, sure=sure)], None)
                continue
            if values and all(v.kind is Kind.TENSOR and v.several for v in values):
                self._assign(inner, [self._part(v) for v in values], None)  # ``q, k = x.chunk(2)``
                continue
            derived = self._unknown(inputs=values)
            derived.grad_assumed = self._assumed_of(values)  # parts of what was assumed
            if any(v.kind is Kind.TENSOR and v.sure for v in values):
                derived.sure = True  # ``values, indices = torch.sort(x)``: tensors both
            if values and all(v.origin == "saved" for v in values):
                derived.origin = "saved"
                derived.sure = True
            self._assign(inner, [derived], None)

    def _assign_attribute(
        self, target: cst.Attribute, values: list[Value], source: cst.BaseExpression | None
    ) -> None:
        """``obj.attr = ...``; ``x.data = ...`` is a hidden write, ``x.requires_grad = ...``
        changes the tensor's grad."""
        if self.scope.ctx.role == "fn_forward" and _first_param(self.scope.ctx.node, target):
            self._note_ctx_attribute(target, values)  # ``ctx.softmax = exp_logits``
        if target.attr.value == "data" and not self._foreign(target.value):
            base = self._eval(target.value)
            if values and all(v.kind is Kind.OTHER for v in values):
                # torch stores only a tensor in ``.data`` (TypeError otherwise): storing a
                # numpy array or a number there shows ``obj`` is some other object
                for value in base:
                    if value.kind is Kind.TENSOR and not value.sure:
                        value.kind = Kind.OTHER
                return
            self._write(
                base, target, "assignment to `.data`", hidden=True, target_node=target.value
            )
            return
        if target.attr.value == "requires_grad":
            self._set_requires_grad(target.value, source)
            return
        with self._meta:  # setting ``obj.attr`` does not read obj's old value
            self._eval(target.value)
        name = dotted_name(target)
        self.scope.escapes.extend(v for v in values if v.kind is Kind.TENSOR)
        if name is not None:
            if self._class_module(name, values):
                self.scope.env.pop(name, None)  # ``self.name`` is the class's one module
            else:
                self._bind(name, values)
            self.scope.stores[name] = target

    def _assign_subscript(
        self, target: cst.Subscript, values: list[Value], source: cst.BaseExpression | None
    ) -> None:
        """``base[...] = ...``: an item of a container, or a write into a tensor."""
        self._settle(source, self._written_name(target))
        with self._meta:  # storing into ``base[...]`` does not read base's old value
            base = self._eval(target.value)
        self._eval_slices(target)
        key = _string_key(target)
        now = self._next()
        if key is not None:
            for container in base:
                if container.kind in (Kind.TENSOR, Kind.CONTAINER) and not container.saved:
                    container.kind = Kind.CONTAINER
                    container.items[key] = values
                    kept = values[: max(0, MAX_HELD - len(container.elements))]
                    container.elements.extend(kept)
                    container.added.update((v.id, now) for v in kept)
            return
        if replaces_element(target, source):
            for value in base:  # ``maps[k] = block(maps[k])``: a list of feature maps
                if value.kind is Kind.TENSOR and value.origin == "arg" and not value.saved:
                    value.kind = Kind.CONTAINER
        if any(v.kind is Kind.CONTAINER for v in base):
            index = int_index(target)
            variable = variable_index(self.module, target) if index is None else None
            self._forget_items(base)
            for container in base:
                if container.kind is not Kind.CONTAINER:
                    continue
                held = container.elements
                if (
                    index is not None
                    and container.literal_container
                    and len(values) == 1
                    and -len(held) <= index < len(held)
                ):  # ``state[1] = y`` into a display: that slot only
                    held[index] = values[0]
                    container.added[values[0].id] = now
                    continue
                # widened: a loop storing into its container what it read from it
                # (``d[k] = d[k].to(...)`` in nested loops) would double it each pass
                kept = values[: max(0, MAX_HELD - len(held))]
                held.extend(kept)
                container.added.update((v.id, now) for v in kept)
                if index is not None:
                    container.slots.update((v.id, index) for v in kept)
                if variable is not None:  # ``out[j] = conv(out[j])``, read at ``out[j]`` next
                    self.scope.item_stores[(container.id, variable[0])] = ItemStore(
                        tuple(values), variable[1], now, tuple(self._path), len(held)
                    )
            return
        tensors = [v for v in base if v.kind is Kind.TENSOR and v.sure]
        if tensors:
            self._use(values)
            write = self._write(
                tensors, target, "subscript assignment", extra=values, target_node=target
            )
            if (
                write is not None
                and source is not None
                and (shifted_slices(target, source) or self_sourced(target, source))
            ):  # ``x[..., 1:] = x[..., :-1]``, ``x[perm] = x``: the source overlaps the write
                name = self.module.code_for_node(source)
                self.facts.stale_reads.append(ev.StaleRead(write, source, name, "", overlap=True))

    def _set_requires_grad(
        self, owner: cst.BaseExpression, source: cst.BaseExpression | None
    ) -> None:
        """``t.requires_grad = False`` makes ``t`` an ordinary tensor until it is set back;
        in ``for p in module.parameters()`` it freezes the module, as ``requires_grad_``."""
        base = self._eval(owner)
        flag = literal_bool(source) if source is not None else None
        if isinstance(owner, cst.Attribute) and flag is not None:
            for module in self._eval(owner.value):  # ``self.embedding.weight``: the module's
                if module.kind is Kind.MODULE and flag:
                    module.group.frozen_attributes.discard(owner.attr.value)
                elif module.kind is Kind.MODULE:
                    module.group.frozen_attributes.add(owner.attr.value)
        for value in base:
            if value.kind is not Kind.TENSOR:
                continue
            if value.each_param and flag is not None:
                value.group.frozen = not flag
            if flag is False:
                value.grad = 0
                value.leaf = False
                value.group.leaf = False
            elif flag is True:  # torch allows this only on a leaf, which it then is
                value.grad = 2
                value.hist = set()
                value.leaf = True
                value.group.leaf = True
        if flag is True:
            self._note_instance_grad(owner)
        name = dotted_name(owner)
        if name is not None and base:
            self._bind(name, base)  # later reads of ``layer.weight`` see this same tensor

    def _stored_items(
        self, base: list[Value], target: cst.Subscript, advanced: bool
    ) -> list[Value]:
        """The tensors ``target`` names inside the containers among ``base``: the one at a
        constant position of a list display, else every element the container may hold."""
        key = _string_key(target)
        index = int_index(target)
        out: list[Value] = []
        for value in base:
            if value.kind is Kind.TENSOR and key is not None:
                out.extend(self._element(value, key, advanced))  # a mapping after all
                continue
            if value.kind is not Kind.CONTAINER:
                continue
            if key is None and index is not None and value.literal_container:
                if -len(value.elements) <= index < len(value.elements):
                    out.append(value.elements[index])
                continue
            found = self._element(value, key, advanced)
            if index is not None:  # not the items stored at another constant position
                found = [v for v in found if value.slots.get(v.id, index) == index]
            out.extend(found)
        return [v for v in out if v.kind is Kind.TENSOR and v.sure]

    def _augassign(self, node: cst.AugAssign) -> None:
        op = _AUG_OPS.get(type(node.operator))
        right = self._eval(node.value)
        target = node.target
        if isinstance(target, cst.Subscript):
            if isinstance(node.value, cst.List | cst.ListComp):
                entries = self._eval(target)
                if _extends_list(node, entries):  # ``attns["std"] += [attn]``
                    self._extend_containers(entries, [right])
                    return
            base = self._eval(target.value)
            advanced = self._eval_slices(target)
            # ``records["acc"] += ...``: no tensor takes a string index, so this is an entry
            # of a mapping, written in place only if that entry is known to be a tensor
            keyed = _string_key(target) is not None
            tensors = [v for v in base if v.kind is Kind.TENSOR and v.sure and not keyed]
            if tensors and op is not None:
                self._use(right)
                self._write(tensors, target, f"`{op}` on a slice", extra=right, target_node=target)
                return
            items = self._stored_items(base, target, advanced)
            if op is None or not items:
                return
            tensors = items  # ``laterals[i - 1] += up``: the tensor the list holds, in place
        else:
            current = self._eval(target)
            # a tensor, or one a torch module took (a view of) as input: an int would be
            # rebound
            tensors = [v for v in current if v.kind is Kind.TENSOR and (v.sure or v.group.tensor)]
            if _extends_list(node, current):  # ``outputs += [output]``: every alias sees it
                self._extend_containers(current, [right])
                return
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


def _extends_list(node: cst.AugAssign, targets: list[Value]) -> bool:
    """``rows += [row]``: a list extended in place (a list display on the right; a tuple's
    ``+=`` makes a new tuple, and an unknown right side is left to the general rule)."""
    return (
        isinstance(node.operator, cst.AddAssign)
        and isinstance(node.value, cst.List | cst.ListComp)
        and bool(targets)
        and all(v.kind is Kind.CONTAINER for v in targets)
    )


def _leading_positions(values: list[Value], targets: int) -> list[list[Value]] | None:
    """``a, *rest = t`` (``targets`` names, the star last): the values at the positions
    before the star, when ``t`` is one tuple whose positions are known (a display, or a
    helper's result), read as ``a, b = t`` reads them when the lengths agree."""
    if len(values) != 1 or targets < 2:
        return None
    record = values[0]
    if record.kind is not Kind.CONTAINER or not record.elements:
        return None
    count = targets - 1
    if not record.slots:  # a display, or a helper's tuple of one value per position
        ordered = record.elements
        return [[v] for v in ordered[:count]] if len(ordered) >= count else None
    size = max(record.slots.values(), default=-1) + 1
    positions = slot_positions(record, size) if size >= count else None
    return positions[:count] if positions is not None and all(positions[:count]) else None


def _by_slot(values: list[Value], targets: list[cst.BaseExpression]) -> list[list[Value]] | None:
    """The values at each position of the one tuple in ``values``, from the ``slots`` that
    give every element's position (a display ``(a, b)`` whose ``b`` is one of two values, or
    a helper's result whose positions each hold one of several values), when it has as many
    positions as there are plain ``targets``, each holding a value."""
    if len(values) != 1 or any(isinstance(t, cst.StarredElement) for t in targets):
        return None
    record = values[0]
    if record.kind is not Kind.CONTAINER or not record.elements:
        return None
    positions = slot_positions(record, len(targets))
    return positions if positions is not None and all(positions) else None


def _first_param(func: cst.FunctionDef | None, target: cst.Attribute) -> bool:
    """``ctx.name = ...`` in a Function's ``forward``: the attribute of its first parameter."""
    if func is None or not func.params.params or not isinstance(target.value, cst.Name):
        return False
    return func.params.params[0].name.value == target.value.value


def _names_returned(node: cst.BaseExpression) -> list[cst.Name]:
    """The names ``return`` hands back whole: ``return acc`` or ``return acc, total``."""
    if isinstance(node, cst.Tuple | cst.List):
        return [e.value for e in node.elements if isinstance(e.value, cst.Name)]
    return [node] if isinstance(node, cst.Name) else []
