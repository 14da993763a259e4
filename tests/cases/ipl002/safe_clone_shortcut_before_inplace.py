# label: safe
# why: the shortcut is an explicit clone, so the following in-place ReLU cannot change what the residual adds
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 4)
        self.fc = nn.Linear(4, 4)

    def forward(self, inp):
        x = self.stem(inp)
        shortcut = x.clone()
        x.relu_()
        return self.fc(x) + shortcut


block = Block()
inp = torch.randn(3, 4)
y = block(inp)
loss = y.sum()
loss.backward()
