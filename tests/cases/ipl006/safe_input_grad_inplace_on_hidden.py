# label: safe
# why: the in-place scaling and ReLU hit hidden activations that are never grad targets, and autograd.grad asks for d/dx of an input that is never written.
import torch
import torch.nn as nn

torch.manual_seed(0)

fc1 = nn.Linear(5, 8)
fc2 = nn.Linear(8, 1)
x = torch.randn(3, 5, requires_grad=True)

h = fc1(x)
h *= 0.5
h.relu_()
out = fc2(h).sum()
(dx,) = torch.autograd.grad(out, x)
input_saliency = dx.abs()
