"""What the writes of a few lines did, as one run saw them: for pass C to tell a hazard from an
intended update, and to name it.

Pass C calls a statement harmful when its out-of-place twin computes something else. That
marks a stale read or a changed argument, but also every intended update that later code reads
on purpose: an EMA teacher's ``ema_param.data.mul_(alpha)``, a hand-written optimizer's moment
buffers, a mask a helper fills for its caller. One run records, for each line asked about:

- ``state``: a write reached the storage of a parameter or buffer of a module built or run so
  far, or of a leaf that requires grad (a hand-made parameter): an update of model state,
  which pass A (saved tensors) and the static rules judge, not pass C;
- ``graph``: the written values reached an autograd graph: the written tensor required grad,
  or an op that records a graph (grad mode on, an input requiring grad) read them, directly or
  through tensors computed from them (the taint does not flow into model state). A write no
  graph ever reads is no autograd hazard, whatever its twin computes;
- ``overlap``: the op that wrote also read, through another tensor, bytes it wrote
  (``traj -= traj[:, :1]``);
- ``argument``: the write reached the storage of a tensor the enclosing function was called
  with (``sys.setprofile`` notes them at each call of the subject's functions);
- ``backward``: the write ran while autograd ran a custom ``backward``.

Storages are compared as pass A compares them (``passa._storage_key``); a taint lives as long
as its storage, so a freed storage's key that a new one reuses is not tainted.
"""

from __future__ import annotations

import inspect
import os
import sys
import weakref
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from types import FrameType
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from inplace_lint.dynamic import sites
from inplace_lint.dynamic.passa import (
    ModuleSites,
    _span,
    _storage_key,
    _written,
    track_modules,
)

__all__ = ["WriteFacts", "recording"]


class WriteFacts(TorchDispatchMode):
    """The facts above, for the lines of ``path`` asked about (``lines`` maps every line of
    an asked statement to the statement's line)."""

    def __init__(self, path: str, lines: dict[int, int]) -> None:
        super().__init__()
        self.path, self.lines = path, lines
        self.state: set[int] = set()
        self.graph: set[int] = set()
        self.overlap: set[int] = set()
        self.argument: set[int] = set()
        self.backward: set[int] = set()
        self.modules = ModuleSites()
        #: Modules that ran a forward (a deep copy is built without ``__init__``).
        self.ran: weakref.WeakSet[torch.nn.Module] = weakref.WeakSet()
        self.leaves: set[int] = set()  # storages of leaves that require grad, seen in ops
        #: storage address -> (the storage, weakly; asked lines whose values it holds)
        self.tainted: dict[int, tuple[weakref.ref[Any], set[int]]] = {}
        self.entries: dict[int, set[int]] = {}  # frame id -> storages it was called with
        self._cache: tuple[int, set[int]] | None = None

    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        """``sys.setprofile`` hook: note the tensors a function of ``path`` is called with."""
        if event == "call" and os.path.abspath(frame.f_code.co_filename) == self.path:
            self.entries[id(frame)] = _argument_addresses(frame)
        elif event == "return":
            self.entries.pop(id(frame), None)

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        kwargs = kwargs or {}
        inputs = list(_tensors((*args, *kwargs.values()), 2))
        for value in inputs:
            if value.requires_grad and value.is_leaf:
                self._note(self.leaves, value)
        carried = self._carried(inputs)
        in_backward = torch._C._current_autograd_node() is not None
        records = torch.is_grad_enabled() and any(v.requires_grad for v in inputs)
        if carried and records and not in_backward:
            self.graph |= carried
        written = _written(func, args, kwargs)
        if written:
            carried |= self._record(written, inputs, in_backward)
        out = func(*args, **kwargs)
        if carried:
            for tensor in (*written, *_tensors(out, 1)):
                if not self._is_state(tensor):
                    self._taint(tensor, carried)
        return out

    def _taint(self, tensor: torch.Tensor, lines: set[int]) -> None:
        address = _storage_key(tensor)
        if address is None:
            return
        entry = self.tainted.get(address)
        if entry is None or entry[0]() is None:
            entry = self.tainted[address] = (weakref.ref(tensor.untyped_storage()), set())
        entry[1].update(lines)

    def _carried(self, inputs: list[torch.Tensor]) -> set[int]:
        """The asked lines whose values ``inputs`` hold. A taint lives as long as its storage
        (torch keeps one Python object per storage): a freed address that a new tensor
        reuses is not tainted."""
        found: set[int] = set()
        for value in inputs:
            address = _storage_key(value)
            entry = self.tainted.get(address) if address is not None else None
            if entry is None:
                continue
            if entry[0]() is not None:
                found |= entry[1]
            else:
                del self.tainted[address]
        return found

    def _record(
        self, written: list[torch.Tensor], inputs: list[torch.Tensor], in_backward: bool
    ) -> set[int]:
        """The facts of one write; the asked line it belongs to (as a set: empty if none)."""
        frame = next(sites.user_frames(sys._getframe(2)), None)
        if frame is None or os.path.abspath(frame.f_code.co_filename) != self.path:
            return set()
        line = self.lines.get(sites.frame_site(frame).line)
        if line is None:
            return set()
        entry = self.entries.get(id(frame))
        if entry and any(_storage_key(t) in entry for t in written):
            self.argument.add(line)
        if in_backward:
            self.backward.add(line)
        if _overlapping(written, inputs):
            self.overlap.add(line)
        if any(self._is_state(t) for t in written):
            self.state.add(line)
        if torch.is_grad_enabled() and any(t.requires_grad for t in written):
            self.graph.add(line)
        return {line}

    def _note(self, found: set[int], tensor: torch.Tensor) -> None:
        address = _storage_key(tensor)
        if address is not None:
            found.add(address)

    def _is_state(self, tensor: torch.Tensor) -> bool:
        if tensor.requires_grad and tensor.is_leaf:
            return True
        address = _storage_key(tensor)
        return address is not None and (address in self.leaves or address in self._model())

    def _model(self) -> set[int]:
        """Storages of the parameters and buffers of every module built or run so far (kept
        until another module appears)."""
        modules = [*self.modules.built.keys(), *self.ran]
        if self._cache is not None and self._cache[0] == len(modules):
            return self._cache[1]
        found: set[int] = set()
        for module in modules:
            for tensor in (*module.parameters(), *module.buffers()):
                self._note(found, tensor)
        self._cache = (len(modules), found)
        return found


def _overlapping(written: list[torch.Tensor], inputs: list[torch.Tensor]) -> bool:
    """Whether an input of the op, other than a written tensor itself, addresses bytes of
    the memory a written tensor covers."""
    for tensor in written:
        address, span = _storage_key(tensor), _span(tensor)
        for value in inputs:
            if value is tensor or address is None or _storage_key(value) != address:
                continue
            other = _span(value)
            if other[0] < span[1] and span[0] < other[1]:
                return True
    return False


def _argument_addresses(frame: FrameType) -> set[int]:
    """Storages of the tensors among a frame's arguments, and two levels inside the lists,
    tuples and dicts among them (``*args`` included)."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    local = frame.f_locals
    found: set[int] = set()
    for name in code.co_varnames[:count]:
        for item in _tensors(local.get(name), 2):
            address = _storage_key(item)
            if address is not None:
                found.add(address)
    return found


def _tensors(value: object, depth: int) -> Iterator[torch.Tensor]:
    """Tensors in ``value`` and ``depth`` levels of lists, tuples and dicts (64 items each)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif depth > 0 and isinstance(value, list | tuple | dict):
        items = value.values() if isinstance(value, dict) else value
        for count, item in enumerate(items):
            if count >= 64:
                return
            yield from _tensors(item, depth - 1)


@contextmanager
def recording(facts: WriteFacts) -> Iterator[WriteFacts]:
    """``facts`` recorded over one run, with module construction and calls tracked."""
    with ExitStack() as stack:
        previous = sys.getprofile()
        sys.setprofile(facts.profile)
        stack.callback(sys.setprofile, previous)
        stack.enter_context(track_modules(facts.modules))
        hook = torch.nn.modules.module.register_module_forward_pre_hook(
            lambda module, _args: facts.ran.add(module)
        )
        stack.callback(hook.remove)
        stack.enter_context(facts)
        yield facts
