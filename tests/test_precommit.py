"""The pre-commit hook for real: pre-commit builds the hook's environment from this checkout.

pre-commit installs a repository at a commit, so this tests the checkout's HEAD (in CI, a fresh
clone, that is the working tree). ``try-repo`` runs the hook on the staged files (a notebook
among them: the hooks take ``types_or: [python, jupyter]``, as ruff's do); then the hook
is installed and a commit with a hazard is rejected while a clean one goes through; then the
``inplace-lint-fix`` hook rewrites the hazard and the fixed file commits. Both hooks pass
``--force-exclude``, so a file the project excludes commits unchecked and unfixed though
pre-commit names it. All share one environment (same repository, same commit), built once in the
session's scratch PRE_COMMIT_HOME (``precommit_home``, shared with test_readme_precommit.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent
HAZARD = """\
import torch
a = torch.randn(4, requires_grad=True)
x = torch.sigmoid(a)
x.mul_(2)
x.sum().backward()
"""
CLEAN = "import torch\nx = torch.randn(4)\nx.add_(1)\n"
FINDING = "hazard.py:4:1: IPL001 `x.mul_()` overwrites `x` in place"


def sh(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_hook_rejects_a_hazardous_commit_and_passes_a_clean_one(
    tmp_path: Path, precommit_home: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.update(PRE_COMMIT_HOME=str(precommit_home), PRE_COMMIT_COLOR="never")
    git = (
        "git",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "-c",
        "commit.gpgsign=false",
    )
    precommit = (sys.executable, "-m", "pre_commit")
    head = sh(ROOT, env, "git", "rev-parse", "HEAD")
    assert head.returncode == 0, head.stderr
    rev = head.stdout.strip()

    repo = tmp_path / "project"
    repo.mkdir()
    assert sh(repo, env, "git", "init", "-q").returncode == 0
    (repo / "hazard.py").write_text(HAZARD, encoding="utf-8")
    (repo / "clean.py").write_text(CLEAN, encoding="utf-8")
    (repo / "notes.txt").write_text("x.mul_(2)\n", encoding="utf-8")
    nbformat.write(new_notebook(cells=[new_code_cell(HAZARD.rstrip())]), repo / "train.ipynb")
    sh(repo, env, "git", "add", "hazard.py", "clean.py", "notes.txt", "train.ipynb")

    # try-repo runs the hook on what is staged, as the commit hook would.
    tried = sh(repo, env, *precommit, "try-repo", str(ROOT), "inplace-lint", "--ref", rev)
    assert tried.returncode == 1, tried.stdout + tried.stderr
    assert FINDING in tried.stdout and "Failed" in tried.stdout
    assert "train.ipynb:cell 1:4:1: IPL001 `x.mul_()`" in tried.stdout  # notebooks too
    assert "clean.py" not in tried.stdout.split("Failed", 1)[1]

    hooks = "    hooks:\n      - id: inplace-lint\n"
    config = f"repos:\n  - repo: {ROOT.as_posix()}\n    rev: {rev}\n{hooks}"
    (repo / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    installed = sh(repo, env, *precommit, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    rejected = sh(repo, env, *git, "commit", "-q", "-m", "hazard")
    assert rejected.returncode != 0
    assert FINDING in rejected.stdout + rejected.stderr
    assert sh(repo, env, "git", "rev-parse", "--verify", "-q", "HEAD").returncode != 0

    sh(repo, env, "git", "rm", "-q", "--cached", "hazard.py", "train.ipynb")
    sh(repo, env, "git", "add", ".pre-commit-config.yaml")
    accepted = sh(repo, env, *git, "commit", "-q", "-m", "clean")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    output = accepted.stdout + accepted.stderr
    assert "inplace-lint" in output and "Passed" in output
    assert sh(repo, env, "git", "rev-parse", "--verify", "-q", "HEAD").returncode == 0

    # pre-commit names every staged file; the hooks pass --force-exclude, so the project's
    # excludes still hold: an excluded hazard commits, and the fix hook leaves it alone.
    config = '[tool.inplace-lint]\nextend-exclude = ["legacy"]\n'
    (repo / "pyproject.toml").write_text(config, encoding="utf-8")
    (repo / "legacy").mkdir()
    (repo / "legacy" / "old.py").write_text(HAZARD, encoding="utf-8")
    sh(repo, env, "git", "add", "pyproject.toml", "legacy/old.py")
    excluded = sh(repo, env, *git, "commit", "-q", "-m", "legacy")
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr
    assert "legacy/old.py" not in excluded.stdout + excluded.stderr
    (repo / "legacy" / "old.py").write_text(HAZARD + "# touched\n", encoding="utf-8")

    # The fix hook rewrites the staged hazard (pre-commit fails a hook that modifies files).
    sh(repo, env, "git", "add", "hazard.py", "legacy/old.py")
    fixing = sh(repo, env, *precommit, "try-repo", str(ROOT), "inplace-lint-fix", "--ref", rev)
    assert fixing.returncode == 1, fixing.stdout + fixing.stderr
    assert "files were modified by this hook" in fixing.stdout
    assert "x = x.mul(2)" in (repo / "hazard.py").read_text(encoding="utf-8")
    assert (repo / "legacy" / "old.py").read_text(encoding="utf-8") == HAZARD + "# touched\n"
    assert "legacy/old.py" not in fixing.stdout
    sh(repo, env, "git", "add", "hazard.py")
    fixed = sh(repo, env, *git, "commit", "-q", "-m", "fixed")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
