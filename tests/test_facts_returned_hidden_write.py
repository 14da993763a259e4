"""A helper that writes its argument through ``.data`` and hands it back (hanlp's
``truncated_normal_``, posteriors' ``inplacify``) is in place by contract when no caller in the
run judges it: its ``return`` gives the caller its own tensor, not a use autograd records. With
a caller that passes a tensor of a graph and differentiates the result, the write is still
reported: sigmoid's backward then reads the scaled output. The programs are run with torch.
"""

from __future__ import annotations

import pytest
from programs import codes, run

HELPER = """
import torch


def truncated_normal_(tensor, mean=0.0, std=1.0):
    size = tensor.shape
    tmp = tensor.new_empty(size + (4,)).normal_()
    valid = (tmp < 2) & (tmp > -2)
    ind = valid.max(-1, keepdim=True)[1]
    tensor.data.copy_(tmp.gather(-1, ind).squeeze(-1))
    tensor.data.mul_(std).add_(mean)
    return tensor
"""

CALLED = """
import torch


def scale_(t, s=2.0):
    {write}
    return t


a = torch.tensor([0.0, 1.0, -2.0], requires_grad=True)
h = torch.sigmoid(a)
h2 = scale_(h)
h2.sum().backward()
"""


def test_an_initialiser_handing_back_its_argument_is_not_reported() -> None:
    assert codes(HELPER) == []
    scope = run(HELPER)
    torch = pytest.importorskip("torch")

    weight = torch.nn.Parameter(torch.empty(3, 4))
    out = scope["truncated_normal_"](weight, std=0.02)  # type: ignore[operator]
    assert out is weight and float(weight.detach().abs().max()) <= 0.04
    (weight * 2).sum().backward()  # a later graph sees the new values: nothing hidden
    assert weight.grad is not None and weight.grad.eq(2).all()


def test_a_caller_differentiating_the_written_tensor_is_still_reported() -> None:
    hazard = CALLED.format(write="t.data.mul_(s)")
    assert codes(hazard) == [(6, "IPL007")]
    twin = run(CALLED.format(write="t = t * s"))
    assert not run(hazard)["a"].grad.equal(twin["a"].grad)  # type: ignore[attr-defined]


TO_IMAGE = """
import torch


def tensor2img(tensor, min_max=(0, 1)):
    if torch.is_tensor(tensor):
        tensor = [tensor]
    result = []
    for _tensor in tensor:
        _tensor = _tensor.squeeze(0).float().detach().cpu().clamp_(*min_max)
        _tensor = (_tensor - min_max[0]) / (min_max[1] - min_max[0])
        result.append(_tensor)
    return result

"""


def torch_randn(shape: tuple[int, ...]) -> object:
    return pytest.importorskip("torch").randn(shape)


def test_a_read_of_the_detached_alias_is_no_use_autograd_records() -> None:
    # pyiqa's ``tensor2img``: the name is rebound to the detached, clamped tensor and read
    # again as such; nothing reads the tensor of the graph after the hidden write
    assert [c for c in codes(TO_IMAGE) if c[1] == "IPL007"] == []
    images = run(TO_IMAGE)["tensor2img"](torch_randn((1, 3, 4, 4)))  # type: ignore[operator]
    assert float(images[0].max()) <= 1.0
