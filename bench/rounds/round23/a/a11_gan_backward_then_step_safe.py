# label: safe no-twin
# why: both losses are backpropagated before either optimizer steps (D is frozen with requires_grad_(False) while G_loss.backward() runs), so no weight saved by the shared graph is updated in place before its backward has used it.
# source: http://weizhi.cc/tech/detail-214989.html
import torch
from torch import nn

torch.manual_seed(0)


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


def main():
    X = torch.ones(size=[2, 1, 4, 4]).requires_grad_(False)

    G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
    G.weight.data.fill_(0.5)
    G_optim = torch.optim.SGD(G.parameters(), lr=1.0)

    D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
    D.weight.data.fill_(0.7)
    D_optim = torch.optim.SGD(D.parameters(), lr=1.0)

    # Zero gradient of 2 layers.
    G_optim.zero_grad()
    D_optim.zero_grad()

    # Forward pass.
    Y = G(X)

    # Calculate D loss.
    D_loss = (D(Y.detach()) ** 2).mean()

    # Calculate G loss.
    G_loss = (D(Y) ** 2).mean()

    # Backward D loss.
    D_loss.backward(retain_graph=True)

    # Backward G loss.
    set_requires_grad(D, False)  # Turn off D's grad to avoid redundant gradient accumulation on D.
    G_loss.backward()
    set_requires_grad(D, True)

    # Update G.
    G_optim.step()

    # Update D.
    D_optim.step()
    return G.weight.detach().clone(), D.weight.detach().clone(), G.weight.grad, D.weight.grad


G_weight, D_weight, G_grad, D_grad = main()
