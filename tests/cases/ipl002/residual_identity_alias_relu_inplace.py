# label: hazard silent
# why: `identity = x` is only an alias, so the in-place ReLU on x also rewrites the skip connection, which silently becomes relu(x) instead of x.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MLPBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc_in = nn.Linear(dim, dim)
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, inp):
        x = self.fc_in(inp)
        identity = x
        x = self.relu(x)  # <-- IPL002
        out = self.fc2(torch.tanh(self.fc1(x)))
        return out + identity


block = MLPBlock(6)
inp = torch.randn(3, 6)
out = block(inp)
loss = out.square().mean()
loss.backward()
grad_in = block.fc_in.weight.grad
