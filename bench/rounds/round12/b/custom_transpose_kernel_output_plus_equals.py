# label: hazard raises
# why: AddKernel returns a transposed view of a tensor it created inside forward, and the model then accumulates into that output with +=, an in-place write on a custom-Function view that autograd forbids
# source: https://github.com/pytorch/pytorch/issues/10586
import torch

torch.manual_seed(0)


class AddKernel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, val):
        out = input.transpose(-1, 1)
        ctx.save_for_backward(input, val)
        out = out.add(val)
        # For some reason, issue 1 only apears when we transpose the clone of a
        # tensor in this very specific way
        out = out.clone().transpose(-1, 1)   #busted
        return out

    @staticmethod
    def backward(ctx, grad_output):
        input, val = ctx.saved_tensors
        grad_val = grad_output.transpose(-1, 1).sum(dim=tuple(range(grad_output.dim() - 1)))
        return grad_output, grad_val


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 1)
        self.val = torch.nn.Parameter(torch.randn(4))
        self.bias = torch.nn.Parameter(torch.zeros(1, 4, 1, 1))

    def forward(self, x):
        y = AddKernel.apply(self.conv(x), self.val)
        y += self.bias  # <-- IPL001: y is a view created inside AddKernel.forward; += rewrites it in place
        return y


model = Model()
x = torch.randn(2, 4, 3, 3)
out = model(x)
out.sum().backward()
