# label: safe
# why: `tokens += self.pos` writes a fresh torch.cat result before any other name refers to it, and the CLS view is taken afterwards, so it should see the position embedding.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyViT(nn.Module):
    def __init__(self, patch_dim=12, d=8, n_patches=4, n_cls=3):
        super().__init__()
        self.proj = nn.Linear(patch_dim, d)
        self.cls_token = nn.Parameter(torch.randn(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, n_patches + 1, d))
        self.block = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, n_cls)
        self.emb_scale = 0.5

    def forward(self, patches):
        b = patches.shape[0]
        tokens = torch.cat([self.cls_token.expand(b, -1, -1), self.proj(patches)], dim=1)
        tokens += self.pos
        cls_in = tokens[:, 0]
        tokens = tokens * self.emb_scale
        x = self.block(tokens)
        return self.head(x[:, 0] + cls_in)


model = TinyViT()
model.eval()
patches = torch.randn(2, 4, 12)
logits = model(patches)
logits.sum().backward()
