# label: hazard raises
# why: gaussian_radial_function normalizes the radial window with `window /= ...` right after `window = torch.exp(...)`; ExpBackward saved that output, so once r_field depends on point positions that require grad, backward raises.
# source: https://github.com/e3nn/e3nn/commit/bab7886d7374a775802bee7d76254d74401aa177
import math

import torch

torch.manual_seed(0)


def angular_function(diff, order_irreps):
    # real spherical-harmonic-like angular parts up to l=1: [m_out, m_in, N]
    unit = diff / diff.norm(dim=-1, keepdim=True).clamp_min(1e-9)
    solutions = []
    for J in order_irreps:
        if J == 0:
            solutions.append(torch.ones(1, 1, diff.shape[0]))
        else:
            solutions.append(unit.t().unsqueeze(1))  # [3, 1, N]
    return solutions


def gaussian_radial_function(solutions, r_field, order_irreps, radii, sigma=.6, J_max=10):
    '''
    :param radii: radii of the shells, sets mean of the radial gaussians
    :param sigma: width of the shells, corresponds to standard deviation of
        radial gaussians
    '''
    basis = []
    for r in radii:
        window = torch.exp(-.5 * ((r_field - r) / sigma) ** 2)
        window /= (math.sqrt(2 * math.pi) * sigma)  # <-- IPL001

        for sol, J in zip(solutions, order_irreps):
            if J <= J_max:
                x = sol.to(window.device) * window  # [m_out, m_in, N]
                basis.append(x)
    return basis


class SE3PointKernel(torch.nn.Module):
    def __init__(self, order_irreps=(0, 1), radii=(0.5, 1.0, 1.5)):
        super().__init__()
        self.order_irreps = order_irreps
        self.radii = radii
        n_basis = len(order_irreps) * len(radii)
        self.weight = torch.nn.Parameter(torch.randn(n_basis) / math.sqrt(n_basis))

    def forward(self, positions, features):
        diff = positions.unsqueeze(1) - positions.unsqueeze(0)  # [n, n, 3]
        diff = diff.reshape(-1, 3)
        r_field = diff.norm(dim=-1)
        solutions = angular_function(diff, self.order_irreps)
        basis = gaussian_radial_function(solutions, r_field, self.order_irreps, self.radii)
        out = 0
        for w, b in zip(self.weight, basis):
            out = out + w * b.sum(dim=(0, 1))
        n = positions.shape[0]
        return out.view(n, n) @ features


def main():
    positions = torch.randn(6, 3, requires_grad=True)
    features = torch.randn(6, 4)
    kernel = SE3PointKernel()
    energy = kernel(positions, features).pow(2).sum()
    energy.backward()
    return energy.detach(), positions.grad, kernel.weight.grad


energy, forces, weight_grad = main()
