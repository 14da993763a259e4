"""The house rules of the package, checked on its source: sizes, layers, no import cycles.

No module over 800 lines and no function over 80; ``facts/`` imports nothing above it,
``checks/`` reads only ``facts/`` and the shared words, and the module-level imports of the
package form no cycle (an import inside a function, made to break one, is not counted).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "inplace_lint"
MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80

#: For each room, the package modules it may not import (at any depth of its own code).
FORBIDDEN = {
    "inplace_lint.facts": (
        "inplace_lint.checks",
        "inplace_lint.engine",
        "inplace_lint.fix",
        "inplace_lint.autofix",
        "inplace_lint.report",
        "inplace_lint.cli",
        "inplace_lint.lsp",
        "inplace_lint.dynamic",
        "inplace_lint.runner",
        "inplace_lint.cache",
    ),
    "inplace_lint.checks": (
        "inplace_lint.engine",
        "inplace_lint.fix",
        "inplace_lint.autofix",
        "inplace_lint.report",
        "inplace_lint.cli",
        "inplace_lint.lsp",
        "inplace_lint.dynamic",
        "inplace_lint.runner",
        "inplace_lint.cache",
    ),
    "inplace_lint.engine": ("inplace_lint.cli", "inplace_lint.lsp", "inplace_lint.dynamic"),
    "inplace_lint.report": ("inplace_lint.cli", "inplace_lint.lsp", "inplace_lint.dynamic"),
}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in names if name.startswith("inplace_lint")}


MODULES = _modules()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_and_function_sizes(module: str) -> None:
    source = MODULES[module].read_text(encoding="utf-8")
    assert source.count("\n") <= MAX_MODULE_LINES, f"{module} has over {MAX_MODULE_LINES} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, f"{module}: functions over {MAX_FUNCTION_LINES} lines: {long}"


@pytest.mark.parametrize("room", sorted(FORBIDDEN))
def test_nothing_imports_upward(room: str) -> None:
    wrong = [
        f"{module} imports {name}"
        for module, path in MODULES.items()
        if module == room or module.startswith(room + ".")
        for name in _imports(module, path, top_level_only=False)
        if any(name == up or name.startswith(up + ".") for up in FORBIDDEN[room])
    ]
    assert not wrong


def test_no_import_cycles() -> None:
    graph = {
        module: {
            name if name in MODULES else name.rsplit(".", 1)[0]
            for name in _imports(module, path, top_level_only=True)
        }
        & MODULES.keys()
        for module, path in MODULES.items()
    }
    for module in graph:  # a package's __init__ is imported with its modules: not an edge back
        graph[module] = {other for other in graph[module] if not module.startswith(other + ".")} - {
            module
        }
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(module: str, trail: list[str]) -> bool:
        state[module] = 1
        for other in sorted(graph[module]):
            if state.get(other) == 1:
                cycle.extend([*trail[trail.index(other) :], other])
                return True
            if other not in state and visit(other, [*trail, other]):
                return True
        state[module] = 2
        return False

    for module in sorted(graph):
        if module not in state and visit(module, [module]):
            break
    assert not cycle, " -> ".join(cycle)
