"""The device ``confirm --device`` runs the subject on: checked once, then torch's default.

While ``on_device`` is active, every factory call without a ``device=`` (a model's
parameters, ``torch.randn`` inputs) lands on the device (``torch.set_default_device``), and
``onto_device`` moves what a build function returned there too (a model loaded on the CPU,
inputs made with ``torch.from_numpy``). A subject that puts itself on a device (``.cuda()``)
is left where it is when no device is asked for. The base run, pass A, every twin and the
``torch.fx`` route all run inside the same scope, so they are compared on one device.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

__all__ = ["DeviceError", "active", "lost_device", "on_device", "onto_device", "resolve"]

_ACTIVE: list[torch.device] = []


class DeviceError(Exception):
    """The device cannot be used here; the message says why, on one line."""


def resolve(name: str) -> torch.device:
    """The device called ``name`` after one allocation on it proved it usable."""
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError) as exc:
        raise DeviceError(f"--device {name}: not a torch device ({_first_line(exc)})") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        built = torch.version.cuda
        why = (
            f"torch {torch.__version__} is built without CUDA"
            if built is None
            else f"no CUDA device is visible (torch {torch.__version__}, CUDA {built})"
        )
        raise DeviceError(f"--device {name}: CUDA is not available: {why}")
    try:
        torch.zeros(1, device=device)
    except (RuntimeError, AssertionError, ValueError) as exc:
        raise DeviceError(f"--device {name}: not available: {_first_line(exc)}") from None
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


#: what torch says of a CUDA error after which the process can run nothing more on the GPU
_STICKY = ("device-side assert", "illegal memory access", "AcceleratorError")


def lost_device(exc: BaseException) -> bool:
    """``exc`` (or the error it reports, as a bad input's message does) is a CUDA error that
    leaves this process's CUDA context unusable: torch's ``AcceleratorError``, a device-side
    assert, an illegal memory access. Every later CUDA call fails the same way."""
    text = f"{type(exc).__name__}: {exc}"
    return any(mark in text for mark in _STICKY)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def active() -> torch.device | None:
    """The device asked for, inside ``on_device``; None otherwise."""
    return _ACTIVE[-1] if _ACTIVE else None


def _default_device() -> torch.device:
    getter = getattr(torch, "get_default_device", None)  # torch 2.3+
    if getter is not None:
        return torch.device(getter())
    return torch.empty(0).device


@contextmanager
def on_device(device: torch.device | None) -> Iterator[None]:
    """Make ``device`` torch's default device (and ``active()``) inside the block."""
    if device is None:
        yield
        return
    previous = _default_device()
    _ACTIVE.append(device)
    torch.set_default_device(device)
    try:
        yield
    finally:
        _ACTIVE.pop()
        torch.set_default_device(previous)


def onto_device(value: Any) -> Any:
    """``value`` (a module, tensors, or lists, tuples and dicts of them) on the active device.

    Modules move in place (they are the run's own copy); a leaf tensor stays a leaf with the
    same ``requires_grad``, so input gradients are still read from it.
    """
    device = active()
    if device is None:
        return value
    return _move(value, device)


def _move(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.nn.Module):
        return value.to(device)
    if isinstance(value, torch.Tensor):
        if value.device == device:
            return value
        if value.is_leaf:
            return value.detach().to(device).requires_grad_(value.requires_grad)
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_move(v, device) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(_move(v, device) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _move(v, device)) for k, v in value.items())
    return value
