"""Generate ``inplace_lint/data/torch_ops.json`` by probing real torch autograd.

The static linter never imports torch. It reads the JSON table written by this script, which
calls torch ops on small example tensors (float inputs require grad and are non-leaf) and
inspects the autograd graph they build:

* ``saves``: the parameters (by name) and/or ``"result"`` whose tensors the graph saved for
  backward. A saved tensor counts when it shares storage with that input or output, since it
  then shares the version counter and writing it in place breaks ``backward()``; copies (e.g.
  the original ``self`` cloned by ``x.mul_(y)``) are not hazards and are not listed.
* ``view``: the result aliases the storage of the first tensor argument.
* ``inplace``: the call bumped the first argument's version counter (or changed its data).
* modules: whether the graph of ``module(x, ...)`` saved ``x`` or the module's output.
* functions and modules with an ``inplace`` parameter describe ``inplace=True`` and add
  ``*_out_of_place`` keys for the default. Dropout-like ops are probed in training mode.
* ``params``: positional parameter names, from ``inspect.signature`` or the aten schema
  (``*name`` marks varargs; ``argN`` is used where no name could be found).

Only the probing plan is written by hand (which callables to try and how to build example
arguments); every fact is observed from torch, and calls that fail are skipped. The output is
deterministic: each probe reseeds torch and every list is sorted.

Regenerate (from the repository root, with torch installed)::

    python tools/gen_torch_ops.py                # writes inplace_lint/data/torch_ops.json
    python tools/gen_torch_ops.py --output PATH  # writes somewhere else
    python tools/gen_torch_ops.py --check        # exit 1 if the file on disk is stale
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import operator
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch._jit_internal
import torch.functional
import torch.nn.functional as F
from torch import nn

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "inplace_lint" / "data" / "torch_ops.json"

# --------------------------------------------------------------------------------------------
# Example arguments
# --------------------------------------------------------------------------------------------

DIFFERENTIABLE_KINDS = frozenset({"float", "double", "complex", "square", "spd"})


@dataclass(frozen=True)
class Spec:
    """Placeholder for a tensor argument; a fresh tensor is built for every probe."""

    kind: str
    shape: tuple[int, ...]
    low: int = 0
    high: int = 2


def T(*shape: int) -> Spec:
    """Float tensor with values in (0.2, 0.8); requires grad when probing autograd."""
    return Spec("float", shape or (3, 4))


def D(*shape: int) -> Spec:
    """Float64 tensor (for ops that insist on double precision)."""
    return Spec("double", shape or (3, 4))


def BUF(*shape: int) -> Spec:
    """Float tensor that never requires grad (running stats, targets)."""
    return Spec("buffer", shape or (3, 4))


def L(high: int, *shape: int, low: int = 0) -> Spec:
    """Int64 tensor with values in [low, high) (indices, class targets)."""
    return Spec("long", shape or (3, 4), low, high)


def B(*shape: int) -> Spec:
    """Bool mask."""
    return Spec("bool", shape or (3, 4))


def C(*shape: int) -> Spec:
    """Complex tensor."""
    return Spec("complex", shape or (3, 4))


def I(*shape: int) -> Spec:  # noqa: E743
    """Int64 tensor with values in [1, 8) for bitwise / integer ops."""
    return Spec("long", shape or (3, 4), 1, 8)


SQ = Spec("square", (4, 4))
SPD = Spec("spd", (4, 4))

Recipe = tuple[tuple[Any, ...], dict[str, Any]]


def R(*args: Any, **kwargs: Any) -> Recipe:
    """One way of calling an op: positional and keyword arguments, possibly holding Specs."""
    return args, kwargs


def _make_tensor(spec: Spec, grad: bool) -> torch.Tensor:
    shape = spec.shape
    if spec.kind == "long":
        tensor = torch.randint(spec.low, spec.high, shape)
    elif spec.kind == "bool":
        tensor = torch.rand(shape) > 0.5
    elif spec.kind == "complex":
        tensor = torch.complex(torch.rand(shape), torch.rand(shape))
    elif spec.kind == "square":
        tensor = torch.eye(shape[-1]) * 2 + torch.rand(shape) * 0.1
    elif spec.kind == "spd":
        base = torch.rand(shape)
        tensor = base @ base.mT + torch.eye(shape[-1]) * shape[-1]
    elif spec.kind == "double":
        tensor = torch.rand(shape, dtype=torch.float64) * 0.6 + 0.2
    else:
        tensor = torch.rand(shape) * 0.6 + 0.2
    if grad and spec.kind in DIFFERENTIABLE_KINDS:
        # A non-leaf, so that in-place ops on it are allowed and recorded by autograd.
        return tensor.requires_grad_().clone()
    return tensor


@dataclass(frozen=True)
class Make:
    """Placeholder for a module constructor argument that is itself a module."""

    cls: type[nn.Module]
    args: tuple[Any, ...] = ()


def build(obj: Any, grad: bool) -> Any:
    """Replace every Spec / Make inside ``obj`` with a freshly built tensor / module."""
    if isinstance(obj, Spec):
        return _make_tensor(obj, grad)
    if isinstance(obj, Make):
        return obj.cls(*build(obj.args, grad))
    if isinstance(obj, tuple):
        return tuple(build(item, grad) for item in obj)
    if isinstance(obj, list):
        return [build(item, grad) for item in obj]
    if isinstance(obj, dict):
        return {key: build(value, grad) for key, value in obj.items()}
    return obj


# Generic recipes, tried (after any op-specific ones) in this order for every candidate.
GENERIC: list[Recipe] = [
    R(T()),
    R(T(), T()),
    R(T(), T(), T()),
    R(T(), 1),
    R(T(), 2),
    R(T(), 0.5),
    R(T(), 0, 1),
    R(T(), 0.3, 0.7),
    R(T(), T(), 0.5),
    R(T(), (4, 3)),
    R(T(), (1, 0)),
    R(T(), (2, 3, 4)),
    R(T(), 0, 0, 2),
    R(T(), 0, 2, 1),
    R(T(), 1, (2, 2)),
    R(T(), (2, 2), (1, 2)),
    R(T(3, 4), T(4, 5)),
    R(T(2, 3, 4), T(2, 4, 5)),
    R(T(3, 5), T(3, 4), T(4, 5)),
    R(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    R(T(3, 5), T(2, 3, 4), T(2, 4, 5)),
    R(T(4)),
    R(T(4), T(4)),
    R(T(3), T(4)),
    R(T(3, 4), T(4)),
    R(T(3), T(3, 4), T(4)),
    R(T(3, 4), T(3), T(4)),
    R(SQ),
    R(SQ, SQ),
    R(SPD),
    R(T(), 1, L(4, 3, 2)),
    R(T(), 0, L(3, 2)),
    R(T(), 0, L(3, 2), 0.5),
    R(T(), 1, L(4, 3, 2), T(3, 2)),
    R(T(), 1, L(4, 3, 2), T(3, 2), "sum"),
    R(T(), 0, L(3, 2), T(2, 4)),
    R(T(), B()),
    R(T(), B(), 0.5),
    R(T(), B(), T()),
    R(B(), T(), T()),
    R(T(), L(12, 5)),
    R(T(), L(12, 5), T(5)),
    R(T(), (L(3, 2),), T(2, 4)),
    R([T(), T()]),
    R([T(), T()], 1),
    R(T(2, 4, 6)),
    R(T(2, 4, 6, 6)),
    R(C()),
    R(C(), C()),
    R(D()),
    R(I()),
    R(I(), I()),
    R(I(), 1),
    R(B()),
    R(B(), B()),
]

# Op-specific recipes, looked up by qualified name, then bare name, then the name without a
# trailing "_" (so ``mul_`` and ``torch.relu_`` share the recipes of ``mul`` and ``relu``).
SPECIFIC: dict[str, list[Recipe]] = {
    # Scalar-exponent / scalar-bound forms, the way these ops are normally called.
    "pow": [R(T(), 2.0)],
    "__pow__": [R(T(), 2.0)],
    "__ipow__": [R(T(), 2.0)],
    "__rpow__": [R(T(), 2.0)],
    "float_power": [R(T(), 2.0)],
    "float_power_": [R(D(), 2.0)],
    "clamp": [R(T(), 0.3, 0.7)],
    "clip": [R(T(), 0.3, 0.7)],
    "clamp_min": [R(T(), 0.3)],
    "clamp_max": [R(T(), 0.7)],
    # Shapes, views and indexing.
    "softmax": [R(T(), 1)],
    "softmin": [R(T(), 1)],
    "log_softmax": [R(T(), 1)],
    "threshold": [R(T(), 0.5, 0.0)],
    "repeat": [R(T(), (2, 1))],
    "tile": [R(T(), (2, 1))],
    "expand": [R(T(), (2, 3, 4))],
    "unflatten": [R(T(), 1, (2, 2))],
    "as_strided": [R(T(), (2, 2), (1, 2))],
    "view_as_complex": [R(T(3, 2))],
    "take_along_dim": [R(T(), L(4, 3, 2), 1)],
    "split_with_sizes": [R(T(), [1, 2])],
    "unsafe_split_with_sizes": [R(T(), [1, 2])],
    "split_with_sizes_copy": [R(T(), [1, 2])],
    "dsplit": [R(T(2, 4, 6), 2)],
    "new_full": [R(T(), (2, 2), 0.5)],
    "diagonal_scatter": [R(T(), T(3))],
    "as_strided_scatter": [R(T(), T(2, 2), (2, 2), (1, 2))],
    "embedding_renorm_": [R(T(10, 4), L(10, 3), 1.0, 2.0)],
    "index_reduce": [R(T(), 0, L(3, 2), T(2, 4), "prod")],
    "select_scatter": [R(T(), T(4), 0, 0)],
    "matrix_power": [R(SQ, 2)],
    "householder_product": [R(T(4, 3), T(3))],
    "solve_triangular": [R(SQ, SQ, upper=True)],
    "tensorinv": [R(SQ, 1)],
    "tensorsolve": [R(SQ, T(4))],
    "cross": [R(T(4, 3), T(4, 3))],
    "renorm": [R(T(), 2.0, 0, 1.0)],
    "einsum": [R("ij,jk->ik", T(3, 4), T(4, 5))],
    "tensordot": [R(T(3, 4), T(4, 5), 1)],
    "multi_dot": [R([T(3, 4), T(4, 5)])],
    "stft": [R(T(16), 4, return_complex=True)],
    "polygamma": [R(1, T())],
    "apply_": [R(T(), lambda value: value + 1.0)],
    "map_": [R(T(), T(), lambda a, b: a + b)],
    "map2_": [R(T(), T(), T(), lambda a, b, c: a + b + c)],
    # Dropout-like ops are probed in training mode, the mode in which backward happens.
    "dropout": [R(T(), 0.5, True)],
    "native_dropout": [R(T(), 0.5, True)],
    "alpha_dropout": [R(T(), 0.5, True)],
    "feature_dropout": [R(T(2, 4, 6, 6), 0.5, True)],
    "feature_alpha_dropout": [R(T(2, 4, 6, 6), 0.5, True)],
    "dropout1d": [R(T(2, 4, 6), 0.5, True)],
    "dropout2d": [R(T(2, 4, 6, 6), 0.5, True)],
    "dropout3d": [R(T(2, 4, 4, 4, 4), 0.5, True)],
    "rrelu": [R(T(), 0.125, 1.0 / 3.0, True)],
    # Layers.
    "linear": [R(T(2, 4), T(3, 4), T(3))],
    "bilinear": [R(T(2, 4), T(2, 5), T(3, 4, 5), T(3))],
    "conv1d": [R(T(2, 4, 6), T(3, 4, 3), T(3))],
    "conv2d": [R(T(2, 4, 6, 6), T(3, 4, 3, 3), T(3))],
    "conv3d": [R(T(2, 4, 4, 4, 4), T(3, 4, 3, 3, 3), T(3))],
    "conv_transpose1d": [R(T(2, 4, 6), T(4, 3, 3), T(3))],
    "conv_transpose2d": [R(T(2, 4, 6, 6), T(4, 3, 3, 3), T(3))],
    "conv_transpose3d": [R(T(2, 4, 4, 4, 4), T(4, 3, 3, 3, 3), T(3))],
    "conv_tbc": [R(T(6, 2, 4), T(3, 4, 5), T(5))],
    "convolution": [
        R(T(2, 4, 6, 6), T(3, 4, 3, 3), T(3), (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    ],
    "prelu": [R(T(2, 4), T(1))],
    "embedding": [R(T(10, 4), L(10, 2, 3))],
    "torch.nn.functional.embedding": [R(L(10, 2, 3), T(10, 4))],
    "torch.nn.functional.embedding_bag": [R(L(10, 2, 3), T(10, 4))],
    "one_hot": [R(L(4, 3))],
    # Normalisation.
    "batch_norm": [R(T(2, 4, 5), T(4), T(4), BUF(4), BUF(4), True, 0.1, 1e-5, False)],
    "torch.nn.functional.batch_norm": [R(T(2, 4, 5), BUF(4), BUF(4), T(4), T(4), True)],
    "native_batch_norm": [R(T(2, 4, 5), T(4), T(4), BUF(4), BUF(4), True, 0.1, 1e-5)],
    "instance_norm": [R(T(2, 4, 5), T(4), T(4), None, None, True, 0.1, 1e-5, False)],
    "torch.nn.functional.instance_norm": [R(T(2, 4, 5), None, None, T(4), T(4))],
    "layer_norm": [R(T(2, 4), (4,), T(4), T(4))],
    "native_layer_norm": [R(T(2, 4), (4,), T(4), T(4), 1e-5)],
    "group_norm": [R(T(2, 4, 5), 2, T(4), T(4))],
    "native_group_norm": [R(T(2, 4, 5), T(4), T(4), 2, 4, 5, 2, 1e-5)],
    "rms_norm": [R(T(2, 4), (4,), T(4))],
    "local_response_norm": [R(T(2, 4, 5), 2)],
    # Pooling and resampling.
    "max_pool1d": [R(T(2, 4, 6), 2)],
    "max_pool2d": [R(T(2, 4, 6, 6), 2)],
    "max_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "max_pool1d_with_indices": [R(T(2, 4, 6), 2)],
    "max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2)],
    "max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2)],
    "avg_pool1d": [R(T(2, 4, 6), 2)],
    "avg_pool2d": [R(T(2, 4, 6, 6), 2)],
    "avg_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_avg_pool1d": [R(T(2, 4, 6), 2)],
    "adaptive_avg_pool2d": [R(T(2, 4, 6, 6), 2)],
    "adaptive_avg_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_max_pool1d": [R(T(2, 4, 6), 2)],
    "adaptive_max_pool2d": [R(T(2, 4, 6, 6), 2)],
    "adaptive_max_pool3d": [R(T(2, 4, 4, 4, 4), 2)],
    "adaptive_max_pool1d_with_indices": [R(T(2, 4, 6), 2)],
    "adaptive_max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2)],
    "adaptive_max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2)],
    "lp_pool1d": [R(T(2, 4, 6), 2.0, 2)],
    "lp_pool2d": [R(T(2, 4, 6, 6), 2.0, 2)],
    "lp_pool3d": [R(T(2, 4, 4, 4, 4), 2.0, 2)],
    "fractional_max_pool2d": [R(T(2, 4, 6, 6), 2, output_size=3)],
    "fractional_max_pool3d": [R(T(2, 4, 4, 4, 4), 2, output_size=2)],
    "fractional_max_pool2d_with_indices": [R(T(2, 4, 6, 6), 2, output_size=3)],
    "fractional_max_pool3d_with_indices": [R(T(2, 4, 4, 4, 4), 2, output_size=2)],
    "max_unpool1d": [R(T(2, 4, 3), L(6, 2, 4, 3), 2)],
    "max_unpool2d": [R(T(2, 4, 3, 3), L(36, 2, 4, 3, 3), 2)],
    "max_unpool3d": [R(T(2, 4, 2, 2, 2), L(64, 2, 4, 2, 2, 2), 2)],
    "pixel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "pixel_unshuffle": [R(T(2, 4, 6, 6), 2)],
    "channel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "native_channel_shuffle": [R(T(2, 4, 6, 6), 2)],
    "pad": [R(T(), (1, 1))],
    "constant_pad_nd": [R(T(), (1, 1))],
    "interpolate": [R(T(2, 4, 6), scale_factor=2.0)],
    "upsample": [R(T(2, 4, 6), scale_factor=2.0)],
    "upsample_nearest": [R(T(2, 4, 6, 6), scale_factor=2.0)],
    "upsample_bilinear": [R(T(2, 4, 6, 6), scale_factor=2.0)],
    "grid_sample": [R(T(2, 4, 6, 6), T(2, 3, 3, 2))],
    "grid_sampler": [R(T(2, 4, 6, 6), T(2, 3, 3, 2), 0, 0, False)],
    "grid_sampler_2d": [R(T(2, 4, 6, 6), T(2, 3, 3, 2), 0, 0, False)],
    "affine_grid": [R(T(2, 2, 3), (2, 4, 6, 6))],
    "affine_grid_generator": [R(T(2, 2, 3), (2, 4, 6, 6), False)],
    "fold": [R(T(2, 4, 9), (4, 4), 2)],
    "torch.nn.functional.unfold": [R(T(2, 4, 6, 6), 2)],
    # Losses.
    "cross_entropy": [R(T(2, 4), L(4, 2))],
    "nll_loss": [R(T(2, 4), L(4, 2))],
    "multi_margin_loss": [R(T(2, 4), L(4, 2))],
    "multilabel_margin_loss": [R(T(2, 4), L(4, 2, 4))],
    "cosine_embedding_loss": [R(T(2, 4), T(2, 4), BUF(2))],
    "ctc_loss": [R(T(5, 2, 4), L(4, 2, 3, low=1), (5, 5), (3, 3))],
    "linear_cross_entropy": [R(T(2, 4), T(5, 4), L(5, 2))],
    "poisson_nll_loss": [R(T(), T(), True, False, 1e-8, 1)],
}

# Calls without tensor arguments used to recognise factory functions.
FACTORY_RECIPES: list[Recipe] = [
    R(3),
    R(3, 4),
    R((3, 4)),
    R([0.5, 0.25]),
    R([[1, 2], [3, 4]]),
    R(0, 5),
    R(0.0, 1.0, 5),
    R(5, (3,)),
    R(0, 5, (3,)),
    R((3, 4), 0.5),
    R((2, 2), (2, 1)),
    R((3, 4), (1, 0)),
    R(0.0, 1.0, (3,)),
    R([[0, 1], [1, 0]], [1.0, 2.0]),
    R([0, 1, 2], [0, 1], [1.0, 2.0]),
    R(bytearray(16), dtype=torch.float32),
]
LIKE_RECIPES: list[Recipe] = [R(T()), R(T(), 0.5), R(T(), 5)]

# Methods never called while probing: they run backward or install hooks.
SKIPPED_METHODS = frozenset({"backward", "register_hook", "register_post_accumulate_grad_hook"})

# --------------------------------------------------------------------------------------------
# Tensor and autograd-graph helpers
# --------------------------------------------------------------------------------------------


def iter_tensors(obj: Any) -> Iterator[torch.Tensor]:
    """Yield the tensors in ``obj``, looking inside (named) tuples and lists."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for item in obj:
            yield from iter_tensors(item)


def storage_key(tensor: torch.Tensor) -> int | None:
    """Address of the tensor's storage, or None when it has no (non-empty) dense storage."""
    try:
        storage = tensor.untyped_storage()
        return storage.data_ptr() if storage.nbytes() else None
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def shares_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True if the two tensors alias the same storage."""
    key = storage_key(a)
    return key is not None and key == storage_key(b)


def graph_nodes(roots: Iterable[Any], stop: set[Any]) -> Iterator[Any]:
    """Autograd nodes reachable from ``roots``, not entering the nodes in ``stop``."""
    seen: set[Any] = set()
    stack = [node for node in roots if node is not None]
    while stack:
        node = stack.pop()
        if node in stop or node in seen:
            continue
        seen.add(node)
        yield node
        stack.extend(child for child, _ in node.next_functions if child is not None)


def saved_tensors(node: Any) -> Iterator[tuple[str, torch.Tensor]]:
    """(attribute name, tensor) for every tensor an autograd node saved for backward."""
    for attr in dir(node):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(node, attr)
        except (RuntimeError, AttributeError):
            continue
        for tensor in iter_tensors(value):
            yield attr, tensor
    if hasattr(node, "saved_tensors"):  # custom autograd.Function nodes
        try:
            for tensor in iter_tensors(node.saved_tensors):
                yield "saved_tensors", tensor
        except RuntimeError:
            pass


def classify_saves(
    outs: list[torch.Tensor], stop: set[Any], inputs: list[tuple[str, torch.Tensor]]
) -> set[str]:
    """Names of the inputs, and "result", that the graph behind ``outs`` saved.

    A saved tensor counts as an input (or the result) when it shares that tensor's storage:
    such a tensor shares its version counter too, so writing it in place breaks backward.
    Saved copies (e.g. the original ``self`` cloned by an in-place op) are not hazards.
    When input and result are the same storage (in-place ops), the attribute name decides.
    """
    input_keys = [(name, storage_key(tensor)) for name, tensor in inputs]
    result_keys = {storage_key(tensor) for tensor in outs} - {None}
    found: set[str] = set()
    for node in graph_nodes((tensor.grad_fn for tensor in outs), stop):
        for attr, tensor in saved_tensors(node):
            key = storage_key(tensor)
            if key is None:
                continue
            hits = {name for name, input_key in input_keys if input_key == key}
            if key in result_keys and (not hits or "result" in attr):
                found.add("result")
            else:
                found |= hits
    return found


def was_written(tensor: torch.Tensor, version: int, before: torch.Tensor) -> bool:
    """True if ``tensor`` was modified in place since ``version`` / ``before`` were taken."""
    if tensor._version != version or tensor.shape != before.shape:
        return True
    try:
        return not torch.equal(tensor.detach(), before)
    except RuntimeError:
        return True


# --------------------------------------------------------------------------------------------
# Parameter names
# --------------------------------------------------------------------------------------------


def python_params(fn: Callable[..., Any]) -> list[str] | None:
    """Positional parameter names from ``inspect.signature`` (``*name`` for varargs)."""
    # F.max_pool2d & co. dispatch on ``return_indices``; read the full signature.
    with contextlib.suppress(KeyError, TypeError):
        fn = torch._jit_internal.boolean_dispatched[fn]["if_true"]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind is param.VAR_POSITIONAL:
            names.append("*" + param.name)
    if names in (["*args"], []) and "kwargs" in signature.parameters:
        return None  # an opaque (*args, **kwargs) wrapper
    return names


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fits(value: Any, typ: Any) -> bool:
    """Whether a Python value can bind to an aten schema argument type."""
    kind = typ.kind()
    if kind == "OptionalType":
        return value is None or _fits(value, typ.getElementType())
    if kind == "TensorType":
        return isinstance(value, torch.Tensor)
    if kind == "ListType":
        element = typ.getElementType()
        if isinstance(value, (list, tuple)):
            return all(_fits(item, element) for item in value)
        return element.kind() in ("IntType", "SymIntType") and _is_int(value)
    if kind in ("IntType", "SymIntType"):
        return _is_int(value) or isinstance(value, torch.dtype)
    if kind in ("FloatType", "SymFloatType"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "NumberType":
        return isinstance(value, (int, float, complex))
    if kind == "BoolType":
        return isinstance(value, bool)
    if kind == "StringType":
        return isinstance(value, str)
    return False


def _positional(schema: Any, receiver: bool) -> list[Any]:
    """Positional schema arguments; for a method call ``self`` (the receiver) comes first."""
    positional = [arg for arg in schema.arguments if not arg.kwarg_only]
    if receiver:
        positional.sort(key=lambda arg: arg.name != "self")
    return positional


def _schema_fits(
    schema: Any, args: tuple[Any, ...], kwargs: dict[str, Any], receiver: bool = False
) -> bool:
    positional = _positional(schema, receiver)
    if len(args) > len(positional):
        return False
    if not all(_fits(value, arg.type) for value, arg in zip(args, positional, strict=False)):
        return False
    by_name = {arg.name: arg for arg in schema.arguments}
    for key, value in kwargs.items():
        arg = by_name.get("self" if key == "input" else key)
        if arg is None or not _fits(value, arg.type):
            return False
    return all(arg.has_default_value() or arg.name in kwargs for arg in positional[len(args) :])


def aten_schemas(aten_name: str) -> list[Any] | None:
    """Schemas of the non-``out`` overloads of ``aten::<aten_name>``, or None if no such op."""
    packet = None if aten_name.startswith("__") else getattr(torch.ops.aten, aten_name, None)
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return None
    schemas = [getattr(packet, overload)._schema for overload in packet.overloads()]
    return [s for s in schemas if not any(arg.is_out for arg in s.arguments)]


def schema_params(
    aten_name: str, args: tuple[Any, ...], kwargs: dict[str, Any], receiver: bool = False
) -> list[str] | None:
    """Positional parameter names of the aten overload that the given arguments bind to."""
    schemas = aten_schemas(aten_name)
    if not schemas:
        return None
    chosen = next((s for s in schemas if _schema_fits(s, args, kwargs, receiver)), None)
    if chosen is None:
        tensor_first = (
            s for s in schemas if s.arguments and s.arguments[0].type.kind() == "TensorType"
        )
        chosen = next(tensor_first, None)
    if chosen is None:
        return None
    return [arg.name for arg in _positional(chosen, receiver)]


def operator_params(name: str) -> list[str] | None:
    """Parameter names for a C-implemented operator dunder, from the ``operator`` module."""
    if not (name.startswith("__") and name.endswith("__")):
        return None
    base = name if hasattr(operator, name) else "__" + name[3:]
    try:
        names = list(inspect.signature(getattr(operator, base)).parameters)
    except (AttributeError, TypeError, ValueError):
        return None
    rename = {"a": "self", "b": "other", "c": "value"}
    return [rename.get(param, param) for param in names]


def param_name(params: list[str], index: int) -> str:
    """Name of the parameter receiving positional argument ``index``."""
    for position, name in enumerate(params):
        if name.startswith("*") or position == index:
            return name
    return f"arg{index}"


# --------------------------------------------------------------------------------------------
# Probing calls
# --------------------------------------------------------------------------------------------

ParamsOf = Callable[[tuple[Any, ...], dict[str, Any]], list[str]]


@dataclass
class Outcome:
    """What one successful call revealed."""

    params: list[str]
    saves: list[str]
    view: bool
    inplace: bool
    differentiable: bool
    recipe: Recipe = field(repr=False)


def probe_call(
    fn: Callable[..., Any], recipe: Recipe, params_of: ParamsOf, grad: bool = True
) -> Outcome | None:
    """Call ``fn`` once with freshly built arguments and inspect what it did."""
    torch.manual_seed(0)
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
    return Outcome(params, saves, view, wrote, differentiable, recipe)


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


def inplace_param(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The ``inplace`` parameter of a Python function or constructor, with its position."""
    params = python_params(fn) or []
    if "inplace" not in params:
        return None
    return {"name": "inplace", "index": params.index("inplace")}


# --------------------------------------------------------------------------------------------
# Collectors
# --------------------------------------------------------------------------------------------

# (namespace, module, modules its functions may be defined in)
NAMESPACES: list[tuple[str, Any, frozenset[str]]] = [
    ("torch", torch, frozenset()),
    ("torch.nn.functional", F, frozenset({"torch", "torch._C._nn", "torch.nn.functional"})),
    ("torch.special", torch.special, frozenset({"torch._C._special"})),
    ("torch.linalg", torch.linalg, frozenset({"torch._C._linalg"})),
    ("torch.fft", torch.fft, frozenset({"torch._C._fft"})),
]


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


def namespace_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    """(qualified name, function) for every function candidate."""
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
            yield f"{prefix}.{name}", getattr(module, name)


def _params_resolver(fn: Callable[..., Any], method: str | None = None) -> ParamsOf:
    """Parameter names from the Python signature, else from the aten schema of the binding.

    Builtins are named after their aten op (``F.logsigmoid.__name__ == "log_sigmoid"``).
    Function bindings expose aten's ``self`` as ``input``; method bindings take ``self`` as
    the receiver, so it is listed first.
    """
    static = python_params(fn)
    aten_name = getattr(fn, "__name__", "")

    def resolve(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
        if static is not None:
            return static
        if method is None:
            names = schema_params(aten_name, args, kwargs) or []
            return ["input" if name == "self" else name for name in names]
        names = schema_params(aten_name, args, kwargs, receiver=True)
        return names or operator_params(method) or ["self"]

    return resolve


def collect_functions() -> dict[str, dict[str, Any]]:
    """Probe every function candidate in the torch namespaces."""
    table: dict[str, dict[str, Any]] = {}
    for qualname, fn in namespace_functions():
        params_of = _params_resolver(fn)
        outcome = probe(fn, recipes_for(qualname), params_of)
        if outcome is None:
            continue
        entry: dict[str, Any] = {
            "params": outcome.params,
            "saves": outcome.saves,
            "view": outcome.view,
            "inplace": outcome.inplace,
            "inplace_param": inplace_param(fn),
        }
        if entry["inplace_param"] is not None:
            args, kwargs = outcome.recipe
            inplace_outcome = probe_call(fn, (args, {**kwargs, "inplace": True}), params_of)
            if inplace_outcome is None:
                continue
            entry["saves"] = inplace_outcome.saves
            entry["saves_out_of_place"] = outcome.saves
        table[qualname] = entry
    return table


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


def _tensor_first(recipe: Recipe) -> bool:
    """Whether the recipe can be a method call (its first argument is a tensor)."""
    return bool(recipe[0]) and isinstance(recipe[0][0], Spec)


def collect_methods(names: list[str]) -> dict[str, dict[str, Any]]:
    """Probe Tensor methods (``self`` is the first recipe argument)."""
    table: dict[str, dict[str, Any]] = {}
    for name in names:
        fn = getattr(torch.Tensor, name)
        recipes = list(filter(_tensor_first, recipes_for(name)))
        outcome = probe(fn, recipes, _params_resolver(fn, name))
        if outcome is None:
            continue
        table[name] = {
            "params": outcome.params,
            "saves": outcome.saves,
            "view": outcome.view,
            "inplace": outcome.inplace,
        }
    return table


def view_properties() -> list[str]:
    """Tensor properties (``T``, ``mT``, ``real``, ``data`` ...) that alias ``self``."""
    found = []
    for name in dir(torch.Tensor):
        if name.startswith("_") or not inspect.isdatadescriptor(
            inspect.getattr_static(torch.Tensor, name)
        ):
            continue
        for spec in (T(), C(), T(2, 3, 4)):
            torch.manual_seed(0)
            tensor = _make_tensor(spec, grad=True)
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
                found.append(name)
                break
    return found


def verify_inplace_methods() -> tuple[list[str], list[str]]:
    """Single-underscore Tensor methods that write ``self``, and those that could not be run.

    A method is kept unless some call succeeded and no successful call bumped
    ``self._version`` or changed its data (``apply_`` and ``map_`` write without a bump).
    """
    kept, unverified = [], []
    for name in sorted(dir(torch.Tensor)):
        if name.startswith("_") or not name.endswith("_") or name.endswith("__"):
            continue
        fn = getattr(torch.Tensor, name)
        ran = wrote = False
        for recipe in filter(_tensor_first, recipes_for(name)):
            outcome = probe_call(fn, recipe, lambda args, kwargs: [], grad=False)
            if outcome is None:
                continue
            ran = True
            if outcome.inplace:
                wrote = True
                break
        if wrote or not ran:
            kept.append(name)
        if not ran:
            unverified.append(name)
    return kept, unverified


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
        s.returns and s.returns[0].type.kind() == "TensorType" and _schema_fits(s, args, kwargs)
        for s in schemas
    )


def collect_factories() -> list[str]:
    """``torch.*`` functions that build a new tensor with no autograd history.

    Either from Python data / sizes alone, or (``*_like``) from a tensor that requires grad.
    """
    found = []
    for name in torch_function_names():
        fn = getattr(torch, name)
        recipes = LIKE_RECIPES if name.endswith("_like") else FACTORY_RECIPES
        for args, kwargs in recipes:
            torch.manual_seed(0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = fn(*build(args, True), **build(kwargs, True))
            except Exception:
                continue
            if _plain_tensor_result(value) and (
                name.endswith("_like") or _builds_from_values(fn, args, kwargs)
            ):
                found.append(f"torch.{name}")
                break
    return found


# --------------------------------------------------------------------------------------------
# Modules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModuleRecipe:
    """Constructor arguments and forward inputs for one module probe."""

    args: tuple[Any, ...]
    inputs: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


def M(args: tuple[Any, ...], *inputs: Any, **kwargs: Any) -> ModuleRecipe:
    """Shorthand for a ModuleRecipe."""
    return ModuleRecipe(args, inputs, kwargs)


MODULE_CTOR_ARGS: list[tuple[Any, ...]] = [(), (4,), (4, 4), (4, 4, 3), (2,), (2, 2), (0.5, 0.0)]
MODULE_INPUTS: list[tuple[Any, ...]] = [
    (T(2, 4),),
    (T(2, 4, 6),),
    (T(2, 4, 6, 6),),
    (T(2, 4, 4, 4, 4),),
    (T(2, 4), T(2, 4)),
]
LOSS_INPUTS: list[tuple[Any, ...]] = [
    (T(2, 4), BUF(2, 4)),
    (T(2, 4), BUF(2, 4), BUF(2, 4)),
    (T(2, 4), T(2, 4), BUF(2)),
    (T(2, 4), L(4, 2)),
    (T(2, 4), L(4, 2, 4)),
]
SEQ = T(3, 2, 4)  # (sequence, batch, features)
MODULE_SPECIFIC: dict[str, list[ModuleRecipe]] = {
    "RNN": [M((4, 5), SEQ)],
    "LSTM": [M((4, 5), SEQ)],
    "GRU": [M((4, 5), SEQ)],
    "MultiheadAttention": [M((4, 2), SEQ, T(3, 2, 4), T(3, 2, 4))],
    "Transformer": [
        M(
            (),
            SEQ,
            T(3, 2, 4),
            d_model=4,
            nhead=2,
            num_encoder_layers=1,
            num_decoder_layers=1,
            dim_feedforward=8,
        )
    ],
    "TransformerEncoderLayer": [M((4, 2, 8), SEQ)],
    "TransformerDecoderLayer": [M((4, 2, 8), SEQ, T(3, 2, 4))],
    "TransformerEncoder": [M((Make(nn.TransformerEncoderLayer, (4, 2, 8)), 1), SEQ)],
    "TransformerDecoder": [M((Make(nn.TransformerDecoderLayer, (4, 2, 8)), 1), SEQ, T(3, 2, 4))],
    "Embedding": [M((10, 4), L(10, 2, 3))],
    "EmbeddingBag": [M((10, 4), L(10, 2, 3))],
    "Bilinear": [M((4, 5, 3), T(2, 4), T(2, 5))],
    "Unflatten": [M((1, (2, 2)), T(2, 4))],
    "Fold": [M(((4, 4), 2), T(2, 4, 9))],
    "Upsample": [M((), T(2, 4, 6), scale_factor=2.0)],
    "UpsamplingNearest2d": [M((), T(2, 4, 6, 6), scale_factor=2.0)],
    "UpsamplingBilinear2d": [M((), T(2, 4, 6, 6), scale_factor=2.0)],
    "FractionalMaxPool2d": [M((2,), T(2, 4, 6, 6), output_size=3)],
    "FractionalMaxPool3d": [M((2,), T(2, 4, 4, 4, 4), output_size=2)],
    "MaxUnpool1d": [M((2,), T(2, 4, 3), L(6, 2, 4, 3))],
    "MaxUnpool2d": [M((2,), T(2, 4, 3, 3), L(36, 2, 4, 3, 3))],
    "MaxUnpool3d": [M((2,), T(2, 4, 2, 2, 2), L(64, 2, 4, 2, 2, 2))],
    "AdaptiveLogSoftmaxWithLoss": [M((4, 10, [5]), T(2, 4), L(10, 2))],
    "CTCLoss": [M((), T(5, 2, 4), L(4, 2, 3, low=1), (5, 5), (3, 3))],
    "CrossEntropyLoss": [M((), T(2, 4), L(4, 2))],
    "LinearCrossEntropyLoss": [M((4, 4), T(2, 4), L(4, 2))],
}
CONTAINER_MODULES = frozenset(
    {
        "Module",
        "Container",
        "Sequential",
        "ModuleList",
        "ModuleDict",
        "ParameterList",
        "ParameterDict",
        "DataParallel",
    }
)


def module_recipes(name: str) -> list[ModuleRecipe]:
    """Specific recipes, or every generic constructor with every generic input."""
    if name in MODULE_SPECIFIC:
        return MODULE_SPECIFIC[name]
    inputs = LOSS_INPUTS if "Loss" in name else MODULE_INPUTS
    return [ModuleRecipe(args, example) for args in MODULE_CTOR_ARGS for example in inputs]


@dataclass
class ModuleOutcome:
    """What one successful forward call revealed."""

    saves_input: bool
    saves_result: bool
    has_parameters: bool


def probe_module(
    cls: type[nn.Module], recipe: ModuleRecipe, inplace: bool, train: bool
) -> ModuleOutcome | None:
    """Build the module, run forward once and inspect the graph behind its outputs."""
    kwargs = {**recipe.kwargs, "inplace": True} if inplace else recipe.kwargs
    torch.manual_seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = cls(*build(recipe.args, True), **kwargs)
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
    return ModuleOutcome(
        saves_input="input" in saves,
        saves_result="result" in saves,
        has_parameters=any(True for _ in module.parameters()),
    )


def collect_modules() -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Probe every ``torch.nn`` module class (training mode; eval mode only as a fallback)."""
    table: dict[str, dict[str, Any]] = {}
    eval_only = []
    for name in sorted(dir(nn)):
        cls = getattr(nn, name)
        if name.startswith("_") or name in CONTAINER_MODULES:
            continue
        if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
            continue
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
            continue
        if not train:
            eval_only.append(f"torch.nn.{name}")
        recipe, outcome = found
        entry: dict[str, Any] = {
            "saves_input": outcome.saves_input,
            "saves_result": outcome.saves_result,
            "inplace_param": inplace_param(cls.__init__),
            "has_parameters": outcome.has_parameters,
        }
        if entry["inplace_param"] is not None:
            entry["inplace_param"]["index"] -= 1  # drop ``self``
            inplace_outcome = probe_module(cls, recipe, True, train)
            if inplace_outcome is None:
                continue
            entry["saves_input"] = inplace_outcome.saves_input
            entry["saves_result"] = inplace_outcome.saves_result
            entry["saves_input_out_of_place"] = outcome.saves_input
            entry["saves_result_out_of_place"] = outcome.saves_result
        table[f"torch.nn.{name}"] = entry
    return table, eval_only


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def generate(log: Callable[[str], None] = lambda message: None) -> dict[str, Any]:
    """Probe torch and return the whole table."""
    torch.manual_seed(0)
    functions = collect_functions()
    log(f"functions: {len(functions)}")
    methods = collect_methods(method_names())
    log(f"methods: {len(methods)}")
    inplace_methods, unverified = verify_inplace_methods()
    log(f"inplace methods: {len(inplace_methods)} (not runnable, kept by name: {unverified})")
    modules, eval_only = collect_modules()
    log(f"modules: {len(modules)} (probed in eval mode: {eval_only})")
    factories = collect_factories()
    log(f"factories: {len(factories)}")
    view_methods = {
        name for name, entry in methods.items() if entry["view"] and not name.startswith("__")
    }
    view_methods.update(view_properties())
    return {
        "torch_version": torch.__version__.split("+")[0],
        "functions": functions,
        "methods": methods,
        "modules": modules,
        "inplace_methods": inplace_methods,
        "view_methods": sorted(view_methods),
        "view_functions": sorted(name for name, entry in functions.items() if entry["view"]),
        "factory_functions": factories,
    }


def render(table: dict[str, Any]) -> str:
    """Serialise the table the way it is checked in."""
    return json.dumps(table, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="JSON file to write")
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the file differs"
    )
    parser.add_argument("--verbose", action="store_true", help="print progress to stderr")
    options = parser.parse_args(argv)

    def log(message: str) -> None:
        if options.verbose:
            print(message, file=sys.stderr)

    text = render(generate(log))
    if options.check:
        current = options.output.read_text() if options.output.exists() else None
        if current != text:
            print(f"{options.output} is out of date; run tools/gen_torch_ops.py", file=sys.stderr)
            return 1
        return 0
    options.output.parent.mkdir(parents=True, exist_ok=True)
    options.output.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
