"""Class-level facts: which classes are modules/Functions and what ``self.<attr>`` holds."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from inplace_lint.facts.call_shapes import constructs_unknown_class
from inplace_lint.facts.model import ModuleSpec
from inplace_lint.facts.names import ImportTable, dotted_name
from inplace_lint.facts.op_extras import _NN_TENSOR_CLASSES
from inplace_lint.facts.ops import OpTable
from inplace_lint.facts.sequential_subclass import SEQUENTIAL, sequential_init
from inplace_lint.facts.walk import is_expression, own_nodes, walk

if TYPE_CHECKING:  # grown_lists imports syntax, which imports this module
    from inplace_lint.facts.grown_lists import Leads

MODULE_BASES = ("torch.nn.Module",)
FUNCTION_BASES = ("torch.autograd.Function", "torch.autograd.InplaceFunction")
OPTIMIZER_BASES = ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer")
_VIEW_MODULES = frozenset({"torch.nn.Flatten", "torch.nn.Unflatten", "torch.nn.Identity"})
_CONTAINERS = frozenset({"torch.nn.Sequential"})
_DROPOUTS = frozenset(
    {
        "torch.nn.Dropout",
        "torch.nn.Dropout1d",
        "torch.nn.Dropout2d",
        "torch.nn.Dropout3d",
        "torch.nn.AlphaDropout",
        "torch.nn.FeatureAlphaDropout",
    }
)
MODULE_LISTS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict"})
_LIST_METHODS = frozenset({"append", "extend", "insert"})


@dataclass
class ClassFacts:
    """What one class definition tells us."""

    name: str
    node: cst.ClassDef
    is_module: bool = False
    is_function: bool = False
    is_optimizer: bool = False
    modules: dict[str, ModuleSpec] = field(default_factory=dict)
    parameters: set[str] = field(default_factory=set)
    buffers: set[str] = field(default_factory=set)
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)
    #: attributes only ever assigned an empty list (``self.cache = []``): lists filled later
    lists: set[str] = field(default_factory=set)
    #: attributes assigned anything else somewhere
    assigned: set[str] = field(default_factory=set)
    #: attributes assigned a dict, list, set or tuple display (or ``dict()``) somewhere: on
    #: that path they hold a container, so a subscript store into them is no tensor write
    displays: set[str] = field(default_factory=set)
    #: ``__init__`` parameters stored on ``self`` that every construction in the file gives a
    #: module (``constructed``): parameter -> attribute
    given: dict[str, str] = field(default_factory=dict)
    #: attributes ``__init__`` sets from a parameter: what every construction passes there
    constants: dict[str, tuple[cst.BaseExpression, ...]] = field(default_factory=dict)
    #: ``__init__`` parameters every construction in the file gives one string literal
    #: (``activation="relu"``, or the default when none passes it): parameter -> the string
    strings: dict[str, str] = field(default_factory=dict)
    #: the names of its bases, as written or qualified through the imports
    bases: tuple[str, ...] = ()


def literal_bool(node: cst.BaseExpression | None) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


class ModuleResolver:
    """Turns constructor expressions like ``nn.ReLU(inplace=True)`` into ModuleSpecs."""

    def __init__(
        self,
        imports: ImportTable,
        table: OpTable,
        classes: dict[str, ClassFacts],
        functions: dict[str, cst.FunctionDef] | None = None,
    ):
        self.imports = imports
        self.table = table
        self.classes = classes
        #: module-level functions of the file, by name: those that return a module build one
        self.functions = functions or {}
        self._built: dict[str, ModuleSpec | None] = {}
        #: a method's lists grown by appends, the items that may lead each (set by the
        #: analyzer: ``grown_lists`` sits above this module)
        self.leads_of: Callable[[cst.FunctionDef], Leads] | None = None
        self.tails_of: Callable[[cst.FunctionDef], Leads] | None = None
        #: the method whose ``self.x = ...`` statements are being read (``collect_attributes``):
        #: only an attribute's ``nn.Sequential(*layers)`` learns its leading members
        self.method: cst.FunctionDef | None = None
        #: module classes another file of the run defines and ships here (project mode)
        self.foreign_modules: frozenset[str] = frozenset()

    def spec(
        self,
        expr: cst.BaseExpression,
        defaults: dict[str, cst.BaseExpression] | None = None,
        lists: dict[str, tuple[cst.BaseExpression, ...]] | None = None,
        held: dict[str, ModuleSpec] | None = None,
    ) -> ModuleSpec | None:
        """The module built by ``expr``, or None if it does not build a module. ``lists``:
        names of fixed literal lists, for a container built from ``*name``; ``held``: the
        modules ``self``'s attributes hold so far, for a container whose member is one
        (``self.conv = nn.Sequential(self.conv, nn.GELU())``)."""
        if isinstance(expr, cst.IfExp):
            return self._either(expr, defaults)
        if not isinstance(expr, cst.Call):
            return None
        if isinstance(func := expr.func, cst.Name) and func.value in self.foreign_modules:
            return ModuleSpec(qualname=None, node=expr, user_class=func.value)
        qualname = self.imports.qualify(func)
        if qualname is None and isinstance(func, cst.Name) and defaults:
            default = defaults.get(func.value)
            if default is not None:
                qualname = self.imports.qualify(default)
                func = default if qualname is None else func  # ``norm_layer=ABN``, same file
        if qualname is None:
            name = dotted_name(func)
            if name in self.classes and self.classes[name].is_module:
                cls = self.classes[name]
                init = sequential_init(cls.bases, cls.methods)
                if init is not None:  # ``class Block(nn.Sequential)``: torch's forward
                    elements = self._elements(init.call, init.lists, {}, init.defaults)
                    return ModuleSpec(qualname=SEQUENTIAL, node=expr, elements=elements)
                return ModuleSpec(qualname=None, node=expr, user_class=name)
            built = self.built_by(name) if name is not None else None
            if built is not None:
                return replace(built, node=expr)
            if name is not None and _has_inplace_true(expr) and _activation_like(name):
                return ModuleSpec(qualname=None, node=expr, inplace=True, has_parameters=False)
            return None
        if qualname in self.table.module_wrappers:  # ``weight_norm(nn.Linear(...))``
            return self._wrapped(expr, defaults, lists, held)
        if qualname in _CONTAINERS:
            elements = self._elements(expr, lists or {}, held or {}, defaults)
            leads = tails = ()
            if elements is None:  # a list grown by appends: its first and last members
                leads = self._grown_members(expr, held or {}, defaults, self.leads_of)
                tails = self._grown_members(expr, held or {}, defaults, self.tails_of)
            return ModuleSpec(
                qualname=qualname, node=expr, elements=elements, leads=leads, tails=tails
            )
        if qualname == "torch.nn.ModuleList":
            return self._module_list(expr)
        if qualname in _VIEW_MODULES or (qualname in _DROPOUTS and _zero_rate(expr)):
            # ``nn.Dropout(0.0, inplace=True)`` returns its input untouched: torch skips p == 0
            return ModuleSpec(qualname=qualname, node=expr, is_view=True, has_parameters=False)
        return self._torch_module(qualname, expr)

    def _torch_module(self, qualname: str, expr: cst.Call) -> ModuleSpec | None:
        """A ``torch.nn`` module built by ``expr``, as the op table describes its class."""
        info = self.table.modules.get(qualname)
        if info is None:
            if qualname in _NN_TENSOR_CLASSES:
                return None  # ``nn.Parameter(...)``: a tensor
            if qualname.startswith("torch.nn.") and qualname[len("torch.nn.") :][:1].isupper():
                return ModuleSpec(qualname=qualname, node=expr)
            return None
        inplace = False
        if info.inplace_index is not None:
            inplace = _inplace_arg(expr, info.inplace_index)
        pooled = qualname.startswith("torch.nn.AdaptiveAvgPool") and expr.args
        if pooled and global_pool(expr.args[0].value):
            info = replace(info, saves_input=False, saves_input_out_of_place=False)
        return ModuleSpec(
            qualname=qualname,
            node=expr,
            inplace=inplace,
            saves_input=info.saves_input if inplace else info.saves_input_out_of_place,
            saves_result=info.saves_result if inplace else info.saves_result_out_of_place,
            has_parameters=info.has_parameters,
            saves_parameters=info.saves_parameters,
            parameters=info.parameters,
            saved_outputs=info.saved_outputs,
            outputs=info.outputs,
            device_outputs=info.device_outputs,
            device_saves=info.device_saves,
        )

    def _either(
        self, expr: cst.IfExp, defaults: dict[str, cst.BaseExpression] | None
    ) -> ModuleSpec | None:
        """``a if c else b``: the in-place choice if either is, and what both save."""
        body = self.spec(expr.body, defaults)
        other = self.spec(expr.orelse, defaults)
        if body is None or other is None:
            return body or other
        chosen = body if body.inplace or not other.inplace else other
        # what is saved is only known when both choices agree
        return replace(
            chosen,
            saves_input=body.saves_input and other.saves_input,
            saves_result=body.saves_result and other.saves_result,
            is_view=body.is_view and other.is_view,
        )

    def _wrapped(
        self,
        expr: cst.Call,
        defaults: dict[str, cst.BaseExpression] | None,
        lists: dict[str, tuple[cst.BaseExpression, ...]] | None,
        held: dict[str, ModuleSpec] | None,
    ) -> ModuleSpec | None:
        """The module a wrapper returns (the op table's ``module_wrappers``): its argument."""
        inner = expr.args[0] if expr.args else None
        if inner is None or inner.star or inner.keyword is not None:
            return None
        wrapped = self.spec(inner.value, defaults, lists, held)
        return replace(wrapped, node=expr) if wrapped is not None else None

    def _module_list(self, expr: cst.Call) -> ModuleSpec:
        """``nn.ModuleList([...])`` built in an expression: the members its argument shows."""
        listed = expr.args[0].value if expr.args and not expr.args[0].star else None
        specs, positional = self.member_specs(listed, []) if listed else ((), False)
        members = self.members(listed, []) if listed else ()
        return ModuleSpec(
            qualname="torch.nn.ModuleList",
            node=expr,
            members=members,
            member_specs=specs,
            positional=positional,
        )

    def _grown_members(
        self,
        call: cst.Call,
        held: dict[str, ModuleSpec],
        defaults: dict[str, cst.BaseExpression] | None,
        members_of: Callable[[cst.FunctionDef], Leads] | None,
    ) -> tuple[ModuleSpec, ...]:
        """``nn.Sequential(*layers)`` over a list its function grows: the members that may
        run first, or last (``grown_lists.grown``, through ``leads_of`` or ``tails_of``)."""
        if members_of is None or self.method is None:
            return ()
        if not call.args or call.args[0].star != "*":
            return ()
        name = call.args[0].value
        if not isinstance(name, cst.Name):
            return ()
        found: list[ModuleSpec] = []
        for member in members_of(self.method).get(name.value, ()):
            dotted = dotted_name(member)
            attr = dotted[5:] if dotted is not None and dotted.startswith("self.") else None
            spec = held.get(attr) if attr is not None else self.spec(member, defaults)
            if spec is not None:
                found.append(spec)
        return tuple(found)

    def built_by(self, name: str) -> ModuleSpec | None:
        """The module a same-file builder function returns (``def mlp(sizes): ...; return
        nn.Sequential(*layers)``): every ``return`` of its body builds a module (the first
        one's spec stands for it), else None."""
        if name in self._built:
            return self._built[name]
        func = self.functions.get(name)
        self._built[name] = None  # a builder that calls itself builds nothing known
        if func is None:
            return None
        returns = [n.value for n in own_nodes(func) if isinstance(n, cst.Return)]
        if not returns or any(value is None for value in returns):
            return None
        specs = [self.spec(value, param_defaults(func)) for value in returns if value is not None]
        if not specs or any(spec is None for spec in specs):
            return None
        self._built[name] = specs[0]
        return specs[0]

    def members(self, expr: cst.BaseExpression, statements: list[cst.CSTNode]) -> tuple[str, ...]:
        """The same-file module classes that ``nn.ModuleList(expr)`` holds.

        ``expr`` is a literal, a comprehension, or a list named in the same method and filled
        there (``blocks.append(Block(...))``); members of other classes are left out.
        """
        found: set[str] = set()
        for element in self._member_exprs(expr, statements):
            found.update(self.member_class(element))
        return tuple(sorted(found))

    def member_specs(
        self, expr: cst.BaseExpression, statements: list[cst.CSTNode]
    ) -> tuple[tuple[ModuleSpec, ...], bool]:
        """The modules ``nn.ModuleList(expr)`` holds whose constructors the source shows,
        and whether they are every member, in order (``expr`` a list or tuple display)."""
        exprs = self._member_exprs(expr, statements)
        specs = [self.spec(element) for element in exprs]
        known = tuple(spec for spec in specs if spec is not None)
        positional = isinstance(expr, cst.List | cst.Tuple) and len(known) == len(exprs)
        return known, positional and bool(known)

    def _member_exprs(
        self, expr: cst.BaseExpression, statements: list[cst.CSTNode]
    ) -> list[cst.BaseExpression]:
        if isinstance(expr, cst.List | cst.Tuple | cst.Set):
            return [e.value for e in expr.elements]
        if isinstance(expr, cst.ListComp | cst.GeneratorExp | cst.SetComp):
            return [expr.elt]
        if isinstance(expr, cst.Dict):
            return [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
        if isinstance(expr, cst.DictComp):
            return [expr.value]
        if not isinstance(expr, cst.Name):
            return []
        name = expr.value
        out: list[cst.BaseExpression] = []
        for stmt in statements:
            assigned = isinstance(stmt, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == name for t in stmt.targets
            )
            extended = (
                isinstance(stmt, cst.AugAssign)
                and isinstance(stmt.target, cst.Name)
                and stmt.target.value == name
            )
            if assigned or extended:
                out += self._member_exprs(stmt.value, [])  # type: ignore[attr-defined]
            elif (
                isinstance(stmt, cst.Call)
                and isinstance(stmt.func, cst.Attribute)
                and isinstance(stmt.func.value, cst.Name)
                and stmt.func.value.value == name
                and stmt.func.attr.value in _LIST_METHODS
                and stmt.args
            ):
                added = stmt.args[-1].value
                if stmt.func.attr.value == "extend":
                    out += self._member_exprs(added, [])
                else:
                    out.append(added)
        return out

    def member_class(self, expr: cst.BaseExpression) -> list[str]:
        """``Block(...)`` or the classmethod constructor ``Block.from_config(...)``."""
        if isinstance(expr, cst.IfExp):
            return self.member_class(expr.body) + self.member_class(expr.orelse)
        if not isinstance(expr, cst.Call):
            return []
        name = dotted_name(expr.func)
        if name is None:
            return []
        for candidate in (name, name.rpartition(".")[0]):
            cls = self.classes.get(candidate)
            if cls is not None and cls.is_module:
                return [candidate]
        return []

    def _elements(
        self,
        call: cst.Call,
        lists: dict[str, tuple[cst.BaseExpression, ...]],
        held: dict[str, ModuleSpec],
        defaults: dict[str, cst.BaseExpression] | None = None,
    ) -> tuple[ModuleSpec, ...] | None:
        members: list[cst.BaseExpression] = []
        for arg in call.args:
            value = arg.value
            if arg.star == "*" and isinstance(value, cst.Name) and value.value in lists:
                members.extend(lists[value.value])
                continue
            if arg.star:
                return None
            if isinstance(value, cst.Call) and dotted_name(value.func) in (
                "OrderedDict",
                "collections.OrderedDict",
            ):
                inner = value.args[0].value if value.args else None
                if not isinstance(inner, cst.List | cst.Tuple):
                    return None
                for element in inner.elements:
                    pair = element.value
                    if not isinstance(pair, cst.Tuple) or len(pair.elements) != 2:
                        return None
                    members.append(pair.elements[1].value)
            else:
                members.append(value)
        specs: list[ModuleSpec] = []
        for member in members:
            name = dotted_name(member)
            attr = name[5:] if name is not None and name.startswith("self.") else None
            spec = held.get(attr) if attr is not None else self.spec(member, defaults)
            if spec is None:
                spec = ModuleSpec(qualname=None, node=member)
            specs.append(spec)
        return tuple(specs)


def _zero_rate(call: cst.Call) -> bool:
    """The dropout rate (``p``, first positional) is a literal 0."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "p":
            return literal_zero(arg.value)
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return bool(positional) and literal_zero(positional[0].value)


def literal_zero(node: cst.BaseExpression | None) -> bool:
    """A literal ``0`` or ``0.0``."""
    if isinstance(node, cst.Integer | cst.Float):
        try:
            return float(node.value) == 0.0
        except ValueError:
            return False
    return False


def _activation_like(name: str) -> bool:
    """``act_layer(inplace=True)`` writes its input; ``norm_act_layer(...)`` its own output."""
    last = name.rsplit(".", 1)[-1].lower()
    return "act" in last and "norm" not in last and "bn" not in last


def global_pool(size: cst.BaseExpression) -> bool:
    """Output size 1 (or all ones): torch computes it as a mean, which saves nothing."""
    if isinstance(size, cst.Integer):
        return size.value == "1"
    if isinstance(size, cst.Tuple | cst.List):
        return all(global_pool(e.value) for e in size.elements)
    return False


def _has_inplace_true(call: cst.Call) -> bool:
    return any(
        arg.keyword is not None
        and arg.keyword.value == "inplace"
        and literal_bool(arg.value) is True
        for arg in call.args
    )


def _inplace_arg(call: cst.Call, index: int) -> bool:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return literal_bool(arg.value) is True
    if index < len(positional):
        return literal_bool(positional[index].value) is True
    return False


def collect_classes(
    statements: Iterable[cst.CSTNode], imports: ImportTable, table: OpTable | None = None
) -> dict[str, ClassFacts]:
    """Find every class among a module's ``statements`` (at any depth) and classify it by
    its bases (transitively)."""
    found: dict[str, ClassFacts] = {}
    bases: dict[str, list[str]] = {}
    for node in statements:
        if type(node) is not cst.ClassDef:
            continue
        facts = ClassFacts(name=node.name.value, node=node)
        names: list[str] = []
        for base in node.bases:
            qualified = imports.qualify(base.value) or dotted_name(base.value) or ""
            names.append(qualified)
        bases[facts.name] = names
        facts.bases = tuple(names)
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef):
                facts.methods[stmt.name.value] = stmt
        found[facts.name] = facts

    def kind_of(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        kinds: set[str] = set()
        for base in bases.get(name, []):
            if base in MODULE_BASES or (base.startswith("torch.nn.") and base[9:10].isupper()):
                kinds.add("module")
            elif base in FUNCTION_BASES:
                kinds.add("function")
            elif base in OPTIMIZER_BASES:
                kinds.add("optimizer")
            elif base in bases and base not in seen:
                kinds |= kind_of(base, seen | {name})
        return kinds

    for name, facts in found.items():
        for base in bases.get(name, []):
            info = table.modules.get(base) if table is not None else None
            if info is not None:
                facts.parameters |= set(info.parameters)
        kinds = kind_of(name)
        if not kinds and "forward" in facts.methods and bases.get(name):
            kinds.add("module")  # ``class XModel(XPreTrainedModel)``: a module from elsewhere
        facts.is_module = "module" in kinds
        facts.is_function = "function" in kinds
        facts.is_optimizer = "optimizer" in kinds
    return found


def same_file_bases(cls: ClassFacts, classes: dict[str, ClassFacts]) -> Iterator[ClassFacts]:
    """The same-file bases of ``cls``, nearest first (breadth first), each once."""
    pending, seen = list(cls.bases), {cls.name}
    while pending:
        base = classes.get(pending.pop(0))
        if base is None or base.name in seen:
            continue
        seen.add(base.name)
        pending += base.bases
        yield base


def defining_class(name: str, method: str, classes: dict[str, ClassFacts]) -> str | None:
    """The same-file class whose ``method`` a ``name`` instance runs: ``name`` itself or its
    nearest same-file base that defines it; None where none does (or a base is not here)."""
    cls = classes.get(name)
    if cls is None:
        return None
    for candidate in (cls, *same_file_bases(cls, classes)):
        if method in candidate.methods:
            return candidate.name
    return None


def inherit_attributes(facts: ClassFacts, classes: dict[str, ClassFacts]) -> None:
    """A subclass holds the submodules, parameters and buffers its same-file bases' methods
    store on ``self`` (``class B(A)`` calling ``self.in_proj`` that ``A.__init__`` built),
    where its own methods store nothing of that name."""
    own = set(facts.modules) | facts.parameters | facts.buffers
    for base in same_file_bases(facts, classes):
        for attr, spec in base.modules.items():
            if attr not in own:
                facts.modules.setdefault(attr, spec)
        facts.parameters |= base.parameters - own - set(facts.modules)
        facts.buffers |= base.buffers - own - set(facts.modules)


def collect_attributes(
    facts: ClassFacts,
    resolver: ModuleResolver,
    lists_of: Callable[[cst.FunctionDef], dict[str, tuple[cst.BaseExpression, ...]]] | None = None,
    passed: dict[str, ModuleSpec] | None = None,
) -> None:
    """Fill ``facts.modules``/``parameters``/``buffers`` from ``self.x = ...`` in methods;
    ``lists_of``: a method's fixed literal lists (``fixed_lists``), for ``*layers``;
    ``passed``: the modules every construction gives ``__init__``'s parameters."""
    for method in facts.methods.values():
        defaults = param_defaults(method)
        given = passed if passed and method.name.value == "__init__" else None
        statements = _assignments(method)
        unpacks = lists_of is not None and any(
            isinstance(stmt, cst.Assign)
            and isinstance(stmt.value, cst.Call)
            and any(arg.star == "*" for arg in stmt.value.args)
            for stmt in statements
        )  # ``self.body = nn.Sequential(*layers)``: the method's fixed lists are needed
        named = (defaults, (lists_of(method) or None) if unpacks and lists_of else None)
        resolver.method = method if unpacks else None
        for stmt in statements:
            if isinstance(stmt, cst.Assign):
                if given is not None and _record_given(facts, stmt, given):
                    continue
                for target in stmt.targets:
                    _record(facts, resolver, target.target, stmt.value, named, statements)
            elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
                _record(facts, resolver, stmt.target, stmt.value, named, statements)
            elif isinstance(stmt, cst.Call):
                _record_register(facts, stmt)
                _record_member(facts, resolver, stmt)
    resolver.method = None


def assigned_pairs(stmt: cst.Assign) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``a = b`` or ``a, b = c, d`` with one target: each target with the value it is given;
    none for other shapes (chained targets, tuples of unequal length)."""
    if len(stmt.targets) != 1:
        return []
    target, value = stmt.targets[0].target, stmt.value
    if not (isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple)):
        return [(target, value)]
    if len(target.elements) != len(value.elements):
        return []
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements, strict=True)]


def _record_given(facts: ClassFacts, stmt: cst.Assign, given: dict[str, ModuleSpec]) -> bool:
    """``self.critic = critic`` (or a tuple of such) in ``__init__``, where every construction
    passes a module for ``critic``: the attribute is that module."""
    pairs = assigned_pairs(stmt)
    recorded = False
    for left, right in pairs:
        name = dotted_name(left)
        if (
            isinstance(right, cst.Name)
            and right.value in given
            and name is not None
            and name.startswith("self.")
            and name.count(".") == 1
        ):
            facts.modules[name[5:]] = given[right.value]
            facts.assigned.add(name[5:])
            facts.given.setdefault(right.value, name[5:])
            recorded = True
    return recorded and len(pairs) == 1


def _record(
    facts: ClassFacts,
    resolver: ModuleResolver,
    target: cst.BaseExpression,
    value: cst.BaseExpression,
    named: tuple[dict[str, cst.BaseExpression], dict[str, tuple[cst.BaseExpression, ...]] | None],
    statements: list[cst.CSTNode],
) -> None:
    """``self.attr = value``: what the attribute holds; ``named``: the method's parameter
    defaults and its fixed literal lists (what ``*layers`` unpacks)."""
    defaults, lists = named
    name = dotted_name(target)
    if name is None or not name.startswith("self.") or name.count(".") != 1:
        return
    attr = name[5:]
    empty_list = isinstance(value, cst.List) and not value.elements
    (facts.lists if empty_list else facts.assigned).add(attr)
    if _is_display(value):
        facts.displays.add(attr)
    if isinstance(value, cst.Call):
        qualified = resolver.imports.qualify(value.func)
        if qualified == "torch.nn.Parameter":
            # ``nn.Parameter(t, requires_grad=False)``: a tensor that never requires grad
            (facts.parameters if _requires_grad(value) else facts.buffers).add(attr)
            return
        if qualified == "torch.nn.Buffer":
            facts.buffers.add(attr)
            return
        if qualified in MODULE_LISTS:
            first = value.args[0] if value.args and not value.args[0].star else None
            members = resolver.members(first.value, statements) if first is not None else ()
            specs, positional = (
                resolver.member_specs(first.value, statements) if first is not None else ((), False)
            )
            earlier = facts.modules.get(attr)
            if earlier is not None and earlier.qualname == qualified:
                members = tuple(sorted({*earlier.members, *members}))
                specs, positional = (*earlier.member_specs, *specs), False
            facts.modules[attr] = ModuleSpec(
                qualname=qualified,
                node=value,
                members=members,
                member_specs=specs,
                positional=positional,
            )
            return
    spec = resolver.spec(value, defaults, lists=lists, held=facts.modules)
    if spec is None:
        if not constructs_unknown_class(value, resolver.imports.qualify):
            return
        spec = ModuleSpec(qualname=None, node=value)  # an unknown class: some module
    earlier = facts.modules.get(attr)
    if (
        earlier is not None
        and (
            earlier.qualname != spec.qualname
            or earlier.inplace != spec.inplace
            or earlier.user_class != spec.user_class
        )
        and not _reads(value, name)  # wrapping the earlier module follows it on its path
    ):
        # assigned different modules on different paths: assume nothing about it but the
        # same-file classes it may be, whose forward may write to what it is given
        classes = {c for s in (earlier, spec) for c in s.classes}
        spec = ModuleSpec(qualname=None, node=value, candidates=tuple(sorted(classes)))
    facts.modules[attr] = spec


def _reads(value: cst.BaseExpression, name: str) -> bool:
    """Whether ``value`` reads the dotted ``name`` (``self.conv`` in ``Sequential(self.conv)``)."""
    return any(dotted_name(node) == name for node in walk(value) if is_expression(node))


def _is_display(value: cst.BaseExpression) -> bool:
    """A dict, list, set or tuple display, or a call of ``dict``/``list``/``OrderedDict``."""
    if isinstance(value, cst.Dict | cst.List | cst.Set | cst.Tuple):
        return True
    if isinstance(value, cst.Call) and not value.args:
        name = dotted_name(value.func)
        return name in ("dict", "list", "set", "OrderedDict", "collections.OrderedDict")
    return False


def _record_member(facts: ClassFacts, resolver: ModuleResolver, call: cst.Call) -> None:
    """``self.blocks.append(Block(...))`` adds a member class to ``self.blocks``."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in _LIST_METHODS:
        return
    name = dotted_name(func.value)
    if name is None or not name.startswith("self.") or name.count(".") != 1 or not call.args:
        return
    spec = facts.modules.get(name[5:])
    if spec is None or spec.qualname not in MODULE_LISTS:
        return
    added = call.args[-1].value
    if func.attr.value == "extend":
        members = resolver.members(added, [])
        specs = resolver.member_specs(added, [])[0]
    else:
        members = tuple(resolver.member_class(added))
        one = resolver.spec(added)
        specs = (one,) if one is not None else ()
    if members or specs:
        facts.modules[name[5:]] = replace(
            spec,
            members=tuple(sorted({*spec.members, *members})),
            member_specs=(*spec.member_specs, *specs),
            positional=False,
        )


def _record_register(facts: ClassFacts, call: cst.Call) -> None:
    """``self.register_buffer("b", t)`` and ``self.register_parameter("w", p)``; a parameter
    registered as ``None`` is a placeholder (torch keeps no tensor under that name), and one
    built with ``requires_grad=False`` never requires grad."""
    name = dotted_name(call.func)
    if name not in ("self.register_buffer", "self.register_parameter") or not call.args:
        return
    first = call.args[0].value
    if not isinstance(first, cst.SimpleString):
        return
    attr = first.evaluated_value
    if not isinstance(attr, str):
        return
    if name == "self.register_buffer":
        facts.buffers.add(attr)
        return
    value = call.args[1].value if len(call.args) > 1 else None
    if isinstance(value, cst.Name) and value.value == "None":
        return
    if isinstance(value, cst.Call) and not _requires_grad(value):
        facts.buffers.add(attr)
        return
    facts.parameters.add(attr)


def given_parameters(exprs: tuple[cst.BaseExpression, ...], imports: ImportTable) -> bool:
    """What every construction passes for one ``__init__`` parameter (``constants``) is an
    ``nn.Parameter`` that requires grad each time (a constructing module's ``self.locs``,
    resolved to its ``__init__``'s ``nn.Parameter(...)``)."""
    return bool(exprs) and all(
        isinstance(e, cst.Call)
        and imports.qualify(e.func) == "torch.nn.Parameter"
        and _requires_grad(e)
        for e in exprs
    )


def _requires_grad(call: cst.Call) -> bool:
    """False for ``nn.Parameter(t, requires_grad=False)`` (by keyword or as the second
    positional argument), True otherwise."""
    flag = next(
        (a.value for a in call.args if a.keyword and a.keyword.value == "requires_grad"), None
    )
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if flag is None and len(positional) > 1:
        flag = positional[1]
    return literal_bool(flag) is not False if flag is not None else True


def param_defaults(func: cst.FunctionDef) -> dict[str, cst.BaseExpression]:
    defaults: dict[str, cst.BaseExpression] = {}
    for param in (*func.params.params, *func.params.kwonly_params):
        if param.default is not None:
            defaults[param.name.value] = param.default
    return defaults


_ASSIGNMENT_TYPES = frozenset({cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Call})


def _assignments(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """Assignments and statement calls in ``func``, not in nested functions, in source order."""
    return [
        node for node in walk(func, skip=_not_statement_level) if type(node) in _ASSIGNMENT_TYPES
    ]


def _not_statement_level(node: cst.CSTNode) -> bool:
    """Nested functions, and expressions: ``self.x = ...`` and ``self.register_buffer(...)``
    are statements (a call is looked at where it is the whole statement)."""
    return type(node) is cst.FunctionDef or is_expression(node)
