# label: safe
# why: each in-place ReLU follows a BatchNorm, whose backward keeps its input rather than its output, so overwriting the BN output changes nothing
# source: https://github.com/fastai/fastai/pull/1115
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv_layer(ni, nf, ks=3, stride=1):
    return nn.Sequential(
        nn.Conv2d(ni, nf, kernel_size=ks, bias=False, stride=stride, padding=ks // 2),
        nn.BatchNorm2d(nf),
        nn.ReLU(inplace=True),
    )


class UnetBlock(nn.Module):
    def __init__(self, up_in_c, x_in_c):
        super().__init__()
        self.upconv = nn.ConvTranspose2d(up_in_c, up_in_c // 2, 2, stride=2)
        self.bn = nn.BatchNorm2d(x_in_c)
        ni = up_in_c // 2 + x_in_c
        self.conv1 = conv_layer(ni, ni // 2)
        self.conv2 = conv_layer(ni // 2, ni // 2)

    def forward(self, up_in, s):
        up_out = self.upconv(up_in)
        cat_x = F.relu(torch.cat([up_out, self.bn(s)], dim=1))
        return self.conv2(self.conv1(cat_x))


class DynamicUnet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.enc1 = conv_layer(3, 8)
        self.enc2 = conv_layer(8, 16, stride=2)
        self.middle_conv = nn.Sequential(
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            conv_layer(16, 32),
            conv_layer(32, 16),
        )
        self.up = UnetBlock(16, 8)
        self.final = nn.Conv2d(8, n_classes, 1)

    def forward(self, x):
        s1 = self.enc1(x)
        s2 = self.enc2(s1)
        m = self.middle_conv(s2)
        return self.final(self.up(m, s1))


model = DynamicUnet()
x = torch.randn(2, 3, 8, 8)
target = torch.randint(0, 3, (2, 8, 8))
logits = model(x)
loss = F.cross_entropy(logits, target)
loss.backward()
