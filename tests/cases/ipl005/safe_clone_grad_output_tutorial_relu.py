# label: safe
# why: the classic MyReLU: backward clones grad_output before zeroing negative positions, so the shared gradient is never written
import torch
import torch.nn as nn

torch.manual_seed(0)


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.relu()

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


fc1 = nn.Linear(4, 5)
fc2 = nn.Linear(5, 1)
x = torch.randn(6, 4)
h = fc1(x)
out = fc2(MyReLU.apply(h)) + h.sum(-1, keepdim=True)
loss = out.pow(2).mean()
loss.backward()
