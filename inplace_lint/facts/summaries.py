"""Which parameters each function writes in place, found syntactically before the dataflow pass.

Callers in the same file use these summaries: a call to ``add_residuals(h, rs)`` acts as an
in-place write to ``h`` at the helper's write, so the ordinary saved-for-backward and stale-read
machinery can tell whether the caller is harmed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import libcst as cst

from inplace_lint.facts.classes import literal_bool
from inplace_lint.facts.conditions import _negated
from inplace_lint.facts.heuristics import compiled_for_arrays
from inplace_lint.facts.names import ImportTable
from inplace_lint.facts.ops import OpTable, is_inplace_name
from inplace_lint.facts.param_aliases import aliased_param, returns
from inplace_lint.facts.summary_guards import (
    _UNALIASED,
    GradModeWalker,
    _Arms,
    guard_holds,
    mark_guarded,
    opted_out,
)
from inplace_lint.facts.syntax import (
    _string_key,
    _terminates,
    conditionally_copied,
    constant_element,
    copying_index,
    int_index,
    is_none,
    none_comparison,
)
from inplace_lint.facts.type_tests import type_arms
from inplace_lint.facts.walk import own_nodes


@dataclass(frozen=True)
class Callees:
    """The summaries a function's calls are resolved against: by name, and by
    ``Class.method`` for ``self.method(...)`` calls in ``owner``'s methods."""

    summaries: Mapping[str, Sequence[Mutation]]
    owner: str | None = None
    #: method name -> the one same-file plain class defining it (``AnalyzerBase._method_owners``)
    owners: Mapping[str, str] = field(default_factory=dict)
    #: same-file function -> the positions of the parameters it may hand back (``hands_back``)
    passes: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def lookup(self, func: cst.BaseExpression) -> tuple[str, Sequence[Mutation]] | None:
        """The callee's name and its writes, for a call to a summarised same-file function."""
        if isinstance(func, cst.Name):
            name = func.value
            found = self.summaries.get(name)
        elif (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            name = func.attr.value
            own = f"{self.owner}.{name}" if self.owner else None
            found = (self.summaries.get(own) if own else None) or self.summaries.get(name)
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            name = f"{func.value.value}.{func.attr.value}"  # ``Kernel.backward(g)``
            found = self.summaries.get(name) or self._owned(func.attr.value)
        elif isinstance(func, cst.Attribute):  # ``self.sampler.apply_temperature(x)``
            name = func.attr.value
            found = self._owned(name)
        else:
            return None
        return (name, found) if found else None

    def _owned(self, method: str) -> Sequence[Mutation] | None:
        owner = self.owners.get(method)
        return self.summaries.get(f"{owner}.{method}") if owner is not None else None


@dataclass(frozen=True)
class Mutation:
    """Function parameter ``param`` (position ``index``, not counting self) is written here."""

    index: int
    param: str
    node: cst.CSTNode
    stmt: cst.CSTNode
    what: str
    augmented: bool  # an augmented assignment: in place only if the argument is a tensor
    guard: str | None = None  # written only under ``if <guard>:`` (an ``inplace`` flag)
    guard_index: int = -1
    #: the value of ``guard`` the write needs (False for ``else:`` or ``if not <guard>:``)
    guard_value: bool = True
    #: the literal bool default of ``guard``, if it has one (for ``guard_none``: True when
    #: the default is ``None``)
    guard_default: bool | None = None
    #: the guard is ``if <guard> is not None:`` (``guard_value`` True) or ``is None`` (False)
    guard_none: bool = False
    returned: bool = False  # the function returns the mutated argument
    #: the function returns a value, so the write is a side effect the caller may not expect
    side_effect: bool = False
    #: the write goes to the elements of a list/iterable argument (``for p in params: p.sub_``)
    elementwise: bool = False
    #: through ``.data`` or ``.detach()``: torch lets it write a leaf that requires grad
    bypass: bool = False
    #: ``outputs[0].masked_fill_(...)``: the constant position of the argument's element the
    #: write reaches, when the argument is a list or tuple
    element: int | None = None
    #: that element was replaced by a new tensor before the write (a list's own, not the
    #: caller's)
    fresh_element: bool = False
    #: ``batch["ego"].div_(s)``: the string key of the argument's entry the write reaches,
    #: when the argument is a mapping
    key: str | None = None
    #: the same-file function whose write this is, when it is made by a call this function
    #: passes its parameter to (``fwd(batch)`` calling ``norm(batch["ego"])``)
    through: str = ""
    #: where the function is defined, when that is another file of the run (project mode):
    #: the write is then reported at the call, in the caller's file
    origin: str = ""
    #: the function replaces the parameter by a copy of itself on one arm of a branch
    #: (``conditionally_copied``): it decides itself when the caller's tensor may change
    copies_itself: bool = False
    #: written under no_grad (``nn.init.uniform_(w)``): torch lets it write a leaf
    no_grad: bool = False


def _root(node: cst.BaseExpression, table: OpTable) -> str | None:
    """The name a write target is rooted at: ``x``, ``x[0]``, ``x.data``, ``x.view(-1)``."""
    while True:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Subscript) or (
            isinstance(node, cst.Attribute) and node.attr.value in ("data", "T", "mT")
        ):
            node = node.value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and (
                node.func.attr.value in table.view_methods
                or table.is_inplace_method(node.func.attr.value)
            )
        ):
            node = node.func.value
        else:
            return None


def _copied_on_the_way(node: cst.BaseExpression) -> bool:
    """Some subscript between ``node`` and its root surely gathers a copy (``copying_index``)."""
    while isinstance(node, cst.Subscript | cst.Attribute | cst.Call):
        if isinstance(node, cst.Subscript) and copying_index(node):
            return True
        node = node.func if isinstance(node, cst.Call) else node.value
    return False


def _bypasses(node: cst.BaseExpression, table: OpTable) -> bool:
    """Whether a write target reaches its root through ``.data`` or ``.detach()``."""
    while True:
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "detach":
                return True
            node = node.func.value
        elif isinstance(node, cst.Subscript | cst.Attribute):
            node = node.value
        else:
            return False


def _element_of_param(node: cst.BaseExpression) -> int | None:
    """The constant position of the parameter's element a write goes through, else None."""
    found = constant_element(node)
    return found[1] if found is not None else None


def _key_of_param(node: cst.BaseExpression) -> str | None:
    """The string key of the parameter's entry a write goes through (``batch["ego"][0]``,
    ``batch["ego"].view(-1)``), else None."""
    while True:
        if isinstance(node, cst.Subscript):
            if isinstance(node.value, cst.Name):
                return _string_key(node)
            node = node.value
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            return None


def replaces_element(target: cst.Subscript, source: cst.BaseExpression | None) -> bool:
    """``maps[k] = block(maps[k])`` replaces a whole element by a call on it: the list idiom
    (a tensor's row would be written through a slice, or in place by the call itself); also
    where the call joins calls on it (``x[i] = torch.cat((cv2(x[i]), cv3(x[i])), 1)``)."""
    if not isinstance(source, cst.Call) or not source.args or len(target.slice) != 1:
        return False
    index = target.slice[0].slice
    if not isinstance(index, cst.Index) or not isinstance(index.value, cst.Name | cst.Integer):
        return False
    first = source.args[0].value
    if isinstance(first, cst.Tuple | cst.List):  # ``torch.cat((f(x[i]), g(x[i])), 1)``
        calls = [e.value for e in first.elements]
        return bool(calls) and all(replaces_element(target, c) for c in calls)
    return isinstance(first, cst.Subscript) and first.deep_equals(target)


def summarize(
    func: cst.FunctionDef,
    skip_first: bool,
    imports: ImportTable,
    table: OpTable,
    callees: Callees | None = None,
) -> list[Mutation]:
    """Every in-place write to a parameter that is not rebound before it, in source order.

    With ``callees`` (the summaries found so far, and the class ``func`` belongs to), a call
    that passes a parameter to a same-file function writing that argument is a write too.
    """
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if skip_first and params:
        params = params[1:]
    if not params or (callees is None and not may_write(own_nodes(func), table)):
        return []
    if compiled_for_arrays(func, imports):
        return []  # numba's: it writes NumPy arrays, never a caller's tensor
    finder = _MutationFinder(func, params, imports, table, callees)
    finder.run(func.body)
    gives, returned = returns(func)
    returned = returned | {finder.alias_of[name] for name in returned if name in finder.alias_of}
    # a write a callee made as a side effect of computing its result stays one, though this
    # function returns nothing (``update`` passing its batch to a metric that centres it)
    return sorted(
        (
            replace(m, returned=m.param in returned, side_effect=gives or m.side_effect)
            for m in finder.found.values()
        ),
        key=lambda m: m.index,  # stable: a parameter's writes stay in source order
    )


class _MutationFinder(GradModeWalker):
    """One walk over a function body, noting each in-place write that reaches a parameter
    (directly, through a loop variable over it, or through a local alias of it)."""

    def __init__(
        self,
        func: cst.FunctionDef,
        params: list[str],
        imports: ImportTable,
        table: OpTable,
        callees: Callees | None = None,
    ) -> None:
        self.func = func
        self.callees = callees
        self._passes = callees.passes if callees is not None else None
        self.imports = imports
        self.table = table
        self.index_of = {name: i for i, name in enumerate(params)}
        self.guarded: dict[int, tuple[str, bool, bool]] = {}
        self.defaults = {
            p.name.value: literal_bool(p.default)
            for p in (*func.params.params, *func.params.kwonly_params)
        }
        #: id of the write node (and, for a callee's write, of the call) -> the write
        self.found: dict[int | tuple[int, int], Mutation] = {}
        self.rebound: set[str] = set()
        #: names rebound after a ``None`` test of a parameter on one outcome only (``if
        #: spk_emb is not None: x = x + c``): the guard a later write to them keeps, the
        #: outcome on which the name still holds the caller's tensor
        self.rebound_unless: dict[str, tuple[str, bool, bool]] = {}
        #: alias -> the parameter test whose arm made it (``if cache is None: state = x``)
        self.alias_guard: dict[str, tuple[str, bool, bool] | None] = {}
        #: the branches and loop bodies being walked, innermost last: a rebinding in one arm
        #: holds for the rest of that arm, and after the branch only if every arm made it
        #: (``if isinstance(t, list): t = torch.stack(t)`` before ``t.clamp_()`` still
        #: writes the caller's tensor on the other path)
        self.arms: list[_Arms] = []
        #: ``outputs[0] = outputs[0].clone()``: (parameter, position) of elements replaced
        self.replaced: set[tuple[str, int]] = set()
        self.current: list[cst.CSTNode] = []
        self.element_of: dict[str, str] = {}  # loop variable -> the parameter it iterates over
        #: ``returns = r``, ``flat = r.view(-1)``: -> the parameter
        self.alias_of: dict[str, str] = {}
        #: ``x_h, x_l = x``: a name unpacked from a parameter -> its position there
        self.unpacked: dict[str, int] = {}
        self._start_grad_mode()

    def hit(
        self,
        name: str | None,
        node: cst.CSTNode,
        what: str,
        augmented: bool = False,
        bypass: bool = False,
        element: int | None = None,
        key: str | None = None,
        no_grad: bool = False,
    ) -> None:
        """``node`` writes in place through ``name``: a mutation if that is a parameter."""
        if element is None and name in self.unpacked:
            element = self.unpacked[name]  # ``x_h += y`` after ``x_h, x_l = x``: ``x[0]``
        off = self.grad_is_off(name)  # through ``m = x.detach()``, or with grad off
        written = name
        name, elementwise = self._parameter_of(name)
        index_of = self.index_of
        # a list's element replaced by a new tensor first (``outputs[0] = outputs[0].clone()``)
        # is not the caller's any more; for a tensor argument it is a row written all the same
        fresh = element is not None and (name, element) in self.replaced
        if name in index_of and not self.is_rebound(name) and id(node) not in self.found:
            if not self.current or id(node) in self.plain_nodes:
                return  # the in-place path a grad test keeps for no grad: meant
            if key is not None and self.is_rebound(f"{_UNALIASED}{name}[{key!r}]"):
                return  # an entry this function put there: its own tensor
            unless = self.rebound_unless.get(name) if name is not None else None
            guard, wanted, none_test = self.guarded.get(id(node), unless or (None, True, False))
            aliased = self.alias_guard.get(written) if written in self.alias_of else None
            if aliased is not None and aliased[2] and none_test and guard == aliased[0]:
                if wanted != aliased[1]:
                    return  # ``if c is None: s = x`` ... ``if c is not None: s.zero_()``
            elif aliased is not None and aliased[2] and guard is None:
                guard, wanted, none_test = aliased  # the caller's tensor only on that path
            self.found[id(node)] = Mutation(
                index_of[name],
                name,
                node,
                self.current[-1],
                what,
                augmented,
                guard,
                index_of.get(guard, -1) if guard else -1,
                guard_value=wanted,
                guard_default=self._guard_default(guard, none_test),
                guard_none=none_test,
                elementwise=elementwise,
                bypass=bypass,
                element=element,
                fresh_element=fresh,
                key=key,
                copies_itself=name in self.copied,
                no_grad=no_grad or off or self.grad_is_off(name),
            )

    @functools.cached_property
    def copied(self) -> frozenset[str]:
        """The parameters the function copies itself on one arm (``conditionally_copied``),
        read when the first write to a parameter is found."""
        return conditionally_copied(self.func, self.imports)

    def _passed_guard(
        self, mutation: Mutation, positional: list[cst.Arg], keywords: dict[str, cst.Arg]
    ) -> str | bool:
        """How a callee's guarded write passes through this call: the name of this function's
        parameter passed for the guard (the write keeps its test, on that parameter); True
        when the call's argument lets the write happen (no guard any more); False when it
        does not, or cannot be known for a flag."""
        if mutation.guard is None:
            return True
        arg = keywords.get(mutation.guard)
        if arg is None and 0 <= mutation.guard_index < len(positional):
            arg = positional[mutation.guard_index]
        name = arg.value.value if arg is not None and isinstance(arg.value, cst.Name) else None
        if name is not None and name in self.index_of and not self.is_rebound(name):
            return name
        kept = {k: (a, []) for k, a in keywords.items()}
        return guard_holds(kept, [(a, []) for a in positional], mutation)

    def _guard_default(self, guard: str | None, none_test: bool) -> bool | None:
        """The literal bool default of a flag guard; for a ``None`` test, whether the default
        is ``None``."""
        if guard is None:
            return None
        if none_test:
            params = (*self.func.params.params, *self.func.params.kwonly_params)
            return any(p.name.value == guard and is_none(p.default) for p in params)
        return self.defaults.get(guard)

    def _parameter_of(self, name: str | None) -> tuple[str | None, bool]:
        """The parameter a written name stands for (through a local alias of it, or as the
        loop variable over it), and whether it is an element of that parameter."""
        if name is not None and name in self.alias_of and not self.is_rebound(_UNALIASED + name):
            name = self.alias_of[name]
        elementwise = name in self.element_of
        if name is not None and elementwise:
            name = self.element_of[name]
        return name, elementwise

    def _through_call(self, node: cst.Call) -> None:
        """``norm(batch["ego"])`` where same-file ``norm`` writes its argument in place:
        this function writes its parameter's entry at the callee's write."""
        assert self.callees is not None
        found = self.callees.lookup(node.func)
        if found is None or not self.current:
            return
        callee, mutations = found
        positional = [a for a in node.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a for a in node.args if a.keyword is not None}
        for mutation in mutations:
            arg = keywords.get(mutation.param)
            if arg is None and mutation.index < len(positional):
                arg = positional[mutation.index]
            passed_guard = self._passed_guard(mutation, positional, keywords)
            if arg is None or passed_guard is False:
                continue
            guard = passed_guard if isinstance(passed_guard, str) else None
            passed = arg.value
            if _copied_on_the_way(passed):
                continue  # ``f(x[x > 0])`` hands ``f`` a gathered copy: ``x`` is not written
            name, elementwise = self._parameter_of(_root(passed, self.table))
            if name not in self.index_of or self.is_rebound(name):
                continue
            if isinstance(passed, cst.Name):
                element, key = mutation.element, mutation.key
                elementwise = elementwise or mutation.elementwise
            elif not mutation.elementwise:
                # the entry passed is what the callee writes (a row of it, or its element:
                # either way that entry changes)
                element, key = _element_of_param(passed), _key_of_param(passed)
            else:
                continue  # the elements of an element: not followed
            self.found.setdefault(
                (id(mutation.node), id(node)),
                replace(
                    mutation,
                    index=self.index_of[name],
                    param=name,
                    guard=guard,
                    guard_index=self.index_of[guard] if guard else -1,
                    guard_default=self._guard_default(guard, mutation.guard_none),
                    elementwise=elementwise,
                    element=element,
                    key=key,
                    fresh_element=False,
                    copies_itself=mutation.copies_itself or name in self.copied,
                    through=mutation.through or callee,
                    # another file's function: its write is this file's call to it
                    node=node if mutation.origin else mutation.node,
                    stmt=self.current[-1] if mutation.origin else mutation.stmt,
                ),
            )

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.current.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.current.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.func

    def visit_If(self, node: cst.If) -> None:
        if self.arms and self.arms[-1].orelse is node:  # an ``elif``: the else arm of
            self.arms[-1].next_arm()  # the branch being walked
        # a name a type test says holds no tensor in an arm is not the caller's tensor there
        first, other = type_arms(node.test, {}, self.imports.qualify)
        self.arms.append(_Arms(set(first), orelse=node.orelse, otherwise=frozenset(other)))
        self._guard(node.test, node.body, node.orelse)
        self._note_grad_test(node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._guard(node.test, node.body, node.orelse)

    def _guard(
        self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None
    ) -> None:
        """``if inplace:`` (or ``if not inplace:``) on a parameter, or ``if mask is not
        None:``: the writes in each arm happen only when the call gives it that arm's value."""
        inner = _negated(test)
        negated = inner is not None
        name = inner if inner is not None else test
        none_test = False
        if isinstance(name, cst.Comparison) and len(name.comparisons) == 1:
            compared = none_comparison(name)
            if compared is None:
                return
            name, is_none_test = compared
            none_test, negated = True, negated != is_none_test
        if not isinstance(name, cst.Name) or name.value not in self.index_of:
            return
        mark_guarded(body, (name.value, not negated, none_test), self.guarded)
        if orelse is not None:
            mark_guarded(orelse, (name.value, negated, none_test), self.guarded)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self._note_grad_off(node, self.alias_of)
        table = self.table
        func_node = node.func
        if self.callees is not None:
            self._through_call(node)
        qualified = self.imports.qualify(func_node) or ""
        if (
            isinstance(func_node, cst.Attribute)
            and not qualified.startswith("torch.")  # ``nn.init.uniform_(w, a, b)``: below
            and table.inplace_call(func_node.attr.value, node.args)
        ):
            what = f"`.{func_node.attr.value}()`"
            self.hit(
                _root(func_node.value, table),
                node,
                what,
                bypass=_bypasses(func_node, table),
                element=_element_of_param(func_node.value),
                key=_key_of_param(func_node.value),
            )
            return
        if qualified.split(".", 1)[0] != "torch" or qualified.startswith("torch.nn.utils."):
            return
        if not node.args:
            return
        first = node.args[0].value
        inplace_kw = any(
            a.keyword is not None
            and a.keyword.value == "inplace"
            and isinstance(a.value, cst.Name)
            and a.value.value == "True"
            for a in node.args
        )
        short = qualified.rsplit(".", 1)[-1]
        if inplace_kw or is_inplace_name(short):
            # ``nn.init.orthogonal_(w.data)``: through ``.data``, hidden from autograd; every
            # ``nn.init`` function writes under no_grad
            self.hit(
                _root(first, table),
                node,
                f"`{short}()`",
                bypass=_bypasses(first, table),
                no_grad=qualified.startswith("torch.nn.init."),
            )
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "out":
                bypass = _bypasses(arg.value, table)
                self.hit(_root(arg.value, table), node, f"`{short}(..., out=)`", bypass=bypass)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        target = node.target
        if isinstance(target, cst.Name):
            self.hit(target.value, node, "augmented assignment", augmented=True)
        else:
            what = "augmented assignment on a slice"
            element = _element_of_param(target)
            key = _key_of_param(target)
            self.hit(
                _root(target, self.table),
                node,
                what,
                element=element,
                key=key,
                augmented=key is not None,  # ``d["k"] += v``: in place only on a tensor entry
                bypass=_bypasses(target, self.table),  # ``w.data *= s``
            )

    def visit_Assign(self, node: cst.Assign) -> None:
        self._note_grad_off(node, self.alias_of)
        for target in node.targets:
            sub = target.target
            index = int_index(sub) if isinstance(sub, cst.Subscript) else None
            if (
                isinstance(sub, cst.Subscript)
                and isinstance(sub.value, cst.Name)
                and index is not None
            ):
                self.replaced.add((sub.value.value, index))
            key = _string_key(sub) if isinstance(sub, cst.Subscript) else None
            if key is not None and isinstance(sub.value, cst.Name):  # ``state["m"] = g.clone()``
                self.add_rebound({f"{_UNALIASED}{sub.value.value}[{key!r}]"})  # on this path
            if (
                isinstance(sub, cst.Subscript)
                and not _keyed(sub)
                and not replaces_element(sub, node.value)  # a list element replaced
            ):
                element = _element_of_param(sub.value)
                key = _key_of_param(sub.value)
                what = "subscript assignment"
                self.hit(_root(sub, self.table), node, what, element=element, key=key)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        for target in original_node.targets:
            name = target.target
            names = [name] if isinstance(name, cst.Name) else []
            if isinstance(name, cst.Tuple | cst.List):  # ``a, b = r.split(1, -1)``: views
                names = [e.value for e in name.elements if isinstance(e.value, cst.Name)]
            unpacked = isinstance(name, cst.Tuple | cst.List) and isinstance(
                original_node.value, cst.Name
            )
            for position, bound in enumerate(names):
                self.unpacked.pop(bound.value, None)
                if bound.value in self.index_of:
                    continue
                param = aliased_param(original_node.value, self.table, self._passes)
                if param is not None and not self.is_rebound(_UNALIASED + param):
                    param = self.alias_of.get(param, param)  # not once bound to another
                if param in self.index_of and not self.is_rebound(param):
                    self.alias_of[bound.value] = param
                    self._realias(bound.value)
                    self.alias_guard[bound.value] = self.guarded.get(id(original_node))
                    if (
                        _bypasses(original_node.value, self.table) and not self.arms
                    ):  # ``m = x.detach()``
                        self.grad_off.add(bound.value)
                    if unpacked and len(names) == len(name.elements):  # type: ignore[union-attr]
                        self.unpacked[bound.value] = position
                else:
                    self._unalias(bound.value)
            names_bound: set[str] = set()
            _collect_names(target.target, names_bound)
            if (
                isinstance(name, cst.Name)
                and name.value in self.index_of
                and aliased_param(original_node.value, self.table, self._passes) == name.value
            ):  # ``x = x.unsqueeze(0) if x.dim() == 2 else x``: still the caller's tensor
                names_bound.discard(name.value)
                if (
                    _bypasses(original_node.value, self.table) and not self.arms
                ):  # ``x = x.detach()``
                    self.grad_off.add(name.value)
            self.add_rebound(names_bound)

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._rebind(original_node.target)

    def _rebind(self, target: cst.BaseExpression) -> None:
        """Names bound anew: no longer an alias of a parameter or an element of one."""
        names: set[str] = set()
        _collect_names(target, names)
        for name in names:
            self._unalias(name)
            self.element_of.pop(name, None)
            self.unpacked.pop(name, None)
        self.add_rebound(names)

    def _unalias(self, name: str) -> None:
        """``name`` bound to something else: no alias of a parameter on this path. In an arm
        of a branch the alias stays for the other arms (``if reals: v = x_cont`` then ``if
        cats: v = torch.cat(...)`` leaves ``v`` the caller's tensor on one path)."""
        if self.arms:
            self.arms[-1].current.add(_UNALIASED + name)
        else:
            self.alias_of.pop(name, None)

    def _realias(self, name: str) -> None:
        self.rebound.discard(_UNALIASED + name)
        for arms in self.arms:
            arms.current.discard(_UNALIASED + name)
            arms.made.add(name)  # not an alias in the arms after it

    def is_rebound(self, name: str) -> bool:
        """``name`` no longer holds what it did on entry, on the path being walked."""
        return name in self.rebound or any(name in arms.current for arms in self.arms)

    def add_rebound(self, names: set[str]) -> None:
        for name in names:
            self.rebound_unless.pop(name, None)
        if self.arms:
            self.arms[-1].current.update(names)
        else:
            self.rebound |= names

    def visit_Else(self, node: cst.Else) -> None:
        if self.arms:
            self.arms[-1].next_arm()  # the other arm: the body's rebindings do not hold

    def leave_If(self, original_node: cst.If) -> None:
        arms = self.arms.pop()
        if original_node.orelse is not None:  # rebound on every path through the branch
            self.add_rebound(set.intersection(*arms.done, arms.current))
        elif _terminates(original_node.body.body):  # only the untaken test goes on
            self.add_rebound(set(arms.otherwise))
        elif opted_out(original_node.test):
            # ``if not self.inplace: batch = batch.clone()``: the caller's tensor goes on only
            # in the in-place mode its owner opted into when it built it (torchvision's
            # RandomMixup); a parameter flag is the call's to set, and stays a path
            self.add_rebound(arms.current)
        else:
            self._rebound_unless(original_node, arms.current)

    def _rebound_unless(self, node: cst.If, names: set[str]) -> None:
        """``if spk_emb is not None: x = x + c`` with no ``else``: after it, ``x`` is the
        caller's tensor only where ``spk_emb`` is ``None``, a guard its later writes keep."""
        compared = none_comparison(node.test)
        if compared is None or not names:
            return
        tested, is_none_test = compared
        if not isinstance(tested, cst.Name) or tested.value not in self.index_of:
            return
        for name in names:  # the body's outcome rebinds; the other keeps the caller's
            self.rebound_unless[name] = (tested.value, is_none_test, True)

    def visit_For(self, node: cst.For) -> None:
        self.arms.append(_Arms())  # the body may run no time at all
        iterated = node.iter
        if (
            isinstance(iterated, cst.Name)
            and iterated.value in self.index_of
            and not self.is_rebound(iterated.value)
            and isinstance(node.target, cst.Name)
        ):
            self.element_of[node.target.value] = iterated.value
        else:
            self._rebind(node.target)

    def leave_For(self, original_node: cst.For) -> None:
        self.arms.pop()

    def visit_While(self, node: cst.While) -> None:
        self.arms.append(_Arms())

    def leave_While(self, original_node: cst.While) -> None:
        self.arms.pop()


_DESTINATION = re.compile(
    r"(out|output|dst|dest|destination|write_to|buf|buffer|result|cache|state|storage)"
    r"|.*_(out|buf|buffer|cache|state|storage)"
)


def destination(param: str) -> bool:
    """Parameters named as a place to write into (``out``, ``conv_state``, ``kv_cache``)."""
    return _DESTINATION.fullmatch(param) is not None


def tensor_writes(summary: Sequence[Mutation], not_tensors: frozenset[str]) -> list[Mutation]:
    """The writes of a summary that can reach a tensor: not those to a parameter that holds
    none (``not_tensors``), unless they reach its elements or entries."""
    return [m for m in summary if m.elementwise or m.key is not None or m.param not in not_tensors]


def may_write(nodes: Iterable[cst.CSTNode], table: OpTable) -> bool:
    """A cheap superset of the writes the visitor in :func:`summarize` records."""
    for node in nodes:
        kind = type(node)
        if kind is cst.AugAssign:
            return True
        if kind is cst.Assign:
            if any(type(t.target) is cst.Subscript for t in node.targets):
                return True
        elif kind is cst.Call:
            func = node.func
            if type(func) is cst.Attribute:
                name = func.attr.value
                if table.is_inplace_method(name):
                    return True
            else:
                name = func.value if type(func) is cst.Name else ""
            if is_inplace_name(name):
                return True
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value in ("inplace", "out"):
                    return True
    return False


def _keyed(node: cst.Subscript) -> bool:
    """``d["key"] = v`` stores into a dict, not a tensor."""
    return any(
        isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.SimpleString)
        for e in node.slice
    )


def _collect_names(target: cst.BaseExpression, out: set[str]) -> None:
    if isinstance(target, cst.Name):
        out.add(target.value)
    elif isinstance(target, cst.Tuple | cst.List):
        for element in target.elements:
            _collect_names(element.value, out)
