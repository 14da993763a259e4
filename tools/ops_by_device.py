"""Compare two op tables generated on two devices, and merge them into their union.

Both tables come from ``tools/gen_torch_ops.py`` with the same torch version, e.g. one with
``--device cpu`` and one with ``--device cuda``. The differences are printed and, with
``--output``, written as JSON in the form the shipped table can carry as its top-level
``"device_differences"`` block::

    {
      "devices": ["cpu", "cuda"],
      "torch_version": "2.11.0",
      "device_info": {"cuda": {"name": "NVIDIA H200", ...}},
      "functions": {"torch.x": {"saves": {"cpu": [], "cuda": ["input"]}}},
      "methods": {...}, "modules": {...}, "module_args": {...},
      "inplace_methods": {"cpu": [only on cpu], "cuda": [only on cuda]}, ...,
      "skipped_probes": {"cuda": {"function:torch.y": "killed by SIGSEGV"}}
    }

An entry found on one device only reads ``{"present": {"cpu": true, "cuda": false}}``; look
in ``skipped_probes`` to tell a probe that crashed from an op the device does not run.

``--ship PATH`` writes the overlay the linter ships beside its CPU table
(``inplace_lint/data/torch_ops_devices.json``): only the fields of ``functions``, ``methods``
and ``modules`` entries that both devices probed and found different (no entry present on one
device only, nothing a skipped probe could explain), with the devices and torch version.

``--merge PATH`` writes the union table: every entry of either device; where they differ, the
union of the saved tensors and the ``or`` of the boolean facts (a hazard on any device is a
hazard), with the per-device values in ``device_differences``. It never writes the shipped
table itself. Imports only the standard library.

    python tools/ops_by_device.py cpu.json cuda.json --output diff.json --merge union.json
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ENTRY_SECTIONS = ("functions", "methods", "modules", "module_args")
LIST_SECTIONS = (
    "inplace_methods",
    "view_methods",
    "view_functions",
    "factory_functions",
    "uninitialized",
)
#: Keys describing one generation run, not torch: they move into ``device_differences``.
RUN_KEYS = ("device", "device_info", "skipped_probes")
SHIPPED = Path(__file__).resolve().parent.parent / "inplace_lint" / "data" / "torch_ops.json"


def device_of(table: dict[str, Any]) -> str:
    """The device a table was probed on (tables without the key are CPU tables)."""
    return str(table.get("device", "cpu"))


def _entry_diff(first: Any, second: Any, names: tuple[str, str]) -> dict[str, Any]:
    """Per-field differences of one entry, or ``present`` when one side lacks it."""
    if first is None or second is None:
        return {"present": {names[0]: first is not None, names[1]: second is not None}}
    fields = sorted(set(first) | set(second))
    return {
        field: {names[0]: first.get(field), names[1]: second.get(field)}
        for field in fields
        if first.get(field) != second.get(field)
    }


def diff_tables(
    first: dict[str, Any], second: dict[str, Any], names: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The ``device_differences`` block for two tables of one torch version."""
    names = names or (device_of(first), device_of(second))
    diff: dict[str, Any] = {
        "devices": list(names),
        "torch_version": first.get("torch_version"),
    }
    info = {
        name: t["device_info"]
        for name, t in zip(names, (first, second), strict=True)
        if "device_info" in t
    }
    if info:
        diff["device_info"] = info
    for section in ENTRY_SECTIONS:
        a, b = first.get(section, {}), second.get(section, {})
        found = {}
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                found[key] = _entry_diff(a.get(key), b.get(key), names)
        diff[section] = found
    for section in LIST_SECTIONS:
        a, b = set(first.get(section, [])), set(second.get(section, []))
        diff[section] = {names[0]: sorted(a - b), names[1]: sorted(b - a)} if a != b else {}
    skipped = {
        name: t["skipped_probes"]
        for name, t in zip(names, (first, second), strict=True)
        if t.get("skipped_probes")
    }
    if skipped:
        diff["skipped_probes"] = skipped
    return diff


SHIPPED_SECTIONS = ("functions", "methods", "modules")


def ship_overlay(diff: dict[str, Any]) -> dict[str, Any]:
    """The overlay the linter ships: field differences both devices measured."""
    overlay: dict[str, Any] = {
        "devices": diff["devices"],
        "torch_version": diff.get("torch_version"),
        "device_info": diff.get("device_info", {}),
    }
    for section in SHIPPED_SECTIONS:
        entries = diff.get(section, {})
        overlay[section] = {
            key: fields for key, fields in entries.items() if fields and "present" not in fields
        }
    return overlay


def _union_value(a: Any, b: Any) -> Any:
    """One field of two entries: saved-tensor lists join, booleans ``or``, the rest is kept."""
    if isinstance(a, bool) and isinstance(b, bool):
        return a or b
    if isinstance(a, list) and isinstance(b, list) and all(isinstance(x, str) for x in a + b):
        return sorted(set(a) | set(b))
    return a if a is not None else b


def merge_tables(
    first: dict[str, Any], second: dict[str, Any], names: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The union table, carrying the differences as ``device_differences``."""
    diff = diff_tables(first, second, names)
    merged = {key: copy.deepcopy(value) for key, value in first.items() if key not in RUN_KEYS}
    for section in ENTRY_SECTIONS:
        if section not in first and section not in second:
            continue
        target = merged.setdefault(section, {})
        for key, entry in second.get(section, {}).items():
            if key not in target:
                target[key] = copy.deepcopy(entry)
                continue
            for field, value in entry.items():
                target[key][field] = _union_value(target[key].get(field), value)
    for section in LIST_SECTIONS:
        merged[section] = sorted(set(first.get(section, [])) | set(second.get(section, [])))
    merged["device_differences"] = diff
    return merged


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def describe(diff: dict[str, Any]) -> list[str]:
    """Readable lines for a ``device_differences`` block."""
    a, b = diff["devices"]
    lines = [f"torch {diff['torch_version']}: {a} vs {b}"]
    for name, info in diff.get("device_info", {}).items():
        lines.append(f"  {name}: {_show(info)}")
    for section in ENTRY_SECTIONS:
        entries = diff.get(section, {})
        lines.append(f"{section}: {len(entries)} differ")
        for key, fields in entries.items():
            if "present" in fields:
                side = a if fields["present"][a] else b
                lines.append(f"  {key}: only on {side}")
                continue
            for field, values in fields.items():
                lines.append(f"  {key}  {field}: {a}={_show(values[a])} {b}={_show(values[b])}")
    for section in LIST_SECTIONS:
        for name, only in diff.get(section, {}).items():
            if only:
                lines.append(f"{section}: only on {name}: {', '.join(only)}")
    for name, skipped in diff.get("skipped_probes", {}).items():
        lines.append(f"skipped on {name}: {len(skipped)} probes")
        lines.extend(f"  {unit}: {reason}" for unit, reason in skipped.items())
    return lines


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point: 0 when compared, 2 for unusable input."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("first", type=Path, help="table of the first device (e.g. CPU)")
    parser.add_argument("second", type=Path, help="table of the second device (e.g. CUDA)")
    parser.add_argument("--output", type=Path, help="write the differences as JSON here")
    parser.add_argument("--merge", type=Path, help="write the union table here")
    parser.add_argument("--ship", type=Path, help="write the linter's device overlay here")
    parser.add_argument("--names", help="device names, comma-separated (default: the tables')")
    parser.add_argument(
        "--allow-version-mismatch", action="store_true", help="compare different torch versions"
    )
    options = parser.parse_args(argv)
    first, second = (json.loads(path.read_text()) for path in (options.first, options.second))
    names = tuple(options.names.split(",")) if options.names else None
    names = names or (device_of(first), device_of(second))
    if len(names) != 2 or names[0] == names[1]:
        parser.error(f"two different device names are needed, got {names}; use --names")
    versions = first.get("torch_version"), second.get("torch_version")
    if versions[0] != versions[1] and not options.allow_version_mismatch:
        print(f"torch versions differ: {versions[0]} vs {versions[1]}", file=sys.stderr)
        return 2
    if options.merge is not None and options.merge.resolve() == SHIPPED:
        parser.error("--merge does not write the shipped table; give another path")
    diff = diff_tables(first, second, names)
    print("\n".join(describe(diff)))
    if options.output is not None:
        _write(options.output, diff)
    if options.merge is not None:
        _write(options.merge, merge_tables(first, second, names))
    if options.ship is not None:
        _write(options.ship, ship_overlay(diff))
    return 0


if __name__ == "__main__":
    sys.exit(main())
