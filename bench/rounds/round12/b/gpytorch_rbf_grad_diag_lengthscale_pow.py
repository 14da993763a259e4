# label: safe
# why: the diag branch squares self.lengthscale with pow_, but that property builds a fresh softplus tensor on every access and softplus's backward does not need its output, so the in-place square leaves every gradient unchanged
# source: https://github.com/cornellius-gp/gpytorch/issues/1389 (pre-fix code of commit 498a4bc8b9637940577852bb9d529c346c6e9363)
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class RBFKernel(torch.nn.Module):
    def __init__(self, ard_num_dims=1):
        super().__init__()
        self.raw_lengthscale = torch.nn.Parameter(torch.zeros(1, ard_num_dims))

    @property
    def lengthscale(self):
        return F.softplus(self.raw_lengthscale)

    def forward(self, x1, x2, diag=False):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        if diag:
            return torch.exp(-0.5 * (x1_ - x2_).pow(2).sum(-1))
        d = (x1_.unsqueeze(-2) - x2_.unsqueeze(-3)).pow(2).sum(-1)
        return torch.exp(-0.5 * d)


class RBFKernelGrad(RBFKernel):
    def forward(self, x1, x2, diag=False):
        batch_shape = x1.shape[:-2]
        n1, d = x1.shape[-2:]
        n2 = x2.shape[-2]
        if not diag:
            raise NotImplementedError("reduced to the diag branch")
        if not (n1 == n2 and torch.equal(x1, x2)):
            raise RuntimeError("diag=True only works when x1 == x2")

        kernel_diag = super(RBFKernelGrad, self).forward(x1, x2, diag=True)
        grad_diag = torch.ones(*batch_shape, n2, d, device=x1.device, dtype=x1.dtype) / self.lengthscale.pow_(2)
        grad_diag = grad_diag.transpose(-1, -2).reshape(*batch_shape, n2 * d)
        k_diag = torch.cat((kernel_diag, grad_diag), dim=-1)
        pi = torch.arange(n2 * (d + 1)).view(d + 1, n2).t().reshape((n2 * (d + 1)))
        return k_diag[..., pi]


k = RBFKernelGrad(ard_num_dims=2)
train_x = torch.rand(3, 2)
z = k(train_x, train_x, diag=True)
z[1].backward()
raw_lengthscale_grad = k.raw_lengthscale.grad
