# label: safe
# why: the fixed safe_divide clamps near-zero values with torch.where, so the norm saved by torch.norm and the caller's tensors stay untouched.
# source: https://github.com/zju3dv/RelightableAvatar/issues/3
import torch
import torch.nn as nn

torch.manual_seed(0)


def safe_divide(a, b, eps=1e-8):
    a = torch.where((a < eps) & (a >= 0), torch.tensor(eps), a)
    a = torch.where((a > -eps) & (a <= 0), torch.tensor(-eps), a)
    b = torch.where((b < eps) & (b >= 0), torch.tensor(eps), b)
    b = torch.where((b > -eps) & (b <= 0), torch.tensor(-eps), b)
    return a / b


def normalize(x):
    norm = torch.norm(x, dim=-1, keepdim=True)
    return safe_divide(x, norm)


class ResidualDeformation(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, 16), nn.Softplus(), nn.Linear(16, 3))

    def forward(self, xyz):
        return xyz + self.mlp(xyz)


deform = ResidualDeformation()
xyz = torch.randn(32, 3)
light_dir = torch.randn(32, 3)
normal = normalize(deform(xyz))
shading = (normal * light_dir).sum(-1).clamp(min=0)
loss = (shading - 0.5).pow(2).mean()
loss.backward()
