# label: safe
# why: `act = h.relu_()` mutates h, but the pre-activation is never read again; only `act` (the same rectified tensor) is used
import torch
import torch.nn as nn

torch.manual_seed(0)


class FFN(nn.Module):
    def __init__(self, dim=12, hidden=24, p=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(p)
        self.act_sparsity = None

    def forward(self, x):
        h = self.fc1(self.norm(x))
        act = h.relu_()
        self.act_sparsity = act.abs().mean()
        out = self.fc2(self.drop(act))
        return x + out


blocks = nn.Sequential(FFN(), FFN())
x = torch.randn(3, 5, 12)
y = blocks(x)
sparsity = sum(b.act_sparsity for b in blocks)
loss = y.pow(2).mean() + 1e-2 * sparsity
loss.backward()
grad_fc1 = blocks[0].fc1.weight.grad.clone()
grad_fc2 = blocks[1].fc2.weight.grad.clone()
