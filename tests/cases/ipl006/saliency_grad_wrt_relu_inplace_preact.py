# label: hazard silent
# why: F.relu_ overwrites `pre` in place, so autograd.grad w.r.t. `pre` differentiates w.r.t. the ReLU output and returns unmasked gradients instead of the pre-activation saliency.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Linear(6, 8)
head = nn.Linear(8, 3)
image = torch.randn(2, 6)
target = torch.tensor([0, 2])

# Grad-CAM style: importance of each hidden unit's pre-activation
pre = encoder(image)
act = F.relu_(pre)  # <-- IPL006
logits = head(act)
score = logits.gather(1, target[:, None]).sum()

(unit_grad,) = torch.autograd.grad(score, pre)
saliency = (unit_grad * act.detach()).sum(dim=0)
