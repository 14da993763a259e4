# label: hazard silent
# why: the noise transform adds noise with `x += ...`, so the clean volume the caller keeps as the denoising target is corrupted as well and the loss compares noise with noise.
# source: https://github.com/balbasty/cornucopia/pull/13
import torch
from torch import nn

torch.manual_seed(0)


class Transform(nn.Module):
    def forward(self, *args):
        return tuple(self.apply_transform(x) for x in args) if len(args) > 1 else self.apply_transform(args[0])


class GaussianNoiseTransform(Transform):
    def __init__(self, sigma=0.1):
        super().__init__()
        self.sigma = sigma

    def apply_transform(self, x):
        x += torch.randn_like(x) * self.sigma  # <-- IPL004: adds the noise into the caller's clean tensor
        return x


denoiser = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv3d(4, 1, 3, padding=1))
clean = torch.rand(2, 1, 4, 4, 4)
noisy = GaussianNoiseTransform(sigma=0.2)(clean)
pred = denoiser(noisy)
loss = ((pred - clean) ** 2).mean()
loss.backward()
