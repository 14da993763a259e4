# label: hazard silent
# why: backward negates the saved solves with mul_(-1), but those solves are the Function's own forward output held by the caller, so the caller's result flips sign after backward.
# source: https://github.com/cornellius-gp/gpytorch/commit/0eb14c206d5c70503229571d3e5fe302373080d0
import torch
from torch.autograd import Function

torch.manual_seed(0)


class NonLazyTensor:
    def __init__(self, tsr):
        self.tensor = tsr

    def _matmul(self, rhs):
        return self.tensor @ rhs

    def _solve(self, rhs):
        return torch.linalg.solve(self.tensor, rhs)

    def _quad_form_derivative(self, left_vecs, right_vecs):
        return (left_vecs @ right_vecs.transpose(-1, -2),)


def representation_tree(*matrix_args):
    return NonLazyTensor(*matrix_args)


class InvMatmul(Function):
    @staticmethod
    def forward(ctx, rhs, *matrix_args):
        lazy_var = representation_tree(*matrix_args)
        ctx.is_vector = False
        res = lazy_var._solve(rhs)
        ctx.save_for_backward(res, rhs, *matrix_args)
        ctx.lazy_var = lazy_var
        return res

    @staticmethod
    def backward(ctx, grad_output):
        rhs_solves = ctx.saved_tensors[0]
        rhs = ctx.saved_tensors[1]
        lazy_var = ctx.lazy_var
        arg_grads = [None]
        rhs_grad = None
        grad_output_solves = lazy_var._solve(grad_output)
        if any(ctx.needs_input_grad[1:]):
            if lazy_var is not None:
                arg_grads = lazy_var._quad_form_derivative(grad_output_solves, rhs_solves.mul_(-1))  # <-- IPL005: negates the saved forward output in place
            else:
                arg_grads = (torch.matmul(grad_output_solves, rhs_solves.mul_(-1).transpose(-1, -2)),)
        if ctx.needs_input_grad[0]:
            rhs_grad = grad_output_solves
        return tuple([rhs_grad] + list(arg_grads))


x = torch.linspace(0, 1, 5).unsqueeze(-1)
raw_lengthscale = torch.tensor(0.3, requires_grad=True)
covar = torch.exp(-0.5 * (x - x.T).pow(2) / raw_lengthscale.exp().pow(2)) + 0.1 * torch.eye(5)
y = torch.randn(5, 1)
res = InvMatmul.apply(y, covar)
inv_quad = (y * res).sum()
inv_quad.backward()
mean_prediction = covar[:2] @ res
