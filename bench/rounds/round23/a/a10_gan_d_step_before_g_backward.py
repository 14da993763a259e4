# label: hazard raises no-twin
# why: D_loss and G_loss are both built from the same forward pass, and D_optim.step() updates D.weight in place before G_loss.backward(); the conv saved D.weight to compute dG_loss/dY, so the generator backward finds it at a newer version.
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

    # Backward D loss and update D right away.
    D_loss.backward(retain_graph=True)
    D_optim.step()  # <-- IPL001

    # Backward G loss.
    set_requires_grad(D, False)
    G_loss.backward()
    set_requires_grad(D, True)

    # Update G.
    G_optim.step()
    return G.weight.detach().clone(), D.weight.detach().clone()


G_weight, D_weight = main()
