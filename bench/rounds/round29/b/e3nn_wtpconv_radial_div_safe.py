# label: safe
# why: WTPConv divides the radial-model output w in place by sqrt(n_norm); w is the fresh result of the last linear layer, which its backward does not need, so the in-place scaling leaves the gradients intact.
# source: https://github.com/e3nn/e3nn/commit/6dc74d49e2199b6674ab253e13529eda3c8beb58 (pre-fix e3nn/point/message_passing.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


def swish(x):
    return x * torch.sigmoid(x)


class GaussianRadialModel(nn.Module):
    def __init__(self, num_out, max_radius=3.0, number_of_basis=5, h=16):
        super().__init__()
        self.register_buffer("centers", torch.linspace(0, max_radius, number_of_basis))
        self.gamma = number_of_basis / max_radius
        self.weights = nn.ParameterList([
            nn.Parameter(torch.randn(number_of_basis, h)),
            nn.Parameter(torch.randn(h, num_out)),
        ])

    def forward(self, r):
        x = torch.exp(-self.gamma * (r.unsqueeze(-1) - self.centers) ** 2)
        x = swish(x @ self.weights[0] / math.sqrt(x.shape[-1]))
        return x @ self.weights[1] / math.sqrt(x.shape[-1])


class WeightedTensorProduct(nn.Module):
    def forward(self, x, sh, w):
        # [num_messages, dim_in] x [num_messages, dim_sh] weighted by w -> [num_messages, dim_out]
        outer = torch.einsum('ei,ej->eij', x, sh).reshape(x.shape[0], -1)
        return outer * w


class WTPConv(nn.Module):
    def __init__(self, dim_in, dim_sh):
        super().__init__()
        self.tp = WeightedTensorProduct()
        self.nweight = dim_in * dim_sh
        self.rm = GaussianRadialModel(self.nweight)

    def forward(self, features, edge_index, edge_r, sh, size=None, n_norm=1):
        w = self.rm(edge_r.norm(dim=1))  # [num_messages, nweight]
        w.div_(n_norm ** 0.5)
        return self.propagate(edge_index, size=size, x=features, sh=sh, w=w)

    def propagate(self, edge_index, size, x, sh, w):
        x_j = x[edge_index[1]]
        msg = self.message(x_j, sh, w)
        out = torch.zeros(size, msg.shape[-1])
        return out.index_add(0, edge_index[0], msg)

    def message(self, x_j, sh, w):
        return self.tp(x_j, sh, w)


def main():
    num_nodes = 6
    pos = torch.randn(num_nodes, 3, requires_grad=True)
    features = torch.randn(num_nodes, 4, requires_grad=True)
    edge_index = torch.tensor([[0, 0, 1, 2, 3, 4, 5, 5], [1, 2, 0, 3, 4, 5, 0, 1]])
    edge_r = pos[edge_index[1]] - pos[edge_index[0]]
    sh = torch.cat([torch.ones(edge_r.shape[0], 1), edge_r / edge_r.norm(dim=1, keepdim=True)], dim=1)
    conv = WTPConv(4, 4)
    out = conv(features, edge_index, edge_r, sh, size=num_nodes, n_norm=2)
    loss = out.pow(2).sum()
    loss.backward()
    return out.detach(), pos.grad, features.grad, conv.rm.weights[1].grad


out, pos_grad, feat_grad, w_grad = main()
