# label: safe
# why: Explainer._post_process_mask detaches the trained mask and takes its sigmoid before zeroing masked-out entries with `mask[~hard_mask] = 0.`, so the in-place write lands on a fresh, graph-free tensor and neither the mask parameter nor any saved tensor is touched.
# source: https://github.com/pyg-team/pytorch_geometric/blob/5c6461b2305ad068a6d61165b3c55852a11aaa41/torch_geometric/explain/algorithm/base.py (ExplainerAlgorithm._post_process_mask; used by GNNExplainer.forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, hidden)
        self.lin2 = nn.Linear(hidden, out_channels)

    def forward(self, x, edge_index, edge_weight):
        src, dst = edge_index
        h = self.lin1(x)
        h = torch.zeros_like(h).index_add(0, dst, h[src] * edge_weight.unsqueeze(-1)) + h
        h = F.relu(h)
        h = self.lin2(h)
        return torch.zeros_like(h).index_add(0, dst, h[src] * edge_weight.unsqueeze(-1)) + h


class GNNExplainer(nn.Module):
    coeffs = {"edge_size": 0.005, "edge_ent": 1.0, "node_feat_size": 1.0, "node_feat_ent": 0.1, "EPS": 1e-15}

    def __init__(self, epochs=20, lr=0.01):
        super().__init__()
        self.epochs = epochs
        self.lr = lr

    @staticmethod
    def _post_process_mask(mask, hard_mask=None, apply_sigmoid=True):
        if mask is None:
            return mask
        mask = mask.detach()
        if apply_sigmoid:
            mask = mask.sigmoid()
        if hard_mask is not None and mask.size(0) == hard_mask.size(0):
            mask[~hard_mask] = 0.
        return mask

    def _train(self, model, x, edge_index, target, index):
        N, F_ = x.size()
        E = edge_index.size(1)
        self.node_mask = nn.Parameter(torch.randn(N, F_) * 0.1)
        self.edge_mask = nn.Parameter(torch.randn(E) * 0.1)
        optimizer = torch.optim.Adam([self.node_mask, self.edge_mask], lr=self.lr)
        for _ in range(self.epochs):
            optimizer.zero_grad()
            h = x * self.node_mask.sigmoid()
            y_hat = model(h, edge_index, self.edge_mask.sigmoid())
            loss = F.cross_entropy(y_hat[index], target[index])
            m = self.edge_mask.sigmoid()
            loss = loss + self.coeffs["edge_size"] * m.sum()
            ent = -m * torch.log(m + self.coeffs["EPS"]) - (1 - m) * torch.log(1 - m + self.coeffs["EPS"])
            loss = loss + self.coeffs["edge_ent"] * ent.mean()
            loss.backward()
            if self.hard_edge_mask is None:
                self.hard_edge_mask = self.edge_mask.grad != 0.0
            if self.hard_node_mask is None:
                self.hard_node_mask = self.node_mask.grad != 0.0
            optimizer.step()

    def forward(self, model, x, edge_index, target, index):
        self.hard_node_mask = None
        self.hard_edge_mask = None
        self._train(model, x, edge_index, target, index)
        node_mask = self._post_process_mask(self.node_mask, self.hard_node_mask, apply_sigmoid=True)
        edge_mask = self._post_process_mask(self.edge_mask, self.hard_edge_mask, apply_sigmoid=True)
        return node_mask, edge_mask


def main():
    num_nodes = 8
    x = torch.randn(num_nodes, 5)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 1, 2], [1, 2, 3, 0, 5, 6, 7, 0, 1]])
    model = GCN(5, 8, 3)
    target = model(x, edge_index, torch.ones(edge_index.size(1))).argmax(-1)
    explainer = GNNExplainer(epochs=10)
    node_mask, edge_mask = explainer(model, x, edge_index, target, index=torch.tensor([1]))
    return node_mask, edge_mask, explainer.edge_mask.detach().clone()


node_mask, edge_mask, raw_edge_mask = main()
