# label: hazard raises no-twin
# why: the model keeps self.node_states (still attached to the previous epoch's graph) as the starting state of the next forward, so after optimizer.step() updates the Hw/Rou weights in place the next backward walks into the old graph whose saved weights changed.
# source: https://github.com/LYuhang/GNN_Review/issues/3
import torch
import torch.nn as nn

torch.manual_seed(0)


class Xi(nn.Module):
    def __init__(self, ln, s):
        super(Xi, self).__init__()
        self.ln = ln
        self.s = s
        self.linear = nn.Linear(in_features=2 * ln, out_features=s ** 2, bias=True)
        self.tanh = nn.Tanh()

    def forward(self, X):
        bs = X.size()[0]
        out = self.linear(X)
        out = self.tanh(out)
        return out.view(bs, self.s, self.s)


class Rou(nn.Module):
    def __init__(self, ln, s):
        super(Rou, self).__init__()
        self.linear = nn.Linear(in_features=ln, out_features=s, bias=True)
        self.tanh = nn.Tanh()

    def forward(self, X):
        return self.tanh(self.linear(X))


class Hw(nn.Module):
    def __init__(self, ln, s, mu=0.9):
        super(Hw, self).__init__()
        self.ln, self.s, self.mu = ln, s, mu
        self.Xi = Xi(ln, s)
        self.Rou = Rou(ln, s)

    def forward(self, X, H, dg_list):
        if type(dg_list) == list:
            dg_list = torch.Tensor(dg_list)
        A = (self.Xi(X) * self.mu / self.s) / dg_list.view(-1, 1, 1)
        b = self.Rou(torch.chunk(X, chunks=2, dim=1)[0])
        out = torch.squeeze(torch.matmul(A, torch.unsqueeze(H, 2)), -1) + b
        return out


class AggrSum(nn.Module):
    def __init__(self, node_num):
        super(AggrSum, self).__init__()
        self.V = node_num

    def forward(self, H, X_node):
        mask = torch.stack([X_node] * self.V, 0)
        mask = mask.float() - torch.unsqueeze(torch.arange(0, self.V).float(), 1)
        mask = (mask == 0).float()
        return torch.mm(mask, H)


class OriLinearGNN(nn.Module):
    def __init__(self, node_num, feat_dim, stat_dim, T):
        super(OriLinearGNN, self).__init__()
        self.embed_dim, self.stat_dim, self.T = feat_dim, stat_dim, T
        self.node_features = nn.Embedding(node_num, feat_dim)
        self.node_states = torch.zeros((node_num, stat_dim))
        self.linear = nn.Linear(feat_dim + stat_dim, 3)
        self.softmax = nn.Softmax(dim=1)
        self.Hw = Hw(feat_dim, stat_dim)
        self.Aggr = AggrSum(node_num)

    def forward(self, X_Node, X_Neis, dg_list):
        node_embeds = self.node_features(X_Node)
        neis_embeds = self.node_features(X_Neis)
        X = torch.cat((node_embeds, neis_embeds), 1)
        for t in range(self.T):
            H = torch.index_select(self.node_states, 0, X_Node)
            H = self.Hw(X, H, dg_list)
            self.node_states = self.Aggr(H, X_Node)
        out = self.linear(torch.cat((self.node_features.weight, self.node_states), 1))
        out = self.softmax(out)
        return out


edge_list = [(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 5), (5, 0)]
Degree = {}
for n1, n2 in edge_list:
    Degree.setdefault(n1, set()).add(n2)
    Degree.setdefault(n2, set()).add(n1)
node_inds, node_neis = [], []
for n in range(6):
    node_inds += [n] * len(Degree[n])
    node_neis += sorted(Degree[n])
dg_list = [len(Degree[n]) for n in node_inds]
model = OriLinearGNN(node_num=6, feat_dim=2, stat_dim=2, T=3)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=0.01)
criterion = nn.CrossEntropyLoss()
node_inds_tensor = torch.Tensor(node_inds).long()
node_neis_tensor = torch.Tensor(node_neis).long()
train_node_list = [0, 1, 3]
train_label = torch.Tensor([0, 1, 2]).long()
train_loss_list = []
for ep in range(3):
    res = model(node_inds_tensor, node_neis_tensor, dg_list)
    train_res = torch.index_select(res, 0, torch.Tensor(train_node_list).long())
    loss = criterion(input=train_res, target=train_label)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()  # <-- IPL001: updates weights saved by the graph that self.node_states carries into the next epoch
    train_loss_list.append(loss.detach())
