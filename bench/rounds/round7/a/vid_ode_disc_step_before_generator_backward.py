# label: hazard raises no-twin
# why: Vid-ODE builds loss_netD and the generator's adversarial loss from the same discriminators, then optimizer_netD.step() updates them in place before loss_netG.backward() walks back through them.
# source: https://github.com/psh01087/Vid-ODE/issues/6
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss = nn.MSELoss()

    def forward(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return self.loss(pred, target)


class Discriminator(nn.Module):
    def __init__(self, in_channels, seq=False):
        super().__init__()
        self.seq = seq
        self.net = nn.Sequential(nn.Conv2d(in_channels, 4, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(4, 1, 3, 1, 1))
        self.criterionGAN = GANLoss()

    def forward(self, x):
        b, t, c, h, w = x.shape
        x = x.reshape(b, t * c, h, w) if self.seq else x.reshape(b * t, c, h, w)
        return self.net(x)

    def netD_adv_loss(self, real, fake, input_real):
        if input_real is not None:
            real = torch.cat([input_real, real], dim=1)
            fake = torch.cat([input_real, fake], dim=1)
        pred_fake = self.forward(fake.detach())
        pred_real = self.forward(real)
        return (self.criterionGAN(pred_fake, False) + self.criterionGAN(pred_real, True)) * 0.5

    def netG_adv_loss(self, fake, input_real):
        if input_real is not None:
            fake = torch.cat([input_real, fake], dim=1)
        pred_fake = self.forward(fake)
        return self.criterionGAN(pred_fake, True)


class VidODE(nn.Module):
    def __init__(self, c=1):
        super().__init__()
        self.encoder = nn.Conv2d(c, 4, 3, 1, 1)
        self.dynamics = nn.Conv2d(4, 4, 3, 1, 1)
        self.decoder = nn.Conv2d(4, c, 3, 1, 1)

    def compute_all_losses(self, batch_dict):
        obs = batch_dict["observed_data"]
        h = torch.tanh(self.encoder(obs[:, -1]))
        preds = []
        for _ in range(batch_dict["data_to_predict"].shape[1]):
            h = h + 0.1 * torch.tanh(self.dynamics(h))
            preds.append(torch.sigmoid(self.decoder(h)))
        pred_y = torch.stack(preds, dim=1)
        loss = ((pred_y - batch_dict["data_to_predict"]) ** 2).mean()
        return {"loss": loss, "pred_y": pred_y}


def create_netD(t_in, t_out, c=1):
    netD_img = Discriminator(c)
    netD_seq = Discriminator((t_in + t_out) * c, seq=True)
    optimizer_netD = optim.Adamax(list(netD_img.parameters()) + list(netD_seq.parameters()), lr=1e-3)
    return netD_img, netD_seq, optimizer_netD


lamb_adv = 0.003
netG = VidODE()
optimizer_netG = optim.Adamax(netG.parameters(), lr=1e-3)
netD_img, netD_seq, optimizer_netD = create_netD(3, 2)
batch_dict = {"observed_data": torch.rand(2, 3, 1, 8, 8), "data_to_predict": torch.rand(2, 2, 1, 8, 8)}

res = netG.compute_all_losses(batch_dict)
loss_netG = res["loss"]
real = batch_dict["data_to_predict"]
fake = res["pred_y"]
input_real = batch_dict["observed_data"]

loss_netD = lamb_adv * netD_seq.netD_adv_loss(real, fake, input_real)
loss_netD += lamb_adv * netD_img.netD_adv_loss(real, fake, None)

loss_adv_netG = lamb_adv * netD_seq.netG_adv_loss(fake, input_real)
loss_adv_netG += lamb_adv * netD_img.netG_adv_loss(fake, None)
loss_netG += loss_adv_netG

# Train D
optimizer_netD.zero_grad()
loss_netD.backward()
optimizer_netD.step()  # <-- IPL001: updates both discriminators in place while loss_netG's graph through them is still pending

# Train G
optimizer_netG.zero_grad()
loss_netG.backward()
optimizer_netG.step()
