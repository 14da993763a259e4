# label: hazard raises
# why: the mask-feature branch accumulates every level into the first level's output with +=, which is the output of an inplace=False ReLU that saved it for backward
# source: https://github.com/aim-uofa/AdelaiDet/issues/527
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def conv_gn_relu(in_ch, out_ch):
    return nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
                         nn.GroupNorm(4, out_ch), nn.ReLU())


class SOLOv2MaskHead(nn.Module):
    def __init__(self, in_channels=8, mask_channels=8, num_masks=4, num_levels=4):
        super().__init__()
        self.num_levels = num_levels
        self.convs_all_levels = nn.ModuleList()
        for i in range(num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                convs_per_level.add_module('conv' + str(i), conv_gn_relu(in_channels, mask_channels))
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                chn = (in_channels + 2 if i == 3 else in_channels) if j == 0 else mask_channels
                convs_per_level.add_module('conv' + str(j), conv_gn_relu(chn, mask_channels))
                convs_per_level.add_module('upsample' + str(j),
                                           nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
            self.convs_all_levels.append(convs_per_level)
        self.conv_pred = nn.Sequential(nn.Conv2d(mask_channels, num_masks, 1), nn.GroupNorm(2, num_masks), nn.ReLU())

    def forward(self, features):
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            if i == 3:
                x_range = torch.linspace(-1, 1, mask_feat.shape[-1])
                y_range = torch.linspace(-1, 1, mask_feat.shape[-2])
                y, x = torch.meshgrid(y_range, x_range, indexing='ij')
                y = y.expand([mask_feat.shape[0], 1, -1, -1])
                x = x.expand([mask_feat.shape[0], 1, -1, -1])
                coord_feat = torch.cat([x, y], 1)
                mask_feat = torch.cat([mask_feat, coord_feat], 1)
            feature_add_all_level += self.convs_all_levels[i](mask_feat)  # <-- IPL001: first level ReLU output saved for backward is accumulated into in place
        return self.conv_pred(feature_add_all_level)


head = SOLOv2MaskHead()
features = [torch.randn(2, 8, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4), torch.randn(2, 8, 2, 2)]
mask_pred = head(features)
loss_mask = F.binary_cross_entropy_with_logits(mask_pred, (torch.rand_like(mask_pred) > 0.5).float())
loss_mask.backward()
