# label: safe
# why: `q2 *= self.scale` scales the (rearranged) output of the proj_q Linear in place; Linear's backward never saved its output and q2 is only read afterwards, so the in-place scale is harmless.
# source: https://github.com/facebookresearch/Motionformer/blob/4e4dc3227b95e6da9a071278ee593bb8ad09e971/slowfast/models/vit_helper.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def qkv_attn(q, k, v):
    sim = torch.einsum('b i d, b j d -> b i j', q, k)
    attn = sim.softmax(dim=-1)
    out = torch.einsum('b i j, b j d -> b i d', attn, v)
    return out


class TrajectoryAttention(nn.Module):
    def __init__(self, dim, num_heads=2, qkv_bias=False, attn_drop=0., proj_drop=0., use_original_code=False):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.head_dim = head_dim
        self.scale = head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj_q = nn.Linear(dim, dim, bias=qkv_bias)
        self.proj_kv = nn.Linear(dim, dim * 2, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)
        self.use_original_code = use_original_code

    def forward(self, x, seq_len=4, num_frames=2):
        B, N, C = x.shape
        P = seq_len
        F = num_frames
        h = self.num_heads
        d = C // h

        # project x to q, k, v vaalues
        q, k, v = self.qkv(x).chunk(3, dim=-1)

        # Reshape: 'b n (h d) -> (b h) n d'
        q, k, v = map(lambda t: t.reshape(B, N, h, d).permute(0, 2, 1, 3).reshape(B * h, N, d), (q, k, v))

        # remove CLS token from q, k, v
        (cls_q, q_), (cls_k, k_), (cls_v, v_) = map(lambda t: (t[:, 0:1], t[:, 1:]), (q, k, v))

        # let CLS token attend to key / values of all patches across time and space
        cls_out = qkv_attn(cls_q * self.scale, k, v)
        cls_out = cls_out.reshape(B, h, 1, d).permute(0, 2, 1, 3).reshape(B, 1, h * d)

        # Using full attention
        q_dot_k = q_ @ k_.transpose(-2, -1)
        q_dot_k = q_dot_k.reshape(B * h, F * P, F, P)  # 'b q (f n) -> b q f n'
        space_attn = (self.scale * q_dot_k).softmax(dim=-1)
        attn = self.attn_drop(space_attn)
        v_ = v_.reshape(B * h, F, P, d)  # 'b (f n) d -> b f n d'
        x = torch.einsum('b q f n, b f n d -> b q f d', attn, v_)

        # Temporal attention: query is the similarity-aggregated patch
        x = x.reshape(B, h, F * P, F, d).permute(0, 2, 3, 1, 4).reshape(B, F * P, F, h * d)  # '(b h) s f d -> b s f (h d)'
        x_diag = x.reshape(B, F, P, F, h * d)  # 'b (g n) f d -> b g n f d'
        x_diag = torch.diagonal(x_diag, dim1=-4, dim2=-2)  # b n d f
        x_diag = x_diag.permute(0, 3, 1, 2).reshape(B, F * P, h * d)  # 'b n d f -> b (f n) d'
        q2 = self.proj_q(x_diag)
        k2, v2 = self.proj_kv(x).chunk(2, dim=-1)
        q2 = q2.reshape(B, F * P, h, d).permute(0, 2, 1, 3)  # 'b s (h d) -> b h s d'
        q2 *= self.scale
        k2, v2 = map(lambda t: t.reshape(B, F * P, F, h, d).permute(0, 3, 1, 2, 4), (k2, v2))  # 'b s f (h d) -> b h s f d'
        attn = torch.einsum('b h s d, b h s f d -> b h s f', q2, k2)
        attn = attn.softmax(dim=-1)
        if self.use_original_code:
            x = x.reshape(B, F * P, F, h, d).permute(0, 3, 1, 2, 4)
            x = torch.einsum('b h s f, b h s f d -> b h s d', attn, x)
        else:
            x = torch.einsum('b h s f, b h s f d -> b h s d', attn, v2)
        x = x.permute(0, 2, 1, 3).reshape(B, F * P, h * d)  # 'b h s d -> b s (h d)'

        # concat back the cls token
        x = torch.cat((cls_out, x), dim=1)

        x = self.proj(x)
        x = self.proj_drop(x)
        return x, attn


class Block(nn.Module):
    def __init__(self, dim=8, num_heads=2, use_original_code=True):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = TrajectoryAttention(dim, num_heads=num_heads, use_original_code=use_original_code)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x, seq_len=4, num_frames=2):
        x = x + self.attn(self.norm1(x), seq_len=seq_len, num_frames=num_frames)[0]
        x = x + self.mlp(self.norm2(x))
        return x


blocks = nn.ModuleList([Block(use_original_code=True), Block(use_original_code=False)])
tokens = torch.randn(2, 1 + 2 * 4, 8, requires_grad=True)
x = tokens
for blk in blocks:
    x = blk(x)
logits = x[:, 0].sum(-1)
logits.pow(2).mean().backward()
