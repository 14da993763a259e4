# label: hazard raises
# why: the learnable temperature (a leaf nn.Parameter) is clamped in place inside forward with grad enabled instead of under no_grad after the optimizer step.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ContrastiveHead(nn.Module):
    def __init__(self, dim_a=6, dim_b=5, embed_dim=4):
        super().__init__()
        self.proj_a = nn.Linear(dim_a, embed_dim, bias=False)
        self.proj_b = nn.Linear(dim_b, embed_dim, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, a, b):
        za = F.normalize(self.proj_a(a), dim=-1)
        zb = F.normalize(self.proj_b(b), dim=-1)
        scale = self.logit_scale
        scale.clamp_(0, math.log(100))  # <-- IPL003: in-place on a leaf that requires grad
        return scale.exp() * za @ zb.t()


torch.manual_seed(0)
head = ContrastiveHead()
a = torch.randn(4, 6)
b = torch.randn(4, 5)
logits = head(a, b)
labels = torch.arange(4)
loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
loss.backward()
