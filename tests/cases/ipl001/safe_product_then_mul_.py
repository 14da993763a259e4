# label: safe
# why: `x = a * b; x.mul_(c)` - MulBackward saves a and b (its inputs), not its output, so scaling the product in place is fine
import torch

torch.manual_seed(0)

a = torch.randn(4, requires_grad=True)
b = torch.randn(4, requires_grad=True)
c = torch.randn(4, requires_grad=True)

x = a * b
x.mul_(c)
x.add_(1.0)
loss = x.pow(2).sum()
loss.backward()
