"""Placeholders for example arguments, built into fresh tensors on the probe device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

#: The device example tensors and modules are built on; see ``set_device``.
DEVICE = torch.device("cpu")


def set_device(name: str) -> None:
    """Build every later example tensor and module on ``name`` (``cpu``, ``cuda``, ...)."""
    global DEVICE
    DEVICE = torch.device(name)


def reseed() -> None:
    """``torch.manual_seed(0)`` for the probe device.

    On CPU only the CPU generator is seeded: ``torch.manual_seed`` also queues a lazy seed for
    each accelerator backend not yet initialised, formatting the caller's stack each time
    (milliseconds a call), which was three quarters of the generator's run on CPU.
    """
    if DEVICE.type == "cpu":
        torch.default_generator.manual_seed(0)
    else:
        torch.manual_seed(0)


def on_device(module: nn.Module) -> nn.Module:
    """Move a freshly built module to the probe device (nothing to do on CPU)."""
    return module if DEVICE.type == "cpu" else module.to(DEVICE)


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


def make_tensor(spec: Spec, grad: bool) -> torch.Tensor:
    shape = spec.shape
    if spec.kind == "long":
        tensor = torch.randint(spec.low, spec.high, shape, device=DEVICE)
    elif spec.kind == "bool":
        tensor = torch.rand(shape, device=DEVICE) > 0.5
    elif spec.kind == "complex":
        tensor = torch.complex(torch.rand(shape, device=DEVICE), torch.rand(shape, device=DEVICE))
    elif spec.kind == "square":
        tensor = torch.eye(shape[-1], device=DEVICE) * 2 + torch.rand(shape, device=DEVICE) * 0.1
    elif spec.kind == "spd":
        base = torch.rand(shape, device=DEVICE)
        tensor = base @ base.mT + torch.eye(shape[-1], device=DEVICE) * shape[-1]
    elif spec.kind == "double":
        tensor = torch.rand(shape, dtype=torch.float64, device=DEVICE) * 0.6 + 0.2
    else:
        tensor = torch.rand(shape, device=DEVICE) * 0.6 + 0.2
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
        return make_tensor(obj, grad)
    if isinstance(obj, Make):
        return on_device(obj.cls(*build(obj.args, grad)))
    if isinstance(obj, tuple):
        return tuple(build(item, grad) for item in obj)
    if isinstance(obj, list):
        return [build(item, grad) for item in obj]
    if isinstance(obj, dict):
        return {key: build(value, grad) for key, value in obj.items()}
    return obj
