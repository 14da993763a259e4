# label: hazard silent
# why: gaussian_sampler exponentiates the caller's latent_logsigma in place, so the KL term computed afterwards from the returned latent_logsigma silently uses sigma instead of log(sigma).
# source: https://github.com/yandexdataschool/Practical_DL/pull/75
import torch
from torch import nn

torch.manual_seed(0)

dimX = 12
dimZ = 4


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.encoder = nn.Sequential(nn.Linear(dimX, 16), nn.ReLU())
        self.enc_mu = nn.Linear(16, dimZ)
        self.enc_logsigma = nn.Linear(16, dimZ)
        self.decoder = nn.Sequential(nn.Linear(dimZ, 16), nn.ReLU())
        self.dec_mu = nn.Linear(16, dimX)
        self.dec_logsigma = nn.Linear(16, dimX)

    def gaussian_sampler(self, mu, logsigma):
        if self.training:
            std = logsigma.exp_()  # <-- IPL004, IPL002: overwrites the caller's latent_logsigma, later read by the KL term
            eps = torch.randn_like(std)
            return eps.mul(std).add_(mu)
        else:
            return mu

    def forward(self, x):
        h = self.encoder(x)
        latent_mu = self.enc_mu(h)
        latent_logsigma = self.enc_logsigma(h)
        z = self.gaussian_sampler(latent_mu, latent_logsigma)
        g = self.decoder(z)
        reconstruction_mu = torch.sigmoid(self.dec_mu(g))
        reconstruction_logsigma = self.dec_logsigma(g)
        return reconstruction_mu, reconstruction_logsigma, latent_mu, latent_logsigma


def KL_divergence(mu, logsigma):
    return -0.5 * torch.sum(1 + 2 * logsigma - mu.pow(2) - torch.exp(2 * logsigma), dim=1)


def log_likelihood(x, mu, logsigma):
    return torch.sum(-logsigma - 0.5 * ((x - mu) / logsigma.exp()).pow(2), dim=1)


def loss_vae(x, mu_gen, logsigma_gen, mu_z, logsigma_z):
    return torch.mean(KL_divergence(mu_z, logsigma_z) - log_likelihood(x, mu_gen, logsigma_gen))


vae = VAE()
vae.train()
optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)
x = torch.rand(8, dimX)

optimizer.zero_grad()
mu_gen, logsigma_gen, mu_z, logsigma_z = vae(x)
loss = loss_vae(x, mu_gen, logsigma_gen, mu_z, logsigma_z)
loss.backward()
