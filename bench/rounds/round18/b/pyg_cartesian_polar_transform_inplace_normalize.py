# label: hazard raises
# why: the Cartesian and Polar pseudo-coordinate transforms normalise in place (cart /= ..., rho /= ...) right after cart.abs() and torch.norm saved those tensors, so backprop into learned node positions fails
# source: https://github.com/pyg-team/pytorch_geometric/commit/30e86fc086eae2d8b7ff383dff0b4287273ccef8
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
PI = math.pi


class Data(object):
    def __init__(self, x=None, pos=None, index=None, weight=None, target=None):
        self.x, self.pos, self.index, self.weight, self.target = x, pos, index, weight, target


class Cartesian(object):
    def __init__(self, cat=True):
        self.cat = cat

    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight

        cart = pos[col] - pos[row]
        cart /= 2 * cart.abs().max()  # <-- IPL001: cart.abs() saved cart for backward
        cart += 0.5
        cart = cart.view(-1, 1) if cart.dim() == 1 else cart

        if pseudo is not None and self.cat:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, cart.type_as(pseudo)], dim=-1)
        else:
            data.weight = cart
        return data


class Polar(object):
    def __init__(self, cat=True):
        self.cat = cat

    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight

        cart = pos[col] - pos[row]
        rho = torch.norm(cart, p=2, dim=-1)
        rho /= rho.max()  # <-- IPL001: torch.norm saved its output rho for backward
        theta = torch.atan2(cart[..., 1], cart[..., 0]) / (2 * PI)
        theta = theta + (theta < 0).type_as(theta)
        polar = torch.stack([rho, theta], dim=1)

        if pseudo is not None and self.cat:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, polar.type_as(pseudo)], dim=-1)
        else:
            data.weight = polar
        return data


class Compose(object):
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, data):
        for t in self.transforms:
            data = t(data)
        return data


class EdgeConv(nn.Module):
    """Edge-conditioned convolution: messages weighted by an MLP of the pseudo-coordinates."""

    def __init__(self, in_channels, out_channels, dim):
        super().__init__()
        self.kernel = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, in_channels * out_channels))
        self.root = nn.Linear(in_channels, out_channels)
        self.in_channels, self.out_channels = in_channels, out_channels

    def forward(self, x, index, pseudo):
        row, col = index
        w = self.kernel(pseudo).view(-1, self.in_channels, self.out_channels)
        msg = torch.bmm(x[col].unsqueeze(1), w).squeeze(1)
        out = torch.zeros(x.size(0), self.out_channels).index_add(0, row, msg)
        return out + self.root(x)


class DeformNet(nn.Module):
    """Predicts a position offset per node, then convolves on the deformed geometry."""

    def __init__(self):
        super().__init__()
        self.offset = nn.Linear(3, 2)
        self.transform = Compose([Cartesian(cat=False), Polar()])
        self.conv1 = EdgeConv(3, 8, dim=4)
        self.lin = nn.Linear(8, 2)

    def forward(self, data):
        data.pos = data.pos + 0.1 * torch.tanh(self.offset(data.x))
        data = self.transform(data)
        x = torch.relu(self.conv1(data.x, data.index, data.weight))
        return self.lin(x)


num_nodes = 6
pos = torch.rand(num_nodes, 2)
index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 0],
                      [1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 0, 5]])
data = Data(x=torch.randn(num_nodes, 3), pos=pos, index=index, target=torch.randint(0, 2, (num_nodes,)))
model = DeformNet()
out = model(data)
loss = nn.functional.cross_entropy(out, data.target)
loss.backward()
