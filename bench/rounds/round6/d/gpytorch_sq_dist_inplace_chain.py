# label: safe
# why: every in-place op in the distance helpers writes into a fresh matmul result that no backward saved (matmul saves its inputs), the diagonal fill_ goes through a view autograd tracks, and exp_ saves its own result
# source: https://github.com/cornellius-gp/gpytorch/blob/cbf15c3c473edf8946f71c9f38995ca76dfebdbe/gpytorch/kernels/kernel.py (parent of cbf15c3c, Distance._jit_sq_dist_*; postprocess_rbf from gpytorch/kernels/rbf_kernel.py)
import torch

torch.manual_seed(0)


def postprocess_rbf(dist_mat):
    return dist_mat.div_(-2).exp_()


class Distance(torch.nn.Module):
    def __init__(self, postprocess_script):
        super().__init__()
        self._postprocess = postprocess_script

    def _jit_sq_dist_x1_neq_x2(self, x1, x2, postprocess):
        # Compute squared distance matrix using quadratic expansion
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)

        res = x1.matmul(x2.transpose(-2, -1)).mul_(-2).add_(x2_norm.transpose(-2, -1)).add_(x1_norm)

        # Zero out negative values
        res.clamp_min_(0)
        return self._postprocess(res) if bool(postprocess) else res

    def _jit_sq_dist_x1_eq_x2(self, x1, postprocess):
        # Compute squared distance matrix using quadratic expansion
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        res = x1.matmul(x1.transpose(-2, -1)).mul_(-2).add_(x1_norm.transpose(-2, -1)).add_(x1_norm)
        res.diagonal(dim1=-2, dim2=-1).fill_(0)

        # Zero out negative values
        res.clamp_min_(0)
        return self._postprocess(res) if bool(postprocess) else res


class RBFKernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = torch.nn.Parameter(torch.zeros(1, 1, 1))
        self.distance_module = None

    @property
    def lengthscale(self):
        return torch.nn.functional.softplus(self.raw_lengthscale)

    def covar_dist(self, x1, x2, dist_postprocess_func, postprocess=True):
        x1_eq_x2 = torch.equal(x1, x2)
        postprocess = torch.tensor(postprocess)
        # Cache the Distance object or else JIT will recompile every time
        if not self.distance_module or self.distance_module._postprocess != dist_postprocess_func:
            self.distance_module = Distance(dist_postprocess_func)
        if x1_eq_x2:
            return self.distance_module._jit_sq_dist_x1_eq_x2(x1, postprocess)
        return self.distance_module._jit_sq_dist_x1_neq_x2(x1, x2, postprocess)

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        return self.covar_dist(x1_, x2_, dist_postprocess_func=postprocess_rbf, postprocess=True)


kernel = RBFKernel()
train_x = torch.randn(2, 5, 3)
train_y = torch.randn(2, 5, 1)
test_x = torch.randn(2, 4, 3)

train_covar = kernel(train_x, train_x) + 0.1 * torch.eye(5)
cross_covar = kernel(test_x, train_x)

chol = torch.linalg.cholesky(train_covar)
alpha = torch.cholesky_solve(train_y, chol)
pred_mean = cross_covar @ alpha
mll = -0.5 * (train_y * alpha).sum() - torch.diagonal(chol, dim1=-2, dim2=-1).log().sum()
loss = -mll + pred_mean.pow(2).mean()
loss.backward()
