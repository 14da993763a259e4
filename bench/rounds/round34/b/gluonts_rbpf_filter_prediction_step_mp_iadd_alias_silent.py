# label: hazard silent
# why: filter_forward_prediction_step sets `mp = matvec(A, m) if A is not None else m` and then `mp += b`; for a random-walk state (A is None) mp is the caller's m, i.e. the previous filtered mean stored in the m_fw list, so every prediction step shifts the stored m_fw[t - 1] by b and the stacked filter means returned by filter_forward are wrong (the commit rewrote it as `mp = mp + b`).
# source: https://github.com/awslabs/gluonts/commit/ad99a82592e8a6bee6e20d9ec50eac0d6a2804f4
from typing import NamedTuple, Optional, Union

import torch
from torch import matmul

torch.manual_seed(0)


# torch_extensions/ops.py

def cholesky(mat):
    return torch.linalg.cholesky(mat)


def batch_diag_matrix(diagonal):
    return torch.diag_embed(diagonal)


def cov_from_invcholesky_param(Linv_tril, Linv_logdiag):
    Linv = torch.tril(Linv_tril, -1) + batch_diag_matrix(torch.exp(Linv_logdiag))
    L = torch.inverse(Linv)
    return matmul(L, L.transpose(-1, -2))


def batch_cholesky_inverse(Lmat):
    Lmatinv = torch.inverse(Lmat)
    return matmul(Lmatinv.transpose(-1, -2), Lmatinv)


def symmetrize(mat):
    return 0.5 * (mat + mat.transpose(-1, -2))


def matvec(mat, vec):
    if vec.ndim == 1:
        return torch.matmul(mat, vec)
    elif mat.ndim == 2:
        return torch.matmul(vec, mat.transpose(1, 0))
    else:
        return torch.matmul(mat, vec[..., None])[..., 0]


# utils/utils.py

class TensorDims(NamedTuple):
    timesteps: int
    particle: int
    batch: int
    state: int
    target: int
    ctrl_target: Union[int, None]
    ctrl_state: Union[int, None]


def add_sample_dims_to_initial_state(m0, V0, dims):
    dim_particle = (dims.particle,) if dims.particle is not None and dims.particle != 0 else tuple()
    if m0.ndim == 1:  # add batch dim (trade off performance for consistency)
        m0 = m0.repeat(dim_particle + (dims.batch,) + (1,) * m0.ndim)
        V0 = V0.repeat(dim_particle + (dims.batch,) + (1,) * V0.ndim)
    return m0, V0


def create_zeros_state_vec(dims, device, dtype):
    dim_particle = (dims.particle,) if dims.particle is not None and dims.particle != 0 else tuple()
    vec = [torch.zeros(dim_particle + (dims.batch, dims.state,), device=device, dtype=dtype) for t in range(dims.timesteps)]
    return vec


def create_zeros_state_mat(dims, device, dtype):
    dim_particle = (dims.particle,) if dims.particle is not None and dims.particle != 0 else tuple()
    mat = [torch.zeros(dim_particle + (dims.batch, dims.state, dims.state), device=device, dtype=dtype) for t in range(dims.timesteps)]
    return mat


# inference/analytical_gausian_linear/inference_step.py

def filter_forward_prediction_step(m, V, R, A, b=None):
    """ Single prediction step in forward filtering cycle
    (prediction --> measurement) """
    mp = matvec(A, m) if A is not None else m
    if b is not None:
        mp += b  # <-- IPL004, IPL002
    Vp = symmetrize((matmul(A, matmul(V, A.transpose(-1, -2))) if A is not None else V) + R)
    return mp, Vp


def filter_forward_predictive_distribution(m, V, Q, C, d=None):
    """ The predictive distirbution p(yt | y_{1:t-1}),
    obtained by marginalising the state prediction distribution in the measurement model. """
    Vpy = symmetrize(matmul(C, matmul(V, C.transpose(-1, -2))) + Q)
    mpy = matvec(C, m)
    if d is not None:
        mpy += d
    return mpy, Vpy


def filter_forward_measurement_step(y, m, V, Q, C, d=None):
    """ Single measurement/update step in forward filtering cycle
    (prediction --> measurement) """
    mpy, Vpy = filter_forward_predictive_distribution(m=m, V=V, Q=Q, C=C, d=d)
    LVpyinv = torch.inverse(cholesky(Vpy))
    S = matmul(LVpyinv, matmul(C, V))  # CV is cov_T. cov VC.T could be output of predictive dist.
    dobs = y - mpy
    dobs_norm = matvec(LVpyinv, dobs)
    mt = m + matvec(S.transpose(-1, -2), dobs_norm)
    Vt = symmetrize(V - matmul(S.transpose(-1, -2), S))
    return mt, Vt


# inference/analytical_gausian_linear/inference_sequence_inhomogenous.py

def filter_forward(
    dims: TensorDims,
    A: Optional[torch.Tensor],
    B: Optional[torch.Tensor],
    C: torch.Tensor,
    D: Optional[torch.Tensor],
    LQinv_tril: torch.Tensor,
    LQinv_logdiag: torch.Tensor,
    LRinv_tril: torch.Tensor,
    LRinv_logdiag: torch.Tensor,
    LV0inv_tril: torch.Tensor,
    LV0inv_logdiag: torch.Tensor,
    m0: torch.Tensor,
    y: torch.Tensor,
    u_state: Optional[torch.Tensor] = None,
    u_obs: Optional[torch.Tensor] = None,
):
    m_fw = create_zeros_state_vec(dims=dims, device=C.device, dtype=C.dtype)
    V_fw = create_zeros_state_mat(dims=dims, device=C.device, dtype=C.dtype)
    for t in range(0, dims.timesteps):
        if t == 0:
            V0 = cov_from_invcholesky_param(LV0inv_tril, LV0inv_logdiag)
            mp, Vp = add_sample_dims_to_initial_state(m0=m0, V0=V0, dims=dims)
        else:
            R_tm1 = cov_from_invcholesky_param(LRinv_tril[t - 1], LRinv_logdiag[t - 1])
            b_tm1 = matvec(B[t - 1], u_state[t - 1]) if u_state is not None else 0
            mp, Vp = filter_forward_prediction_step(
                m=m_fw[t - 1], V=V_fw[t - 1], R=R_tm1, A=A[t - 1] if A is not None else None, b=b_tm1
            )
        Q_t = cov_from_invcholesky_param(LQinv_tril[t], LQinv_logdiag[t])
        d_t = matvec(D[t], u_obs[t]) if u_obs is not None else 0
        m_fw[t], V_fw[t] = filter_forward_measurement_step(y=y[t], m=mp, V=Vp, Q=Q_t, C=C[t], d=d_t)
    return torch.stack(m_fw, dim=0), torch.stack(V_fw, dim=0)


def main():
    T, batch, state, target, ctrl = 6, 3, 2, 2, 2
    dims = TensorDims(timesteps=T, particle=0, batch=batch, state=state, target=target, ctrl_target=ctrl, ctrl_state=ctrl)
    # random-walk state model with a control drift: no transition matrix (A is None)
    B = torch.nn.Parameter(0.5 * torch.randn(T, state, ctrl))
    C = torch.nn.Parameter(torch.eye(target, state).repeat(T, 1, 1) + 0.1 * torch.randn(T, target, state))
    D = torch.nn.Parameter(0.1 * torch.randn(T, target, ctrl))
    LQinv_tril = torch.zeros(T, target, target)
    LQinv_logdiag = torch.nn.Parameter(torch.zeros(T, target))
    LRinv_tril = torch.zeros(T, state, state)
    LRinv_logdiag = torch.nn.Parameter(torch.ones(T, state))
    LV0inv_tril = torch.zeros(state, state)
    LV0inv_logdiag = torch.zeros(state)
    m0 = torch.nn.Parameter(torch.zeros(state))
    u = torch.randn(T, batch, ctrl)
    y = torch.cumsum(torch.randn(T, batch, target), dim=0)

    m_filt, V_filt = filter_forward(
        dims=dims, A=None, B=B, C=C, D=D,
        LQinv_tril=LQinv_tril, LQinv_logdiag=LQinv_logdiag,
        LRinv_tril=LRinv_tril, LRinv_logdiag=LRinv_logdiag,
        LV0inv_tril=LV0inv_tril, LV0inv_logdiag=LV0inv_logdiag,
        m0=m0, y=y, u_state=u, u_obs=u,
    )
    # one-step-ahead fit of the filtered means (what the training loss looks at)
    loss = ((torch.einsum("tij,tbj->tbi", C, m_filt) - y) ** 2).mean()
    loss.backward()
    return m_filt.detach(), loss.detach(), B.grad.clone(), m0.grad.clone()


m_filt, loss, B_grad, m0_grad = main()
