# label: safe
# why: every LeakyReLU(inplace=True) in the discriminator follows a Conv2d or BatchNorm2d, whose backward needs their inputs, not their outputs, so overwriting those outputs is harmless.
# source: https://github.com/lucidrains/lightweight-gan/pull/1 (commit cf52517a660b1cb4db6cd17cf4e47e81cff6aca5)
from math import log2

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self, *, image_size, fmap_max=16, fmap_inverse_coef=4, transparent=False):
        super().__init__()
        resolution = log2(image_size)
        init_channel = 4 if transparent else 3

        num_non_residual_layers = max(0, int(resolution) - 4)
        num_residual_layers = 8 - 3

        non_residual_resolutions = range(min(8, int(resolution)), 4, -1)
        features = list(map(lambda n: (n, 2 ** (fmap_inverse_coef - n) if n < fmap_inverse_coef else 4), non_residual_resolutions))
        features = list(map(lambda n: (n[0], min(n[1], fmap_max)), features))

        self.non_residual_layers = nn.ModuleList([])
        for ind in range(num_non_residual_layers):
            first_layer = ind == 0
            chan_out = 4
            self.non_residual_layers.append(nn.Sequential(
                nn.Conv2d(init_channel, chan_out, 4, stride=2, padding=1),
                nn.BatchNorm2d(chan_out) if not first_layer else nn.Identity(),
                nn.LeakyReLU(0.1, inplace=True)
            ))
            init_channel = chan_out

        chan_in_out = [(init_channel, 8), (8, 8)]
        self.residual_layers = nn.ModuleList([])
        for (chan_in, chan_out) in chan_in_out:
            self.residual_layers.append(nn.ModuleList([
                nn.Sequential(
                    nn.Conv2d(chan_in, chan_out, 4, stride=2, padding=1),
                    nn.BatchNorm2d(chan_out),
                    nn.LeakyReLU(0.1, inplace=True),
                    nn.Conv2d(chan_out, chan_out, 3, padding=1),
                    nn.BatchNorm2d(chan_out),
                    nn.LeakyReLU(0.1, inplace=True)
                ),
                nn.Sequential(
                    nn.AvgPool2d(2),
                    nn.Conv2d(chan_in, chan_out, 1),
                    nn.BatchNorm2d(chan_out),
                    nn.LeakyReLU(0.1, inplace=True)
                ),
            ]))
        self.to_logits = nn.Sequential(nn.BatchNorm2d(8), nn.Conv2d(8, 1, 2))

    def forward(self, x):
        for layer in self.non_residual_layers:
            x = layer(x)
        for (layer, residual) in self.residual_layers:
            x = (layer(x) + residual(x)) * (1 / 2 ** 0.5)
        return self.to_logits(x).flatten(1)


D = Discriminator(image_size=32)
G = nn.Sequential(nn.Linear(8, 3 * 32 * 32), nn.Tanh())
D_opt = torch.optim.Adam(D.parameters(), lr=2e-4)
G_opt = torch.optim.Adam(G.parameters(), lr=2e-4)
image_batch = torch.rand(2, 3, 32, 32)
latents = torch.randn(2, 8)

generated_images = G(latents).view(2, 3, 32, 32)
fake_output = D(generated_images.detach())
real_output = D(image_batch)
disc_loss = (F.relu(1 + real_output) + F.relu(1 - fake_output)).mean()
D_opt.zero_grad()
disc_loss.backward()
D_opt.step()

generated_images = G(latents).view(2, 3, 32, 32)
gen_loss = D(generated_images).mean()
G_opt.zero_grad()
gen_loss.backward()
G_opt.step()
