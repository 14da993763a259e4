# label: hazard raises
# why: ResEncoder adds the 1x1x1 shortcut into `out` with `out += residual`, but out is the output of nn.ReLU (inplace=False), which ReLU saved for its backward
# source: https://github.com/iMED-Lab/ER-Net/pull/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def downsample():
    return nn.MaxPool3d(kernel_size=2, stride=2)


def deconv(in_channels, out_channels):
    return nn.ConvTranspose3d(in_channels, out_channels, kernel_size=2, stride=2)


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm3d(out_channels)
        self.conv2 = nn.Conv3d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm3d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv3d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # <-- IPL001: out is the ReLU output saved for ReLU's backward
        out = self.relu(out)
        return out


class MiniERNet(nn.Module):
    def __init__(self, classes=1, channels=1):
        super().__init__()
        self.encoder1 = ResEncoder(channels, 4)
        self.encoder2 = ResEncoder(4, 8)
        self.down = downsample()
        self.conv3_3 = nn.Conv3d(8, 1, kernel_size=1)
        self.convTrans3 = nn.ConvTranspose3d(1, 1, kernel_size=2, stride=2)
        self.up1 = deconv(8, 4)
        self.final = nn.Conv3d(4, classes, kernel_size=1, padding=0)

    def forward(self, x):
        enc1 = self.encoder1(x)
        down1 = self.down(enc1)
        enc2 = self.encoder2(down1)
        con3_3 = self.conv3_3(enc2)
        convTrans3 = self.convTrans3(con3_3)
        x3 = -1 * (torch.sigmoid(convTrans3)) + 1
        x3 = x3.expand(-1, 4, -1, -1, -1).mul(enc1)
        x3 = x3 + enc1
        up1 = self.up1(enc2)
        final = self.final(up1 + x3)
        return torch.sigmoid(final)


model = MiniERNet()
volume = torch.rand(1, 1, 4, 4, 4)
label = (torch.rand(1, 1, 4, 4, 4) > 0.5).float()
pred = model(volume)
loss = F.binary_cross_entropy(pred, label)
loss.backward()
