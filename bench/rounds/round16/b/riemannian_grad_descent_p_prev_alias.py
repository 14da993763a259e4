# label: hazard silent
# why: p_prev is an alias of p, so the in-place step p -= damp * grad_f also moves p_prev; the distance-based convergence test sees dist(p, p_prev) == 0 and stops after two iterations (the later code adds p.clone() "otherwise it p == p_prev")
# source: https://github.com/planetaryeclipse/ece602-mfld-optim-taylor-approx (riemannian_grad_descent subsolver; fixed with "p_prev = p.clone()  # otherwise it p == p_prev")
from dataclasses import dataclass

import torch
from torch.autograd.functional import jacobian

torch.manual_seed(0)


class RnMetricField:
    def __init__(self, n):
        self.n = n

    def __call__(self, p):
        return self

    def sharp(self, df):
        return df  # Euclidean metric: raising the index is the identity


def dist_map(p, q, metric_field):
    return torch.sqrt(((p - q) ** 2).sum())


@dataclass
class MfldCfg:
    metric_field: RnMetricField


@dataclass
class SolverCfg:
    conv_eps: float = 1e-6
    damp: float = 0.3
    max_iters: int = 50


@dataclass
class SolverResult:
    success: bool
    iters: int
    p: torch.Tensor


def riemannian_grad_descent(f, p0, mfld_cfg: MfldCfg, solv_cfg: SolverCfg, *args):
    success = False
    p_prev = None
    p = p0.clone()
    iter_counter = 0
    for _ in range(solv_cfg.max_iters):
        iter_counter += 1
        df = jacobian(lambda p: f(p, mfld_cfg, *args), p, create_graph=True)
        grad_f = mfld_cfg.metric_field(p).sharp(df)

        p -= solv_cfg.damp * grad_f  # <-- IPL002: p_prev still aliases p, so the previous iterate is overwritten too
        if p_prev is not None and dist_map(p, p_prev, mfld_cfg.metric_field) <= solv_cfg.conv_eps:
            success = True
            break

        p_prev = p
    return SolverResult(success, iter_counter, p)


def f(p, cfg, q):
    return 0.5 * ((p - q) ** 2).sum()


p0 = torch.tensor([1.0, 2.0])
q = torch.tensor([4.0, -1.0])
mfld_cfg = MfldCfg(RnMetricField(2))
result = riemannian_grad_descent(f, p0, mfld_cfg, SolverCfg(), q)
p_optimal = result.p.detach()
iterations = torch.tensor(float(result.iters))
