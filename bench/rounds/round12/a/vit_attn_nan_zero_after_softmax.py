# label: hazard raises
# why: to remove NaNs from fully masked rows the user zeroes entries of attn by boolean-index assignment, but attn is the softmax output saved for its backward
# source: https://github.com/lucidrains/vit-pytorch/issues/26
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=4):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x, mask=None):
        b, n, _ = x.shape
        h = self.heads
        qkv = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = map(lambda t: t.reshape(b, n, h, -1).transpose(1, 2), qkv)
        dots = einsum('bhid,bhjd->bhij', q, k) * self.scale
        if mask is not None:
            mask = F.pad(mask.flatten(1), (1, 0), value=True)
            mask = mask[:, None, :] * mask[:, :, None]
            dots.masked_fill_(~mask[:, None], float('-inf'))
        attn = dots.softmax(dim=-1)
        attn[torch.isnan(attn)] = float(0)  # <-- IPL001: softmax output saved for backward is overwritten
        out = einsum('bhij,bhjd->bhid', attn, v)
        out = out.transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class ViT(nn.Module):
    def __init__(self, num_patches=4, patch_dim=12, dim=8, num_classes=2):
        super().__init__()
        self.patch_to_embedding = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.attn = Attention(dim)
        self.mlp_head = nn.Linear(dim, num_classes)

    def forward(self, patches, mask=None):
        x = self.patch_to_embedding(patches)
        b = x.shape[0]
        x = torch.cat((self.cls_token.expand(b, -1, -1), x), dim=1) + self.pos_embedding
        x = x + self.attn(x, mask=mask)
        return self.mlp_head(x[:, 0])


model = ViT()
patches = torch.randn(2, 4, 12)
mask = torch.tensor([[True, True, False, False], [True, True, True, False]])
logits = model(patches, mask=mask)
loss = F.cross_entropy(logits, torch.tensor([0, 1]))
loss.backward()
