# label: hazard raises
# why: feature_add_all_level starts as the output of the first level's conv tower, whose final ReLU saved it, and the loop then accumulates the other levels into it with +=.
# source: https://github.com/easton-cau/SOTR/issues/19
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskBranch(nn.Module):
    def __init__(self, in_channels=4, channels=8, num_levels=3, num_masks=6):
        super().__init__()
        self.num_levels = num_levels
        self.convs_all_levels = nn.ModuleList()
        for i in range(num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                convs_per_level.add_module('conv' + str(i), nn.Conv2d(in_channels, channels, 3, padding=1, bias=False))
                convs_per_level.add_module('gn' + str(i), nn.GroupNorm(2, channels))
                convs_per_level.add_module('relu' + str(i), nn.ReLU())
                self.convs_all_levels.append(convs_per_level)
                continue
            for j in range(i):
                chn = in_channels if j == 0 else channels
                convs_per_level.add_module('conv' + str(j), nn.Conv2d(chn, channels, 3, padding=1, bias=False))
                convs_per_level.add_module('gn' + str(j), nn.GroupNorm(2, channels))
                convs_per_level.add_module('relu' + str(j), nn.ReLU())
                convs_per_level.add_module('upsample' + str(j), nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
            self.convs_all_levels.append(convs_per_level)
        self.conv_pred = nn.Conv2d(channels, num_masks, 1)

    def forward(self, features):
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            feature_add_all_level += self.convs_all_levels[i](mask_feat)  # <-- IPL001: accumulates into the first level's ReLU output, which ReLU saved
        mask_pred = self.conv_pred(feature_add_all_level)
        return mask_pred


branch = MaskBranch()
features = [torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4), torch.randn(2, 4, 2, 2)]
mask_pred = branch(features)
target = (torch.rand(2, 6, 8, 8) > 0.5).float()
loss = F.binary_cross_entropy_with_logits(mask_pred, target)
loss.backward()
