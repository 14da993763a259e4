# label: hazard silent
# why: the tied embedding matrix has its pad row zeroed through .data after the LM forward, so the output projection's backward (which saved the same weight) silently uses the edited matrix for the hidden-state gradient.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.mix = nn.Linear(dim, dim)

    def forward(self, tokens):
        h = torch.tanh(self.mix(self.emb(tokens)))
        return h @ self.emb.weight.t()


vocab, dim, pad = 12, 6, 0
lm = TinyLM(vocab, dim)
tokens = torch.tensor([[4, 7, 2, 9, 0], [3, 3, 8, 0, 0]])
logits = lm(tokens[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))

W = lm.emb.weight
W.data.index_fill_(0, torch.tensor([pad]), 0.0)  # <-- IPL007: pad row zeroed after forward, before backward
loss.backward()
mix_grad = lm.mix.weight.grad.clone()
emb_grad = lm.emb.weight.grad.clone()
