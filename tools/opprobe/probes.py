"""One probe: call an op, or run a module forward, and read what the graph saved."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from .graph import (
    classify_saves,
    iter_tensors,
    named_tensors,
    saved_names,
    shares_storage,
    was_written,
)
from .params import ParamsOf, param_name
from .recipes import GENERIC, SPECIFIC, ModuleRecipe
from .specs import Recipe, Spec, build, on_device, reseed


@dataclass
class Outcome:
    """What one successful call revealed."""

    params: list[str]
    saves: list[str]
    view: bool
    inplace: bool
    differentiable: bool
    recipe: Recipe = field(repr=False)
    #: one of several views the call returned, which autograd refuses to write in place
    multi_view: bool = False
    #: some output requires grad (a new result with history, or an input handed back)
    requires_grad: bool = True


def probe_call(
    fn: Callable[..., Any], recipe: Recipe, params_of: ParamsOf, grad: bool = True
) -> Outcome | None:
    """Call ``fn`` once with freshly built arguments and inspect what it did."""
    reseed()
    args = build(recipe[0], grad)
    kwargs = build(recipe[1], grad)
    params = params_of(args, kwargs)
    inputs = [(param_name(params, i), t) for i, arg in enumerate(args) for t in iter_tensors(arg)]
    inputs += [(key, t) for key, value in kwargs.items() for t in iter_tensors(value)]
    stop = {tensor.grad_fn for _, tensor in inputs if tensor.grad_fn is not None}
    first = inputs[0][1] if inputs else None
    version = first._version if first is not None else 0
    before = first.detach().clone() if first is not None else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = fn(*args, **kwargs)
    except Exception:
        return None
    wrote = first is not None and before is not None and was_written(first, version, before)
    outs = list(iter_tensors(result))
    if not outs:
        if not wrote:
            return None
        outs = [first]  # e.g. __setitem__ returns None
    differentiable = any(t.grad_fn is not None and t.grad_fn not in stop for t in outs)
    view = (
        first is not None and not wrote and outs[0] is not first and shares_storage(outs[0], first)
    )
    saves = sorted(classify_saves(outs, stop, inputs))
    requires_grad = any(t.requires_grad for t in outs)
    multi_view = view and _refuses_inplace(outs[0])
    return Outcome(params, saves, view, wrote, differentiable, recipe, multi_view, requires_grad)


def saves_alone(fn: Callable[..., Any], recipe: Recipe, params_of: ParamsOf) -> list[str]:
    """The inputs the graph saves when that input alone needs grad (``gather`` keeps ``self``
    for its own gradient), as against those kept only for another input's gradient (``a * b``
    keeps ``b`` for ``a``'s). Each input is probed with the others built without grad."""
    reseed()
    plain = (build(recipe[0], False), build(recipe[1], False))
    params = params_of(*plain)
    names = [param_name(params, i) for i in range(len(plain[0]))]
    found: list[str] = []
    for name in [*names, *plain[1]]:
        reseed()
        graded = (build(recipe[0], True), build(recipe[1], True))
        reseed()
        plain = (build(recipe[0], False), build(recipe[1], False))
        args = [g if n == name else p for n, g, p in zip(names, graded[0], plain[0], strict=True)]
        kwargs = {k: graded[1][k] if k == name else v for k, v in plain[1].items()}
        inputs = [(n, t) for n, a in zip(names, args, strict=True) for t in iter_tensors(a)]
        inputs += [(k, t) for k, v in kwargs.items() for t in iter_tensors(v)]
        if not any(n == name and t.requires_grad for n, t in inputs):
            continue
        stop = {tensor.grad_fn for _, tensor in inputs if tensor.grad_fn is not None}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fn(*args, **kwargs)
        except Exception:
            continue
        if name in classify_saves(list(iter_tensors(result)), stop, inputs):
            found.append(name)
    return sorted(set(found))


def tensor_params(fn: Callable[..., Any], recipe: Recipe, params_of: ParamsOf) -> list[str]:
    """The positional parameters only a tensor may fill: the call that works with the
    recipe's tensor there refuses a Python float and a Python int in its place
    (``TypeError``, or a wrapper's ``AttributeError``: ``torch.norm(2.0)``), with the
    recipe's other numbers given as tensors (``torch.pow(2.0, e)`` works, so ``pow``'s
    ``input`` is not one). A value a program passes there is a tensor."""
    reseed()
    params = params_of(build(recipe[0], False), build(recipe[1], False))
    found: list[str] = []
    for index, spec in enumerate(recipe[0]):
        if isinstance(spec, Spec) and all(
            _refuses_number(fn, recipe, index, number) for number in (0.5, 2)
        ):
            found.append(param_name(params, index))
    return found


def _refuses_number(fn: Callable[..., Any], recipe: Recipe, index: int, number: float) -> bool:
    """Whether ``fn`` raises ``TypeError`` with ``number`` for its ``index``-th argument."""
    reseed()
    args = list(build(recipe[0], True))
    # the recipe's other numbers as tensors: ``pow(2.0, e)`` takes a number as its base
    args = [_as_tensor(a) if i != index else number for i, a in enumerate(args)]
    kwargs = build(recipe[1], True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except TypeError:
        return True
    except AttributeError as error:  # a Python wrapper calling the argument's methods
        return f"'{type(number).__name__}' object has no attribute" in str(error)
    except Exception:
        return False
    return False


def _as_tensor(value: Any) -> Any:
    """A Python float or int as a 0-dim tensor; anything else as it is."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return torch.tensor(value)
    return value


def _refuses_inplace(out: Any) -> bool:
    """Autograd refuses an in-place write to ``out`` because it is one of several views one
    call returned (``unbind``, ``chunk``, ``split``; ``tensor_split`` returns separate
    views and allows it). Writes ``out``: call it last."""
    if not getattr(out, "requires_grad", False):
        return False
    try:
        out.mul_(1)
    except RuntimeError as error:
        return "returns multiple views" in str(error)
    return False


def probe(fn: Callable[..., Any], recipes: list[Recipe], params_of: ParamsOf) -> Outcome | None:
    """First recipe whose call is differentiable, else the first that succeeded at all."""
    fallback = None
    for recipe in recipes:
        outcome = probe_call(fn, recipe, params_of)
        if outcome is None:
            continue
        if outcome.differentiable:
            return outcome
        fallback = fallback or outcome
    return fallback


def recipes_for(qualname: str) -> list[Recipe]:
    """Op-specific recipes followed by the generic ones."""
    name = qualname.rsplit(".", 1)[-1]
    keys = [qualname, name]
    if name.endswith("_") and not name.endswith("__"):
        keys.append(name[:-1])
    for key in keys:
        if key in SPECIFIC:
            return SPECIFIC[key] + GENERIC
    return GENERIC


@dataclass
class ModuleOutcome:
    """What one successful forward call revealed."""

    saves_input: bool
    saves_result: bool
    has_parameters: bool
    #: for a module returning a tuple: the positions of the outputs the graph saved
    saved_outputs: tuple[int, ...] = ()
    #: for a module returning a tuple: how many elements it has (0 for one tensor)
    outputs: int = 0
    #: the graph keeps the module's parameters (a write to one between forward and
    #: backward breaks it): ``Linear`` and ``Conv2d`` do, ``Embedding`` does not
    saves_parameters: bool = True
    #: the names of its own parameters (``weight``, ``in_proj_weight``, ``weight_ih_l0``)
    parameters: tuple[str, ...] = ()


def probe_module(
    cls: type[nn.Module], recipe: ModuleRecipe, inplace: bool, train: bool
) -> ModuleOutcome | None:
    """Build the module, run forward once and inspect the graph behind its outputs."""
    kwargs = {**recipe.kwargs, "inplace": True} if inplace else recipe.kwargs
    reseed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = on_device(cls(*build(recipe.args, True), **kwargs))
            module.train(train)
            inputs = build(recipe.inputs, True)
            tensors = list(iter_tensors(inputs))
            named = [("input" if i == 0 else "other", t) for i, t in enumerate(tensors)]
            stop = {t.grad_fn for _, t in named if t.grad_fn is not None}
            result = module(*inputs)
    except Exception:
        return None
    outs = list(iter_tensors(result))
    if not outs:
        return None
    saves = classify_saves(outs, stop, named)
    positions: set[int] = set()
    if isinstance(result, tuple | list):
        for path in saved_names(list(named_tensors(result, "result")), stop, []):
            if path.startswith("result["):
                positions.add(int(path[len("result[") :].split("]", 1)[0]))
    return ModuleOutcome(
        saves_input="input" in saves,
        saves_result="result" in saves,
        has_parameters=any(True for _ in module.parameters()),
        saved_outputs=tuple(sorted(positions)),
        outputs=len(result) if isinstance(result, tuple | list) else 0,
        saves_parameters=keeps_parameters(module, outs),
        parameters=tuple(sorted(name for name, _ in module.named_parameters(recurse=False))),
    )


def keeps_parameters(module: nn.Module, outs: list[torch.Tensor]) -> bool:
    """Whether backward from ``outs`` needs the module's parameters as they were: move each
    parameter's version counter (as an optimizer step does) and run backward. True where
    that cannot be told (no parameter, no output with a graph, another error)."""
    params = [p for p in module.parameters() if p.requires_grad]
    graphed = [o for o in outs if o.requires_grad and o.is_floating_point()]
    if not params or not graphed:
        return True
    with torch.no_grad():
        for param in params:
            param.add_(0)
    try:
        sum(o.sum() for o in graphed).backward()
    except RuntimeError:
        return True
    return False


def forward_arg_names(cls: type[nn.Module], count: int) -> list[str]:
    """Names of the first ``count`` positional parameters of ``cls.forward``."""
    try:
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"arg{i}" for i in range(count)]


def probe_module_args(cls: type[nn.Module], recipe: ModuleRecipe, train: bool) -> list[str] | None:
    """Paths of the forward arguments and outputs that one forward call saved, sorted."""
    reseed()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = on_device(cls(*build(recipe.args, True), **recipe.kwargs))
            module.train(train)
            inputs = build(recipe.inputs, True)
            names = forward_arg_names(cls, len(inputs))
            named = [
                pair
                for arg, name in zip(inputs, names, strict=True)
                for pair in named_tensors(arg, name)
            ]
            stop = {t.grad_fn for _, t in named if t.grad_fn is not None}
            result = module(*inputs)
    except Exception:
        return None
    outs = list(named_tensors(result, "result"))
    if not outs:
        return None
    return sorted(saved_names(outs, stop, named))
