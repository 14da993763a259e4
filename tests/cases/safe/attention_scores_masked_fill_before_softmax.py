# label: safe
# why: masked_fill_ writes -inf into the raw scores produced by matmul and a scalar scale, neither of which saves its output; softmax runs after the write.
import torch
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(0.0)
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / (k.size(-1) ** 0.5))
        att.masked_fill_(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = att.softmax(dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


torch.manual_seed(0)
attn = CausalSelfAttention(dim=8, n_head=2, block_size=6)
x = torch.randn(2, 5, 8)
out = attn(x)
loss = out.pow(2).mean()
loss.backward()
