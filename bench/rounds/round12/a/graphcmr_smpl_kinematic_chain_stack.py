# label: safe
# why: the fixed forward kinematics appends each joint transform to a Python list and stacks it; the only in-place write goes into a clone (J_) that nothing saved
# source: https://github.com/nkolot/GraphCMR/blob/0d2550605e8105455b3b658db8f2082733f6f283/models/smpl.py
import torch
import torch.nn as nn

torch.manual_seed(0)

NUM_JOINTS = 6
NUM_VERTS = 20


def rodrigues(theta):
    l1norm = torch.norm(theta + 1e-8, p=2, dim=1)
    angle = torch.unsqueeze(l1norm, -1)
    normalized = torch.div(theta, angle)
    angle = angle * 0.5
    v_cos = torch.cos(angle)
    v_sin = torch.sin(angle)
    quat = torch.cat([v_cos, v_sin * normalized], dim=1)
    norm_quat = quat / quat.norm(p=2, dim=1, keepdim=True)
    w, x, y, z = norm_quat[:, 0], norm_quat[:, 1], norm_quat[:, 2], norm_quat[:, 3]
    w2, x2, y2, z2 = w.pow(2), x.pow(2), y.pow(2), z.pow(2)
    wx, wy, wz = w * x, w * y, w * z
    xy, xz, yz = x * y, x * z, y * z
    rotMat = torch.stack([w2 + x2 - y2 - z2, 2 * xy - 2 * wz, 2 * wy + 2 * xz,
                          2 * wz + 2 * xy, w2 - x2 + y2 - z2, 2 * yz - 2 * wx,
                          2 * xz - 2 * wy, 2 * wx + 2 * yz, w2 - x2 - y2 + z2], dim=1)
    return rotMat.view(-1, 3, 3)


class SMPL(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('J_regressor', torch.rand(NUM_JOINTS, NUM_VERTS).softmax(dim=1))
        self.register_buffer('weights', torch.rand(NUM_VERTS, NUM_JOINTS).softmax(dim=1))
        self.register_buffer('v_template', torch.randn(NUM_VERTS, 3))
        self.register_buffer('shapedirs', torch.randn(NUM_VERTS, 3, 10) * 0.01)
        self.register_buffer('parent', torch.LongTensor([0, 0, 1, 2, 1]))

    def forward(self, pose, beta):
        batch_size = pose.shape[0]
        v_template = self.v_template[None, :]
        shapedirs = self.shapedirs.view(-1, 10)[None, :].expand(batch_size, -1, -1)
        beta = beta[:, :, None]
        v_shaped = torch.matmul(shapedirs, beta).view(-1, NUM_VERTS, 3) + v_template
        J = torch.stack([torch.matmul(self.J_regressor, v_shaped[i]) for i in range(batch_size)], dim=0)
        R = rodrigues(pose.view(-1, 3)).view(batch_size, NUM_JOINTS, 3, 3)
        J_ = J.clone()
        J_[:, 1:, :] = J[:, 1:, :] - J[:, self.parent, :]
        G_ = torch.cat([R, J_[:, :, :, None]], dim=-1)
        pad_row = torch.FloatTensor([0, 0, 0, 1]).view(1, 1, 1, 4).expand(batch_size, NUM_JOINTS, -1, -1)
        G_ = torch.cat([G_, pad_row], dim=2)
        G = [G_[:, 0].clone()]
        for i in range(1, NUM_JOINTS):
            G.append(torch.matmul(G[self.parent[i - 1]], G_[:, i, :, :]))
        G = torch.stack(G, dim=1)
        rest = torch.cat([J, torch.zeros(batch_size, NUM_JOINTS, 1)], dim=2).view(batch_size, NUM_JOINTS, 4, 1)
        zeros = torch.zeros(batch_size, NUM_JOINTS, 4, 3)
        rest = torch.cat([zeros, rest], dim=-1)
        rest = torch.matmul(G, rest)
        G = G - rest
        T = torch.matmul(self.weights, G.permute(1, 0, 2, 3).contiguous().view(NUM_JOINTS, -1)).view(
            NUM_VERTS, batch_size, 4, 4).transpose(0, 1)
        rest_shape_h = torch.cat([v_shaped, torch.ones_like(v_shaped)[:, :, [0]]], dim=-1)
        v = torch.matmul(T, rest_shape_h[:, :, :, None])[:, :, :3, 0]
        return v


smpl = SMPL()
pred_theta = (torch.randn(2, NUM_JOINTS * 3) * 0.3).requires_grad_()
pred_beta = torch.randn(2, 10, requires_grad=True)
pred_vertices = smpl(pred_theta, pred_beta)
torch.sum(pred_vertices).backward()
