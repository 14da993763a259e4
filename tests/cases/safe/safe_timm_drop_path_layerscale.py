# label: safe
# why: timm ViT block: old-style drop_path builds its mask with `floor_()` on a fresh random tensor and LayerScale(inplace=True) does `x.mul_(gamma)` on a Linear output, which Linear never saves.
import torch
import torch.nn as nn
import torch.nn.functional as F


def drop_path(x, drop_prob: float = 0.0, training: bool = False):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = keep_prob + torch.rand(shape, dtype=x.dtype, device=x.device)
    random_tensor.floor_()
    output = x.div(keep_prob) * random_tensor
    return output


class DropPath(nn.Module):
    def __init__(self, drop_prob=None):
        super().__init__()
        self.drop_prob = drop_prob

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training)


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-1, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        if self.inplace:
            x.mul_(self.gamma)
            return x
        return x * self.gamma


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim, drop_path_rate):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.ls1 = LayerScale(dim, inplace=True)
        self.drop_path1 = DropPath(drop_path_rate)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, dim * 2)
        self.ls2 = LayerScale(dim, inplace=True)
        self.drop_path2 = DropPath(drop_path_rate)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.drop_path1(self.ls1(self.attn(h, h, h, need_weights=False)[0]))
        x = x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))
        return x


torch.manual_seed(0)
dpr = [r.item() for r in torch.linspace(0, 0.3, 3)]
blocks = nn.Sequential(*[Block(8, p) for p in dpr])
tokens = torch.randn(4, 5, 8)
out = blocks(tokens)
loss = F.mse_loss(out, torch.zeros_like(out))
loss.backward()
