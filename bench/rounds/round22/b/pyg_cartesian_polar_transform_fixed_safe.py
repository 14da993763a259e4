# label: safe
# why: after the fix the Cartesian and Polar transforms normalise out of place (cart = cart / (2 * cart.abs().max()), rho = rho / rho.max()), so the tensors abs(), norm() and max() saved stay intact; the remaining cart += 0.5 and theta += ... only write the fresh division/atan2 results, which nothing saved.
# source: https://github.com/pyg-team/pytorch_geometric/commit/7bac754b1d6a26de8294c07d4a5276e3313216d3 ("fixed backprop", torch_geometric/transform/cartesian.py and polar.py)
from math import pi as PI

import torch
import torch.nn as nn

torch.manual_seed(0)


class Data(object):
    def __init__(self, pos, index, weight=None):
        self.pos = pos
        self.index = index
        self.weight = weight


class Cartesian(object):
    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight

        cart = pos[col] - pos[row]
        cart = cart / (2 * cart.abs().max())
        cart += 0.5
        cart = cart.view(-1, 1) if cart.dim() == 1 else cart

        if pseudo is not None:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, cart.type_as(pseudo)], dim=-1)
        else:
            data.weight = cart
        return data


class Polar(object):
    def __call__(self, data):
        (row, col), pos, pseudo = data.index, data.pos, data.weight

        cart = pos[col] - pos[row]
        rho = torch.norm(cart, p=2, dim=-1)
        rho = rho / rho.max()
        theta = torch.atan2(cart[..., 1], cart[..., 0]) / (2 * PI)
        theta += (theta < 0).type_as(theta)
        polar = torch.stack([rho, theta], dim=1)

        if pseudo is not None:
            pseudo = pseudo.view(-1, 1) if pseudo.dim() == 1 else pseudo
            data.weight = torch.cat([pseudo, polar.type_as(pos)], dim=-1)
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


def main():
    num_nodes = 8
    base_pos = torch.rand(num_nodes, 2)
    offset_net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))
    edge_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    row = torch.arange(num_nodes).repeat_interleave(2)
    col = torch.stack([(torch.arange(num_nodes) + 1) % num_nodes, (torch.arange(num_nodes) + 3) % num_nodes], 1).view(-1)
    pos = base_pos + 0.1 * offset_net(base_pos)
    data = Compose([Cartesian(), Polar()])(Data(pos, torch.stack([row, col])))
    edge_score = edge_net(data.weight).squeeze(-1)
    loss = (edge_score - 1.0).pow(2).mean()
    loss.backward()
    return data.weight, loss


pseudo, loss = main()
