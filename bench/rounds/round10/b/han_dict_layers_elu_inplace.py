# label: hazard raises
# why: the second HAN layer applies F.elu(..., inplace=True) to the node features it receives in x_dict, which are the first layer's tanh outputs saved by TanhBackward.
# source: https://github.com/pyg-team/pytorch_geometric/issues/7283
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def scatter_add(src, index, dim_size):
    out = torch.zeros(dim_size, src.size(1))
    return out.index_add(0, index, src)


class HANLayer(nn.Module):
    def __init__(self, in_dim, out_dim, node_types, edge_types):
        super().__init__()
        self.proj = nn.ModuleDict({nt: nn.Linear(in_dim, out_dim) for nt in node_types})
        self.att_src = nn.ParameterDict({"__".join(et): nn.Parameter(torch.randn(out_dim) * 0.1) for et in edge_types})
        self.att_dst = nn.ParameterDict({"__".join(et): nn.Parameter(torch.randn(out_dim) * 0.1) for et in edge_types})

    def forward(self, x_dict, edge_index_dict, edge_attr_dict):
        for node_type in x_dict:
            x_dict[node_type] = F.elu(x_dict[node_type], inplace=True)  # <-- IPL001: x_dict holds the previous layer's saved tanh outputs
        h_dict = {nt: self.proj[nt](x) for nt, x in x_dict.items()}
        out_dict = {nt: [] for nt in x_dict}
        for edge_type, edge_index in edge_index_dict.items():
            src_type, _, dst_type = edge_type
            key = "__".join(edge_type)
            src, dst = edge_index
            x_j = h_dict[src_type][src]
            x_i = h_dict[dst_type][dst]
            alpha = (x_j * self.att_src[key]).sum(-1) + (x_i * self.att_dst[key]).sum(-1)
            alpha = torch.sigmoid(alpha * edge_attr_dict[edge_type])
            msg = x_j * alpha.unsqueeze(-1)
            out_dict[dst_type].append(scatter_add(msg, dst, h_dict[dst_type].size(0)))
        return {nt: torch.tanh(torch.stack(outs).sum(0) if outs else h_dict[nt]) for nt, outs in out_dict.items()}


class ComHAN(nn.Module):
    def __init__(self, node_types, edge_types):
        super().__init__()
        self.han1 = HANLayer(4, 6, node_types, edge_types)
        self.han2 = HANLayer(6, 6, node_types, edge_types)
        self.lin = nn.Linear(6, 1)

    def forward(self, data):
        x_dict, edge_index_dict, edge_attr_dict = data["x_dict"], data["edge_index_dict"], data["edge_attr_dict"]
        out = self.han1(x_dict, edge_index_dict, edge_attr_dict)
        out = self.han2(out, edge_index_dict, edge_attr_dict)
        return self.lin(out["user"]).squeeze(-1)


node_types = ["user", "item"]
edge_types = [("user", "buys", "item"), ("item", "rev_buys", "user")]
edge_index = torch.tensor([[0, 1, 2, 2, 3], [0, 0, 1, 2, 2]])
data = {
    "x_dict": {"user": torch.randn(4, 4), "item": torch.randn(3, 4)},
    "edge_index_dict": {edge_types[0]: edge_index, edge_types[1]: edge_index.flip(0)},
    "edge_attr_dict": {edge_types[0]: torch.rand(5), edge_types[1]: torch.rand(5)},
}
model = ComHAN(node_types, edge_types)
w_hat = model(data)
loss = (w_hat - 1.0).pow(2).mean()
loss.backward()
