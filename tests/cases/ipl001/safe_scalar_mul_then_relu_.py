# label: safe
# why: multiplying by a Python scalar does not save h, and Linear/add save nothing of their outputs, so relu_() on h is safe.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledSkip(nn.Module):
    def __init__(self, dim, alpha=0.5):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.alpha = alpha

    def forward(self, x):
        h = self.fc1(x)
        skip = h * self.alpha
        h.relu_()
        return self.fc2(h) + skip


model = ScaledSkip(5)
x = torch.randn(6, 5)
y = model(x)
y.sum().backward()
