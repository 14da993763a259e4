# label: hazard raises no-twin
# why: STConv runs ChebConv on each T[b][t] slice and writes the result back into the same T, so later writes bump the version of the slices the earlier ChebConv calls saved.
# source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/57
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TemporalConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3):
        super(TemporalConv, self).__init__()
        self.conv_1 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_2 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))
        self.conv_3 = nn.Conv2d(in_channels, out_channels, (1, kernel_size))

    def forward(self, X):
        X = X.permute(0, 3, 2, 1)
        P = self.conv_1(X)
        Q = torch.sigmoid(self.conv_2(X))
        PQ = P * Q
        H = F.relu(PQ + self.conv_3(X))
        H = H.permute(0, 3, 2, 1)
        return H


class ChebConv(nn.Module):
    """Dense stand-in for torch_geometric.nn.ChebConv (sym normalization, lambda_max = 2)."""

    def __init__(self, in_channels, out_channels, K, bias=True):
        super(ChebConv, self).__init__()
        self.lins = nn.ModuleList([nn.Linear(in_channels, out_channels, bias=False) for _ in range(K)])
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def __norm__(self, edge_index, num_nodes, edge_weight):
        adj = torch.zeros(num_nodes, num_nodes)
        adj[edge_index[0], edge_index[1]] = edge_weight
        deg_inv_sqrt = adj.sum(1).clamp(min=1e-12).pow(-0.5)
        return -deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]

    def forward(self, x, edge_index, edge_weight):
        L_hat = self.__norm__(edge_index, x.size(0), edge_weight)
        Tx_0 = x
        out = self.lins[0](Tx_0)
        if len(self.lins) > 1:
            Tx_1 = L_hat @ x
            out = out + self.lins[1](Tx_1)
        for lin in self.lins[2:]:
            Tx_2 = 2.0 * (L_hat @ Tx_1) - Tx_0
            out = out + lin(Tx_2)
            Tx_0, Tx_1 = Tx_1, Tx_2
        if self.bias is not None:
            out = out + self.bias
        return out


class STConv(nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels, out_channels, kernel_size, K):
        super(STConv, self).__init__()
        self._temporal_conv1 = TemporalConv(in_channels=in_channels, out_channels=hidden_channels,
                                            kernel_size=kernel_size)
        self._graph_conv = ChebConv(in_channels=hidden_channels, out_channels=hidden_channels, K=K)
        self._temporal_conv2 = TemporalConv(in_channels=hidden_channels, out_channels=out_channels,
                                            kernel_size=kernel_size)
        self._batch_norm = nn.BatchNorm2d(num_nodes)

    def forward(self, X, edge_index, edge_weight=None):
        T = self._temporal_conv1(X)
        for b in range(T.size(0)):
            for t in range(T.size(1)):
                T[b][t] = self._graph_conv(T[b][t], edge_index, edge_weight)  # <-- IPL001: overwrites the slice ChebConv's linear layers saved

        T = F.relu(T)
        T = self._temporal_conv2(T)
        T = T.permute(0, 2, 1, 3)
        T = self._batch_norm(T)
        T = T.permute(0, 2, 1, 3)
        return T


num_nodes = 4
edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
edge_weight = torch.ones(edge_index.size(1))
model = STConv(num_nodes=num_nodes, in_channels=2, hidden_channels=4, out_channels=3, kernel_size=2, K=2)
X = torch.randn(2, 5, num_nodes, 2)  # (batch, time steps, nodes, channels)
out = model(X, edge_index, edge_weight)
loss = out.pow(2).mean()
loss.backward()
