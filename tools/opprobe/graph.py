"""Reading an autograd graph: the tensors it saved, storage aliasing and in-place writes."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import torch


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


def named_tensors(obj: Any, name: str) -> Iterator[tuple[str, torch.Tensor]]:
    """(path, tensor) for the tensors in ``obj``: ``hx``, ``hx[0]``, ``result[1][0]``."""
    if isinstance(obj, torch.Tensor):
        yield name, obj
    elif isinstance(obj, (tuple, list)):
        for index, item in enumerate(obj):
            yield from named_tensors(item, f"{name}[{index}]")


def saved_names(
    outs: list[tuple[str, torch.Tensor]], stop: set[Any], inputs: list[tuple[str, torch.Tensor]]
) -> set[str]:
    """Paths of the inputs and outputs whose storage the graph behind ``outs`` saved.

    Unlike ``classify_saves`` every aliasing name counts (an in-place module's input and
    output are one storage, and both are reported).
    """
    named = [(name, storage_key(tensor)) for name, tensor in [*inputs, *outs]]
    found: set[str] = set()
    for node in graph_nodes((tensor.grad_fn for _, tensor in outs), stop):
        for _, tensor in saved_tensors(node):
            key = storage_key(tensor)
            if key is not None:
                found.update(name for name, other in named if other == key)
    return found


def was_written(tensor: torch.Tensor, version: int, before: torch.Tensor) -> bool:
    """True if ``tensor`` was modified in place since ``version`` / ``before`` were taken."""
    if tensor._version != version or tensor.shape != before.shape:
        return True
    try:
        return not torch.equal(tensor.detach(), before)
    except RuntimeError:
        return True
