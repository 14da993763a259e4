# label: hazard silent
# why: an EfficientNet-PyTorch style MemoryEfficientSwish scales grad_output in place in backward; the residual add hands the very same gradient tensor to the shortcut branch, which later reads the scaled values.
import torch
import torch.nn as nn


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        grad_output.mul_(sigmoid_i * (1 + i * (1 - sigmoid_i)))  # <-- IPL005: grad_output is shared with the shortcut branch
        return grad_output


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class ResidualMLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.shortcut = nn.Linear(dim, dim)
        self.fc = nn.Linear(dim, dim)
        self.swish = MemoryEfficientSwish()

    def forward(self, x):
        identity = self.shortcut(x)
        return identity + self.swish(self.fc(x))


torch.manual_seed(0)
mlp = ResidualMLP(5)
x = torch.randn(4, 5)
y = mlp(x)
loss = (y * torch.randn(4, 5)).sum()
loss.backward()
