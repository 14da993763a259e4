# label: hazard raises no-twin
# why: the ALS surrogate writes each solved user/item factor into a row of the nn.Parameter (model.P[user] = ...) outside no_grad, an in-place op on a view of a leaf that requires grad.
# source: https://github.com/graytowne/revisit_adv_rec/issues/3 (fixed in https://github.com/graytowne/revisit_adv_rec/pull/4)
import torch
import torch.nn as nn

torch.manual_seed(0)


def _array2sparsediag(x):
    n = x.numel()
    indices = torch.stack([torch.arange(n), torch.arange(n)])
    return torch.sparse_coo_tensor(indices, x.float(), (n, n))


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
    def __init__(self, n_users, n_items, dim=3, l2=0.1, weight_alpha=2.0):
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
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, batch_data in enumerate(data):
            x_u = batch_data.view(-1, 1)
            cu = batch_data * weight_alpha + 1
            Cu = _array2sparsediag(cu)
            Cu_minusI = _array2sparsediag(cu - 1)
            lhs = torch.mm(Q.t(), torch.sparse.mm(Cu_minusI, Q)) + residual
            rhs = torch.mm(Q.t(), torch.sparse.mm(Cu, x_u))
            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P[user] = new_p_u.t()  # <-- IPL003: row of a leaf Parameter written in place outside no_grad
        # Update Q
        data = data.t()
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, batch_data in enumerate(data):
            x_v = batch_data.view(-1, 1)
            cv = batch_data * weight_alpha + 1
            Cv = _array2sparsediag(cv)
            Cv_minusI = _array2sparsediag(cv - 1)
            lhs = torch.mm(P.t(), torch.sparse.mm(Cv_minusI, P)) + residual
            rhs = torch.mm(P.t(), torch.sparse.mm(Cv, x_v))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q[item] = new_q_v.t()  # <-- IPL003: row of a leaf Parameter written in place outside no_grad
        return 0


ratings = (torch.rand(5, 4) > 0.6).float()
trainer = WMFTrainer(n_users=5, n_items=4)
for epoch in range(2):
    trainer.train_als(ratings)
predictions = trainer.net().detach()
