"""A torch module's own parameters are the names torch gives them, read from the op table
(``nn.LSTM``'s ``weight_ih_l0``, ``nn.MultiheadAttention``'s ``in_proj_weight``), not a word
list of ``weight`` and ``bias``: an in-place write to one outside ``no_grad`` writes a leaf
that requires grad. A name that is no parameter of the module's class (a buffer,
``running_mean``) is not taken for one. The programs run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

MODEL = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 5)
        self.attn = nn.MultiheadAttention(5, 1)
        self.bn = nn.BatchNorm1d(5)

    def forward(self, x):
        self.bn.running_mean.mul_(0.5)
        {write}
        out, _ = self.rnn(x)
        return out


torch.manual_seed(0)
model = Model()
y = model(torch.rand(3, 2, 4))
y.sum().backward()
"""


@pytest.mark.parametrize(
    "write", ["self.rnn.weight_ih_l0.mul_(0.5)", "self.attn.in_proj_weight.add_(1)"]
)
def test_a_write_to_a_parameter_torch_names_is_a_leaf_write(write: str) -> None:
    source = MODEL.format(write=write)
    assert codes(source) == [(15, "IPL003")]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        run(source)


def test_a_buffer_of_a_torch_module_is_no_parameter() -> None:
    source = MODEL.format(write="pass")
    assert codes(source) == []
    run(source)
