# label: hazard raises
# why: in eval mode VarAutoEncoder.reparameterize returns std.add_(mu) where std is still exp(0.5 * logvar), an output exp saved for its backward, so taking input gradients through the VAE in eval mode fails.
# source: https://github.com/Project-MONAI/MONAI/issues/8413
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

        return std.add_(mu)  # <-- IPL001: in eval mode std is exp()'s output, which exp's backward needs

    def forward(self, x):
        mu, logvar = self.encode_forward(x)
        z = self.reparameterize(mu, logvar)
        return self.decode_forward(z), mu, logvar, z


net = VarAutoEncoder()
net.eval()
image = torch.rand(2, 1, 8, 8, requires_grad=True)
recon, mu, logvar, z = net(image)
# saliency of the reconstruction error w.r.t. the input image
recon_error = F.mse_loss(recon, image.detach(), reduction="sum")
saliency, = torch.autograd.grad(recon_error, image)
