# label: hazard raises
# why: ExactGP negates the result of the custom InvMatmul Function in place (`.mul_(-1)`), but InvMatmul saved that result with save_for_backward, so backward through the predictive covariance fails.
# source: https://github.com/cornellius-gp/gpytorch/commit/de72a06a61e8ab005640408c59b10137a097fe81 ("Change in-place mul_ to mul (Fixes #67)", gpytorch/models/exact_gp.py)
import torch
from torch.autograd import Function

torch.manual_seed(0)


class InvMatmul(Function):
    @staticmethod
    def forward(ctx, lhs, rhs):
        res = torch.linalg.solve(lhs, rhs)
        ctx.save_for_backward(lhs, rhs, res)
        return res

    @staticmethod
    def backward(ctx, grad_output):
        lhs, rhs, res = ctx.saved_tensors
        lhs_grad = rhs_grad = None
        if ctx.needs_input_grad[0]:
            lhs_matrix_grad = torch.linalg.solve(lhs.t(), grad_output)
            lhs_matrix_grad = lhs_matrix_grad.mul_(-1)
            lhs_grad = lhs_matrix_grad.matmul(res.t())
        if ctx.needs_input_grad[1]:
            rhs_grad = torch.linalg.solve(lhs.t(), grad_output)
        return lhs_grad, rhs_grad


def inv_matmul(mat1, rhs):
    return InvMatmul.apply(mat1, rhs)


class RBFKernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = torch.nn.Parameter(torch.zeros(1))

    @property
    def lengthscale(self):
        return torch.nn.functional.softplus(self.raw_lengthscale)

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        return torch.exp(-0.5 * torch.cdist(x1_, x2_).pow(2))


class ExactGP(torch.nn.Module):
    def __init__(self, train_inputs, train_targets):
        super().__init__()
        self.train_inputs = train_inputs
        self.train_targets = train_targets
        self.covar_module = RBFKernel()
        self.raw_noise = torch.nn.Parameter(torch.tensor(-2.0))

    def predict(self, test_inputs):
        n = self.train_inputs.size(0)
        train_train_covar = self.covar_module(self.train_inputs, self.train_inputs) \
            + torch.nn.functional.softplus(self.raw_noise) * torch.eye(n)
        train_test_covar = self.covar_module(self.train_inputs, test_inputs)
        test_train_covar = train_test_covar.t()
        test_test_covar = self.covar_module(test_inputs, test_inputs)

        predictive_mean = test_train_covar.matmul(inv_matmul(train_train_covar, self.train_targets.unsqueeze(-1))).squeeze(-1)
        covar_correction_rhs = inv_matmul(train_train_covar, train_test_covar).mul_(-1)  # <-- IPL001: InvMatmul saved its output res for backward
        predictive_covar = test_test_covar + test_train_covar.matmul(covar_correction_rhs)
        return predictive_mean, predictive_covar


train_x = torch.linspace(0, 1, 6).unsqueeze(-1)
train_y = torch.sin(train_x * 6.0).squeeze(-1)
test_x = torch.tensor([[0.25], [0.75]])
model = ExactGP(train_x, train_y)
mean, covar = model.predict(test_x)
loss = (mean - torch.tensor([1.0, -1.0])).pow(2).sum() + covar.diagonal().sum()
loss.backward()
