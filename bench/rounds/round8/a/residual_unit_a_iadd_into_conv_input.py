# label: hazard raises
# why: ResidualUnitA adds the residual branch into x in place, but x is the input that conv_1 saved for its weight gradient.
# source: http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualUnitA(nn.Module):
    def __init__(self):
        super(ResidualUnitA, self).__init__()
        self.conv_0 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
        self.bn_0 = nn.BatchNorm2d(6)
        self.conv_1 = nn.Conv2d(6, 6, 3, padding=1, bias=False)
        self.bn_1 = nn.BatchNorm2d(6)

    def forward(self, x):
        x = self.conv_0(x)
        x = self.bn_0(x)
        x = F.relu(x, inplace=True)

        residual = self.conv_1(x)
        residual = self.bn_1(residual)
        x += residual  # <-- IPL001: x was saved by conv_1 for backward
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


net = Net(ResidualUnitA)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
inputs = torch.rand(4, 3, 8, 8)
labels = torch.tensor([1, 0, 3, 9])
optimizer.zero_grad()
outputs = net(inputs)
loss = criterion(outputs, labels)
loss.backward()
optimizer.step()
