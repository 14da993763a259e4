# label: hazard raises
# why: InvMatmul.backward negates rhs_solves with mul_(-1), but that saved tensor is the very solve returned by forward (a view of the solver output), so the cached solve that predict_mean reuses has been mutated behind autograd's back
# source: https://github.com/cornellius-gp/gpytorch/commit/0eb14c20 ("dont do inplace operations on precomputed caches")
import torch
from torch.autograd import Function

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def linear_cg(matmul_closure, rhs, matrix):
    # stand-in for gpytorch.utils.linear_cg: an exact solve
    return torch.linalg.solve(matrix, rhs)


class InvMatmul(Function):
    @staticmethod
    def forward(ctx, rhs, matrix):
        ctx.is_vector = False
        if rhs.ndimension() == 1:
            rhs = rhs.unsqueeze(-1)
            ctx.is_vector = True

        res = linear_cg(matrix.matmul, rhs, matrix)

        if ctx.is_vector:
            res = res.squeeze(-1)
            rhs = rhs.squeeze(-1)

        ctx.save_for_backward(res, rhs, matrix)
        return res

    @staticmethod
    def backward(ctx, grad_output):
        rhs_solves, rhs, matrix = ctx.saved_tensors
        arg_grad = None
        rhs_grad = None
        if any(ctx.needs_input_grad):
            if ctx.is_vector:
                rhs = rhs.unsqueeze(-1)
                rhs_solves = rhs_solves.unsqueeze(-1)
                grad_output = grad_output.unsqueeze(-1)

            grad_output_solves = linear_cg(matrix.matmul, grad_output, matrix)

            if ctx.needs_input_grad[1]:
                arg_grad = torch.matmul(grad_output_solves, rhs_solves.mul_(-1).transpose(-1, -2))  # <-- IPL005: rhs_solves is the saved forward output that the caller still holds

            if ctx.needs_input_grad[0]:
                rhs_grad = grad_output_solves
                if ctx.is_vector:
                    rhs_grad = rhs_grad.squeeze(-1)
        return rhs_grad, arg_grad


class ExactGP(torch.nn.Module):
    def __init__(self, train_x, train_y):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.raw_lengthscale = torch.nn.Parameter(torch.tensor(-0.5))
        self.noise = 0.1
        self.mean_cache = None

    def kernel(self, a, b):
        ls = torch.nn.functional.softplus(self.raw_lengthscale)
        return torch.exp(-0.5 * (a.unsqueeze(-1) - b.unsqueeze(-2)).pow(2) / ls.pow(2))

    def marginal_log_likelihood(self):
        K = self.kernel(self.train_x, self.train_x) + self.noise * torch.eye(self.train_x.numel())
        solve = InvMatmul.apply(self.train_y, K)
        self.mean_cache = solve  # reused for predictions, as the prediction strategy does
        return -0.5 * (self.train_y * solve).sum() - 0.5 * torch.logdet(K)

    def predict_mean(self, test_x):
        return self.kernel(test_x, self.train_x) @ self.mean_cache


train_x = torch.linspace(0, 1, 6)
train_y = torch.sin(6 * train_x)
model = ExactGP(train_x, train_y)
mll = model.marginal_log_likelihood()
(-mll).backward()
lengthscale_grad = model.raw_lengthscale.grad
pred_mean = model.predict_mean(torch.tensor([0.25, 0.75])).detach()
