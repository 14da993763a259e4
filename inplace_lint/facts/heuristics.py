"""Guesses from names, in one place, each with the evidence that justified it.

The interpreter prefers facts from annotations, constructors and the generated op table. Where
code gives no such fact, these name-based guesses decide; each is a last resort, listed here so
its cost can be measured on code it was not tuned on (see bench/UNTUNED.md).
"""

from __future__ import annotations

import re

import libcst as cst

from inplace_lint.facts.classes import literal_zero
from inplace_lint.facts.model import Write
from inplace_lint.facts.names import ImportTable, dotted_name
from inplace_lint.facts.op_extras import _NO_GRAD
from inplace_lint.facts.ops import is_inplace_name

# Each guess below names the evidence that introduced it and what it is known to cost.
# "Tuned corpora" are timm, torchvision, transformers and diffusers (bench/REAL_CODE.md);
# "untuned" is the first run on 18 other projects (bench/UNTUNED.md), where several of these
# guesses show up among the causes of both misses and false alarms.

#: Words in a function's name that mark it as a state update (initialisation, optimizer step,
#: EMA, loading, device moves): its ``.data`` writes are meant to bypass autograd (IPL007
#: stays quiet) and no-grad writes through attributes are meant to be seen.
#: Evidence: optimizer implementations and EMA/loading helpers in the tuned corpora.
#: Cost: a helper named otherwise is not recognised (untuned: speechbrain ``fixup``,
#: torch_geometric ``glorot_orthogonal``), and a forward-path function whose name merely
#: contains a word (``update_state``) is exempt.
_EXEMPT_DATA_WORDS = (
    "init", "reset", "step", "ema", "update", "load", "clip", "copy", "sync", "transfer",
    "offload", "device", "swap", "move", "optim", "adam", "sgd", "lamb", "lion", "belief",
    "single_tensor", "multi_tensor", "foreach",
)  # fmt: skip


def state_update_name(name: str) -> bool:
    """A function whose name says it updates state (see ``_EXEMPT_DATA_WORDS``)."""
    lowered = name.lower()
    return any(word in lowered for word in _EXEMPT_DATA_WORDS)


def init_like_name(name: str) -> bool:
    """``init_weights``, ``reset_parameters``: a function that initialises the tensors it is
    given, so writing its arguments is its contract (IPL004 stays quiet).
    Evidence: ``reset_parameters``/``_init_weights`` across the tuned corpora."""
    lowered = name.lower()
    return "init" in lowered or "reset" in lowered


#: Parameter names of integer or boolean tensors, which never require grad.
#: Evidence: ``forward(input_ids, attention_mask, labels)`` in transformers, where writing a
#: mask or labels argument is not a gradient hazard. Cost: a float tensor so named is taken
#: to need no grad.
_INTEGER_NAME = re.compile(
    r"(.*_)?(ids|mask|labels?|positions|indices|index)|.*_mask|.*_ids|.*_labels?|.*_indices"
)


#: Parameter names that hold sizes and counts, never tensors, even in a forward().
#: Evidence: ``forward(x, seq_len, num_heads)`` signatures in the tuned corpora.
_SIZE_NAME = re.compile(r".*(shape|size)s?|num_.*|n_.*|.*_dims?|.*_idx|.*_index")


#: Annotation spellings of containers: such a parameter is never itself a tensor.
#: A fact from the annotation, matched as text (typing aliases are not resolved).
_CONTAINER_ANNOTATIONS = (
    "List[", "list[", "Sequence[", "Tuple[", "tuple[", "Iterable[", "Dict[", "dict[",
    "Mapping", "OrderedDict",
)  # fmt: skip
#: Bare container annotations (``state: dict``), matched whole.
_BARE_CONTAINER_ANNOTATIONS = frozenset({"dict", "Dict", "list", "List", "tuple", "Tuple"})


def other_annotation(text: str) -> bool:
    """An annotation that names no tensor (``n: int``, ``name: str``, ``cfg: Config``): the
    parameter holds something else, whatever the body does to it."""
    return bool(text) and "Tensor" not in text and "Any" not in text


def container_annotation(text: str) -> bool:
    """An annotation that makes a parameter a container (``MutableMapping[str, Tensor]``,
    ``list[Tensor]``, ``dict``): never itself a tensor. Evidence: a ``MutableMapping``
    state dict written by key (monai, bench/UNTUNED.md)."""
    return any(w in text for w in _CONTAINER_ANNOTATIONS) or text in _BARE_CONTAINER_ANNOTATIONS


#: Words that make a name an optimizer's (``opt_d``, ``optimizerG``), and words a model's
#: name may carry besides its role (``netD``, ``model_g``): ``opt_d.step()`` is taken to
#: update the parameters of the model named like ``d`` when the optimizer's construction
#: is not visible. Evidence: GAN training loops with one optimizer per network.
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
    in-place writes. Evidence: torch's own ``inplace=`` convention, followed by user
    modules and helpers (``def act(x, inplace=False)``)."""
    lowered = name.lower()
    return "inplace" in lowered or "in_place" in lowered


#: Mask names whose ``False`` positions are padding.
#: Evidence: ``h[~attention_mask] = 0`` in transformers forwards (REAL_CODE.md, 3 findings).
_PADDING_MASKS = ("attention_mask", "padding_mask", "pad_mask")


def zeroes_padding(write: Write) -> bool:
    """``h[~attention_mask] = 0``: a constant written over the padding positions only, which
    no caller reads as data (a write the caller can see is judged at its call site)."""
    node = write.node
    if write.via_call is not None or not isinstance(node, cst.Subscript) or len(node.slice) != 1:
        return False
    small = write.small_statement()
    source = small.value if isinstance(small, cst.Assign) else None
    index = node.slice[0].slice
    if not literal_zero(source) or not isinstance(index, cst.Index):
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


#: A docstring that says the function works in place: ``Clip boxes ... in place``,
#: ``(modified in-place)``, ``inplace``; not ``not in place`` or ``isn't in-place``.
#: Evidence: 11 of the 55 false alarms of the first untuned run (bench/UNTUNED.md) were
#: ultralytics helpers whose docstrings announce the mutation (``clip_boxes``, NMS export).
_IN_PLACE_DOC = re.compile(r"(?<!not )(?<!n't )\bin[- ]?place\b", re.IGNORECASE)


def documented_in_place(func: cst.FunctionDef) -> bool:
    """The function's docstring says it changes its arguments in place: its writes to them
    are its contract, like a name ending in ``_``."""
    docstring = func.get_docstring(clean=False)
    return bool(docstring) and _IN_PLACE_DOC.search(docstring) is not None


def exempt_reason(func: cst.FunctionDef, no_grad: bool) -> str:
    """Why a function may write its arguments in place (empty if nothing says so): its name,
    an ``inplace`` flag, grad off (``no_grad``), its docstring, or its initialising role."""
    name = func.name.value
    param_names = {p.name.value for p in (*func.params.params, *func.params.kwonly_params)}
    if is_inplace_name(name):
        return "its name ends in `_`"
    if "inplace" in name.lower().replace("_", ""):  # ``renorm_weights_inplace``
        return "its name says it works in place"
    if any(_inplace_flag(p) for p in param_names):
        return "it takes an `inplace` flag"
    if no_grad:
        return "it runs under no_grad"
    if documented_in_place(func):
        return "its docstring says it works in place"
    if init_like_name(name):
        return "it initialises tensors"
    return ""


def runs_without_grad(func: cst.FunctionDef, imports: ImportTable, modes: set[bool] | None) -> bool:
    """``func`` is decorated with a grad-off decorator, or every call of it seen (``modes``,
    from ``callmodes``) runs it with grad off."""
    return no_grad_decorated(func, imports) or modes == {False}


def compiled_for_arrays(func: cst.FunctionDef, imports: ImportTable) -> bool:
    """``@numba.njit`` (any numba decorator): numba compiles the function for NumPy arrays
    and scalars; it never receives a torch tensor, so its writes are no tensor writes."""
    for deco in func.decorators:
        target = deco.decorator
        if isinstance(target, cst.Call):
            target = target.func
        qualified = imports.qualify(target) or ""
        if qualified == "numba" or qualified.startswith("numba."):
            return True
    return False


def no_grad_decorated(func: cst.FunctionDef, imports: ImportTable) -> bool:
    """``@torch.no_grad()`` (or another grad-off decorator) on ``func``."""
    for deco in func.decorators:
        target = deco.decorator
        if isinstance(target, cst.Call):
            target = target.func
        if (imports.qualify(target) or "") in _NO_GRAD:
            return True
    return False
