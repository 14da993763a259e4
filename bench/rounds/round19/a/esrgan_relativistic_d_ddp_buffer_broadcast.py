# label: hazard raises
# why: the DDP-style buffer broadcast at the start of the second discriminator forward overwrites BatchNorm running stats in place, but the first forward (real_d_pred) saved them for backward of the joint relativistic loss.
# source: https://github.com/XPixelGroup/BasicSR/pull/278 (commit 91e0cae83962c0e8126f5b3979f63de7a96614ae)
import torch
import torch.nn as nn

torch.manual_seed(0)


class VGGStyleDiscriminator(nn.Module):
    def __init__(self, num_in_ch=3, num_feat=4):
        super().__init__()
        self.conv0_0 = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1, bias=True)
        self.conv0_1 = nn.Conv2d(num_feat, num_feat, 4, 2, 1, bias=False)
        self.bn0_1 = nn.BatchNorm2d(num_feat, affine=True)
        self.linear1 = nn.Linear(num_feat * 4 * 4, 8)
        self.linear2 = nn.Linear(8, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2)

    def forward(self, x):
        feat = self.lrelu(self.conv0_0(x))
        feat = self.lrelu(self.bn0_1(self.conv0_1(feat)))
        feat = feat.view(feat.size(0), -1)
        feat = self.lrelu(self.linear1(feat))
        return self.linear2(feat)


class FakeDistributedDataParallel(nn.Module):
    """Mimics DDP(broadcast_buffers=True): rank-0 buffers are copied into the module before each forward."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.rank0_buffers = [b.detach().clone() + 0.01 for b in module.buffers()]

    def _sync_buffers(self):
        with torch.no_grad():
            for buf, src in zip(self.module.buffers(), self.rank0_buffers):
                if buf.is_floating_point():
                    buf.copy_(src)  # <-- IPL001: broadcast overwrites BN running stats saved by the previous forward

    def forward(self, x):
        self._sync_buffers()
        return self.module(x)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.BCEWithLogitsLoss()

    def forward(self, input, target_is_real, is_disc=False):
        target = torch.ones_like(input) if target_is_real else torch.zeros_like(input)
        return self.loss(input, target)


class ESRGANModel:
    def __init__(self):
        self.net_g = nn.Sequential(nn.Conv2d(3, 3, 3, 1, 1))
        self.net_d = FakeDistributedDataParallel(VGGStyleDiscriminator())
        self.cri_gan = GANLoss()
        self.optimizer_d = torch.optim.Adam(self.net_d.parameters(), lr=1e-4)

    def optimize_parameters(self, lq, gt):
        self.output = self.net_g(lq)
        loss_dict = {}
        self.optimizer_d.zero_grad()
        # gan loss (relativistic gan)
        real_d_pred = self.net_d(gt)
        fake_d_pred = self.net_d(self.output.detach())
        l_d_real = self.cri_gan(real_d_pred - torch.mean(fake_d_pred), True, is_disc=True)
        l_d_fake = self.cri_gan(fake_d_pred - torch.mean(real_d_pred), False, is_disc=True)
        l_d_total = (l_d_real + l_d_fake) / 2
        l_d_total.backward()
        self.optimizer_d.step()
        loss_dict['l_d_real'] = l_d_real
        loss_dict['l_d_fake'] = l_d_fake
        return loss_dict


model = ESRGANModel()
lq = torch.randn(2, 3, 8, 8)
gt = torch.randn(2, 3, 8, 8)
loss_dict = model.optimize_parameters(lq, gt)
