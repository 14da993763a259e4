# label: hazard raises no-twin
# why: SCNN's spatial message passing adds each row/column into x in place (x[..., i:i+1, :].add_(relu(conv_d(x[..., i-1:i, :])))), but conv_d saved the previous slice (a view of x) and F.relu saved x itself, so the next in-place add bumps x's version and backward fails with "modified by an inplace operation".
# source: https://github.com/jcdubron/scnn_pytorch/issues/11 (python/model.py at commit 214af4008fce7d0f3eef2662046454923f7109b5)
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class SCNN(nn.Module):
    def __init__(self):
        super(SCNN, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1_1 = nn.BatchNorm2d(8)
        self.conv6 = nn.Conv2d(8, 16, 3, padding=4, dilation=4, bias=False)
        self.bn6 = nn.BatchNorm2d(16)
        self.conv7 = nn.Conv2d(16, 8, 1, bias=False)
        self.bn7 = nn.BatchNorm2d(8)

        self.conv_d = nn.Conv2d(8, 8, (1, 9), padding=(0, 4), bias=False)
        self.conv_u = nn.Conv2d(8, 8, (1, 9), padding=(0, 4), bias=False)
        self.conv_r = nn.Conv2d(8, 8, (9, 1), padding=(4, 0), bias=False)
        self.conv_l = nn.Conv2d(8, 8, (9, 1), padding=(4, 0), bias=False)

        self.dropout = nn.Dropout2d(0.1)
        self.conv8 = nn.Conv2d(8, 5, 1)
        self.fc9 = nn.Linear(5 * 3 * 5, 16)
        self.fc10 = nn.Linear(16, 4)

    def forward(self, x):
        x = F.relu(self.bn1_1(self.conv1_1(x)))
        x = F.max_pool2d(x, 2, stride=2, padding=0)

        x = F.relu(self.bn6(self.conv6(x)))
        x = F.relu(self.bn7(self.conv7(x)))

        for i in range(1, x.shape[2]):
            x[..., i:i+1, :].add_(F.relu(self.conv_d(x[..., i-1:i, :])))  # <-- IPL001

        for i in range(x.shape[2] - 2, 0, -1):
            x[..., i:i+1, :].add_(F.relu(self.conv_u(x[..., i+1:i+2, :])))  # <-- IPL001

        for i in range(1, x.shape[3]):
            x[..., i:i+1].add_(F.relu(self.conv_r(x[..., i-1:i])))  # <-- IPL001

        for i in range(x.shape[3] - 2, 0, -1):
            x[..., i:i+1].add_(F.relu(self.conv_l(x[..., i+1:i+2])))  # <-- IPL001

        x = self.dropout(x)
        x = self.conv8(x)

        x1 = F.interpolate(x, size=[24, 40], mode='bilinear', align_corners=False)
        x2 = F.softmax(x, dim=1)
        x2 = F.avg_pool2d(x2, 2, stride=2, padding=0)
        x2 = x2.view(-1, x2.numel() // x2.shape[0])
        x2 = self.fc9(x2)
        x2 = F.relu(x2)
        x2 = self.fc10(x2)
        x2 = torch.sigmoid(x2)
        return x1, x2


def main():
    net = SCNN()
    net.train()
    img = torch.randn(2, 3, 12, 20)
    seg_gt = torch.randint(0, 5, (2, 24, 40))
    exist_gt = torch.randint(0, 2, (2, 4)).float()
    seg_pred, exist_pred = net(img)
    loss_seg = F.cross_entropy(seg_pred, seg_gt)
    loss_exist = F.binary_cross_entropy(exist_pred, exist_gt)
    loss = loss_seg + 0.1 * loss_exist
    loss.backward()
    return loss.detach(), net.conv_d.weight.grad


loss, grad = main()
