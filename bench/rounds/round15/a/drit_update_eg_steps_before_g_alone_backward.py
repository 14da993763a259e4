# label: hazard raises no-twin
# why: update_EG steps enc_c_opt/enc_a_opt/gen_opt right after backward_EG(retain_graph=True), then backward_G_alone backpropagates the same forward graph (fake_*_random, z_attr_random_*) whose saved encoder/generator weights were just updated in place.
# source: https://github.com/HsinYingLee/DRIT/issues/48
import torch
import torch.nn as nn

torch.manual_seed(0)


class E_content(nn.Module):
    def __init__(self, input_dim_a, input_dim_b):
        super().__init__()
        self.convA = nn.Sequential(nn.Conv2d(input_dim_a, 4, 3, 1, 1), nn.LeakyReLU(0.2))
        self.convB = nn.Sequential(nn.Conv2d(input_dim_b, 4, 3, 1, 1), nn.LeakyReLU(0.2))

    def forward(self, xa, xb):
        return self.convA(xa), self.convB(xb)

    def forward_a(self, xa):
        return self.convA(xa)

    def forward_b(self, xb):
        return self.convB(xb)


class E_attr(nn.Module):
    def __init__(self, input_dim_a, input_dim_b, output_nc=2):
        super().__init__()
        self.model_a = nn.Sequential(nn.Conv2d(input_dim_a, 4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Conv2d(4, output_nc, 1))
        self.model_b = nn.Sequential(nn.Conv2d(input_dim_b, 4, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Conv2d(4, output_nc, 1))

    def forward(self, xa, xb):
        return self.model_a(xa).view(xa.size(0), -1), self.model_b(xb).view(xb.size(0), -1)


class G(nn.Module):
    def __init__(self, output_dim_a, output_dim_b, nz=2):
        super().__init__()
        self.decA = nn.Sequential(nn.Conv2d(4 + nz, 4, 3, 1, 1), nn.ReLU(), nn.Conv2d(4, output_dim_a, 1), nn.Tanh())
        self.decB = nn.Sequential(nn.Conv2d(4 + nz, 4, 3, 1, 1), nn.ReLU(), nn.Conv2d(4, output_dim_b, 1), nn.Tanh())

    def forward_a(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.decA(torch.cat([x, z_img], 1))

    def forward_b(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.decB(torch.cat([x, z_img], 1))


class Dis(nn.Module):
    def __init__(self, input_dim):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(input_dim, 4, 3, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 1))

    def forward(self, x):
        return [self.model(x)]


class DRIT(nn.Module):
    def __init__(self, input_dim_a=3, input_dim_b=3, nz=2, lr=1e-4):
        super().__init__()
        self.nz = nz
        self.disA = Dis(input_dim_a)
        self.disB = Dis(input_dim_b)
        self.disA2 = Dis(input_dim_a)
        self.disB2 = Dis(input_dim_b)
        self.enc_c = E_content(input_dim_a, input_dim_b)
        self.enc_a = E_attr(input_dim_a, input_dim_b, output_nc=nz)
        self.gen = G(input_dim_a, input_dim_b, nz=nz)
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.criterionL1 = nn.L1Loss()

    def get_z_random(self, batchSize, nz):
        return torch.randn(batchSize, nz)

    def forward(self):
        half_size = 1
        real_A = self.input_A
        real_B = self.input_B
        self.real_A_encoded = real_A[0:half_size]
        self.real_B_encoded = real_B[0:half_size]

        self.z_content_a, self.z_content_b = self.enc_c.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_attr_a, self.z_attr_b = self.enc_a.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_random = self.get_z_random(self.real_A_encoded.size(0), self.nz)

        input_content_forA = torch.cat((self.z_content_b, self.z_content_a, self.z_content_b), 0)
        input_content_forB = torch.cat((self.z_content_a, self.z_content_b, self.z_content_a), 0)
        input_attr_forA = torch.cat((self.z_attr_a, self.z_attr_a, self.z_random), 0)
        input_attr_forB = torch.cat((self.z_attr_b, self.z_attr_b, self.z_random), 0)
        output_fakeA = self.gen.forward_a(input_content_forA, input_attr_forA)
        output_fakeB = self.gen.forward_b(input_content_forB, input_attr_forB)
        self.fake_A_encoded, self.fake_AA_encoded, self.fake_A_random = torch.split(output_fakeA, self.z_content_a.size(0), dim=0)
        self.fake_B_encoded, self.fake_BB_encoded, self.fake_B_random = torch.split(output_fakeB, self.z_content_a.size(0), dim=0)

        self.z_attr_random_a, self.z_attr_random_b = self.enc_a.forward(self.fake_A_random, self.fake_B_random)

    def backward_G_GAN(self, fake, netD=None):
        outs_fake = netD.forward(fake)
        loss_G = 0
        for out_a in outs_fake:
            outputs_fake = torch.sigmoid(out_a)
            all_ones = torch.ones_like(outputs_fake)
            loss_G += nn.functional.binary_cross_entropy(outputs_fake, all_ones)
        return loss_G

    def _l2_regularize(self, mu):
        mu_2 = torch.pow(mu, 2)
        return torch.mean(mu_2)

    def backward_EG(self):
        loss_G_GAN_A = self.backward_G_GAN(self.fake_A_encoded, self.disA)
        loss_G_GAN_B = self.backward_G_GAN(self.fake_B_encoded, self.disB)
        loss_kl_za_a = self._l2_regularize(self.z_attr_a) * 0.01
        loss_kl_za_b = self._l2_regularize(self.z_attr_b) * 0.01
        loss_G_L1_AA = self.criterionL1(self.fake_AA_encoded, self.real_A_encoded) * 10
        loss_G_L1_BB = self.criterionL1(self.fake_BB_encoded, self.real_B_encoded) * 10
        loss_G = loss_G_GAN_A + loss_G_GAN_B + loss_kl_za_a + loss_kl_za_b + loss_G_L1_AA + loss_G_L1_BB
        loss_G.backward(retain_graph=True)
        self.G_loss = loss_G.item()

    def backward_G_alone(self):
        loss_G_GAN2_A = self.backward_G_GAN(self.fake_A_random, self.disA2)
        loss_G_GAN2_B = self.backward_G_GAN(self.fake_B_random, self.disB2)
        loss_z_L1_a = torch.mean(torch.abs(self.z_attr_random_a - self.z_random)) * 10
        loss_z_L1_b = torch.mean(torch.abs(self.z_attr_random_b - self.z_random)) * 10
        loss_z_L1 = loss_z_L1_a + loss_z_L1_b + loss_G_GAN2_A + loss_G_GAN2_B
        loss_z_L1.backward()

    def update_EG(self):
        # update G, Ec, Ea
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.enc_c_opt.step()  # <-- IPL001: updates encoder weights still saved by the graph backward_G_alone uses
        self.enc_a_opt.step()  # <-- IPL001: updates attribute-encoder weights saved for z_attr_random_*
        self.gen_opt.step()  # <-- IPL001: updates generator weights saved for fake_*_random

        # update G, Ec
        self.enc_c_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.gen_opt.step()


model = DRIT()
model.input_A = torch.rand(2, 3, 8, 8) * 2 - 1
model.input_B = torch.rand(2, 3, 8, 8) * 2 - 1
model.forward()
model.update_EG()
