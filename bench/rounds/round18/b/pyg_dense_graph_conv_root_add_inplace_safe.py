# label: safe
# why: with aggr='add' or 'mean', out += self.lin_root(x) adds into the fresh Linear/division output, which no backward formula saved, so the in-place root update is harmless
# source: https://github.com/pyg-team/pytorch_geometric/commit/1a578319f97cc891e6dad62a07be5ff848142591
import torch
from torch.nn import Linear

torch.manual_seed(0)


class DenseGraphConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, aggr='add', bias=True):
        assert aggr in ['add', 'mean', 'max']
        super(DenseGraphConv, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.aggr = aggr
        self.lin_rel = Linear(in_channels, out_channels, bias=False)
        self.lin_root = Linear(in_channels, out_channels, bias=bias)

    def forward(self, x, adj, mask=None):
        x = x.unsqueeze(0) if x.dim() == 2 else x
        adj = adj.unsqueeze(0) if adj.dim() == 2 else adj
        B, N, _ = adj.size()

        out = self.lin_rel(torch.matmul(adj, x))

        if self.aggr == 'mean':
            out = out / adj.sum(dim=-1, keepdim=True).clamp(min=1)

        out += self.lin_root(x)

        if mask is not None:
            out = out * mask.view(B, N, 1).to(x.dtype)

        return out


class Net(torch.nn.Module):
    def __init__(self, in_channels, hidden, num_classes):
        super().__init__()
        self.convs = torch.nn.ModuleList([DenseGraphConv(in_channels, hidden, aggr='add'),
                                          DenseGraphConv(hidden, hidden, aggr='mean')])
        self.lin = Linear(hidden, num_classes)

    def forward(self, x, adj, mask):
        for conv in self.convs:
            x = torch.relu(conv(x, adj, mask))
        x = x.sum(dim=1) / mask.sum(dim=1, keepdim=True)
        return self.lin(x)


B, N = 2, 5
x = torch.randn(B, N, 3)
adj = (torch.rand(B, N, N) > 0.5).float()
adj = ((adj + adj.transpose(1, 2)) > 0).float()
mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.bool)
y = torch.tensor([0, 1])
model = Net(3, 8, 2)
out = model(x, adj, mask)
loss = torch.nn.functional.cross_entropy(out, y)
loss.backward()
