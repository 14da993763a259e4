# label: safe
# why: the suggested fix adds the epsilon out of place (theta = theta + 1.0e-10), leaving the saved norm output untouched
# source: https://github.com/dogyoonlee/DP-NeRF/issues/2
import torch
import torch.nn as nn

torch.manual_seed(0)


class Rigid_body:
    def skew(self, w):
        zeros = torch.zeros_like(w[..., 0])
        return torch.stack([
            torch.stack([zeros, -w[..., 2], w[..., 1]], dim=-1),
            torch.stack([w[..., 2], zeros, -w[..., 0]], dim=-1),
            torch.stack([-w[..., 1], w[..., 0], zeros], dim=-1),
        ], dim=-2)

    def exp_so3(self, w, theta):
        W = self.skew(w)
        eye = torch.eye(3).expand_as(W)
        th = theta[..., None, None]
        return eye + torch.sin(th) * W + (1.0 - torch.cos(th)) * (W @ W)

    def exp_se3(self, screw_axis, theta):
        w, v = screw_axis[..., :3], screw_axis[..., 3:]
        W = self.skew(w)
        th = theta[..., None, None]
        R = self.exp_so3(w, theta)
        eye = torch.eye(3).expand_as(W)
        p = (th * eye + (1.0 - torch.cos(th)) * W + (th - torch.sin(th)) * (W @ W)) @ v[..., None]
        top = torch.cat([R, p], dim=-1)
        bottom = torch.tensor([0.0, 0.0, 0.0, 1.0]).expand(top.shape[:-2] + (1, 4))
        return torch.cat([top, bottom], dim=-2)

    def to_homogenous(self, v):
        return torch.cat([v, torch.ones_like(v[..., :1])], dim=-1)


class SE3Field(nn.Module):
    def __init__(self):
        super(SE3Field, self).__init__()
        self.rigid_body = Rigid_body()

    def warp(self, pts, rot, trans):
        theta = torch.linalg.norm(rot, axis=-1)  # N_rays*N_samples
        theta = theta + 1.0e-10
        rot = rot / theta.unsqueeze(-1)
        trans = trans / theta.unsqueeze(-1)
        screw_axis = torch.cat([rot, trans], axis=-1)
        transform = self.rigid_body.exp_se3(screw_axis, theta)
        warped_pts = torch.matmul(transform, self.rigid_body.to_homogenous(pts)[..., None]).squeeze(-1)
        return warped_pts[..., :3]


class RigidBlurringModel(nn.Module):
    def __init__(self, num_img=2, num_motion=3):
        super().__init__()
        self.num_motion = num_motion
        self.se_r = nn.Embedding(num_img, 3 * num_motion)
        self.se_v = nn.Embedding(num_img, 3 * num_motion)
        nn.init.normal_(self.se_r.weight, std=0.1)
        nn.init.normal_(self.se_v.weight, std=0.1)
        self.se3_field = SE3Field()

    def forward(self, pts, img_idx):
        rot = self.se_r(img_idx).reshape(-1, 3)
        trans = self.se_v(img_idx).reshape(-1, 3)
        pts = pts.repeat_interleave(self.num_motion, dim=0)
        return self.se3_field.warp(pts, rot, trans)


model = RigidBlurringModel()
pts = torch.randn(4, 3)
img_idx = torch.tensor([0, 1, 1, 0])
warped = model(pts, img_idx)
loss = (warped - pts.repeat_interleave(3, dim=0)).pow(2).mean()
loss.backward()
