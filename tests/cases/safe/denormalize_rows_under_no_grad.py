# label: safe no-twin
# why: the same per-channel denormalisation runs under no_grad on a detached copy, where unbind's views may be written.
import torch

torch.manual_seed(0)
mean = [0.5, 0.4, 0.3]
std = [0.2, 0.2, 0.2]
image = torch.randn(3, 4, 4, requires_grad=True)
loss = (image * 2).sum()
loss.backward()
with torch.no_grad():
    shown = image.detach().clone()
    for channel, m, s in zip(shown, mean, std):
        channel.mul_(s).add_(m)
