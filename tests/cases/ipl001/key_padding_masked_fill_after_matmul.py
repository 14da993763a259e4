# label: hazard raises
# why: k was already consumed by the q @ k^T matmul (which saves both operands); masking the keys in place afterwards corrupts the saved operand
import torch
import torch.nn as nn

torch.manual_seed(0)


class KeyMaskAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)

    def forward(self, x, key_pad):
        q = self.q(x)
        k = self.k(x)
        scores = q @ k.transpose(-2, -1)
        k.masked_fill_(key_pad.unsqueeze(-1), 0.0)  # <-- IPL001
        attn = scores.softmax(-1)
        return attn @ k


layer = KeyMaskAttention(4)
x = torch.randn(2, 3, 4)
key_pad = torch.tensor([[False, False, True], [False, True, True]])
out = layer(x, key_pad)
loss = out.sum()
loss.backward()
