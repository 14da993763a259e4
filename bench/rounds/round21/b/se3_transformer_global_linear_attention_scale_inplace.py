# label: hazard raises
# why: GlobalLinearAttention takes `q = q.softmax(dim=-1)` and then scales it in place with `q *= self.scale`; SoftmaxBackward saved that output, so backpropagating through the global attention branch raises.
# source: https://github.com/lucidrains/se3-transformer-pytorch/blob/fe9b20f0223b069f5efb037de2390682db10a87d/se3_transformer_pytorch/se3_transformer_pytorch.py (pre-removal code of GlobalLinearAttention, removed in commit fe9b20f0223b069f5efb037de2390682db10a87d)
import torch
from torch import nn, einsum

torch.manual_seed(0)


def exists(val):
    return val is not None


def map_values(fn, d):
    return {k: fn(v) for k, v in d.items()}


class GlobalLinearAttention(nn.Module):
    def __init__(self, fiber, dim_head=16, heads=4, **kwargs):
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
        b, n, _ = q.shape
        q, k, v = map(lambda t: t.reshape(b, n, h, -1).transpose(1, 2), (q, k, v))

        if exists(mask):
            mask = mask[:, None, :, None]
            k = k.masked_fill(~mask, -torch.finfo(k.dtype).max)
            v = v.masked_fill(~mask, 0.)

        q = q.softmax(dim=-1)
        k = k.softmax(dim=-2)

        q *= self.scale  # <-- IPL001

        context = einsum('b h n d, b h n e -> b h d e', k, v)
        attn_out = einsum('b h d e, b h n d -> b h n e', context, q)
        attn_out = attn_out.transpose(1, 2).reshape(b, n, -1)
        attn_out = self.to_out(attn_out)

        out = map_values(lambda *args: 0, features)
        out['0'] = attn_out.unsqueeze(-1)
        return out


def main():
    fiber = {0: 32}
    attn = GlobalLinearAttention(fiber)
    features = {'0': torch.randn(2, 10, 32, 1), '1': torch.randn(2, 10, 8, 3)}
    mask = torch.ones(2, 10, dtype=torch.bool)
    mask[1, 7:] = False
    out = attn(features, mask=mask)
    loss = out['0'].pow(2).mean()
    loss.backward()
    return loss.detach(), attn.to_qkv.weight.grad


loss, qkv_grad = main()
