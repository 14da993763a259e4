"""A write whose target is a fresh tensor on one path and a view of another on the other.

Lightning's ``reset_parameters`` binds ``weight = torch.empty(...)`` on one branch and
``weight = self.weight.data`` on the other, fills it with ``kaiming_uniform_`` and then reads
``self.weight``: the fresh tensor no other name holds cannot be read stale, and through the
``.data`` alias the write is meant for the parameter (``writes._meant_to_share``), as it is
when that alias is the only alternative. A plain view beside a fresh tensor is not (open_clip's
``logits_per_text = logits_per_image.T`` on one path). Run under torch.
"""

from __future__ import annotations

from tests.programs import codes, run

RESET = """
import math

import torch
import torch.nn as nn
from torch.nn import init


class Lin(nn.Linear):
    def reset(self, quantized):
        if quantized:
            weight = torch.empty(self.weight.shape)
        else:
            weight = self.weight.data
        init.kaiming_uniform_(weight, a=math.sqrt(5))
        return (self.weight.sum() + weight.sum()).detach()


torch.manual_seed(0)
layer = Lin(4, 3)
total = layer.reset(False)
"""


def test_a_fresh_alternative_does_not_make_the_base_read_stale() -> None:
    assert codes(RESET) == []
    namespace = run(RESET)
    layer = namespace["layer"]
    assert float(namespace["total"]) == float(2 * layer.weight.detach().sum())  # type: ignore[attr-defined]


BIAS = """
import torch

torch.manual_seed(0)
image = torch.randn(3, 4)
text = torch.randn(4, 3)
gathered = SHARED
if gathered:
    logits_per_image = image @ text
    logits_per_text = logits_per_image.T
else:
    logits_per_image = image @ text
    logits_per_text = text.T @ image.T
bias = torch.tensor(0.5)
logits_per_image += bias
logits_per_text += bias
total = logits_per_image.sum() + logits_per_text.sum()
"""


def test_a_plain_view_beside_a_fresh_tensor_still_writes_its_base() -> None:
    """open_clip's loss (a real finding of run 2): on the gathered path ``logits_per_text``
    is a view of ``logits_per_image``, so the bias is added twice to both."""
    text_write = BIAS.splitlines().index("logits_per_text += bias") + 1
    assert (text_write, "IPL002") in codes(BIAS.replace("SHARED", "True"))
    twice = float(run(BIAS.replace("SHARED", "True"))["total"])  # type: ignore[arg-type]
    once = float(run(BIAS.replace("SHARED", "False"))["total"])  # type: ignore[arg-type]
    assert abs(twice - once) > 1.0
