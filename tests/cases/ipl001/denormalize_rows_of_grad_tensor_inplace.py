# label: hazard raises
# why: iterating a tensor unbinds it, and autograd refuses an in-place write to one of unbind's views while the tensor requires grad.
import torch

torch.manual_seed(0)
mean = [0.5, 0.4, 0.3]
std = [0.2, 0.2, 0.2]
image = torch.randn(3, 4, 4, requires_grad=True)
scaled = image * 1.0
for channel, m, s in zip(scaled, mean, std):
    channel.mul_(s).add_(m)  # <-- IPL001: writes a view unbind returned
loss = scaled.sum()
loss.backward()
