# label: safe
# why: the CycleGAN ConvBlock applies nn.ReLU(inplace=True) directly to the InstanceNorm2d output and returns it; instance norm keeps its input (not its output) for backward, and ReLU keeps its own result, so the in-place activation changes no saved tensor.
# source: https://whosebug.com/question/6496491/Does-inplace-matter-when-we-return-ReLU-x
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels, down=True, use_act=True, **kwargs):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, padding_mode='reflect', **kwargs)
            if down else nn.ConvTranspose2d(in_channels, out_channels, **kwargs),
            nn.InstanceNorm2d(out_channels),
            nn.ReLU(inplace=True) if use_act else nn.Identity(),
        )

    def forward(self, x):
        return self.conv(x)


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.block = nn.Sequential(
            ConvBlock(channels, channels, kernel_size=3, padding=1),
            ConvBlock(channels, channels, use_act=False, kernel_size=3, padding=1),
        )

    def forward(self, x):
        return x + self.block(x)


class Generator(nn.Module):
    def __init__(self, img_channels=3, num_features=8, num_residuals=2):
        super().__init__()
        self.initial = nn.Sequential(
            nn.Conv2d(img_channels, num_features, kernel_size=7, stride=1, padding=3, padding_mode="reflect"),
            nn.InstanceNorm2d(num_features),
            nn.ReLU(inplace=True),
        )
        self.down_blocks = nn.ModuleList([
            ConvBlock(num_features, num_features * 2, kernel_size=3, stride=2, padding=1),
        ])
        self.res_blocks = nn.Sequential(*[ResidualBlock(num_features * 2) for _ in range(num_residuals)])
        self.up_blocks = nn.ModuleList([
            ConvBlock(num_features * 2, num_features, down=False, kernel_size=3, stride=2, padding=1, output_padding=1),
        ])
        self.last = nn.Conv2d(num_features, img_channels, kernel_size=7, stride=1, padding=3, padding_mode="reflect")

    def forward(self, x):
        x = self.initial(x)
        for layer in self.down_blocks:
            x = layer(x)
        x = self.res_blocks(x)
        for layer in self.up_blocks:
            x = layer(x)
        return torch.tanh(self.last(x))


def main():
    gen = Generator()
    x = torch.rand(2, 3, 16, 16) * 2 - 1
    y = torch.rand(2, 3, 16, 16) * 2 - 1
    fake = gen(x)
    loss = nn.L1Loss()(fake, y)
    loss.backward()
    return loss.detach(), gen.initial[0].weight.grad, gen.down_blocks[0].conv[0].weight.grad


loss, init_grad, down_grad = main()
