# label: safe
# why: the cleaned-up Equiformer.forward adds the positional embedding out of place (`feats = feats + ...`), so the caller's `feats` is untouched and the two calls of the equivariance test see the same input; outputs match up to rotation and `feats` is returned unchanged.
# source: https://github.com/lucidrains/equiformer-pytorch/commit/1fd2b4e934e9c2a36a94ca0f26f6ab5d9b992a3c
import math

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def exists(val):
    return val is not None


def rot_z(gamma):
    return torch.tensor([
        [math.cos(gamma), -math.sin(gamma), 0.],
        [math.sin(gamma), math.cos(gamma), 0.],
        [0., 0., 1.]
    ])


def rot_y(beta):
    return torch.tensor([
        [math.cos(beta), 0., math.sin(beta)],
        [0., 1., 0.],
        [-math.sin(beta), 0., math.cos(beta)]
    ])


def rot(alpha, beta, gamma):
    return rot_z(alpha) @ rot_y(beta) @ rot_z(gamma)


class DotProductAttention(nn.Module):
    """Degree-0 attention whose logits see only invariant features (scalars and distances);
    the degree-1 output is a weighted sum of relative positions, hence rotation equivariant."""

    def __init__(self, dim, heads = 2, dim_head = 8):
        super().__init__()
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_q = nn.Linear(dim, heads * dim_head, bias = False)
        self.to_k = nn.Linear(dim, heads * dim_head, bias = False)
        self.to_v = nn.Linear(dim, heads * dim_head, bias = False)
        self.dist_bias = nn.Linear(1, heads)
        self.to_out = nn.Linear(heads * dim_head, dim)
        self.to_coors = nn.Linear(heads, 1, bias = False)

    def forward(self, feats, rel_pos, mask = None):
        x = feats['0'][..., 0]
        b, n, _ = x.shape
        h = self.heads
        q, k, v = self.to_q(x), self.to_k(x), self.to_v(x)
        q, k, v = map(lambda t: t.reshape(b, n, h, -1).transpose(1, 2), (q, k, v))
        sim = torch.einsum('b h i d, b h j d -> b h i j', q, k) * self.scale
        rel_dist = rel_pos.norm(dim = -1, keepdim = True)
        sim = sim + self.dist_bias(rel_dist).permute(0, 3, 1, 2)
        if exists(mask):
            mask = mask[:, None, :, None] & mask[:, None, None, :]
            sim = sim.masked_fill(~mask, -torch.finfo(sim.dtype).max)
        attn = sim.softmax(dim = -1)
        out = torch.einsum('b h i j, b h j d -> b h i d', attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        coors_out = torch.einsum('b h i j, b i j c -> b i h c', attn, rel_pos)
        coors_out = self.to_coors(coors_out.transpose(-1, -2)).transpose(-1, -2)
        return {'0': self.to_out(out)[..., None], '1': coors_out}


class Equiformer(nn.Module):
    def __init__(
        self,
        *,
        dim,
        num_tokens = None,
        num_positions = None,
        depth = 1,
    ):
        super().__init__()
        self.dim_in = (dim,)
        self.token_emb = nn.Embedding(num_tokens, dim) if exists(num_tokens) else None
        self.num_positions = num_positions
        self.pos_emb = nn.Embedding(num_positions, dim) if exists(num_positions) else None
        self.layers = nn.ModuleList([DotProductAttention(dim) for _ in range(depth)])

    def forward(
        self,
        feats,
        coors,
        mask = None,
        return_type = None,
    ):
        if exists(self.token_emb):
            feats = self.token_emb(feats)

        if exists(self.pos_emb):
            assert feats.shape[1] <= self.num_positions, 'feature sequence length must be less than the number of positions given at init'
            pos_emb = self.pos_emb(torch.arange(feats.shape[1], device = feats.device))
            feats = feats + pos_emb[None, :, :]

        if torch.is_tensor(feats):
            feats = {'0': feats[..., None]}

        b, n, d, *_, device = *feats['0'].shape, feats['0'].device

        assert d == self.dim_in[0], f'feature dimension {d} must be equal to dimension given at init {self.dim_in[0]}'

        rel_pos = coors[:, :, None, :] - coors[:, None, :, :]

        out = None
        for attn in self.layers:
            out = attn(feats, rel_pos, mask = mask)
            feats = {'0': out['0'] + feats['0']}

        if return_type == 0:
            return out['0'][..., 0]
        return out['1'][..., 0, :]


DIM = 16


def test_equivariance():
    model = Equiformer(
        dim = DIM,
        depth = 1,
        num_positions = 32,
    )

    feats = torch.randn(1, 32, DIM)
    coors = torch.randn(1, 32, 3)
    mask  = torch.ones(1, 32).bool()

    R   = rot(15, 0, 45)
    out1 = model(feats, coors @ R, mask, return_type = 1)
    out2 = model(feats, coors, mask, return_type = 1) @ R

    diff = (out1 - out2).abs().max()
    return out1.detach(), out2.detach(), diff.detach(), feats


out1, out2, diff, feats = test_equivariance()
