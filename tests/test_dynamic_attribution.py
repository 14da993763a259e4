"""Pass A names the line that made a module in-place: ``m.inplace = True`` set after the
module was built (a loop over ``net.modules()``), not the line that built it. Run under real
torch through ``confirm``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

pytest.importorskip("torch")

from inplace_lint.dynamic.core import check
from inplace_lint.dynamic.targets import subject_for

FLAGGED_LATER = """
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Dropout(0.5))
for m in net.modules():
    if isinstance(m, nn.Dropout):
        m.inplace = True
net.train()
out = net(torch.randn(3, 4)).sum()
out.backward()
"""


def test_the_line_that_set_inplace_is_the_site(tmp_path: Path) -> None:
    path = tmp_path / "case.py"
    path.write_text(textwrap.dedent(FLAGGED_LATER).lstrip(), encoding="utf-8")
    report = check(subject_for(str(path)))
    assert {(c.site.line, c.code) for c in report.confirmed} == {(8, "IPL001")}
