# label: safe
# why: the Function multiplies its input in place, declares it with ctx.mark_dirty and the caller uses the returned tensor, so autograd rebases the graph correctly
# source: https://github.com/pytorch/pytorch/issues/184113
import torch

torch.manual_seed(0)


class TimesThreeInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(3)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 3


def fn(w, use_return):
    x = torch.ones(2, 2)
    y = x @ w
    if use_return:
        y = TimesThreeInplace.apply(y)
    return y.sum()


def grad_for(use_return):
    w = torch.eye(2, requires_grad=True)
    loss = fn(w, use_return)
    loss.backward()
    return loss.detach(), w


returned_loss, w_returned = grad_for(use_return=True)
returned_grad = w_returned.grad
