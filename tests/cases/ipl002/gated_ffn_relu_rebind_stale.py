# label: hazard silent
# why: `act = h.relu_()` rectifies h itself, so the gate and the pre-activation penalty that read `h` see post-ReLU values
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedFFN(nn.Module):
    def __init__(self, dim=12, hidden=24):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.preact_penalty = None

    def forward(self, x):
        h = self.fc1(self.norm(x))
        act = h.relu_()  # <-- IPL002
        gate = torch.sigmoid(h)  # gate from the pre-activation
        self.preact_penalty = h.pow(2).mean()
        return x + self.fc2(act * gate)


blocks = nn.Sequential(GatedFFN(), GatedFFN())
x = torch.randn(3, 5, 12)
y = blocks(x)
penalty = sum(b.preact_penalty for b in blocks)
loss = y.pow(2).mean() + 1e-2 * penalty
loss.backward()
grad_fc1 = blocks[0].fc1.weight.grad.clone()
grad_fc2 = blocks[1].fc2.weight.grad.clone()
