# label: hazard raises no-twin
# why: the trainer returns one dict of losses from a single forward; optimizer_d.step() rewrites the critics' Linear weights in place before losses['g'] (whose wgan_g term went through those critics) is backpropagated.
# source: https://github.com/daa233/generative-inpainting-pytorch/issues/38
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = nn.Sequential(nn.Conv2d(4, 8, 3, 1, 1), nn.ELU(), nn.Conv2d(8, 3, 3, 1, 1))
        self.fine = nn.Sequential(nn.Conv2d(4, 8, 3, 1, 1), nn.ELU(), nn.Conv2d(8, 3, 3, 1, 1))

    def forward(self, x, mask):
        x1 = torch.clamp(self.coarse(torch.cat([x, mask], 1)), -1.0, 1.0)
        x1_inpaint = x1 * mask + x * (1.0 - mask)
        x2 = torch.clamp(self.fine(torch.cat([x1_inpaint, mask], 1)), -1.0, 1.0)
        return x1, x2


class Critic(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.dis_conv = nn.Sequential(nn.Conv2d(3, 4, 5, 2, 2), nn.LeakyReLU(0.2))
        self.linear = nn.Linear(4 * (size // 2) * (size // 2), 1)

    def forward(self, x):
        x = self.dis_conv(x)
        return self.linear(x.view(x.size(0), -1))


class Trainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = Generator()
        self.localD = Critic(4)
        self.globalD = Critic(8)
        self.optimizer_g = torch.optim.Adam(self.netG.parameters(), lr=1e-4)
        d_params = list(self.localD.parameters()) + list(self.globalD.parameters())
        self.optimizer_d = torch.optim.Adam(d_params, lr=1e-4)

    def dis_forward(self, netD, ground_truth, x_inpaint):
        batch_data = torch.cat([ground_truth, x_inpaint], dim=0)
        batch_output = netD(batch_data)
        real_pred, fake_pred = torch.split(batch_output, ground_truth.size(0), dim=0)
        return real_pred, fake_pred

    def forward(self, x, mask, ground_truth, compute_loss_g):
        losses = {}
        x1, x2 = self.netG(x, mask)
        x2_inpaint = x2 * mask + x * (1.0 - mask)
        local_patch_gt = ground_truth[:, :, 2:6, 2:6]
        local_patch_x2_inpaint = x2_inpaint[:, :, 2:6, 2:6]

        local_real, local_fake = self.dis_forward(self.localD, local_patch_gt, local_patch_x2_inpaint.detach())
        global_real, global_fake = self.dis_forward(self.globalD, ground_truth, x2_inpaint.detach())
        losses["wgan_d"] = torch.mean(local_fake - local_real) + torch.mean(global_fake - global_real)

        if compute_loss_g:
            losses["l1"] = F.l1_loss(x1 * mask, ground_truth * mask) + F.l1_loss(x2 * mask, ground_truth * mask)
            losses["ae"] = F.l1_loss(x1 * (1.0 - mask), ground_truth * (1.0 - mask))
            local_real_g, local_fake_g = self.dis_forward(self.localD, local_patch_gt, local_patch_x2_inpaint)
            global_real_g, global_fake_g = self.dis_forward(self.globalD, ground_truth, x2_inpaint)
            losses["wgan_g"] = -torch.mean(local_fake_g) - torch.mean(global_fake_g)
        return losses, x2_inpaint


trainer = Trainer()
ground_truth = torch.rand(2, 3, 8, 8) * 2 - 1
mask = torch.zeros(2, 1, 8, 8)
mask[:, :, 2:6, 2:6] = 1.0
x = ground_truth * (1.0 - mask)

losses, inpainted_result = trainer(x, mask, ground_truth, True)

trainer.optimizer_d.zero_grad()
losses["d"] = losses["wgan_d"]
losses["d"].backward()
trainer.optimizer_d.step()  # <-- IPL001: critic weights change before losses['g'] backward

trainer.optimizer_g.zero_grad()
losses["g"] = losses["l1"] * 1.2 + losses["ae"] * 1.2 + losses["wgan_g"] * 0.001
losses["g"].backward()
trainer.optimizer_g.step()
