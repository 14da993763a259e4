# label: hazard raises
# why: LigerSiLUMulFunction.backward writes da/db into the a/b tensors it saved (the kernel stores into a_ptr/b_ptr), but `a` is also the output that the upstream Exponential function saved for its own backward, which then finds it overwritten
# source: https://github.com/linkedin/Liger-Kernel/issues/254 (src/liger_kernel/ops/swiglu.py)
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class Exponential(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, out_grad):
        (out,) = ctx.saved_tensors
        x_grad = out_grad * out
        return x_grad


def swiglu_forward(a, b):
    ori_shape = a.shape
    n_cols = ori_shape[-1]
    a = a.view(-1, n_cols)
    b = b.view(-1, n_cols)
    c = F.silu(a) * b
    return a, b, c.view(*ori_shape)


def swiglu_backward(a, b, dc):
    ori_shape = dc.shape
    n_cols = ori_shape[-1]
    dc = dc.view(-1, n_cols)
    # recomputation to save memory (same math as _swiglu_backward_kernel)
    sig_a = torch.sigmoid(a)
    silu_a = a * sig_a
    db_row = dc * silu_a
    da_row = dc * (silu_a * (1 - sig_a) + sig_a) * b
    # the kernel does tl.store(a_ptr, da_row) / tl.store(b_ptr, db_row)
    a.copy_(da_row)  # <-- IPL005: overwrites a saved input (shared with Exponential's saved output) in backward
    b.copy_(db_row)  # <-- IPL005: overwrites a saved input in backward
    return a.view(*ori_shape), b.view(*ori_shape)


class LigerSiLUMulFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a, b, c = swiglu_forward(a, b)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        a, b = swiglu_backward(a, b, dc)
        return a, b


x = torch.randn(4, 8, requires_grad=True)
gate = torch.randn(4, 8, requires_grad=True)
x_exp = Exponential.apply(x)
y = LigerSiLUMulFunction.apply(x_exp, gate)
target = torch.randn(4, 8)
loss = F.mse_loss(y, target)
loss.backward()
