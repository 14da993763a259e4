# label: safe
# why: `x += self.pos_embed` hits a fresh view of the patch-embedding conv output (conv does not save its output), and the sinusoidal table is filled by slice assignment on a new tensor in __init__.
import math

import torch
import torch.nn as nn


def sinusoidal_table(n_pos, dim):
    pe = torch.zeros(n_pos, dim)
    position = torch.arange(0, n_pos, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(10000.0) / dim))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class PatchEmbed(nn.Module):
    def __init__(self, img_size=8, patch_size=4, in_chans=3, embed_dim=8):
        super().__init__()
        self.num_patches = (img_size // patch_size) ** 2
        self.proj = nn.Conv2d(in_chans, embed_dim, patch_size, patch_size)

    def forward(self, x):
        x = self.proj(x)
        x = x.flatten(2).transpose(1, 2)
        return x


class ViTStem(nn.Module):
    def __init__(self, embed_dim=8):
        super().__init__()
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        n = self.patch_embed.num_patches
        self.pos_embed = nn.Parameter(torch.randn(1, n, embed_dim) * 0.02)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.register_buffer("fixed_pe", sinusoidal_table(n + 1, embed_dim), persistent=False)
        self.norm = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, 3)

    def forward(self, img):
        x = self.patch_embed(img)
        x += self.pos_embed
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1)
        x = x + self.fixed_pe
        x = self.norm(x)
        return self.head(x[:, 0])


torch.manual_seed(0)
vit = ViTStem()
img = torch.randn(2, 3, 8, 8)
logits = vit(img)
loss = logits.softmax(-1)[:, 0].sum()
loss.backward()
