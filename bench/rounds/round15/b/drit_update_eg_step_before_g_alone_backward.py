# label: hazard raises no-twin
# why: update_EG steps the encoder/generator optimizers after backward_EG, then backward_G_alone backpropagates a loss built from the same forward pass, whose saved generator weights were just updated in place.
# source: https://github.com/HsinYingLee/DRIT/issues/48
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class E_content(nn.Module):
    def __init__(self, in_dim=8, nz_c=4):
        super().__init__()
        self.fc = nn.Linear(in_dim, nz_c)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class E_attr(nn.Module):
    def __init__(self, in_dim=8, nz_a=2):
        super().__init__()
        self.fc = nn.Linear(in_dim, nz_a)

    def forward(self, x):
        return self.fc(x)


class G(nn.Module):
    def __init__(self, nz_c=4, nz_a=2, out_dim=8):
        super().__init__()
        self.fc1 = nn.Linear(nz_c + nz_a, 16)
        self.fc2 = nn.Linear(16, out_dim)

    def forward(self, z_c, z_a):
        return torch.tanh(self.fc2(F.leaky_relu(self.fc1(torch.cat([z_c, z_a], 1)), 0.2)))


class DRIT(nn.Module):
    def __init__(self, lr=1e-3):
        super(DRIT, self).__init__()
        self.nz = 2
        self.enc_c = E_content()
        self.enc_a = E_attr()
        self.gen = G()
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=lr, betas=(0.5, 0.999))
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=lr, betas=(0.5, 0.999))
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=lr, betas=(0.5, 0.999))

    def get_z_random(self, batchSize, nz):
        return torch.randn(batchSize, nz)

    def forward(self):
        self.z_content_a = self.enc_c(self.input_A)
        self.z_attr_a = self.enc_a(self.input_A)
        self.z_random = self.get_z_random(self.input_A.size(0), self.nz)
        self.fake_A_encoded = self.gen(self.z_content_a, self.z_attr_a)
        self.fake_A_random = self.gen(self.z_content_a, self.z_random)
        self.z_attr_random_a = self.enc_a(self.fake_A_random)

    def backward_EG(self):
        loss_G_L1_A = F.l1_loss(self.fake_A_encoded, self.input_A) * 10
        loss_kl_za_a = (self.z_attr_a ** 2).mean() * 0.01
        loss_G = loss_G_L1_A + loss_kl_za_a
        loss_G.backward(retain_graph=True)
        self.G_loss = loss_G.item()

    def backward_G_alone(self):
        # latent regression loss
        loss_z_L1_a = torch.mean(torch.abs(self.z_attr_random_a - self.z_random)) * 10
        loss_z_L1_a.backward()
        self.l1_recon_z_loss_a = loss_z_L1_a.item()

    def update_EG(self):
        # update G, Ec, Ea
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.enc_c_opt.step()
        self.enc_a_opt.step()  # <-- IPL001: enc_a weights saved for z_attr_random_a change before backward_G_alone
        self.gen_opt.step()  # <-- IPL001: gen weights saved for fake_A_random change before backward_G_alone
        # update G, Ec
        self.enc_c_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.gen_opt.step()


model = DRIT()
model.input_A = torch.rand(4, 8) * 2 - 1
model.forward()
model.update_EG()
