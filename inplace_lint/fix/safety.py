"""Whether an out-of-place rewrite can change what correct code computes.

A rewrite is safe when the written name is a local whose every earlier binding is a fresh
tensor and whose earlier uses create no alias (no view, no container, no call that might
keep it, no closure), outside ``no_grad``. Which ops, methods and modules hand back new
storage, and which in-place methods have an out-of-place twin, comes from the generated op
table (``tools/opprobe/aliasing.py`` probes each in several configurations: ``contiguous``,
``to`` and ``F.dropout(training=False)`` may hand back their input).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from inplace_lint.facts.ops import inplace_flag_positions, load_table
from inplace_lint.fix.tree import FixTree, ScopeIndex
from inplace_lint.outofplace import is_inplace_name, is_self, keyword

__all__ = [
    "SCOPES",
    "SafetyAnalysis",
    "built_fresh",
    "fresh_function",
    "fresh_method",
    "fresh_module",
    "has_twin",
    "passing_module",
]


def fresh_function(qualified: str) -> bool:
    """``torch.add``, ``torch.nn.functional.conv2d``: never hands back an input's storage."""
    return qualified in load_table().fresh_functions


def fresh_method(name: str) -> bool:
    """``x.sum()``, ``x.size()``, ``x.argmax()``: never hands back ``x``'s storage."""
    return name in load_table().fresh_methods


def has_twin(method: str) -> bool:
    """``x.clamp_(...)`` may be written ``x = x.clamp(...)``: the stem returns what the
    in-place method writes, in new storage."""
    return method in load_table().outofplace_twins


def fresh_module(short: str) -> bool:
    """``nn.Linear``: its forward never hands back its input's storage."""
    return f"torch.nn.{short}" in load_table().fresh_modules


def built_fresh(short: str, constructor: cst.Call) -> bool:
    """``nn.<short>(...)`` as ``constructor`` builds it never hands back its input's storage:
    a fresh module whose ``inplace`` flag, where it has one, is left off (by keyword or by
    position: ``nn.ReLU(True)`` is in place)."""
    if not fresh_module(short) or any(arg.star for arg in constructor.args):
        return False
    flag = keyword(constructor, "inplace")
    if flag is not None:
        return isinstance(flag.value, cst.Name) and flag.value.value == "False"
    position = inplace_flag_positions().get(short)
    positional = [arg for arg in constructor.args if arg.keyword is None]
    return position is None or len(positional) <= position


def passing_module(short: str) -> bool:
    """``nn.ReLU``, ``nn.Dropout``: its forward hands back its input, a view of it or a new
    tensor, never a tensor another name holds (``out = self.relu(out)`` keeps ``out`` the
    only name of its tensor)."""
    return f"torch.nn.{short}" in load_table().passing_modules


def _receiver_method(name: str) -> bool:
    """``h.view(-1)``, ``h.to(dtype)``: the receiver, a view of it or a copy."""
    table = load_table()
    return name in table.receiver_methods or name in table.fresh_methods


def _plain_property(name: str) -> bool:
    """``x.shape``, ``x.grad``: a property that is no view of ``x`` (``x.T`` is one)."""
    table = load_table()
    return name in table.tensor_properties and name not in table.view_methods


#: Builtins that take a tensor without keeping a reference to it (Python, not torch).
_SAFE_BUILTINS = frozenset(
    [
        "len",
        "print",
        "float",
        "int",
        "bool",
        "str",
        "repr",
        "format",
        "isinstance",
        "type",
        "id",
        "hash",
        "round",
        "abs",
    ]
)

_GRAD_OFF = ("no_grad", "inference_mode", "set_grad_enabled")

SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_Def = TypeVar("_Def", cst.FunctionDef, cst.ClassDef)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class SafetyAnalysis(FixTree):
    """The safety judgements of the autofix, over one module's tree."""

    def grad_off(self, node: cst.CSTNode) -> bool:
        """``node`` runs under ``no_grad``/``inference_mode`` as far as the text shows."""
        for parent in self.ancestors(node):
            if isinstance(parent, cst.With):
                for item in parent.items:
                    if any(word in _source(item.item) for word in _GRAD_OFF):
                        return True
            if isinstance(parent, cst.FunctionDef):
                for decorator in parent.decorators:
                    if any(word in _source(decorator.decorator) for word in _GRAD_OFF):
                        return True
        return False

    def is_fresh(self, node: cst.BaseExpression) -> bool:
        """``node`` always evaluates to a tensor that no other name holds."""
        if isinstance(node, cst.BinaryOperation | cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, cst.Plus)
        if isinstance(node, cst.IfExp):
            return self.is_fresh(node.body) and self.is_fresh(node.orelse)
        if not isinstance(node, cst.Call):
            return False
        if keyword(node, "out") is not None:
            return False
        flag = keyword(node, "inplace")
        if flag is not None and not (
            isinstance(flag.value, cst.Name) and flag.value.value == "False"
        ):
            return False
        func = node.func
        qualified = self.qualified(func)
        if qualified is not None:
            return fresh_function(qualified)
        if isinstance(func, cst.Attribute) and func.attr.value == "forward":
            func = func.value  # ``self.actor.forward(x)`` is ``self.actor(x)``
            if not isinstance(func, cst.Attribute):
                return False
        if isinstance(func, cst.Attribute) and is_self(func.value):  # ``self.conv(x)``
            module = self.module_of(func)
            if module is not None:
                return built_fresh(*module)
            return self._own_forward_fresh(func)
        if isinstance(func, cst.Attribute):  # a tensor method
            root = func.value
            while isinstance(root, cst.Attribute | cst.Call | cst.Subscript):
                root = root.func if isinstance(root, cst.Call) else root.value
            return fresh_method(func.attr.value) and not is_self(root)
        return False

    def module_of(self, func: cst.Attribute) -> tuple[str, cst.Call] | None:
        """For ``self.X``: the ``torch.nn`` class and the constructor call of the one
        ``self.X = nn.Y(...)`` in the enclosing class, when the class assigns it once."""
        constructor = self._constructor_of(func)
        if constructor is None:
            return None
        qualified = self.qualified(constructor.func) or ""
        if not qualified.startswith("torch.nn.") or qualified.startswith("torch.nn.functional."):
            return None
        return qualified.rsplit(".", 1)[-1], constructor

    def _own_forward_fresh(self, func: cst.Attribute) -> bool:
        """``self.actor(x)`` with ``self.actor = Actor(...)`` once, ``Actor`` a class of this
        file whose own ``forward`` returns a fresh tensor at every ``return``
        (``torch.tanh(...)``)."""
        constructor = self._constructor_of(func)
        if constructor is None or not isinstance(constructor.func, cst.Name):
            return False
        name = constructor.func.value
        found = self._top_level(name, cst.ClassDef)
        if len(found) != 1 or name in self.aliases or found[0] in self._judging:
            return False
        forward = next(
            (
                n
                for n in found[0].body.body
                if isinstance(n, cst.FunctionDef) and n.name.value == "forward"
            ),
            None,
        )
        if forward is None or forward.decorators:
            return False
        returns = _returned(forward)
        self._judging.add(found[0])
        try:
            return bool(returns) and all(v is not None and self.is_fresh(v) for v in returns)
        finally:
            self._judging.discard(found[0])

    def _constructor_of(self, func: cst.Attribute) -> cst.Call | None:
        """For ``self.X``: the call that builds the one value the enclosing class assigns to
        ``self.X`` (a same-file builder's ``nn`` constructor, see ``_built_by``)."""
        cls = next((a for a in self.ancestors(func) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        built: list[cst.BaseExpression] = []
        for use in self._self_attributes(cls).get(func.attr.value, []):
            holder = self.parent.get(use)
            if isinstance(holder, cst.AssignTarget):
                assign = self.parent.get(holder)
                if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                    return None
                built.append(assign.value)
            elif isinstance(holder, cst.AugAssign | cst.AnnAssign | cst.Element):
                return None  # rebound some other way, or inside an unpacking target
        if len(built) != 1 or not isinstance(built[0], cst.Call):
            return None
        return self._built_by(built[0])

    def _built_by(self, call: cst.Call) -> cst.Call | None:
        """``call`` itself, or for a call of a module-level helper whose every ``return``
        builds the same ``nn`` class (``conv3x3(...)`` returning ``nn.Conv2d(...)``), the
        first such constructor."""
        if not isinstance(call.func, cst.Name) or call.func.value in self.aliases:
            return call
        helpers = self._top_level(call.func.value, cst.FunctionDef)
        if not helpers:  # a same-file class builds it: ``Actor(...)``
            return call if self._top_level(call.func.value, cst.ClassDef) else None
        returned = _returned(helpers[0])
        if not returned or not all(isinstance(v, cst.Call) for v in returned):
            return None
        names = {self.qualified(v.func) for v in returned if isinstance(v, cst.Call)}
        if len(names) != 1 or None in names:
            return None
        first = returned[0]
        return first if isinstance(first, cst.Call) else None

    def passes_through(self, value: cst.BaseExpression, name: str) -> bool:
        """``value`` (bound back to ``name``) is ``name``'s tensor, a view of it or a new
        tensor: ``self.relu(name)`` with a pass-through ``nn`` module, ``name.view(...)``,
        ``F.relu(name, inplace=True)``."""
        if not isinstance(value, cst.Call) or not value.args:
            return False
        first = value.args[0]
        func = value.func
        if isinstance(func, cst.Attribute) and is_self(func.value):
            module = self.module_of(func)
            return (
                module is not None
                and passing_module(module[0])
                and len(value.args) == 1
                and first.keyword is None
                and isinstance(first.value, cst.Name)
                and first.value.value == name
            )
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == name
            and _receiver_method(func.attr.value)
        ):
            return True
        qualified = self.qualified(func) or ""
        flag = keyword(value, "inplace")
        return (
            qualified.startswith("torch.nn.functional.")
            and flag is not None
            and first.keyword is None
            and isinstance(first.value, cst.Name)
            and first.value.value == name
        )

    def rebind_is_safe(self, name: str, site: cst.CSTNode) -> bool:
        """Rebinding ``name`` instead of writing to its tensor at ``site`` changes nothing else.

        True when ``name`` is a local (not a parameter, global or closure variable), every
        binding that can reach ``site`` is a fresh tensor, and no use that can run before
        ``site`` hands the tensor to anything that could keep it (another name, a view, a
        container, an unknown call), and the write is not under ``no_grad``.
        """
        if self.grad_off(site):
            return False
        scope: cst.CSTNode | None = None
        for parent in self.ancestors(site):
            if isinstance(parent, (*_COMPREHENSIONS, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(parent, cst.FunctionDef | cst.Module):
                scope = parent
                break
        if scope is None:
            return False
        fresh_at = self._fresh_binding_before(name, site)
        if isinstance(scope, cst.FunctionDef) and fresh_at is None:
            params = scope.params
            every = [*params.posonly_params, *params.params, *params.kwonly_params]
            for extra in (params.star_arg, params.star_kwarg):
                if isinstance(extra, cst.Param):
                    every.append(extra)
            if any(p.name.value == name for p in every):
                return False  # the caller's tensor, unless a fresh one replaced it first
        here = self.pos[site].start
        loops = [self.pos[a] for a in self.ancestors(site) if isinstance(a, cst.For | cst.While)]
        renewed = self._renewed_in_loop(name, site)
        site_nodes = set(_walk(site))
        bound_before = fresh_at is not None
        names, declared = self._scope_index(scope)
        if name in declared:
            return False
        for node, nested in names.get(name, ()):
            if self._not_a_variable(node):
                continue
            if nested:
                return False  # a closure or nested class may keep the tensor
            if node in site_nodes:
                continue
            where = self.pos.get(node)
            if where is None:
                return False
            earlier = (where.start.line, where.start.column) < (here.line, here.column)
            looped = any(_inside(where, loop) for loop in loops)
            if not (earlier or looped):
                continue
            if not earlier and renewed is not None and _inside(where, renewed):
                continue  # the next iteration binds a fresh tensor before it reaches the site
            if fresh_at is not None and _before_end(where, fresh_at):
                continue  # it saw an older tensor: a fresh one is bound on every path after it
            verdict = self._use_is_harmless(node)
            if verdict is None:
                return False
            bound_before = bound_before or (verdict == "bind" and earlier)
        return bound_before

    def _fresh_binding_before(self, name: str, site: cst.CSTNode) -> CodeRange | None:
        """Where the nearest ``name = <fresh tensor>`` that runs on every path to ``site``
        stands (a statement before ``site``'s, in a block that holds it), or None."""
        node: cst.CSTNode = site
        for parent in self.ancestors(site):
            if isinstance(parent, SCOPES):
                return None
            if isinstance(parent, cst.IndentedBlock | cst.Module):
                index = next((i for i, s in enumerate(parent.body) if s is node), 0)
                for statement in reversed(parent.body[:index]):
                    if self._binds_fresh(statement, name):
                        return self.pos.get(statement)
            node = parent
        return None

    def _renewed_in_loop(self, name: str, site: cst.CSTNode) -> CodeRange | None:
        """The innermost loop around ``site`` when every path from its top to ``site`` runs
        ``name = <fresh tensor>`` first (a statement before ``site``'s, in a block that holds
        it); None otherwise."""
        node: cst.CSTNode = site
        for parent in self.ancestors(site):
            if isinstance(parent, cst.For | cst.While):
                return None
            if isinstance(parent, cst.IndentedBlock | cst.Module):
                index = next((i for i, s in enumerate(parent.body) if s is node), 0)
                before = parent.body[:index]
                if any(self._binds_fresh(statement, name) for statement in before):
                    loop = next(
                        (a for a in self.ancestors(parent) if isinstance(a, cst.For | cst.While)),
                        None,
                    )
                    return self.pos.get(loop) if loop is not None else None
            if isinstance(parent, SCOPES):
                return None
            node = parent
        return None

    def _binds_fresh(self, statement: cst.CSTNode, name: str) -> bool:
        """``statement`` is ``name = <fresh tensor>`` (one small statement, one target)."""
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return False
        assign = statement.body[0]
        return (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and assign.targets[0].target.value == name
            and self.is_fresh(assign.value)
        )

    def _scope_index(self, scope: cst.CSTNode) -> ScopeIndex:
        """The ``Name`` nodes of a scope by name (with whether they sit in a nested scope) and
        the names it declares ``global`` or ``nonlocal``; built once per scope."""
        cached = self._scopes.get(scope)
        if cached is not None:
            return cached
        names: dict[str, list[tuple[cst.Name, bool]]] = {}
        declared: set[str] = set()
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        for node, nested in _walk_scope(body):
            if isinstance(node, cst.Name):
                names.setdefault(node.value, []).append((node, nested))
            elif isinstance(node, cst.Global | cst.Nonlocal):
                declared.update(n.name.value for n in node.names)
        self._scopes[scope] = (names, declared)
        return names, declared

    def _self_attributes(self, cls: cst.ClassDef) -> dict[str, list[cst.Attribute]]:
        """Every ``self.NAME`` in a class, by ``NAME``; built once per class."""
        cached = self._classes.get(cls)
        if cached is None:
            cached = {}
            for node in _walk(cls):
                if isinstance(node, cst.Attribute) and is_self(node.value):
                    cached.setdefault(node.attr.value, []).append(node)
            self._classes[cls] = cached
        return cached

    def _not_a_variable(self, name: cst.Name) -> bool:
        """``obj.name`` and ``f(name=...)`` spell the name without using the variable."""
        parent = self.parent.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return True
        return isinstance(parent, cst.Arg) and parent.keyword is name

    def _use_is_harmless(self, name: cst.Name) -> str | None:
        """``"bind"`` for a fresh binding, ``"use"`` for a use that keeps no alias, else None."""
        parent = self.parent.get(name)
        if isinstance(parent, cst.AssignTarget):
            assign = self.parent.get(parent)
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                return None  # ``a = b = t``: two names for one tensor
            if self.is_fresh(assign.value):
                return "bind"
            return "use" if self.passes_through(assign.value, name.value) else None
        if isinstance(parent, cst.AnnAssign) and parent.target is name:
            return "bind" if parent.value is not None and self.is_fresh(parent.value) else None
        if isinstance(parent, cst.AugAssign) and parent.target is name:
            return "use"
        if isinstance(parent, cst.NamedExpr):
            return "bind" if parent.target is name and self.is_fresh(parent.value) else None
        if isinstance(parent, cst.Element):
            unpacked = self._unpacked_from(parent)
            if unpacked is not None:
                if self.is_fresh(unpacked):
                    return "bind"
                return "use" if self.passes_through(unpacked, name.value) else None
        if isinstance(parent, cst.Subscript) and parent.value is name:
            holder = self.parent.get(parent)
            if isinstance(holder, cst.AssignTarget) or (
                isinstance(holder, cst.AugAssign) and holder.target is parent
            ):
                return "use"  # a write into the tensor gives it no other name
            return self._read_is_harmless(parent, name.value)  # a view, read where it is used
        return self._read_is_harmless(name, name.value)

    def _unpacked_from(self, element: cst.Element) -> cst.BaseExpression | None:
        """For ``a, b = x, y`` (one target, a display of the same length): the value that
        the target ``element`` is bound to."""
        target = self.parent.get(element)
        holder = self.parent.get(target) if target is not None else None
        assign = self.parent.get(holder) if isinstance(holder, cst.AssignTarget) else None
        if not (isinstance(target, cst.Tuple | cst.List) and isinstance(assign, cst.Assign)):
            return None
        value = assign.value
        if len(assign.targets) != 1 or not isinstance(value, cst.Tuple | cst.List):
            return None
        if len(value.elements) != len(target.elements):
            return None
        if any(isinstance(e, cst.StarredElement) for e in (*value.elements, *target.elements)):
            return None
        index = next(i for i, e in enumerate(target.elements) if e is element)
        return value.elements[index].value

    def _read_is_harmless(self, node: cst.BaseExpression, name: str) -> str | None:
        """``"use"`` when the value of ``node`` (``name``, or a view of it) is read where it
        keeps no reference: a fresh op, a metadata query, a statement of its own."""
        parent = self.parent.get(node)
        if isinstance(parent, cst.Attribute) and parent.value is node:
            outer = self.parent.get(parent)
            attr = parent.attr.value
            if isinstance(outer, cst.Call) and outer.func is parent:
                if fresh_method(attr) and keyword(outer, "out") is None:
                    return "use"
                if self._bound_back(outer, name):
                    return "use"
                if is_inplace_name(attr) and self.is_statement(outer):
                    return "use"
                return None
            return "use" if _plain_property(attr) else None
        if isinstance(parent, cst.BinaryOperation | cst.Comparison | cst.ComparisonTarget):
            return "use"
        if isinstance(parent, cst.UnaryOperation):
            return None if isinstance(parent.operator, cst.Plus) else "use"
        if isinstance(parent, cst.Return | cst.Expr | cst.If | cst.While | cst.Del):
            return "use"
        if isinstance(parent, cst.FormattedStringExpression):
            return "use"
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.parent.get(parent)
            if not isinstance(call, cst.Call):
                return None
            func = call.func
            if isinstance(func, cst.Name) and func.value in _SAFE_BUILTINS - self.aliases.keys():
                return "use"
            if self._read_into_other(call) or self._helper_keeps_nothing(call, parent):
                return "use"
            return "use" if self.is_fresh(call) or self._bound_back(call, name) else None
        if isinstance(parent, cst.Element):
            sequence = self.parent.get(parent)
            arg = self.parent.get(sequence) if sequence is not None else None
            call = self.parent.get(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(sequence, cst.List | cst.Tuple) and isinstance(call, cst.Call):
                return "use" if self.is_fresh(call) else None
        return None

    @staticmethod
    def _read_into_other(call: cst.Call) -> bool:
        """``total.scatter_add_(0, index, x)``: an in-place method with an out-of-place twin
        reads its arguments' values into its receiver and keeps no reference to them."""
        func = call.func
        return isinstance(func, cst.Attribute) and has_twin(func.attr.value)

    def _helper_keeps_nothing(self, call: cst.Call, arg: cst.Arg) -> bool:
        """``new(x, n)`` where ``new`` is a plain function of this file whose parameter for
        ``arg`` is only used in ways that keep no reference (``src.new_zeros(...)``), and is
        never returned or used in a nested scope."""
        func = call.func
        if not isinstance(func, cst.Name) or func.value in self.aliases:
            return False
        found = self._top_level(func.value, cst.FunctionDef)
        if len(found) != 1 or found[0].decorators or found[0] in self._judging:
            return False
        helper = found[0]
        param = _parameter_for(helper, call, arg)
        names, declared = self._scope_index(helper)
        if param is None or param in declared:
            return False
        self._judging.add(helper)
        try:
            for node, nested in names.get(param, ()):
                if self._not_a_variable(node):
                    continue
                if nested or isinstance(self.parent.get(node), cst.Return | cst.Yield):
                    return False
                if self._use_is_harmless(node) is None:
                    return False
            return True
        finally:
            self._judging.discard(helper)

    def _top_level(self, name: str, kind: type[_Def]) -> list[_Def]:
        """The module-level functions or classes named ``name``, in source order."""
        return [n for n in self.module.body if isinstance(n, kind) and n.name.value == name]

    def _bound_back(self, call: cst.Call, name: str) -> bool:
        """``name = call`` where ``call`` passes ``name``'s tensor through."""
        return self.assigned_to(call) == name and self.passes_through(call, name)


# --------------------------------------------------------------------------- plain helpers


def _source(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _before_end(where: CodeRange, statement: CodeRange) -> bool:
    """``where`` starts before ``statement`` ends (in it, or earlier)."""
    return (where.start.line, where.start.column) < (statement.end.line, statement.end.column)


def _inside(inner: CodeRange, outer: CodeRange) -> bool:
    a = (inner.start.line, inner.start.column)
    b = (outer.start.line, outer.start.column)
    c = (outer.end.line, outer.end.column)
    return b <= a <= c


def _walk(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def _parameter_for(helper: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    """The name of ``helper``'s parameter that ``arg`` of ``call`` binds; None through
    ``*args``/``**kwargs`` on either side."""
    params = helper.params
    if arg.star:
        return None
    if arg.keyword is not None:
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        return arg.keyword.value if any(p.name.value == arg.keyword.value for p in every) else None
    positional = [a for a in call.args if a.keyword is None]
    index = next(i for i, a in enumerate(positional) if a is arg)
    if any(a.star for a in positional[:index]):
        return None
    ordered = [*params.posonly_params, *params.params]
    return ordered[index].name.value if index < len(ordered) else None


def _returned(func: cst.FunctionDef) -> list[cst.BaseExpression | None]:
    """What each ``return`` of ``func``'s own body gives (None for a bare ``return``)."""
    return [
        node.value
        for node, nested in _walk_scope(func.body)
        if isinstance(node, cst.Return) and not nested
    ]


def _walk_scope(root: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, bool]]:
    """Nodes under ``root``, each with whether it sits in a nested function, lambda or class."""
    stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
    while stack:
        node, nested = stack.pop()
        yield node, nested
        inner = nested or (node is not root and isinstance(node, SCOPES))
        stack.extend((child, inner) for child in node.children)
