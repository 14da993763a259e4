# label: hazard silent
# why: each SpectralNorm forward replaces u.data / v.data, but the discriminator is called on real and fake images before disc_loss.backward(), so the real branch's saved u and v are silently swapped for the fake branch's values and its weight gradient is wrong
# source: https://github.com/christiancosgrove/pytorch-spectral-normalization-gan/issues/13
import torch
from torch import nn
from torch.nn import Parameter

torch.manual_seed(0)


def l2normalize(v, eps=1e-12):
    return v / (v.norm() + eps)


class SpectralNorm(nn.Module):
    def __init__(self, module, name='weight', power_iterations=1):
        super(SpectralNorm, self).__init__()
        self.module = module
        self.name = name
        self.power_iterations = power_iterations
        if not self._made_params():
            self._make_params()

    def _update_u_v(self):
        u = getattr(self.module, self.name + "_u")
        v = getattr(self.module, self.name + "_v")
        w = getattr(self.module, self.name + "_bar")

        height = w.data.shape[0]
        for _ in range(self.power_iterations):
            v.data = l2normalize(torch.mv(torch.t(w.view(height, -1).data), u.data))  # <-- IPL007: swaps the data of v, which an earlier forward saved for backward
            u.data = l2normalize(torch.mv(w.view(height, -1).data, v.data))  # <-- IPL007: swaps the data of u, which an earlier forward saved for backward

        sigma = u.dot(w.view(height, -1).mv(v))
        setattr(self.module, self.name, w / sigma.expand_as(w))

    def _made_params(self):
        try:
            getattr(self.module, self.name + "_u")
            getattr(self.module, self.name + "_v")
            getattr(self.module, self.name + "_bar")
            return True
        except AttributeError:
            return False

    def _make_params(self):
        w = getattr(self.module, self.name)
        height = w.data.shape[0]
        width = w.view(height, -1).data.shape[1]
        u = Parameter(w.data.new(height).normal_(0, 1), requires_grad=False)
        v = Parameter(w.data.new(width).normal_(0, 1), requires_grad=False)
        u.data = l2normalize(u.data)
        v.data = l2normalize(v.data)
        w_bar = Parameter(w.data)
        del self.module._parameters[self.name]
        self.module.register_parameter(self.name + "_u", u)
        self.module.register_parameter(self.name + "_v", v)
        self.module.register_parameter(self.name + "_bar", w_bar)

    def forward(self, *args):
        self._update_u_v()
        return self.module.forward(*args)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.conv1 = SpectralNorm(nn.Conv2d(3, 8, 3, stride=1, padding=(1, 1)))
        self.conv2 = SpectralNorm(nn.Conv2d(8, 8, 4, stride=2, padding=(1, 1)))
        self.fc = SpectralNorm(nn.Linear(4 * 4 * 8, 1))

    def forward(self, x):
        m = x
        m = nn.LeakyReLU(0.1)(self.conv1(m))
        m = nn.LeakyReLU(0.1)(self.conv2(m))
        return self.fc(m.view(-1, 4 * 4 * 8))


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super(Generator, self).__init__()
        self.z_dim = z_dim
        self.model = nn.Sequential(
            nn.ConvTranspose2d(z_dim, 8, 4, stride=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.ConvTranspose2d(8, 3, 4, stride=2, padding=(1, 1)),
            nn.Tanh())

    def forward(self, z):
        return self.model(z.view(-1, self.z_dim, 1, 1))


discriminator = Discriminator()
generator = Generator()
optim_disc = torch.optim.Adam(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=2e-4, betas=(0.0, 0.9))

data = torch.rand(4, 3, 8, 8) * 2 - 1
z = torch.randn(4, 4)

optim_disc.zero_grad()
disc_loss = nn.ReLU()(1.0 - discriminator(data)).mean() + nn.ReLU()(1.0 + discriminator(generator(z))).mean()
disc_loss.backward()
