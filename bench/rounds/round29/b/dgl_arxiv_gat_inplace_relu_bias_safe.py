# label: safe
# why: in the ogbn-arxiv GAT example, F.relu(h, inplace=True) overwrites a BatchNorm1d output (BatchNorm saves its input, not its output) and ElementWiseLinear(inplace=True) adds the bias into the fresh result of h.mean(1), so neither in-place write touches a tensor saved for backward.
# source: https://github.com/dmlc/dgl/blob/3d16000b4170fa741ed9e9667f22ba84d3493026/examples/pytorch/ogb/ogbn-arxiv/models.py (ElementWiseLinear, GAT.forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ElementWiseLinear(nn.Module):
    def __init__(self, size, weight=True, bias=True, inplace=False):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(size)) if weight else None
        self.bias = nn.Parameter(torch.Tensor(size)) if bias else None
        self.inplace = inplace
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.ones_(self.weight)
        if self.bias is not None:
            nn.init.normal_(self.bias, std=0.1)

    def forward(self, x):
        if self.inplace:
            if self.weight is not None:
                x.mul_(self.weight)
            if self.bias is not None:
                x.add_(self.bias)
        else:
            if self.weight is not None:
                x = x * self.weight
            if self.bias is not None:
                x = x + self.bias
        return x


def edge_softmax(edge_index, e, num_nodes):
    dst = edge_index[1]
    e_max = torch.full((num_nodes, e.shape[1]), -1e9).scatter_reduce(0, dst[:, None].expand_as(e), e, "amax")
    e_exp = torch.exp(e - e_max[dst])
    denom = torch.zeros(num_nodes, e.shape[1]).index_add(0, dst, e_exp)
    return e_exp / denom[dst]


class GATConv(nn.Module):
    def __init__(self, in_feats, out_feats, num_heads=2):
        super().__init__()
        self._num_heads = num_heads
        self._out_feats = out_feats
        self.fc = nn.Linear(in_feats, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.randn(1, num_heads, out_feats) * 0.1)
        self.attn_r = nn.Parameter(torch.randn(1, num_heads, out_feats) * 0.1)
        self.res_fc = nn.Linear(in_feats, num_heads * out_feats, bias=False)

    def forward(self, edge_index, feat):
        n = feat.shape[0]
        feat_src = self.fc(feat).view(-1, self._num_heads, self._out_feats)
        el = (feat_src * self.attn_l).sum(-1)
        er = (feat_src * self.attn_r).sum(-1)
        src, dst = edge_index
        e = F.leaky_relu(el[src] + er[dst], 0.2)
        a = edge_softmax(edge_index, e, n)
        msg = feat_src[src] * a.unsqueeze(-1)
        rst = torch.zeros(n, self._num_heads, self._out_feats).index_add(0, dst, msg)
        resval = self.res_fc(feat).view(n, -1, self._out_feats)
        return rst + resval


class GAT(nn.Module):
    def __init__(self, in_feats, n_classes, n_hidden=8, n_layers=2, n_heads=2, activation=F.relu):
        super().__init__()
        self.n_layers = n_layers
        self.convs = nn.ModuleList()
        self.norms = nn.ModuleList()
        for i in range(n_layers):
            in_hidden = n_heads * n_hidden if i > 0 else in_feats
            out_hidden = n_hidden if i < n_layers - 1 else n_classes
            self.convs.append(GATConv(in_hidden, out_hidden, num_heads=n_heads))
            if i < n_layers - 1:
                self.norms.append(nn.BatchNorm1d(n_heads * out_hidden))
        self.bias_last = ElementWiseLinear(n_classes, weight=False, bias=True, inplace=True)
        self.input_drop = nn.Dropout(0.0)
        self.dropout = nn.Dropout(0.0)
        self.activation = activation

    def forward(self, edge_index, feat):
        h = feat
        h = self.input_drop(h)
        for i in range(self.n_layers):
            conv = self.convs[i](edge_index, h)
            h = conv
            if i < self.n_layers - 1:
                h = h.flatten(1)
                h = self.norms[i](h)
                h = self.activation(h, inplace=True)
                h = self.dropout(h)
        h = h.mean(1)
        h = self.bias_last(h)
        return h


def main():
    num_nodes = 10
    feat = torch.randn(num_nodes, 6)
    src = torch.randint(0, num_nodes, (30,))
    dst = torch.randint(0, num_nodes, (30,))
    loops = torch.arange(num_nodes)
    edge_index = torch.stack([torch.cat([src, loops]), torch.cat([dst, loops])])
    labels = torch.randint(0, 3, (num_nodes,))
    model = GAT(6, 3)
    logits = model(edge_index, feat)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    return loss.detach(), model.bias_last.bias.grad, model.convs[0].fc.weight.grad, model.norms[0].weight.grad


loss, bias_grad, fc_grad, bn_grad = main()
