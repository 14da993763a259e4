# label: hazard silent
# why: F.relu_(h) inside the autograd.grad call rebinds h to the ReLU output, so the gradient is d/d(relu(h)) = 1 instead of the 0/1 mask
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

enc = nn.Linear(4, 6)
x = torch.randn(3, 4)

h = enc(x)
(dh,) = torch.autograd.grad(F.relu_(h).sum(), h)  # <-- IPL006
dead_fraction = (dh == 0).float().mean()
