# label: hazard raises
# why: the Genred-style Function saves its result for backward, and K_points[:, :3] = ... / q divides that very output in place, so backward unpacks a tensor at a newer version.
# source: https://github.com/getkeops/keops/issues/77
import torch

torch.manual_seed(0)


def _sqdist(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)


def _gaussian_product(gamma_f, gamma_l, x, u, y, v, b):
    K = torch.exp(-gamma_f * _sqdist(x, y)) * torch.exp(-gamma_l * _sqdist(u, v))
    return K @ b


class GenredAutograd(torch.autograd.Function):
    """Kernel reduction sum_j K(x_i, y_j) b_j with a hand-written backward, as KeOps does."""

    @staticmethod
    def forward(ctx, gamma_f, gamma_l, x, u, y, v, b):
        result = _gaussian_product(gamma_f, gamma_l, x, u, y, v, b)
        ctx.save_for_backward(gamma_f, gamma_l, x, u, y, v, b, result)
        return result

    @staticmethod
    def backward(ctx, G):
        gamma_f, gamma_l, x, u, y, v, b, result = ctx.saved_tensors
        with torch.enable_grad():
            inputs = [t.detach().requires_grad_(t.requires_grad) for t in (x, u, y, v, b)]
            out = _gaussian_product(gamma_f, gamma_l, *inputs)
            wrt = [t for t in inputs if t.requires_grad]
            grads = iter(torch.autograd.grad(out, wrt, G))
        return (None, None) + tuple(next(grads) if t.requires_grad else None for t in inputs)


class Kernel:
    def __init__(self, name):
        self.name = name


def kernel_product(params, x, y, b):
    gamma_f, gamma_l = params["gamma"]
    return GenredAutograd.apply(gamma_f, gamma_l, x[0], x[1], y[0], y[1], b)


sigma_f = torch.tensor([1.])
sigma_l = torch.tensor([1.])
params = {
    "id": Kernel("gaussian(x,y) * gaussian(u,v)"),
    "gamma": (.5 / sigma_f ** 2, .5 / sigma_l ** 2),
}

N = 6
M = 8
y = torch.rand((N, 5)).contiguous()
y.requires_grad = True
x = torch.rand((M, 5)).contiguous()
x.requires_grad = True
K_points = torch.rand((N, 4)).contiguous()
grid_x = torch.rand((M, 4)).contiguous()

K_points = kernel_product(params, (y, K_points), (x, grid_x), grid_x)
q = (K_points[:, 3:].clone() + 0.0000000001)
K_points[:, :3] = K_points[:, :3].clone() / q  # <-- IPL001: writes into the Function output it saved for backward

loss = torch.dot(K_points.view(-1), torch.ones_like(K_points).view(-1))
loss.backward()
