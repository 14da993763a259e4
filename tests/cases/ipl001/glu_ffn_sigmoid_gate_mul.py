# label: hazard raises
# why: the gate is now sigmoid's output, which sigmoid saved for backward; h.mul_(b) overwrites it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GLU(nn.Module):
    def __init__(self, dim, hidden, residual_scale=0.5):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.residual_scale = residual_scale

    def forward(self, x):
        a = self.w1(x)
        b = self.w3(x)
        h = torch.sigmoid(a)
        h.mul_(b)  # <-- IPL001
        return x + self.w2(h) * self.residual_scale


ffn = GLU(8, 16)
x = torch.randn(2, 3, 8, requires_grad=True)
out = ffn(x)
loss = out.square().mean()
loss.backward()
w1_grad = ffn.w1.weight.grad
w3_grad = ffn.w3.weight.grad
x_grad = x.grad
