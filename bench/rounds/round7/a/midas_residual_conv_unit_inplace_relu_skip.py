# label: hazard silent
# why: ResidualConvUnit starts with self.relu(x) using nn.ReLU(inplace=True), which clamps x itself, so the skip connection `out + x` silently adds relu(x) instead of x (and the caller's feature map is clamped too).
# source: https://github.com/pytorch/pytorch/issues/44194
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResidualConvUnit(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.conv1 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        self.conv2 = nn.Conv2d(features, features, kernel_size=3, stride=1, padding=1, bias=True)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL002: relu(x) overwrites x, which is read again by `out + x`

    def forward(self, x):
        out = self.relu(x)
        out = self.conv1(out)
        out = self.relu(out)
        out = self.conv2(out)
        return out + x


class FeatureFusionBlock(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.resConfUnit1 = ResidualConvUnit(features)
        self.resConfUnit2 = ResidualConvUnit(features)

    def forward(self, *xs):
        output = xs[0]
        if len(xs) == 2:
            output = output + self.resConfUnit1(xs[1])
        output = self.resConfUnit2(output)
        output = nn.functional.interpolate(output, scale_factor=2, mode="bilinear", align_corners=True)
        return output


class MidasHead(nn.Module):
    def __init__(self, features=4, non_negative=False):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 6, 3, stride=2, padding=1), nn.ReLU())
        self.layer2 = nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.ReLU())
        self.layer1_rn = nn.Conv2d(6, features, 3, stride=1, padding=1, bias=False)
        self.layer2_rn = nn.Conv2d(8, features, 3, stride=1, padding=1, bias=False)
        self.refinenet2 = FeatureFusionBlock(features)
        self.refinenet1 = FeatureFusionBlock(features)
        self.output_conv = nn.Sequential(nn.Conv2d(features, 1, 3, padding=1), nn.ReLU(True) if non_negative else nn.Identity())

    def forward(self, x):
        layer_1 = self.layer1(x)
        layer_2 = self.layer2(layer_1)
        layer_1_rn = self.layer1_rn(layer_1)
        layer_2_rn = self.layer2_rn(layer_2)
        path_2 = self.refinenet2(layer_2_rn)
        path_1 = self.refinenet1(path_2, layer_1_rn)
        return torch.squeeze(self.output_conv(path_1), dim=1)


model = MidasHead()
img = torch.randn(1, 3, 8, 8)
gt_depth = torch.rand(1, 8, 8)
prediction = model(img)
loss = (prediction - gt_depth).abs().mean()
loss.backward()
