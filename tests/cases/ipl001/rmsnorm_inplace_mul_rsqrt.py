# label: hazard raises
# why: pow saves its input to compute the RMS; rescaling the hidden states in place afterwards invalidates it
import torch
import torch.nn as nn

torch.manual_seed(0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        inv_rms = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        x.mul_(inv_rms)  # <-- IPL001
        return x * self.weight


embed = nn.Embedding(10, 8)
proj = nn.Linear(8, 8)
norm = RMSNorm(8)
head = nn.Linear(8, 10)

ids = torch.tensor([[1, 4, 7, 2]])
hidden = proj(embed(ids))
logits = head(norm(hidden))
loss = nn.functional.cross_entropy(logits.view(-1, 10), ids.view(-1))
loss.backward()
norm_grad = norm.weight.grad
