"""A test of ``x.grad_fn`` chooses the in-place path for tensors without grad (fast-transformers'
recurrent linear attention: ``if K.grad_fn is not None: Zi = Zi + K`` else ``Zi += K``): like a
``requires_grad`` test, the arm it keeps for no grad writes as under ``no_grad``, the state
update meant for inference, and is not reported. The programs run with torch: with grad the
state the caller passed is left alone, without grad it is updated in place.
"""

from __future__ import annotations

from programs import codes, run

STATE = """
import torch
import torch.nn as nn


class RecurrentLinearAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)

    def forward(self, query, memory):
        K = self.proj(query)
        Zi = memory
        if {test}:
            Zi = Zi + K
        else:
            Zi += K
        return Zi * 2


torch.manual_seed(0)
layer = RecurrentLinearAttention()
memory = torch.zeros(2, 3)
out = layer(torch.randn(2, 3), memory)
with torch.no_grad():
    layer(torch.randn(2, 3), memory)
"""


def test_the_no_grad_arm_of_a_grad_fn_test_is_an_intended_update() -> None:
    source = STATE.format(test="K.grad_fn is not None")
    assert codes(source) == []
    scope = run(source)
    assert scope["out"].requires_grad  # type: ignore[attr-defined]
    assert scope["memory"].abs().sum() > 0  # type: ignore[attr-defined]  # the no-grad call


def test_an_arm_no_grad_test_chose_is_still_reported() -> None:
    source = STATE.format(test="query.dim() == 3")
    assert codes(source) == [(17, "IPL004")]
