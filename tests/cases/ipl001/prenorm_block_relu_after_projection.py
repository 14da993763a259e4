# label: hazard raises
# why: relu_ now runs after self.proj(h), and the Linear saved h as its input for the weight gradient
import torch
import torch.nn as nn

torch.manual_seed(0)


class PreNormReluBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 0.1))

    def forward(self, x):
        h = self.norm(x)
        y = self.out(torch.tanh(self.proj(h)))
        h.relu_()  # <-- IPL001
        return x + self.gamma * y + h


blocks = nn.Sequential(PreNormReluBlock(8, 16), PreNormReluBlock(8, 16))
x = torch.randn(3, 5, 8, requires_grad=True)
out = blocks(x)
loss = out.mean(dim=1).pow(2).sum()
loss.backward()
norm_grad = blocks[0].norm.weight.grad
proj_grad = blocks[1].proj.weight.grad
x_grad = x.grad
