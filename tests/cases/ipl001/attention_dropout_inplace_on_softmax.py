# label: hazard raises
# why: the attention dropout module is built with inplace=True and applied to the softmax output that SoftmaxBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.attn_drop = nn.Dropout(0.1, inplace=True)
        self.proj = nn.Linear(dim, dim)
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn = self.attn_drop(attn)  # <-- IPL001
        return self.proj(attn @ v)


layer = SelfAttention(8)
tokens = torch.randn(2, 5, 8)
out = layer(tokens)
loss = out.square().mean()
loss.backward()
