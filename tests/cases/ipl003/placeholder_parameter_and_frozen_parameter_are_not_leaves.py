# label: hazard raises no-twin
# why: the moving mean is a buffer (the None parameter is the placeholder of the other branch) and eps is a Parameter with requires_grad=False, so writing them in forward is fine; writing the trainable weight raises
# source: reduced from speechbrain nnet/complex_networks/c_normalization.py and tianshou utils/net/discrete.py (bench/UNTUNED.md, false alarms of the first run)
import torch
from torch import nn


class Norm(nn.Module):
    def __init__(self, n, track=True):
        super().__init__()
        if track:
            self.register_buffer("moving_mean", torch.zeros(n))
        else:
            self.register_parameter("moving_mean", None)
        self.eps = nn.Parameter(torch.zeros(n), requires_grad=False)
        self.w = nn.Parameter(torch.ones(n))

    def forward(self, x):
        self.moving_mean.mul_(0.9)
        self.eps.copy_(x.mean(0))
        self.w.mul_(2)  # <-- IPL003: the trainable weight is a leaf that requires grad
        return x * self.w


torch.manual_seed(0)
norm = Norm(3)
out = norm(torch.randn(4, 3))
