# label: hazard raises
# why: the learnable position embedding is an nn.Parameter leaf; scaling it in place inside forward raises
import torch
import torch.nn as nn

torch.manual_seed(0)


class PatchEmbedViT(nn.Module):
    def __init__(self, img=8, patch=4, dim=8):
        super().__init__()
        n = (img // patch) ** 2
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.pos_scale = dim ** 0.5
        self.encoder = nn.TransformerEncoderLayer(dim, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, imgs):
        x = self.patch(imgs).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat([cls, x], dim=1)
        pos = self.pos_embed
        pos.mul_(self.pos_scale)  # <-- IPL003
        x = x + pos
        return self.encoder(x)[:, 0]


vit = PatchEmbedViT()
imgs = torch.randn(2, 3, 8, 8)
feats = vit(imgs)
loss = feats.pow(2).mean()
loss.backward()
patch_grad = vit.patch.weight.grad
