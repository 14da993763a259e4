# label: safe
# why: x.relu_() rectifies the SAGEConv output (a sum of two Linear outputs that nothing saved) during training, and the layer-wise inference reuses the same in-place ReLU under @torch.no_grad() on per-batch slices
# source: https://github.com/pyg-team/pytorch_geometric/commit/93c34535b18874d17d59d6a586139636760beaf2
import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = torch.nn.Linear(in_channels, out_channels)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros(x.size(0), x.size(1)).index_add(0, dst, x[src])
        deg = torch.zeros(x.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return self.lin_l(agg / deg.unsqueeze(-1)) + self.lin_r(x)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        self.convs.append(SAGEConv(in_channels, hidden_channels))
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
                x = F.dropout(x, p=0.5, training=self.training)
        return x

    @torch.no_grad()
    def inference(self, x_all: Tensor, subgraph_batches) -> Tensor:
        for i, conv in enumerate(self.convs):
            xs = []
            for node_id, edge_index, batch_size in subgraph_batches:
                x = x_all[node_id]
                x = conv(x, edge_index)
                x = x[:batch_size]
                if i < len(self.convs) - 1:
                    x = x.relu_()
                xs.append(x.cpu())
            x_all = torch.cat(xs, dim=0)
        return x_all


num_nodes = 8
x = torch.randn(num_nodes, 5)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7, 1, 3], [1, 2, 3, 4, 5, 6, 7, 0, 0, 5]])
y = torch.randint(0, 3, (num_nodes,))
model = SAGE(5, 16, 3, num_layers=3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

model.train()
optimizer.zero_grad()
out = model(x, edge_index)
loss = F.cross_entropy(out, y)
loss.backward()
optimizer.step()

model.eval()
# two "subgraph loader" batches: seed nodes first, then their sampled neighbours
subgraph_batches = [
    (torch.tensor([0, 1, 2, 3, 7, 4]), torch.tensor([[4, 0, 1, 2, 5], [0, 1, 2, 3, 0]]), 4),
    (torch.tensor([4, 5, 6, 7, 3, 0]), torch.tensor([[4, 0, 1, 2, 5], [0, 1, 2, 3, 1]]), 4),
]
full_pred = model.inference(x, subgraph_batches)
