# label: safe
# why: the fixed contract() writes the contracted values into x_new = x.clone(), leaving the x saved by torch.linalg.norm untouched; the many in-place += / -= in BARFOptimizer.exp_map only fill the freshly allocated ret matrix, which no op saved.
# source: https://github.com/nerfstudio-project/nerfstudio/commit/cc0ae3dc33c1d36323c96ccc8426e70e783c8b0a (PR #610 post-fix SceneContraction and BARFOptimizer.exp_map)
import torch
from torch import nn

torch.manual_seed(0)


class BARFOptimizer(nn.Module):
    """Bundle-Adjusting NeRF (BARF) Pose Optimization"""

    def __init__(self, num_cameras):
        super().__init__()
        self.num_cameras = num_cameras
        self.pose_adjustment = nn.Embedding(self.num_cameras, 6)
        nn.init.normal_(self.pose_adjustment.weight, std=0.05)

    @classmethod
    def exp_map(cls, tangent_vector):
        tangent_vector_lin = tangent_vector[:, :3].view(-1, 3, 1)
        tangent_vector_ang = tangent_vector[:, 3:].view(-1, 3, 1)
        theta = torch.linalg.norm(tangent_vector_ang, dim=1).unsqueeze(1)
        theta2 = theta**2
        near_zero = theta < 1e-2
        non_zero = torch.ones(1, dtype=tangent_vector.dtype, device=tangent_vector.device)
        theta_nz = torch.where(near_zero, non_zero, theta)
        theta2_nz = torch.where(near_zero, non_zero, theta2)
        sine = theta.sin()
        cosine = torch.where(near_zero, 8 / (4 + theta2) - 1, theta.cos())
        sine_by_theta = torch.where(near_zero, 0.5 * cosine + 0.5, sine / theta_nz)
        one_minus_cosine_by_theta2 = torch.where(near_zero, 0.5 * sine_by_theta, (1 - cosine) / theta2_nz)
        ret = torch.zeros(tangent_vector.shape[0], 3, 4).to(dtype=tangent_vector.dtype, device=tangent_vector.device)
        ret[:, :3, :3] = one_minus_cosine_by_theta2 * tangent_vector_ang @ tangent_vector_ang.transpose(1, 2)
        ret[:, 0, 0] += cosine.view(-1)
        ret[:, 1, 1] += cosine.view(-1)
        ret[:, 2, 2] += cosine.view(-1)
        temp = sine_by_theta.view(-1, 1) * tangent_vector_ang.view(-1, 3)
        ret[:, 0, 1] -= temp[:, 2]
        ret[:, 1, 0] += temp[:, 2]
        ret[:, 0, 2] += temp[:, 1]
        ret[:, 2, 0] -= temp[:, 1]
        ret[:, 1, 2] -= temp[:, 0]
        ret[:, 2, 1] += temp[:, 0]
        ret[:, :, 3:] = sine_by_theta * tangent_vector_lin
        return ret

    def forward(self, indices):
        return self.exp_map(self.pose_adjustment(indices))


class SceneContraction(nn.Module):
    def __init__(self, order=None):
        super().__init__()
        self.order = order

    def forward(self, positions):
        def contract(x):
            mag = torch.linalg.norm(x, ord=self.order, dim=-1)
            mask = mag >= 1
            x_new = x.clone()
            x_new[mask] = (2 - (1 / mag[mask][..., None])) * (x[mask] / mag[mask][..., None])

            return x_new

        return contract(positions)


def main():
    camera_optimizer = BARFOptimizer(num_cameras=2)
    spatial_distortion = SceneContraction()
    mlp_base = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 4))

    camera_indices = torch.tensor([0, 1, 1, 0])
    c2w = torch.eye(4)[:3].expand(4, 3, 4)
    camera_opt_to_camera = camera_optimizer(camera_indices)
    origins = c2w[..., 3] + camera_opt_to_camera[..., 3]
    directions = nn.functional.normalize(torch.randn(4, 3), dim=-1)
    directions = (camera_opt_to_camera[..., :3] @ directions[..., None]).squeeze(-1)
    t = torch.linspace(0.5, 6.0, 8)
    positions = origins[:, None, :] + directions[:, None, :] * t[None, :, None]

    positions = spatial_distortion(positions)
    positions = (positions + 2.0) / 4.0
    density = mlp_base(positions.view(-1, 3))
    loss = density.pow(2).mean()
    loss.backward()
    return loss.detach(), camera_optimizer.pose_adjustment.weight.grad


loss, pose_grad = main()
