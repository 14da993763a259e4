# label: hazard silent
# why: the first ReLU(inplace=True) of the ResBlock rewrites its own input, so the skip connection `out += input` adds relu(input) instead of the pre-activation input
# source: https://github.com/rosinality/vq-vae-2-pytorch/issues/60 (fixed in commit ef5f67c)
import torch
from torch import nn

torch.manual_seed(0)


class ResBlock(nn.Module):
    def __init__(self, in_channel, channel):
        super().__init__()

        self.conv = nn.Sequential(
            nn.ReLU(inplace=True),  # <-- IPL002: rewrites `input`, which the residual add reads afterwards
            nn.Conv2d(in_channel, channel, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(channel, in_channel, 1),
        )

    def forward(self, input):
        out = self.conv(input)
        out += input

        return out


class Encoder(nn.Module):
    def __init__(self, in_channel, channel, n_res_block, n_res_channel, stride):
        super().__init__()

        if stride == 4:
            blocks = [
                nn.Conv2d(in_channel, channel // 2, 4, stride=2, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(channel // 2, channel, 4, stride=2, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(channel, channel, 3, padding=1),
            ]

        elif stride == 2:
            blocks = [
                nn.Conv2d(in_channel, channel // 2, 4, stride=2, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(channel // 2, channel, 3, padding=1),
            ]

        for i in range(n_res_block):
            blocks.append(ResBlock(channel, n_res_channel))

        blocks.append(nn.ReLU(inplace=True))

        self.blocks = nn.Sequential(*blocks)

    def forward(self, input):
        return self.blocks(input)


enc_b = Encoder(3, 8, n_res_block=2, n_res_channel=4, stride=4)
img = torch.randn(2, 3, 16, 16)
enc = enc_b(img)
loss = enc.pow(2).mean()
loss.backward()
