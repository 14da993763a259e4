# label: hazard raises no-twin
# why: with broadcast_buffers=True the DDP-wrapped discriminator copies rank-0 BatchNorm running stats into its buffers in place at the start of every forward, so the second D(real) call bumps the running_mean that D(fake)'s batch-norm node saved, and loss_D.backward() fails.
# source: https://github.com/HoiM/MobileFSGAN/issues/5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DistributedDataParallel(nn.Module):
    """Stand-in for torch.nn.parallel.DistributedDataParallel's forward-time buffer broadcast."""

    def __init__(self, module, broadcast_buffers=True):
        super().__init__()
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        self.rank0_buffers = [b.clone() for b in module.buffers()]

    def _sync_buffers(self):
        with torch.no_grad():
            for buf, src in zip(self.module.buffers(), self.rank0_buffers):
                buf.copy_(src)  # <-- IPL001

    def forward(self, *inputs):
        if self.broadcast_buffers:
            self._sync_buffers()
        return self.module(*inputs)


def down_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 4, 2, 1), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.d256 = nn.Sequential(down_block(3, 16), nn.Conv2d(16, 1, 3, 1, 1))
        self.d128 = nn.Sequential(down_block(3, 16), nn.Conv2d(16, 1, 3, 1, 1))
        self.d64 = nn.Sequential(down_block(3, 16), nn.Conv2d(16, 1, 3, 1, 1))

    def forward(self, x256, x128, x64):
        return self.d256(x256), self.d128(x128), self.d64(x64)


def adv_loss(out, target_is_real):
    target = torch.ones_like(out) if target_is_real else torch.zeros_like(out)
    return F.mse_loss(out, target)


def main():
    G = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 3, 3, 1, 1), nn.Tanh())
    D = DistributedDataParallel(Discriminator(), broadcast_buffers=True)
    opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
    targets = torch.randn(2, 3, 32, 32)
    real_data = torch.randn(2, 3, 32, 32)

    with torch.no_grad():
        fake256 = G(targets)
    fake128 = F.interpolate(fake256, [16, 16], mode='bilinear', align_corners=True)
    fake64 = F.interpolate(fake256, [8, 8], mode='bilinear', align_corners=True)

    """train D"""
    opt_D.zero_grad()
    fake_data_256 = fake256.detach()
    fake_data_128 = fake128.detach()
    fake_data_64 = fake64.detach()
    real_data_256 = real_data
    real_data_128 = F.interpolate(real_data, [16, 16], mode='bilinear', align_corners=True)
    real_data_64 = F.interpolate(real_data, [8, 8], mode='bilinear', align_corners=True)
    fake_256_disc_out, fake_128_disc_out, fake_64_disc_out = D(fake_data_256, fake_data_128, fake_data_64)
    real_256_disc_out, real_128_disc_out, real_64_disc_out = D(real_data_256, real_data_128, real_data_64)
    loss_D_256 = 0.5 * (adv_loss(real_256_disc_out, True) + adv_loss(fake_256_disc_out, False))
    loss_D_128 = 0.5 * (adv_loss(real_128_disc_out, True) + adv_loss(fake_128_disc_out, False))
    loss_D_64 = 0.5 * (adv_loss(real_64_disc_out, True) + adv_loss(fake_64_disc_out, False))
    loss_D = 1 * loss_D_256 + 0.02 * loss_D_128 + 0.02 * loss_D_64
    loss_D.backward()
    opt_D.step()
    return loss_D.detach(), D.module.d256[0][0].weight.detach().clone()


loss_D, w = main()
