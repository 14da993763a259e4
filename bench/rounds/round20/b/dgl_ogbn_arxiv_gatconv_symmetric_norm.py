# label: hazard silent
# why: when the graph is not a block `feat_dst` is the same tensor as `feat_src`, so `feat_src.mul_(norm)` also rescales the destination features and the attention term `er` is silently computed from normalised instead of raw projections.
# source: https://github.com/dmlc/dgl/commit/db221f101c6f35d4e76c9c646567a43c1787c6da
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Graph:
    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes
        self.is_block = False

    def out_degrees(self):
        return torch.bincount(self.src, minlength=self.num_nodes)

    def in_degrees(self):
        return torch.bincount(self.dst, minlength=self.num_nodes)


def edge_softmax(graph, e):
    e_max = torch.full((graph.num_nodes,) + e.shape[1:], -1e9).scatter_reduce(0, graph.dst.view(-1, 1, 1).expand_as(e), e, reduce="amax")
    e = torch.exp(e - e_max[graph.dst])
    denom = torch.zeros((graph.num_nodes,) + e.shape[1:]).index_add(0, graph.dst, e)
    return e / denom[graph.dst]


class GATConv(nn.Module):
    def __init__(self, in_feats, out_feats, num_heads=1, negative_slope=0.2, residual=False, use_symmetric_norm=False):
        super(GATConv, self).__init__()
        self._num_heads = num_heads
        self._out_feats = out_feats
        self._use_symmetric_norm = use_symmetric_norm
        self.fc = nn.Linear(in_feats, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.randn(1, num_heads, out_feats) * 0.3)
        self.attn_r = nn.Parameter(torch.randn(1, num_heads, out_feats) * 0.3)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.res_fc = nn.Linear(in_feats, num_heads * out_feats, bias=False) if residual else None

    def forward(self, graph, feat):
        h_src = feat
        feat_src = self.fc(h_src).view(-1, self._num_heads, self._out_feats)
        if graph.is_block:
            h_dst = h_src[: graph.num_dst_nodes]
            feat_dst = feat_src[: graph.num_dst_nodes]
        else:
            h_dst = h_src
            feat_dst = feat_src

        if self._use_symmetric_norm:
            degs = graph.out_degrees().float().clamp(min=1)
            norm = torch.pow(degs, -0.5)
            shp = norm.shape + (1,) * (feat_src.dim() - 1)
            norm = torch.reshape(norm, shp)
            feat_src.mul_(norm)  # <-- IPL002

        el = (feat_src * self.attn_l).sum(dim=-1).unsqueeze(-1)
        er = (feat_dst * self.attn_r).sum(dim=-1).unsqueeze(-1)
        e = self.leaky_relu(el[graph.src] + er[graph.dst])
        a = edge_softmax(graph, e)

        # message passing: u_mul_e then sum
        m = feat_src[graph.src] * a
        rst = torch.zeros(graph.num_nodes, self._num_heads, self._out_feats).index_add(0, graph.dst, m)

        if self._use_symmetric_norm:
            degs = graph.in_degrees().float().clamp(min=1)
            norm = torch.pow(degs, 0.5)
            shp = norm.shape + (1,) * (feat_dst.dim() - 1)
            norm = torch.reshape(norm, shp)
            rst.mul_(norm)

        if self.res_fc is not None:
            resval = self.res_fc(h_dst).view(h_dst.shape[0], -1, self._out_feats)
            rst.add_(resval)
        return rst


def main():
    num_nodes = 6
    src = torch.tensor([0, 1, 2, 3, 4, 5, 0, 2, 4, 1, 3, 5])
    dst = torch.tensor([1, 2, 3, 4, 5, 0, 0, 2, 4, 1, 3, 5])
    graph = Graph(src, dst, num_nodes)
    conv = GATConv(8, 4, num_heads=2, residual=True, use_symmetric_norm=True)
    feat = torch.randn(num_nodes, 8)
    labels = torch.tensor([0, 1, 2, 3, 0, 1])
    out = conv(graph, feat).mean(1)
    loss = F.cross_entropy(out, labels)
    loss.backward()
    return out.detach(), conv.attn_r.grad, conv.fc.weight.grad


out, attn_r_grad, fc_grad = main()
