# label: hazard raises
# why: softmax saves its output for backward, and masked_fill_ then zeroes padded keys in that very tensor.
import math
import torch
import torch.nn as nn

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dim = dim

    def forward(self, x, pad_mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.dim)
        attn = scores.softmax(dim=-1)
        # make sure padded keys get exactly zero weight
        attn.masked_fill_(pad_mask[:, None, :], 0.0)  # <-- IPL001: softmax saved attn
        return self.proj(attn @ v)


model = SelfAttention(8)
x = torch.randn(2, 5, 8)
pad_mask = torch.tensor([[False, False, False, True, True],
                         [False, False, False, False, True]])
out = model(x, pad_mask)
loss = out.pow(2).mean()
loss.backward()
