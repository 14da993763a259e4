# label: safe
# why: the segment sum comes from scatter_add_ into a fresh zeros buffer and ScatterAddBackward only keeps the index, so dividing it in place by the counts leaves every gradient intact
# source: https://github.com/dmlc/dgl/pull/546 (commit aa129522e03893d4a789a88ad37a7aa7153487a9)
import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


def unsorted_1d_segment_sum(input, seg_id, n_segs, dim):
    y = th.zeros(n_segs, *input.shape[1:]).to(input)
    seg_id = seg_id.view((-1,) + (1,) * (input.dim() - 1)).expand_as(input)
    y = y.scatter_add_(dim, seg_id, input)
    return y


def unsorted_1d_segment_mean(input, seg_id, n_segs, dim):
    w = unsorted_1d_segment_sum(th.ones_like(seg_id), seg_id, n_segs, 0).to(input)
    w = w.clamp(min=1)   # remove 0 entries
    y = unsorted_1d_segment_sum(input, seg_id, n_segs, dim)
    y /= w.view((-1,) + (1,) * (y.dim() - 1))
    return y


class GraphClassifier(nn.Module):
    def __init__(self, in_feats, hidden, n_classes):
        super().__init__()
        self.lin1 = nn.Linear(in_feats, hidden)
        self.lin2 = nn.Linear(hidden, hidden)
        self.classify = nn.Linear(hidden, n_classes)

    def forward(self, adj, feats, graph_ids, n_graphs):
        h = th.sigmoid(self.lin1(adj @ feats))
        h = th.relu(self.lin2(adj @ h))
        hg = unsorted_1d_segment_mean(h, graph_ids, n_graphs, 0)   # mean_nodes readout
        return self.classify(hg)


n_nodes = 7
adj = (th.rand(n_nodes, n_nodes) > 0.5).float()
adj = adj / adj.sum(1, keepdim=True).clamp(min=1)
feats = th.randn(n_nodes, 4)
graph_ids = th.tensor([0, 0, 0, 1, 1, 2, 2])
labels = th.tensor([1, 0, 1])
model = GraphClassifier(4, 8, 2)
logits = model(adj, feats, graph_ids, 3)
loss = F.cross_entropy(logits, labels)
loss.backward()
