"""What to probe (enumerated from torch) and one probe per candidate.

Each ``*_entry`` / ``is_*`` function probes one candidate and returns a JSON-ready value, so
that the same code serves the in-process run and the isolated subprocess workers.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.functional
import torch.nn.functional as F
from torch import nn

from .graph import shares_storage
from .params import (
    aten_schemas,
    inplace_param,
    method_max_args,
    operator_params,
    params_resolver,
    schema_fits,
)
from .probes import (
    probe,
    probe_call,
    probe_module,
    probe_module_args,
    recipes_for,
    saves_alone,
    tensor_params,
)
from .recipes import (
    CONTAINER_MODULES,
    FACTORY_RECIPES,
    LIKE_RECIPES,
    SKIPPED_METHODS,
    module_args_recipes,
    module_recipes,
)
from .specs import C, Recipe, Spec, T, build, make_tensor, reseed

# (namespace, module, modules its functions may be defined in)
NAMESPACES: list[tuple[str, Any, frozenset[str]]] = [
    ("torch", torch, frozenset()),
    ("torch.nn.functional", F, frozenset({"torch", "torch._C._nn", "torch.nn.functional"})),
    ("torch.special", torch.special, frozenset({"torch._C._special"})),
    ("torch.linalg", torch.linalg, frozenset({"torch._C._linalg"})),
    ("torch.fft", torch.fft, frozenset({"torch._C._fft"})),
]
NAMESPACE_MODULES = {prefix: module for prefix, module, _ in NAMESPACES}

# --------------------------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------------------------


def _public_callable(obj: Any) -> bool:
    return callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj)


def torch_function_names() -> list[str]:
    """Public aten-backed ``torch.*`` functions plus the Python ones in ``torch.functional``."""
    native = set(dir(torch._C._VariableFunctions)) | set(torch.functional.__all__)
    return sorted(
        name
        for name in dir(torch)
        if not name.startswith("_") and name in native and _public_callable(getattr(torch, name))
    )


def function_names() -> Iterator[str]:
    """Qualified name of every function candidate, namespace by namespace."""
    for prefix, module, homes in NAMESPACES:
        if module is torch:
            names = torch_function_names()
        else:
            names = sorted(
                name
                for name in dir(module)
                if not name.startswith("_")
                and _public_callable(getattr(module, name))
                and getattr(getattr(module, name), "__module__", None) in homes
            )
        for name in names:
            yield f"{prefix}.{name}"


def method_names() -> list[str]:
    """Public Tensor methods plus operator dunders (``__add__``, ``__iadd__``, ``__getitem__``)."""
    names = []
    for name in dir(torch.Tensor):
        attr = inspect.getattr_static(torch.Tensor, name)
        if inspect.isdatadescriptor(attr) or not callable(getattr(torch.Tensor, name)):
            continue
        if name.startswith("__") and name.endswith("__"):
            if operator_params(name) is None:
                continue
        elif name.startswith("_") or name in SKIPPED_METHODS:
            continue
        names.append(name)
    return sorted(names)


def inplace_method_names() -> list[str]:
    """Single-underscore Tensor method names (``mul_``), whose writes are verified."""
    return [
        name
        for name in sorted(dir(torch.Tensor))
        if not name.startswith("_") and name.endswith("_") and not name.endswith("__")
    ]


def module_names() -> list[str]:
    """Every ``torch.nn`` module class, containers left out."""
    return [
        name
        for name in sorted(dir(nn))
        if not name.startswith("_")
        and name not in CONTAINER_MODULES
        and inspect.isclass(cls := getattr(nn, name))
        and issubclass(cls, nn.Module)
    ]


def property_names() -> list[str]:
    """Public Tensor data descriptors (``T``, ``mT``, ``real``, ``data`` ...)."""
    return [
        name
        for name in dir(torch.Tensor)
        if not name.startswith("_")
        and inspect.isdatadescriptor(inspect.getattr_static(torch.Tensor, name))
    ]


# --------------------------------------------------------------------------------------------
# One probe per candidate
# --------------------------------------------------------------------------------------------


def function_entry(qualname: str) -> dict[str, Any] | None:
    """Table entry of one function, or None when no recipe could call it."""
    prefix, name = qualname.rsplit(".", 1)
    fn = getattr(NAMESPACE_MODULES[prefix], name)
    params_of = params_resolver(fn)
    outcome = probe(fn, recipes_for(qualname), params_of)
    if outcome is None:
        return None
    entry: dict[str, Any] = {
        "params": outcome.params,
        "saves": outcome.saves,
        "view": outcome.view,
        "inplace": outcome.inplace,
        "inplace_param": inplace_param(fn),
    }
    if outcome.multi_view:
        entry["multi_view"] = True
    _add_detached(entry, outcome)
    _add_saves_alone(entry, fn, outcome, params_of)
    only_tensors = tensor_params(fn, outcome.recipe, params_of)
    if only_tensors:
        entry["tensor_params"] = only_tensors
    if entry["inplace_param"] is not None:
        args, kwargs = outcome.recipe
        inplace_outcome = probe_call(fn, (args, {**kwargs, "inplace": True}), params_of)
        if inplace_outcome is None:
            return None
        entry["saves"] = inplace_outcome.saves
        entry["saves_out_of_place"] = outcome.saves
    return entry


def tensor_first(recipe: Recipe) -> bool:
    """Whether the recipe can be a method call (its first argument is a tensor)."""
    return bool(recipe[0]) and isinstance(recipe[0][0], Spec)


def method_entry(name: str) -> dict[str, Any] | None:
    """Table entry of one Tensor method (``self`` is the first recipe argument)."""
    fn = getattr(torch.Tensor, name)
    recipes = list(filter(tensor_first, recipes_for(name)))
    outcome = probe(fn, recipes, params_resolver(fn, name))
    if outcome is None:
        return None
    entry = {
        "params": outcome.params,
        "saves": outcome.saves,
        "view": outcome.view,
        "inplace": outcome.inplace,
    }
    if outcome.multi_view:
        entry["multi_view"] = True
    most = method_max_args(fn, name)
    if most is not None:
        entry["max_args"] = most
    _add_detached(entry, outcome)
    _add_saves_alone(entry, fn, outcome, params_resolver(fn, name))
    return entry


def _add_detached(entry: dict[str, Any], outcome: Any) -> None:
    """``detached`` for a call whose result never requires grad although its tensor inputs
    do (``x.new_tensor(v)``, ``x.argmax()``, ``torch.eq(a, b)``): no recipe that ran gave a
    result that requires grad (an input handed back as it came, ``x.contiguous()``, does).
    Views and in-place calls are described by their own fields."""
    if not outcome.requires_grad and not outcome.view and not outcome.inplace:
        entry["detached"] = True


def _add_saves_alone(
    entry: dict[str, Any], fn: Callable[..., Any], outcome: Any, params_of: Any
) -> None:
    """``saves_alone`` for a differentiable call that saved one of several inputs: those it
    keeps when only that input needs grad (listed only when some are)."""
    saved = [name for name in outcome.saves if name != "result"]
    tensors = sum(1 for value in (*outcome.recipe[0], *outcome.recipe[1].values()) if _spec(value))
    if not saved or tensors < 2 or not outcome.differentiable or outcome.inplace:
        return
    alone = [name for name in saves_alone(fn, outcome.recipe, params_of) if name in saved]
    if alone:
        entry["saves_alone"] = alone


def _spec(value: Any) -> bool:
    return isinstance(value, Spec) or (
        isinstance(value, list | tuple) and any(isinstance(v, Spec) for v in value)
    )


def inplace_check(name: str) -> list[bool]:
    """``[ran, wrote]`` for a single-underscore method: did a call succeed, did one write?

    A write is a bump of ``self._version`` or a change of its data (``apply_`` and ``map_``
    write without a bump).
    """
    fn = getattr(torch.Tensor, name)
    ran = False
    for recipe in filter(tensor_first, recipes_for(name)):
        outcome = probe_call(fn, recipe, lambda args, kwargs: [], grad=False)
        if outcome is None:
            continue
        ran = True
        if outcome.inplace:
            return [True, True]
    return [ran, False]


def module_entry(name: str) -> dict[str, Any] | None:
    """``{"entry": ..., "eval_only": ...}`` for one ``torch.nn`` class, or None if no recipe ran.

    Probed in training mode; eval mode only as a fallback. ``entry`` is None when the
    module has an ``inplace`` parameter and its ``inplace=True`` form failed.
    """
    cls = getattr(nn, name)
    recipes = module_recipes(name)
    for train in (True, False):
        found = next(
            (
                (recipe, outcome)
                for recipe in recipes
                if (outcome := probe_module(cls, recipe, False, train)) is not None
            ),
            None,
        )
        if found is not None:
            break
    if found is None:
        return None
    recipe, outcome = found
    entry: dict[str, Any] | None = {
        "saves_input": outcome.saves_input,
        "saves_result": outcome.saves_result,
        "inplace_param": inplace_param(cls.__init__),
        "has_parameters": outcome.has_parameters,
    }
    if outcome.saved_outputs:  # a tuple result: which of its elements the graph saved
        entry["saved_outputs"] = list(outcome.saved_outputs)
    if outcome.outputs:  # a tuple result: its length, for ``out, (h, c) = lstm(x)``
        entry["outputs"] = outcome.outputs
    if outcome.has_parameters and not outcome.saves_parameters:  # ``Embedding``
        entry["saves_parameters"] = False
    if outcome.parameters:  # its own parameters by name, as built by the recipe that ran
        entry["parameters"] = list(outcome.parameters)
    if entry["inplace_param"] is not None:
        entry["inplace_param"]["index"] -= 1  # drop ``self``
        inplace_outcome = probe_module(cls, recipe, True, train)
        if inplace_outcome is None:
            return {"entry": None, "eval_only": not train}
        entry["saves_input"] = inplace_outcome.saves_input
        entry["saves_result"] = inplace_outcome.saves_result
        entry["saves_input_out_of_place"] = outcome.saves_input
        entry["saves_result_out_of_place"] = outcome.saves_result
    return {"entry": entry, "eval_only": not train}


def module_args_entry(name: str) -> dict[str, Any] | None:
    """``--detail``: which forward arguments and outputs (by path) one forward call saved.

    Recurrent modules get their hidden state (``hx``, ``hx[1]`` is an LSTM's cell state), so
    a device whose fused kernels save more (CUDA ``LSTMCell``, cuDNN ``GRU``) shows it here.
    """
    cls = getattr(nn, name)
    for train in (True, False):
        for recipe in module_args_recipes(name):
            saves = probe_module_args(cls, recipe, train)
            if saves is not None:
                return {"saves": saves, "train": train}
    return None


def is_view_property(name: str) -> bool:
    """Whether the Tensor property ``name`` returns a tensor aliasing ``self``."""
    for spec in (T(), C(), T(2, 3, 4)):
        reseed()
        tensor = make_tensor(spec, grad=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = getattr(tensor, name)
        except Exception:
            continue
        if (
            isinstance(value, torch.Tensor)
            and value is not tensor
            and shares_storage(value, tensor)
        ):
            return True
    return False


def _plain_tensor_result(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.grad_fn is None and not value.requires_grad


def _builds_from_values(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether a tensor-less call to ``fn`` is a real construction, not wrapped-scalar math.

    Ops with a Tensor ``self`` accept Python numbers as wrapped scalars (``torch.add(3, 4)``);
    such a call counts only if an overload returning a Tensor takes these values as they are.
    """
    schemas = aten_schemas(getattr(fn, "__name__", ""))
    if not schemas:
        return True
    if not any(s.arguments and s.arguments[0].name == "self" for s in schemas):
        return True
    return any(
        s.returns and s.returns[0].type.kind() == "TensorType" and schema_fits(s, args, kwargs)
        for s in schemas
    )


def reads_metadata_only(name: str) -> bool:
    """Whether the factory ``torch.<name>`` reads only the shape, dtype and device of the
    tensor it is given (``zeros_like``): from the same seed, the call on that tensor and on
    one of the same kind with other values gives equal results, for every recipe with a tensor
    first that runs (at least one must). Uninitialized results are compared by metadata."""
    fn = getattr(torch, name)
    ran = False
    for args, kwargs in LIKE_RECIPES:
        results = []
        for shift in (0.0, 3.0):
            reseed()
            built = list(build(args, False))
            built[0] = built[0] + shift
            reseed()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    results.append(fn(*built, **build(kwargs, False)))
            except Exception:
                break
        if len(results) != 2:
            continue
        first, second = results
        if not (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)):
            return False
        same_kind = first.shape == second.shape and first.dtype == second.dtype
        if not same_kind or not (returns_uninitialized(f"torch.{name}") or first.equal(second)):
            return False
        ran = True
    return ran


def returns_uninitialized(name: str) -> bool:
    """Whether torch documents ``torch.<name>`` (or, for a bare name, ``Tensor.<name>``) as
    returning uninitialized data (``empty``, ``empty_like``, ``new_empty``): its old values are
    nobody's, so writing them can make no read stale."""
    owner, _, attr = name.rpartition(".")
    obj = getattr(torch, attr, None) if owner == "torch" else getattr(torch.Tensor, name, None)
    return "uninitialized" in (getattr(obj, "__doc__", None) or "")


def overwrites(name: str) -> bool:
    """Whether the in-place ``Tensor.<name>`` leaves ``self`` with values that do not depend
    on its old ones (``copy_``, ``fill_``, ``zero_``, ``normal_``): writing with it reads
    nothing of the old value. Probed: from the same seed, the call on ``self`` and on other
    values of ``self`` (shifted, all zeros, a copy of another tensor argument) must leave
    ``self`` equal every time, for every recipe that runs (at least one must)."""
    fn = getattr(torch.Tensor, name)
    ran = False
    for recipe in filter(tensor_first, recipes_for(name)):
        results = []
        for variant in _SELF_VARIANTS:
            reseed()
            args = build(recipe[0], False)
            kwargs = build(recipe[1], False)
            self_ = args[0]
            if variant is not None and not variant(self_, [*args[1:], *kwargs.values()]):
                continue
            reseed()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fn(*args, **kwargs)
            except Exception:
                break
            results.append(self_.detach().clone())
        if len(results) < 2:
            continue
        ran = True
        first = results[0]
        if not all(_same(first, other) for other in results[1:]):
            return False
    return ran


def _shifted(tensor: torch.Tensor, _others: list[Any]) -> bool:
    with torch.no_grad():
        if tensor.dtype == torch.bool:
            tensor.logical_not_()
        else:
            tensor.mul_(2).add_(1)
    return True


def _zeros(tensor: torch.Tensor, _others: list[Any]) -> bool:
    with torch.no_grad():
        tensor.zero_()
    return True


def _like_other(tensor: torch.Tensor, others: list[Any]) -> bool:
    """``self`` takes the values of another tensor argument (``eq_`` then answers True)."""
    for other in others:
        if isinstance(other, torch.Tensor) and other.dtype == tensor.dtype:
            try:
                with torch.no_grad():
                    tensor.copy_(other.expand_as(tensor))
            except RuntimeError:
                continue
            return True
    return False


_SELF_VARIANTS: tuple[Callable[[torch.Tensor, list[Any]], bool] | None, ...] = (
    None,
    _shifted,
    _zeros,
    _like_other,
)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)))
    return bool(torch.equal(a, b))


def tensor_attributes() -> list[str]:
    """Every public attribute a ``torch.Tensor`` has (methods, properties, ``data``, ``grad``):
    an object read or set through any other name is not a plain tensor."""
    return sorted(name for name in dir(torch.Tensor) if not name.startswith("_"))


def module_wrappers() -> list[str]:
    """The public functions of ``torch.nn.utils`` (and its ``parametrizations``) that return
    the very module they are given (``weight_norm``, ``spectral_norm``): a module built
    through them is the module inside. Probed on a fresh ``nn.Linear`` each."""
    import warnings

    import torch.nn.utils.parametrizations as parametrizations

    found = []
    for space, prefix in (
        (torch.nn.utils, "torch.nn.utils"),
        (parametrizations, "torch.nn.utils.parametrizations"),
    ):
        for name in sorted(dir(space)):
            fn = getattr(space, name)
            if name.startswith("_") or not callable(fn) or isinstance(fn, type):
                continue
            module = torch.nn.Linear(2, 2)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    returned = fn(module)
            except Exception:  # most utilities take other arguments
                continue
            if returned is module:
                found.append(f"{prefix}.{name}")
    return found


def is_factory(name: str) -> bool:
    """Whether ``torch.<name>`` builds a new tensor with no autograd history.

    Either from Python data / sizes alone, or (``*_like``) from a tensor that requires grad.
    """
    fn = getattr(torch, name)
    recipes = LIKE_RECIPES if name.endswith("_like") else FACTORY_RECIPES
    for args, kwargs in recipes:
        reseed()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = fn(*build(args, True), **build(kwargs, True))
        except Exception:
            continue
        if _plain_tensor_result(value) and (
            name.endswith("_like") or _builds_from_values(fn, args, kwargs)
        ):
            return True
    return False
