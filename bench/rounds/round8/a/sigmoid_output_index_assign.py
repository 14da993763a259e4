# label: hazard raises
# why: b = a.sigmoid() is saved by SigmoidBackward, and b[1] = 2 then overwrites it in place.
# source: https://github.com/pytorch/pytorch/issues/9391
import torch

torch.manual_seed(0)

a = torch.tensor([1, 2, 3.0], requires_grad=True)
b = a.sigmoid()
b[1] = 2  # <-- IPL001: overwrites the sigmoid output saved for backward
b.sum().backward()
