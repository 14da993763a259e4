# label: safe
# why: inside the custom Function forward the squared distances are cloned before div_/exp_, so the in-place kernel computation and the later in-place derivative product each act on their own buffer, exactly as the out-of-place forms
# source: https://github.com/cornellius-gp/gpytorch/commit/54b7a0df2fee5d7a961c533855e358678d697a86 (gpytorch/functions/rbf_covariance.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def sq_dist(x1, x2):
    x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
    x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
    res = x1_norm - 2 * x1 @ x2.transpose(-2, -1) + x2_norm.transpose(-2, -1)
    return res.clamp_min(0)


class RBFCovariance(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x1, x2, lengthscale, sq_dist_func):
        if any(ctx.needs_input_grad[:2]):
            raise RuntimeError("RBFCovariance cannot compute gradients with respect to x1 and x2")
        needs_grad = any(ctx.needs_input_grad)
        x1_ = x1.div(lengthscale)
        x2_ = x2.div(lengthscale)
        unitless_sq_dist = sq_dist_func(x1_, x2_)
        # clone because inplace operations will mess with what's saved for backward
        unitless_sq_dist_ = unitless_sq_dist.clone() if needs_grad else unitless_sq_dist
        covar_mat = unitless_sq_dist_.div_(-2.0).exp_()
        if needs_grad:
            d_output_d_input = unitless_sq_dist.mul_(covar_mat).div_(lengthscale)
            ctx.save_for_backward(d_output_d_input)
        return covar_mat

    @staticmethod
    def backward(ctx, grad_output):
        d_output_d_input = ctx.saved_tensors[0]
        lengthscale_grad = grad_output * d_output_d_input
        return None, None, lengthscale_grad.sum().reshape(1, 1), None


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, 1))

    @property
    def lengthscale(self):
        return nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        return RBFCovariance.apply(x1, x2, self.lengthscale, sq_dist)


kernel = RBFKernel()
raw_noise = nn.Parameter(torch.tensor(-2.0))
train_x = torch.linspace(0, 1, 8).unsqueeze(-1)
train_y = torch.sin(6 * train_x).squeeze(-1)
optimizer = torch.optim.Adam(list(kernel.parameters()) + [raw_noise], lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    K = kernel(train_x, train_x) + nn.functional.softplus(raw_noise) * torch.eye(8)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(train_y.unsqueeze(-1), L)
    mll = -0.5 * (train_y.unsqueeze(-1) * alpha).sum() - L.diagonal().log().sum() - 4 * math.log(2 * math.pi)
    (-mll).backward()
    optimizer.step()
final_lengthscale = kernel.lengthscale.detach()
