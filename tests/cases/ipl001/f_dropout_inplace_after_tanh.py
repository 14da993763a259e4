# label: hazard raises
# why: F.dropout(..., inplace=True) overwrites the tanh output that tanh saved for backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Highway(nn.Module):
    def __init__(self, dim, p=0.2):
        super().__init__()
        self.transform = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.p = p

    def forward(self, x):
        h = torch.tanh(self.transform(x))
        h = F.dropout(h, p=self.p, training=self.training, inplace=True)  # <-- IPL001
        t = torch.sigmoid(self.gate(x))
        return t * h + (1 - t) * x


layer = Highway(8)
layer.train()
x = torch.randn(5, 8)
out = layer(x)
loss = out.mean()
loss.backward()
