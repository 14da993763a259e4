# label: hazard silent
# why: F.relu_ rebinds acts to the post-ReLU version, so autograd.grad w.r.t. acts skips the ReLU mask the user wanted in the saliency map.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Conv2d(3, 6, 3, padding=1)
pool = nn.AdaptiveAvgPool2d(1)
classifier = nn.Linear(6, 4)

images = torch.randn(2, 3, 8, 8)
target_class = 1

acts = backbone(images)
pooled = pool(F.relu_(acts)).flatten(1)  # <-- IPL006: acts is the autograd.grad target below
scores = classifier(pooled)
(acts_grad,) = torch.autograd.grad(scores[:, target_class].sum(), acts)
cam = (acts_grad.mean(dim=(2, 3), keepdim=True) * acts.detach()).sum(dim=1)
