# label: safe
# why: after the fix the query is scaled out of place; the remaining `x += self.pos_emb(...)` adds in place into a torch.cat output that no backward formula saved
# source: https://github.com/lucidrains/TimeSformer-pytorch/pull/16
import torch
from torch import nn, einsum

torch.manual_seed(0)


def split_heads(t, h):
    # rearrange(t, 'b n (h d) -> (b h) n d', h = h)
    b, n, hd = t.shape
    return t.view(b, n, h, hd // h).permute(0, 2, 1, 3).reshape(b * h, n, hd // h)


def merge_heads(t, h):
    # rearrange(t, '(b h) n d -> b n (h d)', h = h)
    bh, n, d = t.shape
    return t.reshape(bh // h, h, n, d).permute(0, 2, 1, 3).reshape(bh // h, n, h * d)


def attn(q, k, v):
    sim = einsum('b i d, b j d -> b i j', q, k)
    attn = sim.softmax(dim=-1)
    out = einsum('b i j, b j d -> b i d', attn, v)
    return out


class Attention(nn.Module):
    def __init__(self, dim, dim_head=8, heads=1, dropout=0.):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = dim_head * heads
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Sequential(nn.Linear(inner_dim, dim), nn.Dropout(dropout))

    def forward(self, x):
        h = self.heads
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: split_heads(t, h), (q, k, v))

        q = q * self.scale

        # splice out classification token at index 1
        (cls_q, q_), (cls_k, k_), (cls_v, v_) = map(lambda t: (t[:, 0:1], t[:, 1:]), (q, k, v))
        cls_out = attn(cls_q, k, v)
        k_ = torch.cat((cls_k, k_), dim=1)
        v_ = torch.cat((cls_v, v_), dim=1)
        out = attn(q_, k_, v_)
        out = torch.cat((cls_out, out), dim=1)
        out = merge_heads(out, h)
        return self.to_out(out)


class TimeSformerLite(nn.Module):
    def __init__(self, dim=16, num_patches=6, num_classes=3, depth=2):
        super().__init__()
        self.to_patch_embedding = nn.Linear(12, dim)
        self.pos_emb = nn.Embedding(num_patches + 1, dim)
        self.cls_token = nn.Parameter(torch.randn(1, dim))
        self.layers = nn.ModuleList([Attention(dim) for _ in range(depth)])
        self.to_out = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def forward(self, video_patches):
        b = video_patches.shape[0]
        tokens = self.to_patch_embedding(video_patches)
        cls_token = self.cls_token.unsqueeze(0).expand(b, -1, -1)
        x = torch.cat((cls_token, tokens), dim=1)
        x += self.pos_emb(torch.arange(x.shape[1]))
        for layer in self.layers:
            x = layer(x) + x
        return self.to_out(x[:, 0])


model = TimeSformerLite()
video_patches = torch.randn(1, 6, 12)
pred = model(video_patches)
loss = pred.logsumexp(-1).sum()
loss.backward()
