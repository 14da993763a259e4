# label: hazard raises no-twin
# why: update_EG steps the encoder/generator optimizers after backward_EG and then calls backward_G_alone on fake images produced by the same (now stale) forward graph
# source: https://github.com/HsinYingLee/DRIT/issues/62
import torch
import torch.nn as nn

torch.manual_seed(0)


class E_content(nn.Module):
    def __init__(self):
        super().__init__()
        self.convA = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2, inplace=True))
        self.convB = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2, inplace=True))

    def forward(self, xa, xb):
        return self.convA(xa), self.convB(xb)


class E_attr_concat(nn.Module):
    def __init__(self, nz=4):
        super().__init__()
        self.trunkA = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.AdaptiveAvgPool2d(1))
        self.trunkB = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.AdaptiveAvgPool2d(1))
        self.fcA, self.fcVarA = nn.Linear(8, nz), nn.Linear(8, nz)
        self.fcB, self.fcVarB = nn.Linear(8, nz), nn.Linear(8, nz)

    def forward(self, xa, xb):
        ha = self.trunkA(xa).flatten(1)
        hb = self.trunkB(xb).flatten(1)
        return self.fcA(ha), self.fcVarA(ha), self.fcB(hb), self.fcVarB(hb)


class G_concat(nn.Module):
    def __init__(self, nz=4):
        super().__init__()
        self.decA = nn.Sequential(nn.Conv2d(8 + nz, 3, 3, 1, 1), nn.Tanh())
        self.decB = nn.Sequential(nn.Conv2d(8 + nz, 3, 3, 1, 1), nn.Tanh())

    def forward_a(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(-1, -1, x.size(2), x.size(3))
        return self.decA(torch.cat([x, z_img], 1))

    def forward_b(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(-1, -1, x.size(2), x.size(3))
        return self.decB(torch.cat([x, z_img], 1))


class Dis(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 4, 2, 1))

    def forward(self, x):
        return [self.model(x).view(-1)]


class DRIT(nn.Module):
    def __init__(self, nz=4):
        super().__init__()
        self.nz = nz
        self.disA, self.disA2 = Dis(), Dis()
        self.enc_c = E_content()
        self.enc_a = E_attr_concat(nz)
        self.gen = G_concat(nz)
        lr = 0.0001
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.criterionL1 = torch.nn.L1Loss()

    def get_z_random(self, batchSize, nz):
        return torch.randn(batchSize, nz)

    def forward(self):
        half_size = 1
        self.real_A_encoded = self.input_A[0:half_size]
        self.real_B_encoded = self.input_B[0:half_size]
        self.z_content_a, self.z_content_b = self.enc_c.forward(self.real_A_encoded, self.real_B_encoded)
        self.mu_a, self.logvar_a, self.mu_b, self.logvar_b = self.enc_a.forward(self.real_A_encoded, self.real_B_encoded)
        std_a = self.logvar_a.mul(0.5).exp_()
        eps_a = self.get_z_random(std_a.size(0), std_a.size(1))
        self.z_attr_a = eps_a.mul(std_a).add_(self.mu_a)
        self.z_random = self.get_z_random(self.real_A_encoded.size(0), self.nz)
        input_content_forA = torch.cat((self.z_content_b, self.z_content_a, self.z_content_b), 0)
        input_attr_forA = torch.cat((self.z_attr_a, self.z_attr_a, self.z_random), 0)
        output_fakeA = self.gen.forward_a(input_content_forA, input_attr_forA)
        self.fake_A_encoded, self.fake_AA_encoded, self.fake_A_random = torch.split(
            output_fakeA, self.z_content_a.size(0), dim=0)

    def backward_G_GAN(self, fake, netD=None):
        outs_fake = netD.forward(fake)
        loss_G = 0
        for out_a in outs_fake:
            outputs_fake = torch.sigmoid(out_a)
            all_ones = torch.ones_like(outputs_fake)
            loss_G += nn.functional.binary_cross_entropy(outputs_fake, all_ones)
        return loss_G

    def backward_EG(self):
        loss_G_GAN_A = self.backward_G_GAN(self.fake_A_encoded, self.disA)
        kl_element_a = self.mu_a.pow(2).add_(self.logvar_a.exp()).mul_(-1).add_(1).add_(self.logvar_a)
        loss_kl_za_a = torch.sum(kl_element_a).mul_(-0.5) * 0.01
        loss_G_L1_AA = self.criterionL1(self.fake_AA_encoded, self.real_A_encoded) * 10
        loss_G = loss_G_GAN_A + loss_G_L1_AA + loss_kl_za_a
        loss_G.backward(retain_graph=True)

    def backward_G_alone(self):
        loss_G_GAN2_A = self.backward_G_GAN(self.fake_A_random, self.disA2)
        loss_z_L1 = torch.mean(torch.abs(self.fake_A_random.mean() - self.z_random.mean())) * 10
        (loss_G_GAN2_A + loss_z_L1).backward()

    def update_EG(self):
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.enc_c_opt.step()  # <-- IPL001: updates content-encoder weights that fake_A_random's retained graph still needs
        self.enc_a_opt.step()
        self.gen_opt.step()  # <-- IPL001: updates generator weights that fake_A_random's retained graph still needs

        self.enc_c_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.gen_opt.step()


model = DRIT()
model.input_A = torch.rand(2, 3, 8, 8)
model.input_B = torch.rand(2, 3, 8, 8)
model.forward()
model.update_EG()
