# label: safe
# why: the mask helper fills a bias tensor it builds itself and returns scores + bias, so the caller's raw scores stay unmasked for the z-loss.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


def masked_softmax(scores, key_mask):
    bias = torch.zeros(scores.shape[0], 1, scores.shape[-1])
    bias.masked_fill_(~key_mask[:, None, :], -1e4)
    causal = torch.triu(torch.ones(scores.shape[-2], scores.shape[-1], dtype=torch.bool), diagonal=1)
    bias = bias.expand_as(scores).clone()
    bias[:, causal] = -1e4
    return (scores + bias).softmax(dim=-1)


dim = 8
qkv = nn.Linear(dim, 3 * dim)
proj = nn.Linear(dim, dim)

x = torch.randn(2, 6, dim)
key_mask = torch.tensor([[True] * 6, [True, True, True, True, False, False]])
q, k, v = qkv(x).chunk(3, dim=-1)
scores = q @ k.transpose(-2, -1) / math.sqrt(dim)
attn = masked_softmax(scores, key_mask)
out = proj(attn @ v)
z_loss = scores.logsumexp(dim=-1).pow(2).mean()
loss = out.pow(2).mean() + 1e-4 * z_loss
loss.backward()
