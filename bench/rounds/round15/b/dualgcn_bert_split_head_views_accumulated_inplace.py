# label: hazard raises
# why: adj_ag is bound to a view returned by torch.split(...).squeeze(1), and `adj_ag += ...` / `adj_ag /= ...` modify that multi-output view in place, which autograd forbids.
# source: https://github.com/CCChenhao997/DualGCN-ABSA/issues/4
import copy
import math
import types
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LayerNorm(nn.Module):
    def __init__(self, features, eps=1e-6):
        super(LayerNorm, self).__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class TinyBert(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids, attention_mask=None, token_type_ids=None):
        seq = self.emb(ids)
        return seq, torch.tanh(self.pool(seq[:, 0]))


def attention(query, key, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = F.softmax(scores, dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return p_attn


def clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])


class MultiHeadAttention(nn.Module):
    def __init__(self, h, d_model, dropout=0.1):
        super(MultiHeadAttention, self).__init__()
        self.d_k = d_model // h
        self.h = h
        self.linears = clones(nn.Linear(d_model, d_model), 2)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, query, key, mask=None):
        mask = mask[:, :, :query.size(1)]
        if mask is not None:
            mask = mask.unsqueeze(1)
        nbatches = query.size(0)
        query, key = [l(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                      for l, x in zip(self.linears, (query, key))]
        return attention(query, key, mask=mask, dropout=self.dropout)


class GCNBert(nn.Module):
    def __init__(self, bert, opt, num_layers):
        super(GCNBert, self).__init__()
        self.bert = bert
        self.opt = opt
        self.layers = num_layers
        self.mem_dim = opt.bert_dim // 2
        self.attention_heads = opt.attention_heads
        self.bert_dim = opt.bert_dim
        self.bert_drop = nn.Dropout(opt.bert_dropout)
        self.layernorm = LayerNorm(opt.bert_dim)
        self.W = nn.ModuleList()
        self.weight_list = nn.ModuleList()
        for layer in range(self.layers):
            input_dim = self.bert_dim if layer == 0 else self.mem_dim
            self.W.append(nn.Linear(input_dim, self.mem_dim))
            self.weight_list.append(nn.Linear(input_dim, self.mem_dim))
        self.attn = MultiHeadAttention(opt.attention_heads, self.bert_dim)

    def forward(self, adj, inputs):
        text_bert_indices, src_mask = inputs
        src_mask = src_mask.unsqueeze(-2)
        sequence_output, pooled_output = self.bert(text_bert_indices)
        sequence_output = self.layernorm(sequence_output)
        gcn_inputs = self.bert_drop(sequence_output)

        denom_dep = adj.sum(2).unsqueeze(2) + 1
        attn_tensor = self.attn(gcn_inputs, gcn_inputs, src_mask)
        attn_adj_list = [attn_adj.squeeze(1) for attn_adj in torch.split(attn_tensor, 1, dim=1)]
        adj_ag = None

        # * Average Multi-head Attention matrixes
        for i in range(self.attention_heads):
            if adj_ag is None:
                adj_ag = attn_adj_list[i]
            else:
                adj_ag += attn_adj_list[i]  # <-- IPL001: adj_ag is a view returned by torch.split (multi-view output)
        adj_ag /= self.attention_heads  # <-- IPL001: in-place division of the same split view

        for j in range(adj_ag.size(0)):
            adj_ag[j] -= torch.diag(torch.diag(adj_ag[j]))
            adj_ag[j] += torch.eye(adj_ag[j].size(0))
        adj_ag = src_mask.transpose(1, 2) * adj_ag

        denom_ag = adj_ag.sum(2).unsqueeze(2) + 1
        outputs_ag = gcn_inputs
        outputs_dep = gcn_inputs
        for l in range(self.layers):
            gAxW_dep = F.relu(self.W[l](adj.bmm(outputs_dep)) / denom_dep)
            gAxW_ag = F.relu(self.weight_list[l](adj_ag.bmm(outputs_ag)) / denom_ag)
            outputs_dep, outputs_ag = gAxW_dep, gAxW_ag
        return outputs_ag, outputs_dep, adj_ag, pooled_output


opt = types.SimpleNamespace(bert_dim=8, attention_heads=2, bert_dropout=0.1, num_layers=2, alpha=0.25)
model = GCNBert(TinyBert(20, opt.bert_dim), opt, opt.num_layers)
ids = torch.randint(0, 20, (2, 5))
src_mask = torch.ones(2, 5)
adj_dep = (torch.rand(2, 5, 5) > 0.5).float()

h1, h2, adj_ag, pooled = model(adj_dep, (ids, src_mask))
ortho = adj_ag @ adj_ag.transpose(1, 2)
for i in range(ortho.size(0)):
    ortho[i] -= torch.diag(torch.diag(ortho[i]))
    ortho[i] += torch.eye(ortho[i].size(0))
identity = torch.eye(5).unsqueeze(0).expand(2, 5, 5)
penal = opt.alpha * torch.norm(ortho - identity) / adj_ag.size(0)
loss = h1.sum() + h2.mean() + pooled.sum() + penal
loss.backward()
