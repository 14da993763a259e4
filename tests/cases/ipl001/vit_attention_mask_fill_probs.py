# label: hazard raises
# why: masked_fill_ now zeroes the attention probabilities after softmax, which saved its output for backward
import torch
import torch.nn as nn

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=True):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, key_padding_mask):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        attn.masked_fill_(key_padding_mask[:, None, None, :], 0.0)  # <-- IPL001
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


attn_layer = Attention(8)
tokens = torch.randn(2, 5, 8, requires_grad=True)
lengths = torch.tensor([5, 3])
padding = torch.arange(5)[None, :] >= lengths[:, None]
out = attn_layer(tokens, padding)
loss = out.pow(2).mean()
loss.backward()
qkv_grad = attn_layer.qkv.weight.grad
tokens_grad = tokens.grad
