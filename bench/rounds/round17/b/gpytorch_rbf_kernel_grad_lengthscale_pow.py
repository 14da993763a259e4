# label: safe
# why: lengthscale is a property that rebuilds a fresh softplus output on every access and softplus keeps its input, not its output, so pow_ on that temporary changes nothing anyone else reads.
# source: https://github.com/cornellius-gp/gpytorch/commit/498a4bc8b9637940577852bb9d529c346c6e9363
import torch
import torch.nn as nn

torch.manual_seed(0)


class Positive:
    def transform(self, tensor):
        return nn.functional.softplus(tensor)


class RBFKernel(nn.Module):
    def __init__(self, ard_num_dims):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, ard_num_dims))
        self.raw_lengthscale_constraint = Positive()

    @property
    def lengthscale(self):
        return self.raw_lengthscale_constraint.transform(self.raw_lengthscale)

    def forward(self, x1, x2, diag=False):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        if diag:
            return torch.exp(-0.5 * (x1_ - x2_).pow(2).sum(-1))
        return torch.exp(-0.5 * (x1_.unsqueeze(-2) - x2_.unsqueeze(-3)).pow(2).sum(-1))


class RBFKernelGrad(RBFKernel):
    def forward(self, x1, x2, diag=False):
        batch_shape = x1.shape[:-2]
        n2, d = x2.shape[-2:]
        if not diag:
            raise NotImplementedError
        kernel_diag = super(RBFKernelGrad, self).forward(x1, x2, diag=True)
        grad_diag = torch.ones(*batch_shape, n2, d, device=x1.device, dtype=x1.dtype) / self.lengthscale.pow_(2)
        grad_diag = grad_diag.transpose(-1, -2).reshape(*batch_shape, n2 * d)
        k_diag = torch.cat((kernel_diag, grad_diag), dim=-1)
        pi = torch.arange(n2 * (d + 1)).view(d + 1, n2).t().reshape((n2 * (d + 1)))
        return k_diag[..., pi]


kernel = RBFKernelGrad(ard_num_dims=2)
x = torch.randn(4, 2)
k_diag = kernel(x, x, diag=True)
loss = k_diag.sum()
loss.backward()
