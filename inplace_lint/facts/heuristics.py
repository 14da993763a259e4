"""Guesses from names, in one place, each with the evidence that justified it.

The interpreter prefers facts from annotations, constructors and the generated op table. Where
code gives no such fact, these name-based guesses decide; each is a last resort, listed here so
its cost can be measured on code it was not tuned on (see bench/UNTUNED.md).
"""

from __future__ import annotations

import re

import libcst as cst

from inplace_lint.facts.model import Write
from inplace_lint.facts.names import dotted_name
from inplace_lint.facts.syntax import (
    _literal_zero,
)

_EXEMPT_DATA_WORDS = (
    "init", "reset", "step", "ema", "update", "load", "clip", "copy", "sync", "transfer",
    "offload", "device", "swap", "move", "optim", "adam", "sgd", "lamb", "lion", "belief",
    "single_tensor", "multi_tensor", "foreach",
)  # fmt: skip


#: Parameter names of integer or boolean tensors, which never require grad.
_INTEGER_NAME = re.compile(
    r"(.*_)?(ids|mask|labels?|positions|indices|index)|.*_mask|.*_ids|.*_labels?|.*_indices"
)


#: Parameter names that hold sizes and counts, never tensors, even in a forward().
_SIZE_NAME = re.compile(r".*(shape|size)s?|num_.*|n_.*|.*_dims?|.*_idx|.*_index")


_CONTAINER_ANNOTATIONS = (
    "List[", "list[", "Sequence[", "Tuple[", "tuple[", "Iterable[", "Dict[", "dict[",
    "Mapping[",
)  # fmt: skip


_OPTIMIZER_WORDS = frozenset({"opt", "optim", "optimizer", "optimiser"})


_MODEL_WORDS = frozenset({"net", "model", "module", "self", "network"})


def _words(name: str) -> list[str]:
    last = name.rsplit(".", 1)[-1]
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", last)
    return [w for w in re.split(r"[_\d]+", spaced.lower()) if w]


def _optimizer_hint(name: str) -> str | None:
    """For an optimizer-looking name (``opt_d``, ``optimizerG``) the rest of it, else None."""
    words = _words(name)
    if not any(w in _OPTIMIZER_WORDS for w in words):
        return None
    return "".join(w for w in words if w not in _OPTIMIZER_WORDS)


def _model_matches(hint: str, name: str) -> bool:
    norm = "".join(w for w in _words(name) if w not in _MODEL_WORDS)
    if not hint:
        return True
    return bool(norm) and (norm == hint or norm.startswith(hint) or hint.startswith(norm))


def _inplace_flag(name: str) -> bool:
    """``inplace``, ``in_place``, ``inplace_safe``, ``use_inplace``: a flag opting into
    in-place writes."""
    lowered = name.lower()
    return "inplace" in lowered or "in_place" in lowered


#: Mask names whose ``False`` positions are padding.
_PADDING_MASKS = ("attention_mask", "padding_mask", "pad_mask")


def _pads(write: Write) -> bool:
    """``h[~attention_mask] = 0``: a constant written over the padding positions only, which
    no caller reads as data (a write the caller can see is judged at its call site)."""
    node = write.node
    if write.via_call is not None or not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    small = write.small_statement()
    source = small.value if isinstance(small, cst.Assign) else None
    index = node.slice[0].slice
    if not _literal_zero(source) or not isinstance(index, cst.Index):
        return False
    mask = index.value
    if not isinstance(mask, cst.UnaryOperation) or not isinstance(mask.operator, cst.BitInvert):
        return False
    inner = mask.expression
    while isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute):
        inner = inner.func.value  # ``~mask.bool()``
    name = dotted_name(inner) if isinstance(inner, cst.Name | cst.Attribute) else None
    return name is not None and any(word in name.lower() for word in _PADDING_MASKS)


def _mentions_inplace(test: cst.BaseExpression) -> bool:
    """Whether a condition reads an ``inplace`` flag (``inplace``, ``self.inplace``,
    ``inplace_safe``)."""
    name = dotted_name(test)
    return name is not None and _inplace_flag(name.rsplit(".", 1)[-1])
