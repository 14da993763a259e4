# label: safe
# why: LimitParamValue.backward flips signs of x_grad in place, but in SimpleCombiner the incoming gradient is the freshly accumulated gradient of weight1 (used in two products), which no other node holds, so mutating it gives the same parameter gradients as the out-of-place version.
# source: https://github.com/k2-fsa/icefall/commit/6ea1706e113f3d554d8793c3d0e9d3838cea3f55 ("Fix potential/theoretical issue in backward of LimitParamValue", pre-fix pruned_transducer_stateless7/scaling.py and zipformer.py)
import random
from typing import Tuple

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)
random.seed(0)


class LimitParamValue(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: Tensor, min: float, max: float):
        ctx.save_for_backward(x)
        ctx.min = min
        ctx.max = max
        return x

    @staticmethod
    def backward(ctx, x_grad: Tensor):
        x, = ctx.saved_tensors
        # where x < ctx.min, ensure all grads are negative (this will tend to make
        # x more positive).
        x_grad *= torch.where(torch.logical_and(x_grad > 0, x < ctx.min), -1.0, 1.0)
        # where x > ctx.max, ensure all grads are positive (this will tend to make
        # x more negative).
        x_grad *= torch.where(torch.logical_and(x_grad < 0, x > ctx.max), -1.0, 1.0)
        return x_grad, None, None


def limit_param_value(x: Tensor, min: float, max: float, prob: float = 1.0):
    if random.random() < prob:
        return LimitParamValue.apply(x, min, max)
    else:
        return x


class SimpleCombiner(torch.nn.Module):
    def __init__(self, dim1: int, dim2: int, min_weight: Tuple[float, float] = (0., 0.)):
        super(SimpleCombiner, self).__init__()
        assert dim2 >= dim1
        initial_weight1 = 0.1
        self.weight1 = nn.Parameter(torch.full((dim2,), initial_weight1))
        self.min_weight = min_weight

    def forward(self, src1: Tensor, src2: Tensor) -> Tensor:
        assert src1.shape[:-1] == src2.shape[:-1]
        weight1 = self.weight1
        if self.training:
            weight1 = limit_param_value(weight1, min=self.min_weight[0], max=1.0 - self.min_weight[1])

        src1_dim = src1.shape[-1]
        src2_dim = src2.shape[-1]
        if src1_dim != src2_dim:
            if src1_dim < src2_dim:
                zeros_shape = list(src1.shape[:-1]) + [src2_dim - src1_dim]
                src1 = torch.cat((src1, torch.zeros(*zeros_shape, device=src1.device, dtype=src1.dtype)), dim=-1)
            else:
                src1 = src1[:src2_dim]

        src1 = src1 * weight1
        src2 = src2 * (1.0 - weight1)
        return src1 + src2


def main():
    combiner = SimpleCombiner(dim1=6, dim2=8, min_weight=(0.2, 0.25))
    combiner.weight1 = nn.Parameter(torch.linspace(-0.3, 1.1, 8))  # some entries outside [min, max]
    downsampled = nn.Linear(4, 6)
    upsampled = nn.Linear(4, 8)
    x = torch.randn(5, 3, 4)
    out = combiner(downsampled(x), upsampled(x))
    loss = (out - 0.5).pow(2).mean()
    loss.backward()
    return loss.detach(), combiner.weight1.grad, downsampled.weight.grad


loss, weight1_grad, downsampled_grad = main()
