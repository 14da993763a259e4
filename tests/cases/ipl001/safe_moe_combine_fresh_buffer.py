# label: safe
# why: the subscript writes go into a freshly allocated zeros buffer that nothing has saved; the expert outputs and router probs are only read.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Top1MoE(nn.Module):
    def __init__(self, dim, n_experts=3):
        super().__init__()
        self.router = nn.Linear(dim, n_experts)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_experts)])

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        weight, idx = probs.max(dim=-1)
        combined = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            sel = idx == e
            if sel.any():
                combined[sel] = expert(x[sel]) * weight[sel].unsqueeze(-1)
        return combined


moe = Top1MoE(4)
x = torch.randn(9, 4)
out = moe(x)
out.pow(2).mean().backward()
