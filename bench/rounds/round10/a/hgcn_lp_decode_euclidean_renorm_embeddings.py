# label: hazard raises
# why: for the Euclidean manifold LPModel.decode calls manifold.normalize(h), which renorms the GCN embeddings in place; h is the encoder's ReLU output (saved for backward) and decode runs twice, for positive and negative edges
# source: https://github.com/HazyResearch/hgcn/issues/50
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
np.random.seed(0)


class Euclidean:
    """
    Euclidean Manifold class.
    """

    def __init__(self):
        self.name = 'Euclidean'

    def normalize(self, p):
        dim = p.size(-1)
        p.view(-1, dim).renorm_(2, 0, 1.)  # <-- IPL001, IPL004: renorms the caller's embeddings in place; they are the ReLU output saved for backward
        return p

    def dist(self, p1, p2, c):
        return (p1 - p2).pow(2).sum(dim=-1)


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, dropout, act, use_bias):
        super(GraphConvolution, self).__init__()
        self.dropout = dropout
        self.linear = nn.Linear(in_features, out_features, use_bias)
        self.act = act

    def forward(self, input):
        x, adj = input
        hidden = self.linear.forward(x)
        hidden = F.dropout(hidden, self.dropout, training=self.training)
        support = torch.mm(adj, hidden)
        output = self.act(support), adj
        return output


class GCN(nn.Module):
    def __init__(self, feat_dim, dim=4, num_layers=2, dropout=0.0):
        super(GCN, self).__init__()
        dims = [feat_dim] + [dim] * num_layers
        gc_layers = []
        for i in range(num_layers):
            gc_layers.append(GraphConvolution(dims[i], dims[i + 1], dropout, F.relu, True))
        self.layers = nn.Sequential(*gc_layers)

    def encode(self, x, adj):
        output, _ = self.layers.forward((x, adj))
        return output


class FermiDiracDecoder(nn.Module):
    def __init__(self, r, t):
        super(FermiDiracDecoder, self).__init__()
        self.r = r
        self.t = t

    def forward(self, dist):
        return 1. / (torch.exp((dist - self.r) / self.t) + 1.0)


class LPModel(nn.Module):
    def __init__(self, feat_dim, nb_false_edges, nb_edges):
        super(LPModel, self).__init__()
        self.manifold_name = 'Euclidean'
        self.manifold = Euclidean()
        self.c = torch.tensor([1.0])
        self.encoder = GCN(feat_dim)
        self.dc = FermiDiracDecoder(r=2., t=1.)
        self.nb_false_edges = nb_false_edges
        self.nb_edges = nb_edges

    def encode(self, x, adj):
        return self.encoder.encode(x, adj)

    def decode(self, h, idx):
        if self.manifold_name == 'Euclidean':
            h = self.manifold.normalize(h)
        emb_in = h[idx[:, 0], :]
        emb_out = h[idx[:, 1], :]
        dist = self.manifold.dist(emb_in, emb_out, self.c)
        probs = self.dc.forward(dist)
        return probs

    def compute_metrics(self, embeddings, data, split):
        edges_false = data[f'{split}_edges_false'][np.random.randint(0, self.nb_false_edges, self.nb_edges)]
        pos_scores = self.decode(embeddings, data[f'{split}_edges'])
        neg_scores = self.decode(embeddings, edges_false)
        loss = F.binary_cross_entropy(pos_scores, torch.ones_like(pos_scores))
        loss += F.binary_cross_entropy(neg_scores, torch.zeros_like(neg_scores))
        return {'loss': loss}


n_nodes, feat_dim = 8, 5
adj = (torch.rand(n_nodes, n_nodes) > 0.6).float()
adj = adj + adj.t() + torch.eye(n_nodes)
adj_train_norm = adj / adj.sum(1, keepdim=True)
data = {
    'features': torch.randn(n_nodes, feat_dim),
    'adj_train_norm': adj_train_norm,
    'train_edges': torch.tensor([[0, 1], [2, 3], [4, 5], [6, 7]]),
    'train_edges_false': torch.tensor([[0, 7], [1, 6], [2, 5], [3, 4], [0, 4], [1, 5]]),
}
model = LPModel(feat_dim, nb_false_edges=6, nb_edges=4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
model.train()
optimizer.zero_grad()
embeddings = model.encode(data['features'], data['adj_train_norm'])
train_metrics = model.compute_metrics(embeddings, data, 'train')
train_metrics['loss'].backward()
optimizer.step()
