"""Modules a class is given at construction: ``SACPolicy(Actor(), Critic())``.

Real training code often builds its networks outside the class that trains them and passes
them in: ``self.actor, self.critic = actor, critic`` in ``__init__``, an optimizer over
``critic.parameters()``, and forwards through ``self.critic(...)`` in ``learn``. Read alone,
``__init__``'s parameters are unknown, so ``self.critic`` is no module and the optimizer
steps nothing any forward saved. This pass reads what the file's own constructions of the
class pass for each parameter that ``__init__`` stores on ``self``: when every construction
passes a module (a constructor call, or a name its scope binds once to one), the parameter
and the attribute are that module.

Limits: only same-file classes constructed by name in this file; a construction through
``*args``/``**kwargs``, or one that passes anything else for the parameter (``None``, a name
bound twice, an argument of the caller), leaves it unknown; a subclass's ``super().__init__``
is not a construction.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from inplace_lint.facts.classes import ClassFacts, ModuleResolver, assigned_pairs
from inplace_lint.facts.model import ModuleSpec
from inplace_lint.facts.names import assignment_targets, self_attribute
from inplace_lint.facts.syntax import is_none, none_comparison
from inplace_lint.facts.walk import nested_scope, nodes_by_type, own_nodes, per_node, walk


def stored_params(init: cst.FunctionDef) -> dict[str, str]:
    """``__init__``'s parameters stored whole on ``self``: parameter -> attribute
    (``self.critic = critic``, ``self.actor, self.critic = actor, critic``, and
    ``self.loss_fn = loss_fn if loss_fn is not None else F.mse_loss``)."""
    return {name: attr for name, (attr, _) in _stores(init).items()}


@per_node
def _stores(init: cst.FunctionDef) -> dict[str, tuple[str, bool]]:
    """Parameter -> (the attribute it is stored on, whether only where it is not None)."""
    params = {p.name.value for p in (*init.params.params, *init.params.kwonly_params)}
    stored: dict[str, tuple[str, bool]] = {}
    for node in own_nodes(init):
        if not isinstance(node, cst.Assign):
            continue
        for left, right in assigned_pairs(node):
            attr = self_attribute(left)
            name = _unless_none(right)
            if attr is not None and name is not None and name in params:
                stored.setdefault(name, (attr, not isinstance(right, cst.Name)))
    return stored


def _unless_none(value: cst.BaseExpression) -> str | None:
    """The parameter a stored value is: ``p``, or ``p`` where it is not None (``p if p is not
    None else F.mse_loss``, ``default if p is None else p``, ``p or default``); a
    construction that gives None there leaves the attribute unknown."""
    if isinstance(value, cst.Name):
        return value.value
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        return value.left.value if isinstance(value.left, cst.Name) else None
    if not isinstance(value, cst.IfExp):
        return None
    tested = none_comparison(value.test)
    if tested is None or not isinstance(tested[0], cst.Name):
        return None
    kept = value.orelse if tested[1] else value.body  # the arm where it is not None
    if isinstance(kept, cst.Name) and kept.value == tested[0].value:
        return kept.value
    return None


def init_assignments(init: cst.FunctionDef, attr: str) -> list[cst.BaseExpression]:
    """What ``__init__`` assigns to ``self.attr`` in plain assignments (``self.act =
    torch.tanh``), in source order."""
    found: list[cst.BaseExpression] = []
    for node in own_nodes(init):
        if isinstance(node, cst.Assign):
            found += [r for left, r in assigned_pairs(node) if self_attribute(left) == attr]
    return found


def constructed_arguments(
    module: cst.Module, defs: list[cst.FunctionDef], classes: dict[str, ClassFacts]
) -> dict[str, dict[str, list[cst.BaseExpression | None]]]:
    """Class name -> a parameter ``__init__`` stores on ``self`` -> what each construction in
    the file passes there, a name bound once in the construction's scope read through to its
    value (None where that cannot be told)."""
    wanted: dict[str, tuple[cst.FunctionDef, dict[str, str]]] = {}
    for cls in classes.values():
        init = cls.methods.get("__init__")
        stored = stored_params(init) if init is not None else {}
        if init is not None and stored:
            wanted[cls.name] = (init, stored)
    if not wanted:
        return {}
    given: dict[str, dict[str, list[cst.BaseExpression | None]]] = {}
    owners = {id(m): c.name for c in classes.values() for m in c.methods.values()}
    forwarded: list[tuple[list[cst.BaseExpression | None], int, str, str]] = []
    scopes = [(None, list(walk(module, skip=nested_scope)))]
    scopes += [(owners.get(id(d)), own_nodes(d)) for d in defs]
    for owner, nodes in scopes:
        bound: dict[str, list[cst.BaseExpression]] | None = None
        for node in nodes:
            if not (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Name)
                and node.func.value in wanted
            ):
                continue
            if bound is None:
                bound = _single_bindings(nodes)
            init, stored = wanted[node.func.value]
            defaulted = {name for name, (_, unless) in _stores(init).items() if unless}
            for param in stored:
                expr = _argument(init, param, node)
                if param in defaulted and is_none(expr):  # the default is stored: not told
                    expr = None
                if isinstance(expr, cst.Name) and expr.value in bound:
                    values = bound[expr.value]
                    expr = values[0] if len(values) == 1 else None
                exprs = given.setdefault(node.func.value, {}).setdefault(param, [])
                attr = self_attribute(expr)
                if owner is not None and attr is not None:
                    forwarded.append((exprs, len(exprs), owner, attr))
                exprs.append(expr)
    _read_forwarded(given, wanted, forwarded, classes)
    return given


def _read_forwarded(
    given: dict[str, dict[str, list[cst.BaseExpression | None]]],
    wanted: dict[str, tuple[cst.FunctionDef, dict[str, str]]],
    forwarded: list[tuple[list[cst.BaseExpression | None], int, str, str]],
    classes: dict[str, ClassFacts],
) -> None:
    """A construction inside a method of a same-file class that passes ``self.ATTR``, where
    that class's ``__init__`` stores a parameter whole on ``ATTR``, passes what the class's
    own constructions give that parameter (BigGAN's ``DBlock(activation=self.activation)``
    with ``Discriminator(D_activation=nn.ReLU(inplace=True))``), or what that class's
    ``__init__`` sets ``ATTR`` to once (``self.tf_out_act = torch.tanh``): one value when they
    all give the same expression object, else unknown. Resolved outward up to three classes
    deep."""
    for _ in range(3):
        changed = False
        for exprs, index, owner, attr in forwarded:
            if exprs[index] is None or self_attribute(exprs[index]) != attr:
                continue
            stored = {a: p for p, a in wanted.get(owner, (None, {}))[1].items()}
            if attr in stored:
                outer = given.get(owner, {}).get(stored[attr], [])
            else:  # ``self.act = torch.tanh`` in the owner's own ``__init__``, set once
                init = classes[owner].methods.get("__init__") if owner in classes else None
                outer = init_assignments(init, attr) if init is not None else []
                outer = outer if len(outer) == 1 else []
            known = {id(e) for e in outer}
            value = outer[0] if outer and len(known) == 1 else None
            if self_attribute(value) is None:
                exprs[index] = value
                changed = True
        if not changed:
            return


def constructed_modules(
    given: dict[str, dict[str, list[cst.BaseExpression | None]]], resolver: ModuleResolver
) -> dict[str, dict[str, ModuleSpec]]:
    """Class name -> ``__init__`` parameter -> the module every construction passes there."""
    found: dict[str, dict[str, ModuleSpec]] = {}
    for class_name, params in given.items():
        for param, exprs in params.items():
            specs = [resolver.spec(e) if e is not None else None for e in exprs]
            merged = _merged([s for s in specs if s is not None]) if None not in specs else None
            if merged is not None:
                found.setdefault(class_name, {})[param] = merged
    return found


def _single_bindings(nodes: list[cst.CSTNode]) -> dict[str, list[cst.BaseExpression]]:
    """Names a scope assigns, with every value assigned to each (``actor = Actor()``)."""
    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in nodes:
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    bound.setdefault(target.target.value, []).append(node.value)
                else:
                    for name in walk(target.target):
                        if isinstance(name, cst.Name):
                            bound.setdefault(name.value, []).append(target.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr)):
            for name in walk(getattr(node, "target", node)):
                if isinstance(name, cst.Name):
                    bound.setdefault(name.value, []).extend([node, node])  # never single
    return bound


def _argument(init: cst.FunctionDef, param: str, call: cst.Call) -> cst.BaseExpression | None:
    """What ``call`` passes for ``init``'s ``param``: by keyword, by position (``self`` not
    counted), or the default; None when it cannot be told (``*args``, ``**kwargs``)."""
    positional = list(init.params.params)[1:]
    index = next((i for i, p in enumerate(positional) if p.name.value == param), None)
    position = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value == param:
                return arg.value
            continue
        if position == index:
            return arg.value
        position += 1
    declared = next(
        (p for p in (*init.params.params, *init.params.kwonly_params) if p.name.value == param),
        None,
    )
    return declared.default if declared is not None else None


def _merged(specs: list[ModuleSpec]) -> ModuleSpec | None:
    """One module for what several constructions pass: theirs when they agree, else some
    module that may be any of the same-file classes passed."""
    if not specs:
        return None
    first = specs[0]
    if all(
        (s.qualname, s.user_class, s.inplace) == (first.qualname, first.user_class, first.inplace)
        for s in specs
    ):
        return first
    classes = sorted({c for s in specs for c in s.classes})
    return ModuleSpec(qualname=None, node=None, candidates=tuple(classes))


def given_values(
    cls: ClassFacts, given: dict[str, list[cst.BaseExpression | None]]
) -> dict[str, tuple[cst.BaseExpression, ...]]:
    """Attribute -> what every construction in the file passes for the ``__init__``
    parameter stored there (``self.mask_value = mask_value``)."""
    init = cls.methods.get("__init__")
    if init is None or not given:
        return {}
    found: dict[str, tuple[cst.BaseExpression, ...]] = {}
    for param, attr in stored_params(init).items():
        exprs = given.get(param)
        if exprs and all(e is not None for e in exprs):
            found.setdefault(attr, tuple(e for e in exprs if e is not None))
    return found


def attribute_stores(module: cst.Module) -> Counter[str]:
    """How often the file assigns each attribute name (``self.inplace = ...``,
    ``model.head.inplace = True``), anywhere: an attribute stored once, in ``__init__``,
    holds what the constructions gave it."""
    stores: Counter[str] = Counter()
    by_type = nodes_by_type(module)
    assignments = [*by_type.get(cst.Assign, ()), *by_type.get(cst.AugAssign, ())]
    for node in assignments + by_type.get(cst.AnnAssign, []):
        for target in assignment_targets(node):
            for part in walk(target):
                if isinstance(part, cst.Attribute):
                    stores[part.attr.value] += 1
    return stores


def constructed_strings(
    module: cst.Module, classes: dict[str, ClassFacts]
) -> dict[str, dict[str, str]]:
    """Class name -> ``__init__`` parameter -> the one string literal that every
    construction of the class in the file gives it (by keyword, by position or through the
    default); classes never constructed here, and parameters given anything else, are left
    out."""
    inits = {c.name: c.methods["__init__"] for c in classes.values() if "__init__" in c.methods}
    calls = [
        n
        for n in nodes_by_type(module).get(cst.Call, ())
        if isinstance(n.func, cst.Name) and n.func.value in inits  # type: ignore[attr-defined]
    ]
    found: dict[str, dict[str, str]] = {}
    for name, init in inits.items():
        made = [c for c in calls if c.func.value == name]  # type: ignore[union-attr]
        if not made:
            continue
        params = [p.name.value for p in (*init.params.params[1:], *init.params.kwonly_params)]
        for param in params:
            given = {string_literal(_argument(init, param, call)) for call in made}
            if len(given) == 1 and None not in given:
                found.setdefault(name, {})[param] = given.pop()  # type: ignore[assignment]
    return found


def string_literal(expr: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (``"relu"``), else None."""
    if isinstance(expr, cst.SimpleString) and isinstance(expr.evaluated_value, str):
        return expr.evaluated_value
    return None
