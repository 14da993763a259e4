"""Project mode: a module class of one file, built and called by another file of the run.

The class's ``forward`` writes its input in place. Where the importing file builds an instance
and calls it, that write is judged at the call: a caller whose tensor an op saved, or that
reads it again, is reported there; a caller passing a tensor nothing else needs is clean, and
the defining file no longer reports the write for want of a caller. Each package also runs
with torch in a child interpreter: the hazards raise or read a changed value, the look-alike
runs and agrees with its out-of-place twin.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_lint.config import Config
from inplace_lint.runner import lint_files

LAYERS = """
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.s = s

    def forward(self, xs_pad):
        xs_pad *= self.s
        return xs_pad
"""

#: the line of the write in LAYERS, as written to disk
WRITE = textwrap.dedent(LAYERS).lstrip().splitlines().index("        xs_pad *= self.s") + 1

MODEL = """
import torch
import torch.nn as nn
from .layers import Scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = Scale(2.0)

    def forward(self, x):
        h = {first}
        out = self.scale({passed})
        return {returned}


torch.manual_seed(0)
model = Model()
x = torch.randn(4, 3)
y = model(x)
y.sum().backward()
print(float(y.sum()))
"""


def _package(root: Path, model: str) -> list[tuple[Path, str]]:
    files = {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/model.py": model}
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    return [(root / name, name) for name in sorted(files)]


def _model(first: str, passed: str, returned: str) -> str:
    return MODEL.format(first=first, passed=passed, returned=returned)


def _findings(files: list[tuple[Path, str]]) -> set[tuple[str, int, str]]:
    return {(r.path, f.line, f.code) for r in lint_files(files, Config()) for f in r.findings}


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("torch")
    return subprocess.run(
        [sys.executable, "-c", "import pkg.model"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _twin_output(root: Path) -> str:
    """The printed result with the class's write made out of place."""
    layers = root / "pkg" / "layers.py"
    layers.write_text(layers.read_text().replace("xs_pad *= self.s", "xs_pad = xs_pad * self.s"))
    ran = _run(root)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


CALL = 14  # the line of ``out = self.scale(...)`` in MODEL, as written to disk


def test_a_saved_tensor_passed_to_another_files_module_is_reported_at_the_call(
    tmp_path: Path,
) -> None:
    files = _package(tmp_path, _model("torch.sigmoid(self.lin(x))", "h", "out"))
    assert _findings(files) == {("pkg/model.py", CALL, "IPL001")}
    # each file alone: the call cannot see the write, the write has no caller to judge by
    assert _findings([files[2]]) == set()
    assert _findings([files[1]]) == {("pkg/layers.py", WRITE, "IPL004")}
    assert "modified by an inplace operation" in _run(tmp_path).stderr


def test_a_tensor_read_again_after_another_files_module_wrote_it(tmp_path: Path) -> None:
    files = _package(tmp_path, _model("self.lin(x)", "h", "out + h"))
    assert _findings(files) == {("pkg/model.py", CALL, "IPL004")}
    ran = _run(tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout != _twin_output(tmp_path)


def test_a_fresh_tensor_passed_to_another_files_module_is_clean(tmp_path: Path) -> None:
    files = _package(tmp_path, _model("self.lin(x)", "h * 1.5", "out + h"))
    assert _findings(files) == set()
    ran = _run(tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == _twin_output(tmp_path)


def test_a_class_built_but_never_called_in_the_run_is_still_reported(tmp_path: Path) -> None:
    model = _model("self.lin(x)", "h * 1.5", "out + h").replace(
        "out = self.scale(h * 1.5)", "out = h * 1.5"
    )
    files = _package(tmp_path, model)
    assert _findings(files) == {("pkg/layers.py", WRITE, "IPL004")}
