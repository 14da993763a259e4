"""State that outlives one run: put models, gradients and optimizers back between runs.

The checker runs a subject several times and compares the runs. A model built once and used
by every run (at import time in a helper module, or already built and closed over by a step
given to the Python API or the pytest fixture) would otherwise carry gradients, weights
changed by ``optimizer.step()`` and optimizer moments from one run into the next, and a
harmless site's twin would "differ". ``StateGuard`` finds such state before a run and restores
it after: tensors, ``nn.Module`` parameters and buffers (values and ``.grad``), optimizers and
learning-rate schedulers (their ``state_dict``).

Where it looks (a bounded walk, not the whole heap): the globals of user modules that are not
the subject's own file (that file is executed afresh by each run) and of installed libraries,
and for a callable subject its closure, defaults, bound ``self`` and the globals its code
names. An object first seen after a run (a helper module the run imported) is captured
before the next run and restored from then on, so the runs to compare start alike.
Limits: a parameter replaced by a new object during a run, state held in C extensions, files
written by a run and attributes that are not tensors (``model.training``, counters) are not
put back.
"""

from __future__ import annotations

import copy
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

import torch

from inplace_lint.dynamic import sites

__all__ = ["StateGuard"]

_DEPTH = 3
_LIBRARY_DIRS = ("site-packages", "dist-packages")


#: a module's ``__file__`` -> its absolute path if it is a user file outside libraries
_USER_FILES: dict[str, str | None] = {}


def _user_path(file: str) -> str | None:
    if file not in _USER_FILES:
        path = os.path.abspath(file)
        library = any(part in _LIBRARY_DIRS for part in path.split(os.sep))
        user = file.endswith(".py") and not library and sites.is_user_file(path)
        _USER_FILES[file] = path if user else None
    return _USER_FILES[file]


def _user_modules(own: str | None) -> Iterator[types.ModuleType]:
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        path = _user_path(file)
        if path is not None and path != own:
            yield module


def _code_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


def _callable_roots(target: Any) -> Iterator[Any]:
    """What a callable can reach: closure cells, defaults, ``self`` and named globals."""
    function = getattr(target, "__func__", target)
    owner = getattr(target, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        yield owner
    if not isinstance(function, types.FunctionType):
        if not isinstance(target, types.BuiltinFunctionType):
            yield target  # a callable object: its attributes
        return
    for cell in function.__closure__ or ():
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            continue
    yield from function.__defaults__ or ()
    yield from (function.__kwdefaults__ or {}).values()
    namespace = function.__globals__
    for name in set(_code_names(function.__code__)):
        if name in namespace:
            yield namespace[name]


class StateGuard:
    """Capture reachable training state before a run; restore it after."""

    def __init__(self, own: str | None = None, target: Any = None) -> None:
        self.own = os.path.abspath(own) if own else None
        self.target = target
        self.tensors: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]] = {}
        self.stateful: dict[int, tuple[Any, dict[str, Any]]] = {}
        self.seen: set[int] = set()
        #: per user module already walked: the globals it held then, by id (kept alive, so
        #: an id is never reused for a new object while the guard lives)
        self.walked: dict[int, dict[int, Any]] = {}

    def capture(self) -> None:
        """Snapshot every reachable tensor, module and optimizer not captured yet.

        The first call walks everything; later ones (before each further run) walk only what
        is new since: modules a run imported, globals a run bound, and the callable's roots.
        A model appended to a container that was already walked is not seen (a limit)."""
        self.seen = set()
        roots: list[Any] = []
        for module in _user_modules(self.own):
            before = self.walked.setdefault(id(module), {})
            for value in list(vars(module).values()):
                if id(value) not in before:
                    before[id(value)] = value
                    roots.append(value)
        if self.target is not None and callable(self.target):
            roots.extend(_callable_roots(self.target))
        for root in roots:
            self._visit(root, 0)

    def restore(self) -> None:
        """Put every captured value, gradient and optimizer state back."""
        with torch.no_grad():
            # always copied back: a write through ``.data`` moves no version to tell by
            for tensor, value, grad in self.tensors.values():
                try:
                    if tensor.shape == value.shape and not tensor.is_inference():
                        tensor.copy_(value)
                    if tensor.is_leaf and (grad is not None or tensor.grad is not None):
                        tensor.grad = None if grad is None else grad.clone()
                except RuntimeError:
                    continue
        for thing, state in self.stateful.values():
            try:
                thing.load_state_dict(copy.deepcopy(state))
            except Exception:  # a scheduler or optimizer that cannot reload its own state
                continue

    # -- the walk

    def _visit(self, value: Any, depth: int) -> None:
        if id(value) in self.seen or depth > _DEPTH:
            return
        self.seen.add(id(value))
        if isinstance(value, torch.Tensor):
            self._tensor(value)
        elif isinstance(value, torch.nn.Module):
            for tensor in list(value.parameters()) + list(value.buffers()):
                self._tensor(tensor)
        elif isinstance(value, torch.optim.Optimizer | torch.optim.lr_scheduler.LRScheduler):
            self._stateful(value)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in list(value)[:256]:
                self._visit(item, depth + 1)
        elif isinstance(value, dict):
            for item in list(value.values())[:256]:
                self._visit(item, depth + 1)
        elif _plain_object(value):
            for item in list(vars(value).values())[:256]:
                self._visit(item, depth + 1)

    def _tensor(self, tensor: torch.Tensor) -> None:
        if id(tensor) in self.tensors or tensor.layout != torch.strided:
            return
        if tensor.device.type == "meta" or not isinstance(tensor, torch.Tensor):
            return
        grad = tensor.grad if tensor.is_leaf else None
        with torch.no_grad():
            value = tensor.detach().clone()
            kept = grad.detach().clone() if isinstance(grad, torch.Tensor) else None
        self.tensors[id(tensor)] = (tensor, value, kept)

    def _stateful(self, thing: Any) -> None:
        if id(thing) in self.stateful:
            return
        try:
            state = copy.deepcopy(thing.state_dict())
        except Exception:
            return
        self.stateful[id(thing)] = (thing, state)
        if isinstance(thing, torch.optim.Optimizer):
            for group in thing.param_groups:
                for param in group["params"]:
                    self._tensor(param)


def _plain_object(value: Any) -> bool:
    """An instance of a user class (a trainer, a config holder) whose attributes to walk."""
    if isinstance(value, type | types.ModuleType | types.FunctionType | types.MethodType):
        return False
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    if module == "builtins" or module.startswith(("torch", "numpy", "inplace_lint")):
        return False
    return hasattr(value, "__dict__")
