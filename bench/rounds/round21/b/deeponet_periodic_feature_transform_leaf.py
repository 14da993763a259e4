# label: hazard raises
# why: the periodic feature transform scales the trunk input `x *= 2 * math.pi` in place, but deepxde's PyTorch backend marks the input grid with requires_grad_(), so it is a leaf that requires grad and the in-place multiply raises.
# source: https://github.com/lu-group/deeponet-fno/issues/4
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def periodic(x):
    x *= 2 * math.pi  # <-- IPL003
    return torch.cat(
        [torch.cos(x), torch.sin(x), torch.cos(2 * x), torch.sin(2 * x)], 1
    )


class FNN(nn.Module):
    def __init__(self, layer_sizes):
        super().__init__()
        self.linears = nn.ModuleList(
            [nn.Linear(layer_sizes[i - 1], layer_sizes[i]) for i in range(1, len(layer_sizes))]
        )

    def forward(self, x):
        for linear in self.linears[:-1]:
            x = torch.tanh(linear(x))
        return self.linears[-1](x)


class DeepONetCartesianProd(nn.Module):
    def __init__(self, layer_sizes_branch, layer_sizes_trunk):
        super().__init__()
        self.branch = FNN(layer_sizes_branch)
        self.trunk = FNN(layer_sizes_trunk)
        self.b = nn.Parameter(torch.tensor(0.0))
        self._input_transform = None

    def apply_feature_transform(self, transform):
        self._input_transform = transform

    def forward(self, inputs):
        x_func, x_loc = inputs
        x_func = self.branch(x_func)
        if self._input_transform is not None:
            x_loc = self._input_transform(x_loc)
        x_loc = torch.tanh(self.trunk(x_loc))
        x = torch.einsum("bi,ni->bn", x_func, x_loc)
        return x + self.b


def outputs_losses(net, inputs, targets):
    # deepxde pytorch backend: inputs become leaves that require grad
    x_func = torch.as_tensor(inputs[0])
    x_loc = torch.as_tensor(inputs[1])
    x_loc.requires_grad_()
    outputs = net((x_func, x_loc))
    return ((outputs - targets) ** 2).mean()


def main():
    m = 16
    net = DeepONetCartesianProd([m, 32, 32], [4, 32, 32])
    net.apply_feature_transform(periodic)
    x_branch = torch.randn(8, m)
    grid = torch.linspace(0, 1, 10).unsqueeze(1)
    y_train = torch.randn(8, 10)
    loss = outputs_losses(net, (x_branch, grid), y_train)
    loss.backward()
    return loss.detach(), net.branch.linears[0].weight.grad, net.trunk.linears[0].weight.grad


loss, branch_grad, trunk_grad = main()
