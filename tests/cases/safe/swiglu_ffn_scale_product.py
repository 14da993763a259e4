# label: safe
# why: h.mul_ scales the product `a * b`; mul saves its inputs a and b, never its own output
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden, residual_scale=0.5):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.residual_scale = residual_scale

    def forward(self, x):
        a = F.silu(self.w1(x))
        b = self.w3(x)
        h = a * b
        h.mul_(self.residual_scale)
        return x + self.w2(h)


ffn = SwiGLU(8, 16)
x = torch.randn(2, 3, 8, requires_grad=True)
out = ffn(x)
loss = out.square().mean()
loss.backward()
w1_grad = ffn.w1.weight.grad
w3_grad = ffn.w3.weight.grad
x_grad = x.grad
