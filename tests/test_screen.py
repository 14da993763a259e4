"""The text screen: it may pass too much, never too little."""

from __future__ import annotations

from pathlib import Path

import pytest

from inplace_lint.engine import lint_source
from inplace_lint.screen import may_contain_hazard

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = {"IPL001", "IPL002", "IPL003", "IPL004", "IPL005", "IPL006", "IPL007", "IPL999"}
HEAD = "import torch\n"


@pytest.mark.parametrize(
    "line",
    [
        "x.relu_()",
        "F.relu_ (x)",
        "nn.init.zeros_(w)",
        "x += y",
        "x **= 2",
        "x @= w",
        "x[mask] = 0",
        "x[:, 0] = 0",
        "if c: x[0] = 1",
        "else: x[0] = 1",
        "x[\n    0\n] = 1",
        "act = nn.ReLU(inplace=True)",
        "act = nn.ReLU(True)",
        "y = F.relu(x,\n    True)",
        "torch.add(a, b, out=a)",
        "torch.add(a, b,\n    out = a)",
        "p.data = q",
        "opt.step()",
    ],
)
def test_writes_pass(line: str) -> None:
    assert may_contain_hazard(HEAD + line + "\n", DEFAULT)


@pytest.mark.parametrize(
    "line",
    [
        "def f(\n    a: Optional[int] = None,\n    b: Dict[str, int] = None,\n): pass",
        "    size: Tuple[int, int] = (1, 2)",
        "layer = nn.Dropout(dropout=0.1)",
        "out = model(x)",
        "self.out = x",
        "y = x.sum(1, keepdim=True)",
        "super().__init__()",
        "if a != b or a <= b or a == b: pass",
        "y = x.clamp(min=0)",
    ],
)
def test_reads_do_not_pass(line: str) -> None:
    assert not may_contain_hazard(HEAD + line + "\n", DEFAULT)


def test_clamp_passes_only_with_the_opt_in_rule() -> None:
    text = HEAD + "y = x.clamp(min=0)\n"
    assert may_contain_hazard(text, DEFAULT | {"IPL008"})
    assert may_contain_hazard(text)  # codes unknown: assume every rule


def test_no_torch_no_pass() -> None:
    assert not may_contain_hazard("x.relu_()\nx += 1\n")


def test_every_labelled_case_and_example_passes() -> None:
    files = [*(ROOT / "tests" / "cases").rglob("*.py"), *(ROOT / "examples").glob("*.py")]
    assert len(files) > 100
    rejected = [f.name for f in files if not may_contain_hazard(f.read_text(encoding="utf-8"))]
    assert rejected == [] or all(f.startswith("safe") for f in rejected)


def test_positional_inplace_true_is_linted() -> None:
    """The screen once skipped files whose only in-place module was ``nn.ReLU(True)``."""
    text = (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.seq = nn.Sequential(nn.Sigmoid(), nn.ReLU(True))\n"
    )
    assert [f.code for f in lint_source(text, "m.py", DEFAULT)] == ["IPL001"]
