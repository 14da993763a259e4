# label: safe
# why: masked_fill_ writes the fresh matmul result before softmax; matmul saved q and k (its inputs), and softmax saves its own output afterwards
import torch
import torch.nn as nn

torch.manual_seed(0)


class CausalAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.q(x), self.k(x), self.v(x)
        scores = q @ k.transpose(-2, -1) / (x.shape[-1] ** 0.5)
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores.masked_fill_(causal, float("-inf"))
        attn = scores.softmax(dim=-1)
        return attn @ v


layer = CausalAttention(6)
x = torch.randn(2, 4, 6)
out = layer(x)
loss = out.sum()
loss.backward()
