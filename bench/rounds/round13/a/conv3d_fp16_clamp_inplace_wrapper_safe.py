# label: safe
# why: clamp_ on the fresh output of Conv3d/ConvTranspose3d is allowed: the conv backward never saved its own output, and autograd keeps what clamp_ needs (the report is only about memory use).
# source: https://github.com/pytorch/pytorch/issues/33373
import torch
import torch.nn as nn

torch.manual_seed(0)

_conv3d = nn.Conv3d


class Conv3dWrapper(_conv3d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode='zeros'):
        super(Conv3dWrapper, self).__init__(in_channels, out_channels, kernel_size, stride,
                                            padding, dilation, groups, bias, padding_mode)

    def forward(self, input):
        return torch.clamp_(super(Conv3dWrapper, self).forward(input), -1.5, 1.5)


_conv_trans3d = nn.ConvTranspose3d


class ConvTranspose3dWrapper(_conv_trans3d):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros'):
        super(ConvTranspose3dWrapper, self).__init__(in_channels, out_channels, kernel_size,
                                                     stride, padding, output_padding, groups, bias, dilation, padding_mode)

    def forward(self, input, output_size=None):
        return torch.clamp_(super(ConvTranspose3dWrapper, self).forward(input, output_size), -1.5, 1.5)


class VolumeAutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(Conv3dWrapper(1, 4, 3, stride=2, padding=1), nn.ReLU(inplace=True),
                                 Conv3dWrapper(4, 8, 3, stride=2, padding=1), nn.ReLU(inplace=True))
        self.dec = nn.Sequential(ConvTranspose3dWrapper(8, 4, 2, stride=2), nn.ReLU(inplace=True),
                                 ConvTranspose3dWrapper(4, 1, 2, stride=2))

    def forward(self, x):
        return self.dec(self.enc(x))


model = VolumeAutoEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
volume = torch.randn(2, 1, 8, 8, 8) * 3
for step in range(2):
    recon = model(volume)
    loss = (recon - volume.clamp(-1.5, 1.5)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
final_recon = model(volume).detach()
