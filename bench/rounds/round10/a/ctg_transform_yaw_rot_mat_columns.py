# label: safe
# why: the column-normalising writes go into rot_mat, a clone of the constant agent-to-world matrices, while gradients flow only through the predicted yaw
# source: https://github.com/NVlabs/CTG/blob/5a10adf65b3bdf18ac2e4413711a9a2129d8aaa5/tbsim/utils/geometry_utils.py (see https://github.com/NVlabs/CTG/issues/3)
import math

import torch

torch.manual_seed(0)


def transform_yaw(yaw, tf_mat):
    '''
    - yaw : (B)
    - tf_mat : (B, 3, 3) matrix to transform yaw by
    '''
    yaw = yaw[:, None]
    hvec = torch.cat([torch.cos(yaw), torch.sin(yaw)], dim=-1)  # B x 2
    rot_mat = tf_mat[:, :2, :2].clone()  # B x 2 x 2
    # rot part of mat may have scaling too
    rot_mat[:, :, 0] = rot_mat[:, :, 0] / torch.norm(rot_mat[:, :, 0], dim=-1, keepdim=True)
    rot_mat[:, :, 1] = rot_mat[:, :, 1] / torch.norm(rot_mat[:, :, 1], dim=-1, keepdim=True)
    rot_hvec = torch.matmul(rot_mat, hvec.unsqueeze(-1))[:, :, 0]  # B x 2
    tf_yaw = torch.atan2(rot_hvec[:, 1], rot_hvec[:, 0])
    return tf_yaw


def transform_matrices(angles, translations):
    cos_vals = torch.cos(angles)
    sin_vals = torch.sin(angles)
    last_rows = torch.tensor([[0.0, 0.0, 1.0]], dtype=angles.dtype).expand((angles.shape[0], -1))
    return torch.stack(
        [
            torch.stack([cos_vals, -sin_vals, translations[:, 0]], dim=-1),
            torch.stack([sin_vals, cos_vals, translations[:, 1]], dim=-1),
            last_rows,
        ],
        dim=-2,
    )


class YawGuidance:
    """guidance loss that pushes the transformed predicted heading toward a target lane heading"""

    def __init__(self, target_yaw):
        self.target_yaw = target_yaw

    def __call__(self, yaw_pred, world_from_agent):
        world_yaw = transform_yaw(yaw_pred, world_from_agent)
        diff = torch.atan2(torch.sin(world_yaw - self.target_yaw), torch.cos(world_yaw - self.target_yaw))
        return (diff ** 2).mean()


B = 4
agent_yaw = torch.rand(B) * 2 * math.pi
agent_pos = torch.randn(B, 2) * 10
world_from_agent = transform_matrices(agent_yaw, agent_pos) * torch.tensor([1.5, 1.5, 1.0]).view(1, 1, 3)
yaw_pred = (torch.randn(B) * 0.3).requires_grad_()
guide = YawGuidance(target_yaw=torch.full((B,), 0.5))
guide_loss = guide(yaw_pred, world_from_agent)
guide_loss.backward()
