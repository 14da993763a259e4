# label: hazard raises
# why: get_estimated_weigths zeroes entries of F.relu's output in place (`estimated_weights[estimated_weights < tau] = 0`), but ReluBackward saved that output, so total_loss.backward() fails.
# source: https://github.com/GhostQ99/RobustTrainingGNN/issues/3 (code: https://github.com/GhostQ99/RobustTrainingGNN/blob/c1074e13fa859d81564d053c016519f8a3107fd5/model/RTGNN.py)
import types
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nout):
        super().__init__()
        self.lin1 = nn.Linear(nfeat, nhid)
        self.lin2 = nn.Linear(nhid, nout)

    def propagate(self, x, edge_index, edge_weight):
        out = torch.zeros_like(x)
        msg = x[edge_index[0]] * edge_weight.unsqueeze(-1)
        return out.index_add(0, edge_index[1], msg) + x

    def forward(self, x, edge_index, edge_weight):
        h = F.relu(self.propagate(self.lin1(x), edge_index, edge_weight))
        return self.propagate(self.lin2(h), edge_index, edge_weight)


class EstimateAdj(nn.Module):
    def __init__(self, nfea, args):
        super(EstimateAdj, self).__init__()
        self.estimator = GCN(nfea, args.edge_hidden, args.edge_hidden)
        self.args = args

    def forward(self, edge_index, features):
        representations = self.estimator(features, edge_index, torch.ones([edge_index.shape[1]]))
        representations = F.normalize(representations, dim=-1)
        rec_loss = self.reconstruct_loss(edge_index, representations)
        return representations, rec_loss

    def get_estimated_weigths(self, edge_index, representations, origin_w=None):
        x0 = representations[edge_index[0]]
        x1 = representations[edge_index[1]]
        output = torch.sum(torch.mul(x0, x1), dim=1)
        estimated_weights = F.relu(output)
        if estimated_weights.shape[0] != 0:
            estimated_weights[estimated_weights < self.args.tau] = 0  # <-- IPL001: overwrites relu output saved by ReluBackward
            if origin_w is not None:
                estimated_weights = origin_w + estimated_weights * (1 - origin_w)
        return estimated_weights, None

    def reconstruct_loss(self, edge_index, representations):
        pos = torch.sum(representations[edge_index[0]] * representations[edge_index[1]], dim=1)
        return F.mse_loss(pos, torch.ones_like(pos))


class Predictor(nn.Module):
    def __init__(self, nfeat, nclass):
        super().__init__()
        self.gcn0 = GCN(nfeat, 8, nclass)
        self.gcn1 = GCN(nfeat, 8, nclass)

    def forward(self, x, edge_index, w):
        return F.log_softmax(self.gcn0(x, edge_index, w), 1), F.log_softmax(self.gcn1(x, edge_index, w), 1)


args = types.SimpleNamespace(edge_hidden=6, tau=0.05, alpha=0.03)
features = torch.randn(7, 5)
labels = torch.randint(0, 3, (7,))
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 6], [1, 0, 2, 1, 4, 3, 6, 5]])
knn_edge_index = torch.tensor([[0, 2, 3], [3, 5, 6]])

estimator = EstimateAdj(5, args)
predictor = Predictor(5, 3)
optimizer = torch.optim.Adam(list(estimator.parameters()) + list(predictor.parameters()), lr=0.01)
idx_train = torch.tensor([0, 1, 2, 3])

optimizer.zero_grad()
representations, rec_loss = estimator(edge_index, features)
pred_edge_index = torch.cat([edge_index, knn_edge_index], dim=1)
origin_w = torch.cat([torch.ones(edge_index.shape[1]), torch.zeros(knn_edge_index.shape[1])])
predictor_weights, _ = estimator.get_estimated_weigths(pred_edge_index, representations, origin_w)
edge_remain_idx = torch.where(predictor_weights != 0)[0].detach()
predictor_weights = predictor_weights[edge_remain_idx]
pred_edge_index = pred_edge_index[:, edge_remain_idx]
log_pred, log_pred_1 = predictor(features, pred_edge_index, predictor_weights)
loss_pred = F.nll_loss(log_pred[idx_train], labels[idx_train]) + F.nll_loss(log_pred_1[idx_train], labels[idx_train])
total_loss = loss_pred + args.alpha * rec_loss
total_loss.backward()
