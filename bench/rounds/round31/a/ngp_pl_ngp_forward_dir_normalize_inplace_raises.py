# label: hazard raises
# why: NGP.forward normalizes the caller's ray directions in place (`d /= torch.norm(d, ...)`); once extrinsics optimization makes RayMarcher's outputs differentiable, torch.norm has saved d for backward and the in-place division makes the photometric loss backward fail.
# source: https://github.com/kwea123/ngp_pl/commit/9a32d0dc8000ebb6a1100095809b871ee538850b
import torch
from torch import nn

torch.manual_seed(0)

NEAR_DISTANCE = 0.01


class TruncExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.exp(x)

    @staticmethod
    def backward(ctx, dL_dout):
        x = ctx.saved_tensors[0]
        return dL_dout * torch.exp(x.clamp(-15, 15))


class RayMarcher(torch.autograd.Function):
    """March the rays to get sample point positions and directions (uniform samples here)."""

    @staticmethod
    def forward(ctx, rays_o, rays_d, hits_t, n_samples):
        N_rays = rays_o.shape[0]
        ts = torch.linspace(0, 1, n_samples)[None, :] * (hits_t[:, 1:2] - hits_t[:, 0:1]) + hits_t[:, 0:1]
        deltas = torch.full_like(ts, 1.0 / n_samples) * (hits_t[:, 1:2] - hits_t[:, 0:1])
        xyzs = rays_o[:, None, :] + rays_d[:, None, :] * ts[..., None]
        dirs = rays_d[:, None, :].expand(-1, n_samples, -1)
        rays_a = torch.stack([torch.arange(N_rays), torch.arange(N_rays) * n_samples,
                              torch.full((N_rays,), n_samples)], 1)
        ts = ts.reshape(-1)
        ctx.save_for_backward(rays_a, ts)
        ctx.n_samples = n_samples
        return rays_a, xyzs.reshape(-1, 3), dirs.reshape(-1, 3).contiguous(), deltas.reshape(-1), ts, N_rays * n_samples

    @staticmethod
    def backward(ctx, dL_drays_a, dL_dxyzs, dL_ddirs, dL_ddeltas, dL_dts, dL_dtotal_samples):
        rays_a, ts = ctx.saved_tensors
        n = ctx.n_samples
        dL_drays_o = dL_dxyzs.reshape(-1, n, 3).sum(1)
        dL_drays_d = (dL_dxyzs * ts[:, None] + dL_ddirs).reshape(-1, n, 3).sum(1)
        return dL_drays_o, dL_drays_d, None, None


def sh_encoding(d):
    """Degree-2 real spherical harmonics of a unit direction in [0, 1]^3 (tcnn convention)."""
    d = d * 2 - 1
    x, y, z = d[:, 0:1], d[:, 1:2], d[:, 2:3]
    return torch.cat([torch.full_like(x, 0.2820948), -0.48860251 * y, 0.48860251 * z, -0.48860251 * x,
                      1.09254843 * x * y, -1.09254843 * y * z, 0.31539157 * (2 * z * z - x * x - y * y),
                      -1.09254843 * x * z, 0.54627421 * (x * x - y * y)], 1)


class NGP(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.register_buffer('xyz_min', -torch.ones(1, 3) * scale)
        self.register_buffer('xyz_max', torch.ones(1, 3) * scale)
        self.xyz_encoder = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 16))
        self.dir_encoder = sh_encoding
        self.rgb_net = nn.Sequential(nn.Linear(9 + 16, 32), nn.ReLU(), nn.Linear(32, 3), nn.Sigmoid())
        self.sigma_act = TruncExp.apply

    def density(self, x, return_feat=False):
        x = (x - self.xyz_min) / (self.xyz_max - self.xyz_min)
        h = self.xyz_encoder(x)
        sigmas = self.sigma_act(h[:, 0])
        if return_feat:
            return sigmas, h
        return sigmas

    def forward(self, x, d):
        sigmas, h = self.density(x, return_feat=True)
        d /= torch.norm(d, dim=-1, keepdim=True)  # <-- IPL001, IPL004
        d = self.dir_encoder((d + 1) / 2)
        rgbs = self.rgb_net(torch.cat([d, h], 1))
        return sigmas, rgbs


def get_rays(directions, c2w):
    """Get ray origin and directions in world coordinate for all pixels in one image."""
    if c2w.ndim == 2:
        # Rotate ray directions from camera coordinate to the world coordinate
        rays_d = directions @ c2w[:, :3].T
    else:
        rays_d = directions[:, None, :] @ c2w[..., :3].transpose(1, 2)
        rays_d = rays_d[:, 0, :]
    # The origin of all rays is the camera origin in world coordinate
    rays_o = c2w[..., 3].expand_as(rays_d)
    return rays_o, rays_d


def volume_render(sigmas, rgbs, deltas, n_rays):
    sigmas = sigmas.reshape(n_rays, -1)
    rgbs = rgbs.reshape(n_rays, -1, 3)
    deltas = deltas.reshape(n_rays, -1)
    alphas = 1 - torch.exp(-sigmas * deltas)
    trans = torch.cumprod(torch.cat([torch.ones_like(alphas[:, :1]), 1 - alphas[:, :-1] + 1e-10], 1), 1)
    weights = alphas * trans
    return (weights[..., None] * rgbs).sum(1), weights.sum(1)


def render_rays_train(model, rays_o, rays_d, n_samples=8):
    hits_t = torch.stack([torch.full((rays_o.shape[0],), NEAR_DISTANCE), torch.full((rays_o.shape[0],), 2.0)], 1)
    rays_a, xyzs, dirs, deltas, ts, total_samples = RayMarcher.apply(rays_o, rays_d, hits_t, n_samples)
    sigmas, rgbs = model(xyzs, dirs)
    rgb, opacity = volume_render(sigmas, rgbs, deltas, rays_o.shape[0])
    return {'rgb': rgb, 'opacity': opacity, 'total_samples': total_samples}


class NeRFSystem(nn.Module):
    def __init__(self, n_images=3, optimize_ext=True):
        super().__init__()
        self.model = NGP(scale=0.5)
        self.optimize_ext = optimize_ext
        poses = torch.eye(3, 4).repeat(n_images, 1, 1)
        poses[:, 2, 3] = -1.5
        self.register_buffer('poses', poses)
        if optimize_ext:
            # only optimize translation for now
            self.register_parameter('dT', nn.Parameter(torch.zeros(n_images, 3)))

    def training_step(self, batch, directions):
        poses = self.poses[batch['img_idxs']]  # (B, 3, 4)
        if self.optimize_ext:
            dT = self.dT[batch['img_idxs']]  # (B, 3)
            poses[..., 3] += dT
        rays_o, rays_d = get_rays(directions[batch['pix_idxs']], poses)
        results = render_rays_train(self.model, rays_o, rays_d)
        loss = ((results['rgb'] - batch['rgb']) ** 2).mean()
        return loss, results


def main():
    system = NeRFSystem()
    uv = torch.rand(64, 2) * 2 - 1
    directions = torch.nn.functional.normalize(torch.cat([uv, torch.ones(64, 1)], 1), dim=-1)
    batch = {'img_idxs': torch.randint(0, 3, (16,)), 'pix_idxs': torch.randint(0, 64, (16,)),
             'rgb': torch.rand(16, 3)}
    loss, results = system.training_step(batch, directions)
    loss.backward()
    return results['rgb'].detach(), system.dT.grad, system.model.rgb_net[0].weight.grad


rgb, dT_grad, rgb_net_grad = main()
