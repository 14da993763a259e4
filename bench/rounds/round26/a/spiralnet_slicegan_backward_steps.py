# label: hazard raises no-twin
# why: SliceModel.backward() steps patch_p_optimizer and d_optimizer in place right after their losses backpropagate, but g_loss still has to go back through patch_d(slice_fake) and d(o), whose saved weights those steps just overwrote.
# source: https://github.com/zhenglab/spiralnet/issues/7
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, pdata, data, fm, position, stage, post_train=True):
        o = self.net(pdata)
        coord_all = [(0, 0, 8, 8), (0, 0, 8, 8), None, None]
        return o, coord_all


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.out = nn.Conv2d(6, 1, 3, padding=1)

    def forward(self, x):
        feat = torch.relu(self.bn(self.conv(x)))
        return self.out(feat), feat


class AdversarialLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.BCEWithLogitsLoss()

    def forward(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class SliceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.g = Generator()
        self.d = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 3, padding=1))
        self.patch_d = PatchDiscriminator()
        self.adversarial_loss = AdversarialLoss()
        self.l1_loss = nn.L1Loss()
        self.g_optimizer = torch.optim.Adam(self.g.parameters(), lr=1e-4)
        self.d_optimizer = torch.optim.Adam(self.d.parameters(), lr=1e-4)
        self.patch_p_optimizer = torch.optim.Adam(self.patch_d.parameters(), lr=1e-4)

    def process(self, data, pdata, fm, position, stage, mask):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()
        self.patch_p_optimizer.zero_grad()

        o, coord_all = self.g(pdata, data, fm, position, stage, post_train=True)

        g_loss = 0
        d_loss = 0
        patch_d_loss = 0
        coord_loss_i_sum = 0

        d_real = data
        d_real_ = self.d(d_real)
        d_fake_global = self.d(o.detach())
        d_real_l = self.adversarial_loss(d_real_, True, True)
        d_fake_g = self.adversarial_loss(d_fake_global, False, True)
        d_loss += (d_real_l + d_fake_g) / 2

        g_fake_global = self.d(o)
        g_loss += self.adversarial_loss(g_fake_global, True, False)
        g_loss += self.l1_loss(o, data)

        for i in range(len(coord_all)):
            if coord_all[i] is None:
                continue
            c_x1, c_y1, c_x2, c_y2 = coord_all[i]
            slice_real = d_real[:, :, c_y1:c_y2, c_x1:c_x1 + 4]
            slice_fake = o[:, :, c_y1:c_y2, c_x1:c_x1 + 4]
            d_reals, _ = self.patch_d(slice_real)
            d_fakes, _ = self.patch_d(slice_fake)
            d_real_slice = self.adversarial_loss(d_reals, True, True)
            d_fake_slice = self.adversarial_loss(d_fakes, False, True)
            g_fake_slice = self.adversarial_loss(d_fakes, True, False)
            patch_d_loss += (d_real_slice + d_fake_slice) / 2
            coord_loss_i_sum += g_fake_slice

        g_loss += coord_loss_i_sum
        g_fake_local = self.d(o * mask + data * (1 - mask))
        g_loss += self.adversarial_loss(g_fake_local, True, False)
        return o, d_loss, g_loss, patch_d_loss

    def backward(self, d_loss, g_loss, patch_d_loss):
        patch_d_loss.backward(retain_graph=True)
        self.patch_p_optimizer.step()  # <-- IPL001

        d_loss.backward()
        self.d_optimizer.step()  # <-- IPL001

        g_loss.backward()
        self.g_optimizer.step()


def main():
    model = SliceModel()
    data = torch.rand(2, 3, 8, 8) * 2 - 1
    pdata = torch.rand(2, 3, 8, 8) * 2 - 1
    mask = (torch.rand(2, 1, 8, 8) > 0.5).float()
    o, d_loss, g_loss, patch_d_loss = model.process(data, pdata, None, None, 1, mask)
    model.backward(d_loss, g_loss, patch_d_loss)


main()
