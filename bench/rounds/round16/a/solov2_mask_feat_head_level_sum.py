# label: hazard raises
# why: the running sum starts as the output of a ConvModule ending in ReLU, and `+=` overwrites that ReLU output which ReLU's backward still needs.
# source: https://github.com/OpenFirework/pytorch_solov2/issues/22
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, num_groups=2):
        super(ConvModule, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.gn = nn.GroupNorm(num_groups, out_channels)
        self.activate = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activate(self.gn(self.conv(x)))


class MaskFeatHead(nn.Module):
    def __init__(self, in_channels, out_channels, start_level, end_level, num_classes):
        super(MaskFeatHead, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.start_level = start_level
        self.end_level = end_level
        self.num_classes = num_classes

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.start_level, self.end_level + 1):
            convs_per_level = nn.Sequential()
            if i == 0:
                convs_per_level.add_module('conv' + str(i), ConvModule(self.in_channels, self.out_channels, 3, padding=1))
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                if j == 0:
                    chn = self.in_channels + 2 if i == 3 else self.in_channels
                    convs_per_level.add_module('conv' + str(j), ConvModule(chn, self.out_channels, 3, padding=1))
                    convs_per_level.add_module('upsample' + str(j), nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
                    continue
                convs_per_level.add_module('conv' + str(j), ConvModule(self.out_channels, self.out_channels, 3, padding=1))
                convs_per_level.add_module('upsample' + str(j), nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(ConvModule(self.out_channels, self.num_classes, 1, padding=0))

    def forward(self, inputs):
        assert len(inputs) == (self.end_level - self.start_level + 1)

        feature_add_all_level = self.convs_all_levels[0](inputs[0])
        for i in range(1, len(inputs)):
            input_p = inputs[i]
            if i == 3:
                input_feat = input_p
                x_range = torch.linspace(-1, 1, input_feat.shape[-1])
                y_range = torch.linspace(-1, 1, input_feat.shape[-2])
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([input_feat.shape[0], 1, -1, -1])
                x = x.expand([input_feat.shape[0], 1, -1, -1])
                coord_feat = torch.cat([x, y], 1)
                input_p = torch.cat([input_p, coord_feat], 1)

            feature_add_all_level += self.convs_all_levels[i](input_p)  # <-- IPL001: overwrites the ReLU output saved for backward

        feature_pred = self.conv_pred(feature_add_all_level)
        return feature_pred


head = MaskFeatHead(in_channels=4, out_channels=4, start_level=0, end_level=3, num_classes=4)
feats = [torch.randn(1, 4, 16 // (2 ** i), 16 // (2 ** i)) for i in range(4)]
mask_feat_pred = head(feats)
loss = mask_feat_pred.pow(2).mean()
loss.backward()
