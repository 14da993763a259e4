# label: hazard silent
# why: the "memory-saving" ReLU Function clamps its input in place in forward without ctx.mark_dirty, silently changing the caller's tensor
import torch
import torch.nn as nn

torch.manual_seed(0)


class SavingReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.relu_()  # <-- IPL005
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (out > 0).to(grad_output.dtype)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.res = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        a = SavingReLU.apply(h)
        return a + self.res(h)


block = Block()
x = torch.randn(3, 4)
out = block(x)
loss = out.sum()
loss.backward()
