# label: hazard raises
# why: k and v are views of a single chunk() call, so masking them in place is rejected by autograd (multi-output views), and the in-place scale of q overwrites the softmax output saved for backward
# source: https://github.com/lucidrains/se3-transformer-pytorch/commit/84b15666f32e3d0b457f85a976a123cc934b1cfa
import torch
from torch import einsum, nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def map_values(fn, d):
    return {k: fn(v) for k, v in d.items()}


class GlobalLinearAttention(nn.Module):
    def __init__(self, fiber, dim_head=4, heads=2, **kwargs):
        super().__init__()
        inner_dim = dim_head * heads
        self.scale = dim_head ** -0.5
        self.heads = heads
        self.to_qkv = nn.Linear(fiber[0], inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, fiber[0])

    def forward(self, features, edge_info=None, rel_dist=None, basis=None, global_feats=None, pos_emb=None, mask=None):
        h = self.heads
        x = features['0']  # only working on type 0 features for global linear attention
        x = x.squeeze(-1)

        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(1, 2), (q, k, v))

        if exists(mask):
            mask = mask[:, None, :, None]
            k.masked_fill_(~mask, -torch.finfo(k.dtype).max)  # <-- IPL001: k is one of several views returned by chunk()
            v.masked_fill_(~mask, 0.)  # <-- IPL001: v is one of several views returned by chunk()

        q = q.softmax(dim=-1)
        k = k.softmax(dim=-2)

        q *= self.scale  # <-- IPL001: overwrites the softmax output saved for backward

        context = einsum('b h n d, b h n e -> b h d e', k, v)
        attn_out = einsum('b h d e, b h n d -> b h n e', context, q)
        attn_out = attn_out.transpose(1, 2).reshape(attn_out.shape[0], attn_out.shape[2], -1)
        attn_out = self.to_out(attn_out)

        out = map_values(lambda *args: 0, features)
        out['0'] = attn_out.unsqueeze(-1)
        return out


fiber = {0: 6}
attn = GlobalLinearAttention(fiber)
feats = {'0': torch.randn(2, 5, 6, 1)}
mask = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
out = attn(feats, mask=mask)
loss = out['0'].pow(2).mean()
loss.backward()
