# label: safe
# why: the fixed IK clones the parent and child transform slices before the matmul, so writing the joint's global transform back into the tensor leaves the saved operands untouched.
# source: https://github.com/DeepMotionEditing/deep-motion-editing/commit/c0f36ddc1f9f029594003c05da91444eeb6c310d
import torch
import torch.nn as nn

torch.manual_seed(0)


class InverseKinematics:
    def __init__(self, rotations, positions, offset, parents, constrains):
        self.rotations = rotations
        self.rotations.requires_grad_(True)
        self.position = positions
        self.position.requires_grad_(True)
        self.parents = parents
        self.offset = offset
        self.constrains = constrains
        self.optimizer = torch.optim.Adam([self.position, self.rotations], lr=1e-3, betas=(0.9, 0.999))
        self.crit = nn.MSELoss()

    def step(self):
        self.optimizer.zero_grad()
        glb = self.forward(self.rotations, self.position, self.offset, quater=True, world=True)
        loss = self.crit(glb, self.constrains)
        loss.backward()
        self.optimizer.step()
        self.glb = glb
        return loss

    def forward(self, rotation, position, offset, quater=True, world=True):
        result = torch.empty(rotation.shape[:-1] + (3,), device=position.device)
        norm = torch.norm(rotation, dim=-1, keepdim=True)
        rotation = rotation / norm
        transform = self.transform_from_quaternion(rotation)
        offset = offset.reshape((-1, 1, offset.shape[-2], offset.shape[-1], 1))
        result[..., 0, :] = position
        for i, pi in enumerate(self.parents):
            if pi == -1:
                assert i == 0
                continue
            result[..., i, :] = torch.matmul(transform[:, pi, :, :], offset[..., i, :, :]).squeeze(-1)
            transform[:, i, :, :] = torch.matmul(transform[:, pi, :, :].clone(), transform[:, i, :, :].clone())
            if world:
                result[..., i, :] += result[..., pi, :]
        return result

    @staticmethod
    def transform_from_quaternion(quater):
        qw, qx, qy, qz = quater[..., 0], quater[..., 1], quater[..., 2], quater[..., 3]
        x2, y2, z2 = qx + qx, qy + qy, qz + qz
        xx, yy, wx = qx * x2, qy * y2, qw * x2
        xy, yz, wy = qx * y2, qy * z2, qw * y2
        xz, zz, wz = qx * z2, qz * z2, qw * z2
        m = torch.empty(quater.shape[:-1] + (3, 3), device=quater.device)
        m[..., 0, 0] = 1.0 - (yy + zz)
        m[..., 0, 1] = xy - wz
        m[..., 0, 2] = xz + wy
        m[..., 1, 0] = xy + wz
        m[..., 1, 1] = 1.0 - (xx + zz)
        m[..., 1, 2] = yz - wx
        m[..., 2, 0] = xz - wy
        m[..., 2, 1] = yz + wx
        m[..., 2, 2] = 1.0 - (xx + yy)
        return m


T, J = 3, 4
parents = [-1, 0, 1, 1]
rotations = torch.randn(T, J, 4)
positions = torch.randn(T, 3)
offset = torch.randn(J, 3)
constrains = torch.randn(T, J, 3)
ik = InverseKinematics(rotations, positions, offset, parents, constrains)
loss = ik.step()
