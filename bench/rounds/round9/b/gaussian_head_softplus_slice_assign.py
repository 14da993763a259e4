# label: hazard raises
# why: the Gaussian output head writes softplus(raw scale) back into column 1 of the same parameter tensor, overwriting the slice that softplus saved as its input for backward.
# source: https://github.com/pytorch/pytorch/issues/114505
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GaussianRegressor(nn.Module):
    def __init__(self, in_dim=4, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, 2)

    def forward(self, x):
        params = self.head(self.body(x))
        b = params.clone()
        scale = F.softplus(b[:, 1]) + 1e-3
        b[:, 1] = scale  # <-- IPL001: overwrites the column softplus saved for backward
        return b


def gaussian_nll(params, y):
    mean, scale = params[:, 0], params[:, 1]
    dist = torch.distributions.Normal(mean, scale)
    return -dist.log_prob(y).mean()


model = GaussianRegressor()
x = torch.randn(8, 4)
y = torch.randn(8)
params = model(x)
nll = gaussian_nll(params, y)
nll.backward()
