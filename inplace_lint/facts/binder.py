"""The binder: what names hold along each path (scopes, branches, loops).

Parameters get their first values in ``params.py``. Like mypy's binder, it forks the
environment at a branch and merges the arms afterwards, and runs a loop body twice so that
iteration k meets iteration k-1.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import libcst as cst

from inplace_lint.facts.conditions import Key
from inplace_lint.facts.ledger import Pending as _Pending
from inplace_lint.facts.model import (
    ELEMENT_ORIGIN,
    Kind,
    ModuleSpec,
    Value,
    instance_class,
    new_value,
)
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.state import _MAX_TWICE_DEPTH, AnalyzerBase, _LoopFrame, grad_element
from inplace_lint.facts.syntax import (
    _terminates,
    always_raises,
    bound_names,
    leaves_iteration,
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
        held = [{id(v) for v in env.get(name, ())} for env in envs]  # by identity, not ``==``
        for value in values:
            arms = [i for i, ids in enumerate(held) if id(value) in ids]
            chains = [tags[i].get(name, {}).get(value.id, ()) for i in arms]
            if len(arms) == 1:
                found[value.id] = ((branch, arms[0]), *chains[0])
            elif len(arms) == len(envs):
                # every arm kept it, each under its earlier conditions: it is held only under
                # the ones they share (``if bn: out = bn(out)`` then ``if bn:`` nested deeper)
                common = tuple(p for p in chains[0] if all(p in c for c in chains[1:]))
                if common:
                    found[value.id] = common
        if found:
            out[name] = found
    return out


def _merged_envs(envs: list[dict[str, list[Value]]]) -> dict[str, list[Value]]:
    """Per name, the values it holds in any of ``envs``, each once, in order."""
    merged: dict[str, list[Value]] = {}
    present: dict[str, set[int]] = {}  # the ids in each bucket, for a linear merge
    for env in envs:
        for name, values in env.items():
            bucket = merged.setdefault(name, [])
            ids = present.setdefault(name, set())
            for value in values:
                if id(value) not in ids:
                    ids.add(id(value))
                    bucket.append(value)
    return merged


def _without_grad(env: dict[str, list[Value]], names: frozenset[str]) -> list[tuple[Value, int]]:
    """Mark the tensors ``names`` hold in ``env`` as needing no grad; their grads before."""
    changed = []
    for name in names:
        for value in env.get(name, ()):
            if value.kind is Kind.TENSOR and value.grad:
                changed.append((value, value.grad))
                value.grad = 0
    return changed


#: module containers whose members a loop visits
_MODULE_CONTAINERS = frozenset(
    {"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"}
)


def model_parts(values: list[Value]) -> bool:
    """A loop over a model's layers (a ModuleList, Sequential or ModuleDict) or over its
    parameters runs at least once: a model with no layers or parameters is no configuration
    to reason about (untuned runs 7 and 8: ``for module in self.enc: xs = module(xs)``
    followed by a write that only a zero-trip loop would send to the caller's tensor)."""
    return bool(values) and all(
        v.kind is Kind.PARAM_ITER
        or (
            v.kind is Kind.MODULE
            and v.module is not None
            and v.module.qualname in _MODULE_CONTAINERS
        )
        for v in values
    )


def _merged(values: list[Value]) -> list[Value]:
    """The modules one iteration over a list may call, as one module when they differ: an
    iteration calls one of them, so a save one makes and a write another makes do not meet
    at that call (``[conv, nn.ReLU(inplace=True), conv]``), and only what they all do is
    known (as for ``a if c else b``)."""
    specs = [v.module for v in values if v.kind is Kind.MODULE and v.module is not None]
    if len(specs) != len(values) or len({_behaviour(s) for s in specs}) <= 1:
        return values
    qualnames = {s.qualname for s in specs}
    merged = ModuleSpec(
        qualname=qualnames.pop() if len(qualnames) == 1 else None,
        node=None,
        inplace=all(s.inplace for s in specs),
        saves_input=all(s.saves_input for s in specs),
        saves_result=all(s.saves_result for s in specs),
        has_parameters=any(s.has_parameters for s in specs),
        saves_parameters=any(s.saves_parameters for s in specs),
        is_view=all(s.is_view for s in specs),
    )
    return [new_value(Kind.MODULE, module=merged)]


def _behaviour(spec: ModuleSpec) -> tuple[object, ...]:
    return (spec.qualname, spec.inplace, spec.saves_input, spec.saves_result, spec.is_view)


def _module_rows(elements: list[Value], width: int) -> bool:
    """Every element is a tuple of ``width`` modules (the rows of a nested ModuleList)."""
    return bool(elements) and all(
        e.kind is Kind.CONTAINER
        and len(e.elements) == width
        and all(m.kind is Kind.MODULE for m in e.elements)
        for e in elements
    )


class Binder(AnalyzerBase):
    """The binder room of the interpreter (see the module docstring)."""

    def _bind(self, name: str, values: list[Value]) -> None:
        scope = self.scope
        kept = self._kept_arms(name, values)
        scope.env[name] = values
        scope.bindings[name] = self._next()
        scope.bound_inplace.pop(name, None)
        scope.arms.pop(name, None)
        # ``t = a if c else b``: each value only on its arm of ``c``
        chosen = {v.id: self._chosen[v.id] for v in values if v.id in self._chosen}
        chosen = {**kept, **chosen}
        if chosen and len(values) > 1:
            scope.arms[name] = chosen

    def _kept_arms(self, name: str, values: list[Value]) -> dict[int, tuple[tuple[int, int], ...]]:
        """``tp = sum_tensor(tp, axes)`` where ``tp`` held a tensor only on some arms (the one
        an earlier ``if square: tp = tp ** 2`` did not take) and the call may hand that very
        tensor back: the name still holds it on those arms only, unless another name holds it
        on other arms (``orig = tp`` before the branch)."""
        scope = self.scope
        old = scope.arms.get(name)
        if not old:
            return {}
        kept: dict[int, tuple[tuple[int, int], ...]] = {}
        for value in values:
            chain = old.get(value.id)
            if chain is None:
                continue
            for other, held in scope.env.items():
                if other == name or not any(v is value for v in held):
                    continue
                theirs = scope.arms.get(other, {}).get(value.id, ())
                chain = tuple(p for p in chain if p in theirs)
            if chain:
                kept[value.id] = chain
        return kept

    def _lookup(self, name: str) -> list[Value] | None:
        scope = self.scope
        if name in scope.env:
            return scope.env[name]
        cls = scope.ctx.cls
        if name.startswith("self.") and cls is not None and name.count(".") == 1:
            attr = name[5:]
            owner = self._sandbox_owner
            if owner is not None and attr in cls.modules:  # ``main.q`` in ``main(x)``
                return [self._submodule(owner, cls, attr)]
            key = (cls.name, attr)
            if key in self.class_values:
                return [self.class_values[key]]
            value: Value | None = None
            if attr in cls.modules:
                spec = cls.modules[attr]
                value = new_value(Kind.MODULE, name, module=spec)
                self.class_values[key] = value
            elif attr in cls.parameters:
                # a parameter on one path and a dict on another (``self.mask = {}``): not
                # known to be a tensor until a tensor method is called on it
                sure = attr not in cls.displays
                value = new_value(Kind.TENSOR, name, grad=2, leaf=True, sure=sure)
                value.group.leaf = True
            elif attr in cls.buffers:
                value = new_value(Kind.TENSOR, name, grad=0)
            elif attr in cls.lists and attr not in cls.assigned:
                # ``self.cache_k = []`` in __init__: a list this method may append to and read
                value = new_value(Kind.CONTAINER, name, literal_container=True)
                scope.env[name] = [value]
                scope.bindings.setdefault(name, 0)
                return [value]
            if value is None and attr in self.instance_grads.get(cls.name, ()):
                # code outside the class made it require grad: a leaf that does, here
                value = new_value(Kind.TENSOR, name, grad=2, leaf=True)
                value.group.leaf = True
            if value is None and key in self.attribute_values:
                # a graph another method left on ``self`` (``steps._publish_attributes``)
                scope.env[name] = list(self.attribute_values[key])
                scope.bindings.setdefault(name, 0)
                return scope.env[name]
            if value is not None:
                scope.env[name] = [value]
                scope.bindings.setdefault(name, 0)
                return [value]
            return None
        closure = self._closure_values.get(id(scope.ctx.node))
        if closure is not None and name in closure:  # a module of the enclosing function
            return closure[name]
        if scope.ctx.node is not None and name in self.globals:
            return self._global(name)
        return None

    def _note_instance_grad(self, owner: cst.BaseExpression) -> None:
        """``system.positions.requires_grad_(True)`` on an instance of a same-file plain
        class: that attribute requires grad in the class's methods (read again, late)."""
        if not isinstance(owner, cst.Attribute):
            return
        name = dotted_name(owner.value)
        cls = instance_class(self._lookup(name)) if name is not None else None
        if cls is not None and cls in self.classes and not self.classes[cls].is_module:
            self.instance_grads.setdefault(cls, set()).add(owner.attr.value)

    def _global(self, name: str) -> list[Value] | None:
        """What a function sees of a module-level name: modules and optimizers; and a tensor
        the module binds once (no function rebinds it) to a leaf that surely requires grad,
        as a fresh value of the same kind (its versions in module code are not this call's)."""
        kept = [v for v in self.globals[name] if v.kind in (Kind.MODULE, Kind.OPTIMIZER)]
        if kept:
            return kept
        values = self.globals[name]
        if (
            len(values) == 1
            and values[0].kind is Kind.TENSOR
            and values[0].grad == 2
            and values[0].group.leaf
            and name not in self._rebound_globals
            and name not in self._locals_of(self.scope.ctx.node)
        ):
            value = new_value(Kind.TENSOR, name, grad=2, leaf=True, sure=values[0].sure)
            value.group.leaf = True
            self.scope.env[name] = [value]
            self.scope.bindings.setdefault(name, 0)
            return [value]
        return None

    @functools.cached_property
    def _rebound_globals(self) -> set[str]:
        """Module-level names bound more than once, or declared ``global`` in a function."""
        counts, declared = bound_names(self.module)
        return {name for name, count in counts.items() if count > 1} | declared

    def _locals_of(self, func: cst.FunctionDef | None) -> dict[str, int]:
        """Names a function binds (Python makes them local in all of its body)."""
        if func is None:
            return {}
        return self._bound_counts(func)

    def _branches(
        self,
        bodies: list[Sequence[cst.CSTNode]],
        guarded: bool = False,
        condition: tuple[Key, bool] | None = None,
        grad_off: tuple[bool, ...] = (),
        plain: tuple[frozenset[str], ...] = (),
        no_tensor: tuple[dict[str, bool], ...] = (),
        once: tuple[int, int, bool] | None = None,
        test: cst.BaseExpression | None = None,
    ) -> None:
        """Each arm from the same environment, then the merge; ``condition``: an ``if``'s
        test (``conditions``), whose earlier arms' values a matching test rules out;
        ``grad_off``: the arms a test on torch's grad mode runs with grad off; ``plain``: per
        arm, the names a ``requires_grad`` test says need no grad there (an in-place path);
        ``no_tensor``: per arm, the names a type test says hold no tensor there (true: a
        container); ``once``: the loop that takes arm 0 at most once, and the ``if``;
        ``test``: an ``if`` statement's test, kept for the arms it chooses (``_branch_tests``)."""
        scope = self.scope
        start_env = dict(scope.env)
        start_bindings = dict(scope.bindings)
        start_arms = dict(scope.arms)
        envs: list[dict[str, list[Value]]] = []
        arm_tags: list[dict[str, dict[int, tuple[tuple[int, int], ...]]]] = []
        marks = (len(scope.stale), len(scope.hidden))
        held: tuple[list[_Pending], list[_Pending]] = ([], [])
        branch = self._next()
        if condition is not None:
            self._conditions[branch] = condition
        if once is not None:
            self._once_branches[branch] = once
        if test is not None:
            self._branch_tests[branch] = test
        newest: dict[str, int] = {}
        surviving: list[frozenset[str]] = []
        for arm, body in enumerate(bodies):
            scope.env = dict(start_env)
            scope.bindings = dict(start_bindings)
            scope.arms = dict(start_arms)
            for name, container in no_tensor[arm].items() if arm < len(no_tensor) else ():
                scope.env[name] = [new_value(Kind.CONTAINER if container else Kind.OTHER, name)]
            if condition is not None and arm < 2:
                self._rule_out(condition[0], condition[1] == (arm == 0))
            self._path.append((branch, arm))
            self._arm_appends.append([])
            no_grad = scope.no_grad
            scope.no_grad = no_grad or (arm < len(grad_off) and grad_off[arm])
            names = plain[arm] if arm < len(plain) else frozenset()
            restore = _without_grad(scope.env, names)
            with self._inplace_guard.raised((guarded and arm == 0) or bool(names)):
                self._block(body)
            scope.no_grad = no_grad
            for value, grad in restore:
                value.grad = grad
            self._path.pop()
            self._settle_appends(self._arm_appends.pop(), body)
            if _terminates(body) or self._calls_what_raises(body):
                # ``if c: ...; return``: nothing after the branch runs after this arm
                del scope.stale[marks[0] :], scope.hidden[marks[1] :]
                continue
            surviving.append(names)
            envs.append(scope.env)
            arm_tags.append(scope.arms)
            for name, seq in scope.bindings.items():
                newest[name] = max(newest.get(name, 0), seq)
            # a write in one branch is not seen by reads in its sibling branches
            held[0].extend(scope.stale[marks[0] :])
            held[1].extend(scope.hidden[marks[1] :])
            del scope.stale[marks[0] :], scope.hidden[marks[1] :]
        if surviving and plain:  # ``if x.requires_grad: return ...``: after it, x needs none
            _without_grad(start_env, frozenset.intersection(*surviving))
        if not envs:  # every arm returns or raises: what follows is unreachable
            envs.append(dict(start_env))
            arm_tags.append(dict(start_arms))
            newest.update(start_bindings)
        scope.stale.extend(held[0])
        scope.hidden.extend(held[1])
        scope.env = merged = _merged_envs(envs)
        scope.bindings = newest
        scope.arms = _merge_arms(branch, merged, envs, arm_tags)

    def _calls_what_raises(self, body: Sequence[cst.CSTNode]) -> bool:
        """A statement of ``body`` calls a same-file function that always raises
        (``packed_info = pack_info(...)`` where ``pack_info`` ends in ``raise
        NotImplementedError``): the arm never gets past it."""
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                call = getattr(small, "value", None)
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)):
                    continue
                func = self.functions.get(call.func.value)
                if func is not None and self._source_fact(
                    "always_raises", func, lambda f=func: always_raises(f)
                ):
                    return True
        return False

    def _rule_out(self, key: Key, holds: bool) -> None:
        """Entering an arm where the condition ``key`` is ``holds``: a name drops the values
        it holds only from an earlier arm of the same condition with the other outcome
        (when some value is left)."""
        scope = self.scope
        for name, tags in scope.arms.items():
            values = scope.env.get(name)
            if not values:
                continue
            dropped = {
                value_id
                for value_id, chain in tags.items()
                if any(self._contradicts(branch, arm, key, holds) for branch, arm in chain)
            }
            kept = [v for v in values if v.id not in dropped]
            if kept and len(kept) < len(values):
                scope.env[name] = kept

    def _contradicts(self, branch: int, arm: int, key: Key, holds: bool) -> bool:
        known = self._conditions.get(branch)
        if known is None or known[0] != key or arm > 1:
            return False
        return (known[1] == (arm == 0)) != holds

    def _settle_appends(
        self, appended: list[tuple[Value, Value]], body: Sequence[cst.CSTNode]
    ) -> None:
        """What an arm put into containers: for an arm that ends in ``continue``/``break``,
        taken out until the loop's pass ends (``if not hits: out.append(t); continue`` then
        ``t[m] = 1; out.append(t)``: the rest of the iteration never sees the first append);
        else the enclosing arm's too."""
        if not (leaves_iteration(body) and self._loops):
            if self._arm_appends:
                self._arm_appends[-1].extend(appended)
            return
        frame = self._loops[-1]
        for container, element in reversed(appended):
            for index in range(len(container.elements) - 1, -1, -1):
                if container.elements[index] is element:
                    del container.elements[index]
                    break
            when = container.added.pop(element.id, 0)
            frame.deferred.append((container, element, when))

    def _loop(
        self,
        body: Sequence[cst.CSTNode],
        target: tuple[cst.BaseExpression, list[Value]] | None,
        parts: dict[str, list[Value]] | None = None,
        counters: frozenset[str] = frozenset(),
        once: bool = False,
        single: bool = False,
        distinct: dict[int, int] | None = None,
        statement: cst.CSTNode | None = None,
    ) -> None:
        """Two passes over a loop body (one where it runs exactly once: ``single``); then,
        unless the loop surely runs (``once``), what the names held before it (the loop may
        not run at all). ``distinct``: the target's values that are elements of a container
        (by id, with the container's id); the second pass binds other elements in their
        place (another iteration's tensor)."""
        scope = self.scope
        start_env = dict(scope.env)
        # Two passes let iteration k meet iteration k-1; deep nests get one to stay linear.
        with self._loop_depth:
            passes = 2 if self._loop_depth.depth <= _MAX_TWICE_DEPTH and not single else 1
            frame = _LoopFrame(
                key=self._next(), counters=counters, started=0, body=body, statement=statement
            )
            self._loops.append(frame)
            for index in range(passes):
                frame.started = self._next()
                if target is not None:
                    node, elements = target
                    named = parts or {}
                    if distinct:
                        elements = self._others(elements, distinct, index, frame)
                        named = {
                            name: self._others(vs, distinct, index, frame)
                            for name, vs in named.items()
                        }
                    self._bind_loop_target(node, elements, named)
                self._block(body)
                for container, element, when in frame.deferred:
                    container.elements.append(element)
                    container.added.setdefault(element.id, when)
                frame.deferred.clear()
            self._loops.pop()
        if once:
            return
        for name, values in start_env.items():
            bucket = scope.env.setdefault(name, [])
            held = {id(seen) for seen in bucket}
            for value in values:
                if id(value) not in held:
                    held.add(id(value))
                    bucket.append(value)

    def _others(
        self, values: list[Value], distinct: dict[int, int], index: int, frame: _LoopFrame
    ) -> list[Value]:
        """``values`` for pass ``index``: after the first, each container element replaced
        by another one (``_another``); the frame notes the elements the target holds."""
        out = [self._another(v) if index and v.id in distinct else v for v in values]
        for new, value in zip(out, values, strict=True):
            if value.id in distinct:  # by storage: a view of the element is the element's
                frame.elements[new.group.id] = distinct[value.id]
        return out

    def _bind_loop_target(
        self, node: cst.BaseExpression, elements: list[Value], parts: dict[str, list[Value]]
    ) -> None:
        """At the top of one pass: what the loop target's names hold in an iteration."""
        if isinstance(node, cst.Tuple) and elements and elements[0].origin == "named":
            last = node.elements[-1].value
            if isinstance(last, cst.Name):
                self._bind(last.value, list(elements))
        elif isinstance(node, cst.Name) and elements:
            self._bind(node.value, list(elements))
        elif isinstance(node, cst.Tuple | cst.List) and _module_rows(elements, len(node.elements)):
            for position, element in enumerate(node.elements):  # ``for conv, act in layers``
                held = _merged([row.elements[position] for row in elements])
                self._assign(element.value, held, None)
        else:
            self._assign(node, [self._unknown()], None)
        for name, values in parts.items():
            self._bind(name, list(values))

    def _iterate(
        self, iterable: list[Value], distinct: dict[int, int] | None = None
    ) -> list[Value]:
        """What one iteration over ``iterable`` may yield; ``distinct`` collects the ids of
        the tensors taken from containers (each iteration holds another one), each with
        the id of its container."""
        elements: list[Value] = []
        for value in iterable:
            if value.kind is Kind.CONTAINER:
                elements.extend(value.elements)
                if not value.elements and value.element_grad == 2:
                    element = self._unknown_element(value)
                    elements.append(element)
                    if distinct is not None:  # each iteration holds another one
                        distinct[element.id] = value.id
                if distinct is not None:
                    distinct.update((e.id, value.id) for e in value.elements if e.is_tensor)
            elif value.kind is Kind.PARAM_ITER:
                param = Value(kind=Kind.TENSOR, group=value.group, grad=2, leaf=True)
                param.origin, param.each_param = value.origin, True
                elements.append(param)
            elif value.kind is Kind.TENSOR and value.several:
                elements.append(self._part(value))  # ``for t in x.unbind(0)``
            elif (
                value.kind is Kind.TENSOR
                and value.origin == "arg"
                and value.grad == 2
                and not value.sure
            ):
                # an argument of unknown kind (most often a list of tensors) that its callers
                # fill with tensors that require grad: one of them, unknown but for its grad
                element = grad_element(value.grad_assumed)
                elements.append(element)
                if distinct is not None:  # each iteration holds another one
                    distinct[element.id] = value.id
            elif value.kind is Kind.TENSOR and value.sure:
                row = self._view(value)  # each iteration yields one row
                elements.append(row)
                # a parameter a loop iterates is most often a list of tensors (feature maps
                # per scale), whose elements are separate tensors, and so is an element an
                # enclosing loop took from a list (a list of lists: ``for tile in row``); the
                # rows of one tensor share its version counter, a case this gives up there
                listed = any(value.group.id in frame.elements for frame in self._loops)
                if distinct is not None and (value.origin == "arg" or listed):
                    distinct[row.id] = value.id
                if not listed and value.origin != "arg":  # iterating unbinds a tensor
                    row.multi_view = "unbind"  # torch refuses writes to its rows
            elif (
                value.kind is Kind.MODULE
                and value.module is not None
                and value.module.qualname == "torch.nn.ModuleList"
            ):
                elements.extend(self._list_members(value))
        return elements

    def _calls_builtin(self, node: cst.BaseExpression, names: tuple[str, ...]) -> str | None:
        """The name of the builtin among ``names`` that ``node`` calls (not shadowed by a
        function or a binding of the file), or None."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
            return None
        name = node.func.value
        known = name in names and name not in self.functions and self._lookup(name) is None
        return name if known else None

    def _zipped(
        self, stmt: cst.For, distinct: dict[int, int] | None = None
    ) -> tuple[dict[str, list[Value]], bool] | None:
        """``for i, block in enumerate(self.blocks)`` / ``for p, q in zip(a.parameters(),
        b.parameters())``: the modules or parameters each name of the target tuple gets;
        ``reversed(xs)`` iterates like ``xs``. None when the loop is not over these calls.
        The flag: the first iterable is a model's layers or parameters (``model_parts``),
        so the loop runs (``zip(self.enc, prev_states)`` pairs the states with the layers)."""
        call = stmt.iter
        kind = self._calls_builtin(call, ("enumerate", "zip", "reversed"))
        if not (
            isinstance(call, cst.Call)
            and kind is not None
            and call.args
            and not any(arg.star or arg.keyword for arg in call.args)
        ):
            return None
        evaluated = [self._eval(arg.value) for arg in call.args]
        runs = model_parts(evaluated[0])
        sources = [self._iterate(values, distinct) for values in evaluated]
        target = stmt.target
        if kind == "reversed":
            names: list[cst.BaseExpression] = [target]
        elif isinstance(target, cst.Tuple | cst.List):
            names = [element.value for element in target.elements]
        else:
            return {}, runs
        if kind == "enumerate":
            sources = [[new_value(Kind.OTHER)], sources[0]]  # the count is an int
        if len(names) != len(sources):
            return {}, runs
        # only modules, parameters, the views ``unbind``/``chunk`` give and the count: the
        # elements of tensor lists stay unknown (bound, they made the tuned corpora's chain
        # report 15 more findings, nearly all false: see bench/UNTUNED.md)
        parts = {
            name.value: values
            for name, values in zip(names, sources, strict=True)
            if isinstance(name, cst.Name)
            and values
            and all(
                v.kind is Kind.MODULE
                or v.kind is Kind.OTHER
                or (v.kind is Kind.TENSOR and (v.leaf or v.multi_view))
                or v.origin == ELEMENT_ORIGIN
                for v in values
            )
        }
        return parts, runs

    def _list_members(self, modules: Value) -> list[Value]:
        """What one iteration over an nn.ModuleList yields: a module of one of its same-file
        member classes, and each member whose constructor the source shows (a nested list
        whose members are all known, in order, as a tuple of them: ``for conv, act in
        self.stages`` unpacks it)."""
        assert modules.module is not None
        key = id(modules.module)
        found = self._members.get(key)
        if found is None:
            found = self._members[key] = []
            spec = modules.module
            if spec.members:
                built = tuple(
                    m.node for m in spec.member_specs if m.user_class and m.node is not None
                )  # the constructions the source shows, for ``instance_config``
                some = ModuleSpec(
                    qualname=None, node=None, candidates=spec.members, instances=built
                )
                found.append(new_value(Kind.MODULE, module=some))
            known = [
                member
                for member in spec.member_specs
                if member.user_class is None or member.user_class not in spec.members
            ]  # a same-file class's member: the candidate above stands for it
            found += _merged([self._member_value(member) for member in known])
        return list(found)

    def _member_value(self, spec: ModuleSpec) -> Value:
        if spec.qualname == "torch.nn.ModuleList" and spec.positional:
            parts = [self._member_value(m) for m in spec.member_specs]
            return new_value(Kind.CONTAINER, elements=parts)
        return new_value(Kind.MODULE, module=spec)
