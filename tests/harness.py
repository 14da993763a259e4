"""Collect the runnable examples of the rule catalogue and run them under torch.

Examples come from two places:

* fenced blocks in ``rules/IPL*.md`` whose info string is ``python`` followed by labels
  (``python hazard raises``, ``python hazard silent``, ``python safe``, each optionally with
  ``no-twin``); a plain ``python`` block is an illustration and is not collected;
* case files ``tests/cases/**/*.py`` whose first line is ``# label: hazard raises`` (or
  ``hazard silent`` / ``safe``, optionally followed by ``no-twin``).

A trailing ``# <-- IPL001`` (or ``# <-- IPL001, IPL002: why``) marks a line on which the
linter must report. This module imports torch only when an example is run.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "Example",
    "Outcome",
    "TorchRuns",
    "all_examples",
    "case_examples",
    "catalogue_examples",
    "compare",
    "parse_labels",
    "parse_markers",
    "run_example",
]

_MARKER = re.compile(r"#\s*<--\s*(IPL\d{3}(?:\s*,\s*IPL\d{3})*)\s*(?::.*)?$")
_FENCE_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_CASE_LABEL = re.compile(r"^#\s*label:\s*(?P<labels>.+?)\s*$")


@dataclass
class Example:
    """One runnable example and what the linter and torch must say about it."""

    origin: str
    source: str
    label: str
    mode: str
    twin: bool
    expected: set[tuple[int, str]] = field(default_factory=set)

    @property
    def marked_lines(self) -> set[int]:
        """The lines that carry a marker (the in-place sites the twin flips)."""
        return {line for line, _ in self.expected}


@dataclass
class Outcome:
    """What running an example produced: its error, if any, and a snapshot of its results."""

    error: str | None
    error_type: type[BaseException] | None = None
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_labels(words: list[str], where: str) -> tuple[str, str, bool]:
    """``["hazard", "raises", "no-twin"]`` -> ``("hazard", "raises", False)``."""
    twin = "no-twin" not in words
    rest = [w for w in words if w != "no-twin"]
    if rest in (["hazard", "raises"], ["hazard", "silent"]):
        return "hazard", rest[1], twin
    if rest == ["safe"]:
        return "safe", "", twin
    raise ValueError(f"{where}: unknown example labels {' '.join(words)!r}")


def parse_markers(source: str) -> set[tuple[int, str]]:
    """The ``(line, code)`` pairs of the ``# <-- IPL00N`` markers in ``source``."""
    found: set[tuple[int, str]] = set()
    for number, text in enumerate(source.splitlines(), start=1):
        match = _MARKER.search(text)
        if match:
            for code in match.group(1).split(","):
                found.add((number, code.strip()))
    return found


def _make(origin: str, source: str, words: list[str]) -> Example:
    label, mode, twin = parse_labels(words, origin)
    expected = parse_markers(source)
    if label == "hazard" and not expected:
        raise ValueError(f"{origin}: a hazard example needs a '# <-- IPL00N' marker")
    if label == "safe" and expected:
        raise ValueError(f"{origin}: a safe example must not carry markers")
    return Example(origin, source, label, mode, twin, expected)


def markdown_examples(text: str, origin: str) -> list[Example]:
    """The labelled ``python`` blocks of one Markdown page; origins are ``page:fence-line``."""
    examples: list[Example] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if not opening:
            index += 1
            continue
        fence = opening.group("fence")
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines):
            stripped = lines[index].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            body.append(lines[index])
            index += 1
        index += 1
        words = opening.group("info").split()
        if len(words) > 1 and words[0] == "python":
            source = "\n".join(body) + "\n"
            examples.append(_make(f"{origin}:{start + 1}", source, words[1:]))
    return examples


def catalogue_examples(root: Path) -> list[Example]:
    """Every labelled example in ``root/rules/IPL*.md``, page by page."""
    examples: list[Example] = []
    for page in sorted((root / "rules").glob("IPL*.md")):
        origin = page.relative_to(root).as_posix()
        examples.extend(markdown_examples(page.read_text(encoding="utf-8"), origin))
    return examples


def case_examples(root: Path) -> list[Example]:
    """Every case file under ``root/tests/cases`` (none when the folder is absent)."""
    examples: list[Example] = []
    folder = root / "tests" / "cases"
    if not folder.is_dir():
        return examples
    for path in sorted(folder.rglob("*.py")):
        origin = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        first = source.splitlines()[0] if source else ""
        match = _CASE_LABEL.match(first)
        if not match:
            raise ValueError(f"{origin}: first line must be '# label: ...'")
        examples.append(_make(origin, source, match.group("labels").split()))
    return examples


def all_examples(root: Path) -> list[Example]:
    """Catalogue examples followed by case files."""
    return catalogue_examples(root) + case_examples(root)


def run_example(source: str, filename: str = "<example>") -> Outcome:
    """Run ``source`` as ``__main__`` in fresh globals with torch seeded; snapshot results."""
    import torch

    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    grad_enabled = torch.is_grad_enabled()
    default_dtype = torch.get_default_dtype()
    error: str | None = None
    error_type: type[BaseException] | None = None
    try:
        code = compile(source, filename, "exec")
        random.seed(0)
        torch.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(code, namespace)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        error_type = type(exc)
    finally:
        torch.set_grad_enabled(grad_enabled)
        torch.set_default_dtype(default_dtype)
    return Outcome(error, error_type, _snapshot(namespace))


class TorchRuns:
    """Runs shared by a test session: each distinct source runs once, each twin is built once.

    ``run_example`` seeds torch and restores its global state, so a second run of the same
    source computes the same outcome; test_examples_torch and test_fix (which both run the
    twins of the catalogue's hazards, and whose fixed programs are often the twin, text for
    text) ask here instead of running again. ``twin_of`` takes ``out_of_place_twin``. Outcomes
    are shared objects: read them, never change them.
    """

    def __init__(self, twin_of: Callable[..., str]) -> None:
        self._twin_of = twin_of
        self._runs: dict[str, Outcome] = {}
        self._twins: dict[str, str] = {}

    def run(self, source: str, filename: str = "<example>") -> Outcome:
        """``run_example(source, filename)``, run once per distinct ``source``.

        The filename of the first run is kept; it shows only in a syntax error's message.
        """
        if source not in self._runs:
            self._runs[source] = run_example(source, filename)
        return self._runs[source]

    def twin(self, example: Example) -> str:
        """The example's twin: marked lines made out of place, or every line of a safe one."""
        if example.origin not in self._twins:
            lines = None if example.label == "safe" else example.marked_lines
            self._twins[example.origin] = self._twin_of(example.source, lines=lines)
        return self._twins[example.origin]

    def run_twin(self, example: Example) -> Outcome:
        return self.run(self.twin(example), f"{example.origin} (twin)")

    @property
    def runs(self) -> int:
        """How many distinct sources have been run."""
        return len(self._runs)


def _snapshot(namespace: dict[str, Any]) -> dict[str, Any]:
    """Tensors and gradients reachable from module-level names, detached and copied."""
    import torch
    from torch import nn

    values: dict[str, torch.Tensor] = {}

    def keep(key: str, tensor: torch.Tensor | None) -> None:
        if isinstance(tensor, torch.Tensor) and tensor.layout == torch.strided:
            values[key] = tensor.detach().clone()

    for name, value in namespace.items():
        if name.startswith("__"):
            continue
        if isinstance(value, torch.Tensor):
            keep(name, value)
            if value.is_leaf or value.retains_grad:
                keep(f"{name}.grad", value.grad)
        elif isinstance(value, nn.Module):
            for pname, param in value.named_parameters():
                keep(f"{name}.{pname}.grad", param.grad)
    return values


def compare(a: Outcome, b: Outcome) -> float | None:
    """Largest absolute difference over names both snapshots hold (``inf`` for shape changes)."""
    import torch

    shared = sorted(a.values.keys() & b.values.keys())
    if not shared:
        return None
    worst = 0.0
    for key in shared:
        left, right = a.values[key], b.values[key]
        if left.shape != right.shape:
            return math.inf
        if left.numel() == 0:
            continue
        if left.is_complex() or right.is_complex():
            left, right = (
                torch.view_as_real(left.to(torch.complex128)),
                torch.view_as_real(right.to(torch.complex128)),
            )
        left, right = left.to(torch.float64), right.to(torch.float64)
        both_nan = left.isnan() & right.isnan()
        diff = (left - right).abs()
        diff = torch.where(both_nan, torch.zeros_like(diff), diff)
        diff = torch.where(diff.isnan(), torch.full_like(diff, math.inf), diff)
        same_inf = (left == right) & left.isinf()
        diff = torch.where(same_inf, torch.zeros_like(diff), diff)
        worst = max(worst, float(diff.max()))
    return worst
