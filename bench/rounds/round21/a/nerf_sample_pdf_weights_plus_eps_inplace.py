# label: hazard raises
# why: render_rays passes weights[...,1:-1], a view of the coarse weights, to sample_pdf, which does weights += 1e-5 in place; the coarse rgb_map/depth_map products saved weights for backward, so the loss on the coarse map fails with a version error.
# source: https://github.com/yenchenlin/nerf-pytorch/commit/811482c62f9c375dc7dae08f473a4f3220e64fc6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sample_pdf(bins, weights, N_samples, det=False):
    # Get pdf
    weights += 1e-5  # prevent nans  # <-- IPL001, IPL004
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)

    if det:
        u = torch.linspace(0., 1., steps=N_samples)
        u = u.expand(list(cdf.shape[:-1]) + [N_samples]).contiguous()
    else:
        u = torch.rand(list(cdf.shape[:-1]) + [N_samples])

    inds = torch.searchsorted(cdf.detach(), u, right=True)
    below = torch.max(torch.zeros_like(inds - 1), inds - 1)
    above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
    inds_g = torch.stack([below, above], -1)

    matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
    cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
    bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)

    denom = (cdf_g[..., 1] - cdf_g[..., 0])
    denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
    t = (u - cdf_g[..., 0]) / denom
    samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])
    return samples


def raw2outputs(raw, z_vals, rays_d):
    raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - torch.exp(-act_fn(raw) * dists)
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)
    dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
    rgb = torch.sigmoid(raw[..., :3])
    alpha = raw2alpha(raw[..., 3], dists)
    weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
    rgb_map = torch.sum(weights[..., None] * rgb, -2)
    depth_map = torch.sum(weights * z_vals, -1)
    acc_map = torch.sum(weights, -1)
    return rgb_map, acc_map, weights, depth_map


def render_rays(ray_batch, network_fn, network_fine, N_samples, N_importance, perturb=0.):
    N_rays = ray_batch.shape[0]
    rays_o, rays_d = ray_batch[:, 0:3], ray_batch[:, 3:6]
    bounds = torch.reshape(ray_batch[..., 6:8], [-1, 1, 2])
    near, far = bounds[..., 0], bounds[..., 1]
    t_vals = torch.linspace(0., 1., steps=N_samples)
    z_vals = near * (1. - t_vals) + far * (t_vals)
    z_vals = z_vals.expand([N_rays, N_samples])

    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = network_fn(pts)
    rgb_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d)
    rgb_map_0 = rgb_map

    z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
    z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], N_importance, det=(perturb == 0.))
    z_samples = z_samples.detach()

    z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    raw = network_fine(pts)
    rgb_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d)
    return {'rgb_map': rgb_map, 'rgb0': rgb_map_0, 'depth_map': depth_map}


def main():
    network_fn = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))
    network_fine = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 4))
    N_rays = 8
    rays_o = torch.zeros(N_rays, 3)
    rays_d = F.normalize(torch.randn(N_rays, 3), dim=-1)
    near, far = torch.full((N_rays, 1), 2.0), torch.full((N_rays, 1), 6.0)
    ray_batch = torch.cat([rays_o, rays_d, near, far], -1)
    target_s = torch.rand(N_rays, 3)

    ret = render_rays(ray_batch, network_fn, network_fine, N_samples=16, N_importance=8)
    img_loss = F.mse_loss(ret['rgb_map'], target_s)
    img_loss0 = F.mse_loss(ret['rgb0'], target_s)
    loss = img_loss + img_loss0
    loss.backward()
    return network_fn[0].weight.grad, network_fine[0].weight.grad, ret['depth_map'].detach()


coarse_grad, fine_grad, depth = main()
