# label: hazard raises no-twin
# why: loss_nonsaturating builds d_loss and g_loss from the same d(g(z)) forward; d_optimizer.step() updates d's weights in place after d_loss.backward(retain_graph=True), so g_loss.backward() through that same d forward hits modified weights
# source: https://php.bkmy88.com/faq/1575425.html
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")


class Generator(nn.Module):
    def __init__(self, z_dim=4):
        super().__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.Linear(z_dim, 16),
            nn.LeakyReLU(0.2),
            nn.Linear(16, 12),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z).view(-1, 1, 3, 4)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(12, 16),
            nn.LeakyReLU(0.2),
            nn.Linear(16, 1),
        )

    def forward(self, x):
        return self.net(x).squeeze(-1)


def loss_nonsaturating(d, g, x_real, *, device):
    z = torch.randn(x_real.shape[0], g.z_dim, device=device)
    gz = g(z)
    dgz = F.sigmoid(d(gz))
    dx = d(x_real)
    real_label = torch.ones(x_real.shape[0], device=device)
    fake_label = torch.zeros(x_real.shape[0], device=device)
    bce_loss = F.binary_cross_entropy_with_logits
    d_loss = bce_loss(dx, real_label) + F.binary_cross_entropy(dgz, fake_label)
    g_loss = -torch.log(dgz).mean()
    return d_loss, g_loss


def train(g, d, x_real, loss_fn, g_optimizer, d_optimizer):
    d_loss, g_loss = loss_fn(d, g, x_real, device=device)

    d_optimizer.zero_grad()
    d_loss.backward(retain_graph=True)
    d_optimizer.step()  # <-- IPL001: updates d's weights that g_loss (same d(gz) forward) still needs

    g_optimizer.zero_grad()
    g_loss.backward()
    g_optimizer.step()
    return d_loss, g_loss


g = Generator()
d = Discriminator()
g_optimizer = torch.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
d_optimizer = torch.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
x_real = torch.rand(5, 1, 3, 4) * 2 - 1
d_loss, g_loss = train(g, d, x_real, loss_nonsaturating, g_optimizer, d_optimizer)
