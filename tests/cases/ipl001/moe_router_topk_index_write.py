# label: hazard raises
# why: the router softmax saves its output, and the top-k masking writes zeros into it with a subscript assignment.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoE(nn.Module):
    def __init__(self, dim, n_experts=4, k=2):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_experts)])
        self.k = k

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        topi = probs.topk(self.k, dim=-1).indices
        keep = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, topi, True)
        probs[~keep] = 0.0  # <-- IPL001: probs is softmax's saved output
        probs = probs / probs.sum(-1, keepdim=True)
        expert_out = torch.stack([e(x) for e in self.experts], dim=-2)
        return (probs.unsqueeze(-1) * expert_out).sum(-2)


moe = MoE(6)
x = torch.randn(5, 6)
out = moe(x)
out.pow(2).mean().backward()
