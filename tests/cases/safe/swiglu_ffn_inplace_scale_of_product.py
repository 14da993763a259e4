# label: safe
# why: the SwiGLU product h = silu(gate) * up is a fresh tensor that mul saved nothing of, so scaling it in place with mul_ is fine.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SwiGLUFeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, residual_scale=0.5):
        super().__init__()
        self.w_gate = nn.Linear(dim, hidden_dim, bias=False)
        self.w_up = nn.Linear(dim, hidden_dim, bias=False)
        self.w_down = nn.Linear(hidden_dim, dim, bias=False)
        self.residual_scale = residual_scale

    def forward(self, x):
        h = F.silu(self.w_gate(x)) * self.w_up(x)
        h.mul_(self.residual_scale)
        return self.w_down(h)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Block(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm = RMSNorm(dim)
        self.ffn = SwiGLUFeedForward(dim, 4 * dim)

    def forward(self, x):
        return x + self.ffn(self.norm(x))


torch.manual_seed(0)
block = Block()
x = torch.randn(2, 3, 8)
out = block(x)
loss = out.pow(2).mean()
loss.backward()
