# label: hazard silent
# why: FusedRecurrentFunction.forward stored the pseudo values u_t = v_t - S^T k_t back into the caller's `v` ("in-place overwrite") so that backward could read them from ctx; the input is not marked dirty, so after the call the caller's v (here the test's leaf tensor) holds u and the naive reference computed from the same v disagrees (the commit writes into a new buffer `u` instead).
# source: https://github.com/fla-org/flash-linear-attention/commit/138ffd4ee383589d609909855d26f62b85771e9d
import functools

import torch

torch.manual_seed(0)


def contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        return fn(ctx,
                  *(i if not isinstance(i, torch.Tensor) else i.contiguous() for i in args),
                  **{k: (v if not isinstance(v, torch.Tensor) else v.contiguous()) for k, v in kwargs.items()})
    return wrapper


def fused_recurrent_fwd(q, k, v, beta, o, initial_state, final_state, scale):
    """Loop version of fused_recurrent_fwd_kernel (one program per batch*head)."""
    B, H, T, K, V = *q.shape, v.shape[-1]
    h = torch.zeros(B, H, V, K, dtype=torch.float32)
    if initial_state is not None:
        h += initial_state.transpose(-1, -2).float()
    for i in range(T):
        b_k = k[:, :, i].float()
        b_v = v[:, :, i].float()
        b_q = q[:, :, i].float() * scale
        _v_minus = (h * b_k[:, :, None, :]).sum(-1)
        b_v = b_v - _v_minus
        b_beta = beta[:, :, i].float()[..., None]
        # in-place overwrite
        v[:, :, i] = b_v.to(v.dtype)  # <-- IPL005, IPL004
        b_v = b_v * b_beta
        h = h + b_k[:, :, None, :] * b_v[..., None]
        _o = (h * b_q[:, :, None, :]).sum(-1)
        o[:, :, i] = _o.to(o.dtype)
    if final_state is not None:
        final_state.copy_(h.transpose(-1, -2))


def fused_recurrent_bwd(q, k, u, beta, do, scale):
    """Backward from the saved pseudo values u: rebuild v, then differentiate the recurrence."""
    B, H, T, K, V = *q.shape, u.shape[-1]
    S = torch.zeros(B, H, K, V)
    v = torch.empty_like(u)
    for i in range(T):
        v[:, :, i] = u[:, :, i] + (S * k[:, :, i, :, None]).sum(-2)
        S = S + k[:, :, i, :, None] * (u[:, :, i] * beta[:, :, i, None])[:, :, None, :]
    with torch.enable_grad():
        q_, k_, v_, beta_ = (t.detach().requires_grad_() for t in (q, k, v, beta))
        o_, _ = delta_rule_recurrence(q_, k_, v_, beta_, output_final_state=False)
        dq, dk, dv, dbeta = torch.autograd.grad(o_, (q_, k_, v_, beta_), do)
    return dq, dk, dv, dbeta


class FusedRecurrentFunction(torch.autograd.Function):

    @staticmethod
    @contiguous
    def forward(ctx, q, k, v, beta, scale=None, initial_state=None, output_final_state=False):
        B, H, T, K, V = *q.shape, v.shape[-1]
        o = q.new_empty(B, H, T, V)

        if output_final_state:
            final_state = q.new_empty(B, H, K, V, dtype=torch.float32)
        else:
            final_state = None

        fused_recurrent_fwd(q, k, v, beta, o, initial_state, final_state, scale)
        ctx.save_for_backward(q, k, v, beta, initial_state)
        ctx.scale = scale
        return o, final_state

    @staticmethod
    @contiguous
    def backward(ctx, do, dht):
        q, k, v, beta, initial_state = ctx.saved_tensors
        dq, dk, dv, dbeta = fused_recurrent_bwd(q, k, v, beta, do, ctx.scale)
        return dq.to(q), dk.to(k), dv.to(v), dbeta.to(beta), None, None, None


def fused_recurrent_delta_rule(q, k, v, beta=None, scale=-1, initial_state=None, output_final_state=False):
    if scale == -1:
        scale = q.shape[-1] ** -0.5
    if beta is None:
        beta = torch.ones_like(q[..., 0])
    o, final_state = FusedRecurrentFunction.apply(q, k, v, beta, scale, initial_state, output_final_state)
    return o, final_state


def delta_rule_recurrence(q, k, v, beta, initial_state=None, output_final_state=True):
    b, h, l, d_k = q.shape
    q, k, v, beta = map(lambda x: x.float(), [q, k, v, beta])
    d_v = v.shape[-1]
    o = torch.zeros_like(v)
    S = torch.zeros(b, h, d_k, d_v).to(v)
    q = q * (d_k ** -0.5)
    if beta.ndim < v.ndim:
        beta = beta[..., None]
    if initial_state is not None:
        S += initial_state
    for i in range(l):
        _k = k[:, :, i]
        _q = q[:, :, i]
        _v = v[:, :, i].clone()
        beta_i = beta[:, :, i]
        _v = _v - (S.clone() * _k[..., None]).sum(-2)
        _v = _v * beta_i
        S = S.clone() + _k.unsqueeze(-1) * _v.unsqueeze(-2)
        o[:, :, i] = torch.einsum('bhd,bhdm->bhm', _q, S)
    S = None if output_final_state is False else S
    return o, S


def main():
    B, H, T, D = 2, 2, 6, 4
    q = torch.randn(B, H, T, D).requires_grad_(True)
    k = torch.nn.functional.normalize(torch.randn(B, H, T, D), p=2, dim=-1).requires_grad_(True)
    v = torch.randn(B, H, T, D).requires_grad_(True)
    beta = torch.rand(B, H, T).sigmoid().requires_grad_(True)
    do = torch.randn(B, H, T, D)

    tri, _ = fused_recurrent_delta_rule(q, k, v, beta)
    tri.backward(do)
    tri_dq, tri_dv = q.grad.clone(), v.grad.clone()
    q.grad = k.grad = v.grad = beta.grad = None

    ref, _ = delta_rule_recurrence(q, k, v, beta)
    ref.backward(do)
    ref_dq, ref_dv = q.grad.clone(), v.grad.clone()
    return tri.detach(), ref.detach(), tri_dq, ref_dq, tri_dv, ref_dv, (tri - ref).abs().max().detach()


tri, ref, tri_dq, ref_dq, tri_dv, ref_dv, max_err = main()
