# label: hazard silent
# why: with in_place=True LigerRMSNormFunction.backward writes dX into the grad_output buffer dY, so when the same grad tensor is passed to a second backward (as the functional test did) that second backward silently starts from the first call's dX.
# source: https://github.com/linkedin/Liger-Kernel/commit/17d41de8f75e1356711679741cdd22e9f3aa92f0
import torch

torch.manual_seed(0)


def rms_norm_forward(X, W, eps, offset):
    shape = X.shape
    X = X.view(-1, shape[-1])
    RSTD = torch.rsqrt(X.pow(2).mean(-1) + eps)
    Y = X * RSTD[:, None] * (offset + W)
    return Y.view(*shape), X, RSTD


def _rms_norm_backward_kernel(dY, dX, X, W, RSTD, _dW, offset):
    # row-wise program of the Triton kernel, written with torch ops
    m = dY * (offset + W)
    dx_rows = RSTD[:, None] * m - (RSTD ** 3)[:, None] * X * (m * X).mean(-1, keepdim=True)
    _dW += (dY * X * RSTD[:, None]).sum(0)
    dX.copy_(dx_rows)  # <-- IPL005


def rms_norm_backward(dY, X, W, RSTD, offset, in_place):
    shape = dY.shape
    dim = shape[-1]
    dY = dY.view(-1, dim)
    _dW = torch.zeros(dim, dtype=torch.float32)
    if in_place is True:
        dX = dY
    else:
        dX = torch.zeros_like(dY)
    _rms_norm_backward_kernel(dY, dX, X, W, RSTD, _dW, offset)
    dX = dX.view(*shape)
    dW = _dW.to(W.dtype)
    return dX, dW


class LigerRMSNormFunction(torch.autograd.Function):
    """
    `in_place` option means whether to in_place modify dY to store dX. This is default to `True` to save memory.
    """

    @staticmethod
    def forward(ctx, X, W, eps, offset=0.0, in_place=True):
        Y, X, RSTD = rms_norm_forward(X, W, eps, offset)
        ctx.offset = offset
        ctx.in_place = in_place
        ctx.save_for_backward(X, W, RSTD)
        return Y

    @staticmethod
    def backward(ctx, dY):
        X, W, RSTD = ctx.saved_tensors
        dX, dW = rms_norm_backward(dY, X, W, RSTD, ctx.offset, ctx.in_place)
        return dX, dW, None, None, None


def main():
    bs, sl, hd = 2, 3, 8
    h = torch.randn(bs, sl, hd)
    h1 = h.clone().requires_grad_(True)
    h2 = h.clone().requires_grad_(True)
    w = torch.randn(hd)
    w1 = w.clone().requires_grad_(True)
    w2 = w.clone().requires_grad_(True)

    y1 = LigerRMSNormFunction.apply(h1, w1, 1e-6)
    y2 = LigerRMSNormFunction.apply(h2, w2, 1e-6)

    grad = torch.randn_like(y2)
    y1.backward(grad)
    y2.backward(grad)
    return h1.grad.clone(), h2.grad.clone(), w2.grad.clone()


h1_grad, h2_grad, w2_grad = main()
