# label: hazard silent
# why: clamp_(min=0) rectifies each block output in place after it was stored for the feature-matching loss, so the stored "pre-activation" features are rectified too
import torch
import torch.nn as nn

torch.manual_seed(0)

blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
x = torch.randn(2, 4)
ref = torch.randn(3, 2, 4)

pre_acts = []
h = x
for blk in blocks:
    h = blk(h)
    pre_acts.append(h)
    h.clamp_(min=0)  # <-- IPL002, IPL008
    h = h * 1.5

fm_loss = sum((a - r).pow(2).mean() for a, r in zip(pre_acts, ref))
loss = fm_loss + h.sum()
loss.backward()
