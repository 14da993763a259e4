# label: hazard raises
# why: x * scale saved scale (x requires grad), and torch.add(..., out=scale) overwrites it before backward.
import torch

torch.manual_seed(0)

x = torch.randn(4, 5, requires_grad=True)
scale = torch.linspace(0.5, 1.5, 5)

y = x * scale
# warm the scale up for the next call, reusing the buffer
torch.add(scale, 0.1, out=scale)  # <-- IPL001: scale is saved by the mul
loss = (y ** 2).sum()
loss.backward()
