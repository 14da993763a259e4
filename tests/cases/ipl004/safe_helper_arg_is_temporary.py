# label: safe
# why: the mutating helper only ever receives fresh temporaries (a Linear output) that nobody else references or saved
import torch
import torch.nn as nn

torch.manual_seed(0)


def center_inplace(t):
    t.sub_(t.mean(dim=-1, keepdim=True))
    return t


class CenteredMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.fc2 = nn.Linear(6, 2)

    def forward(self, x):
        h = center_inplace(self.fc1(x))
        return self.fc2(torch.tanh(h))


model = CenteredMLP()
x = torch.randn(3, 4)
out = model(x)
loss = out.sum()
loss.backward()
