# label: safe
# why: STTR._relu_inplace (after the fix) switches every nn.ReLU to inplace=True, but each ReLU follows a BatchNorm, a residual addition or an upsampling conv whose backward does not need its output, so overwriting those activations is harmless.
# source: https://github.com/mli0603/stereo-transformer/commit/44703b01d59c8accff1d396ec842c3d1b9a8fb9a
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class SppBackbone(nn.Module):
    def __init__(self):
        super(SppBackbone, self).__init__()
        self.inplanes = 8
        self.in_conv = nn.Sequential(nn.Conv2d(3, 8, kernel_size=3, padding=1, stride=2, bias=False),
                                     nn.BatchNorm2d(8),
                                     nn.ReLU())  # 1/2
        self.resblock_1 = self._make_layer(BasicBlock, 16, 2, 2)  # 1/4
        self.branch1 = nn.Sequential(nn.AvgPool2d((2, 2), stride=(2, 2)),
                                     nn.Conv2d(16, 8, kernel_size=1, bias=False),
                                     nn.BatchNorm2d(8),
                                     nn.ReLU())

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion,
                                                 kernel_size=1, stride=stride, bias=False),
                                       nn.BatchNorm2d(planes * block.expansion), )
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        _, _, h, w = x.shape
        output_2_1 = self.in_conv(x)
        output_4_0 = self.resblock_1(output_2_1)
        output_branch1 = self.branch1(output_4_0)
        output_branch1 = F.interpolate(output_branch1, size=output_4_0.shape[-2:], mode='bilinear', align_corners=False)
        output_4 = torch.cat([output_4_0, output_branch1], dim=1)
        return [x, output_2_1, output_4]


class Tokenizer(nn.Module):
    def __init__(self, block, block_config, hidden_dim, backbone_feat_channel):
        super(Tokenizer, self).__init__()
        self.bottle_neck = nn.Sequential(nn.Conv2d(backbone_feat_channel[-1], hidden_dim, 1, bias=False),
                                         nn.BatchNorm2d(hidden_dim), nn.ReLU())
        self.up = nn.Sequential(nn.ConvTranspose2d(hidden_dim, hidden_dim, kernel_size=4, stride=2, padding=1),
                                nn.BatchNorm2d(hidden_dim), nn.ReLU())

    def forward(self, features):
        output = self.bottle_neck(features[-1])
        output = self.up(output)
        return torch.cat([output, features[-2]], dim=1)


class STTR(nn.Module):
    def __init__(self):
        super(STTR, self).__init__()
        self.backbone = SppBackbone()
        self.tokenizer = Tokenizer(BasicBlock, [1], 8, [3, 8, 24])
        self.regression_head = nn.Conv2d(16, 1, 3, padding=1)
        self._reset_parameters()
        self._disable_batchnorm_tracking()
        self._relu_inplace()

    def _reset_parameters(self):
        for n, m in self.named_modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.zeros_(m.bias)

    def _disable_batchnorm_tracking(self):
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.track_running_stats = False
                m.running_mean = None
                m.running_var = None

    def _relu_inplace(self):
        """
        make all ReLU inplace
        """
        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, left, right):
        bs = left.size(0)
        feat = self.backbone(torch.cat([left, right], dim=0))
        tokens = self.tokenizer(feat)
        feat_left = tokens[:bs]
        feat_right = tokens[bs:]
        cost = feat_left * feat_right
        return self.regression_head(cost).squeeze(1)


def main():
    model = STTR()
    left = torch.randn(1, 3, 16, 16)
    right = torch.randn(1, 3, 16, 16)
    disp = torch.rand(1, 8, 8) * 4
    disp_pred = model(left, right)
    loss = F.smooth_l1_loss(disp_pred, disp)
    loss.backward()
    return loss.detach(), model.backbone.in_conv[0].weight.grad, model.tokenizer.up[0].weight.grad


loss, in_conv_grad, up_grad = main()
