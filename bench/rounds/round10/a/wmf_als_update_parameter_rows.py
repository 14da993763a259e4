# label: hazard raises no-twin
# why: the ALS step writes the closed-form user/item factors straight into rows of the nn.Parameters P and Q, an in-place write to a leaf that requires grad outside torch.no_grad()
# source: https://github.com/graytowne/revisit_adv_rec/blob/672b9dc5b4e0eeffb53d4d0c7c3b61dbec84dd43/trainers/wmf_trainer.py (later changed to model.P.data[user] in ad88bd2350ac78094a4e1d7ff8b0da76131f7986)
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super(WeightedMF, self).__init__()
        self.n_users = n_users
        self.n_items = n_items
        self.dim = dim
        self.Q = nn.Parameter(torch.zeros([self.n_items, self.dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(torch.zeros([self.n_users, self.dim]).normal_(mean=0, std=0.1))
        self.params = nn.ParameterList([self.Q, self.P])

    def forward(self, user_id=None, item_id=None):
        if user_id is None and item_id is None:
            return torch.mm(self.P, self.Q.t())
        if user_id is not None:
            return torch.mm(self.P[[user_id]], self.Q.t())
        return torch.mm(self.P, self.Q[[item_id]].t())


class WMFTrainer:
    def __init__(self, n_users, n_items, dim=4, l2=0.1, weight_alpha=5.0):
        self.net = WeightedMF(n_users, n_items, dim)
        self.dim = dim
        self.l2 = l2
        self.weight_alpha = weight_alpha

    def train_als(self, data):
        model = self.net
        P = model.P.detach()
        Q = model.Q.detach()

        weight_alpha = self.weight_alpha - 1
        # Update P
        lamda_eye = torch.eye(self.dim) * self.l2
        # residual = Q^tQ + lambda*I
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, batch_data in enumerate(data):
            x_u = batch_data.view(-1, 1)
            cu = batch_data * weight_alpha + 1
            Cu = torch.diag(cu)
            Cu_minusI = torch.diag(cu - 1)
            lhs = torch.mm(Q.t(), Cu_minusI.mm(Q)) + residual
            rhs = torch.mm(Q.t(), Cu.mm(x_u))
            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P[user] = new_p_u.t()  # <-- IPL003: in-place row write into the leaf parameter P (requires grad)

        # Update Q
        data = data.t()
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, batch_data in enumerate(data):
            x_v = batch_data.view(-1, 1)
            cv = batch_data * weight_alpha + 1
            Cv = torch.diag(cv)
            Cv_minusI = torch.diag(cv - 1)
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            rhs = torch.mm(P.t(), Cv.mm(x_v))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q[item] = new_q_v.t()  # <-- IPL003: in-place row write into the leaf parameter Q (requires grad)
        return 0


ratings = (torch.rand(6, 8) > 0.6).float()
trainer = WMFTrainer(n_users=6, n_items=8)
for epoch in range(2):
    trainer.train_als(ratings)
with torch.no_grad():
    preds = trainer.net()
