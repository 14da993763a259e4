# label: hazard raises
# why: W aliases the embedding's weight Parameter; renormalising rows in place inside forward modifies a leaf that requires grad
import torch
import torch.nn as nn

torch.manual_seed(0)


class NormEmbedding(nn.Module):
    def __init__(self, num, dim):
        super().__init__()
        self.emb = nn.Embedding(num, dim)

    def forward(self, ids):
        W = self.emb.weight
        W.div_(W.norm(dim=1, keepdim=True))  # <-- IPL003
        return self.emb(ids)


model = NormEmbedding(7, 3)
ids = torch.tensor([0, 3, 3, 6])
out = model(ids)
loss = out.sum()
loss.backward()
