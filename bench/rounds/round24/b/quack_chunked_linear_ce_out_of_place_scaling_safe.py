# label: safe
# why: the forward still writes chunk results into freshly allocated dx/dw buffers in place, but backward scales the saved gradients out of place, so the saved tensors stay intact and a retained graph can be backpropagated again.
# source: https://github.com/Dao-AILab/quack/pull/209
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _chunked_ce_fwd_bwd(x, weight, target, chunk_size):
    """Loss plus d(loss)/dx and d(loss)/dweight, one chunk of rows at a time (mean reduction)."""
    n = x.shape[0]
    dx = torch.empty_like(x)
    dw = torch.zeros_like(weight)
    loss = x.new_zeros(())
    for start in range(0, n, chunk_size):
        xc = x[start:start + chunk_size]
        tc = target[start:start + chunk_size]
        logits = xc @ weight.t()
        lse = torch.logsumexp(logits, dim=-1)
        loss += (lse - logits.gather(1, tc[:, None]).squeeze(1)).sum() / n
        dlogits = torch.softmax(logits, dim=-1)
        dlogits[torch.arange(tc.shape[0]), tc] -= 1.0
        dlogits /= n
        dx[start:start + chunk_size] = dlogits @ weight
        dw += dlogits.t() @ xc
    return loss, dx, dw


class ChunkedLinearCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, target, chunk_size):
        loss, dx, dw = _chunked_ce_fwd_bwd(x, weight, target, chunk_size)
        ctx.save_for_backward(dx, dw)
        return loss

    @staticmethod
    def backward(ctx, dloss):
        dx, dw = ctx.saved_tensors
        dx = dx * dloss
        dw = dw * dloss
        return dx, dw, None, None


def chunked_linear_cross_entropy(x, weight, target, chunk_size=3):
    return ChunkedLinearCrossEntropyFunction.apply(x, weight, target, chunk_size)


def main():
    hidden = torch.randn(7, 5)
    lm_head = nn.Linear(5, 11, bias=False)
    target = torch.randint(0, 11, (7,))
    x = hidden.clone().requires_grad_()
    loss = chunked_linear_cross_entropy(x, lm_head.weight, target)
    g1_x, g1_w = torch.autograd.grad(loss, (x, lm_head.weight), grad_outputs=torch.tensor(2.0), retain_graph=True)
    g2_x, g2_w = torch.autograd.grad(loss, (x, lm_head.weight), grad_outputs=torch.tensor(0.5))
    ref = F.cross_entropy(x @ lm_head.weight.t(), target)
    return loss.detach(), ref.detach(), g1_x, g2_x


loss_value, ref_value, grad_first, grad_second = main()
