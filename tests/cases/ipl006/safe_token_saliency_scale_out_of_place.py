# label: safe
# why: the embedding is scaled out of place, so the saliency gradient is w.r.t. the real embedding output; the in-place normalisation acts on the fresh saliency tensor.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

D = 8


class TinyClassifier(nn.Module):
    def __init__(self, vocab=30, d=D):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.enc = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True)
        self.cls = nn.Linear(d, 2)

    def forward(self, ids):
        emb = self.embed(ids)
        x = emb * math.sqrt(D)
        logits = self.cls(self.enc(x).mean(1))
        return logits, emb


clf = TinyClassifier()
clf.eval()
ids = torch.randint(0, 30, (1, 6))
logits, emb = clf(ids)
(g_emb,) = torch.autograd.grad(logits[0, 1], emb)
token_saliency = g_emb.norm(dim=-1)
token_saliency /= token_saliency.sum()
