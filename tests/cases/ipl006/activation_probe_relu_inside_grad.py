# label: hazard silent
# why: F.relu_(pre) rewrites pre into its own ReLU output, so autograd.grad(..., pre) differentiates w.r.t. the activation and returns all ones instead of the ReLU mask.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

layer = nn.Linear(6, 8)
readout = nn.Linear(8, 1)
x = torch.randn(5, 6)

pre = layer(x)
score = readout(F.relu_(pre)).sum()  # <-- IPL006: pre is the grad target below
(d_pre,) = torch.autograd.grad(score, pre)
unit_importance = d_pre.abs().mean(0)
