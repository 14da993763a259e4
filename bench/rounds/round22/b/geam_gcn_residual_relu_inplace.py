# label: hazard raises
# why: in GCN.forward the residual h += h_in adds in place into the ReLU output, which ReluBackward0 saved for backward, so the actor-critic loss fails with the [num_nodes, emb] ReluBackward0 output "at version 1; expected version 0".
# source: https://github.com/SeulLee05/GEAM/issues/1 (see also https://github.com/SeulLee05/GEAM/issues/4; code at e5b118b81661f03ea671f0eaa6a32788929fe3b6 model/ac.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Graph(object):
    """Minimal stand-in for a batched DGLGraph: node data dict plus an edge list."""

    def __init__(self, src, dst, num_nodes, batch):
        self.src, self.dst, self.num_nodes, self.batch = src, dst, num_nodes, batch
        self.ndata = {}

    def update_all(self, reduce):
        m = self.ndata['x'][self.src]  # fn.copy_src(src='x', out='m')
        self.ndata['x'] = reduce(m, self.dst, self.num_nodes)


def reduce_sum(m, dst, num_nodes):
    return torch.zeros(num_nodes, m.size(1)).index_add(0, dst, m)


class GCN(nn.Module):
    def __init__(self, in_channels, out_channels, agg="sum", is_normalize=False, residual=True):
        super().__init__()
        self.residual = residual
        assert agg in ["sum", "mean"], "Wrong agg type"
        self.agg = agg
        self.is_normalize = is_normalize
        self.linear1 = nn.Linear(in_channels, out_channels, bias=False)
        self.activation = nn.ReLU()

    def forward(self, g):
        h_in = g.ndata['x']
        g.update_all(reduce_sum)
        h = self.linear1(g.ndata['x'])
        h = self.activation(h)
        if self.is_normalize:
            h = F.normalize(h, p=2, dim=1)
        if self.residual:
            h += h_in  # <-- IPL001
        return h


class GCNEmbed(nn.Module):
    def __init__(self, d_n, emb_size, num_layer=3, is_normalize=False):
        super().__init__()
        self.emb_size = emb_size * 2
        in_channels = 8
        self.emb_linear = nn.Linear(d_n, in_channels, bias=False)
        self.gcn_layers = nn.ModuleList([GCN(in_channels, self.emb_size, agg="sum", residual=False,
                                             is_normalize=is_normalize)])
        for _ in range(num_layer - 1):
            self.gcn_layers.append(GCN(self.emb_size, self.emb_size, agg="sum", is_normalize=is_normalize))

    def forward(self, g, num_graphs):
        g.ndata['x'] = self.emb_linear(g.ndata['x'])
        for i, conv in enumerate(self.gcn_layers):
            h = conv(g)
            g.ndata['x'] = h
        emb_node = g.ndata['x']
        emb_graph = torch.zeros(num_graphs, emb_node.size(1)).index_add(0, g.batch, emb_node)  # SumPooling
        return g, emb_node, emb_graph


class GCNQFunction(nn.Module):
    def __init__(self, emb_size):
        super().__init__()
        self.d = 2 * emb_size
        self.qpred_layer = nn.Sequential(
            nn.Linear(self.d, int(self.d // 2), bias=False),
            nn.ReLU(inplace=False),
            nn.Linear(int(self.d // 2), 1, bias=True))

    def forward(self, graph_emb):
        return self.qpred_layer(graph_emb)


def main():
    num_nodes, num_graphs, d_n, emb_size = 10, 2, 12, 4
    src = torch.randint(0, num_nodes, (24,))
    dst = torch.randint(0, num_nodes, (24,))
    g = Graph(src, dst, num_nodes, batch=torch.tensor([0] * 5 + [1] * 5))
    g.ndata['x'] = torch.randn(num_nodes, d_n)
    embed = GCNEmbed(d_n, emb_size)
    q_func = GCNQFunction(emb_size)
    _, _, graph_emb = embed(g, num_graphs)
    q = q_func(graph_emb)
    backup = torch.randn(num_graphs, 1)
    loss_q = ((q - backup) ** 2).mean()
    loss_q.backward()
    grads = [p.grad.clone() for p in embed.parameters()]
    return loss_q.detach(), grads


loss_q, grads = main()
