# label: safe
# why: the gradient helper makes the probe tensor require grad and detaches it in place again (detach_), so the finite-difference steps write a tensor that no longer requires grad.
# source: dxtb 0.4.0, dxtb/_src/calculators/types/numerical.py (hessian_numerical), untuned run 18
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))


def energy(pos):
    return model(pos).sum()


def hessian_numerical(positions, step_size=1e-3):
    def _gradfcn(pos):
        with torch.enable_grad():
            pos.requires_grad_(True)
            result = torch.autograd.grad(energy(pos), pos)[0]
            pos.detach_()
        return result.detach()

    _positions = positions.clone().detach()
    rows = []
    for j in range(3):
        _positions[..., j] += step_size
        gr = _gradfcn(_positions)
        _positions[..., j] -= 2 * step_size
        gl = _gradfcn(_positions)
        _positions[..., j] += step_size
        rows.append(0.5 * (gr - gl) / step_size)
    return torch.stack(rows)


def probe_without_grad(positions):
    probe = positions.clone()
    probe.requires_grad_(True)
    first = torch.autograd.grad(energy(probe), probe)[0]
    probe.requires_grad_(False)
    probe[0, 0] += 1e-3
    return first, energy(probe)


positions = torch.randn(2, 3)
print(hessian_numerical(positions).shape)
print(probe_without_grad(positions)[1])
