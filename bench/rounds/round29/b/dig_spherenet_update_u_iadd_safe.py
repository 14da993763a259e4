# label: safe
# why: SphereNet's update_u accumulates the graph readout in place (`u += scatter(v, batch, dim=0)`) into a tensor that starts as torch.zeros_like and is only ever summed into, so no backward formula saved it and the molecular-energy gradients are unchanged.
# source: https://github.com/divelab/DIG/blob/21476b079c9226f38915dcd082b5c2ee0cddaac8/dig/threedgraph/method/spherenet/spherenet.py (update_u, SphereNet.forward)
import torch
import torch.nn as nn

torch.manual_seed(0)


def scatter(src, index, dim=0, dim_size=None):
    dim_size = int(index.max()) + 1 if dim_size is None else dim_size
    out = torch.zeros(dim_size, *src.shape[1:], dtype=src.dtype)
    return out.index_add(dim, index, src)


class update_e(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.lin = nn.Linear(2 * hidden + 1, hidden)

    def forward(self, x, dist, edge_index):
        i, j = edge_index
        return torch.tanh(self.lin(torch.cat([x[i], x[j], dist.unsqueeze(-1)], dim=-1)))


class update_v(nn.Module):
    def __init__(self, hidden, out_channels):
        super().__init__()
        self.lin_up = nn.Linear(hidden, hidden)
        self.lin = nn.Linear(hidden, out_channels)

    def forward(self, e, i, num_nodes):
        v = scatter(e, i, dim=0, dim_size=num_nodes)
        v = torch.tanh(self.lin_up(v))
        v = self.lin(v)
        return v


class update_u(torch.nn.Module):
    def __init__(self):
        super(update_u, self).__init__()

    def forward(self, u, v, batch):
        u += scatter(v, batch, dim=0)
        return u


class SphereNet(nn.Module):
    def __init__(self, hidden=16, out_channels=1, num_layers=2):
        super().__init__()
        self.emb = nn.Embedding(10, hidden)
        self.init_e = update_e(hidden)
        self.init_v = update_v(hidden, out_channels)
        self.init_u = update_u()
        self.update_es = nn.ModuleList([update_e(hidden) for _ in range(num_layers)])
        self.update_vs = nn.ModuleList([update_v(hidden, out_channels) for _ in range(num_layers)])
        self.update_us = nn.ModuleList([update_u() for _ in range(num_layers)])
        self.proj = nn.Linear(out_channels, hidden)

    def forward(self, z, pos, batch, edge_index):
        i, j = edge_index
        dist = (pos[i] - pos[j]).norm(dim=-1)
        x = self.emb(z)
        e = self.init_e(x, dist, edge_index)
        v = self.init_v(e, i, z.shape[0])
        u = self.init_u(torch.zeros_like(scatter(v, batch, dim=0)), v, batch)
        for update_e, update_v, update_u in zip(self.update_es, self.update_vs, self.update_us):
            e = update_e(x + self.proj(v), dist, edge_index)
            v = update_v(e, i, z.shape[0])
            u = update_u(u, v, batch)
        return u


def main():
    n = 9
    z = torch.randint(0, 10, (n,))
    pos = torch.randn(n, 3, requires_grad=True)
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1, 1])
    src = torch.tensor([0, 1, 2, 3, 1, 4, 5, 6, 7, 8, 5])
    dst = torch.tensor([1, 2, 3, 0, 0, 5, 6, 7, 8, 4, 8])
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    model = SphereNet()
    energy = model(z, pos, batch, edge_index)
    forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
    loss = energy.pow(2).mean() + forces.pow(2).mean()
    loss.backward()
    return energy.detach(), forces.detach(), model.emb.weight.grad


energy, forces, emb_grad = main()
