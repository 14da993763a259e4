# label: hazard raises
# why: SE3.exp slices rho = xi[:, :3] out of the pose leaf xi (requires_grad) and calls rho.unsqueeze_(dim=2), an in-place op on a view of a leaf that requires grad, so iFusion's pose optimization dies on its first step.
# source: https://github.com/chinhsuanwu/ifusion/issues/4 (liegroups/torch/se3.py SE3.exp, utiasSTARS/liegroups@071fb5f)
import torch

torch.manual_seed(0)


class SO3:
    dim = 3
    dof = 3

    def __init__(self, mat):
        self.mat = mat

    @classmethod
    def wedge(cls, phi):
        if phi.dim() < 2:
            phi = phi.unsqueeze(dim=0)
        Phi = phi.new_zeros(phi.shape[0], cls.dim, cls.dim)
        Phi[:, 0, 1] = -phi[:, 2]
        Phi[:, 1, 0] = phi[:, 2]
        Phi[:, 0, 2] = phi[:, 1]
        Phi[:, 2, 0] = -phi[:, 1]
        Phi[:, 1, 2] = -phi[:, 0]
        Phi[:, 2, 1] = phi[:, 0]
        return Phi.squeeze_()

    @classmethod
    def left_jacobian(cls, phi):
        if phi.dim() < 2:
            phi = phi.unsqueeze(dim=0)
        # near phi == 0: first order Taylor expansion
        jac = torch.eye(cls.dim).expand(phi.shape[0], cls.dim, cls.dim) + 0.5 * cls.wedge(phi)
        return jac.squeeze_()

    @classmethod
    def exp(cls, phi):
        if phi.dim() < 2:
            phi = phi.unsqueeze(dim=0)
        mat = torch.eye(cls.dim).expand(phi.shape[0], cls.dim, cls.dim) + cls.wedge(phi)
        return cls(mat.squeeze_())

    def as_matrix(self):
        return self.mat


class SE3:
    dim = 4
    dof = 6
    RotationType = SO3

    def __init__(self, rot, trans):
        self.rot = rot
        self.trans = trans

    @classmethod
    def exp(cls, xi):
        if xi.dim() < 2:
            xi = xi.unsqueeze(dim=0)

        rho = xi[:, :3]
        phi = xi[:, 3:]

        rot = cls.RotationType.exp(phi)
        rot_jac = cls.RotationType.left_jacobian(phi)

        if rot_jac.dim() < 3:
            rot_jac.unsqueeze_(dim=0)
        if rho.dim() < 3:
            rho.unsqueeze_(dim=2)  # <-- IPL003

        trans = torch.bmm(rot_jac, rho).squeeze_()
        return cls(rot, trans)

    def as_matrix(self):
        R = self.rot.as_matrix()
        bottom = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
        return torch.cat([torch.cat([R, self.trans.unsqueeze(1)], dim=1), bottom], dim=0)


def mat2latlon(T):
    if len(T.shape) == 2:
        T = T.unsqueeze(0)
    xyz = T[:, :3, 3]
    radius = torch.norm(xyz, dim=1, keepdim=True)
    xyz = xyz / radius
    theta = -torch.asin(xyz[:, 1])
    azimuth = torch.atan2(xyz[:, 0], xyz[:, 2])
    return torch.stack((theta, azimuth)).T


def optimize_pose_loop(T, target, max_step=2):
    # init xi in se(3)
    xi = torch.randn(6) * 1e-6
    xi.requires_grad_()
    optimizer = torch.optim.Adam([xi], lr=1e-2)
    for step in range(max_step):
        optimizer.zero_grad()
        T_delta = SE3.exp(xi).as_matrix()
        T_ = T @ T_delta
        latlon = mat2latlon(T_).squeeze()
        loss = ((latlon - target) ** 2).sum()
        loss.backward()
        optimizer.step()
    return loss.detach(), xi.detach()


def main():
    T = torch.eye(4)
    T[:3, 3] = torch.tensor([0.3, 0.2, 1.0])
    target = torch.tensor([0.1, 0.4])
    return optimize_pose_loop(T, target)


loss, xi = main()
