"""Two facts from nerfacc's chunked rendering (round 35):

- a parameter annotated ``Callable`` that every call fills with a same-file module is that
  module (``render_in_chunks(radiance_field: Callable, ...)`` is given ``RadianceField()``):
  its outputs require grad, so ``torch.cumprod`` in a helper keeps its output for backward and
  ``trans *= prefix_trans`` on what the helper returned breaks it;
- a same-file function whose every way ends in ``raise`` (a stub for a kernel this build lacks)
  never returns: the arm that calls it ends there, and what it bound does not reach the code
  after the branch.

The programs run with torch.
"""

from __future__ import annotations

from programs import behave, codes

CHUNKS = """
from typing import Callable

import torch
from torch import nn


def exclusive_prod(inputs):
    ones = torch.ones_like(inputs[..., :1])
    return torch.cumprod(torch.cat([ones, inputs[..., :-1]], dim=-1), dim=-1)


def render_transmittance(alphas, prefix_trans=None):
    trans = exclusive_prod(1 - alphas)
    if prefix_trans is not None:
        {scale}
    return trans


class RadianceField(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Linear(3, 1)

    def forward(self, positions):
        return torch.sigmoid(self.mlp(positions))[..., 0]


def render_in_chunks(radiance_field: Callable, positions, chunk):
    prefix_trans, total = None, 0.0
    for start in range(0, positions.shape[1], chunk):
        alphas = radiance_field(positions[:, start : start + chunk])
        trans = render_transmittance(alphas, prefix_trans)
        total = total + (trans * alphas).sum()
        prefix_trans = trans[:, -1:] * (1 - alphas[:, -1:])
    return total


torch.manual_seed(0)
render_in_chunks(RadianceField(), torch.randn(4, 8, 3), chunk=4).backward()
"""


def test_a_module_given_for_a_callable_parameter_makes_outputs_that_require_grad() -> None:
    hazard = CHUNKS.format(scale="trans *= prefix_trans")
    assert codes(hazard) == [(16, "IPL001")]
    safe = CHUNKS.format(scale="trans = trans * prefix_trans")
    assert codes(safe) == []
    behave(hazard, safe)


RAISING = """
import torch


def cuda_kernel(x):
    assert x.dim() == 2, "2-D inputs only"
    raise NotImplementedError("Only support cuda inputs.")


def scaled(x, on_cuda=False):
    h = torch.sigmoid(x)
    if on_cuda:
        y = h
        {call}
    else:
        y = h.clone()
    y.mul_(2)
    return h + y


x = torch.rand(4, 5, requires_grad=True)
scaled(x, {flag}).sum().backward()
"""


def test_an_arm_that_calls_a_function_that_always_raises_ends_there() -> None:
    safe = RAISING.format(call="cuda_kernel(x)", flag="False")
    assert codes(safe) == []
    hazard = RAISING.format(call="pass", flag="True")
    assert codes(hazard) == [(17, "IPL001")]
    behave(hazard, safe)
