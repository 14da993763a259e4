# label: safe
# why: the encoder rectifies the batch-norm output in place before pooling, so max_pool2d saves the already-rectified tensor and nothing rewrites it afterwards; batch norm itself never saves its output.
# source: https://github.com/pytorch/pytorch/issues/85485
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DownBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.bn = nn.BatchNorm2d(out_ch)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        feat = self.bn(self.conv(x))
        skip = F.relu(feat, inplace=True)
        pooled = self.pool(skip)
        return pooled, skip


class UpBlock(nn.Module):
    def __init__(self, in_ch, skip_ch, out_ch):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_ch, in_ch, 2, stride=2)
        self.conv = nn.Conv2d(in_ch + skip_ch, out_ch, 3, padding=1)

    def forward(self, x, skip):
        x = self.up(x)
        return F.relu(self.conv(torch.cat([x, skip], dim=1)))


class UNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=2, base=8):
        super().__init__()
        self.down1 = DownBlock(in_ch, base)
        self.down2 = DownBlock(base, base * 2)
        self.bottleneck = nn.Conv2d(base * 2, base * 2, 3, padding=1)
        self.up2 = UpBlock(base * 2, base * 2, base)
        self.up1 = UpBlock(base, base, base)
        self.head = nn.Conv2d(base, n_classes, 1)

    def forward(self, x):
        x, skip1 = self.down1(x)
        x, skip2 = self.down2(x)
        x = F.relu(self.bottleneck(x))
        x = self.up2(x, skip2)
        x = self.up1(x, skip1)
        return self.head(x)


def main():
    model = UNet()
    images = torch.randn(2, 3, 16, 16)
    masks = torch.randint(0, 2, (2, 16, 16))
    logits = model(images)
    loss = F.cross_entropy(logits, masks)
    loss.backward()
    return logits.detach(), model.down1.conv.weight.grad


logits, conv_grad = main()
