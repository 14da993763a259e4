# label: hazard raises
# why: under DistributedDataParallel(broadcast_buffers=True) every net_d forward first copies rank 0's BatchNorm running stats into the replica in place; the generator step runs net_d on the SR output and then on the GT before backward, so the second sync overwrites running_mean/running_var that the first forward's batch_norm saved (fixed by reordering the D calls and backpropagating each half separately).
# source: https://github.com/XPixelGroup/BasicSR/commit/a085ddfc29b2a631b8ad7917d8401b98b72ffcdf (basicsr/models/esrgan_model.py, "Fixbug: ESRGAN dist in-place operation of BN", PR #278)
import torch
from torch import nn as nn
from torch.nn import functional as F

torch.manual_seed(0)


class VGGStyleDiscriminator(nn.Module):
    """Small VGG style discriminator (conv + BN + LeakyReLU blocks, as in BasicSR's VGGStyleDiscriminator128)."""

    def __init__(self, num_in_ch=3, num_feat=8):
        super(VGGStyleDiscriminator, self).__init__()
        self.conv0_0 = nn.Conv2d(num_in_ch, num_feat, 3, 1, 1, bias=True)
        self.conv0_1 = nn.Conv2d(num_feat, num_feat, 4, 2, 1, bias=False)
        self.bn0_1 = nn.BatchNorm2d(num_feat, affine=True)
        self.conv1_0 = nn.Conv2d(num_feat, num_feat * 2, 3, 1, 1, bias=False)
        self.bn1_0 = nn.BatchNorm2d(num_feat * 2, affine=True)
        self.conv1_1 = nn.Conv2d(num_feat * 2, num_feat * 2, 4, 2, 1, bias=False)
        self.bn1_1 = nn.BatchNorm2d(num_feat * 2, affine=True)
        self.linear1 = nn.Linear(num_feat * 2 * 4 * 4, 16)
        self.linear2 = nn.Linear(16, 1)
        self.lrelu = nn.LeakyReLU(negative_slope=0.2)

    def forward(self, x):
        feat = self.lrelu(self.conv0_0(x))
        feat = self.lrelu(self.bn0_1(self.conv0_1(feat)))
        feat = self.lrelu(self.bn1_0(self.conv1_0(feat)))
        feat = self.lrelu(self.bn1_1(self.conv1_1(feat)))
        feat = feat.view(feat.size(0), -1)
        feat = self.lrelu(self.linear1(feat))
        return self.linear2(feat)


class BufferBroadcastReplica(nn.Module):
    """What DistributedDataParallel(broadcast_buffers=True) does around each forward: sync buffers from rank 0."""

    def __init__(self, module):
        super().__init__()
        self.module = module
        self.rank0_buffers = {name: buf.clone() for name, buf in module.named_buffers()}

    def sync_buffers(self):
        with torch.no_grad():
            for name, buf in self.module.named_buffers():
                buf.copy_(self.rank0_buffers[name])  # <-- IPL001: in-place buffer broadcast overwrites BN running stats saved by the previous net_d forward

    def forward(self, x):
        self.sync_buffers()
        return self.module(x)


class GANLoss(nn.Module):
    def __init__(self, loss_weight=1.0):
        super().__init__()
        self.loss_weight = loss_weight
        self.loss = nn.BCEWithLogitsLoss()

    def forward(self, input, target_is_real, is_disc=False):
        target_val = 1.0 if target_is_real else 0.0
        target_label = input.new_ones(input.size()) * target_val
        loss = self.loss(input, target_label)
        return loss if is_disc else loss * self.loss_weight


net_g = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 3, 3, 1, 1))
net_d = BufferBroadcastReplica(VGGStyleDiscriminator())
cri_pix = nn.L1Loss()
cri_gan = GANLoss(loss_weight=5e-3)
optimizer_g = torch.optim.Adam(net_g.parameters(), lr=1e-4)

lq = torch.randn(2, 3, 16, 16)
gt = torch.randn(2, 3, 16, 16)

# optimize net_g (ESRGANModel.optimize_parameters before the fix)
for p in net_d.parameters():
    p.requires_grad = False
optimizer_g.zero_grad()
output = net_g(lq)
l_g_total = 0
l_g_total += cri_pix(output, gt)
# gan loss (relativistic gan)
fake_g_pred = net_d(output)
real_d_pred = net_d(gt).detach()
l_g_real = cri_gan(real_d_pred - torch.mean(fake_g_pred), False, is_disc=False)
l_g_fake = cri_gan(fake_g_pred - torch.mean(real_d_pred), True, is_disc=False)
l_g_gan = (l_g_real + l_g_fake) / 2
l_g_total += l_g_gan
l_g_total.backward()
optimizer_g.step()
