# label: safe
# why: L = self.LU.tril() is a fresh tensor that tril's backward does not need, so filling its diagonal in place leaves the 1x1-conv flow and its LU gradients unchanged
# source: https://github.com/pyro-ppl/pyro/commit/80659a96d2268fc78a47724696987f27225f977d (pyro/distributions/transforms/generalized_channel_permute.py before that commit)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GeneralizedChannelPermute(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.channels = channels
        # Sample a random orthogonal matrix
        W, _ = torch.linalg.qr(torch.randn(channels, channels))
        # Construct the partially pivoted LU-form and the pivots
        LU, pivots = torch.linalg.lu_factor(W)
        # Convert the pivots into the permutation matrix
        P, _, _ = torch.lu_unpack(LU, pivots)
        self.register_buffer('permutation', P)
        self.LU = nn.Parameter(LU)

    def _call(self, x):
        # Extract the lower and upper matrices from the packed LU matrix
        U = self.LU.triu()
        L = self.LU.tril()
        L.diagonal(dim1=-2, dim2=-1).fill_(1)

        # Perform the 2D convolution, using the weight
        filters = (self.permutation @ L @ U)[..., None, None]
        y = F.conv2d(x.view(-1, *x.shape[-3:]), filters)
        return y.view_as(x)

    def log_abs_det_jacobian(self, x, y):
        h, w = x.shape[-2:]
        log_det = h * w * torch.log(torch.abs(torch.diag(self.LU))).sum()
        return log_det * torch.ones(x.size()[:-3], dtype=x.dtype, layout=x.layout, device=x.device)


flow = GeneralizedChannelPermute(channels=3)
base = torch.distributions.Normal(0.0, 1.0)
x = torch.randn(2, 3, 4, 4)
y = flow._call(x)
log_prob = base.log_prob(y).sum((-3, -2, -1)) + flow.log_abs_det_jacobian(x, y)
nll = -log_prob.mean()
nll.backward()
