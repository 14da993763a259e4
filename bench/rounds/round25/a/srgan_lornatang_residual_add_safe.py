# label: safe
# why: out += identity writes into the output of the block's last BatchNorm2d, whose backward needs only its input and saved statistics, so the in-place residual add leaves every saved tensor intact.
# source: https://github.com/Lornatang/SRGAN-PyTorch/blob/bb1e7e9bb4b1b47d211e7d999bdb91065ee24ba1/model.py
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super(ResidualBlock, self).__init__()
        self.conv_block = nn.Sequential(
            nn.Conv2d(channels, channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(channels),
            nn.PReLU(),
            nn.Conv2d(channels, channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(channels)
        )

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.conv_block(x)
        out += identity

        return out


class Generator(nn.Module):
    def __init__(self) -> None:
        super(Generator, self).__init__()
        self.conv_block1 = nn.Sequential(
            nn.Conv2d(3, 16, 9, 1, 4),
            nn.PReLU()
        )

        residual_blocks = []
        for _ in range(4):
            residual_blocks.append(ResidualBlock(16))
        self.residual_blocks = nn.Sequential(*residual_blocks)

        self.conv_block2 = nn.Sequential(
            nn.Conv2d(16, 16, 3, 1, 1, bias=False),
            nn.BatchNorm2d(16)
        )

        self.upsampling = nn.Sequential(
            nn.Conv2d(16, 64, 3, 1, 1),
            nn.BatchNorm2d(64),
            nn.PixelShuffle(upscale_factor=2),
            nn.PReLU(),
        )

        self.conv_block3 = nn.Sequential(
            nn.Conv2d(16, 3, 9, 1, 4),
            nn.Tanh()
        )

    def forward(self, x: Tensor) -> Tensor:
        out1 = self.conv_block1(x)
        out = self.residual_blocks(out1)
        out2 = self.conv_block2(out)
        out = torch.add(out1, out2)
        out = self.upsampling(out)
        out = self.conv_block3(out)

        return out


def main():
    generator = Generator()
    pixel_criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(generator.parameters(), lr=1e-4)
    lr = torch.rand(2, 3, 12, 12)
    hr = torch.rand(2, 3, 24, 24) * 2 - 1
    optimizer.zero_grad()
    sr = generator(lr)
    pixel_loss = pixel_criterion(sr, hr)
    pixel_loss.backward()
    grad = generator.conv_block1[0].weight.grad.clone()
    optimizer.step()
    return pixel_loss.detach(), grad


pixel_loss, first_conv_grad = main()
