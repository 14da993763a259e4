# label: safe
# why: top_k_logits clones the logits before masking them in place, so the caller's logits (and the model output they are a view of) keep their values
# source: https://github.com/karpathy/minGPT/issues/10
import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class TinyGPT(nn.Module):
    def __init__(self, vocab_size=11, n_embd=16, block_size=8):
        super().__init__()
        self.block_size = block_size
        self.tok_emb = nn.Embedding(vocab_size, n_embd)
        self.pos_emb = nn.Parameter(torch.randn(1, block_size, n_embd) * 0.02)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def get_block_size(self):
        return self.block_size

    def forward(self, idx, targets=None):
        b, t = idx.size()
        x = self.tok_emb(idx) + self.pos_emb[:, :t, :]
        logits = self.head(torch.tanh(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def top_k_logits(logits, k):
    v, ix = torch.topk(logits, k)
    out = logits.clone()
    out[out < v[:, [-1]]] = -float('Inf')
    return out


@torch.no_grad()
def sample(model, x, steps, temperature=1.0, sample=False, top_k=None):
    block_size = model.get_block_size()
    model.eval()
    raw = []
    for k in range(steps):
        x_cond = x if x.size(1) <= block_size else x[:, -block_size:]
        logits, _ = model(x_cond)
        logits = logits[:, -1, :] / temperature
        raw.append(logits)
        if top_k is not None:
            filtered = top_k_logits(logits, top_k)
        else:
            filtered = logits
        probs = F.softmax(filtered, dim=-1)
        if sample:
            ix = torch.multinomial(probs, num_samples=1)
        else:
            _, ix = torch.topk(probs, k=1, dim=-1)
        x = torch.cat((x, ix), dim=1)
    return x, torch.stack(raw, dim=1)


model = TinyGPT()
context = torch.tensor([[1, 2, 3]], dtype=torch.long)
y, raw_logits = sample(model, context, 6, temperature=0.9, sample=True, top_k=3)
raw_probs = F.softmax(raw_logits, dim=-1)
