# label: hazard silent
# why: y.data.mul_(2) bypasses the version counter, so SigmoidBackward silently uses the doubled output and the scaling itself has no gradient
import torch
import torch.nn as nn

torch.manual_seed(0)

fc = nn.Linear(3, 4)
x = torch.randn(5, 3, requires_grad=True)

y = torch.sigmoid(fc(x))
y.data.mul_(2.0)  # <-- IPL007
loss = (y * torch.randn(5, 4)).sum()
loss.backward()
