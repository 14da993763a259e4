# label: hazard raises
# why: safe_divide clamps its arguments with in-place masked index assignments, but a is the input and b the output that torch.norm saved for its own backward.
# source: https://github.com/zju3dv/RelightableAvatar/issues/3
import torch
import torch.nn as nn

torch.manual_seed(0)


def safe_divide(a, b, eps=1e-8):
    a[(a < eps) & (a >= 0)] = eps  # <-- IPL001: a is x, which torch.norm saved for its backward
    a[(a > -eps) & (a <= 0)] = -eps  # <-- IPL001: a is x, which torch.norm saved for its backward
    b[(b < eps) & (b >= 0)] = eps  # <-- IPL001: b is the norm output saved by torch.norm for backward
    b[(b > -eps) & (b <= 0)] = -eps  # <-- IPL001: same saved norm output written again
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
