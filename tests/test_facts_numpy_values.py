"""What numpy gives is never a tensor (untuned run 32, pyannote-audio's pipelines):

``sources = Inference.aggregate(...)`` returns an object of a class the file does not define
(a ``SlidingWindowFeature`` holding a numpy array), so the engine could only take it for a
possible tensor; then ``sources.data = np.pad(sources.data, ...)`` read as a write through
``.data`` and every later read of ``sources`` as a hidden-write hazard. Two facts settle it:

- a numpy function's result, and a method's of that result (``.astype(np.int8)``), is an
  array or a number, not a tensor;
- torch stores only a tensor in ``.data`` (``TypeError: Variable data has to be a tensor``),
  so code that stores an array there shows that ``sources`` is some other object.

A real ``.data`` write of a tensor in a forward is still reported. The static path never
imports numpy; the torch check below needs only torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

PIPELINE = """
import numpy as np
import torch
from torch import nn

from pyannote.audio.core.inference import Inference


class Separation(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, scores, active, count):
        sources = Inference.aggregate(self.lin(scores), skip_average=True)
        sources.data = {padded}
        sources.data = sources.data[:, active]
        count.data = np.minimum(count.data, 2).astype(np.int8)
        return sources, count
"""


def test_storing_numpy_results_in_data_is_no_tensor_write() -> None:
    assert codes(PIPELINE.format(padded="np.pad(sources.data, ((0, 0), (0, 2)))")) == []


def test_storing_a_tensor_in_data_is_still_a_hidden_write() -> None:
    source = PIPELINE.format(padded="torch.nn.functional.pad(sources.data, (0, 2))")
    assert (17, "IPL007") in codes(source)


def test_torch_stores_only_tensors_in_data() -> None:
    scope = run("import torch\nt = torch.zeros(3)\n")
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        scope["t"].data = [1.0, 2.0, 3.0]  # type: ignore[attr-defined]
