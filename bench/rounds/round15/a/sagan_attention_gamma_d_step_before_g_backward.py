# label: hazard raises no-twin
# why: The generator loss reuses the discriminator output computed before d_optimizer.step(); the step updates Self_Attn.gamma in place, but `self.gamma*out` saved gamma for backward, so g_loss_fake.backward() fails on the [1]-sized tensor.
# source: https://github.com/heykeetae/Self-Attention-GAN/issues/62
import torch
import torch.nn as nn

torch.manual_seed(0)


class Self_Attn(nn.Module):
    """ Self attention Layer"""

    def __init__(self, in_dim, activation):
        super(Self_Attn, self).__init__()
        self.chanel_in = in_dim
        self.activation = activation
        self.query_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.key_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim // 8, kernel_size=1)
        self.value_conv = nn.Conv2d(in_channels=in_dim, out_channels=in_dim, kernel_size=1)
        self.gamma = nn.Parameter(torch.zeros(1))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x):
        m_batchsize, C, width, height = x.size()
        proj_query = self.query_conv(x).view(m_batchsize, -1, width * height).permute(0, 2, 1)
        proj_key = self.key_conv(x).view(m_batchsize, -1, width * height)
        energy = torch.bmm(proj_query, proj_key)
        attention = self.softmax(energy)
        proj_value = self.value_conv(x).view(m_batchsize, -1, width * height)
        out = torch.bmm(proj_value, attention.permute(0, 2, 1))
        out = out.view(m_batchsize, C, width, height)
        out = self.gamma * out + x
        return out, attention


class Generator(nn.Module):
    def __init__(self, z_dim=8, conv_dim=16):
        super().__init__()
        self.l1 = nn.Sequential(nn.ConvTranspose2d(z_dim, conv_dim, 4), nn.BatchNorm2d(conv_dim), nn.ReLU())
        self.attn1 = Self_Attn(conv_dim, 'relu')
        self.last = nn.Sequential(nn.ConvTranspose2d(conv_dim, 3, 4, 2, 1), nn.Tanh())

    def forward(self, z):
        z = z.view(z.size(0), z.size(1), 1, 1)
        out = self.l1(z)
        out, p1 = self.attn1(out)
        out = self.last(out)
        return out, p1


class Discriminator(nn.Module):
    def __init__(self, conv_dim=16):
        super().__init__()
        self.l1 = nn.Sequential(nn.Conv2d(3, conv_dim, 4, 2, 1), nn.LeakyReLU(0.1))
        self.attn1 = Self_Attn(conv_dim, 'relu')
        self.last = nn.Sequential(nn.Conv2d(conv_dim, 1, 4))

    def forward(self, x):
        out = self.l1(x)
        out, p1 = self.attn1(out)
        out = self.last(out)
        return out.squeeze(), p1


class Trainer(object):
    def __init__(self):
        self.z_dim = 8
        self.G = Generator(self.z_dim)
        self.D = Discriminator()
        self.g_optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, self.G.parameters()), 1e-4, [0.0, 0.9])
        self.d_optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, self.D.parameters()), 4e-4, [0.0, 0.9])

    def reset_grad(self):
        self.d_optimizer.zero_grad()
        self.g_optimizer.zero_grad()

    def train_step(self, real_images):
        # ================== Train D ================== #
        d_out_real, dr1 = self.D(real_images)
        d_loss_real = torch.nn.ReLU()(1.0 - d_out_real).mean()

        z = torch.randn(real_images.size(0), self.z_dim)
        fake_images, gf1 = self.G(z)
        d_out_fake, df1 = self.D(fake_images)
        d_loss_fake = torch.nn.ReLU()(1.0 + d_out_fake).mean()

        d_loss = d_loss_real + d_loss_fake
        self.reset_grad()
        d_loss.backward(retain_graph=True)
        self.d_optimizer.step()  # <-- IPL001: in-place update of D params (Self_Attn.gamma) saved by the graph reused below

        # ================== Train G ================== #
        g_loss_fake = - d_out_fake.mean()
        self.reset_grad()
        g_loss_fake.backward()
        self.g_optimizer.step()
        return d_loss, g_loss_fake


trainer = Trainer()
real_images = torch.rand(2, 3, 8, 8) * 2 - 1
d_loss, g_loss = trainer.train_step(real_images)
