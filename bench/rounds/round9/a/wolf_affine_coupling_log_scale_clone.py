# label: safe
# why: the PR clones log_scale first, so mul_/tanh_ act on a private copy (tanh_ saving its own result), leaving the chunk views of the network output untouched
# source: https://github.com/XuezheMax/wolf/pull/1
import torch
import torch.nn as nn

torch.manual_seed(0)


class Affine(nn.Module):
    def __init__(self, dim, alpha):
        super(Affine, self).__init__()
        self.dim = dim
        self.alpha = alpha

    def calc_params(self, params):
        mu, log_scale = params.chunk(2, dim=self.dim)
        scale = log_scale.clone().mul_(0.5).tanh_().mul(self.alpha).add(1.0)
        return mu, scale

    @staticmethod
    def fwd(z, params):
        mu, scale = params
        z = scale * z + mu
        logdet = scale.log().view(z.size(0), -1).sum(dim=1)
        return z, logdet


class NICE2d(nn.Module):
    def __init__(self, in_channels, hidden_channels):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(in_channels // 2, hidden_channels, 3, padding=1),
            nn.ELU(inplace=True),
            nn.Conv2d(hidden_channels, in_channels, 1),
        )

    def forward(self, x):
        return self.net(x)


class Conv2dCoupling(nn.Module):
    def __init__(self, in_channels, hidden_channels=8, alpha=1.0):
        super().__init__()
        self.net = NICE2d(in_channels, hidden_channels)
        self.transform = Affine(dim=1, alpha=alpha)

    def forward(self, input):
        z1, z2 = input.chunk(2, dim=1)
        params = self.transform.calc_params(self.net(z1))
        z2, logdet = self.transform.fwd(z2, params)
        return torch.cat([z1, z2], dim=1), logdet


flow = nn.ModuleList([Conv2dCoupling(4), Conv2dCoupling(4)])
x = torch.randn(2, 4, 6, 6)
logdet_accum = torch.zeros(2)
out = x
for coupling in flow:
    out, logdet = coupling(out)
    logdet_accum = logdet_accum + logdet
    out = out.flip(1)
log_prob = -0.5 * out.pow(2).view(2, -1).sum(1) + logdet_accum
loss = -log_prob.mean()
loss.backward()
