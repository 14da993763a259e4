"""Probes as named units, and the table assembled from their results.

A unit is ``kind:name`` (``function:torch.relu``, ``method:mul_``, ``inplace:mul_``,
``module:torch.nn.GRU``, ``factory:torch.zeros``, ``property:mT``). Running a unit gives a
JSON-ready result; the table is assembled from the results in unit order, so a run in one
process and a run split over subprocesses write the same table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from . import aliasing, collect
from .specs import reseed

Results = dict[str, Any]
Log = Callable[[str], None]

KINDS: dict[str, Callable[[str], Any]] = {
    "function": collect.function_entry,
    "method": collect.method_entry,
    "inplace": collect.inplace_check,
    "module": lambda name: collect.module_entry(name.removeprefix("torch.nn.")),
    "factory": lambda name: _factory(name.removeprefix("torch.")),
    "property": collect.is_view_property,
    "modargs": lambda name: collect.module_args_entry(name.removeprefix("torch.nn.")),
    "alias": aliasing.aliasing,
    "twin": aliasing.has_twin,
    "modalias": lambda name: aliasing.module_aliasing(name.removeprefix("torch.nn.")),
    "overwrites": collect.overwrites,
}


def _factory(name: str) -> list[bool]:
    """``[factory, metadata_only]`` for ``torch.<name>``: run as one unit, so that a probe which
    breaks the device (a CUDA device-side assert) takes only its own unit with it."""
    found = bool(collect.is_factory(name))
    return [found, found and collect.reads_metadata_only(name)]


def all_units(detail: bool = False) -> list[str]:
    """Every unit, in the order the table is assembled (``detail``: with ``modargs`` units)."""
    units = [f"function:{name}" for name in collect.function_names()]
    units += [f"method:{name}" for name in collect.method_names()]
    units += [f"inplace:{name}" for name in collect.inplace_method_names()]
    units += [f"module:torch.nn.{name}" for name in collect.module_names()]
    units += [f"factory:torch.{name}" for name in collect.torch_function_names()]
    units += [f"property:{name}" for name in collect.property_names()]
    units += [f"alias:{name}" for name in (*collect.function_names(), *collect.method_names())]
    units += [f"twin:{name}" for name in collect.inplace_method_names()]
    units += [f"modalias:torch.nn.{name}" for name in collect.module_names()]
    units += [f"overwrites:{name}" for name in collect.inplace_method_names()]
    if detail:
        units += [f"modargs:torch.nn.{name}" for name in collect.module_names()]
    return units


def select(units: Iterable[str], only: Iterable[str]) -> list[str]:
    """Units named by ``only``: a whole unit id, a qualified name or a bare name.

    ``relu`` selects ``function:torch.relu``, ``function:torch.nn.functional.relu`` and
    ``method:relu`` (not ``relu_``); ``module:torch.nn.GRU`` selects that unit alone.
    """
    wanted = {name.strip() for name in only if name.strip()}
    chosen = []
    for unit in units:
        name = unit.split(":", 1)[1]
        if {unit, name, name.rsplit(".", 1)[-1]} & wanted:
            chosen.append(unit)
    return chosen


def run_unit(unit: str) -> Any:
    """Run one unit's probe and return its JSON-ready result."""
    kind, name = unit.split(":", 1)
    return KINDS[kind](name)


def run_in_process(units: list[str], log: Log) -> tuple[Results, dict[str, str]]:
    """Run every unit here, one after the other (the default on CPU); nothing is skipped."""
    reseed()
    results = {}
    for index, unit in enumerate(units, 1):
        results[unit] = run_unit(unit)
        if index % 500 == 0:
            log(f"probed {index}/{len(units)}")
    return results, {}


def _by_kind(units: list[str], results: Results) -> dict[str, list[tuple[str, Any]]]:
    grouped: dict[str, list[tuple[str, Any]]] = {kind: [] for kind in KINDS}
    for unit in units:
        kind, name = unit.split(":", 1)
        grouped[kind].append((name, results.get(unit)))
    return grouped


def assemble(units: list[str], results: Results, log: Log = lambda message: None) -> dict[str, Any]:
    """The table from the units' results (a unit with no result counts as not runnable)."""
    grouped = _by_kind(units, results)
    functions = {name: entry for name, entry in grouped["function"] if entry is not None}
    log(f"functions: {len(functions)}")
    methods = {name: entry for name, entry in grouped["method"] if entry is not None}
    log(f"methods: {len(methods)}")
    checks = [(name, result or [False, False]) for name, result in grouped["inplace"]]
    inplace_methods = [name for name, (ran, wrote) in checks if wrote or not ran]
    unverified = [name for name, (ran, _) in checks if not ran]
    log(f"inplace methods: {len(inplace_methods)} (not runnable, kept by name: {unverified})")
    probed = [(name, result) for name, result in grouped["module"] if result is not None]
    modules = {name: result["entry"] for name, result in probed if result["entry"] is not None}
    eval_only = [name for name, result in probed if result["eval_only"]]
    log(f"modules: {len(modules)} (probed in eval mode: {eval_only})")
    factories = [name for name, found in grouped["factory"] if found and found[0]]
    log(f"factories: {len(factories)}")
    view_methods = {
        name for name, entry in methods.items() if entry["view"] and not name.startswith("__")
    }
    view_methods.update(name for name, found in grouped["property"] if found)
    table = {
        "torch_version": torch.__version__.split("+")[0],
        "functions": functions,
        "methods": methods,
        "modules": modules,
        "inplace_methods": inplace_methods,
        "view_methods": sorted(view_methods),
        "view_functions": sorted(name for name, entry in functions.items() if entry["view"]),
        "factory_functions": factories,
        "metadata_factories": sorted(
            f"torch.{name.removeprefix('torch.')}"
            for name, found in grouped["factory"]
            if found and found[1]
        ),
        "uninitialized": sorted(
            name for name in (*factories, *methods) if collect.returns_uninitialized(name)
        ),
        "overwrites": sorted(
            name for name, found in grouped["overwrites"] if found and name in inplace_methods
        ),
        "tensor_attributes": collect.tensor_attributes(),
        "tensor_properties": collect.property_names(),
        "module_wrappers": sorted(collect.module_wrappers()),
        **_aliasing_sections(grouped),
    }
    if grouped["modargs"]:
        args = {name: entry for name, entry in grouped["modargs"] if entry is not None}
        log(f"module arguments: {len(args)}")
        table["module_args"] = args
    return table


def _aliasing_sections(grouped: dict[str, list[tuple[str, Any]]]) -> dict[str, list[str]]:
    """What ``aliasing`` found: calls that hand back only new storage, methods that may hand
    back their receiver's, in-place methods with an out-of-place twin, and modules whose
    forward hands back new storage or at most its input's."""
    alias = grouped["alias"]
    modules = grouped["modalias"]
    return {
        "fresh_functions": sorted(n for n, kind in alias if kind == "fresh" and "." in n),
        "fresh_methods": sorted(n for n, kind in alias if kind == "fresh" and "." not in n),
        "receiver_methods": sorted(n for n, kind in alias if kind == "self" and "." not in n),
        "outofplace_twins": sorted(n for n, found in grouped["twin"] if found),
        "fresh_modules": sorted(n for n, kind in modules if kind == "fresh"),
        "passing_modules": sorted(n for n, kind in modules if kind in ("fresh", "input")),
    }
