# label: safe
# why: Inception branches built from BasicConv2d (conv -> bn -> relu inplace) all read x out of place and are concatenated; nothing writes x
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn(x)
        return F.relu(x, inplace=True)


class InceptionA(nn.Module):
    def __init__(self, cin, pool_features):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 4, kernel_size=1)
        self.branch5x5_1 = BasicConv2d(cin, 3, kernel_size=1)
        self.branch5x5_2 = BasicConv2d(3, 4, kernel_size=5, padding=2)
        self.branch3x3_1 = BasicConv2d(cin, 4, kernel_size=1)
        self.branch3x3_2 = BasicConv2d(4, 4, kernel_size=3, padding=1)
        self.branch_pool = BasicConv2d(cin, pool_features, kernel_size=1)

    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        bp = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([b1, b5, b3, bp], 1)


block = InceptionA(5, 2)
x = torch.randn(2, 5, 7, 7)
y = block(x)
loss = y.sum()
loss.backward()
