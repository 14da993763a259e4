"""The static path works where torch cannot be imported; confirm says what it needs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BLOCKER = """\
import sys


class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked for this test")
        return None


sys.meta_path.insert(0, _NoTorch())
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    return subprocess.run(
        [sys.executable, "-m", "inplace_lint", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )


def test_cli_check_without_torch(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import torch\na = torch.randn(2, requires_grad=True)\nx = a.sigmoid()\nx.mul_(2)\n"
        "x.sum().backward()\n",
        encoding="utf-8",
    )
    result = _run(tmp_path, "check", "m.py")
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("m.py:4:1: IPL001"), result.stdout
    probe = _run(tmp_path, "rules")
    assert probe.returncode == 0 and "IPL001" in probe.stdout


def test_confirm_without_torch_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n", encoding="utf-8")
    result = _run(tmp_path, "confirm", "m.py")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "inplace-lint: error: confirm needs torch: pip install 'inplace-lint[dynamic]'"
    )
