# label: safe
# why: seq_embeds is a squeeze view of user_embeds and is updated with +=, but the only other use of user_embeds (repeat in sess_user_vector) copied it and no backward saved it, so the gradients match the out-of-place version
# source: https://github.com/0215Arthur/HG-GNN/issues/11 (pre-fix models/HG_GNN.py; fix commit d1805b7bfee7453ded305cead477eae8bc0ab97a)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device('cpu')


class SAGEConv(nn.Module):
    """Stand-in for dgl.nn.pytorch.SAGEConv(in, out, 'mean') on a dense adjacency."""

    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.fc_self = nn.Linear(in_feats, out_feats, bias=False)
        self.fc_neigh = nn.Linear(in_feats, out_feats, bias=True)

    def forward(self, G, feat):
        deg = G.sum(1, keepdim=True).clamp(min=1)
        h_neigh = (G @ feat) / deg
        return self.fc_self(feat) + self.fc_neigh(h_neigh)


class HG_GNN(nn.Module):
    def __init__(self, G, config, item_num, max_seq_len=10, max_sess=10):
        super().__init__()
        self.G = G.to(device)
        self.max_sess = max_sess
        self.hidden_size = config['hidden_size']
        self.em_size = config['embed_size']
        self.pos_embedding = nn.Embedding(200, self.em_size)
        self.v2e = nn.Embedding(G.shape[0], self.em_size).to(device)
        self.conv1 = SAGEConv(self.em_size, self.em_size)
        dropout = config["dropout"]
        self.emb_dropout = nn.Dropout(p=dropout)
        self.max_seq_len = max_seq_len
        self.sigmoid_concat = nn.Sequential(
            nn.Linear(self.em_size * 2, 1, bias=True),
            nn.Sigmoid()
        )
        self.w_1 = nn.Parameter(torch.Tensor(2 * self.em_size, self.em_size))
        self.w_2 = nn.Parameter(torch.Tensor(self.em_size, 1))
        self.glu1 = nn.Linear(self.em_size, self.em_size)
        self.glu2 = nn.Linear(self.em_size, self.em_size, bias=False)
        self.w_3 = nn.Parameter(torch.Tensor(self.em_size, self.em_size))
        self.w_4 = nn.Parameter(torch.Tensor(self.em_size, 1))
        self.glu3 = nn.Linear(self.em_size, self.em_size)
        self.glu4 = nn.Linear(self.em_size, self.em_size, bias=False)
        self.reset_parameters()
        self.item_num = item_num

    @torch.no_grad()
    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.em_size)
        for weight in self.parameters():
            nn.init.uniform_(weight, -stdv, stdv)

    def compute_hidden_vector(self, hidden, mask, pos_idx):
        mask = mask.float().unsqueeze(-1)
        len = hidden.shape[1]
        pos_emb = self.pos_embedding(pos_idx)
        tmp = torch.sum(hidden * mask, -2) / torch.sum(mask, 1)
        hs = tmp.unsqueeze(-2).repeat(1, len, 1)
        nh = torch.matmul(torch.cat([pos_emb, hidden], -1), self.w_1)
        nh = torch.tanh(nh)
        nh = torch.sigmoid(self.glu1(nh) + self.glu2(hs))
        beta = torch.matmul(nh, self.w_2)
        beta = beta * mask
        select = torch.sum(beta * hidden, 1)
        return select, tmp

    def sess_user_vector(self, user_vec, note_embeds, mask):
        mask = mask.float().unsqueeze(-1)           #[Bs, L, 1]
        hs = user_vec.repeat(1, mask.shape[1], 1)   #[Bs, L, em_size]
        nh = torch.matmul(note_embeds, self.w_3)    #[Bs, L, em_size]
        nh = torch.tanh(nh)
        nh = torch.sigmoid(self.glu3(nh) + self.glu4(hs))
        beta = torch.matmul(nh, self.w_4)
        beta = beta * mask
        select = torch.sum(beta * note_embeds, 1)  #[Bs, em_size]
        return select

    def forward(self, user, seq, mask, seq_len, pos_idx):
        user = user + self.item_num
        h1 = self.conv1(self.G, self.emb_dropout(self.v2e(torch.arange(0, self.G.shape[0]).long().to(device))))
        h1 = F.relu(h1)
        bs = seq.size()[0]
        L = seq.size()[1]
        node_list = seq
        item_embeds = (h1[node_list] + self.v2e(node_list)) / 2
        user_embeds = (h1[user] + self.v2e(user)) / 2
        node_embeds = item_embeds.view((bs, L, -1))
        seq_embeds = user_embeds.squeeze(1)  # [bs, em_size]
        sess_vec, avg_sess = self.compute_hidden_vector(node_embeds, mask, pos_idx)  # [bs, em_size]
        sess_user = self.sess_user_vector(user_embeds, node_embeds, mask)  # [bs, em_size]
        alpha = self.sigmoid_concat(torch.cat([sess_vec, sess_user], 1))  #[bs, 1]
        seq_embeds += (alpha * sess_vec + (1 - alpha) * sess_user)
        item_embs = self.v2e.weight[1:]
        scores = torch.matmul(seq_embeds, item_embs.permute(1, 0))      #[bs, item_num]
        return scores


item_num, user_num = 12, 4
n = item_num + user_num
G = (torch.rand(n, n) < 0.3).float()
G = ((G + G.t()) > 0).float()
model = HG_GNN(G, {'hidden_size': 8, 'embed_size': 8, 'dropout': 0.0}, item_num)
user = torch.tensor([[0], [1], [3]])
seq = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [6, 7, 8, 9]])
mask = seq > 0
pos_idx = torch.arange(4).repeat(3, 1)
scores = model(user, seq, mask, mask.sum(1), pos_idx)
target = torch.tensor([4, 6, 10])
loss = F.cross_entropy(scores, target - 1)
loss.backward()
