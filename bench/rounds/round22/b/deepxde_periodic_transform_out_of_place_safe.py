# label: safe
# why: after the fix the periodic transform scales out of place (x = x * 2 * math.pi), so the requires-grad trunk input that the PDE jacobians differentiate against is never written; the remaining x += self.b adds into the einsum output, which einsum did not save.
# source: https://github.com/lululxvi/deepxde/commit/544926f86b097ef57bca608fcfdf50aec24441fc ("no inplace", examples/operator/advection_aligned_pideeponet.py)
import math
import torch
import torch.nn as nn

torch.manual_seed(0)

sin = torch.sin
cos = torch.cos
concat = torch.cat


class FNN(nn.Module):
    def __init__(self, layer_sizes, activation):
        super().__init__()
        self.activation = activation
        self.linears = nn.ModuleList(
            nn.Linear(layer_sizes[i - 1], layer_sizes[i]) for i in range(1, len(layer_sizes))
        )

    def forward(self, x):
        for linear in self.linears[:-1]:
            x = self.activation(linear(x))
        return self.linears[-1](x)


class DeepONetCartesianProd(nn.Module):
    def __init__(self, layer_sizes_branch, layer_sizes_trunk, activation):
        super().__init__()
        self.activation_trunk = activation
        self.branch = FNN(layer_sizes_branch, activation)
        self.trunk = FNN(layer_sizes_trunk, activation)
        self.b = nn.Parameter(torch.tensor(0.0))
        self._input_transform = None

    def apply_feature_transform(self, transform):
        self._input_transform = transform

    def forward(self, inputs):
        x_func = inputs[0]
        x_loc = inputs[1]
        x_func = self.branch(x_func)
        if self._input_transform is not None:
            x_loc = self._input_transform(x_loc)
        x_loc = self.activation_trunk(self.trunk(x_loc))
        x = torch.einsum("bi,ni->bn", x_func, x_loc)
        x += self.b
        return x


def periodic(x):
    x, t = x[:, :1], x[:, 1:]
    x = x * 2 * math.pi
    return concat([cos(x), sin(x), cos(2 * x), sin(2 * x), t], 1)


def jacobian(ys, xs, j):
    # dde.grad.jacobian for the Cartesian-product output: one column of d y / d x_loc
    g = torch.autograd.grad(ys.sum(), xs, create_graph=True)[0]
    return g[:, j : j + 1]


def pde(x, y):
    dy_x = jacobian(y, x, j=0)
    dy_t = jacobian(y, x, j=1)
    return dy_t + dy_x


def outputs_losses(net, inputs):
    inputs = tuple(map(lambda x: torch.as_tensor(x).requires_grad_(), inputs))
    outputs = net(inputs)
    residual = pde(inputs[1], outputs)
    return outputs, (residual ** 2).mean()


def main():
    net = DeepONetCartesianProd([50, 32, 32], [5, 32, 32], torch.tanh)
    net.apply_feature_transform(periodic)
    optimizer = torch.optim.Adam(net.parameters(), lr=5e-4)
    v_branch = torch.sin(2 * math.pi * torch.rand(4, 50))
    x_trunk = torch.rand(30, 2)
    optimizer.zero_grad()
    outputs, loss = outputs_losses(net, (v_branch, x_trunk))
    loss.backward()
    optimizer.step()
    return outputs, loss


outputs, loss = main()
