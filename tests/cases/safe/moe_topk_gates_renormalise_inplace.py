# label: safe
# why: the top-k gate values are a fresh tensor produced by topk (which saves only indices), so renormalising them in place is correct
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TopKMoE(nn.Module):
    def __init__(self, dim, n_experts=4, k=2):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(dim, n_experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n_experts)])

    def forward(self, x):
        logits = self.gate(x)
        probs = F.softmax(logits, dim=-1)
        topv, topi = probs.topk(self.k, dim=-1)
        topv /= topv.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for slot in range(self.k):
            for e, expert in enumerate(self.experts):
                sel = (topi[:, slot] == e).unsqueeze(-1).float()
                out = out + sel * topv[:, slot:slot + 1] * expert(x)
        return out, probs


moe = TopKMoE(6)
tokens = torch.randn(7, 6)
y, probs = moe(tokens)
balance = probs.mean(0).pow(2).sum()
loss = y.pow(2).mean() + 0.1 * balance
loss.backward()
gate_grad = moe.gate.weight.grad
