# label: hazard raises no-twin
# why: the encoder codes/features are computed once per batch, but after G_optimizer.step() updates the encoder weights in place the random-sample phase still back-propagates through that stale encoder graph
# source: https://github.com/owenzlz/DiverseOutpaint/issues/2
import torch
from torch import nn, optim

torch.manual_seed(0)

num_sample = 2
noise_dim = 4


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2))
        self.conv2 = nn.Sequential(nn.Conv2d(8, 8, 4, 2, 1), nn.LeakyReLU(0.2))
        self.fc = nn.Linear(8 * 2 * 2, 6)

    def forward(self, x):
        f1 = self.conv1(x)
        f2 = self.conv2(f1)
        return self.fc(f2.flatten(1)), [f1, f2]


class Decoder(nn.Module):
    def __init__(self, noise_dim):
        super().__init__()
        self.fc = nn.Linear(6 + noise_dim, 8 * 2 * 2)
        self.up1 = nn.ConvTranspose2d(16, 8, 4, 2, 1)
        self.up2 = nn.ConvTranspose2d(16, 3, 4, 2, 1)

    def forward(self, code, feats):
        x = self.fc(code.flatten(1)).view(-1, 8, 2, 2)
        x = torch.relu(self.up1(torch.cat([x, feats[1]], 1)))
        return torch.tanh(self.up2(torch.cat([x, feats[0]], 1)))


class PSPDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 2, 1),
                                 nn.AdaptiveAvgPool2d(1))

    def forward(self, x):
        return self.net(x).view(-1)


def collapse_batch(x):
    return x.contiguous().view(-1, *x.shape[2:])


def diverse_sampling(codes, num_sample, noise_dim):
    noises = torch.randn(codes.size(0), num_sample, noise_dim)
    codes = codes[:, None, :].expand(-1, num_sample, -1)
    return torch.cat([codes, noises], dim=2), noises


encoder, decoder, discriminator = Encoder(), Decoder(noise_dim=noise_dim), PSPDiscriminator()
G_optimizer = optim.Adam([{'params': encoder.parameters()}, {'params': decoder.parameters()}], lr=2e-4)
D_optimizer = optim.Adam(discriminator.parameters(), lr=2e-4)

high = torch.rand(2, 3, 8, 8) * 2 - 1
mask = torch.zeros(2, 3, 8, 8)
mask[:, :, 2:6, 2:6] = 1
low = high * mask
N = high.size(0)

codes, feats = encoder(low)

# centroid sample
diverse_codes, center_noises = diverse_sampling(codes, num_sample, noise_dim)
high_hat = decoder(diverse_codes.view(-1, diverse_codes.size(2)),
                   [collapse_batch(feat[:, None, ...].expand(-1, num_sample, -1, -1, -1)) for feat in feats])
mask_rep = collapse_batch(mask[:, None].expand(-1, num_sample, -1, -1, -1))
high_unsqueeze = collapse_batch(high[:, None].expand(-1, num_sample, -1, -1, -1))
high_center_hat = (1 - mask_rep) * high_hat + mask_rep * high_unsqueeze

D_loss = nn.BCEWithLogitsLoss()(discriminator(high), torch.ones(N)) + \
    nn.BCEWithLogitsLoss()(discriminator(high_center_hat), torch.zeros(N * num_sample))
D_optimizer.zero_grad()
D_loss.backward(retain_graph=True)
D_optimizer.step()

high_recon = nn.MSELoss()(high_center_hat.view(N, num_sample, 3, 8, 8), high.view(N, 1, 3, 8, 8))
G_loss = nn.BCEWithLogitsLoss()(discriminator(high_center_hat), torch.ones(N * num_sample))
total_loss = G_loss + high_recon
G_optimizer.zero_grad()
total_loss.backward(retain_graph=True)
G_optimizer.step()  # <-- IPL001: updates encoder weights that codes/feats (reused below) were computed with

# random sample, still decoding the codes/feats computed before the step
diverse_codes, noises = diverse_sampling(codes, num_sample, noise_dim)
high_hat = decoder(diverse_codes.view(-1, diverse_codes.size(2)),
                   [collapse_batch(feat[:, None, ...].expand(-1, num_sample, -1, -1, -1)) for feat in feats])
high_hat = (1 - mask_rep) * high_hat + mask_rep * high_unsqueeze
D_loss = nn.BCEWithLogitsLoss()(discriminator(high), torch.ones(N)) + \
    nn.BCEWithLogitsLoss()(discriminator(high_hat), torch.zeros(N * num_sample))
D_optimizer.zero_grad()
D_loss.backward(retain_graph=True)
D_optimizer.step()
G_loss = nn.BCEWithLogitsLoss()(discriminator(high_hat), torch.ones(N * num_sample))
G_optimizer.zero_grad()
G_loss.backward()
G_optimizer.step()
