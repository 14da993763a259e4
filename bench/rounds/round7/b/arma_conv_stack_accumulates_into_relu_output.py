# label: hazard raises
# why: ARMAConv keeps the first stack's activated features as output and then accumulates the next stacks with output += feats, modifying the ReLU result that ReLU's backward needs.
# source: https://github.com/dmlc/dgl/issues/4202
from contextlib import contextmanager

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Graph:
    """Tiny stand-in for a DGLGraph: ndata dict, local_scope() and copy_u/sum message passing."""

    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes
        self.ndata = {}

    def in_degrees(self):
        return torch.bincount(self.dst, minlength=self.num_nodes)

    @contextmanager
    def local_scope(self):
        saved = dict(self.ndata)
        yield
        self.ndata = saved

    def update_all_copy_u_sum(self, field):
        h = self.ndata[field]
        out = torch.zeros_like(h).index_add(0, self.dst, h[self.src])
        self.ndata[field] = out


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0, bias=True):
        super(ARMAConv, self).__init__()
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(p=dropout)
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        if bias:
            self.bias = nn.Parameter(torch.zeros(self.K, self.T, 1, out_dim))
        else:
            self.register_parameter('bias', None)

    def forward(self, g, feats):
        with g.local_scope():
            init_feats = feats
            degs = g.in_degrees().float().clamp(min=1)
            norm = torch.pow(degs, -0.5).to(feats.device).unsqueeze(1)
            output = None

            for k in range(self.K):
                feats = init_feats
                for t in range(self.T):
                    feats = feats * norm
                    g.ndata['h'] = feats
                    g.update_all_copy_u_sum('h')
                    feats = g.ndata.pop('h')
                    feats = feats * norm

                    if t == 0:
                        feats = self.w_0[str(k)](feats)
                    else:
                        feats = self.w[str(k)](feats)

                    feats += self.dropout(self.v[str(k)](init_feats))
                    feats += self.v[str(k)](self.dropout(init_feats))

                    if self.bias is not None:
                        feats += self.bias[k][t]

                    if self.activation is not None:
                        feats = self.activation(feats)

                if output is None:
                    output = feats
                else:
                    output += feats  # <-- IPL001: adds into the first stack's ReLU output, saved by ReLU for backward
            return output / self.K


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0):
        super(ARMA4NC, self).__init__()
        self.conv1 = ARMAConv(in_dim, hid_dim, num_stacks, num_layers, activation, dropout)
        self.conv2 = ARMAConv(hid_dim, out_dim, num_stacks, num_layers, activation, dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, g, feats):
        feats = F.relu(self.conv1(g, feats))
        feats = self.dropout(feats)
        feats = self.conv2(g, feats)
        return feats


src = torch.tensor([0, 1, 1, 2, 2, 3, 3, 4, 4, 0])
dst = torch.tensor([1, 0, 2, 1, 3, 2, 4, 3, 0, 4])
g = Graph(src, dst, 5)
model = ARMA4NC(in_dim=6, hid_dim=8, out_dim=3, num_stacks=2, num_layers=2, activation=nn.ReLU())
feats = torch.randn(5, 6)
labels = torch.tensor([0, 1, 2, 1, 0])
logits = model(g, feats)
train_loss = F.cross_entropy(logits, labels)
train_loss.backward()
