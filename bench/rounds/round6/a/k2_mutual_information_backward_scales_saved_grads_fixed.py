# label: safe
# why: the fixed backward scales the saved px_grad/py_grad out of place, so the saved tensors stay intact and a second backward through the retained graph works
# source: https://github.com/k2-fsa/k2/pull/1106 (the fix: px_grad = px_grad * ans_grad)
from typing import List, Optional, Tuple

import torch
from torch import Tensor

torch.manual_seed(0)


def _mutual_information_forward(px, py, boundary, p):
    # stand-in for _k2.mutual_information_forward: p[b,s,t] = logaddexp(p[b,s-1,t] + px[b,s-1,t], p[b,s,t-1] + py[b,s,t-1])
    B, S, T1 = px.shape
    T = T1 - 1
    neg_inf = torch.tensor(float("-inf"), dtype=px.dtype)
    rows = []
    for s in range(S + 1):
        row = []
        for t in range(T + 1):
            if s == 0 and t == 0:
                row.append(torch.zeros(B, dtype=px.dtype))
                continue
            a = rows[s - 1][t] + px[:, s - 1, t] if s > 0 else neg_inf.expand(B)
            b = row[t - 1] + py[:, s, t - 1] if t > 0 else neg_inf.expand(B)
            row.append(torch.logaddexp(a, b))
        rows.append(row)
    return rows[S][T]


def _mutual_information_backward(px, py, boundary, p, ans_grad):
    # stand-in for _k2.mutual_information_backward: occupation probabilities d(ans)/d(px), d(ans)/d(py)
    with torch.enable_grad():
        px_ = px.detach().requires_grad_(True)
        py_ = py.detach().requires_grad_(True)
        ans = _mutual_information_forward(px_, py_, boundary, p)
        px_grad, py_grad = torch.autograd.grad((ans * ans_grad).sum(), [px_, py_])
    return px_grad, py_grad


class MutualInformationRecursionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, px, py, pxy_grads: List[Optional[Tensor]], boundary=None, return_grad=False):
        (B, S, T1) = px.shape
        T = T1 - 1
        assert py.shape == (B, S + 1, T)
        p = torch.empty(B, S + 1, T + 1, device=px.device, dtype=px.dtype)
        ans = _mutual_information_forward(px, py, boundary, p)

        px_grad, py_grad = None, None
        if return_grad or px.requires_grad or py.requires_grad:
            ans_grad = torch.ones(B, device=px.device, dtype=px.dtype)
            (px_grad, py_grad) = _mutual_information_backward(px, py, boundary, p, ans_grad)
            ctx.save_for_backward(px_grad, py_grad)
        assert len(pxy_grads) == 2
        pxy_grads[0] = px_grad
        pxy_grads[1] = py_grad
        return ans

    @staticmethod
    def backward(ctx, ans_grad: Tensor) -> Tuple[Tensor, Tensor, None, None, None]:
        (px_grad, py_grad) = ctx.saved_tensors
        (B,) = ans_grad.shape
        ans_grad = ans_grad.reshape(B, 1, 1)  # (B, 1, 1)
        px_grad = px_grad * ans_grad
        py_grad = py_grad * ans_grad
        return (px_grad, py_grad, None, None, None)


def mutual_information_recursion(px, py, boundary=None, return_grad=False):
    pxy_grads = [None, None]
    scores = MutualInformationRecursionFunction.apply(px, py, pxy_grads, boundary, return_grad)
    px_grad, py_grad = pxy_grads
    return (scores, (px_grad, py_grad)) if return_grad else scores


B, S, T = 2, 3, 4
encoder = torch.nn.Linear(5, T + 1)
decoder = torch.nn.Linear(5, T)
enc_in = torch.randn(B, S, 5)
dec_in = torch.randn(B, S + 1, 5)
px = encoder(enc_in).log_softmax(-1)
py = decoder(dec_in).log_softmax(-1)

scores = mutual_information_recursion(px, py)
loss = -scores.sum()

# two optimizers share the loss (the use case in the PR): the first backward keeps the graph
opt_enc = torch.optim.SGD(encoder.parameters(), lr=0.1)
opt_dec = torch.optim.SGD(decoder.parameters(), lr=0.1)
opt_enc.zero_grad()
loss.backward(retain_graph=True)
enc_grad = encoder.weight.grad.clone()
opt_dec.zero_grad()
loss.backward()
dec_grad = decoder.weight.grad.clone()
