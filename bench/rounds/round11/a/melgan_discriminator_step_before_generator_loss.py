# label: hazard raises no-twin
# why: the generator loss reuses the discriminator outputs computed before optD.step(); the step updates the weight-normed discriminator parameters in place, so backpropagating loss_G through them fails.
# source: https://github.com/vlomme/AGAIN-MelGan-Voice-Cloning/issues/2
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm

torch.manual_seed(0)


def WNConv1d(*args, **kwargs):
    return weight_norm(nn.Conv1d(*args, **kwargs))


class Generator(nn.Module):
    def __init__(self, mel_channel=4, ngf=8):
        super().__init__()
        self.model = nn.Sequential(
            WNConv1d(mel_channel, ngf, 3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Upsample(scale_factor=4),
            WNConv1d(ngf, 1, 3, padding=1),
            nn.Tanh(),
        )

    def forward(self, mel):
        return self.model(mel)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=4):
        super().__init__()
        model = nn.ModuleDict()
        model["layer_0"] = nn.Sequential(WNConv1d(1, ndf, 5, padding=2), nn.LeakyReLU(0.2, True))
        model["layer_1"] = nn.Sequential(WNConv1d(ndf, ndf * 2, 5, stride=2, padding=2), nn.LeakyReLU(0.2, True))
        model["layer_2"] = WNConv1d(ndf * 2, 1, 3, padding=1)
        self.model = model

    def forward(self, x):
        results = []
        for key, layer in self.model.items():
            x = layer(x)
            results.append(x)
        return results


class Discriminator(nn.Module):
    def __init__(self, num_D=2):
        super().__init__()
        self.model = nn.ModuleDict()
        for i in range(num_D):
            self.model[f"disc_{i}"] = NLayerDiscriminator()
        self.downsample = nn.AvgPool1d(4, stride=2, padding=1, count_include_pad=False)

    def forward(self, x):
        results = []
        for key, disc in self.model.items():
            results.append(disc(x))
            x = self.downsample(x)
        return results


G = Generator()
D = Discriminator()
optG = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.5, 0.9))
optD = torch.optim.Adam(D.parameters(), lr=1e-4, betas=(0.5, 0.9))

mel = torch.randn(2, 4, 8)
audio = torch.randn(2, 1, 32)

fake_audio = G(mel)
d_fake = D(fake_audio)
d_real = D(audio)

loss_D = 0
for scale in d_fake:
    loss_D += F.relu(1 + scale[-1]).mean()
for scale in d_real:
    loss_D += F.relu(1 - scale[-1]).mean()
optD.zero_grad()
loss_D.backward(retain_graph=True)
optD.step()  # <-- IPL001: discriminator weights updated in place while d_fake's graph is still to be backpropagated for loss_G

loss_G = 0
for scale in d_fake:
    loss_G += -scale[-1].mean()
feat_match = 0
for i in range(len(d_fake)):
    for j in range(len(d_fake[i]) - 1):
        feat_match += F.l1_loss(d_fake[i][j], d_real[i][j].detach())
loss_G = loss_G + 10 * feat_match
optG.zero_grad()
loss_G.backward()
optG.step()
