# label: safe
# why: drop_path only edits the freshly drawn random_tensor in place (bernoulli_/div_), which does not require grad and is not saved by anything yet
# source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/layers/drop.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)  # work with diff dim tensors, not just 2D ConvNets
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0., scale_by_keep: bool = True):
        super(DropPath, self).__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)


class Block(nn.Module):
    def __init__(self, dim, drop_path=0.):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(drop_path) if drop_path > 0. else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path(self.mlp(self.norm1(x)))
        return x


dpr = [x.item() for x in torch.linspace(0, 0.5, 3)]
blocks = nn.Sequential(*[Block(8, drop_path=dpr[i]) for i in range(3)])
blocks.train()
tokens = torch.randn(4, 5, 8)
out = blocks(tokens)
loss = out.pow(2).mean()
loss.backward()
