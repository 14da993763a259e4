# label: hazard raises
# why: E_GCL.coord_model accumulates the coordinate messages with coord += agg, which writes into the caller's position tensor, a leaf that requires grad for the force computation.
# source: https://github.com/vgsatorras/egnn/issues/3
import torch
from torch import nn

torch.manual_seed(0)


def unsorted_segment_sum(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    result = data.new_full(result_shape, 0)  # Init empty result tensor.
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result.scatter_add_(0, segment_ids, data)
    return result


def unsorted_segment_mean(data, segment_ids, num_segments):
    result_shape = (num_segments, data.size(1))
    segment_ids = segment_ids.unsqueeze(-1).expand(-1, data.size(1))
    result = data.new_full(result_shape, 0)  # Init empty result tensor.
    count = data.new_full(result_shape, 0)
    result.scatter_add_(0, segment_ids, data)
    count.scatter_add_(0, segment_ids, torch.ones_like(data))
    return result / count.clamp(min=1)


class E_GCL(nn.Module):
    def __init__(self, input_nf, output_nf, hidden_nf, act_fn=nn.SiLU(), residual=True, coords_agg='mean'):
        super(E_GCL, self).__init__()
        self.residual = residual
        self.coords_agg = coords_agg
        self.edge_mlp = nn.Sequential(
            nn.Linear(input_nf * 2 + 1, hidden_nf), act_fn, nn.Linear(hidden_nf, hidden_nf), act_fn)
        self.node_mlp = nn.Sequential(
            nn.Linear(hidden_nf + input_nf, hidden_nf), act_fn, nn.Linear(hidden_nf, output_nf))
        layer = nn.Linear(hidden_nf, 1, bias=False)
        torch.nn.init.xavier_uniform_(layer.weight, gain=0.001)
        self.coord_mlp = nn.Sequential(nn.Linear(hidden_nf, hidden_nf), act_fn, layer)

    def edge_model(self, source, target, radial):
        out = torch.cat([source, target, radial], dim=1)
        return self.edge_mlp(out)

    def node_model(self, x, edge_index, edge_attr):
        row, col = edge_index
        agg = unsorted_segment_sum(edge_attr, row, num_segments=x.size(0))
        agg = torch.cat([x, agg], dim=1)
        out = self.node_mlp(agg)
        if self.residual:
            out = x + out
        return out, agg

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, col = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        if self.coords_agg == 'sum':
            agg = unsorted_segment_sum(trans, row, num_segments=coord.size(0))
        elif self.coords_agg == 'mean':
            agg = unsorted_segment_mean(trans, row, num_segments=coord.size(0))
        else:
            raise Exception('Wrong coords_agg parameter' % self.coords_agg)
        coord += agg  # <-- IPL003, IPL004: adds into the caller's positions, a leaf that requires grad
        return coord

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = coord[row] - coord[col]
        radial = torch.sum(coord_diff**2, 1).unsqueeze(1)
        return radial, coord_diff

    def forward(self, h, edge_index, coord):
        radial, coord_diff = self.coord2radial(edge_index, coord)
        row, col = edge_index
        edge_feat = self.edge_model(h[row], h[col], radial)
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        h, agg = self.node_model(h, edge_index, edge_feat)
        return h, coord


class EGNN(nn.Module):
    def __init__(self, in_node_nf, hidden_nf, out_node_nf, n_layers=2):
        super(EGNN, self).__init__()
        self.n_layers = n_layers
        self.embedding_in = nn.Linear(in_node_nf, hidden_nf)
        self.embedding_out = nn.Linear(hidden_nf, out_node_nf)
        for i in range(0, n_layers):
            self.add_module("gcl_%d" % i, E_GCL(hidden_nf, hidden_nf, hidden_nf))

    def forward(self, h, x, edges):
        h = self.embedding_in(h)
        for i in range(0, self.n_layers):
            h, x = self._modules["gcl_%d" % i](h, edges, x)
        h = self.embedding_out(h)
        return h, x


def get_edges(n_nodes):
    rows, cols = [], []
    for i in range(n_nodes):
        for j in range(n_nodes):
            if i != j:
                rows.append(i)
                cols.append(j)
    return [torch.LongTensor(rows), torch.LongTensor(cols)]


n_nodes = 5
h0 = torch.ones(n_nodes, 1)
positions = torch.randn(n_nodes, 3, requires_grad=True)
edges = get_edges(n_nodes)
egnn = EGNN(in_node_nf=1, hidden_nf=8, out_node_nf=1)
h, x = egnn(h0, positions, edges)
energy = h.sum() + (x - positions).pow(2).sum()
forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
loss = forces.pow(2).mean()
loss.backward()
