"""In-place writes: bumping the ledger's versions, and classifying a write for the rules
(leaf, custom Function input or grad_output, caller's argument, hidden `.data` write).
"""

from __future__ import annotations

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.ledger import Pending as _Pending
from inplace_lint.facts.ledger import holds_written
from inplace_lint.facts.model import FLOW, OWNED, Group, Kind, Value, Write
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.state import AnalyzerBase, _LoopFrame
from inplace_lint.facts.summaries import (
    returns,
)
from inplace_lint.facts.syntax import (
    _is_static,
    _tensor_names,
    conditionally_copied,
)


class Writes(AnalyzerBase):
    """The writes room of the interpreter (see the module docstring)."""

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
        nested: bool = False,
        copies_itself: bool = False,
    ) -> Write | None:
        """Record an in-place write to every group in ``values``. While a sandbox computes a
        helper's result only what the written tensors now depend on changes (``acc +=
        f(x)``): the helper's summary applies the write itself, once."""
        scope = self.scope
        tensors = [v for v in values if v.kind is Kind.TENSOR]
        if not tensors:
            return None
        if self._inlining:
            _depend(tensors, extra)
            return None
        hidden = hidden or all(v.via_data for v in tensors)
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
            via_detach=any(v.via_detach for v in tensors),
            no_grad=scope.no_grad or no_grad,
            related=related,
            via_call=via_call,
            callee=callee,
            param=param,
            path=tuple(self._path),
            shape_only=values_kept,
            in_state_update=scope.ctx.state_update,
            nested=nested,
        )
        write.update = optimizer or (write.no_grad and any(v.leaf for v in tensors))
        written_name = self._written_name(target_node)
        filling = self._fills(tensors, target_node, via_call)
        group_ids = self._bump_versions(write, tensors, written_name, extra)
        pending = _Pending(group_ids, write, write.seq, written_name, tensors)
        pending.target_node = target_node
        if self._loops:
            pending.loops = tuple(frame.key for frame in self._loops)
        if via_call is not None:
            filling = filling or copies_itself  # it copies what it must not write: no stale read
            self._pending_call_write(pending, tensors, via_call, returned, side_effect, filling)
            return write
        if isinstance(node, cst.Call) and written_name is not None:
            write.elsewhere = True
            scope.pending_by_node[id(node)] = [pending]
        if (
            not filling
            and not self._meant_to_share(pending, tensors)
            and not self._helper_view(target_node)
        ):
            scope.stale.append(pending)
            self._note_stored(pending)
        elif optimizer:
            scope.updates.append(pending)
        self._classify_write(write, tensors, group_ids, optimizer or no_grad, extra)
        return write

    def _fills(
        self, tensors: list[Value], target: cst.CSTNode | None, via_call: cst.CSTNode | None
    ) -> bool:
        """Whether the write gives uninitialized storage its first values (no read of the old
        ones can be stale); every write of one helper call fills as its first does. A write
        of a whole tensor (not a view or an item) leaves the storage initialized."""
        filling = all(v.group.uninitialized for v in tensors)
        if via_call is not None:
            key = (id(via_call), frozenset(v.group.id for v in tensors))
            filling = self.scope.call_fills.setdefault(key, filling)
        if not isinstance(target, cst.Subscript):
            for value in tensors:
                if not value.view:
                    value.group.uninitialized = False
        return filling

    def _helper_view(self, target: cst.CSTNode | None) -> bool:
        """``_select(result, i).copy_(y)``: the write goes through what a same-file helper
        returned, a tensor or view it hands out to be written (as ``result[i].copy_(y)``
        writes through ``result``), so later reads of the caller's names want the new
        value."""
        while isinstance(target, cst.Subscript):  # ``_roll_last(tau, d)[unsolved] = t``
            target = target.value
        return (
            isinstance(target, cst.Call)
            and isinstance(target.func, cst.Name)
            and target.func.value in self.functions
        )

    def _bump_versions(
        self,
        write: Write,
        tensors: list[Value],
        written_name: str | None,
        extra: list[Value] | None,
    ) -> frozenset[int]:
        """Move the version counter (or, for a hidden write, the hidden counter) of every
        storage group written; the written values now depend on what ``extra`` saved."""
        groups: dict[int, Group] = {v.group.id: v.group for v in tensors}
        write.soft_through = frozenset(v.soft_of for v in tensors if v.soft_of is not None)
        tags = self.scope.arms.get(written_name, {}) if written_name is not None else {}
        for value in tensors:
            if value.id in tags:  # the name holds this tensor only on some arms
                value.group.write_paths[id(write)] = write.path + tags[value.id]
        for group in groups.values():
            group.bump(write, write.hidden)
        _depend(tensors, extra)
        if not (write.hidden or write.via_detach or self.scope.no_grad) and extra:
            # ``buf[:, :n] = head(x)``, ``buf.copy_(y)``: a tensor written with values that
            # require grad requires grad from then on (``new_zeros`` made it without)
            # (values known to be tensors: an unknown helper's result may be an int)
            sure = [v for v in extra if v.sure]
            written_grad = self._grad_of(sure)
            for value in tensors:
                if not value.leaf and value.grad < written_grad:
                    value.grad = written_grad
                    value.grad_assumed = self._assumed_of(sure)  # as what was written is
        write.name = written_name
        return frozenset(groups)

    def _pending_call_write(
        self,
        pending: _Pending,
        tensors: list[Value],
        via_call: cst.CSTNode,
        returned: bool,
        side_effect: bool,
        filling: bool = False,
    ) -> None:
        """A same-file helper wrote the caller's tensor (``write.via_call``); ``filling``: the
        tensor is uninitialized storage the helper fills, so no later read is stale."""
        scope = self.scope
        write = pending.write
        # A helper that is in place by contract surprises only a caller that uses its
        # result as a new tensor; any other helper surprises every later read.
        write.elsewhere = returned or side_effect
        if returned:
            scope.pending_by_node.setdefault(id(via_call), []).append(pending)
        # A procedure (it returns nothing) is called to change the tensor: reads through
        # the name passed want the new value, reads through other aliases see a surprise,
        # except the base of a view it was given (``for t in batch: normalize_(t)``) or the
        # container it took the tensor from (``for t in tensors: normalize_(t)``)
        for_base = not write.elsewhere and all(v.view for v in tensors)
        pending.meant_for, pending.meant_at = self._iterated(tensors)
        if not write.elsewhere:
            pending.meant_at = None  # a procedure: every read of the list wants the change
        if not filling and not for_base:
            scope.stale.append(pending)
        self._note_given_write(write, tensors)  # our own caller's tensor changes too

    def _iterated(self, tensors: list[Value]) -> tuple[frozenset[int], tuple[frozenset[int], ...]]:
        """The containers the enclosing loops took ``tensors`` from, when each is such an
        element (``for t in tensors: normalize_(t)`` changes what ``tensors`` holds on
        purpose), and the node sets of those loops; else none."""
        sources: set[int] = set()
        loops: list[_LoopFrame] = []
        for value in tensors:
            frames = [f for f in self._loops if value.group.id in f.elements]
            if not frames:
                return frozenset(), ()
            sources.update(f.elements[value.group.id] for f in frames)
            loops += [f for f in frames if all(f is not seen for seen in loops)]
        return frozenset(sources), tuple(f.nodes for f in loops)

    def _meant_to_share(self, pending: _Pending, tensors: list[Value]) -> bool:
        """The sharing policy: a write whose new value every alias is meant to see (so no
        later read of an alias is stale)."""
        scope = self.scope
        write, written_name = pending.write, pending.written_name
        # ``noise = action.data.normal_(0, s)``: a write through ``.data`` is meant for the
        # tensor, unless its in-place result is bound to a new name, as a new tensor
        hidden_call = write.hidden and isinstance(write.node, cst.Call) and write.elsewhere
        # under no_grad, writes through attributes are state updates (buffers, EMA): reads
        # of the state want the new value, except through a plain local name that took the
        # very tensor before the write to keep the old one (PopArt's ``old_mean =
        # self.mean``); a local tensor read again through an alias is stale either way
        state = scope.no_grad and (written_name is None or "." in written_name)
        snapshot = state and any(
            holds_written(name, values, written_name, tensors) for name, values in scope.env.items()
        )
        pending.snapshot_only = snapshot
        meant_to_share = (
            (write.hidden and not hidden_call)
            or write.shape_only  # ``squeeze_()``: a new shape, the same values
            or (state and not snapshot)
            or (any(v.leaf for v in tensors) and not snapshot)  # updates are meant to be seen
        )
        # a state update (an optimizer step, an EMA) writes its state on purpose: reads of it
        # want the new value, except a second in-place update through another name for the
        # very same tensor (``Expressions._second_update``)
        pending.alias_only = scope.ctx.state_update and scope.no_grad
        # ``for acc in accumulators: acc.add_(g)``: the loop working through the list wants
        # the new values (a read of the list after it, or of another alias, does not)
        pending.meant_for, pending.meant_at = self._iterated(tensors)
        # writing through a view is writing its base, unless the in-place result is then
        # used as a new tensor (``mixed = x[:8].lerp_(y)``): decided when it is bound
        pending.through_view = all(v.view for v in tensors)
        # ``weight = torch.empty(n)`` on one path, ``weight = self.weight.data`` on the other:
        # the fresh tensor no other name holds cannot be read stale, and a write through
        # ``.data`` is meant for the parameter. (A plain view beside a fresh tensor is not:
        # open_clip's ``logits_per_text = logits_per_image.T`` on one path, written as if
        # it were its own, changes ``logits_per_image``.)
        private = [v for v in tensors if not v.via_data]
        hidden = [v for v in tensors if v.via_data]
        if hidden and private and not any(self._held_elsewhere(v, written_name) for v in private):
            pending.through_view = True
        pending.through_view = pending.through_view or hidden_call
        if pending.through_view and not write.elsewhere:
            meant_to_share = True
        return meant_to_share

    def _held_elsewhere(self, value: Value, name: str | None) -> bool:
        """Some name other than ``name`` holds a tensor of ``value``'s storage."""
        return any(
            other != name and any(v.group is value.group for v in values)
            for other, values in self.scope.env.items()
        )

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
        self,
        write: Write,
        tensors: list[Value],
        groups: frozenset[int],
        internal_no_grad: bool,
        extra: list[Value] | None,
    ) -> None:
        scope = self.scope
        ctx = scope.ctx
        multi = _multi_view_written(tensors, extra or [])
        bypass = write.hidden or write.via_detach
        if multi and not bypass and not scope.no_grad and not internal_no_grad:
            self.facts.multi_view_writes.append(ev.MultiViewWrite(write, multi))
        if not write.hidden and not write.via_detach and not scope.no_grad and not internal_no_grad:
            leaves = [v for v in tensors if v.leaf]
            if leaves:
                self.facts.leaf_writes.append(ev.LeafWrite(write, write.target or "tensor"))
        self._note_given_write(write, tensors)
        if (write.hidden or write.via_detach) and not scope.no_grad and not ctx.no_grad:
            graph = [v for v in tensors if not v.leaf]
            if graph and any(self._group_in_graph(v) for v in graph):
                scope.hidden.append(_Pending(groups, write, write.seq, None))

    def _note_given_write(self, write: Write, tensors: list[Value]) -> None:
        """A write to what this function was given: in a custom Function, its gradients,
        saved tensors or inputs (also by a helper it calls: ``kernel.backward(grad_output)``);
        elsewhere, its caller's arguments."""
        if self.scope.ctx.role.startswith("fn_"):
            self._function_write(write, tensors)
        else:
            self._note_arg_write(write, tensors)

    def _function_write(self, write: Write, tensors: list[Value]) -> None:
        """In a custom Function: a write to ``grad_output`` or a saved tensor in backward, to
        an input not marked dirty in forward (made here, or by a helper called here)."""
        ctx = self.scope.ctx
        if ctx.role == "fn_backward":
            for value in tensors:
                if write.shape_only and value.view:
                    continue  # ``g = g.unsqueeze(-1); g.unsqueeze_(-1)``: only the view's shape
                if value.origin in ("grad_output", "saved", OWNED):
                    role = _FUNCTION_ROLES[value.origin]
                    self.facts.function_writes.append(
                        ev.FunctionWrite(write, role, value.arg_name or write.target)
                    )
                    return
        elif ctx.role == "fn_forward":
            for value in tensors:
                if value.origin == "fn_input" and value.arg_name in ctx.mark_dirty:
                    # declared: torch wants it among the outputs (``function_saves``)
                    self.scope.dirty_writes.append((write, value.arg_name, value))
                    return
                if value.origin == "fn_input":
                    self.facts.function_writes.append(
                        ev.FunctionWrite(write, "input", value.arg_name)
                    )
                    return

    def _note_arg_write(self, write: Write, tensors: list[Value]) -> None:
        """Record a write to a tensor this function received as an argument."""
        if write.shape_only:
            return  # the caller's tensor changes shape, not values
        scope = self.scope
        ctx = scope.ctx
        for value in tensors:
            if value.origin == "arg" and self._still_bound(value):
                self.facts.arg_writes.append(
                    ev.ArgWrite(
                        write,
                        ctx.name,
                        value.arg_name,
                        self._param_index(value.arg_name),
                        ctx.exempt_args or self._copies_itself(value.arg_name),
                        evidence=value.sure or self._tensor_evidence(value.arg_name),
                        qualified=f"{ctx.cls.name}.{ctx.name}" if ctx.cls else ctx.name,
                        role=ctx.role,
                        side_effect=self._side_effect(value.arg_name, write.name),
                        groups=frozenset(v.group.id for v in tensors),
                        under_no_grad=scope.no_grad or write.no_grad,
                        inplace_guarded=bool(self._inplace_guard.depth),
                    )
                )
                return

    def _copies_itself(self, param: str) -> str:
        """The contract of a function that copies ``param`` itself on one arm of a branch
        (``conditionally_copied``, read once per function when it first writes an argument)."""
        func = self.scope.ctx.node
        if func is None:
            return ""
        copied = self._source_fact("copied", func, lambda: conditionally_copied(func, self.imports))
        return f"it copies `{param}` itself where it must not write it" if param in copied else ""

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
                    and (
                        any(r.id not in consumed and r.role != FLOW for r in other.hist)
                        or other.origin == "arg"
                    )
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


#: the role of a write in a Function's backward, by the origin of the tensor written
_FUNCTION_ROLES = {
    "grad_output": "grad_output",
    "saved": "saved tensor",
    OWNED: "owned saved tensor",
}


def _depend(tensors: list[Value], extra: list[Value] | None) -> None:
    """The written tensors now depend on what ``extra`` (the write's operands) saved."""
    for value in tensors:
        for other in extra or ():
            value.hist |= other.hist


def _multi_view_written(tensors: list[Value], extra: list[Value]) -> str:
    """The multi-view op (``unbind``, ``chunk``, ...) whose view a write changes while grad
    is involved: the view requires grad, or what is written into it is known to (``row.copy_(
    img)`` into a row of a plain ``torch.zeros`` batch raises as well; a module's input, which
    only the module's own analysis takes to require grad, is not enough), else ""."""
    written_grad = any(v.kind is Kind.TENSOR and v.grad == 2 and not v.grad_assumed for v in extra)
    return next(
        (
            v.multi_view
            for v in tensors
            if v.multi_view and ((v.grad == 2 and not v.grad_assumed) or written_grad)
        ),
        "",
    )
