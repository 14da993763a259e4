# label: safe
# why: SplaTAM builds rotation matrices by writing slices of a fresh zeros tensor, and after backward accumulates the means2D gradient norm into a stats buffer with += on an index; neither write touches a tensor that autograd saved, so the render gradients are unaffected.
# source: https://github.com/spla-tam/SplaTAM/issues/38
import torch

torch.manual_seed(0)


def build_rotation(q):
    norm = torch.sqrt(q[:, 0] * q[:, 0] + q[:, 1] * q[:, 1] + q[:, 2] * q[:, 2] + q[:, 3] * q[:, 3])
    q = q / norm[:, None]
    rot = torch.zeros((q.size(0), 3, 3))
    r = q[:, 0]
    x = q[:, 1]
    y = q[:, 2]
    z = q[:, 3]
    rot[:, 0, 0] = 1 - 2 * (y * y + z * z)
    rot[:, 0, 1] = 2 * (x * y - r * z)
    rot[:, 0, 2] = 2 * (x * z + r * y)
    rot[:, 1, 0] = 2 * (x * y + r * z)
    rot[:, 1, 1] = 1 - 2 * (x * x + z * z)
    rot[:, 1, 2] = 2 * (y * z - r * x)
    rot[:, 2, 0] = 2 * (x * z - r * y)
    rot[:, 2, 1] = 2 * (y * z + r * x)
    rot[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return rot


def accumulate_mean2d_gradient(variables):
    variables['means2D_gradient_accum'][variables['seen']] += torch.norm(
        variables['means2D'].grad[variables['seen'], :2], dim=-1)
    variables['denom'][variables['seen']] += 1
    return variables


def render(params, variables, w2c):
    """Toy splatting: project rotated Gaussian centres and blend their colours."""
    rots = build_rotation(params['unnorm_rotations'])
    scales = torch.exp(params['log_scales'])
    cov_diag = torch.einsum('nij,nj->ni', rots, scales.expand(-1, 3) if scales.shape[1] == 1 else scales)
    pts_cam = params['means3D'] @ w2c[:3, :3].T + w2c[:3, 3]
    means2D = pts_cam[:, :2] / pts_cam[:, 2:3].clamp(min=0.1)
    means2D.retain_grad()
    variables['means2D'] = means2D
    opac = torch.sigmoid(params['logit_opacities'])
    weights = opac * torch.exp(-(means2D ** 2).sum(-1, keepdim=True) / (1 + cov_diag.abs().sum(-1, keepdim=True)))
    color = (weights * params['rgb_colors']).sum(0) / (weights.sum(0) + 1e-6)
    variables['seen'] = (pts_cam[:, 2] > 0.1).detach()
    return color


def main():
    n = 12
    params = {
        'means3D': (torch.randn(n, 3) + torch.tensor([0.0, 0.0, 3.0])).requires_grad_(),
        'rgb_colors': torch.rand(n, 3).requires_grad_(),
        'unnorm_rotations': torch.randn(n, 4).requires_grad_(),
        'logit_opacities': torch.zeros(n, 1).requires_grad_(),
        'log_scales': torch.full((n, 1), -2.0).requires_grad_(),
    }
    variables = {
        'means2D_gradient_accum': torch.zeros(n),
        'denom': torch.zeros(n),
    }
    w2c = torch.eye(4)
    gt_color = torch.tensor([0.2, 0.5, 0.7])
    optimizer = torch.optim.Adam(list(params.values()), lr=1e-2)
    losses = []
    for it in range(3):
        color = render(params, variables, w2c)
        loss = (color - gt_color).abs().sum()
        loss.backward()
        with torch.no_grad():
            variables = accumulate_mean2d_gradient(variables)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    return torch.stack(losses), variables['means2D_gradient_accum'], variables['denom'], params['means3D'].detach()


losses, grad_accum, denom, means3D = main()
