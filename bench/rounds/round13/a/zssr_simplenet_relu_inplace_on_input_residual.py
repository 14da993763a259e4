# label: hazard silent
# why: the shared nn.ReLU(inplace=True) is applied to the network input x, which is also kept as `residual`, so the global skip connection adds relu(x) instead of x.
# source: https://github.com/HarukiYqM/pytorch-ZSSR/issues/2
import torch
import torch.nn as nn
from math import sqrt

torch.manual_seed(0)


class simpleNet(nn.Module):
    def __init__(self, Y=True):
        super(simpleNet, self).__init__()
        d = 1
        if Y == False:
            d = 3
        self.input = nn.Conv2d(in_channels=d, out_channels=8, kernel_size=3, stride=1, padding=1, bias=False)
        self.conv1 = nn.Conv2d(in_channels=8, out_channels=8, kernel_size=3, stride=1, padding=1, bias=False)
        self.conv2 = nn.Conv2d(in_channels=8, out_channels=8, kernel_size=3, stride=1, padding=1, bias=False)
        self.conv3 = nn.Conv2d(in_channels=8, out_channels=8, kernel_size=3, stride=1, padding=1, bias=False)
        self.output = nn.Conv2d(in_channels=8, out_channels=d, kernel_size=3, stride=1, padding=1, bias=False)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL002: shared in-place ReLU, later applied to the input that `residual` aliases

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, sqrt(2. / n))

    def forward(self, x):
        residual = x
        inputs = self.input(self.relu(x))  # <-- IPL002: in-place ReLU overwrites x, which `residual` still aliases
        out = inputs

        out = self.conv1(self.relu(out))
        out = self.conv2(self.relu(out))
        out = self.conv3(self.relu(out))

        out = self.output(self.relu(out))

        out = torch.add(out, residual)
        return out


def forward_backward_pass(model, lr_son, hr_father, criterion, optimizer):
    lr_son_input = lr_son.clone()
    train_output = model(lr_son_input)
    loss = criterion(hr_father, train_output)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return train_output, loss


model = simpleNet(Y=True)
criterion = nn.L1Loss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
lr_son = torch.randn(1, 1, 6, 6)
hr_father = torch.randn(1, 1, 6, 6)
train_output, loss = forward_backward_pass(model, lr_son, hr_father, criterion, optimizer)
