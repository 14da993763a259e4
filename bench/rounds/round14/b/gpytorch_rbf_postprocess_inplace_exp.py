# label: safe
# why: clamp_min_/div_/exp_ act on the fresh distance matrix (exp_ saves its own result), so kernel values and lengthscale gradients equal the out-of-place chain
# source: https://github.com/cornellius-gp/gpytorch/issues/1803 (gpytorch/kernels/kernel.py and rbf_kernel.py as quoted in the trace)
import torch
import torch.nn as nn

torch.manual_seed(0)


def postprocess_rbf(dist_mat):
    return dist_mat.div_(-2).exp_()


class Distance(nn.Module):
    def _sq_dist(self, x1, x2, postprocess, x1_eq_x2=False):
        adjustment = x1.mean(-2, keepdim=True)
        x1 = x1 - adjustment
        x2 = x2 - adjustment
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
        x1_ = torch.cat([-2.0 * x1, x1_norm, torch.ones_like(x1_norm)], dim=-1)
        x2_ = torch.cat([x2, torch.ones_like(x2_norm), x2_norm], dim=-1)
        res = x1_.matmul(x2_.transpose(-2, -1))
        if x1_eq_x2:
            res.diagonal(dim1=-2, dim2=-1).fill_(0)
        # Zero out negative values
        res.clamp_min_(0)
        return postprocess(res)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, 1))
        self.distance_module = Distance()

    @property
    def lengthscale(self):
        return nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        return self.distance_module._sq_dist(x1_, x2_, postprocess=postprocess_rbf, x1_eq_x2=torch.equal(x1, x2))


kernel = RBFKernel()
train_x = torch.randn(7, 2)
test_x = torch.randn(3, 2)
K_train = kernel(train_x, train_x)
K_cross = kernel(test_x, train_x)
objective = K_train.sum() + (K_cross ** 2).sum()
objective.backward()
