# label: hazard raises
# why: masked_softmax iterates over the reshaped attention scores, so each row is one of several views returned by unbind, and writing -1e6 into such a view in place is forbidden by autograd
# source: https://github.com/xk-huang/yet-another-vectornet/issues/34
import torch
import torch.nn as nn

torch.manual_seed(0)


class GraphLayerProp(nn.Module):
    """Message Passing mechanism for infomation aggregation (max aggregation)"""

    def __init__(self, in_channels, hidden_unit=16):
        super().__init__()
        self.mlp = nn.Sequential(
            nn.Linear(in_channels, hidden_unit),
            nn.LayerNorm(hidden_unit),
            nn.ReLU(),
            nn.Linear(hidden_unit, in_channels),
        )

    def forward(self, x, edge_index):
        x = self.mlp(x)
        src, dst = edge_index
        x_j = x[src]
        aggr_out = torch.full_like(x, -1e9).scatter_reduce(0, dst.unsqueeze(-1).expand_as(x_j), x_j, reduce='amax', include_self=True)
        return torch.cat([x, aggr_out], dim=1)


class SubGraph(nn.Module):
    def __init__(self, in_channels, num_subgraph_layres=2, hidden_unit=16):
        super().__init__()
        self.layer_seq = nn.Sequential()
        for i in range(num_subgraph_layres):
            self.layer_seq.add_module(f'glp_{i}', GraphLayerProp(in_channels, hidden_unit))
            in_channels *= 2

    def forward(self, sub_data):
        x, edge_index = sub_data['x'], sub_data['edge_index']
        for name, layer in self.layer_seq.named_modules():
            if isinstance(layer, GraphLayerProp):
                x = layer(x, edge_index)
        cluster = sub_data['cluster']
        num_clusters = int(cluster.max()) + 1
        pooled = torch.full((num_clusters, x.shape[1]), -1e9).scatter_reduce(
            0, cluster.unsqueeze(-1).expand_as(x), x, reduce='amax', include_self=True)
        return pooled / pooled.norm(dim=0)


def masked_softmax(X, valid_len):
    """
    masked softmax for attention scores
    args:
        X: 3-D tensor, valid_len: 1-D or 2-D tensor
    """
    if valid_len is None:
        return nn.functional.softmax(X, dim=-1)
    else:
        shape = X.shape
        if valid_len.dim() == 1:
            valid_len = torch.repeat_interleave(valid_len, repeats=shape[1], dim=0)
        else:
            valid_len = valid_len.reshape(-1)
        # Fill masked elements with a large negative, whose exp is 0
        X = X.reshape(-1, shape[-1])
        for count, row in enumerate(X):
            row[int(valid_len[count]):] = -1e6  # <-- IPL001: row is an unbind view of the attention scores
        return nn.functional.softmax(X.reshape(shape), dim=-1)


class SelfAttentionLayer(nn.Module):
    def __init__(self, in_channels, global_graph_width):
        super().__init__()
        self.q_lin = nn.Linear(in_channels, global_graph_width)
        self.k_lin = nn.Linear(in_channels, global_graph_width)
        self.v_lin = nn.Linear(in_channels, global_graph_width)

    def forward(self, x, valid_len):
        query = self.q_lin(x)
        key = self.k_lin(x)
        value = self.v_lin(x)
        scores = torch.bmm(query, key.transpose(1, 2))
        attention_weights = masked_softmax(scores, valid_len)
        return torch.bmm(attention_weights, value)


class HGNN(nn.Module):
    def __init__(self, in_channels, out_channels, num_subgraph_layers=2, global_graph_width=16):
        super().__init__()
        self.polyline_vec_shape = in_channels * (2 ** num_subgraph_layers)
        self.subgraph = SubGraph(in_channels, num_subgraph_layers)
        self.self_atten_layer = SelfAttentionLayer(self.polyline_vec_shape, global_graph_width)
        self.traj_pred_mlp = nn.Sequential(nn.Linear(global_graph_width, 16), nn.ReLU(), nn.Linear(16, out_channels))

    def forward(self, data):
        time_step_len = int(data['time_step_len'])
        valid_lens = data['valid_len']
        sub_graph_out = self.subgraph(data)
        x = sub_graph_out.view(-1, time_step_len, self.polyline_vec_shape)
        out = self.self_atten_layer(x, valid_lens)
        return self.traj_pred_mlp(out[:, [0]].squeeze(1))


# two scenes, each padded to 3 polylines of 2 vectors; scene 1 has only 2 valid polylines
in_channels, out_channels = 4, 6
x = torch.randn(12, in_channels)
cluster = torch.arange(6).repeat_interleave(2)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
                           [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10]])
data = {'x': x, 'edge_index': edge_index, 'cluster': cluster,
        'time_step_len': 3, 'valid_len': torch.tensor([3, 2]), 'y': torch.randn(2, out_channels)}

model = HGNN(in_channels, out_channels)
optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
optimizer.zero_grad()
pred = model(data)
loss = nn.functional.mse_loss(pred, data['y'])
loss.backward()
