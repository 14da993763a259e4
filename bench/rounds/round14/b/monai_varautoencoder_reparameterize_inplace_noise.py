# label: safe
# why: the in-place mul_/add_ act on a fresh randn_like tensor that nothing saved, so the reparameterised sample and its gradients are unchanged
# source: https://github.com/Project-MONAI/MONAI/pull/8933
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VarAutoEncoder(nn.Module):
    def __init__(self, in_features=12, latent_size=3, use_mean_at_inference=False):
        super().__init__()
        self.encode = nn.Sequential(nn.Linear(in_features, 16), nn.PReLU())
        self.mu = nn.Linear(16, latent_size)
        self.logvar = nn.Linear(16, latent_size)
        self.decodeL = nn.Linear(latent_size, 16)
        self.decode = nn.Linear(16, in_features)
        self.use_mean_at_inference = use_mean_at_inference

    def encode_forward(self, x):
        x = self.encode(x)
        return self.mu(x), self.logvar(x)

    def decode_forward(self, z, use_sigmoid=True):
        x = F.relu(self.decodeL(z))
        x = self.decode(x)
        return torch.sigmoid(x) if use_sigmoid else x

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        if self.training:  # multiply random noise with std only during training
            std = torch.randn_like(std).mul_(std)
            return std.add_(mu)
        if self.use_mean_at_inference:
            return mu
        return mu + std

    def forward(self, x):
        mu, logvar = self.encode_forward(x)
        z = self.reparameterize(mu, logvar)
        return self.decode_forward(z), mu, logvar, z


def loss_function(recon_x, x, mu, log_var, beta=1e-3):
    bce = F.binary_cross_entropy(recon_x, x, reduction="sum")
    kld = -0.5 * beta * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())
    return bce + kld


model = VarAutoEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.rand(6, 12)
model.train()
recon, mu, logvar, z = model(x)
loss = loss_function(recon, x, mu, logvar)
opt.zero_grad()
loss.backward()
grad_mu_weight = model.mu.weight.grad.clone()
opt.step()
