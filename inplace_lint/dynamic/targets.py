"""Parse a TARGET: ``path.py`` (run as a script), ``path.py::name`` or ``pkg.mod:name``."""

from __future__ import annotations

import importlib.util
import os

from inplace_lint.dynamic.runner import BadInput, FunctionSubject, ScriptSubject, Subject

__all__ = ["subject_for"]


def subject_for(target: str, seed: int = 0) -> Subject:
    """The subject a TARGET names; ``BadInput`` when it cannot be found."""
    if "::" in target:
        path, _, name = target.partition("::")
        if not os.path.isfile(path):
            raise BadInput(f"{target}: no such file: {path}")
        if not name:
            raise BadInput(f"{target}: no function name after '::'")
        stem = os.path.splitext(os.path.basename(path))[0]
        return FunctionSubject(path, name, f"__inplace_lint_target_{stem}", target, seed)
    if target.endswith(".py") or os.sep in target or os.path.isfile(target):
        if not os.path.isfile(target):
            raise BadInput(f"{target}: no such file")
        return ScriptSubject(target, seed)
    module, sep, name = target.partition(":")
    if not sep or not module or not name:
        raise BadInput(f"{target}: expected path.py, path.py::name or package.module:name")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as exc:
        raise BadInput(f"{target}: cannot import {module}: {exc}") from None
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise BadInput(f"{target}: cannot import {module}: module not found")
    if not spec.origin.endswith(".py"):
        raise BadInput(f"{target}: {module} is not a Python source module")
    return FunctionSubject(spec.origin, name, spec.name, target, seed)
