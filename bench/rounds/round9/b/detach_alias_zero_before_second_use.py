# label: hazard silent
# why: x.detach() shares storage with x, so zeroing the detached copy in place also zeroes x, and the loss built afterwards from x silently uses zeros (y gets a zero gradient) while a and b still receive gradients computed from the original product.
# source: https://github.com/pytorch/pytorch/issues/7860
import torch

torch.manual_seed(0)

a = torch.Tensor([1, 2])
a.requires_grad_(True)
b = torch.Tensor([2, 3])
b.requires_grad_(True)
y = torch.Tensor([1, 1])
y.requires_grad_(True)

x = a * b
x_detach = x.detach()
# keep a snapshot for logging, then reset the running buffer
logged = x_detach.clone()
x_detach.zero_()  # <-- IPL007: writes through a detach() alias into x, which the loss below still reads

out = (x * y).sum()
out.backward()
