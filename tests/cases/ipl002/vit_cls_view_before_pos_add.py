# label: hazard silent
# why: cls_in is a view of tokens taken before `tokens += self.pos`, so the CLS shortcut silently picks up the position embedding too.
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

    def forward(self, patches):
        b = patches.shape[0]
        tokens = torch.cat([self.cls_token.expand(b, -1, -1), self.proj(patches)], dim=1)
        cls_in = tokens[:, 0]
        tokens += self.pos  # <-- IPL002: cls_in is a view of tokens
        x = self.block(tokens)
        return self.head(x[:, 0] + cls_in)


model = TinyViT()
model.eval()
patches = torch.randn(2, 4, 12)
logits = model(patches)
logits.sum().backward()
