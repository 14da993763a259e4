"""tools/heldout.py, run as a script the way a held-out round uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "heldout.py"

HAZARD = """\
# label: hazard raises
import torch
a = torch.randn(3, requires_grad=True)
h = torch.sigmoid(a)
h.mul_(2)  # <-- IPL001
h.sum().backward()
"""
SAFE = """\
# label: safe
import torch
a = torch.randn(3, requires_grad=True)
h = torch.sigmoid(a) * 1
h = h.mul(2)
h.sum().backward()
g = a.grad
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(TOOL), *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_score_reports_hits_and_clean_files(tmp_path: Path) -> None:
    (tmp_path / "hazard.py").write_text(HAZARD)
    (tmp_path / "safe.py").write_text(SAFE)
    (tmp_path / "helper.py").write_text("print('not a case')\n")
    done = _run("score", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "HIT " in done.stdout and "OK   " in done.stdout
    files, findings = done.stdout.splitlines()[-2:]
    assert files.endswith("1/1; safe files clean: 1/1; hazard files with unmarked findings: 0")
    assert findings == (
        "markers: 1; recall (line and code) 1.00, (line, any code) 1.00; findings: 1; "
        "precision (line and code) 1.00, (marked line, any code) 1.00"
    )


def test_validate_rejects_a_wrong_label(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(HAZARD)
    (tmp_path / "wrong.py").write_text(SAFE.replace("# label: safe", "# label: hazard raises"))
    done = _run("validate", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("OK") and "good.py" in line for line in lines)
    assert any(line.startswith("BAD") and "wrong.py" in line for line in lines)
