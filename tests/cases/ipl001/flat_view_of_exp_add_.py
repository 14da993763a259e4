# label: hazard raises
# why: .view(-1) aliases the exp output that ExpBackward saved; add_ through the flat view bumps its version
import torch
import torch.nn as nn

torch.manual_seed(0)

scale_head = nn.Linear(3, 4)
x = torch.randn(2, 3)

scales = torch.exp(scale_head(x))
flat = scales.view(-1)
flat.add_(1e-3)  # <-- IPL001
loss = (scales * torch.randn(2, 4)).sum()
loss.backward()
