"""The static path works where torch cannot be imported; confirm says what it needs; and
under CI the suite fails, not skips, when torch is missing (the hook in tests/conftest.py)."""

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
            raise ModuleNotFoundError("torch is blocked for this test", name=name)
        return None


sys.meta_path.insert(0, _NoTorch())
"""


ROOT = Path(__file__).resolve().parent.parent


def _run(
    tmp_path: Path, *args: str, module: str = "inplace_lint", **env: str
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    paths = os.pathsep.join([str(tmp_path), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": paths, **env},
        timeout=300,
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
        "inplace-lint: error: confirm needs torch: pip install torch (or, from the clone, "
        "pip install '.[dynamic]')"
    )


NEEDS_TORCH = {
    "test_module.py": (
        "import pytest\n\npytest.importorskip('torch')\n\n\ndef test_a():\n    pass\n"
    ),
    "test_fixture.py": "def test_b(torch_runs):\n    pass\n\n\ndef test_c():\n    pass\n",
}


def test_a_missing_torch_fails_under_ci_and_is_skipped_elsewhere(tmp_path: Path) -> None:
    """A module that needs torch (a collection skip) and a test whose fixture needs it (a
    setup skip), run by pytest with this suite's conftest.py as a plugin."""
    (tmp_path / "suite").mkdir()
    for name, text in NEEDS_TORCH.items():
        (tmp_path / "suite" / name).write_text(text, encoding="utf-8")
    paths = os.pathsep.join([str(tmp_path), str(ROOT), str(ROOT / "tests")])
    args = ["suite", "-p", "conftest", "-p", "no:cacheprovider", "-q"]
    local = _run(tmp_path, *args, module="pytest", CI="", PYTHONPATH=paths)
    assert local.returncode == 0, local.stdout
    assert local.stdout.splitlines()[-1].startswith("1 passed, 2 skipped in ")
    # under CI, as the suite runs there: with xdist workers (the controller must see the skip)
    ci = _run(tmp_path, *args, "-n", "2", module="pytest", CI="true", PYTHONPATH=paths)
    assert ci.returncode == 1, ci.stdout
    assert ci.stdout.splitlines()[-1].startswith("1 passed, 1 skipped, 1 error in ")
    assert "modules skipped for it: suite/test_module.py" in ci.stdout
    assert "test_b - torch is missing under CI=true" in ci.stdout
