# label: hazard raises
# why: the chained joint transform is written back into a slice of `transform` while matmul saved views of that same tensor for backward, so backward sees a bumped version counter
# source: https://github.com/DeepMotionEditing/deep-motion-editing/commit/585bec41ee4f8ddb3bc5e2de4c7f8b3b84641f28 (bugfix: #166)
import math
import torch

torch.manual_seed(0)


class Args:
    fk_world = True
    pos_repr = '3d'
    rotation = 'quaternion'


class ForwardKinematics:
    def __init__(self, args, edges):
        self.topology = [-1] * (len(edges) + 1)
        self.rotation_map = []
        for i, edge in enumerate(edges):
            self.topology[edge[1]] = edge[0]
            self.rotation_map.append(edge[1])
        self.world = args.fk_world
        self.pos_repr = args.pos_repr
        self.quater = args.rotation == 'quaternion'

    def forward_from_raw(self, raw, offset, world=None, quater=None):
        if world is None:
            world = self.world
        if quater is None:
            quater = self.quater
        position = raw[:, -3:, :]
        rotation = raw[:, :-3, :]
        rotation = rotation.reshape((rotation.shape[0], -1, 4, rotation.shape[-1]))
        identity = torch.tensor((1, 0, 0, 0), dtype=torch.float, device=raw.device)
        identity = identity.reshape((1, 1, -1, 1))
        new_shape = list(rotation.shape)
        new_shape[1] += 1
        new_shape[2] = 1
        rotation_final = identity.repeat(new_shape)
        for i, j in enumerate(self.rotation_map):
            rotation_final[:, j, :, :] = rotation[:, i, :, :]
        return self.forward(rotation_final, position, offset, world=world, quater=quater)

    def forward(self, rotation, position, offset, order='xyz', quater=False, world=True):
        rotation = rotation.permute(0, 3, 1, 2)
        position = position.permute(0, 2, 1)
        result = torch.empty(rotation.shape[:-1] + (3,), device=position.device)

        norm = torch.norm(rotation, dim=-1, keepdim=True)
        rotation = rotation / norm

        transform = self.transform_from_quaternion(rotation)

        offset = offset.reshape((-1, 1, offset.shape[-2], offset.shape[-1], 1))

        result[..., 0, :] = position
        for i, pi in enumerate(self.topology):
            if pi == -1:
                assert i == 0
                continue

            chained = torch.matmul(transform[..., pi, :, :], transform[..., i, :, :])
            transform[..., i, :, :] = chained  # <-- IPL001: overwrites a slice of `transform` that earlier matmuls saved for backward
            result[..., i, :] = torch.matmul(transform[..., i, :, :], offset[..., i, :, :]).squeeze()
            if world:
                result[..., i, :] += result[..., pi, :]
        return result

    @staticmethod
    def transform_from_quaternion(quater):
        qw = quater[..., 0]
        qx = quater[..., 1]
        qy = quater[..., 2]
        qz = quater[..., 3]

        x2 = qx + qx
        y2 = qy + qy
        z2 = qz + qz
        xx = qx * x2
        yy = qy * y2
        wx = qw * x2
        xy = qx * y2
        yz = qy * z2
        wy = qw * y2
        xz = qx * z2
        zz = qz * z2
        wz = qw * z2

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


edges = [(0, 1), (1, 2), (2, 3), (0, 4)]
fk = ForwardKinematics(Args(), edges)

batch, frames = 2, 3
raw = torch.randn(batch, len(edges) * 4 + 3, frames, requires_grad=True)
offset = torch.randn(batch, len(edges) + 1, 3)

pos = fk.forward_from_raw(raw, offset)
gt = torch.randn_like(pos)
loss = torch.nn.functional.mse_loss(pos, gt)
loss.backward()
