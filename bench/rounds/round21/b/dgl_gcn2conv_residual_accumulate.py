# label: safe
# why: without shared weights GCN2Conv accumulates the initial-residual branch with `rst += th.addmm(feat_0, ...)`; `rst` is a fresh addmm result that no backward node saved and nothing else aliases, so the in-place add is harmless.
# source: https://github.com/dmlc/dgl/blob/08bd58bae37cec04f04da92fb86868350fc3595c/python/dgl/nn/pytorch/conv/gcn2conv.py (see https://github.com/dmlc/dgl/issues/5975)
import math

import torch as th
import torch.nn as nn

th.manual_seed(0)


class Graph:
    def __init__(self, src, dst, num_nodes):
        self.src = src
        self.dst = dst
        self.num_nodes = num_nodes

    def in_degrees(self):
        return th.bincount(self.dst, minlength=self.num_nodes)

    def copy_u_sum(self, h):
        # graph.update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
        out = th.zeros(self.num_nodes, h.size(1))
        return out.index_add(0, self.dst, h[self.src])


class GCN2Conv(nn.Module):
    def __init__(self, in_feats, layer, alpha=0.1, lambda_=1, project_initial_features=False, bias=True):
        super().__init__()
        self._in_feats = in_feats
        self._share_weights = project_initial_features
        self.alpha = alpha
        self.beta = math.log(lambda_ / layer + 1)
        self.weight1 = nn.Parameter(th.Tensor(in_feats, in_feats))
        if not self._share_weights:
            self.weight2 = nn.Parameter(th.Tensor(in_feats, in_feats))
            nn.init.normal_(self.weight2)
        self._bias = nn.Parameter(th.Tensor(in_feats)) if bias else None
        nn.init.normal_(self.weight1)
        nn.init.zeros_(self._bias)

    def forward(self, graph, feat, feat_0):
        degs = graph.in_degrees().float().clamp(min=1)
        norm = th.pow(degs, -0.5).unsqueeze(1)

        feat = feat * norm
        feat = graph.copy_u_sum(feat)
        feat = feat * norm
        # scale
        feat = feat * (1 - self.alpha)

        # initial residual connection to the first layer
        feat_0 = feat_0[: feat.size(0)] * self.alpha

        if self._share_weights:
            rst = feat.add_(feat_0)
            rst = th.addmm(feat, feat, self.weight1, beta=(1 - self.beta), alpha=self.beta)
        else:
            rst = th.addmm(feat, feat, self.weight1, beta=(1 - self.beta), alpha=self.beta)
            rst += th.addmm(feat_0, feat_0, self.weight2, beta=(1 - self.beta), alpha=self.beta)

        if self._bias is not None:
            rst = rst + self._bias
        return th.relu(rst)


def main():
    num_nodes, dim = 6, 8
    src = th.tensor([0, 1, 2, 3, 4, 5, 0, 2])
    dst = th.tensor([1, 2, 3, 4, 5, 0, 3, 5])
    g = Graph(src, dst, num_nodes)
    lin = nn.Linear(5, dim)
    x = th.randn(num_nodes, 5)
    feat_0 = th.relu(lin(x))
    conv1 = GCN2Conv(dim, layer=1)
    conv2 = GCN2Conv(dim, layer=2)
    h = conv1(g, feat_0, feat_0)
    h = conv2(g, h, feat_0)
    loss = h.pow(2).mean()
    loss.backward()
    return loss.detach(), conv1.weight1.grad, conv1.weight2.grad, lin.weight.grad


loss, w1_grad, w2_grad, lin_grad = main()
