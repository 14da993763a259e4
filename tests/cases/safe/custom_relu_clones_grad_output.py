# label: safe
# why: the classic tutorial ReLU clones grad_output before zeroing entries, so the engine's gradient buffer is never modified.
import torch

torch.manual_seed(0)


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


w1 = torch.randn(3, 5, requires_grad=True)
w2 = torch.randn(5, 2, requires_grad=True)
x = torch.randn(4, 3)
skip = torch.randn(3, 2, requires_grad=True)

h = x @ w1
y = MyReLU.apply(h) @ w2 + x @ skip
loss = (y - 1).pow(2).sum()
loss.backward()
grads = [w1.grad, w2.grad, skip.grad]
