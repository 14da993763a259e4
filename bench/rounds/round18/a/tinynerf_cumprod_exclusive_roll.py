# label: safe
# why: cumprod_exclusive writes 1 into the first sample of torch.roll's fresh output; roll saves nothing and cumprod's own saved result is a different tensor, so the in-place fill is harmless.
# source: https://github.com/volunt4s/TinyNeRF-pytorch/issues/1
import torch
import torch.nn as nn

torch.manual_seed(0)


def cumprod_exclusive(tensor):
    dim = -1
    cumprod = torch.cumprod(tensor, dim)
    cumprod = torch.roll(cumprod, 1, dim)
    cumprod[..., 0] = 1.0
    return cumprod


def positional_encoding(x, L_embed=2):
    rets = [x]
    for i in range(L_embed):
        for fn in [torch.sin, torch.cos]:
            rets.append(fn(2.0 ** i * x))
    return torch.cat(rets, -1)


class TinyNeRF(nn.Module):
    def __init__(self, D=3, W=16, L_embed=2):
        super().__init__()
        in_ch = 3 + 3 * 2 * L_embed
        layers = [nn.Linear(in_ch, W), nn.ReLU()]
        for _ in range(D - 1):
            layers += [nn.Linear(W, W), nn.ReLU()]
        layers += [nn.Linear(W, 4)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def render_rays(model, rays_o, rays_d, near, far, N_samples):
    z_vals = torch.linspace(near, far, N_samples)
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = model(positional_encoding(pts))
    sigma_a = torch.relu(raw[..., 3])
    rgb = torch.sigmoid(raw[..., :3])
    dists = torch.cat([z_vals[1:] - z_vals[:-1], torch.tensor([1e10])], -1)
    alpha = 1.0 - torch.exp(-sigma_a * dists)
    weights = alpha * cumprod_exclusive(1.0 - alpha + 1e-10)
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    acc_map = torch.sum(weights, -1)
    return rgb_map, depth_map, acc_map


model = TinyNeRF()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
rays_o = torch.zeros(4, 4, 3)
rays_d = torch.randn(4, 4, 3)
target = torch.rand(4, 4, 3)
for i in range(2):
    rgb, depth, acc = render_rays(model, rays_o, rays_d, near=2.0, far=6.0, N_samples=8)
    loss = torch.mean((rgb - target) ** 2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
