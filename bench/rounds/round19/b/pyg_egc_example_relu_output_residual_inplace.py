# label: hazard raises
# why: ReLU keeps its output for backward, and the residual `x += identity` right after act(x) overwrites that output in place
# source: https://github.com/pyg-team/pytorch_geometric/commit/55fd7a9854c88e76fb13986f3f92e60d4720d222 (examples/egc.py)
import torch
import torch.nn.functional as F
from torch.nn import BatchNorm1d, Embedding, Linear, ModuleList, ReLU, Sequential

torch.manual_seed(0)


class AtomEncoder(torch.nn.Module):
    def __init__(self, emb_dim, feature_dims=(5, 3)):
        super().__init__()
        self.atom_embedding_list = ModuleList([Embedding(d, emb_dim) for d in feature_dims])

    def forward(self, x):
        x_embedding = 0
        for i in range(x.shape[1]):
            x_embedding = x_embedding + self.atom_embedding_list[i](x[:, i])
        return x_embedding


class EGConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, num_heads=2, num_bases=2):
        super().__init__()
        self.num_heads, self.num_bases = num_heads, num_bases
        self.bases_lin = Linear(in_channels, (out_channels // num_heads) * num_bases, bias=False)
        self.comb_lin = Linear(in_channels, num_heads * num_bases)

    def forward(self, x, edge_index):
        n = x.size(0)
        row, col = edge_index
        deg = torch.zeros(n).index_add(0, col, torch.ones(col.numel())) + 1
        norm = (deg[row] * deg[col]).rsqrt().unsqueeze(-1)
        bases = self.bases_lin(x)
        agg = bases.index_add(0, col, norm * bases[row])
        weightings = self.comb_lin(x).view(n, self.num_heads, self.num_bases)
        out = torch.einsum("nhb,nbf->nhf", weightings, agg.view(n, self.num_bases, -1))
        return out.reshape(n, -1)


def global_mean_pool(x, batch):
    size = int(batch.max()) + 1
    total = torch.zeros(size, x.size(1)).index_add(0, batch, x)
    count = torch.zeros(size).index_add(0, batch, torch.ones(batch.numel())).clamp(min=1)
    return total / count.unsqueeze(-1)


class Net(torch.nn.Module):
    def __init__(self, hidden=8, layers=2):
        super().__init__()
        self.embedding = AtomEncoder(hidden)
        self.graph_layers = ModuleList()
        for _ in range(layers):
            self.graph_layers.append(ModuleList([EGConv(hidden, hidden), BatchNorm1d(hidden), ReLU()]))
        self.pool = global_mean_pool
        self.mlp = Sequential(Linear(hidden, hidden // 2, bias=False), BatchNorm1d(hidden // 2), ReLU(), Linear(hidden // 2, 1))

    def forward(self, x, edge_index, batch):
        x = self.embedding(x)
        for gcn, bn, act in self.graph_layers:
            identity = x
            x = gcn(x=x, edge_index=edge_index)
            x = bn(x)
            x = act(x)
            x += identity  # <-- IPL001: overwrites the ReLU output that ReLU saved for backward
        x = self.pool(x, batch)
        return self.mlp(x)


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.stack([torch.randint(0, 5, (7,)), torch.randint(0, 3, (7,))], dim=1)
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6], [1, 0, 2, 1, 4, 3, 6, 5]])
batch = torch.tensor([0, 0, 0, 1, 1, 2, 2])
y = torch.tensor([[1.0], [0.0], [1.0]])
optimizer.zero_grad()
out = model(x, edge_index, batch)
loss = F.binary_cross_entropy_with_logits(out, y)
loss.backward()
