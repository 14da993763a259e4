# label: safe
# why: the fixed HGT example builds a new dict instead of overwriting the caller's x_dict, and relu_ only acts on the fresh Linear outputs that nothing has saved.
# source: https://github.com/pyg-team/pytorch_geometric/commit/2dfff9aacaff12bfc7a12cc70cd534aff48c42fd
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HeteroConv(nn.Module):
    def __init__(self, hidden, edge_types):
        super().__init__()
        self.edge_types = edge_types
        self.lins = nn.ModuleDict({"__".join(et): nn.Linear(hidden, hidden) for et in edge_types})

    def forward(self, x_dict, edge_index_dict):
        out = {k: torch.zeros_like(v) for k, v in x_dict.items()}
        for et in self.edge_types:
            src, _, dst = et
            row, col = edge_index_dict[et]
            msg = self.lins["__".join(et)](x_dict[src])[row]
            out[dst] = out[dst].index_add(0, col, msg)
        return {k: F.gelu(v) + x_dict[k] for k, v in out.items()}


class HGT(nn.Module):
    def __init__(self, in_dims, hidden_channels, out_channels, edge_types, num_layers):
        super().__init__()
        self.lin_dict = nn.ModuleDict({nt: nn.Linear(d, hidden_channels) for nt, d in in_dims.items()})
        self.convs = nn.ModuleList([HeteroConv(hidden_channels, edge_types) for _ in range(num_layers)])
        self.lin = nn.Linear(hidden_channels, out_channels)

    def forward(self, x_dict, edge_index_dict):
        x_dict = {
            node_type: self.lin_dict[node_type](x).relu_()
            for node_type, x in x_dict.items()
        }
        for conv in self.convs:
            x_dict = conv(x_dict, edge_index_dict)
        return self.lin(x_dict["author"])


edge_types = [("author", "to", "paper"), ("paper", "to", "author")]
x_dict = {"author": torch.randn(5, 4), "paper": torch.randn(6, 3)}
edge_index_dict = {
    ("author", "to", "paper"): torch.tensor([[0, 1, 2, 3, 4], [0, 2, 4, 1, 5]]),
    ("paper", "to", "author"): torch.tensor([[0, 2, 4, 1, 5], [0, 1, 2, 3, 4]]),
}
model = HGT({"author": 4, "paper": 3}, 8, 3, edge_types, num_layers=2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
y = torch.randint(0, 3, (5,))
losses = []
for epoch in range(2):
    optimizer.zero_grad()
    out = model(x_dict, edge_index_dict)
    loss = F.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
final_loss = torch.stack(losses)
