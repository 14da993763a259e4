# label: safe
# why: the in-place ReLU writes BatchNorm outputs and the residual sum, none of which BatchNorm or conv saved, and `out += identity` targets a fresh tensor.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity
        out = self.relu(out)
        return out


block = BasicBlock(2)
x = torch.randn(2, 2, 4, 4, requires_grad=True)
out = block(x)
loss = out.mean()
loss.backward()
x_grad = x.grad
conv1_grad = block.conv1.weight.grad
