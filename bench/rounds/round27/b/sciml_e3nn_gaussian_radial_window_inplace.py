# label: hazard raises
# why: gaussian_radial_function normalises the radial window in place, but window is the output of torch.exp, which ExpBackward saved for backward, so differentiating the point-convolution energy w.r.t. the atom positions fails.
# source: https://github.com/e3nn/e3nn/commit/b1e16af749f42c2f4774f5abd3bc173d88cef60d ("replace window in place operation", pre-fix se3cnn/point_kernel.py)
import math

import torch

torch.manual_seed(0)


def angular_function(difference_mat, eps=1e-8):
    # l=0 and l=1 angular filters: constant and unit direction components
    r = difference_mat.norm(2, -1, keepdim=True)
    unit = difference_mat / (r + eps)
    Y0 = torch.ones_like(r).permute(2, 0, 1)             # [1, N, M]
    Y1 = unit.permute(2, 0, 1)                             # [3, N, M]
    angular_filters = [Y0, Y1]
    return angular_filters, difference_mat.norm(2, -1), [0, 1]


def gaussian_radial_function(solutions, r_field, order_irreps, radii, sigma=.6, J_max=10):
    basis = []
    for r in radii:
        window = torch.exp(-.5 * ((r_field - r) / sigma)**2)
        window /= (math.sqrt(2 * math.pi) * sigma)  # <-- IPL001

        for sol, J in zip(solutions, order_irreps):
            if J <= J_max:
                x = sol.to(window.device) * window  # [m, N, M]
                basis.append(x)

    return torch.cat(basis, dim=0) if len(basis) > 0 else None


class SE3PointKernel(torch.nn.Module):
    def __init__(self, n_in, n_out, radii, radial_function=gaussian_radial_function):
        super().__init__()
        self.radial_function = radial_function
        self.register_buffer('radii', radii)
        n_basis = len(radii) * (1 + 3)
        self.weight = torch.nn.Parameter(torch.randn(n_out, n_in, n_basis) / n_basis)

    def forward(self, difference_mat):
        solutions, r_field, order_irreps = angular_function(difference_mat)
        basis = self.radial_function(solutions, r_field, order_irreps, self.radii)
        return torch.einsum('oib,bnm->oinm', self.weight, basis)


class SE3PointConvolution(torch.nn.Module):
    def __init__(self, n_in, n_out, radii):
        super().__init__()
        self.kernel = SE3PointKernel(n_in, n_out, radii)

    def forward(self, features, geometry):
        difference_mat = geometry.unsqueeze(1) - geometry.unsqueeze(0)  # [N, M, 3]
        k = self.kernel(difference_mat)
        return torch.einsum('oinm,mi->no', k, features)


def main():
    geometry = torch.randn(5, 3, requires_grad=True)
    features = torch.randn(5, 2)
    conv = SE3PointConvolution(n_in=2, n_out=4, radii=torch.linspace(0.5, 2.0, 3))
    readout = torch.nn.Linear(4, 1)
    energy = readout(torch.tanh(conv(features, geometry))).sum()
    forces = -torch.autograd.grad(energy, geometry)[0]
    return energy.detach(), forces


energy, forces = main()
