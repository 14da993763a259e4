# label: safe
# why: the helper has an explicit inplace flag; it is called with the default (out of place) or on a fresh temporary only
import torch
import torch.nn as nn

torch.manual_seed(0)


def activate(x, inplace=False):
    if inplace:
        return x.relu_()
    return x.relu()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.res = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc1(x)
        y = activate(h)
        z = activate(self.fc2(y), inplace=True)
        return z + self.res(h)


block = Block()
x = torch.randn(3, 4)
out = block(x)
loss = out.sum()
loss.backward()
