# label: hazard silent
# why: the caller asks the helper for inplace=True and then still reads h for the residual, which now holds relu(h)
import torch
import torch.nn as nn

torch.manual_seed(0)


def activate(x, inplace=False):
    if inplace:
        return x.relu_()  # <-- IPL004
    return x.relu()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.res = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        y = activate(h, inplace=True)
        return y + self.res(h)


block = Block()
x = torch.randn(3, 4)
out = block(x)
loss = out.sum()
loss.backward()
