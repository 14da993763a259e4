# label: safe
# why: the custom ReLU clones grad_output before zeroing the negative positions, so the gradient shared with the residual shortcut is left intact.
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
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


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
