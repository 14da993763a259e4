# label: hazard silent
# why: once num_nodes is a tensor, offset becomes a tensor that is stored in the dict and then bumped with +=, so earlier node types' offsets silently shift too
# source: https://github.com/pyg-team/pytorch_geometric/commit/dc7e38f031b65204c25dc4803b5f492188349b9f (PR #8430)
import torch
import torch.nn as nn

torch.manual_seed(0)


class NodeStorage:
    def __init__(self, key, x):
        self._key = key
        self.x = x

    @property
    def num_nodes(self):
        return torch.tensor(self.x.size(0))


class HeteroData:
    def __init__(self, x_dict, edge_index_dict):
        self.node_stores = [NodeStorage(k, x) for k, x in x_dict.items()]
        self.edge_index_dict = edge_index_dict

    @property
    def node_offsets(self):
        out = {}
        offset = 0
        for store in self.node_stores:
            out[store._key] = offset
            offset += store.num_nodes  # <-- IPL002: after the first type, this bumps the tensor already stored in out
        return out

    def to_homogeneous(self):
        offsets = self.node_offsets
        x = torch.cat([store.x for store in self.node_stores], dim=0)
        edge_indices = []
        for (src, _, dst), edge_index in self.edge_index_dict.items():
            shift = torch.stack([torch.as_tensor(offsets[src]), torch.as_tensor(offsets[dst])]).view(2, 1)
            edge_indices.append(edge_index + shift)
        return x, torch.cat(edge_indices, dim=1)


class GraphConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_rel = nn.Linear(in_channels, out_channels)
        self.lin_root = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add(0, dst, x[src])
        return self.lin_rel(agg) + self.lin_root(x)


x_dict = {"author": torch.randn(3, 4), "paper": torch.randn(4, 4), "venue": torch.randn(2, 4)}
edge_index_dict = {
    ("author", "coauthor", "author"): torch.tensor([[0, 1, 2, 1], [1, 0, 1, 2]]),
}
data = HeteroData(x_dict, edge_index_dict)
x, edge_index = data.to_homogeneous()
conv = GraphConv(4, 2)
out = conv(x, edge_index)
offsets = data.node_offsets
loss = 0.0
for store in data.node_stores:
    start = int(offsets[store._key])
    out_type = out[start:start + store.x.size(0)]
    loss = loss + out_type.pow(2).sum()
loss.backward()
