# label: hazard raises
# why: the saliency input is marked with .requires_grad_() before its SmoothGrad noise is added with add_, so the in-place write hits a leaf that requires grad.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5))
model.eval()
image = torch.rand(1, 1, 4, 4)
target = 2
sigma = 0.1

grads = []
for _ in range(4):
    x_in = image.clone().requires_grad_()
    x_in.add_(sigma * torch.randn_like(x_in))  # <-- IPL003: noise added after requires_grad_()
    score = model(x_in)[0, target]
    (g,) = torch.autograd.grad(score, x_in)
    grads.append(g)

saliency = torch.stack(grads).mean(0).abs()
