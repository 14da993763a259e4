# label: safe
# why: D_loss (on Y.detach()) and G_loss are both backpropagated before either optimizer steps, and D's requires_grad is toggled off only around G_loss.backward(), so no parameter saved by the shared graph is updated before it is used
# source: https://programmerteach.com/p/concerning-pytorch-under-gan-loss-target-backward-and-step-and-other-precautions
import torch
from torch import nn


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


X = torch.ones(size=[1, 1, 1, 1]).requires_grad_(False)

G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
nn.init.constant_(G.weight, 0.5)
G_optim = torch.optim.SGD(G.parameters(), lr=1.0)

D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
nn.init.constant_(D.weight, 0.7)
D_optim = torch.optim.SGD(D.parameters(), lr=1.0)

G_optim.zero_grad()
D_optim.zero_grad()

Y = G(X)

D_loss = D(Y.detach()) ** 2
G_loss = D(Y) ** 2

D_loss.backward(retain_graph=True)

set_requires_grad(D, False)
G_loss.backward()
set_requires_grad(D, True)

G_optim.step()
D_optim.step()

final_G = G.weight.detach().clone()
final_D = D.weight.detach().clone()
