# label: hazard silent
# why: drop_feature zeroes columns of the shared node-feature tensor in place, so both augmented views (and the original features) end up with the union of both drop masks
# source: https://github.com/dmlc/dgl/pull/3109
import torch as th
import torch.nn as nn
import torch.nn.functional as F

th.manual_seed(0)


def drop_feature(x, drop_prob):
    drop_mask = th.empty((x.size(1),), dtype=th.float32, device=x.device).uniform_(0, 1) < drop_prob
    x[:, drop_mask] = 0  # <-- IPL004, IPL002: zeroes the caller's feature matrix, shared by both views
    return x


def aug(adj, x, feat_drop_rate):
    feat = drop_feature(x, feat_drop_rate)
    return adj, feat


class GCN(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, adj, feat):
        return F.relu(adj @ self.lin(feat))


class Grace(nn.Module):
    def __init__(self, in_dim, hid_dim, temp=0.5):
        super().__init__()
        self.encoder = GCN(in_dim, hid_dim)
        self.temp = temp
        self.proj = nn.Sequential(nn.Linear(hid_dim, hid_dim), nn.ELU(), nn.Linear(hid_dim, hid_dim))

    def sim(self, z1, z2):
        return F.normalize(z1) @ F.normalize(z2).t()

    def get_loss(self, z1, z2):
        f = lambda x: th.exp(x / self.temp)
        refl_sim = f(self.sim(z1, z1))
        between_sim = f(self.sim(z1, z2))
        return -th.log(between_sim.diag() / (refl_sim.sum(1) + between_sim.sum(1) - refl_sim.diag()))

    def forward(self, adj1, adj2, feat1, feat2):
        h1 = self.proj(self.encoder(adj1, feat1))
        h2 = self.proj(self.encoder(adj2, feat2))
        return 0.5 * (self.get_loss(h1, h2) + self.get_loss(h2, h1)).mean()


n, d = 6, 10
adj = (th.rand(n, n) > 0.5).float() + th.eye(n)
adj = adj / adj.sum(1, keepdim=True)
feat = th.randn(n, d)
model = Grace(d, 8)

adj1, feat1 = aug(adj, feat, 0.3)
adj2, feat2 = aug(adj, feat, 0.4)
loss = model(adj1, adj2, feat1, feat2)
loss.backward()
view1 = feat1
view2 = feat2
