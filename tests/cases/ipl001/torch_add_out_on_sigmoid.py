# label: hazard raises
# why: torch.add(a, b, out=a) writes into a tensor that requires grad and is saved by SigmoidBackward; out= ops are not differentiable
import torch
import torch.nn as nn

torch.manual_seed(0)

fc = nn.Linear(3, 3)
x = torch.randn(2, 3)
offset = torch.full((2, 3), 0.1)

a = torch.sigmoid(fc(x))
torch.add(a, offset, out=a)  # <-- IPL001
loss = a.sum()
loss.backward()
