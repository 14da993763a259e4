# label: hazard raises
# why: sigmoid saves its output for backward; writing b[1] = 2 into that output invalidates it, while the hand-written 1/(exp(-a)+1) form saves nothing that the write touches
# source: https://github.com/pytorch/pytorch/issues/9391
import torch

a = torch.tensor([1, 2, 3.], requires_grad=True)
b = a.sigmoid()
b[1] = 2  # <-- IPL001: overwrites the sigmoid output that SigmoidBackward saved

a2 = torch.tensor([1, 2, 3.], requires_grad=True)
b2 = 1 / ((-a2).exp() + 1)
b2[1] = 2

loss = b.sum() + b2.sum()
loss.backward()
