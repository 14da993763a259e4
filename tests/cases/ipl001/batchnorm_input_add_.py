# label: hazard raises
# why: batch_norm saves its input for backward, and h.add_() accumulates the normalised output into that input.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResBN(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.bn = nn.BatchNorm1d(dim)
        self.out = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.fc(x)
        z = self.bn(h)
        h.add_(z)  # <-- IPL001: h is the input that batch_norm saved
        return self.out(h)


model = ResBN(8)
model.train()
x = torch.randn(16, 8)
loss = model(x).pow(2).mean()
loss.backward()
