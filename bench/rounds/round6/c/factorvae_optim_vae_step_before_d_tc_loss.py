# label: hazard raises no-twin
# why: D_tc_loss reuses D_z = D(z), whose graph runs back through the VAE encoder, but optim_VAE.step() has already updated the encoder weights in place after vae_loss.backward(retain_graph=True).
# source: https://github.com/1Konny/FactorVAE/issues/15 (solver.py Solver.train)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


def recon_loss(x, x_recon):
    n = x.size(0)
    loss = F.binary_cross_entropy_with_logits(x_recon, x, reduction='sum').div(n)
    return loss


def kl_divergence(mu, logvar):
    kld = -0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(1).mean()
    return kld


def permute_dims(z):
    assert z.dim() == 2
    B, _ = z.size()
    perm_z = []
    for z_j in z.split(1, 1):
        perm = torch.randperm(B).to(z.device)
        perm_z_j = z_j[perm]
        perm_z.append(perm_z_j)
    return torch.cat(perm_z, 1)


class Discriminator(nn.Module):
    def __init__(self, z_dim):
        super(Discriminator, self).__init__()
        self.z_dim = z_dim
        self.net = nn.Sequential(
            nn.Linear(z_dim, 16),
            nn.LeakyReLU(0.2, True),
            nn.Linear(16, 16),
            nn.LeakyReLU(0.2, True),
            nn.Linear(16, 2),
        )

    def forward(self, z):
        return self.net(z).squeeze()


class FactorVAE(nn.Module):
    def __init__(self, z_dim=3, x_dim=12):
        super(FactorVAE, self).__init__()
        self.z_dim = z_dim
        self.encode = nn.Sequential(nn.Linear(x_dim, 16), nn.ReLU(True), nn.Linear(16, 2 * z_dim))
        self.decode = nn.Sequential(nn.Linear(z_dim, 16), nn.ReLU(True), nn.Linear(16, x_dim))

    def reparametrize(self, mu, logvar):
        std = logvar.mul(0.5).exp_()
        eps = std.data.new(std.size()).normal_()
        return eps.mul(std).add_(mu)

    def forward(self, x, no_dec=False):
        stats = self.encode(x)
        mu = stats[:, :self.z_dim]
        logvar = stats[:, self.z_dim:]
        z = self.reparametrize(mu, logvar)
        if no_dec:
            return z.squeeze()
        else:
            x_recon = self.decode(z)
            return x_recon, mu, logvar, z.squeeze()


class Solver(object):
    def __init__(self, batch_size=8, z_dim=3, gamma=6.4, lr_VAE=1e-3, lr_D=1e-3):
        self.batch_size = batch_size
        self.gamma = gamma
        self.VAE = FactorVAE(z_dim)
        self.optim_VAE = optim.Adam(self.VAE.parameters(), lr=lr_VAE, betas=(0.9, 0.999))
        self.D = Discriminator(z_dim)
        self.optim_D = optim.Adam(self.D.parameters(), lr=lr_D, betas=(0.5, 0.9))

    def train(self, data_loader):
        ones = torch.ones(self.batch_size, dtype=torch.long)
        zeros = torch.zeros(self.batch_size, dtype=torch.long)
        for x_true1, x_true2 in data_loader:
            x_recon, mu, logvar, z = self.VAE(x_true1)
            vae_recon_loss = recon_loss(x_true1, x_recon)
            vae_kld = kl_divergence(mu, logvar)

            D_z = self.D(z)
            vae_tc_loss = (D_z[:, :1] - D_z[:, 1:]).mean()

            vae_loss = vae_recon_loss + vae_kld + self.gamma * vae_tc_loss

            self.optim_VAE.zero_grad()
            vae_loss.backward(retain_graph=True)
            self.optim_VAE.step()  # <-- IPL001: updates the encoder in place; D_z's graph (reused by D_tc_loss) still needs the old weights

            z_prime = self.VAE(x_true2, no_dec=True)
            z_pperm = permute_dims(z_prime).detach()
            D_z_pperm = self.D(z_pperm)
            D_tc_loss = 0.5 * (F.cross_entropy(D_z, zeros) + F.cross_entropy(D_z_pperm, ones))

            self.optim_D.zero_grad()
            D_tc_loss.backward()
            self.optim_D.step()
        return vae_loss.detach(), D_tc_loss.detach()


solver = Solver()
data_loader = [(torch.rand(8, 12).round(), torch.rand(8, 12).round()) for _ in range(2)]
vae_loss, D_tc_loss = solver.train(data_loader)
