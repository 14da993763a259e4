# label: hazard silent
# why: the identity Function's backward adds 1 to the incoming gradient in place; that tensor is the grad_outputs the caller passed to autograd.grad, so the caller's grad_out is silently changed
# source: https://github.com/pytorch/pytorch/issues/81417
import torch

torch.manual_seed(0)


class Func(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def vjp(ctx, x):
        x += 1  # <-- IPL005: edits the incoming gradient (the caller's grad_outputs) in place
        return x


a = torch.rand(2, 4, requires_grad=True)

out = Func.apply(a)
grad_out = torch.ones_like(out)
grad_a, = torch.autograd.grad(out, (a,), grad_outputs=grad_out)

# the caller later reuses its cotangent, e.g. to weight a second term
weighted = (grad_out * a).sum()
