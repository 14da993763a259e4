# label: hazard raises no-twin
# why: update_G_and_E steps optimizer_E/optimizer_G after backward_EG, and only then runs backward_G_alone whose latent-regression loss goes through netE's fc weights that the step just changed in place.
# source: https://github.com/junyanz/BicycleGAN/issues/87
import torch
import torch.nn as nn

torch.manual_seed(0)


class E_ResNet(nn.Module):
    def __init__(self, input_nc=3, nz=4):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(input_nc, 4, 3, 2, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4, nz)
        self.fcVar = nn.Linear(4, nz)

    def forward(self, x):
        x_conv = self.conv(x).view(x.size(0), -1)
        return self.fc(x_conv), self.fcVar(x_conv)


class G_Unet_add_all(nn.Module):
    def __init__(self, nz=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3 + nz, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 3, 3, 1, 1), nn.Tanh())

    def forward(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.net(torch.cat([x, z_img], 1))


class BiCycleGANModel:
    def __init__(self):
        self.nz = 4
        self.netG = G_Unet_add_all(self.nz)
        self.netE = E_ResNet(nz=self.nz)
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4)
        self.optimizer_E = torch.optim.Adam(self.netE.parameters(), lr=2e-4)
        self.criterionL1 = nn.L1Loss()

    def set_requires_grad(self, nets, requires_grad=False):
        for net in nets:
            for param in net.parameters():
                param.requires_grad = requires_grad

    def set_input(self, real_A, real_B):
        self.real_A_encoded = real_A
        self.real_B_encoded = real_B

    def encode(self, input_image):
        mu, logvar = self.netE.forward(input_image)
        std = logvar.mul(0.5).exp_()
        eps = torch.randn(std.size(0), std.size(1))
        z = eps.mul(std).add_(mu)
        return z, mu, logvar

    def forward(self):
        self.z_encoded, self.mu, self.logvar = self.encode(self.real_B_encoded)
        self.z_random = torch.randn(self.real_A_encoded.size(0), self.nz)
        self.fake_B_encoded = self.netG(self.real_A_encoded, self.z_encoded)
        self.fake_B_random = self.netG(self.real_A_encoded, self.z_random)
        self.mu2, logvar2 = self.netE(self.fake_B_random)

    def backward_EG(self):
        self.loss_G_L1 = self.criterionL1(self.fake_B_encoded, self.real_B_encoded) * 10.0
        kl_element = self.mu.pow(2).add_(self.logvar.exp()).mul_(-1).add_(1).add_(self.logvar)
        self.loss_kl = torch.sum(kl_element).mul_(-0.5) * 0.01
        self.loss_G = self.loss_G_L1 + self.loss_kl
        self.loss_G.backward(retain_graph=True)

    def backward_G_alone(self):
        self.loss_z_L1 = torch.mean(torch.abs(self.mu2 - self.z_random)) * 0.5
        self.loss_z_L1.backward()

    def update_G_and_E(self):
        self.optimizer_E.zero_grad()
        self.optimizer_G.zero_grad()
        self.backward_EG()
        self.optimizer_G.step()  # <-- IPL001: netG weights change before backward_G_alone
        self.optimizer_E.step()  # <-- IPL001: netE fc weights change before backward_G_alone
        self.set_requires_grad([self.netE], False)
        self.backward_G_alone()
        self.set_requires_grad([self.netE], True)
        self.optimizer_G.step()


model = BiCycleGANModel()
model.set_input(torch.rand(2, 3, 8, 8) * 2 - 1, torch.rand(2, 3, 8, 8) * 2 - 1)
model.forward()
model.update_G_and_E()
