# label: hazard raises
# why: the log term is written in place into r_pow, the output of torch.pow that PowBackward saved, so the long-range energy cannot be differentiated w.r.t. the switching distances
# source: https://github.com/openforcefield/smee/pull/150 (fix commit 8483a227c453226d31821ff39ca2232e611027af, issue #148)
import typing

import torch

torch.manual_seed(0)


def tensor_like(data: typing.Any, other: torch.Tensor) -> torch.Tensor:
    """Create a tensor with the same device and type as another tensor."""
    if isinstance(data, torch.Tensor):
        return data.clone().detach().to(other.device, other.dtype)
    return torch.tensor(data, dtype=other.dtype, device=other.device)


def lorentz_berthelot(eps_a, eps_b, sig_a, sig_b):
    return torch.sqrt(eps_a * eps_b), 0.5 * (sig_a + sig_b)


def _integrate_lj_switch(r, rs, rc, sig):
    b = 1.0 / (rc - rs)

    coeff_0 = tensor_like([rs**3, rs**2, rs, 1, b, b**2], rs) * (
        tensor_like([rs**2 * b**2, rs * b, 1], rs)
        * tensor_like([[6, 15, 10], [1, 2, 1], [2, 3, 1], [6, 6, 1], [0, 2, 1], [0, 0, 1]], rs)
    ).sum(dim=-1)

    coeff_01 = sig[:, None] ** 6 * tensor_like([-28, 945, -1080, 420, -756, 378], rs) * coeff_0
    coeff_11 = tensor_like([84, -3780, 7560, 2520, -3780, 756], rs) * coeff_0

    r_pow = torch.pow(r, tensor_like([-9, -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2], rs))
    r_pow[-3] = torch.log(r)  # <-- IPL001: overwrites the pow output saved for backward

    integral = -(b**3) * sig**6 * (coeff_01 * r_pow[:6] + coeff_11 * r_pow[6:]).sum(dim=-1) / 252
    return integral


def _compute_lj_lrc(parameters, exceptions, idxs_i, idxs_j, n_ij_interactions, rs, rc, volume):
    eps_ii, sig_ii = parameters[:, 0], parameters[:, 1]
    eps_ij, sig_ij = lorentz_berthelot(eps_ii[idxs_i], eps_ii[idxs_j], sig_ii[idxs_i], sig_ii[idxs_j])

    if exceptions is not None:
        exceptions = {**exceptions, **{(j, i): idx for (i, j), idx in exceptions.items()}}
        eps_ij, sig_ij = eps_ij.clone(), sig_ij.clone()  # prevent in-place modification
        for i, (idx_i, idx_j) in enumerate(zip(idxs_i, idxs_j, strict=True)):
            idx_i, idx_j = int(idx_i), int(idx_j)
            if (idx_i, idx_j) not in exceptions:
                continue
            param_idx = exceptions[(idx_i, idx_j)]
            eps_ij[i] = parameters[param_idx, 0]
            sig_ij[i] = parameters[param_idx, 1]

    integral = sig_ij**12 / (9 * rc**9) - sig_ij**6 / (3 * rc**3)
    if rs is not None:
        integral_rc = _integrate_lj_switch(rc, rs, rc, sig_ij)
        integral_rs = _integrate_lj_switch(rs, rs, rc, sig_ij)
        integral += integral_rc - integral_rs

    volume_integral = integral * 8.0 * torch.pi * eps_ij * n_ij_interactions
    return volume_integral.sum() / volume


parameters = torch.tensor([[0.2, 3.0], [0.1, 2.5], [0.15, 3.2]], requires_grad=True)
exceptions = {(0, 1): 2}
idxs_i = torch.tensor([0, 0, 1])
idxs_j = torch.tensor([0, 1, 1])
n_ij_interactions = torch.tensor([10.0, 20.0, 10.0])
rs = torch.tensor(8.0, requires_grad=True)
rc = torch.tensor(9.0, requires_grad=True)
volume = torch.tensor(1000.0)

energy = _compute_lj_lrc(parameters, exceptions, idxs_i, idxs_j, n_ij_interactions, rs, rc, volume)
energy.backward()
