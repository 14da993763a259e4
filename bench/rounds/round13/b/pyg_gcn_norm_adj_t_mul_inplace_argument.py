# label: hazard raises
# why: without self-loops gcn_norm scales the caller's data.adj_t with mul_, so the second layer's normalization rewrites the adjacency that the first layer's propagation (adj_t @ x) saved for backward
# source: https://github.com/pyg-team/pytorch_geometric/pull/1553 (merge commit a6a7ab92e24660582d4d1ff8a54b19c2bf5d211a)
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def mul_(adj_t, other):
    # torch_sparse.mul_: scales the stored values of the adjacency in place
    return adj_t.mul_(other)


def fill_diag(adj_t, fill_value):
    return adj_t * (1 - torch.eye(adj_t.size(0))) + fill_value * torch.eye(adj_t.size(0))


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True, dtype=None):
    fill_value = 2. if improved else 1.
    adj_t = edge_index
    if add_self_loops:
        adj_t = fill_diag(adj_t, fill_value)
    deg = adj_t.sum(dim=1)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0.)
    adj_t = mul_(adj_t, deg_inv_sqrt.view(-1, 1))  # <-- IPL004, IPL001: rescales the caller's adjacency, which conv1's matmul saved
    adj_t = mul_(adj_t, deg_inv_sqrt.view(1, -1))  # <-- IPL004, IPL001: rescales the caller's adjacency, which conv1's matmul saved
    return adj_t


class GCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, add_self_loops=True, normalize=True):
        super().__init__()
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, adj_t):
        if self.normalize:
            adj_t = gcn_norm(adj_t, None, x.size(0), False, self.add_self_loops, x.dtype)
        x = self.lin(x)
        return adj_t @ x + self.bias


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels, add_self_loops=False)
        self.conv2 = GCNConv(hidden_channels, out_channels, add_self_loops=False)

    def forward(self, x, adj_t):
        x = F.relu(self.conv1(x, adj_t))
        return self.conv2(x, adj_t)


class Data:
    pass


n = 6
data = Data()
data.x = torch.randn(n, 4)
adj = (torch.rand(n, n) > 0.5).float()
data.adj_t = ((adj + adj.t()) > 0).float()
data.adj_t.fill_diagonal_(1.0)  # adj_t already carries self-loops, as in the ogbn-arxiv report
data.y = torch.randint(0, 3, (n,))

model = GCN(4, 8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for epoch in range(3):
    optimizer.zero_grad()
    out = model(data.x, data.adj_t)
    loss = F.cross_entropy(out, data.y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
losses = torch.stack(losses)
adj_after_training = data.adj_t
