# label: hazard raises
# why: the epsilon buffer used by w = mu + sigma * eps is resampled in place on the second (siamese) forward, but the first forward's mul saved it for backward
# source: https://github.com/piEsposito/blitz-bayesian-deep-learning/issues/20
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GaussianVariational(nn.Module):
    def __init__(self, mu, rho):
        super().__init__()
        self.mu = nn.Parameter(mu)
        self.rho = nn.Parameter(rho)
        self.register_buffer('eps_w', torch.Tensor(self.mu.shape))
        self.sigma = None
        self.w = None

    def sample(self):
        self.eps_w.normal_()  # <-- IPL001: eps_w was saved by the previous forward's sigma * eps_w
        self.sigma = torch.log1p(torch.exp(self.rho))
        self.w = self.mu + self.sigma * self.eps_w
        return self.w


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight_sampler = GaussianVariational(torch.randn(out_features, in_features) * 0.1,
                                                  torch.full((out_features, in_features), -3.0))
        self.bias_sampler = GaussianVariational(torch.zeros(out_features), torch.full((out_features,), -3.0))

    def forward(self, x):
        w = self.weight_sampler.sample()
        b = self.bias_sampler.sample()
        return F.linear(x, w, b)


class BayesianSiamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.blinear1 = BayesianLinear(6, 8)
        self.blinear2 = BayesianLinear(8, 4)

    def forward_once(self, x):
        return self.blinear2(torch.relu(self.blinear1(x)))

    def forward(self, x1, x2):
        return self.forward_once(x1), self.forward_once(x2)


net = BayesianSiamese()
x1, x2 = torch.randn(5, 6), torch.randn(5, 6)
label = torch.randint(0, 2, (5,)).float()
out1, out2 = net(x1, x2)
dist = F.pairwise_distance(out1, out2)
loss = torch.mean((1 - label) * dist.pow(2) + label * torch.clamp(1.0 - dist, min=0.0).pow(2))
loss.backward()
