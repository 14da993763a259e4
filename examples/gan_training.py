"""GAN training loops: when may the discriminator's optimizer step?

``optimizer.step()`` updates parameters in place. Any graph built *before* the step that still
has to be backpropagated saved those parameters (a Linear layer saves its weight to compute the
gradient of its input), so the later ``backward()`` finds them at a newer version and raises.

``train_step_reused_graph`` computes D(G(z)) once, keeps the graph with ``retain_graph=True``,
steps the discriminator and then backpropagates the generator loss through the *old* graph.
``train_step_standard`` scores ``fake.detach()`` for D and runs D again after its step for G.

Run ``python examples/gan_training.py``.
"""

from __future__ import annotations

import torch
from torch import nn


def make_generator(latent: int = 8, hidden: int = 32) -> nn.Module:
    return nn.Sequential(
        nn.Linear(latent, hidden),
        nn.LeakyReLU(0.2, inplace=True),  # safe: the Linear output is not saved
        nn.Linear(hidden, hidden),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Linear(hidden, 2),
    )


def make_discriminator(hidden: int = 32) -> nn.Module:
    return nn.Sequential(
        nn.Linear(2, hidden),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Linear(hidden, 1),
    )


def real_batch(n: int) -> torch.Tensor:
    """Points on a noisy ring of radius 2."""
    angle = torch.rand(n) * 2 * torch.pi
    ring = torch.stack([angle.cos(), angle.sin()], dim=1) * 2.0
    return ring + 0.05 * torch.randn(n, 2)


def train_step_reused_graph(G, D, opt_g, opt_d, real: torch.Tensor, latent: int = 8):
    """Shares one discriminator pass between both losses. HAZARD."""
    criterion = nn.BCEWithLogitsLoss()
    ones = torch.ones(real.size(0), 1)
    zeros = torch.zeros(real.size(0), 1)

    fake = G(torch.randn(real.size(0), latent))
    d_fake = D(fake)
    loss_d = criterion(D(real), ones) + criterion(d_fake, zeros)
    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    opt_d.step()  # <-- IPL001

    loss_g = criterion(d_fake, ones)  # reuses the graph of D(fake) from before the step
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return loss_d.item(), loss_g.item()


def train_step_standard(G, D, opt_g, opt_d, real: torch.Tensor, latent: int = 8):
    """Discriminator on a detached sample, then a fresh pass for the generator. Safe."""
    criterion = nn.BCEWithLogitsLoss()
    ones = torch.ones(real.size(0), 1)
    zeros = torch.zeros(real.size(0), 1)

    fake = G(torch.randn(real.size(0), latent))
    loss_d = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()  # safe: the graph that used D's old weights is already consumed

    loss_g = criterion(D(fake), ones)  # new forward through the updated D
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    return loss_d.item(), loss_g.item()


def train_step_generator_first(G, D, opt_g, opt_d, real: torch.Tensor, latent: int = 8):
    """Keeps the shared pass but finishes every backward before any step. Safe."""
    criterion = nn.BCEWithLogitsLoss()
    ones = torch.ones(real.size(0), 1)
    zeros = torch.zeros(real.size(0), 1)

    fake = G(torch.randn(real.size(0), latent))
    d_fake = D(fake)
    loss_g = criterion(d_fake, ones)
    loss_d = criterion(D(real), ones) + criterion(D(fake.detach()), zeros)
    opt_g.zero_grad()
    loss_g.backward()  # also leaves gradients in D; cleared just below
    opt_d.zero_grad()
    loss_d.backward()
    opt_g.step()
    opt_d.step()
    return loss_d.item(), loss_g.item()


def main() -> None:
    torch.manual_seed(0)
    steps = [
        ("standard", train_step_standard),
        ("generator first", train_step_generator_first),
        ("reused graph", train_step_reused_graph),
    ]
    for name, step in steps:
        G, D = make_generator(), make_discriminator()
        opt_g = torch.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        try:
            for _ in range(20):
                loss_d, loss_g = step(G, D, opt_g, opt_d, real_batch(64))
        except RuntimeError as err:
            print(f"{name:<16} FAILED: {str(err).split(' Hint:')[0]}")
        else:
            print(f"{name:<16} 20 steps ok, loss_d={loss_d:.3f} loss_g={loss_g:.3f}")


if __name__ == "__main__":
    main()
