# label: safe
# why: in training mode std is rebound to randn_like(std).mul(std) before std.add_(mu), so the in-place add lands on a fresh product that mul did not save and nothing else reads.
# source: https://github.com/Project-MONAI/MONAI/blob/46a5272196a6c2590ca2589029eed8e4d56ff008/monai/networks/nets/varautoencoder.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VarAutoEncoder(nn.Module):
    def __init__(self, in_shape=(1, 8, 8), latent_size=4, channels=(4, 8), strides=(2, 2)):
        super().__init__()
        self.in_channels, *self.in_shape = in_shape
        self.latent_size = latent_size
        layers, c = [], self.in_channels
        for ch, s in zip(channels, strides):
            layers += [nn.Conv2d(c, ch, 3, stride=s, padding=1), nn.PReLU()]
            c = ch
        self.encode = nn.Sequential(*layers)
        self.final_size = [self.in_shape[0] // 4, self.in_shape[1] // 4]
        linear_size = c * self.final_size[0] * self.final_size[1]
        self.mu = nn.Linear(linear_size, self.latent_size)
        self.logvar = nn.Linear(linear_size, self.latent_size)
        self.decodeL = nn.Linear(self.latent_size, linear_size)
        self.encoded_channels = c
        self.decode = nn.Sequential(
            nn.ConvTranspose2d(c, channels[0], 4, stride=2, padding=1), nn.PReLU(),
            nn.ConvTranspose2d(channels[0], self.in_channels, 4, stride=2, padding=1))

    def encode_forward(self, x):
        x = self.encode(x)
        x = x.view(x.shape[0], -1)
        mu = self.mu(x)
        logvar = self.logvar(x)
        return mu, logvar

    def decode_forward(self, z, use_sigmoid=True):
        x = F.relu(self.decodeL(z))
        x = x.view(x.shape[0], self.encoded_channels, *self.final_size)
        x = self.decode(x)
        if use_sigmoid:
            x = torch.sigmoid(x)
        return x

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)

        if self.training:  # multiply random noise with std only during training
            std = torch.randn_like(std).mul(std)

        return std.add_(mu)

    def forward(self, x):
        mu, logvar = self.encode_forward(x)
        z = self.reparameterize(mu, logvar)
        return self.decode_forward(z), mu, logvar, z


net = VarAutoEncoder()
net.train()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
image = torch.rand(4, 1, 8, 8)
for _ in range(2):
    recon, mu, logvar, z = net(image)
    kld = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    loss = F.binary_cross_entropy(recon, image, reduction="sum") + kld
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
final_loss = loss.detach()
