# label: safe
# why: functional conv without bias, then `out += bias` on the conv output; convolution saves input and weight, not its output
import torch
import torch.nn.functional as F

torch.manual_seed(0)

weight = torch.randn(4, 3, 3, 3, requires_grad=True)
bias = torch.randn(4, requires_grad=True)
x = torch.randn(2, 3, 6, 6)

out = F.conv2d(x, weight, padding=1)
out += bias.view(1, -1, 1, 1)
out = F.leaky_relu(out, 0.1, inplace=True)
loss = out.mean()
loss.backward()
