# label: hazard silent
# why: MyReLU.backward zeroes entries of grad_output in place, and the residual add hands that same gradient tensor to the shortcut branch, whose gradients silently lose those entries.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_output[input < 0] = 0  # <-- IPL005: grad_output is shared with the shortcut
        return grad_output


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.shortcut = nn.Linear(dim, dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        identity = self.shortcut(x)
        return MyReLU.apply(self.fc(x)) + identity


block = ResidualBlock(6)
head = nn.Linear(6, 2)
x = torch.randn(8, 6)
loss = head(block(x)).pow(2).mean()
loss.backward()
