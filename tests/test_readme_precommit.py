"""The README's pre-commit snippets work as written: real pre-commit, a temporary git repository.

Only the placeholder ``/path/to/inplace-lint`` is replaced, by this checkout. The pinned form is
completed the way the README says (``pre-commit autoupdate --bleeding-edge``), so pre-commit
builds the hook's environment from the checkout's HEAD (in CI, a fresh clone: the working tree);
the ``repo: local`` form runs the ``inplace-lint`` on ``PATH``, here the one installed beside
this interpreter, and is run again as the README's ``--fix`` variant.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = "/path/to/inplace-lint"
HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
"""
FINDING = "hazard.py:4:1: IPL001 `x.mul_()` overwrites `x` in place"


def precommit_snippets() -> list[str]:
    """The YAML blocks of the README's pre-commit section, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n### pre-commit\n", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def sh(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture
def project(tmp_path: Path, precommit_home: Path) -> tuple[Path, dict[str, str]]:
    """A git repository with a staged hazard, and the environment to run pre-commit in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    bindir = str(Path(sys.executable).parent)  # where this environment's inplace-lint lives
    env.update(
        PRE_COMMIT_HOME=str(precommit_home),
        PRE_COMMIT_COLOR="never",
        PATH=bindir + os.pathsep + env.get("PATH", ""),
    )
    repo = tmp_path / "project"
    repo.mkdir()
    assert sh(repo, env, "git", "init", "-q").returncode == 0
    (repo / "hazard.py").write_text(HAZARD, encoding="utf-8")
    assert sh(repo, env, "git", "add", "hazard.py").returncode == 0
    return repo, env


def test_the_readme_has_the_two_forms() -> None:
    pinned, local = precommit_snippets()
    assert f"repo: {PLACEHOLDER}\n" in pinned and "id: inplace-lint\n" in pinned
    assert "repo: local\n" in local and "entry: inplace-lint --force-exclude\n" in local


def test_pinned_snippet_after_autoupdate(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    pinned = precommit_snippets()[0]
    config = repo / ".pre-commit-config.yaml"
    config.write_text(pinned.replace(PLACEHOLDER, ROOT.as_posix()), encoding="utf-8")
    precommit = (sys.executable, "-m", "pre_commit")
    updated = sh(repo, env, *precommit, "autoupdate", "--bleeding-edge")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    head = sh(ROOT, env, "git", "rev-parse", "HEAD").stdout.strip()
    assert f"rev: {head}\n" in config.read_text(encoding="utf-8")

    ran = sh(repo, env, *precommit, "run")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "inplace-lint" in ran.stdout and "Failed" in ran.stdout and FINDING in ran.stdout


def test_local_snippet_and_its_fix_variant(project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    local = precommit_snippets()[1]
    config = repo / ".pre-commit-config.yaml"
    config.write_text(local, encoding="utf-8")
    precommit = (sys.executable, "-m", "pre_commit")
    ran = sh(repo, env, *precommit, "run")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert FINDING in ran.stdout

    # "entry: inplace-lint --fix --force-exclude in the local one"
    fixing = local.replace(
        "entry: inplace-lint --force-exclude", "entry: inplace-lint --fix --force-exclude"
    )
    config.write_text(fixing, encoding="utf-8")
    fixed = sh(repo, env, *precommit, "run")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # a file was rewritten
    assert "files were modified by this hook" in fixed.stdout
    assert "x = x.mul(2)" in (repo / "hazard.py").read_text(encoding="utf-8")
    assert sh(repo, env, "git", "add", "hazard.py").returncode == 0
    again = sh(repo, env, *precommit, "run")
    assert again.returncode == 0, again.stdout + again.stderr
