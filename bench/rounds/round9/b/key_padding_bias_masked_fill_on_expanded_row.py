# label: hazard silent
# why: the per-example key-padding bias is built by expanding one shared zero row, so masked_fill_ writes -inf through the aliased memory into every example's bias and unpadded sequences lose attention to keys that are only padding in another example.
# source: https://github.com/pytorch/pytorch/issues/39639
import warnings
import torch
import torch.nn as nn

torch.manual_seed(0)
warnings.filterwarnings("ignore")


class PaddedSelfAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def key_padding_bias(self, key_padding_mask):
        B, T = key_padding_mask.shape
        bias = torch.zeros(1, T).expand(B, T)
        bias.masked_fill_(key_padding_mask, float("-inf"))  # <-- IPL002: bias rows alias one row; the fill lands in every example
        return bias

    def forward(self, x, key_padding_mask):
        scores = (self.q(x) @ self.k(x).transpose(1, 2)) * self.scale
        scores = scores + self.key_padding_bias(key_padding_mask)[:, None, :]
        return scores.softmax(-1) @ self.v(x)


attn = PaddedSelfAttention()
x = torch.randn(2, 4, 8)
key_padding_mask = torch.tensor([[False, False, False, False], [False, False, True, True]])
out = attn(x, key_padding_mask)
loss = out[0].pow(2).mean()
loss.backward()
