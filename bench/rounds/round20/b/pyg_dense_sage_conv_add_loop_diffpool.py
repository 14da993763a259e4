# label: hazard raises
# why: DenseSAGEConv adds self-loops with `adj[:, arange, arange] = 1` directly into the caller's adjacency; in DiffPool the pool and embed GNNs receive the same `adj`, so the second write bumps the tensor the first conv's matmul saved for backward.
# source: https://github.com/pyg-team/pytorch_geometric/issues/56 (fixed in commit 0b5ce97ff9e129d8d417931951dcabe0d515b9c5)
import torch
import torch.nn.functional as F
from torch.nn import Parameter

torch.manual_seed(0)

EPS = 1e-15


class DenseSAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, normalize=True, bias=True):
        super(DenseSAGEConv, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.normalize = normalize
        bound = 1.0 / self.in_channels ** 0.5
        self.weight = Parameter((torch.rand(self.in_channels, out_channels) * 2 - 1) * bound)
        if bias:
            self.bias = Parameter((torch.rand(out_channels) * 2 - 1) * bound)
        else:
            self.register_parameter('bias', None)

    def forward(self, x, adj, mask=None, add_loop=True):
        x = x.unsqueeze(0) if x.dim() == 2 else x
        adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
        B, N, _ = x.size()

        if add_loop:
            arange = torch.arange(0, N, dtype=torch.long, device=adj.device)
            adj[:, arange, arange] = 1  # <-- IPL001, IPL004

        out = torch.matmul(adj, x)
        out = out / adj.sum(dim=-1, keepdim=True)
        out = torch.matmul(out, self.weight)

        if self.bias is not None:
            out = out + self.bias

        if self.normalize:
            out = F.normalize(out, p=2, dim=-1)

        if mask is not None:
            mask = mask.view(B, N, 1).to(x.dtype)
            out = out * mask

        return out


def dense_diff_pool(x, adj, s, mask=None):
    x = x.unsqueeze(0) if x.dim() == 2 else x
    adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
    s = s.unsqueeze(0) if s.dim() == 2 else s
    s = torch.softmax(s, dim=-1)

    out = torch.matmul(s.transpose(1, 2), x)
    out_adj = torch.matmul(torch.matmul(s.transpose(1, 2), adj), s)

    reg = adj - torch.matmul(s, s.transpose(1, 2))
    reg = torch.norm(reg, p=2)
    reg = reg / adj.numel()
    return out, out_adj, reg


class GNN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super(GNN, self).__init__()
        self.conv1 = DenseSAGEConv(in_channels, hidden_channels)
        self.conv2 = DenseSAGEConv(hidden_channels, out_channels)

    def forward(self, x, adj, mask=None):
        x = F.relu(self.conv1(x, adj, mask))
        x = F.relu(self.conv2(x, adj, mask))
        return x


class Net(torch.nn.Module):
    def __init__(self, num_features=3, num_classes=6, max_nodes=12):
        super(Net, self).__init__()
        num_nodes = 4
        self.gnn1_pool = GNN(num_features, 16, num_nodes)
        self.gnn1_embed = GNN(num_features, 16, 16)
        self.gnn2_pool = GNN(16, 16, 2)
        self.gnn2_embed = GNN(16, 16, 16)
        self.lin = torch.nn.Linear(16, num_classes)

    def forward(self, x, adj, mask=None):
        s = self.gnn1_pool(x, adj, mask)
        x = self.gnn1_embed(x, adj, mask)
        x, adj, reg1 = dense_diff_pool(x, adj, s, mask)

        s = self.gnn2_pool(x, adj)
        x = self.gnn2_embed(x, adj)
        x, adj, reg2 = dense_diff_pool(x, adj, s)

        x = x.mean(dim=1)
        x = self.lin(x)
        return F.log_softmax(x, dim=-1), reg1 + reg2


def main():
    model = Net()
    x = torch.randn(2, 12, 3)
    adj = (torch.rand(2, 12, 12) > 0.7).float()
    adj = ((adj + adj.transpose(1, 2)) > 0).float()
    y = torch.tensor([1, 4])
    output, reg = model(x, adj)
    loss = F.nll_loss(output, y) + reg
    loss.backward()
    return loss.detach(), model.lin.weight.grad, model.gnn1_pool.conv1.weight.grad


loss, lin_grad, pool_grad = main()
