# label: hazard silent
# why: add_residuals accumulates into the caller's encoder output with +=, so the gating layer that concatenates the "raw" features actually gets the fused ones twice.
import torch
import torch.nn as nn

torch.manual_seed(0)


def add_residuals(x, residuals):
    for r in residuals:
        x += r  # <-- IPL004: x is the caller's tensor
    return x


encoder = nn.Linear(6, 8)
branch_a = nn.Linear(6, 8)
branch_b = nn.Linear(6, 8)
gate = nn.Linear(16, 8)
head = nn.Linear(8, 3)

inp = torch.randn(10, 6)
feat = encoder(inp)
fused = add_residuals(feat, [branch_a(inp), branch_b(inp)])
# gated fusion: compare the raw encoder features against the fused ones
g = torch.sigmoid(gate(torch.cat([feat, fused], dim=-1)))
mixed = g * fused + (1 - g) * feat
logits = head(mixed)
loss = logits.logsumexp(-1).mean()
loss.backward()
