# label: hazard raises
# why: with a virtual node, GNNAsKernel.forward hands the post-`F.relu`/`F.dropout(p=0)` node states to VNUpdate, whose `x += vn[batch]` broadcasts the virtual-node message into the caller's tensor in place; that tensor is the ReLU output ReluBackward saved, so backward fails (the commit rewrote it as `x = x + vn[batch]`).
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


def global_add_pool(x, batch):
    num_graphs = int(batch.max()) + 1
    return torch.zeros(num_graphs, x.size(1)).index_add(0, batch, x)


class VNUpdate(nn.Module):
    def __init__(self, dim, with_norm=BN):
        """
        Intermediate update layer for the virtual node
        """
        super().__init__()
        self.mlp = MLP(dim, dim, with_norm=with_norm, with_final_activation=True, bias=not BN)

    def forward(self, vn, x, batch):
        G = global_add_pool(x, batch)
        if vn is not None:
            G += vn
        vn = self.mlp(G)
        x += vn[batch]  # <-- IPL001, IPL004
        return vn, x


class GNNAsKernel(nn.Module):
    def __init__(self, nhid, nout, nlayer_outer, dropout=0., bn=BN, vn=True, res=False, pooling='mean'):
        super().__init__()
        self.input_encoder = DiscreteEncoder(nhid, max_num_features=1, max_num_values=10)
        self.edge_encoders = nn.ModuleList([DiscreteEncoder(nhid, max_num_features=1, max_num_values=4)
                                            for _ in range(nlayer_outer)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(nhid) if bn else Identity() for _ in range(nlayer_outer)])
        self.output_decoder = MLP(nhid, nout, nlayer=2, with_final_activation=False)
        self.traditional_gnns = nn.ModuleList([GINEConv(nhid, nhid, bias=not bn) for _ in range(nlayer_outer)])
        self.vn_aggregators = nn.ModuleList([VNUpdate(nhid) for _ in range(nlayer_outer)])
        self.dropout = dropout
        self.num_inner_layers = 0
        self.node_embedding = False
        self.vn = vn
        self.res = res
        self.pooling = pooling

    def forward(self, data):
        x = data['x']
        x = self.input_encoder(x)
        ori_edge_attr = data['edge_attr']

        previous_x = x  # for residual connection
        virtual_node = None
        for i, (edge_encoder, normal_gnn, norm, vn_aggregator) in enumerate(zip(self.edge_encoders,
                                        self.traditional_gnns, self.norms, self.vn_aggregators)):
            edge_attr = edge_encoder(ori_edge_attr)
            # standard message passing nn
            x = normal_gnn(x, data['edge_index'], edge_attr)

            x = norm(x)
            x = F.relu(x)
            x = F.dropout(x, self.dropout, training=self.training)

            if self.vn:
                virtual_node, x = vn_aggregator(virtual_node, x, data['batch'])

            if self.res:
                x = x + previous_x
                previous_x = x  # for residual connection

        if not self.node_embedding:
            num_graphs = int(data['batch'].max()) + 1
            counts = torch.bincount(data['batch'], minlength=num_graphs).clamp(min=1).unsqueeze(-1)
            x = global_add_pool(x, data['batch']) / counts

        x = F.dropout(x, self.dropout, training=self.training)
        x = self.output_decoder(x)
        return x


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
        'y': torch.randn(num_graphs, 1),
    }


def main():
    model = GNNAsKernel(nhid=16, nout=1, nlayer_outer=2, dropout=0., vn=True, res=False)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = make_batch()
    model.train()
    optimizer.zero_grad()
    loss = F.l1_loss(model(data), data['y'])
    loss.backward()
    optimizer.step()
    return loss.detach(), model.vn_aggregators[0].mlp.layers[0].weight.detach().clone()


loss, vn_weight = main()
