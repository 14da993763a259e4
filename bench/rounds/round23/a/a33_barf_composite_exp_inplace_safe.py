# label: safe
# why: composite() calls exp_() in place on the freshly negated sigma_delta and on the freshly negated cumulative sum; neg saves nothing for backward and exp_ keeps its own result as the saved output, so alpha, T and the rendered rgb/depth have exact gradients.
# source: https://github.com/chenhsuanlin/bundle-adjusting-NeRF/blob/99218cc543eca5453a7c4829638ccffd0a7ad2f5/model/nerf.py (NeRF.composite)
import torch
import torch.nn.functional as torch_F
from types import SimpleNamespace as edict

torch.manual_seed(0)


class NeRF(torch.nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.mlp_feat = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(), torch.nn.Linear(32, 33))
        self.mlp_rgb = torch.nn.Linear(32 + 3, 3)

    def forward(self, opt, points_3D, ray_unit=None, mode=None):
        feat = self.mlp_feat(points_3D)
        density = feat[..., 0]
        if opt.nerf.density_noise_reg and mode == "train":
            density += torch.randn_like(density) * opt.nerf.density_noise_reg
        density_activ = getattr(torch_F, opt.arch.density_activ)  # relu_,abs_,sigmoid_,exp_....
        density = density_activ(density)
        feat = feat[..., 1:]
        if opt.nerf.view_dep:
            feat = torch.cat([feat, ray_unit], dim=-1)
        rgb = self.mlp_rgb(feat).sigmoid_()  # [B,...,3]
        return rgb, density

    def forward_samples(self, opt, center, ray, depth_samples, mode=None):
        points_3D_samples = center[..., None, :] + ray[..., None, :] * depth_samples  # [B,HW,N,3]
        ray_unit = torch_F.normalize(ray, dim=-1)  # [B,HW,3]
        ray_unit_samples = ray_unit[..., None, :].expand_as(points_3D_samples)  # [B,HW,N,3]
        rgb_samples, density_samples = self.forward(opt, points_3D_samples, ray_unit=ray_unit_samples, mode=mode)
        return rgb_samples, density_samples

    def composite(self, opt, ray, rgb_samples, density_samples, depth_samples):
        ray_length = ray.norm(dim=-1, keepdim=True)  # [B,HW,1]
        # volume rendering: compute probability (using quadrature)
        depth_intv_samples = depth_samples[..., 1:, 0] - depth_samples[..., :-1, 0]  # [B,HW,N-1]
        depth_intv_samples = torch.cat([depth_intv_samples, torch.empty_like(depth_intv_samples[..., :1]).fill_(1e10)], dim=2)  # [B,HW,N]
        dist_samples = depth_intv_samples * ray_length  # [B,HW,N]
        sigma_delta = density_samples * dist_samples  # [B,HW,N]
        alpha = 1 - (-sigma_delta).exp_()  # [B,HW,N]
        T = (-torch.cat([torch.zeros_like(sigma_delta[..., :1]), sigma_delta[..., :-1]], dim=2).cumsum(dim=2)).exp_()  # [B,HW,N]
        prob = (T * alpha)[..., None]  # [B,HW,N,1]
        # integrate RGB and depth weighted by probability
        depth = (depth_samples * prob).sum(dim=2)  # [B,HW,1]
        rgb = (rgb_samples * prob).sum(dim=2)  # [B,HW,3]
        opacity = prob.sum(dim=2)  # [B,HW,1]
        if opt.nerf.setbg_opaque:
            rgb = rgb + opt.data.bgcolor * (1 - opacity)
        return rgb, depth, opacity, prob  # [B,HW,K]


def main():
    opt = edict(
        nerf=edict(density_noise_reg=None, view_dep=True, setbg_opaque=True, depth=edict(range=(2.0, 6.0))),
        arch=edict(density_activ="softplus"),
        data=edict(bgcolor=1.0),
    )
    nerf = NeRF(opt)
    B, HW, N = 2, 16, 8
    center = torch.zeros(B, HW, 3)
    ray = torch.randn(B, HW, 3)
    depth_min, depth_max = opt.nerf.depth.range
    depth_samples = torch.linspace(depth_min, depth_max, N)[None, None, :, None].expand(B, HW, N, 1)
    rgb_samples, density_samples = nerf.forward_samples(opt, center, ray, depth_samples, mode="train")
    rgb, depth, opacity, prob = nerf.composite(opt, ray, rgb_samples, density_samples, depth_samples)
    image_gt = torch.rand(B, HW, 3)
    loss = ((rgb - image_gt) ** 2).mean()
    loss.backward()
    return loss.detach(), nerf.mlp_feat[0].weight.grad


loss, grad = main()
