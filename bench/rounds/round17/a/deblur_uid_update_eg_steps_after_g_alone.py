# label: safe
# why: the fix from the thread: all encoder/generator optimizer steps run only after both backward_EG and backward_G_alone have consumed the retained graph
# source: https://github.com/ustclby/Unsupervised-Domain-Specific-Deblurring/issues/12
import torch
import torch.nn as nn

torch.manual_seed(0)


class E_content(nn.Module):
    def __init__(self, input_dim_a, input_dim_b):
        super().__init__()
        self.convA = nn.Sequential(nn.Conv2d(input_dim_a, 8, 3, 1, 1), nn.LeakyReLU(0.2, inplace=True))
        self.convB = nn.Sequential(nn.Conv2d(input_dim_b, 8, 3, 1, 1), nn.LeakyReLU(0.2, inplace=True))

    def forward(self, xa, xb):
        return self.convA(xa), self.convB(xb)


class E_attr_concat(nn.Module):
    def __init__(self, input_dim_b, nz):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(input_dim_b, 8, 3, 2, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, nz)
        self.fcVar = nn.Linear(8, nz)

    def forward(self, x):
        h = self.conv(x).flatten(1)
        return self.fc(h), self.fcVar(h)


class G_concat(nn.Module):
    def __init__(self, output_dim_a, output_dim_b, nz):
        super().__init__()
        self.nz = nz
        self.decA = nn.Sequential(nn.Conv2d(8 + nz, 8, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(8, output_dim_a, 1), nn.Tanh())
        self.decB = nn.Sequential(nn.Conv2d(8 + nz, 8, 3, 1, 1), nn.ReLU(inplace=True), nn.Conv2d(8, output_dim_b, 1), nn.Tanh())

    def forward_D(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.decA(torch.cat([x, z_img], 1))

    def forward_B(self, x, z):
        z_img = z.view(z.size(0), z.size(1), 1, 1).expand(z.size(0), z.size(1), x.size(2), x.size(3))
        return self.decB(torch.cat([x, z_img], 1))


class Dis(nn.Module):
    def __init__(self, input_dim):
        super().__init__()
        self.model = nn.Sequential(nn.Conv2d(input_dim, 8, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 3, 1, 1))

    def forward(self, x):
        return [self.model(x)]


class UID(nn.Module):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.nz = 8
        self.concat = True
        self.disA = Dis(3)
        self.disA2 = Dis(3)
        self.disB = Dis(3)
        self.disB2 = Dis(3)
        self.enc_c = E_content(3, 3)
        self.enc_a = E_attr_concat(3, self.nz)
        self.gen = G_concat(3, 3, nz=self.nz)
        self.disA_opt = torch.optim.Adam(self.disA.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.disA2_opt = torch.optim.Adam(self.disA2.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=lr, betas=(0.5, 0.999), weight_decay=0.0001)
        self.criterionL1 = torch.nn.L1Loss()

    def get_z_random(self, batchSize, nz):
        return torch.randn(batchSize, nz)

    def forward(self):
        real_I = self.input_I
        real_B = self.input_B
        half_size = real_I.size(0) // 2
        self.real_I_encoded = real_I[0:half_size]
        self.real_I_random = real_I[half_size:]
        self.real_B_encoded = real_B[0:half_size]

        self.z_content_i, self.z_content_b = self.enc_c.forward(self.real_I_encoded, self.real_B_encoded)

        self.mu_b, self.logvar_b = self.enc_a.forward(self.real_B_encoded)
        std_b = self.logvar_b.mul(0.5).exp_()
        eps_b = self.get_z_random(std_b.size(0), std_b.size(1))
        self.z_attr_b = eps_b.mul(std_b).add_(self.mu_b)

        self.z_random = self.get_z_random(self.real_I_encoded.size(0), self.nz)

        input_content_forI = torch.cat((self.z_content_b, self.z_content_i, self.z_content_b), 0)
        input_attr_forI = torch.cat((self.z_attr_b, self.z_attr_b, self.z_random), 0)
        output_fakeI = self.gen.forward_D(input_content_forI, input_attr_forI)
        self.fake_I_encoded, self.fake_II_encoded, self.fake_I_random = torch.split(output_fakeI, self.z_content_i.size(0), dim=0)

        self.mu2_b, _ = self.enc_a.forward(self.fake_I_random)

    def update_D(self, image_a, image_b):
        self.input_I = image_a
        self.input_B = image_b
        self.forward()
        self.disA_opt.zero_grad()
        loss_D1_A = self.backward_D(self.disA, self.real_I_encoded, self.fake_I_encoded)
        self.disA_loss = loss_D1_A.item()
        self.disA_opt.step()
        self.disA2_opt.zero_grad()
        loss_D2_A = self.backward_D(self.disA2, self.real_I_random, self.fake_I_random)
        self.disA2_loss = loss_D2_A.item()
        self.disA2_opt.step()

    def backward_D(self, netD, real, fake):
        pred_fake = netD.forward(fake.detach())
        pred_real = netD.forward(real)
        loss_D = 0
        for it, (out_a, out_b) in enumerate(zip(pred_fake, pred_real)):
            out_fake = torch.sigmoid(out_a)
            out_real = torch.sigmoid(out_b)
            all0 = torch.zeros_like(out_fake)
            all1 = torch.ones_like(out_real)
            ad_fake_loss = nn.functional.binary_cross_entropy(out_fake, all0)
            ad_true_loss = nn.functional.binary_cross_entropy(out_real, all1)
            loss_D += ad_true_loss + ad_fake_loss
        loss_D.backward()
        return loss_D

    def update_EG(self):
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.enc_a_opt.step()
        self.gen_opt.step()

    def backward_EG(self):
        loss_G_GAN_I = self.backward_G_GAN(self.fake_I_encoded, self.disA)
        kl_element_b = self.mu_b.pow(2).add_(self.logvar_b.exp()).mul_(-1).add_(1).add_(self.logvar_b)
        loss_kl_za_b = torch.sum(kl_element_b).mul_(-0.5) * 0.01
        loss_G_L1_II = self.criterionL1(self.fake_II_encoded, self.real_I_encoded) * 10
        loss_G = loss_G_GAN_I + loss_G_L1_II + loss_kl_za_b
        loss_G.backward(retain_graph=True)
        self.G_loss = loss_G.item()

    def backward_G_GAN(self, fake, netD=None):
        outs_fake = netD.forward(fake)
        loss_G = 0
        for out_a in outs_fake:
            outputs_fake = torch.sigmoid(out_a)
            all_ones = torch.ones_like(outputs_fake)
            loss_G += nn.functional.binary_cross_entropy(outputs_fake, all_ones)
        return loss_G

    def backward_G_alone(self):
        loss_G_GAN2_I = self.backward_G_GAN(self.fake_I_random, self.disA2)
        loss_z_L1_b = torch.mean(torch.abs(self.mu2_b - self.z_random)) * 10
        loss_G2 = loss_z_L1_b + loss_G_GAN2_I
        loss_G2.backward()
        self.gan2_loss_a = loss_G_GAN2_I.item()


model = UID()
images_a = torch.rand(4, 3, 8, 8) * 2 - 1
images_b = torch.rand(4, 3, 8, 8) * 2 - 1
model.update_D(images_a, images_b)
model.update_EG()
