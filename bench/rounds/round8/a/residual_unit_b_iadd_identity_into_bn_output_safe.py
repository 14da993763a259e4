# label: safe
# why: ResidualUnitB keeps the relu output as identity and adds it into the bn_1 output in place; BatchNorm does not need its output for backward and the in-place relus act on tensors nothing else saved.
# source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualUnitB(nn.Module):
    def __init__(self):
        super(ResidualUnitB, self).__init__()
        self.conv_0 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(6)
        self.conv_1 = nn.Conv2d(6, 6, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(6)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        identity = x
        x = self.conv_1(x)
        x = self.bn_1(x)
        x += identity
        x = F.relu(x, inplace=True)

        return x


class Net(nn.Module):
    def __init__(self, unit):
        super().__init__()
        self.unit = unit()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, 10)

    def forward(self, x):
        return self.fc(self.pool(self.unit(x)).flatten(1))


net = Net(ResidualUnitB)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
inputs = torch.rand(4, 3, 8, 8)
labels = torch.tensor([1, 0, 3, 9])
optimizer.zero_grad()
outputs = net(inputs)
loss = criterion(outputs, labels)
loss.backward()
optimizer.step()
