"""Which ops hand back new storage, which may hand back an input, and which in-place methods
have an out-of-place twin: the facts the autofix needs to know a rewrite changes nothing else.

An op is *fresh* when no tensor it returns is one of its inputs or shares storage with one,
in every configuration probed: each recipe as it is, with every bool argument flipped
(``F.dropout(x, 0.5, False)`` hands ``x`` back), and again with the inputs already of the
result's dtype (``x.double()`` on a double tensor is ``x``; ``x.contiguous()`` on a
contiguous one is ``x``). Every call that runs must agree and at least one must run.

Limits: only what the recipes reach; an op that aliases its input only for shapes or values
no recipe builds is called fresh. ``inplace=True`` is never flipped on (the autofix reads
that keyword itself).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from .collect import NAMESPACE_MODULES, tensor_first
from .graph import iter_tensors, shares_storage
from .probes import recipes_for
from .recipes import FACTORY_RECIPES, LIKE_RECIPES, module_recipes
from .specs import Recipe, build, on_device, reseed

Outcome = tuple[list[torch.Tensor], list[torch.Tensor]]  # (inputs, outputs)


def _inplace_index(fn: Callable[..., Any]) -> int | None:
    """Position of an ``inplace`` parameter in ``fn``'s signature (``F.relu``'s 1)."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return names.index("inplace") if "inplace" in names else None


def _flips(recipe: Recipe, inplace: int | None) -> Iterator[Recipe]:
    """The recipe, then a copy with each bool argument (not ``inplace``) flipped in turn;
    nothing when the recipe turns ``inplace`` on by position (``F.relu(x, 1)``)."""
    args, kwargs = recipe
    if inplace is not None and len(args) > inplace and args[inplace]:
        return
    yield recipe
    for i, value in enumerate(args):
        if isinstance(value, bool) and i != inplace:
            yield (*args[:i], not value, *args[i + 1 :]), kwargs
    for key, value in kwargs.items():
        if isinstance(value, bool) and key != "inplace":
            yield args, {**kwargs, key: not value}


def _call(
    fn: Callable[..., Any], recipe: Recipe, dtype: torch.dtype | None = None
) -> Outcome | None:
    """Call ``fn`` on freshly built arguments (tensors of the first input's dtype cast to
    ``dtype`` first); None when the call fails."""
    reseed()
    args = build(recipe[0], False)
    kwargs = build(recipe[1], False)
    if dtype is not None:
        first = next((t for a in args for t in iter_tensors(a)), None)
        if first is None or first.dtype == dtype:
            return None
        args = tuple(_cast(a, first.dtype, dtype) for a in args)
        kwargs = {k: _cast(v, first.dtype, dtype) for k, v in kwargs.items()}
    inputs = [t for a in (*args, *kwargs.values()) for t in iter_tensors(a)]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*args, **kwargs)
    except Exception:
        return None
    return inputs, list(iter_tensors(result))


def _cast(value: Any, old: torch.dtype, new: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(new) if value.dtype == old else value
    if isinstance(value, tuple | list):
        return type(value)(_cast(v, old, new) for v in value)
    return value


def _aliased(inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> list[int]:
    """Positions of the inputs that some output is, or shares storage with."""
    return [i for i, t in enumerate(inputs) if any(o is t or shares_storage(o, t) for o in outputs)]


def _outcomes(fn: Callable[..., Any], recipes: list[Recipe]) -> Iterator[Outcome]:
    """Every configuration of every recipe that runs (see the module docstring)."""
    inplace = _inplace_index(fn)
    for recipe in recipes:
        for variant in _flips(recipe, inplace):
            outcome = _call(fn, variant)
            if outcome is None:
                continue
            yield outcome
            dtypes = {o.dtype for o in outcome[1]}
            if len(dtypes) == 1:
                again = _call(fn, variant, dtypes.pop())
                if again is not None:
                    yield again


def aliasing(qualname: str) -> str | None:
    """``fresh`` when no configuration hands back storage of an input, ``self`` when
    only the first input's storage is ever handed back (``x.view(...)``, ``x.to(...)``,
    ``x.contiguous()``), ``other`` when another input's may be, None when nothing ran."""
    fn = _function(qualname)
    if fn is None:
        return None
    ran = False
    seen: set[int] = set()
    recipes = recipes_for(qualname)
    if qualname.startswith("torch."):  # factories: ``torch.zeros(3)``, ``torch.as_tensor(x)``
        recipes = [*recipes, *FACTORY_RECIPES, *LIKE_RECIPES]
    for inputs, outputs in _outcomes(fn, recipes):
        ran = True
        seen.update(_aliased(inputs, outputs))
    if not ran:
        return None
    if not seen:
        return "fresh"
    return "self" if seen == {0} else "other"


def _function(qualname: str) -> Callable[..., Any] | None:
    """``torch.relu``/``torch.nn.functional.relu`` by qualified name (the namespaces of
    ``collect.function_names``), a Tensor method by its bare name."""
    if "." not in qualname:
        return getattr(torch.Tensor, qualname, None)
    prefix, _, name = qualname.rpartition(".")
    module = NAMESPACE_MODULES.get(prefix)
    return getattr(module, name, None) if module is not None else None


def has_twin(name: str) -> bool:
    """Whether the in-place ``Tensor.<name>`` (``clamp_``) has an out-of-place method of its
    stem (``clamp``) that, called the same way on the same values, returns new storage equal
    to what the in-place call leaves in ``self``: ``x.name(...)`` may then be rewritten as
    ``x = x.stem(...)``. Every recipe that runs both must agree; at least one must."""
    inplace = getattr(torch.Tensor, name, None)
    twin = getattr(torch.Tensor, name[:-1], None)
    if inplace is None or twin is None or not callable(twin):
        return False
    ran = False
    for recipe in filter(tensor_first, recipes_for(name)):
        written = _call(inplace, recipe)
        if written is None:
            continue
        inputs, _ = written
        outcome = _call(twin, recipe)
        if outcome is None:
            return False
        new_inputs, outputs = outcome
        if len(outputs) != 1 or _aliased(new_inputs, outputs) or not _equal(inputs[0], outputs[0]):
            return False
        ran = True
    return ran


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():  # kernels may round differently
        return bool(torch.allclose(a, b, rtol=1e-6, atol=1e-7, equal_nan=True))
    return bool(torch.equal(a, b))


def module_aliasing(name: str) -> str | None:
    """For ``torch.nn.<name>`` built without ``inplace=True``: ``fresh`` when its forward
    never hands back storage of its input (train and eval mode, every recipe that runs),
    ``input`` when it may hand back its input or a view of it (``Dropout`` in eval,
    ``Identity``, ``Flatten``) but nothing else, ``other`` when it may hand back a
    parameter's or buffer's storage; None when nothing ran."""
    cls = getattr(nn, name)
    ran = False
    seen: set[str] = set()
    inplace = _inplace_index(cls.__init__)
    inplace = inplace - 1 if inplace else None  # ``self`` is not passed
    for recipe in module_recipes(name):
        if inplace is not None and len(recipe.args) > inplace and recipe.args[inplace]:
            continue  # ``nn.ReLU(4)`` turns ``inplace`` on
        if recipe.kwargs.get("inplace"):
            continue
        for train in (True, False):
            reseed()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    module = on_device(cls(*build(recipe.args, False), **recipe.kwargs))
                    module.train(train)
                    given = build(recipe.inputs, False)
                    inputs = list(iter_tensors(given))
                    outputs = list(iter_tensors(module(*given)))
            except Exception:
                continue
            ran = True
            if _aliased(inputs, outputs):
                seen.add("input")
            state = [*module.parameters(), *module.buffers()]
            if _aliased(state, outputs):
                seen.add("other")
    if not ran:
        return None
    return "other" if "other" in seen else "input" if seen else "fresh"
