# label: hazard raises no-twin
# why: the IFRNet ResBlock feeds the last side_channels of `out` (a view) to conv2, whose Conv2d saves that view for its weight gradient, then writes conv2's result back into the same channels of `out`.
# source: https://github.com/ltkong218/IFRNet/pull/31
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def convrelu(in_channels, out_channels, kernel_size=3, stride=1, padding=1):
    return nn.Sequential(nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding), nn.PReLU(out_channels))


class ResBlock(nn.Module):
    def __init__(self, in_channels, side_channels, bias=True):
        super(ResBlock, self).__init__()
        self.side_channels = side_channels
        self.conv1 = convrelu(in_channels, in_channels)
        self.conv2 = convrelu(side_channels, side_channels)
        self.conv3 = convrelu(in_channels, in_channels)
        self.conv4 = convrelu(side_channels, side_channels)
        self.conv5 = nn.Conv2d(in_channels, in_channels, kernel_size=3, stride=1, padding=1, bias=bias)
        self.prelu = nn.PReLU(in_channels)

    def forward(self, x):
        out = self.conv1(x)
        out[:, -self.side_channels:, :, :] = self.conv2(out[:, -self.side_channels:, :, :])  # <-- IPL001: conv2 saved this slice of out for backward
        out = self.conv3(out)
        out[:, -self.side_channels:, :, :] = self.conv4(out[:, -self.side_channels:, :, :])  # <-- IPL001: conv4 saved this slice of out for backward
        out = self.prelu(x + self.conv5(out))
        return out


class Decoder(nn.Module):
    """predicts the intermediate frame from two frames' features and the timestep"""

    def __init__(self, ch=8, side=4):
        super().__init__()
        self.encode = convrelu(6 + 1, ch)
        self.block = ResBlock(ch, side)
        self.head = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, img0, img1, embt):
        x = torch.cat([img0, img1, embt.expand(-1, 1, *img0.shape[-2:])], 1)
        return torch.sigmoid(self.head(self.block(self.encode(x))))


model = Decoder()
img0 = torch.rand(2, 3, 12, 12)
img1 = torch.rand(2, 3, 12, 12)
imgt = 0.5 * (img0 + img1)
embt = torch.full((2, 1, 1, 1), 0.5)

imgt_pred = model(img0, img1, embt)
loss_rec = F.l1_loss(imgt_pred, imgt)
loss_rec.backward()
grad = model.block.conv2[0].weight.grad.clone()
