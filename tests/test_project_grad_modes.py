"""Project mode carries the grad mode of calls across files (``inplace_lint/project_modes.py``).

A target-network update that copies into parameters raises torch's leaf error when called with
grad on, and is what it means to be under ``no_grad``; whether a run's calls are all grad-off
decides whether its own file reports the write. Each package is linted as one run and run with
torch in a child interpreter: the reported one raises, the clean ones run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inplace_lint.config import Config
from inplace_lint.project import build_views
from inplace_lint.runner import lint_files

UTILS = """
import torch


def soft_update(source, target, tau):
    for target_param, param in zip(target.parameters(), source.parameters()):
        target_param.copy_(target_param * (1.0 - tau) + param * tau)
"""
WRITE = ("pkg/torch_utils.py", 6, "IPL003")

SETUP = """
import torch
import torch.nn as nn
{imports}

critic = nn.Linear(3, 1)
critic_target = nn.Linear(3, 1)
critic(torch.randn(4, 3)).pow(2).mean().backward()
"""

#: how a caller file reaches the helper, and how it calls it
ALIAS = ("import pkg.torch_utils as TorchUtils", "TorchUtils.soft_update")
IMPORTED = ("from .torch_utils import soft_update", "soft_update")
MODULE = ("from pkg import torch_utils", "torch_utils.soft_update")


def _caller(how: tuple[str, str], body: str) -> str:
    imports, call = how
    return SETUP.format(imports=imports) + textwrap.dedent(body).format(call=call)


def _package(root: Path, callers: dict[str, str]) -> list[tuple[Path, str]]:
    files = {"pkg/__init__.py": "", "pkg/torch_utils.py": UTILS, **callers}
    for name, source in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    return [(root / name, name) for name in sorted(files)]


def _findings(files: list[tuple[Path, str]]) -> set[tuple[str, int, str]]:
    return {(r.path, f.line, f.code) for r in lint_files(files, Config()) for f in r.findings}


def _outcomes(root: Path, *modules: str) -> list[str]:
    """Import each module with torch in one child interpreter: its error, or "" if it ran."""
    pytest.importorskip("torch")
    script = textwrap.dedent(
        """
        import importlib, sys
        for name in sys.argv[1:]:
            try:
                importlib.import_module(name)
                print(repr(""))
            except Exception as exc:
                print(repr(str(exc).splitlines()[0]))
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, *modules],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return [ast.literal_eval(line) for line in ran.stdout.splitlines()]


NO_GRAD_BLOCK = """
with torch.no_grad():
    {call}(source=critic, target=critic_target, tau=0.005)
"""
DECORATED = """
@torch.no_grad()
def update_targets():
    {call}(critic, critic_target, 0.005)


update_targets()
"""
THROUGH_A_HELPER = """
def update_targets():
    {call}(critic, critic_target, 0.005)


with torch.inference_mode():
    update_targets()
"""
GRAD_ON = """
{call}(critic, critic_target, 0.005)
"""


@pytest.mark.parametrize("how", [ALIAS, IMPORTED, MODULE])
@pytest.mark.parametrize("body", [NO_GRAD_BLOCK, DECORATED, THROUGH_A_HELPER])
def test_a_helper_every_caller_runs_without_grad_is_clean(
    tmp_path: Path, how: tuple[str, str], body: str
) -> None:
    files = _package(tmp_path, {"pkg/algo.py": _caller(how, body)})
    assert _findings(files) == set()


def test_the_clean_callers_run_and_a_grad_on_caller_raises(tmp_path: Path) -> None:
    callers = {
        f"pkg/algo_{i}.py": _caller(ALIAS, body)
        for i, body in enumerate([NO_GRAD_BLOCK, DECORATED, THROUGH_A_HELPER, GRAD_ON])
    }
    _package(tmp_path, callers)
    modules = [f"pkg.algo_{i}" for i in range(4)]
    leaf = "a leaf Variable that requires grad is being used in an in-place operation."
    assert _outcomes(tmp_path, *modules) == ["", "", "", leaf]


@pytest.mark.parametrize("how", [ALIAS, IMPORTED])
def test_one_caller_with_grad_on_keeps_the_finding(tmp_path: Path, how: tuple[str, str]) -> None:
    callers = {
        "pkg/algo.py": _caller(how, NO_GRAD_BLOCK),
        "pkg/init.py": _caller(how, GRAD_ON),
    }
    files = _package(tmp_path, callers)
    assert _findings(files) == {WRITE}


def test_the_helper_alone_or_called_with_grad_is_reported(tmp_path: Path) -> None:
    files = _package(tmp_path, {"pkg/algo.py": _caller(ALIAS, NO_GRAD_BLOCK)})
    by_name = dict((display, (path, display)) for path, display in files)
    assert _findings([by_name["pkg/torch_utils.py"]]) == {WRITE}  # no caller in the run


def test_the_view_carries_the_modes_and_parses_only_files_that_turn_grad_off(
    tmp_path: Path,
) -> None:
    callers = {
        "pkg/algo.py": _caller(ALIAS, NO_GRAD_BLOCK),
        "pkg/plain.py": _caller(IMPORTED, GRAD_ON),
        "pkg/broken.py": "import pkg.torch_utils as T\nwith torch.no_grad(:\n    T.soft_update()\n",
    }
    files = _package(tmp_path, callers)
    views = build_views(files)
    utils = [d for _, d in files].index("pkg/torch_utils.py")
    assert views[utils].modes_elsewhere == (("soft_update", (False, True)),)
    # the grad-on caller alone: its modes reach the view without a parse
    files = _package(tmp_path / "b", {"pkg/plain.py": _caller(IMPORTED, GRAD_ON)})
    views = build_views(files)
    utils = [d for _, d in files].index("pkg/torch_utils.py")
    assert views[utils].modes_elsewhere == (("soft_update", (True,)),)
