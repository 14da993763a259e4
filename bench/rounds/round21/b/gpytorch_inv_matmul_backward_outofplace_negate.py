# label: safe
# why: the fix negates out of place (`rhs_solves.mul(-1)`), so the saved solve, which is also the returned output and the GP's mean cache, keeps its value after backward.
# source: https://github.com/cornellius-gp/gpytorch/commit/0eb14c206d5c70503229571d3e5fe302373080d0
import torch
from torch.autograd import Function

torch.manual_seed(0)


def linear_cg(matmul_closure, rhs, max_iter=50, tolerance=1e-10):
    # plain conjugate gradients on an SPD operator, column by column
    result = torch.zeros_like(rhs)
    residual = rhs - matmul_closure(result)
    search = residual.clone()
    rs_old = (residual * residual).sum(0, keepdim=True)
    for _ in range(max_iter):
        mvm = matmul_closure(search)
        alpha = rs_old / (search * mvm).sum(0, keepdim=True)
        result = result + alpha * search
        residual = residual - alpha * mvm
        rs_new = (residual * residual).sum(0, keepdim=True)
        if rs_new.max() < tolerance:
            break
        search = residual + (rs_new / rs_old) * search
        rs_old = rs_new
    return result


class NonLazyTensor:
    def __init__(self, tsr):
        self.tensor = tsr

    def _matmul(self, rhs):
        return torch.matmul(self.tensor, rhs)

    def _quad_form_derivative(self, left_vecs, right_vecs):
        return (left_vecs.matmul(right_vecs.transpose(-1, -2)),)


class InvMatmul(Function):
    @staticmethod
    def forward(ctx, rhs, matrix):
        lazy_var = NonLazyTensor(matrix)
        res = linear_cg(lazy_var._matmul, rhs)
        ctx.save_for_backward(res, rhs, matrix)
        return res

    @staticmethod
    def backward(ctx, grad_output):
        rhs_solves, rhs, matrix = ctx.saved_tensors
        lazy_var = NonLazyTensor(matrix)
        arg_grads = [None]
        rhs_grad = None
        grad_output_solves = linear_cg(lazy_var._matmul, grad_output)
        if ctx.needs_input_grad[1]:
            arg_grads = lazy_var._quad_form_derivative(grad_output_solves, rhs_solves.mul(-1))
        if ctx.needs_input_grad[0]:
            rhs_grad = grad_output_solves
        return tuple([rhs_grad] + list(arg_grads))


class RBFKernel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = torch.nn.Parameter(torch.tensor(0.0))

    def forward(self, x1, x2):
        lengthscale = torch.nn.functional.softplus(self.raw_lengthscale) + 0.1
        sq_dist = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
        return torch.exp(-0.5 * sq_dist / lengthscale ** 2)


class ExactGP(torch.nn.Module):
    def __init__(self, train_x, train_y, noise=0.1):
        super().__init__()
        self.train_x = train_x
        self.train_y = train_y
        self.noise = noise
        self.covar_module = RBFKernel()
        self.mean_cache = None

    def train_loss(self):
        K = self.covar_module(self.train_x, self.train_x)
        K = K + self.noise * torch.eye(K.shape[-1])
        solve = InvMatmul.apply(self.train_y.unsqueeze(-1), K)
        self.mean_cache = solve  # prediction strategy keeps K^{-1} y
        inv_quad = (self.train_y.unsqueeze(-1) * solve).sum()
        logdet = torch.logdet(K)
        return 0.5 * (inv_quad + logdet)

    def predict(self, test_x):
        K_star = self.covar_module(test_x, self.train_x)
        return (K_star @ self.mean_cache).squeeze(-1)


def main():
    train_x = torch.linspace(0, 1, 12).unsqueeze(-1)
    train_y = torch.sin(6 * train_x).squeeze(-1) + 0.05 * torch.randn(12)
    model = ExactGP(train_x, train_y)
    loss = model.train_loss()
    loss.backward()
    grad = model.covar_module.raw_lengthscale.grad.clone()
    with torch.no_grad():
        pred = model.predict(torch.linspace(0, 1, 5).unsqueeze(-1))
    return loss.detach(), grad, pred


loss, lengthscale_grad, pred_mean = main()
