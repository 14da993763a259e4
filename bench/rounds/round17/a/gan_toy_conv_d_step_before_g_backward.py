# label: hazard raises no-twin
# why: D_optim.step() updates D's weight in place after both losses were built, but G_loss = D(Y) ** 2 still needs the old D weight (saved by the convolution) when G_loss.backward() runs
# source: https://programmerteach.com/p/concerning-pytorch-under-gan-loss-target-backward-and-step-and-other-precautions
import torch
from torch import nn


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


X = torch.ones(size=[1, 1, 1, 1]).requires_grad_(False)

G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
G.weight.data.fill_(0.5)
G_optim = torch.optim.SGD(G.parameters(), lr=1.0)

D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
D.weight.data.fill_(0.7)
D_optim = torch.optim.SGD(D.parameters(), lr=1.0)

G_optim.zero_grad()
D_optim.zero_grad()

Y = G(X)

D_loss = D(Y.detach()) ** 2
G_loss = D(Y) ** 2

D_loss.backward(retain_graph=True)
D_optim.step()  # <-- IPL001: in-place update of D.weight, which the G_loss graph saved for backward

set_requires_grad(D, False)
G_loss.backward()
set_requires_grad(D, True)

G_optim.step()
