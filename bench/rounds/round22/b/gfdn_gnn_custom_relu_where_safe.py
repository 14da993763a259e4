# label: safe
# why: with the maintainer's fix GCN_NET activates with custom_relu (torch.where), which saves only the x > 0 mask, so the in-place x[edge_u_id] = x[edge_u_id] + h[i] writes into a tensor no backward node saved (the next layer reads x only after the write).
# source: https://github.com/yujianke100/GFDN/issues/4 (code: GNN.py and main.py GNN.forward at 9365551)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Linear
from torch.nn.parameter import Parameter

torch.manual_seed(0)


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        n = x.size(0)
        adj = torch.eye(n)
        adj[edge_index[0], edge_index[1]] = 1.0
        deg_inv_sqrt = adj.sum(1).pow(-0.5)
        adj = deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]
        return adj @ self.lin(x) + self.bias


def custom_relu(x):
    return torch.where(x > 0, x, torch.tensor(0.0))


class GCN_NET(torch.nn.Module):
    def __init__(self, in_feature, out_feature):
        super(GCN_NET, self).__init__()
        self.gcn = GCNConv(in_feature, out_feature)

    def forward(self, x, edge_index, active=True):
        x = self.gcn(x, edge_index)
        if active:
            x = custom_relu(x)
        return x


class AE(nn.Module):
    def __init__(self, n_enc, hidden, n_input, n_z):
        super(AE, self).__init__()
        self.enc_in = Linear(n_input, n_enc)
        self.hidden_enc = nn.ModuleList([Linear(n_enc, n_enc) for i in range(hidden)])
        self.z_layer = Linear(n_enc, n_z)
        self.dec_in = Linear(n_z, n_enc)
        self.x_bar_layer = Linear(n_enc, n_input)

    def forward(self, x):
        enc_result = []
        enc_result.append(F.relu(self.enc_in(x)))
        for layer in self.hidden_enc:
            enc_result.append(F.relu(layer(enc_result[-1])))
        z = self.z_layer(enc_result[-1])
        dec = F.relu(self.dec_in(z))
        x_bar = self.x_bar_layer(dec)
        return x_bar, enc_result, z


class GNN(nn.Module):
    def __init__(self, n_input, n_clusters, n_enc, hidden, n_z):
        super(GNN, self).__init__()
        self.ae = AE(n_enc, hidden, n_input, n_z)
        self.gnn_in = GCN_NET(n_input, n_enc)
        self.hidden_gnn = nn.ModuleList([GCN_NET(n_enc, n_enc) for i in range(hidden)])
        self.gnn_nz = GCN_NET(n_enc, n_z)
        self.gnn_cluster = GCN_NET(n_z, n_clusters)
        self.cluster_layer = Parameter(torch.Tensor(n_clusters, n_z))
        torch.nn.init.xavier_normal_(self.cluster_layer.data)
        self.v = 1

    def forward(self, x, edge_u_x, edge_u_id, edge_index, train=True):
        q = 0
        x_bar, h, z = self.ae(edge_u_x)
        x = self.gnn_in(x, edge_index)
        for i, layer in enumerate(self.hidden_gnn):
            x[edge_u_id] = x[edge_u_id] + h[i]
            x = layer(x, edge_index)
        x[edge_u_id] = x[edge_u_id] + h[-1]
        x = self.gnn_nz(x, edge_index)
        x[edge_u_id] = x[edge_u_id] + z
        x = self.gnn_cluster(x, edge_index, active=False)
        x = torch.sigmoid(x[edge_u_id])
        if train:
            q = 1.0 / (1.0 + torch.sum(torch.pow(z.unsqueeze(1) - self.cluster_layer, 2), 2) / self.v)
            q = q.pow((self.v + 1.0) / 2.0)
            q = (q.t() / torch.sum(q, 1)).t()
        return x, x_bar, q


def target_distribution(q):
    weight = q**2 / q.sum(0)
    return (weight.t() / weight.sum(1)).t()


def main():
    n_nodes, n_input = 12, 6
    model = GNN(n_input=n_input, n_clusters=4, n_enc=8, hidden=1, n_z=5)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(n_nodes, n_input)
    edge_index = torch.randint(0, n_nodes, (2, 30))
    edge_u_id = torch.arange(0, n_nodes, 2)
    edge_u_x = x[edge_u_id]
    y = torch.randint(0, 2, (len(edge_u_id), 4)).float()
    model.train()
    optimizer.zero_grad()
    out, x_bar, q = model(x, edge_u_x, edge_u_id, edge_index)
    p = target_distribution(q).detach()
    label_loss = F.binary_cross_entropy(out, y)
    ae_loss = F.mse_loss(x_bar, edge_u_x)
    kl_loss = F.kl_div(q.log(), p, reduction='batchmean')
    loss = label_loss + ae_loss + 0.1 * kl_loss
    loss.backward()
    optimizer.step()
    return out, loss


out, loss = main()
