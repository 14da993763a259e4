# label: safe no-twin
# why: ActNorm's data-dependent init copies batch statistics into loc/scale with .data.copy_ and fills the initialized buffer during a first pass run under torch.no_grad(), before any graph that uses those parameters exists
# source: https://github.com/rosinality/glow-pytorch/issues/46
from math import log, pi

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
logabs = lambda x: torch.log(torch.abs(x))


class ActNorm(nn.Module):
    def __init__(self, in_channel, logdet=True):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
        self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))
        self.logdet = logdet

    def initialize(self, input):
        with torch.no_grad():
            flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
            mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
            self.loc.data.copy_(-mean)
            self.scale.data.copy_(1 / (std + 1e-6))

    def forward(self, input):
        _, _, height, width = input.shape
        if self.initialized.item() == 0:
            self.initialize(input)
            self.initialized.fill_(1)
        log_abs = logabs(self.scale)
        logdet = height * width * torch.sum(log_abs)
        return self.scale * (input + self.loc), logdet


class InvConv2d(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        weight = torch.randn(in_channel, in_channel)
        q, _ = torch.linalg.qr(weight)
        self.weight = nn.Parameter(q.unsqueeze(2).unsqueeze(3))

    def forward(self, input):
        _, _, height, width = input.shape
        out = F.conv2d(input, self.weight)
        logdet = height * width * torch.slogdet(self.weight.squeeze().double())[1].float()
        return out, logdet


class AffineCoupling(nn.Module):
    def __init__(self, in_channel, filter_size=8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channel // 2, filter_size, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(filter_size, in_channel, 3, padding=1),
        )

    def forward(self, input):
        in_a, in_b = input.chunk(2, 1)
        log_s, t = self.net(in_a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (in_b + t) * s
        logdet = torch.sum(torch.log(s).view(input.shape[0], -1), 1)
        return torch.cat([in_a, out_b], 1), logdet


class Flow(nn.Module):
    def __init__(self, in_channel):
        super().__init__()
        self.actnorm = ActNorm(in_channel)
        self.invconv = InvConv2d(in_channel)
        self.coupling = AffineCoupling(in_channel)

    def forward(self, input):
        out, logdet = self.actnorm(input)
        out, det1 = self.invconv(out)
        out, det2 = self.coupling(out)
        return out, logdet + det1 + det2


class Glow(nn.Module):
    def __init__(self, in_channel, n_flow):
        super().__init__()
        self.flows = nn.ModuleList([Flow(in_channel) for _ in range(n_flow)])

    def forward(self, input):
        out, logdet = input, 0
        for flow in self.flows:
            out, det = flow(out)
            logdet = logdet + det
        log_p = (-0.5 * log(2 * pi) - 0.5 * out ** 2).view(input.shape[0], -1).sum(1)
        return log_p, logdet, out


def calc_loss(log_p, logdet, image_size, n_bins, n_channel=4):
    n_pixel = image_size * image_size * n_channel
    loss = -log(n_bins) * n_pixel + logdet + log_p
    return (-loss / (log(2) * n_pixel)).mean()


n_bins = 32.0
model = Glow(4, n_flow=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
images = [torch.rand(6, 4, 4, 4) for _ in range(3)]
losses = []
for i, image in enumerate(images):
    image = torch.floor(image * n_bins) / n_bins - 0.5
    if i == 0:
        with torch.no_grad():
            log_p, logdet, _ = model(image + torch.rand_like(image) / n_bins)
            continue
    else:
        log_p, logdet, _ = model(image + torch.rand_like(image) / n_bins)
    loss = calc_loss(log_p, logdet.mean(), 4, n_bins)
    model.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

final_loss = losses[-1]
actnorm_loc = model.flows[0].actnorm.loc.detach().clone()
