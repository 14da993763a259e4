# label: hazard silent no-twin
# why: the eval-mode BatchNorm output saved running_mean/running_var for backward, and the following train-mode call updates those buffers in place without bumping their version, so the eval output gets wrong gradients
# source: https://github.com/pytorch/pytorch/issues/13402
import torch
import torch.nn as nn

torch.manual_seed(0)

bn = torch.nn.BatchNorm2d(3).double()
conv = nn.Conv2d(3, 3, 1).double()
x = torch.randn(2, 3, 4, 4).double().requires_grad_()


def f(x):
    bn.running_mean.data.fill_(0)
    bn.running_var.data.fill_(1)
    bn.eval()
    y0 = bn(conv(x))
    bn.train()
    unused = bn(conv(x))  # <-- IPL001: the train-mode forward overwrites the running stats the eval output saved
    return y0


y0 = f(x)
loss = (y0 ** 2).sum()
loss.backward()
