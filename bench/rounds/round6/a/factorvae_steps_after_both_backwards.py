# label: safe
# why: the fixed FactorKLoss computes both backward passes first and only then steps the VAE and discriminator optimizers, so no weight saved by the retained graph is updated before d_tc_loss.backward()
# source: https://github.com/YannDubs/disentangling-vae/issues/62 (fix in disvae/models/losses.py: "Update at the end (since pytorch 1.5. complains if update before)")
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, neg_slope=0.2, latent_dim=4, hidden_units=16):
        super(Discriminator, self).__init__()
        self.neg_slope = neg_slope
        self.lin1 = nn.Linear(latent_dim, hidden_units)
        self.lin2 = nn.Linear(hidden_units, 2)

    def forward(self, z):
        z = F.leaky_relu(self.lin1(z), self.neg_slope)
        return self.lin2(z)


class EncoderBurgess(nn.Module):
    def __init__(self, img_dim, hidden_dim, latent_dim):
        super(EncoderBurgess, self).__init__()
        self.lin1 = nn.Linear(img_dim, hidden_dim)
        self.lin2 = nn.Linear(hidden_dim, hidden_dim)
        self.mu_logvar_gen = nn.Linear(hidden_dim, latent_dim * 2)

    def forward(self, x):
        x = torch.relu(self.lin1(x))
        x = torch.relu(self.lin2(x))
        return self.mu_logvar_gen(x)


class VAE(nn.Module):
    def __init__(self, img_dim=12, hidden_dim=16, latent_dim=4):
        super(VAE, self).__init__()
        self.encoder = EncoderBurgess(img_dim, hidden_dim, latent_dim)
        self.decoder = nn.Linear(latent_dim, img_dim)
        self.latent_dim = latent_dim

    def reparameterize(self, mean, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mean + std * eps

    def forward(self, x):
        latent_dist = self.encoder(x).view(-1, self.latent_dim, 2).unbind(-1)
        latent_sample = self.reparameterize(*latent_dist)
        reconstruct = torch.sigmoid(self.decoder(latent_sample))
        return reconstruct, latent_dist, latent_sample

    def sample_latent(self, x):
        latent_dist = self.encoder(x).view(-1, self.latent_dim, 2).unbind(-1)
        return self.reparameterize(*latent_dist)


def _kl_normal_loss(mean, logvar):
    latent_kl = 0.5 * (-1 - logvar + mean.pow(2) + logvar.exp()).mean(dim=0)
    return latent_kl.sum()


def _permute_dims(latent_sample):
    perm = torch.zeros_like(latent_sample)
    batch_size, dim_z = perm.size()
    for z in range(dim_z):
        pi = torch.randperm(batch_size).to(latent_sample.device)
        perm[:, z] = latent_sample[pi, z]
    return perm


class FactorKLoss:
    def __init__(self, gamma=10., latent_dim=4):
        self.gamma = gamma
        self.discriminator = Discriminator(latent_dim=latent_dim)
        self.optimizer_d = optim.Adam(self.discriminator.parameters(), lr=5e-4, betas=(0.5, 0.9))

    def __call__(self, data, model, optimizer, storer):
        batch_size = data.size(dim=0)
        half_batch_size = batch_size // 2
        data = data.split(half_batch_size)
        data1 = data[0]
        data2 = data[1]

        # Factor VAE Loss
        recon_batch, latent_dist, latent_sample1 = model(data1)
        rec_loss = F.binary_cross_entropy(recon_batch, data1, reduction="sum") / half_batch_size
        kl_loss = _kl_normal_loss(*latent_dist)
        d_z = self.discriminator(latent_sample1)
        tc_loss = (d_z[:, 0] - d_z[:, 1]).mean()
        vae_loss = rec_loss + kl_loss + self.gamma * tc_loss
        storer['loss'].append(vae_loss.item())

        # Compute VAE gradients
        optimizer.zero_grad()
        vae_loss.backward(retain_graph=True)

        # Discriminator Loss
        latent_sample2 = model.sample_latent(data2)
        z_perm = _permute_dims(latent_sample2).detach()
        d_z_perm = self.discriminator(z_perm)
        ones = torch.ones(half_batch_size, dtype=torch.long)
        zeros = torch.zeros_like(ones)
        d_tc_loss = 0.5 * (F.cross_entropy(d_z, zeros) + F.cross_entropy(d_z_perm, ones))

        # Compute discriminator gradients
        self.optimizer_d.zero_grad()
        d_tc_loss.backward()

        # Update at the end (since pytorch 1.5. complains if update before)
        optimizer.step()
        self.optimizer_d.step()

        storer['discrim_loss'].append(d_tc_loss.item())
        return vae_loss


model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-3)
loss_f = FactorKLoss()
storer = {'loss': [], 'discrim_loss': []}
data = torch.rand(8, 12)
vae_loss = loss_f(data, model, optimizer, storer)
encoder_weight = model.encoder.lin1.weight.detach().clone()
