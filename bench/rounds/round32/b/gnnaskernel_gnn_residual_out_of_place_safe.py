# label: safe
# why: the fix `x = x + previous_x` adds the residual into a new tensor, so the ReLU output that dropout(p=0) passes through stays as saved and the subgraph GNN trains.
# source: https://github.com/LingxiaoShawn/GNNAsKernel/commit/e2899a17116f82d700223d3a6519f283a02cdfa5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BN = True


class Identity(nn.Module):
    def __init__(self, *args, **kwargs):
        super(Identity, self).__init__()

    def forward(self, input):
        return input

    def reset_parameters(self):
        pass


class DiscreteEncoder(nn.Module):
    def __init__(self, hidden_channels, max_num_features=10, max_num_values=500):
        super().__init__()
        self.embeddings = nn.ModuleList([nn.Embedding(max_num_values, hidden_channels)
                                         for i in range(max_num_features)])

    def forward(self, x):
        if x.dim() == 1:
            x = x.unsqueeze(1)
        out = 0
        for i in range(x.size(1)):
            out += self.embeddings[i](x[:, i])
        return out


class MLP(nn.Module):
    def __init__(self, nin, nout, nlayer=2, with_final_activation=True, with_norm=BN, bias=True):
        super().__init__()
        n_hid = nin
        self.layers = nn.ModuleList([nn.Linear(nin if i == 0 else n_hid,
                                               n_hid if i < nlayer - 1 else nout,
                                               bias=True if (i == nlayer - 1 and not with_final_activation and bias)
                                               or (not with_norm) else False)
                                     for i in range(nlayer)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(n_hid if i < nlayer - 1 else nout) if with_norm else Identity()
                                    for i in range(nlayer)])
        self.nlayer = nlayer
        self.with_final_activation = with_final_activation

    def forward(self, x):
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms)):
            x = layer(x)
            if i < self.nlayer - 1 or self.with_final_activation:
                x = norm(x)
                x = F.relu(x)
        return x


class GINEConv(nn.Module):
    """GINE message passing: h_i' = nn((1 + eps) * h_i + sum_j relu(h_j + e_ij))."""

    def __init__(self, nin, nout, bias=True):
        super().__init__()
        self.nn = MLP(nin, nout, 2, False, bias=bias)
        self.eps = nn.Parameter(torch.zeros(1))

    def forward(self, x, edge_index, edge_attr):
        src, dst = edge_index
        msg = F.relu(x[src] + edge_attr)
        aggr = torch.zeros_like(x).index_add(0, dst, msg)
        return self.nn((1 + self.eps) * x + aggr)


class GNN(nn.Module):
    def __init__(self, nin, nout, nlayer, gnn_type, dropout=0, bn=BN, bias=True, res=True):
        super().__init__()
        self.convs = nn.ModuleList([gnn_type(nin, nin, bias=not bn) for _ in range(nlayer)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(nin) if bn else Identity() for _ in range(nlayer)])
        self.output_encoder = MLP(nin, nout, nlayer=1, with_final_activation=False, bias=bias) if nin != nout else Identity()
        self.dropout = dropout
        self.res = res

    def forward(self, x, edge_index, edge_attr, batch):
        previous_x = x
        for layer, norm in zip(self.convs, self.norms):
            x = layer(x, edge_index, edge_attr)
            x = norm(x)
            x = F.relu(x)
            x = F.dropout(x, self.dropout, training=self.training)
            if self.res:
                x = x + previous_x
                previous_x = x

        x = self.output_encoder(x)
        return x


class GraphRegressor(nn.Module):
    def __init__(self, nhid, nlayer, dropout=0.):
        super().__init__()
        self.input_encoder = DiscreteEncoder(nhid, max_num_features=1, max_num_values=10)
        self.edge_encoder = DiscreteEncoder(nhid, max_num_features=1, max_num_values=4)
        self.gnn = GNN(nhid, nhid, nlayer, GINEConv, dropout=dropout)
        self.output_decoder = MLP(nhid, 1, nlayer=2, with_final_activation=False)

    def forward(self, data):
        x = self.input_encoder(data['x'])
        edge_attr = self.edge_encoder(data['edge_attr'])
        x = self.gnn(x, data['edge_index'], edge_attr, data['batch'])
        num_graphs = int(data['batch'].max()) + 1
        pooled = torch.zeros(num_graphs, x.size(1)).index_add(0, data['batch'], x)
        return self.output_decoder(pooled).squeeze(-1)


def make_batch(num_graphs=4, nodes_per_graph=6):
    xs, edges, edge_attrs, batch = [], [], [], []
    for g in range(num_graphs):
        offset = g * nodes_per_graph
        xs.append(torch.randint(0, 10, (nodes_per_graph,)))
        for i in range(nodes_per_graph):
            j = (i + 1) % nodes_per_graph
            edges += [(offset + i, offset + j), (offset + j, offset + i)]
        edge_attrs.append(torch.randint(0, 4, (2 * nodes_per_graph,)))
        batch.append(torch.full((nodes_per_graph,), g, dtype=torch.long))
    return {
        'x': torch.cat(xs),
        'edge_index': torch.tensor(edges, dtype=torch.long).t(),
        'edge_attr': torch.cat(edge_attrs),
        'batch': torch.cat(batch),
        'y': torch.randn(num_graphs),
    }


def main():
    cfg_train_dropout = 0.
    model = GraphRegressor(nhid=16, nlayer=3, dropout=cfg_train_dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = make_batch()
    model.train()
    optimizer.zero_grad()
    loss = F.l1_loss(model(data), data['y'])
    loss.backward()
    optimizer.step()
    return loss.detach(), model.gnn.convs[0].eps.detach().clone()


loss, eps = main()
