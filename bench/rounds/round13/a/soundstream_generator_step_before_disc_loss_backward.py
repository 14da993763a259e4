# label: hazard raises no-twin
# why: the discriminator loss reuses the generator-phase discriminator features on G(x) (not detached), so after optimizer_g.step() has updated the SoundStream generator in place, loss_d.backward() walks into generator ops whose saved weights changed.
# source: https://github.com/wesbz/SoundStream/issues/7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalConv1d(nn.Conv1d):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.causal_padding = self.dilation[0] * (self.kernel_size[0] - 1)

    def forward(self, x):
        return self._conv_forward(F.pad(x, [self.causal_padding, 0]), self.weight, self.bias)


class SoundStream(nn.Module):
    def __init__(self, C=2):
        super().__init__()
        self.encoder = nn.Sequential(CausalConv1d(1, C, kernel_size=7), nn.ELU(), CausalConv1d(C, C, kernel_size=3))
        self.decoder = nn.Sequential(CausalConv1d(C, C, kernel_size=3), nn.ELU(), CausalConv1d(C, 1, kernel_size=7))

    def forward(self, x):
        return self.decoder(self.encoder(x))


class WaveDiscriminator(nn.Module):
    def __init__(self, num_D=2):
        super().__init__()
        self.disc = nn.ModuleList([nn.ModuleList([nn.Conv1d(1, 4, 5, padding=2), nn.Conv1d(4, 1, 3, padding=1)]) for _ in range(num_D)])
        self.downsampler = nn.AvgPool1d(kernel_size=4, stride=2, padding=1, count_include_pad=False)

    def forward(self, x):
        results = []
        for i, layers in enumerate(self.disc):
            feats = []
            h = x
            for layer in layers:
                h = F.leaky_relu(layer(h), 0.2)
                feats.append(h)
            results.append(feats)
            x = self.downsampler(x)
        return results


class STFTDiscriminator(nn.Module):
    def __init__(self, C=2):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(2, C, (7, 7), padding=3), nn.Conv2d(C, 1, (1, 7), padding=(0, 3))])

    def forward(self, x):
        feats = []
        for layer in self.layers:
            x = F.leaky_relu(layer(x), 0.2)
            feats.append(x)
        return feats


def stft(x):
    return torch.stft(x.squeeze(1), n_fft=16, hop_length=4, window=torch.hann_window(16), return_complex=False).permute(0, 3, 1, 2)


def criterion_g(x, G_x, features_stft_disc_x, features_wave_disc_x, features_stft_disc_G_x, features_wave_disc_G_x):
    adv_loss = sum(F.relu(1 - d[-1]).mean() for d in features_wave_disc_G_x) + F.relu(1 - features_stft_disc_G_x[-1]).mean()
    feat_loss = sum(F.l1_loss(a, b.detach()) for fa, fb in zip(features_wave_disc_G_x, features_wave_disc_x) for a, b in zip(fa, fb))
    rec_loss = F.l1_loss(G_x, x)
    return adv_loss + 100 * feat_loss + rec_loss


def criterion_d(features_stft_disc_x, features_wave_disc_x, features_stft_disc_G_x, features_wave_disc_G_x):
    loss = F.relu(1 - features_stft_disc_x[-1]).mean() + F.relu(1 + features_stft_disc_G_x[-1]).mean()
    for real, fake in zip(features_wave_disc_x, features_wave_disc_G_x):
        loss = loss + F.relu(1 - real[-1]).mean() + F.relu(1 + fake[-1]).mean()
    return loss


soundstream = SoundStream()
wave_disc = WaveDiscriminator()
stft_disc = STFTDiscriminator()
optimizer_g = torch.optim.Adam(soundstream.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizer_d = torch.optim.Adam(list(wave_disc.parameters()) + list(stft_disc.parameters()), lr=1e-4, betas=(0.5, 0.9))

for x in [torch.randn(2, 1, 64)]:
    G_x = soundstream(x)
    s_x = stft(x)
    s_G_x = stft(G_x)

    features_stft_disc_x = stft_disc(s_x)
    features_wave_disc_x = wave_disc(x)
    features_stft_disc_G_x = stft_disc(s_G_x)
    features_wave_disc_G_x = wave_disc(G_x)

    loss_g = criterion_g(x, G_x, features_stft_disc_x, features_wave_disc_x, features_stft_disc_G_x, features_wave_disc_G_x)
    optimizer_g.zero_grad()
    loss_g.backward(retain_graph=True)
    optimizer_g.step()  # <-- IPL001: updates the generator in place before loss_d (built on the same G(x) graph) is backpropagated

    loss_d = criterion_d(features_stft_disc_x, features_wave_disc_x, features_stft_disc_G_x, features_wave_disc_G_x)
    optimizer_d.zero_grad()
    loss_d.backward()
    optimizer_d.step()
