"""What torch ops save for backward, which return views and which write in place.

The knowledge is generated from real torch by ``tools/gen_torch_ops.py`` and shipped as
``inplace_lint/data/torch_ops.json`` (probed on CPU), with ``torch_ops_devices.json`` beside
it: what the same torch saves differently on another device (``tools/ops_by_device.py
--ship``, run where a GPU was lent). The table read here is their union, a module's or an
op's extra saves marked with the device that makes them. This module only reads files, so the static
checker never needs torch installed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, cached_property
from importlib import resources
from types import MappingProxyType
from typing import Any

#: Tensor methods whose result is not a tensor, or only describes the tensor.
METADATA_METHODS = frozenset(
    {
        "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride",
        "data_ptr", "is_contiguous", "item", "tolist", "numpy", "storage_offset",
        "get_device", "is_floating_point", "is_complex", "type", "__len__", "untyped_storage",
        "register_hook", "retain_grad", "backward", "equal", "is_set_to", "is_leaf",
    }
)  # fmt: skip
#: Tensor attributes that read metadata, not the tensor's values.
METADATA_ATTRIBUTES = frozenset(
    {
        "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "grad_fn", "layout",
        "names", "is_sparse", "is_quantized", "is_meta", "is_leaf", "grad", "itemsize", "nbytes",
    }
)  # fmt: skip
#: In-place methods that change no values: they never count as writes.
NON_WRITING_METHODS = frozenset({"requires_grad_", "share_memory_", "retain_grad_"})
#: Methods that may return ``self`` and that a CPU probe cannot run (``x.cuda()`` on a machine
#: without a GPU, ``coalesce`` of a sparse tensor): the rest come from the table
#: (``maybe_self_methods``).
UNPROBED_SELF_METHODS = frozenset({"cuda", "coalesce"})


@dataclass(frozen=True)
class OpInfo:
    """Autograd facts about one function or method."""

    params: tuple[str, ...]
    saves: frozenset[str]
    view: bool
    inplace: bool
    inplace_index: int | None
    saves_out_of_place: frozenset[str] | None
    #: returns several views of its input, which autograd refuses to write in place
    multi_view: bool = False
    #: saved inputs it keeps when that input alone needs grad (``gather``'s ``self``); the
    #: others in ``saves`` are kept only for another input's gradient (``a * b``)
    saves_alone: frozenset[str] = frozenset()
    #: its result never requires grad, whatever its inputs (``x.new_tensor(v)``, ``argmax``)
    detached: bool = False
    #: a method: the most positional arguments it takes, where torch says (``zero_``: 0)
    max_args: int | None = None
    #: the parameters only a tensor may fill (``torch.norm``'s ``input``; not ``pow``'s)
    tensor_params: frozenset[str] = frozenset()
    #: the devices whose kernels keep more than the CPU's do ("cuda"), or "" when none
    device_saves: str = ""
    #: the names in ``saves_alone`` only those devices' kernels keep alone
    device_alone: frozenset[str] = frozenset()
    #: the names in ``saves`` only those devices' kernels keep at all
    device_kept: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ModuleInfo:
    """Autograd facts about one ``torch.nn`` module class."""

    saves_input: bool
    saves_result: bool
    inplace_index: int | None
    has_parameters: bool
    saves_input_out_of_place: bool
    saves_result_out_of_place: bool
    #: a module returning a tuple (``nn.LSTM``): the positions of the outputs it saved
    saved_outputs: tuple[int, ...] = ()
    #: a module returning a tuple: its length (0 when it returns one tensor)
    outputs: int = 0
    #: the devices whose kernels save more than the CPU does ("cuda"), or "" when none
    device_saves: str = ""
    #: the positions in ``saved_outputs`` saved only on those devices
    device_outputs: tuple[int, ...] = ()
    #: its graph keeps its parameters (``Linear``: yes; ``Embedding``: no, only the indices)
    saves_parameters: bool = True
    #: the names of its own parameters, as torch built it (``weight``, ``in_proj_weight``)
    parameters: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpTable:
    """The whole generated table, indexed for lookups."""

    torch_version: str
    functions: dict[str, OpInfo]
    methods: dict[str, OpInfo]
    modules: dict[str, ModuleInfo]
    inplace_methods: frozenset[str]
    view_methods: frozenset[str]
    view_functions: frozenset[str]
    factory_functions: frozenset[str]
    #: factories and methods torch documents as returning uninitialized data
    uninitialized: frozenset[str] = frozenset()
    #: factories that read only the shape, dtype and device of their tensor (``zeros_like``)
    metadata_factories: frozenset[str] = frozenset()
    #: in-place methods whose result does not depend on ``self``'s old values (``copy_``)
    overwrites: frozenset[str] = frozenset()
    #: every public attribute of ``torch.Tensor``
    tensor_attributes: frozenset[str] = frozenset()
    #: functions returning the module they are given (``torch.nn.utils.weight_norm``)
    module_wrappers: frozenset[str] = frozenset()
    #: public data descriptors of ``torch.Tensor`` (``shape``, ``grad``, ``T``)
    tensor_properties: frozenset[str] = frozenset()
    #: functions and methods that never hand back an input's storage (``tools/opprobe/
    #: aliasing.py``): ``torch.add``, ``x.sum()``; not ``x.contiguous()`` or ``F.dropout``
    fresh_functions: frozenset[str] = frozenset()
    fresh_methods: frozenset[str] = frozenset()
    #: methods that may hand back their receiver's storage and no other input's (``x.to``)
    receiver_methods: frozenset[str] = frozenset()
    #: in-place methods whose stem returns what they write, in new storage (``clamp_``)
    outofplace_twins: frozenset[str] = frozenset()
    #: ``torch.nn`` modules whose forward never hands back its input's storage (``Linear``);
    #: and those that hand back at most their input's (``Dropout``, ``Identity`` too)
    fresh_modules: frozenset[str] = frozenset()
    passing_modules: frozenset[str] = frozenset()

    def is_inplace_method(self, name: str) -> bool:
        return name in self.inplace_methods and name not in NON_WRITING_METHODS

    @cached_property
    def parameter_names(self) -> frozenset[str]:
        """Every name a ``torch.nn`` module gives one of its own parameters (``weight``,
        ``in_proj_bias``, ``weight_hh_l0``): what ``m.<name>`` is on a module of unknown class."""
        return frozenset(name for info in self.modules.values() for name in info.parameters)

    @cached_property
    def function_namespaces(self) -> frozenset[str]:
        """The torch namespaces whose public functions the table lists (``torch``,
        ``torch.nn.functional``, ...)."""
        return frozenset(name.rsplit(".", 1)[0] for name in self.functions)

    def may_be_inplace_function(self, qualified: str) -> bool:
        """``torch.<ns>.name_`` may be an in-place function torch has: the table lists its
        namespace (private names such as ``torch._foreach_mul_`` it leaves out), or it is
        an unbound ``torch.Tensor`` method. ``torch.init.normal_`` (no such namespace) and
        ``torch.nn.utils.clip_grad_norm_`` (writes ``.grad``, not its argument) are not."""
        namespace, _, name = qualified.rpartition(".")
        return is_inplace_name(name) and (
            namespace in self.function_namespaces or namespace == "torch.Tensor"
        )

    def inplace_call(self, name: str, args: Sequence[Any]) -> bool:
        """``obj.name(*args)`` (libcst ``Arg`` nodes) may be a tensor's in-place method:
        the name is one, and torch's form takes that many positional arguments
        (``semiring.zero_(x)`` is no ``Tensor.zero_``)."""
        return self.is_inplace_method(name) and self.fits(name, args)

    def fits(self, name: str, args: Sequence[Any]) -> bool:
        """The method ``name`` of a tensor takes that many positional arguments (or torch
        does not say how many it takes)."""
        info = self.methods.get(name)
        if info is None or info.max_args is None or any(a.star for a in args):
            return True
        return sum(1 for a in args if a.keyword is None) <= info.max_args


def _op(raw: dict[str, Any]) -> OpInfo:
    inplace_param = raw.get("inplace_param")
    oop = raw.get("saves_out_of_place")
    return OpInfo(
        params=tuple(raw.get("params", ())),
        saves=frozenset(raw.get("saves", ())),
        view=bool(raw.get("view", False)),
        inplace=bool(raw.get("inplace", False)),
        inplace_index=inplace_param.get("index") if inplace_param else None,
        saves_out_of_place=frozenset(oop) if oop is not None else None,
        multi_view=bool(raw.get("multi_view", False)),
        saves_alone=frozenset(raw.get("saves_alone", ())),
        detached=bool(raw.get("detached", False)),
        max_args=raw.get("max_args"),
        tensor_params=frozenset(raw.get("tensor_params", ())),
    )


def _module(raw: dict[str, Any]) -> ModuleInfo:
    inplace_param = raw.get("inplace_param")
    saves_input = bool(raw.get("saves_input", False))
    saves_result = bool(raw.get("saves_result", False))
    return ModuleInfo(
        saves_input=saves_input,
        saves_result=saves_result,
        inplace_index=inplace_param.get("index") if inplace_param else None,
        has_parameters=bool(raw.get("has_parameters", False)),
        saves_input_out_of_place=bool(raw.get("saves_input_out_of_place", saves_input)),
        saves_result_out_of_place=bool(raw.get("saves_result_out_of_place", saves_result)),
        saved_outputs=tuple(raw.get("saved_outputs", ())),
        outputs=int(raw.get("outputs", 0)),
        saves_parameters=bool(raw.get("saves_parameters", True)),
        parameters=tuple(raw.get("parameters", ())),
    )


def _read(name: str) -> dict[str, Any]:
    text = resources.files("inplace_lint.data").joinpath(name).read_text("utf-8")
    return json.loads(text)


def with_devices(
    modules: dict[str, ModuleInfo], overlay: dict[str, Any], base: dict[str, Any]
) -> dict[str, ModuleInfo]:
    """``modules`` with what other devices' kernels save added, marked with the device.

    ``overlay`` (``torch_ops_devices.json``) may come from another torch version than the CPU
    table ``base``: a difference is applied only where its CPU side still matches ``base``.
    Functions and methods: ``with_op_devices``."""
    reference, *others = overlay.get("devices", ["cpu"])
    merged = dict(modules)
    for key, fields in overlay.get("modules", {}).items():
        info, raw = merged.get(key), base.get(key, {})
        if info is None or any(raw.get(f) != v.get(reference) for f, v in fields.items()):
            continue
        devices = sorted({d for v in fields.values() for d in others if v.get(d)})
        saved = fields.get("saved_outputs", {})
        outputs = set(info.saved_outputs).union(*(saved.get(d) or () for d in others))
        merged[key] = replace(
            info,
            saves_result=info.saves_result or "saves_result" in fields,
            saves_result_out_of_place=info.saves_result_out_of_place or "saves_result" in fields,
            saved_outputs=tuple(sorted(outputs)),
            device_saves=", ".join(devices),
            device_outputs=tuple(sorted(outputs - set(info.saved_outputs))),
        )
    return merged


#: the fields of an op's overlay row the linter applies (others, ``present``, are not saves)
_OP_DEVICE_FIELDS = frozenset({"saves", "saves_alone"})


def with_op_devices(
    ops: dict[str, OpInfo], overlay: dict[str, Any], base: dict[str, Any], section: str
) -> dict[str, OpInfo]:
    """``ops`` (the ``section`` of functions or methods) with the inputs other devices' kernels
    keep added (``rms_norm``'s ``weight``, kept on CUDA when only its input needs grad), each
    marked as a device's; applied, as for modules, only where the CPU side still matches."""
    reference, *others = overlay.get("devices", ["cpu"])
    merged = dict(ops)
    for key, fields in overlay.get(section, {}).items():
        info, raw = merged.get(key), base.get(key, {})
        if info is None or not fields or set(fields) - _OP_DEVICE_FIELDS:
            continue
        if any(sorted(raw.get(f, ())) != sorted(v.get(reference) or ()) for f, v in fields.items()):
            continue
        extra = {f: {n for d in others for n in v.get(d) or ()} for f, v in fields.items()}
        saves = info.saves | extra.get("saves", set())
        alone = info.saves_alone | extra.get("saves_alone", set())
        devices = sorted({d for v in fields.values() for d in others if v.get(d)})
        merged[key] = replace(
            info,
            saves=frozenset(saves),
            saves_alone=frozenset(alone),
            device_saves=", ".join(devices),
            device_alone=frozenset(alone - info.saves_alone),
            device_kept=frozenset(saves - info.saves),
        )
    return merged


@cache
def load_table() -> OpTable:
    """Load the shipped table, with its device overlay, once per process."""
    raw, overlay = _read("torch_ops.json"), _read("torch_ops_devices.json")
    modules = {k: _module(v) for k, v in raw.get("modules", {}).items()}
    functions = {k: _op(v) for k, v in raw.get("functions", {}).items()}
    methods = {k: _op(v) for k, v in raw.get("methods", {}).items()}
    return OpTable(
        torch_version=raw.get("torch_version", "?"),
        functions=with_op_devices(functions, overlay, raw.get("functions", {}), "functions"),
        methods=with_op_devices(methods, overlay, raw.get("methods", {}), "methods"),
        modules=with_devices(modules, overlay, raw.get("modules", {})),
        inplace_methods=frozenset(raw.get("inplace_methods", ())),
        view_methods=frozenset(raw.get("view_methods", ())),
        view_functions=frozenset(raw.get("view_functions", ())),
        factory_functions=frozenset(raw.get("factory_functions", ())),
        uninitialized=frozenset(raw.get("uninitialized", ())),
        metadata_factories=frozenset(raw.get("metadata_factories", ())),
        overwrites=frozenset(raw.get("overwrites", ())),
        tensor_attributes=frozenset(raw.get("tensor_attributes", ())),
        module_wrappers=frozenset(raw.get("module_wrappers", ())),
        **{field: frozenset(raw.get(field, ())) for field in _ALIASING_SECTIONS},
    )


_ALIASING_SECTIONS = (
    "tensor_properties",
    "fresh_functions",
    "fresh_methods",
    "receiver_methods",
    "outofplace_twins",
    "fresh_modules",
    "passing_modules",
)


@cache
def maybe_self_methods() -> frozenset[str]:
    """Methods that return their receiver in some configuration and a copy in others
    (``x.to(dtype)``, ``x.float()``, ``x.contiguous()``): the table's ``receiver_methods``
    that are neither views nor in-place, with ``UNPROBED_SELF_METHODS``."""
    table = load_table()
    probed = {
        name
        for name in table.receiver_methods
        if name not in table.view_methods and not is_inplace_name(name) and name[:1] != "_"
    }
    return frozenset(probed) | UNPROBED_SELF_METHODS


def is_inplace_name(name: str) -> bool:
    """Whether ``name`` is spelled like torch's in-place ops: ``add_`` yes, ``__iadd__`` no.

    A spelling test only: ``x.update_()`` on a user object passes too; ask the table
    (:meth:`OpTable.is_inplace_method`) whether torch has such a tensor method.
    """
    return len(name) > 1 and name.endswith("_") and not name.endswith("__")


def out_of_place_method(name: str) -> str | None:
    """``add`` for the in-place method ``add_``: its stem, when the table has a tensor method
    by that name (``zero_`` and ``normal_`` have none). The stem's meaning is not checked."""
    if not is_inplace_name(name):
        return None
    stem = name[:-1]
    return stem if stem in load_table().methods else None


@cache
def inplace_flag_positions() -> MappingProxyType[str, int]:
    """Short name -> 0-based position of the ``inplace`` argument, for the functions and
    ``torch.nn`` modules that take one (``relu``: 1, ``ReLU``: 0; a module's ``self`` is not
    counted). Later entries of a short name shared by two ops would win; the table has none."""
    table = load_table()
    found: dict[str, int] = {}
    for name, info in [*table.functions.items(), *table.modules.items()]:
        if info.inplace_index is not None:
            found[name.rsplit(".", 1)[-1]] = info.inplace_index
    return MappingProxyType(found)
