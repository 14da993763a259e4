# label: hazard raises
# why: q comes from to_qkv(fmap).chunk(3) followed by a rearrange that stays a view, and `q *= self.scale` modifies in place a view produced by a multi-output op, which autograd rejects.
# source: https://github.com/lucidrains/bottleneck-transformer-pytorch/pull/14
import torch
from torch import nn, einsum

torch.manual_seed(0)


def pair(x):
    return (x, x) if not isinstance(x, tuple) else x


def to_heads(t, heads):
    # rearrange(t, 'b (h d) x y -> b h (x y) d', h = heads)
    b, hd, x, y = t.shape
    return t.reshape(b, heads, hd // heads, x, y).permute(0, 1, 3, 4, 2).reshape(b, heads, x * y, hd // heads)


class AbsPosEmb(nn.Module):
    def __init__(self, fmap_size, dim_head):
        super().__init__()
        height, width = pair(fmap_size)
        scale = dim_head ** -0.5
        self.height = nn.Parameter(torch.randn(height, dim_head) * scale)
        self.width = nn.Parameter(torch.randn(width, dim_head) * scale)

    def forward(self, q):
        emb = self.height[:, None, :] + self.width[None, :, :]
        emb = emb.reshape(-1, emb.shape[-1])
        logits = einsum('b h i d, j d -> b h i j', q, emb)
        return logits


class Attention(nn.Module):
    def __init__(self, *, dim, fmap_size, heads=4, dim_head=128):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        inner_dim = heads * dim_head
        self.to_qkv = nn.Conv2d(dim, inner_dim * 3, 1, bias=False)
        self.pos_emb = AbsPosEmb(fmap_size, dim_head)

    def forward(self, fmap):
        heads, b, c, h, w = self.heads, *fmap.shape
        q, k, v = self.to_qkv(fmap).chunk(3, dim=1)
        q, k, v = map(lambda t: to_heads(t, heads), (q, k, v))

        q *= self.scale  # <-- IPL001: q is a view of a chunk() output; in-place on it is not allowed under autograd

        sim = einsum('b h i d, b h j d -> b h i j', q, k)
        sim += self.pos_emb(q)

        attn = sim.softmax(dim=-1)
        out = einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.permute(0, 1, 3, 2).reshape(b, -1, h, w)
        return out


class BottleBlock(nn.Module):
    def __init__(self, dim, fmap_size, dim_out, heads=2, dim_head=4):
        super().__init__()
        self.shortcut = nn.Sequential(nn.Conv2d(dim, dim_out, 1, bias=False), nn.BatchNorm2d(dim_out), nn.ReLU())
        attn_dim_in = dim_out // 2
        self.net = nn.Sequential(
            nn.Conv2d(dim, attn_dim_in, 1, bias=False),
            nn.BatchNorm2d(attn_dim_in),
            nn.ReLU(),
            Attention(dim=attn_dim_in, fmap_size=fmap_size, heads=heads, dim_head=dim_head),
            nn.BatchNorm2d(heads * dim_head),
            nn.ReLU(),
            nn.Conv2d(heads * dim_head, dim_out, 1, bias=False),
            nn.BatchNorm2d(dim_out),
        )
        self.activation = nn.ReLU()

    def forward(self, x):
        shortcut = self.shortcut(x)
        x = self.net(x)
        x = x + shortcut
        return self.activation(x)


layer = BottleBlock(dim=4, fmap_size=4, dim_out=8)
fmap = torch.randn(2, 4, 4, 4)
out = layer(fmap)
out.mean().backward()
