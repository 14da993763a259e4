"""Which modules carry a full backward hook, read from the registrations a file makes.

``m.register_full_backward_hook(f)`` (and its ``_pre_`` form) makes every call of ``m`` pass
its outputs, and its inputs that require grad, through a custom Function
(``BackwardHookFunction``) that returns them as views: writing one in place raises at once,
"Output 0 of BackwardHookFunction is a view and is being modified inplace". So the output of
a hooked module is as unwritable as one of the views ``chunk`` returns, and an in-place
module that is hooked itself (``ReLU(inplace=True)``) writes such a view.

This pre-pass finds the registrations and which modules each reaches:

- a loop or comprehension variable over ``X.modules()``, ``named_modules()``, ``children()``
  or ``named_children()``, narrowed by ``isinstance`` tests around the call (or
  ``if not isinstance(...): continue`` before it);
- a function's parameter, where the function recurses into its children or is given to
  ``X.apply(...)`` (it then sees every module);
- ``torch.nn.modules.module.register_module_full_backward_hook``: every module.

A test on ``m.children()`` (or the ``else`` of a recursion's test) keeps the registration to
leaf modules, the ones torch itself defines. Limits: flow-insensitive (a registration anywhere
in the file covers every call of a matching module in it); a receiver naming one module
(``model.layer4``, a ``target_layer`` argument) is not resolved; removing a hook through its
handle is not seen; other tests around the call (``if name in wanted``) do not narrow.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from inplace_lint.facts.model import ModuleSpec
from inplace_lint.facts.names import ImportTable, dotted_name, isinstance_test
from inplace_lint.facts.walk import children_of, walk

#: what ``Value.multi_view`` names for a hooked module's output
HOOK_VIEW = "BackwardHookFunction"
#: the methods that install a full backward hook on the module they are called on
REGISTER_METHODS = frozenset({"register_full_backward_hook", "register_full_backward_pre_hook"})
#: the global forms: every module's calls
GLOBAL_REGISTERS = frozenset(
    {
        "torch.nn.modules.module.register_module_full_backward_hook",
        "torch.nn.modules.module.register_module_full_backward_pre_hook",
    }
)
_MODULE_ITERATORS = frozenset({"modules", "named_modules", "children", "named_children"})
_CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})
#: torch's abstract bases an ``isinstance`` test may name, and the public classes under them
_BASES = {
    "_BatchNorm": ("BatchNorm", "SyncBatchNorm"),
    "_NormBase": ("BatchNorm", "SyncBatchNorm", "InstanceNorm"),
    "_InstanceNorm": ("InstanceNorm",),
    "_ConvNd": ("Conv",),
    "_ConvTransposeNd": ("ConvTranspose",),
}


@dataclass(frozen=True, eq=False)
class HookCover:
    """One registration and the modules it reaches."""

    node: cst.Call
    #: qualified torch names and same-file class names an ``isinstance`` test allows; None: any
    types: frozenset[str] | None
    leaves_only: bool = False

    def covers(self, spec: ModuleSpec, leaf_classes: frozenset[str]) -> bool:
        container = spec.elements is not None or spec.qualname in _CONTAINERS
        torch_leaf = (spec.qualname or "").startswith("torch.nn.") and not container
        leaf = torch_leaf or any(name in leaf_classes for name in spec.classes)
        if self.types is None:
            return leaf or not self.leaves_only
        if self.leaves_only and not leaf:
            return False
        if spec.qualname is not None and _type_matches(spec.qualname, self.types):
            return True
        return any(name in self.types for name in spec.classes)


def _type_matches(qualname: str, types: frozenset[str]) -> bool:
    if qualname in types:
        return True
    short = qualname.rsplit(".", 1)[-1]
    for name in types:
        prefixes = _BASES.get(name.rsplit(".", 1)[-1], ())
        if name.startswith("torch.") and short.startswith(prefixes):
            return True
    return False


@dataclass
class BackwardHooks:
    """The file's full backward hook registrations."""

    covers: list[HookCover]
    #: same-file module classes with no submodules (leaves of the module tree)
    leaf_classes: frozenset[str] = frozenset()

    def covering(self, spec: ModuleSpec) -> cst.Call | None:
        """The registration that reaches ``spec``'s calls, if any."""
        return next((c.node for c in self.covers if c.covers(spec, self.leaf_classes)), None)


def find_backward_hooks(
    module: cst.Module,
    calls: list[cst.Call],
    imports: ImportTable,
    classes: frozenset[str],
    leaf_classes: frozenset[str],
) -> BackwardHooks:
    """The registrations among ``calls`` (every call in ``module``) and what each reaches;
    ``classes``: the file's class names, ``leaf_classes``: its modules without submodules."""
    found = [c for c in calls if _registers(c, imports)]
    if not found:
        return BackwardHooks([])
    parents = _parents(module)
    applied = _applied_functions(calls)
    covers = []
    for call in found:
        cover = _cover(call, parents, applied, imports, classes)
        if cover is not None:
            covers.append(cover)
    return BackwardHooks(covers, leaf_classes)


def _registers(call: cst.Call, imports: ImportTable) -> bool:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in REGISTER_METHODS:
        return True
    return imports.qualify(func) in GLOBAL_REGISTERS


def _parents(module: cst.Module) -> dict[int, cst.CSTNode]:
    parents: dict[int, cst.CSTNode] = {}
    for node in walk(module):
        for child in children_of(node):
            parents[id(child)] = node
    return parents


def _applied_functions(calls: list[cst.Call]) -> frozenset[str]:
    """Names of functions given to ``X.apply(f)`` (or ``X.apply(self.f)``)."""
    names = set()
    for call in calls:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "apply" and call.args:
            value = call.args[0].value
            if isinstance(value, cst.Name):
                names.add(value.value)
            elif isinstance(value, cst.Attribute):
                names.add(value.attr.value)
    return frozenset(names)


def _cover(
    call: cst.Call,
    parents: dict[int, cst.CSTNode],
    applied: frozenset[str],
    imports: ImportTable,
    classes: frozenset[str],
) -> HookCover | None:
    if not isinstance(call.func, cst.Attribute):
        return HookCover(call, None)  # the global registration: every module
    receiver = call.func.value
    if not isinstance(receiver, cst.Name):
        return None  # one named module: not resolved here
    name = receiver.value
    guards = _Guards(name, imports, classes)
    node: cst.CSTNode = call
    while id(node) in parents:
        parent = parents[id(node)]
        if isinstance(parent, cst.If):
            guards.arm(parent, node)
        elif isinstance(parent, cst.IndentedBlock):
            guards.skipped_before(parent, node)
        elif isinstance(parent, cst.For) and _binds(parent.target, name):
            return guards.cover(call) if _iterates_modules(parent.iter) else None
        elif isinstance(parent, _COMPREHENSIONS) and node is parent.elt:
            loop = _comprehension_binding(parent.for_in, name)
            if loop is not None:
                for test in loop.ifs:
                    guards.test(test.test)
                return guards.cover(call) if _iterates_modules(loop.iter) else None
        elif isinstance(parent, cst.FunctionDef):
            params = [p.name.value for p in parent.params.params]
            if name in params and _visits_every_module(parent, applied):
                # a walk that recurses and registers in an ``else`` registers on the leaves
                guards.leaves_only = guards.leaves_only or guards.in_else
                return guards.cover(call)
            return None
        node = parent
    return None


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp)


def _comprehension_binding(loop: cst.CompFor | None, name: str) -> cst.CompFor | None:
    while loop is not None:
        if _binds(loop.target, name):
            return loop
        loop = loop.inner_for_in
    return None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    """``for m in``, ``for _, m in`` (the module of ``named_modules``), not ``for m, _ in``."""
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, cst.Tuple) and len(target.elements) == 2:
        second = target.elements[1].value
        return isinstance(second, cst.Name) and second.value == name
    return False


def _iterates_modules(node: cst.BaseExpression) -> bool:
    """``X.modules()`` and friends, possibly inside ``list(...)``."""
    while (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "list"
        and node.args
    ):
        node = node.args[0].value
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _MODULE_ITERATORS
    )


def _visits_every_module(func: cst.FunctionDef, applied: frozenset[str]) -> bool:
    """``func`` is given to ``X.apply`` or calls itself (a walk over the module tree)."""
    name = func.name.value
    if name in applied:
        return True
    for node in walk(func.body):
        if isinstance(node, cst.Call):
            callee = dotted_name(node.func)
            if callee in (name, f"self.{name}"):
                return True
    return False


class _Guards:
    """The tests around a registration that narrow which modules it reaches."""

    def __init__(self, name: str, imports: ImportTable, classes: frozenset[str]) -> None:
        self.name = name
        self.imports = imports
        self.classes = classes
        self.types: frozenset[str] | None = None
        self.leaves_only = False
        self.in_else = False

    def cover(self, call: cst.Call) -> HookCover:
        return HookCover(call, self.types, self.leaves_only)

    def arm(self, branch: cst.If, inside: cst.CSTNode) -> None:
        if inside is branch.body:
            self.test(branch.test)
        elif inside is branch.orelse:
            self.in_else = True  # ``if children: recurse / else: register``
            self.leaves_only = self.leaves_only or _mentions_children(branch.test)

    def skipped_before(self, block: cst.IndentedBlock, inside: cst.CSTNode) -> None:
        """``if not isinstance(m, T): continue`` earlier in the block narrows to ``T``."""
        for statement in block.body:
            if statement is inside:
                return
            if (
                isinstance(statement, cst.If)
                and statement.orelse is None
                and isinstance(statement.test, cst.UnaryOperation)
                and isinstance(statement.test.operator, cst.Not)
                and _only_continue(statement.body)
            ):
                self.test(statement.test.expression)

    def test(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.And):
            self.test(node.left)
            self.test(node.right)
            return
        if _mentions_children(node):
            self.leaves_only = True
            return
        allowed = self._isinstance_types(node)
        if allowed is not None:
            self.types = allowed if self.types is None else self.types & allowed

    def _isinstance_types(self, node: cst.BaseExpression) -> frozenset[str] | None:
        test = isinstance_test(node)
        if test is None or test[0] != self.name:
            return None
        kinds = test[1]
        items = [e.value for e in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        return frozenset(self._type_name(item) for item in items)

    def _type_name(self, node: cst.BaseExpression) -> str:
        qualified = self.imports.qualify(node)
        if qualified is not None:
            return qualified
        dotted = dotted_name(node) or ""
        tail = dotted.rsplit(".", 1)[-1]
        return tail if tail in self.classes else dotted


def _mentions_children(node: cst.CSTNode) -> bool:
    return any(
        isinstance(n, cst.Attribute) and n.attr.value in ("children", "named_children")
        for n in walk(node)
    ) or any(isinstance(n, cst.Name) and "children" in n.value for n in walk(node))


def _only_continue(body: cst.BaseSuite) -> bool:
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    return all(
        isinstance(s, cst.SimpleStatementLine)
        and all(isinstance(small, cst.Continue) for small in s.body)
        for s in statements
    )
