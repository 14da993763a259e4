"""A same-file plain function's result at one call, computed with the caller's own values.

Summaries (``summaries.py``, ``steps.py``) say what a helper does to its arguments whatever
they are. What it *returns* depends on them: ``compute_losses(gen, disc, x, y)`` returns
losses whose graphs went through the modules the caller passed, ``head(x)`` returns
``x.sigmoid()``, whose saved output is then the caller's, and ``flat(x)`` returns a view of
the caller's tensor. So at each call the helper's body is interpreted again with its
parameters bound to the caller's values (the same abstract values, so saves the body makes
land on the caller's storage groups) and the values it returns become the call's result.

This pass is a *sandbox*: it moves no version counter (the argument writes are the
summaries' to apply, once) and every event it records is dropped (the helper's own analysis
reports what happens inside it). A ``self.method`` left abstract (``raise
NotImplementedError``) is the one same-file subclass's override, when exactly one overrides
it. Limits: only functions defined in this file, called by name
(or as ``self.method`` inside their class), not through ``*args`` or ``**kwargs``; no
recursion; at most two nested levels; bodies of at most :data:`MAX_STATEMENTS` statements
and :data:`BUDGET` statements per file; generators and coroutines are left alone. A list or
dict argument is copied into the sandbox, and what the calls in it would teach other
functions (the grads and modules they pass) is forgotten when it ends.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from inplace_lint.facts import events as ev
from inplace_lint.facts.class_hierarchy import abstract, subclasses
from inplace_lint.facts.classes import ClassFacts
from inplace_lint.facts.model import Kind, Value, new_value
from inplace_lint.facts.state import AnalyzerBase, _Scope
from inplace_lint.facts.walk import own_nodes

#: helpers with longer bodies keep the summary's result (interpreting them at every call
#: costs more than the facts they give)
MAX_STATEMENTS = 120
#: nested sandboxes: a helper's result computed while computing another helper's
MAX_DEPTH = 2
#: the most values an argument may hold for a call to be interpreted: a helper applied again
#: and again to its own result in loops (``s = strip_lead(s, *prefixes)``) would otherwise
#: multiply them at each call
MAX_ARGUMENT_VALUES = 8
#: the statements all sandboxes of one file may interpret (counted as written, once per
#: sandbox): a bound on the cost whatever the call graph; calls past it keep the summary
BUDGET = 20_000

Args = list[tuple[str, cst.Arg, list[Value]]]


class Inline(AnalyzerBase):
    """The sandbox room of the interpreter (see the module docstring)."""

    def _inline_call(self, name: str, args: Args) -> list[Value] | None:
        """The values the same-file plain function ``name(...)`` returns, given what this
        call passes; None when it cannot be interpreted here (the caller keeps the
        summary's result)."""
        func = self.functions.get(name)
        if func is None or id(func) in self._method_ids:
            return None
        return self._sandbox(func, None, args)

    def _inline_method(self, method: str, args: Args) -> list[Value] | None:
        """Likewise for ``self.method(...)`` inside a method of the same class."""
        cls = self.scope.ctx.cls
        if cls is not None and method not in cls.methods:
            cls = _defining_base(self.classes, cls, method)  # inherited from a same-file base
        func = cls.methods.get(method) if cls is not None else None
        if cls is None or func is None or cls.is_function:
            return None
        if _decorated(func) == {"staticmethod"}:  # ``self.split_heads(x, n)``: no ``self``
            return self._sandbox(func, None, args)
        if not _plain_method(func):
            return None
        if abstract(func):  # left to a subclass: the one same-file override, if one
            overrides = [
                c
                for c in subclasses(self.classes, cls.name)
                if method in c.methods and not abstract(c.methods[method])
            ]
            if len(overrides) != 1 or not _plain_method(overrides[0].methods[method]):
                return None
            cls = overrides[0]
            func = cls.methods[method]
        return self._sandbox(func, cls, args)

    def _inline_forward(self, owner: Value, class_name: str, args: Args) -> list[Value] | None:
        """``main(x)`` on a same-file module whose forward returns a tuple: each element as
        the forward computes it from this call's values, with ``self``'s submodules those of
        ``owner`` (``main.q``, which an optimizer over ``main.q.parameters()`` steps)."""
        cls = self.classes.get(class_name)
        func = cls.methods.get("forward") if cls is not None else None
        if cls is None or func is None or not _plain_method(func):
            return None
        return self._sandbox(func, cls, args, owner)

    def _inline_module_method(
        self, modules: list[Value], method: str, args: Args
    ) -> list[Value] | None:
        """``self.clip_model.encode_image(x)`` on a module of one same-file class: what that
        method returns, interpreted with this call's values and the module's own submodules
        (a module call's output is surely a tensor, with what its layers saved)."""
        classes = {c for m in modules if m.module is not None for c in m.module.classes}
        if len(modules) != 1 or len(classes) != 1 or method == "forward":
            return None
        cls = self.classes.get(classes.pop())
        func = cls.methods.get(method) if cls is not None else None
        if cls is None or func is None or not _plain_method(func):
            return None
        return self._sandbox(func, cls, args, modules[0])

    def _sandbox(
        self, func: cst.FunctionDef, cls: ClassFacts | None, args: Args, owner: Value | None = None
    ) -> list[Value] | None:
        size = self._inlinable(func)
        if size is None or size > self._inline_budget or any(arg.star for _, arg, _ in args):
            return None
        if any(len(values) > MAX_ARGUMENT_VALUES for _, _, values in args):
            return None  # a name that may hold that many values: its result stays the summary's
        if cls is None and all(v.kind is Kind.OTHER for _, _, vs in args for v in vs):
            return None  # ``make_divisible(ch, 8)``: nothing of the caller's to compute with
        stack = self._inlining
        if id(func) in stack or len(stack) >= MAX_DEPTH:
            return None
        bound = self._bind_call(func, args, skip_first=cls is not None)
        if bound is None:
            return None
        if owner is not None:  # ``self`` is the module called
            bound[0] = (bound[0][0], [owner])
        self._inline_budget -= size
        ctx = self._context(func, cls)
        scope = _Scope(ctx=ctx, no_grad=ctx.no_grad or self.scope.no_grad)
        outer, kept, tables = self._scope, self.facts, self._call_tables()
        outer_owner = self._sandbox_owner
        self._scope, self.facts, self._sandbox_owner = scope, ev.Facts(), owner
        stack.append(id(func))
        try:
            for param, values in bound:
                self._bind(param, [_own_container(v) for v in values])
            self._block(func.body.body)
        finally:
            stack.pop()
            self._scope, self.facts, self._sandbox_owner = outer, kept, outer_owner
            self._restore_call_tables(tables)
        return _returned(scope)

    def _call_tables(self) -> tuple[dict, ...]:
        """What calls teach about other functions and attributes (the grads and modules
        passed, the grad modes a Sequential runs in, what ``self.attr`` holds): a sandbox
        leaves them as they were, so each function's own analysis sees what it saw
        without sandboxes."""
        return (
            {name: dict(keys) for name, keys in self.arg_grads.items()},
            {name: dict(keys) for name, keys in self.arg_modules.items()},
            {key: set(modes) for key, modes in self.sequential_calls.items()},
            dict(self.class_values),
            {name: dict(keys) for name, keys in self.arg_sure.items()},
            {name: dict(keys) for name, keys in self.arg_certain.items()},
        )

    def _restore_call_tables(self, tables: tuple[dict, ...]) -> None:
        (
            self.arg_grads,
            self.arg_modules,
            self.sequential_calls,
            self.class_values,
            self.arg_sure,
            self.arg_certain,
        ) = tables

    def _inlinable(self, func: cst.FunctionDef) -> int | None:
        """The number of statements of a synchronous, non-generator function of a bounded
        size that returns a value somewhere; None for any other (a procedure's result is
        None, and its writes are the summaries')."""
        if id(func) not in self._inlinable_:
            nodes = list(own_nodes(func))
            size = sum(isinstance(n, cst.BaseSmallStatement) for n in nodes)
            plain = func.asynchronous is None and not any(
                isinstance(n, cst.Yield | cst.Await) for n in nodes
            )
            gives = any(isinstance(n, cst.Return) and n.value is not None for n in nodes)
            fits = plain and gives and size <= MAX_STATEMENTS
            self._inlinable_[id(func)] = size if fits else None
        return self._inlinable_[id(func)]

    def _bind_call(
        self, func: cst.FunctionDef, args: Args, skip_first: bool
    ) -> list[tuple[str, list[Value]]] | None:
        """Each parameter with the values this call gives it (its own default where it
        gives none; ``self`` as a method's own analysis binds it); None where the call
        cannot be matched to the parameters."""
        params = func.params
        star = params.star_arg if isinstance(params.star_arg, cst.Param) else None
        ordered = [*params.posonly_params, *params.params]
        bound: list[tuple[str, list[Value]]] = []
        if skip_first:
            if not ordered:
                return None
            bound.append((ordered[0].name.value, [new_value(Kind.OTHER, ordered[0].name.value)]))
            ordered = ordered[1:]
        positional = [values for keyword, _, values in args if not keyword]
        keywords = {keyword: values for keyword, _, values in args if keyword}
        if len(positional) > len(ordered) and star is None:
            return None
        for index, param in enumerate([*ordered, *params.kwonly_params]):
            name = param.name.value
            if index < len(positional) and index < len(ordered):
                bound.append((name, positional[index]))
            elif name in keywords:
                bound.append((name, keywords.pop(name)))
            else:
                bound.append((name, [self._param_value(param, index)]))
        if star is not None:  # ``*args``: a tuple of the other positional values
            bound.append((star.name.value, [_packed(positional[len(ordered) :], {})]))
        if params.star_kwarg is not None:  # ``**kwargs``: a dict of the other keywords
            bound.append((params.star_kwarg.name.value, [_packed([], keywords)]))
            keywords = {}
        return None if keywords else bound


def _packed(positional: list[list[Value]], keywords: dict[str, list[Value]]) -> Value:
    """The tuple ``*args`` or the dict ``**kwargs`` a call fills: its values by position or
    by key."""
    record = new_value(Kind.CONTAINER, literal_container=True)
    for position, values in enumerate(positional):
        record.elements.extend(values)
        record.slots.update((v.id, position) for v in values)
    for key, values in keywords.items():
        record.items[key] = list(values)
        record.elements.extend(values)
    return record


def _own_container(value: Value) -> Value:
    """What the sandbox binds for an argument: the caller's tensor itself, but a copy of
    a list or dict (what the body adds to it is not known to reach the caller's, as
    without the sandbox; and a helper called many times must not grow it every time)."""
    if value.kind is not Kind.CONTAINER:
        return value
    return replace(
        value,
        elements=list(value.elements),
        items={key: list(values) for key, values in value.items.items()},
        added=dict(value.added),
    )


def _defining_base(
    classes: dict[str, ClassFacts], cls: ClassFacts, method: str
) -> ClassFacts | None:
    """The nearest same-file base class of ``cls`` that defines ``method``, depth first."""
    pending, seen = list(cls.bases), {cls.name}
    while pending:
        base = classes.get(pending.pop(0))
        if base is None or base.name in seen:
            continue
        seen.add(base.name)
        if method in base.methods:
            return base
        pending = list(base.bases) + pending
    return None


def _decorated(func: cst.FunctionDef) -> set[str]:
    """The plain names ``func`` is decorated with."""
    return {d.decorator.value for d in func.decorators if isinstance(d.decorator, cst.Name)}


def _plain_method(func: cst.FunctionDef) -> bool:
    """An instance method: not decorated as a static or class method or a property."""
    return not _decorated(func) & {"staticmethod", "classmethod", "property"}


def _returned(scope: _Scope) -> list[Value] | None:
    """What the interpreted body returns: one tuple, position by position, when every
    ``return`` gives a tuple of one length; else every value that escapes it."""
    positions = scope.returned_positions()
    if positions is None:
        return _escaped(scope)
    if all(len(values) == 1 for values in positions):
        record = new_value(Kind.CONTAINER)
        record.elements = [values[0] for values in positions]
        return [record]
    if not all(positions):  # a position with no value to hold: no record can say which
        escaped = [v for v in scope.escapes if v.kind is not Kind.OTHER]
        return escaped or None
    # a tuple whose positions each hold one of several values (``return _INT, 1, x`` and
    # ``return _MASK, x.ndim, x``): every value, its position in ``slots``, so that an
    # unpacking caller gives each name its own position's values
    record = new_value(Kind.CONTAINER)
    for position, values in enumerate(positions):
        record.elements.extend(values)
        record.slots.update((v.id, position) for v in values)
    return [record]


def _escaped(scope: _Scope) -> list[Value] | None:
    """The returned values (a container whole, not its tensors one by one), and the values a
    generator yields."""
    escaped = [v for v in scope.returned if v.kind is not Kind.OTHER]
    returned = {id(v) for v in scope.returned}
    flat = {id(e) for v in scope.returned for e in _contents(v)}
    escaped += [
        v
        for v in scope.escapes
        if v.kind is not Kind.OTHER and id(v) not in returned and id(v) not in flat
    ]
    return escaped or None


def _contents(value: Value) -> list[Value]:
    """Everything a container holds, nested containers included."""
    out: list[Value] = []
    seen: set[int] = set()  # ids of what ``out`` holds: containers can hold thousands
    stack = list(value.elements)
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        out.append(item)
        stack.extend(item.elements)
    return out
