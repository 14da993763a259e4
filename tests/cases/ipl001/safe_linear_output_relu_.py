# label: safe
# why: relu_ / F.relu(inplace=True) on the output of a Linear: addmm saves its inputs, so overwriting the fresh output is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 1)

    def forward(self, x):
        h = self.fc1(x)
        h.relu_()
        h = F.relu(self.fc2(h), inplace=True)
        return self.fc3(h)


mlp = MLP()
x = torch.randn(6, 5)
pred = mlp(x)
loss = (pred - 1.0).pow(2).mean()
loss.backward()
