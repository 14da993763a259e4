# label: hazard raises
# why: the block already ends in F.relu (ReluBackward saves its result); the wrapper applies an inplace ReLU module on top of it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return F.relu(self.fc(x))


class Net(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.block = Block(dim)
        self.act = nn.ReLU(inplace=True)
        self.head = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.block(x)
        h = self.act(h)  # <-- IPL001
        return self.head(h)


net = Net(5)
x = torch.randn(4, 5)
loss = net(x).sum()
loss.backward()
