# label: safe
# why: the fix rebinds the state out of place (S = S * ... ; S = S + ...), so every saved S stays intact and the o[:, i] writes only fill a fresh output buffer.
# source: https://github.com/fla-org/flash-linear-attention/commit/52049aea7d1e77d8349655a5689089c4c1bb980b
from typing import Optional

import torch

torch.manual_seed(0)


def naive_recurrent_gdn2(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: Optional[float] = None,
    initial_state: Optional[torch.Tensor] = None,
    output_final_state: bool = False,
):
    dtype = v.dtype
    B, T, H, K, V = *q.shape, v.shape[-1]
    if scale is None:
        scale = K ** -0.5

    q, k, v, g, beta = map(lambda x: x.to(torch.float), [q, k, v, g, beta])
    q = q * scale

    S = k.new_zeros(B, H, K, V).to(q)
    if initial_state is not None:
        S += initial_state
    o = torch.zeros_like(v)
    for i in range(0, T):
        q_i, k_i, v_i, g_i, b_i = q[:, i], k[:, i], v[:, i], g[:, i], beta[:, i]
        S = S * g_i[..., None].exp()
        S = S + torch.einsum('b h k, b h v -> b h k v', b_i[..., None] * k_i, v_i - (k_i[..., None] * S).sum(-2))
        o[:, i] = torch.einsum('b h k, b h k v -> b h v', q_i, S)
    if not output_final_state:
        S = None
    return o.to(dtype), S


def main():
    B, T, H, K, V = 2, 4, 2, 8, 8
    q = torch.randn(B, T, H, K, requires_grad=True)
    k = torch.nn.functional.normalize(torch.randn(B, T, H, K), dim=-1).requires_grad_()
    v = torch.randn(B, T, H, V, requires_grad=True)
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, K)).requires_grad_()
    beta = torch.rand(B, T, H, requires_grad=True)
    o, _ = naive_recurrent_gdn2(q, k, v, g, beta)
    o.sum().backward()
    return o.detach(), q.grad.clone(), v.grad.clone()


o, dq, dv = main()
