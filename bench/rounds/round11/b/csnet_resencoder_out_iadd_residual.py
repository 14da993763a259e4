# label: hazard raises
# why: ResEncoder adds the 1x1 residual into out in place, but out is the output of the ReLU that ReluBackward saved, so backward finds it modified.
# source: https://github.com/iMED-Lab/CS-Net/pull/6
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResEncoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ResEncoder, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=False)
        self.conv1x1 = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x):
        residual = self.conv1x1(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out += residual  # <-- IPL001: adds into the ReLU output that ReluBackward saved
        out = self.relu(out)
        return out


class Decoder(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(Decoder, self).__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=False),
        )

    def forward(self, x):
        return self.conv(x)


class CSNet(nn.Module):
    def __init__(self, classes=1, channels=1):
        super(CSNet, self).__init__()
        self.enc_input = ResEncoder(channels, 4)
        self.encoder1 = ResEncoder(4, 8)
        self.maxpool = nn.MaxPool2d(kernel_size=2)
        self.deconv1 = nn.ConvTranspose2d(8, 4, kernel_size=2, stride=2)
        self.decoder1 = Decoder(8, 4)
        self.final = nn.Conv2d(4, classes, kernel_size=1)

    def forward(self, x):
        enc_input = self.enc_input(x)
        down1 = self.maxpool(enc_input)
        enc1 = self.encoder1(down1)
        up1 = self.deconv1(enc1)
        up1 = torch.cat((enc_input, up1), dim=1)
        dec1 = self.decoder1(up1)
        final = self.final(dec1)
        return torch.sigmoid(final)


net = CSNet()
image = torch.randn(2, 1, 8, 8)
label = (torch.rand(2, 1, 8, 8) > 0.5).float()
pred = net(image)
loss = F.binary_cross_entropy(pred, label)
loss.backward()
