# label: hazard silent
# why: F.relu_ inside the head call turns `fmap` into the rectified map; Grad-CAM weights come from the gradient w.r.t. relu's output, not the conv output
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)
head = nn.Linear(4 * 6 * 6, 5)

img = torch.randn(1, 3, 6, 6)
fmap = conv(img)
logits = head(F.relu_(fmap).flatten(1))  # <-- IPL006
target = logits.argmax(dim=1).item()

# Grad-CAM: gradient of the class score w.r.t. the conv activations
(fmap_grad,) = torch.autograd.grad(logits[0, target], fmap)
channel_weights = fmap_grad.mean(dim=(2, 3), keepdim=True)
cam = (channel_weights * fmap).sum(dim=1)
cam = F.relu(cam)
cam = cam / (cam.max() + 1e-8)
