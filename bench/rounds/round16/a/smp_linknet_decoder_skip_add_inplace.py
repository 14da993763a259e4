# label: hazard raises
# why: DecoderBlock adds the encoder skip with `x += skip` onto the output of Conv2dReLU, i.e. an in-place ReLU output that ReLU's backward needs.
# source: https://github.com/qubvel/segmentation_models.pytorch/commit/2f001bafa274bcdb2968f6961817b9d3c8cdd480
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv2dReLU(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 stride=1, use_batchnorm=True, **batchnorm_params):
        super().__init__()
        layers = [
            nn.Conv2d(in_channels, out_channels, kernel_size,
                      stride=stride, padding=padding, bias=not (use_batchnorm)),
            nn.ReLU(inplace=True),
        ]
        if use_batchnorm:
            layers.insert(1, nn.BatchNorm2d(out_channels, **batchnorm_params))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class TransposeX2(nn.Module):

    def __init__(self, in_channels, out_channels, use_batchnorm=True, **batchnorm_params):
        super().__init__()
        layers = [
            nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1),
            nn.ReLU(inplace=True),
        ]
        if use_batchnorm:
            layers.insert(1, nn.BatchNorm2d(out_channels, **batchnorm_params))
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        return self.block(x)


class DecoderBlock(nn.Module):
    def __init__(self, in_channels, out_channels, use_batchnorm=True):
        super().__init__()
        self.block = nn.Sequential(
            Conv2dReLU(in_channels, in_channels // 4, kernel_size=1, use_batchnorm=use_batchnorm),
            TransposeX2(in_channels // 4, in_channels // 4, use_batchnorm=use_batchnorm),
            Conv2dReLU(in_channels // 4, out_channels, kernel_size=1, use_batchnorm=use_batchnorm),
        )

    def forward(self, x):
        x, skip = x
        x = self.block(x)
        if skip is not None:
            x += skip  # <-- IPL001: in-place add on the in-place ReLU output of Conv2dReLU
        return x


class LinknetDecoder(nn.Module):

    def __init__(self, encoder_channels, prefinal_channels=8, final_channels=1, use_batchnorm=True):
        super().__init__()
        in_channels = encoder_channels
        self.layer1 = DecoderBlock(in_channels[0], in_channels[1], use_batchnorm=use_batchnorm)
        self.layer2 = DecoderBlock(in_channels[1], in_channels[2], use_batchnorm=use_batchnorm)
        self.layer3 = DecoderBlock(in_channels[2], prefinal_channels, use_batchnorm=use_batchnorm)
        self.final_conv = nn.Conv2d(prefinal_channels, final_channels, kernel_size=(1, 1))

    def forward(self, x):
        encoder_head = x[0]
        skips = x[1:]
        x = self.layer1([encoder_head, skips[0]])
        x = self.layer2([x, skips[1]])
        x = self.layer3([x, None])
        x = self.final_conv(x)
        return x


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.stage3 = nn.Sequential(nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.BatchNorm2d(32), nn.ReLU(inplace=True))

    def forward(self, x):
        x1 = self.stage1(x)
        x2 = self.stage2(x1)
        x3 = self.stage3(x2)
        return [x3, x2, x1]


encoder = Encoder()
decoder = LinknetDecoder(encoder_channels=(32, 16, 8))
images = torch.randn(2, 3, 16, 16)
masks = (torch.rand(2, 1, 16, 16) > 0.5).float()
features = encoder(images)
logits = decoder(features)
logits = F.interpolate(logits, size=masks.shape[-2:], mode='bilinear', align_corners=False)
loss = F.binary_cross_entropy_with_logits(logits, masks)
loss.backward()
