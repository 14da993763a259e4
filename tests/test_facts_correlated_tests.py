"""Two tests of one unchanged value against one literal take the same arm.

``if self.loss == "modified_huber": output = clip(...) else: output = sigmoid(...)`` and later
``if self.loss == "modified_huber": output[...] = 1``: the second write reaches only the
clipped tensor, which no op saved, never sigmoid's output (hummingbird-ml's linear converter).
Every program runs under torch: the hazard raises, the look-alike runs.
"""

from __future__ import annotations

from programs import behave, codes

PROGRAM = """
import torch


class Linear(torch.nn.Module):
    def __init__(self, loss):
        super().__init__()
        self.loss = loss
        self.w = torch.nn.Parameter(torch.randn(3, 2))

    def forward(self, x):
        output = x @ self.w
        if self.loss == "modified_huber":
            output = torch.clip(output, -1, 1)
        else:
            output = torch.sigmoid(output)
        if self.loss {test}:
            output[output > 0.5] = 1
        return output


for loss in ("modified_huber", 'log', "hinge"):
    Linear(loss)(torch.randn(4, 3)).sum().backward()
"""


def test_the_same_literal_test_takes_the_same_arm() -> None:
    safe = PROGRAM.format(test='== "modified_huber"')
    assert codes(safe) == []
    hazard = PROGRAM.format(test="!= 'modified_huber'")  # the sigmoid arm: its output is saved
    line = hazard.splitlines().index("            output[output > 0.5] = 1") + 1
    assert codes(hazard) == [(line, "IPL001")]
    behave(hazard, safe)


def test_another_literal_or_a_rebound_subject_keeps_both_arms() -> None:
    line = PROGRAM.splitlines().index("            output[output > 0.5] = 1") + 1
    other = PROGRAM.format(test='== "hinge"')
    assert codes(other) == [(line, "IPL001")]
    rebound = PROGRAM.format(test='== "modified_huber"').replace(
        "            output = torch.sigmoid(output)\n",
        "            output = torch.sigmoid(output)\n        self.loss = 'modified_huber'\n",
    )
    assert codes(rebound) == [(line + 1, "IPL001")]
    behave(other, PROGRAM.format(test='== "modified_huber"'))
    behave(rebound)
