"""``dict(model.named_parameters())`` maps names to the model's parameters, tensors that
require grad (the ``nn.RNN`` docstring's "efficient implementation", pytorch issue #165621):
an item taken from it by any key is a parameter, so the matmul that reads a row of the
preallocated state with it keeps that row for the weight's gradient, and writing the next row
raises in backward. A ``dict`` of anything else stays unknown. The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

RNN = """
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.RNN(3, 3, 2)
params = {made}
x = torch.randn(4, 3)
h = torch.zeros(2, 4, 3)
for layer in range(2):
    inp = x if layer == 0 else h[layer - 1]
    h[layer] = torch.tanh(inp @ params[{key}])
h.sum().backward()
"""


def test_items_of_a_named_parameter_dict_are_parameters() -> None:
    hazard = RNN.format(made="dict(rnn.named_parameters())", key='f"weight_ih_l{layer}"')
    assert codes(hazard) == [(12, "IPL001")]
    assert codes(hazard.replace('f"weight_ih_l{layer}"', '"weight_ih_l0"')) == [(12, "IPL001")]
    fixed = hazard.replace("h[layer] = torch.tanh(", "h = h.clone()\n    h[layer] = torch.tanh(")
    behave(hazard, fixed)


def test_a_dict_of_something_else_is_unknown() -> None:
    source = RNN.format(made="dict(rnn.named_buffers())", key='"weight_ih_l0"')
    assert codes(source) == []
