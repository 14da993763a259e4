# label: safe
# why: SmallSRNet(inplace=True) rectifies each convolution output in place, which is harmless because conv2d saves its input and weight, not its output, and the orthogonal weight init runs under torch.no_grad().
# source: https://github.com/kornia/kornia/commit/9e5d025b43676b6d93d1aef124c40151f144d687 (kornia/models/small_sr.py)
import torch
from torch import nn

torch.manual_seed(0)


class SmallSRNet(nn.Module):
    def __init__(self, upscale_factor: int, inplace: bool = False, pretrained: bool = True) -> None:
        super().__init__()

        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor**2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        if not pretrained:
            with torch.no_grad():
                weight_init(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        x = self.pixel_shuffle(self.conv4(x))
        return x


def weight_init(model: nn.Module) -> None:
    """Initialize model weights."""
    torch.nn.init.orthogonal_(model.conv1.weight, torch.nn.init.calculate_gain("relu"))
    torch.nn.init.orthogonal_(model.conv2.weight, torch.nn.init.calculate_gain("relu"))
    torch.nn.init.orthogonal_(model.conv3.weight, torch.nn.init.calculate_gain("relu"))
    torch.nn.init.orthogonal_(model.conv4.weight)


def main():
    model = SmallSRNet(upscale_factor=2, inplace=True, pretrained=False)
    lr_y = torch.rand(2, 1, 8, 8)
    hr_y = torch.rand(2, 1, 16, 16)
    sr_y = model(lr_y)
    loss = nn.functional.mse_loss(sr_y, hr_y)
    loss.backward()
    return sr_y.detach(), model.conv1.weight.grad


sr_y, conv1_grad = main()
