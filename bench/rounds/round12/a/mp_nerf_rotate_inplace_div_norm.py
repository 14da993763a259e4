# label: hazard raises
# why: the rotation matrix is normalised with /= by its own column norms, but torch.norm saved rotate for its backward
# source: https://github.com/EleutherAI/mp_nerf/pull/6
import numpy as np
import torch

torch.manual_seed(0)


def mp_nerf_torch(a, b, c, l, theta, chi):
    if not ((-np.pi <= theta) * (theta <= np.pi)).all().item():
        raise ValueError(f"theta(s) must be in radians and in [-pi, pi]. theta(s) = {theta}")
    ba = b - a
    cb = c - b
    n_plane = torch.cross(ba, cb, dim=-1)
    n_plane_ = torch.cross(n_plane, cb, dim=-1)
    rotate = torch.stack([cb, n_plane_, n_plane], dim=-1)
    rotate /= torch.norm(rotate, dim=-2, keepdim=True)  # <-- IPL001: divides rotate in place after norm saved it
    d = torch.stack([-torch.cos(theta),
                     torch.sin(theta) * torch.cos(chi),
                     torch.sin(theta) * torch.sin(chi)], dim=-1).unsqueeze(-1)
    return c + l.unsqueeze(-1) * torch.matmul(rotate, d).squeeze()


def build_chain(coords, bond_lens, thetas, chis):
    points = [coords[0], coords[1], coords[2]]
    for i in range(bond_lens.shape[1]):
        points.append(mp_nerf_torch(points[-3], points[-2], points[-1], bond_lens[:, i], thetas[:, i], chis[:, i]))
    return torch.stack(points, dim=1)


coords = [torch.randn(4, 3, requires_grad=True) for _ in range(3)]
bond_lens = torch.full((4, 3), 1.5)
thetas = (torch.rand(4, 3) * 2 - 1).requires_grad_()
chis = (torch.rand(4, 3) * 2 - 1).requires_grad_()
chain = build_chain(coords, bond_lens, thetas, chis)
loss = chain.pow(2).mean()
loss.backward()
