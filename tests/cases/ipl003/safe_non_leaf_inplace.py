# label: safe
# why: the in-place ops hit h, a non-leaf computed from the leaf w (MulBackward saves only the scalar), not w itself
import torch

torch.manual_seed(0)

w = torch.randn(3, requires_grad=True)
h = w * 2.0
h.add_(1.0)
h.clamp_(max=3.0)
loss = (h ** 2).sum()
loss.backward()
