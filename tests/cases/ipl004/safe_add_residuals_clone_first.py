# label: safe
# why: add_residuals clones its input before accumulating with +=, so the caller's encoder features stay untouched for the gated fusion.
import torch
import torch.nn as nn

torch.manual_seed(0)


def add_residuals(x, residuals):
    x = x.clone()
    for r in residuals:
        x += r
    return x


encoder = nn.Linear(6, 8)
branch_a = nn.Linear(6, 8)
branch_b = nn.Linear(6, 8)
gate = nn.Linear(16, 8)
head = nn.Linear(8, 3)

inp = torch.randn(10, 6)
feat = encoder(inp)
fused = add_residuals(feat, [branch_a(inp), branch_b(inp)])
g = torch.sigmoid(gate(torch.cat([feat, fused], dim=-1)))
mixed = g * fused + (1 - g) * feat
logits = head(mixed)
loss = logits.logsumexp(-1).mean()
loss.backward()
