# label: hazard silent
# why: the hand-written softmax normalises exp's output through .data, so exp's backward (which reuses its saved result) silently sees the normalised probabilities and the attention gradients are wrong.
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(-1, -2) / x.shape[-1] ** 0.5
        e = torch.exp(scores - scores.max(dim=-1, keepdim=True).values.detach())
        e.data.div_(e.sum(dim=-1, keepdim=True))  # <-- IPL007: normalises exp's saved result behind autograd
        return e @ self.v(x)


attn = TinyAttention(6)
x = torch.randn(2, 4, 6)
target = torch.randn(2, 4, 6)
out = attn(x)
loss = (out - target).pow(2).mean()
loss.backward()
q_grad = attn.q.weight.grad.clone()
k_grad = attn.k.weight.grad.clone()
