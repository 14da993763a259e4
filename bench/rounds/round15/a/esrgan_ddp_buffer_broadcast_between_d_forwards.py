# label: hazard raises
# why: with DistributedDataParallel(broadcast_buffers=True) every net_d forward first copies the BatchNorm buffers in place; ESRGAN's generator step runs net_d(self.output) and then net_d(self.gt), so the second broadcast overwrites the running stats saved by the first forward's BatchNorm and l_g_total.backward() fails.
# source: https://github.com/XPixelGroup/BasicSR/commit/b9768d1bdc25ba1ac03f8ba6df237ae1045d2ada (PR #278, basicsr/models/esrgan_model.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


class DistributedDataParallel(nn.Module):
    """Single-process stand-in for DDP with broadcast_buffers=True: before each forward the
    module buffers are broadcast from rank 0, i.e. overwritten in place."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def _sync_buffers(self):
        with torch.no_grad():
            for buf in self.module.buffers():
                if buf.is_floating_point():
                    buf.copy_(buf.clone())  # <-- IPL001: in-place broadcast into BatchNorm running stats saved by the previous forward

    def forward(self, *inputs):
        self._sync_buffers()
        return self.module(*inputs)


class VGGStyleDiscriminator(nn.Module):
    def __init__(self, num_in_ch=3, num_feat=4):
        super().__init__()
        self.conv0_0 = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1, bias=True)
        self.conv0_1 = nn.Conv2d(num_feat, num_feat, 4, 2, 1, bias=False)
        self.bn0_1 = nn.BatchNorm2d(num_feat, affine=True)
        self.conv1_0 = nn.Conv2d(num_feat, num_feat * 2, 3, 1, 1, bias=False)
        self.bn1_0 = nn.BatchNorm2d(num_feat * 2, affine=True)
        self.linear1 = nn.Linear(num_feat * 2 * 8 * 8, 8)
        self.linear2 = nn.Linear(8, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2, inplace=True)

    def forward(self, x):
        feat = self.lrelu(self.conv0_0(x))
        feat = self.lrelu(self.bn0_1(self.conv0_1(feat)))
        feat = self.lrelu(self.bn1_0(self.conv1_0(feat)))
        feat = feat.view(feat.size(0), -1)
        feat = self.lrelu(self.linear1(feat))
        return self.linear2(feat)


class GANLoss(nn.Module):
    def __init__(self, loss_weight=0.005):
        super().__init__()
        self.loss_weight = loss_weight
        self.loss = nn.BCEWithLogitsLoss()

    def forward(self, input, target_is_real, is_disc=False):
        target_label = input.new_ones(input.size()) if target_is_real else input.new_zeros(input.size())
        loss = self.loss(input, target_label)
        return loss if is_disc else loss * self.loss_weight


class ESRGANModel:
    def __init__(self):
        self.net_g = DistributedDataParallel(nn.Sequential(
            nn.Conv2d(3, 4, 3, 1, 1), nn.LeakyReLU(0.2, True), nn.Upsample(scale_factor=2), nn.Conv2d(4, 3, 3, 1, 1)))
        self.net_d = DistributedDataParallel(VGGStyleDiscriminator())
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=1e-4)
        self.optimizer_d = torch.optim.Adam(self.net_d.parameters(), lr=1e-4)
        self.cri_pix = nn.L1Loss()
        self.cri_gan = GANLoss()

    def feed_data(self, lq, gt):
        self.lq, self.gt = lq, gt

    def optimize_parameters(self, current_iter):
        loss_dict = {}
        # optimize net_g
        for p in self.net_d.parameters():
            p.requires_grad = False
        self.optimizer_g.zero_grad()
        self.output = self.net_g(self.lq)

        l_g_total = 0
        l_g_pix = self.cri_pix(self.output, self.gt)
        l_g_total += l_g_pix
        loss_dict['l_g_pix'] = l_g_pix
        # gan loss (relativistic gan)
        fake_g_pred = self.net_d(self.output)
        real_d_pred = self.net_d(self.gt).detach()
        l_g_real = self.cri_gan(real_d_pred - torch.mean(fake_g_pred), False, is_disc=False)
        l_g_fake = self.cri_gan(fake_g_pred - torch.mean(real_d_pred), True, is_disc=False)
        l_g_gan = (l_g_real + l_g_fake) / 2
        l_g_total += l_g_gan
        loss_dict['l_g_gan'] = l_g_gan
        l_g_total.backward()
        self.optimizer_g.step()

        # optimize net_d
        for p in self.net_d.parameters():
            p.requires_grad = True
        self.optimizer_d.zero_grad()
        real_d_pred = self.net_d(self.gt)
        fake_d_pred = self.net_d(self.output.detach())
        l_d_real = self.cri_gan(real_d_pred - torch.mean(fake_d_pred), True, is_disc=True)
        l_d_fake = self.cri_gan(fake_d_pred - torch.mean(real_d_pred), False, is_disc=True)
        l_d_total = (l_d_real + l_d_fake) / 2
        l_d_total.backward()
        self.optimizer_d.step()
        loss_dict['l_d_total'] = l_d_total
        return loss_dict


model = ESRGANModel()
model.feed_data(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 16, 16))
loss_dict = model.optimize_parameters(1)
net_g = model.net_g
net_d = model.net_d
output = model.output.detach()
losses = torch.stack([v.detach() for v in loss_dict.values()])
