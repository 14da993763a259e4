# label: safe
# why: the rotated non-CLS tokens are concatenated with the CLS token into new q/k tensors instead of being written back into slices, so nothing saved for backward is overwritten.
# source: https://github.com/naver-ai/rope-vit/issues/14
import torch
from torch import nn

torch.manual_seed(0)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class RoPEAttention(nn.Module):
    def __init__(self, dim, num_heads=2, num_patches=4):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        self.freqs = nn.Parameter(torch.randn(num_heads, num_patches, head_dim // 2) * 0.1)

    def compute_cis(self):
        return torch.polar(torch.ones_like(self.freqs), self.freqs)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        freqs_cis = self.compute_cis()
        q_rot, k_rot = apply_rotary_emb(q[:, :, 1:], k[:, :, 1:], freqs_cis=freqs_cis)
        q = torch.cat((q[:, :, :1], q_rot), dim=2)
        k = torch.cat((k[:, :, :1], k_rot), dim=2)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


block = RoPEAttention(dim=8)
tokens = torch.randn(2, 5, 8)
out = block(tokens)
loss = out.pow(2).mean()
loss.backward()
