# label: hazard silent
# why: L2-normalising embeddings through .data hides the division from autograd, so the encoder gradients are computed as if no normalisation happened.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CosineClassifier(nn.Module):
    def __init__(self, in_dim, emb_dim, n_classes):
        super().__init__()
        self.encoder = nn.Linear(in_dim, emb_dim)
        self.prototypes = nn.Linear(emb_dim, n_classes, bias=False)

    def forward(self, x):
        feats = self.encoder(x)
        feats.data.div_(feats.data.norm(dim=1, keepdim=True))  # <-- IPL007: normalisation invisible to autograd
        return self.prototypes(feats) * 10.0


model = CosineClassifier(12, 6, 3)
x = torch.randn(8, 12)
y = torch.randint(0, 3, (8,))
loss = F.cross_entropy(model(x), y)
loss.backward()
