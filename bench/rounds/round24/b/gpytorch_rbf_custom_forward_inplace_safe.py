# label: safe
# why: the chained square_/div_/exp_/mul_ calls in RBFKernel._forward and _vjp act on fresh intermediates inside a custom autograd Function (forward runs without graph recording, backward builds only new tensors), so neither saved inputs nor grad_output are touched.
# source: https://github.com/cornellius-gp/gpytorch/commit/a01121b1d46ad054eb20e8a64387fbc7c03f3294
import torch
import torch.nn as nn

torch.manual_seed(0)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.3))

    @property
    def lengthscale(self):
        return nn.functional.softplus(self.raw_lengthscale)

    def _forward(self, X1, X2):
        X1_ = X1[..., :, None, :]
        X2_ = X2[..., None, :, :]
        diffs = X1_ - X2_
        K = diffs.norm(dim=-1).square_().div_(-2.0).exp_()
        return K

    def _vjp(self, V, X1, X2):
        X1_ = X1[..., :, None, :]
        X2_ = X2[..., None, :, :]
        diffs = X1_ - X2_
        VK = diffs.norm(dim=-1).square_().div_(-2.0).exp_().mul_(V)
        res = diffs.mul_(VK[..., None])
        return res.mul(-1).sum(dim=-2), res.sum(dim=-3)


class KernelFunction(torch.autograd.Function):
    """Custom forward/VJP pair, as KernelLinearOperator uses for RBF/Matern kernels."""

    @staticmethod
    def forward(ctx, X1, X2, kernel):
        ctx.kernel = kernel
        ctx.save_for_backward(X1, X2)
        return kernel._forward(X1, X2)

    @staticmethod
    def backward(ctx, grad_output):
        X1, X2 = ctx.saved_tensors
        d_X1, d_X2 = ctx.kernel._vjp(grad_output, X1, X2)
        return d_X1, d_X2, None


def covariance(kernel, x1, x2):
    x1_ = x1.div(kernel.lengthscale)
    x2_ = x2.div(kernel.lengthscale)
    return KernelFunction.apply(x1_, x2_, kernel)


def main():
    kernel = RBFKernel()
    train_x = torch.randn(6, 2)
    train_y = torch.randn(6)
    covar = covariance(kernel, train_x, train_x) + 0.1 * torch.eye(6)
    mll = -0.5 * train_y @ torch.linalg.solve(covar, train_y) - 0.5 * torch.logdet(covar)
    (-mll).backward()
    return mll.detach(), kernel.raw_lengthscale.grad


mll_value, lengthscale_grad = main()
