# label: hazard raises
# why: MaskHead starts feature_add_all_level from the level-0 tower, whose last module is nn.ReLU(inplace=False), and accumulates the other levels with +=, overwriting the ReLU output that ReluBackward0 saved, so the mask loss backward fails.
# source: https://github.com/easton-cau/SOTR/issues/19 (adet/modeling/sotr/sotr.py at commit fd43c47b6d3adbc3e484054f25541cbb0c21adbf)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskHead(nn.Module):
    def __init__(self, num_levels=3, mask_in_channels=4, mask_channels=32, num_masks=32, norm="GN"):
        super().__init__()
        self.num_masks = num_masks
        self.mask_in_channels = mask_in_channels
        self.mask_channels = mask_channels
        self.num_levels = num_levels

        self.convs_all_levels = nn.ModuleList()
        for i in range(self.num_levels):
            convs_per_level = nn.Sequential()
            if i == 0:
                conv_tower = list()
                conv_tower.append(nn.Conv2d(self.mask_in_channels, self.mask_channels,
                                            kernel_size=3, stride=1, padding=1, bias=norm is None))
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(32, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(i), nn.Sequential(*conv_tower))
                self.convs_all_levels.append(convs_per_level)
                continue

            for j in range(i):
                if j == 0:
                    chn = self.mask_in_channels
                    conv_tower = list()
                    conv_tower.append(nn.Conv2d(chn, self.mask_channels,
                                                kernel_size=3, stride=1, padding=1, bias=norm is None))
                    if norm == "GN":
                        conv_tower.append(nn.GroupNorm(32, self.mask_channels))
                    conv_tower.append(nn.ReLU(inplace=False))
                    convs_per_level.add_module('conv' + str(j), nn.Sequential(*conv_tower))
                    upsample_tower = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                    convs_per_level.add_module('upsample' + str(j), upsample_tower)
                    continue
                conv_tower = list()
                conv_tower.append(nn.Conv2d(self.mask_channels, self.mask_channels,
                                            kernel_size=3, stride=1, padding=1, bias=norm is None))
                if norm == "GN":
                    conv_tower.append(nn.GroupNorm(32, self.mask_channels))
                conv_tower.append(nn.ReLU(inplace=False))
                convs_per_level.add_module('conv' + str(j), nn.Sequential(*conv_tower))
                upsample_tower = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False)
                convs_per_level.add_module('upsample' + str(j), upsample_tower)

            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = nn.Sequential(
            nn.Conv2d(self.mask_channels, self.num_masks, kernel_size=1, stride=1, padding=0, bias=norm is None),
            nn.GroupNorm(32, self.num_masks),
            nn.ReLU(inplace=True)
        )

        for modules in [self.convs_all_levels, self.conv_pred]:
            for l in modules.modules():
                if isinstance(l, nn.Conv2d):
                    torch.nn.init.normal_(l.weight, std=0.01)
                    if l.bias is not None:
                        nn.init.constant_(l.bias, 0)

    def forward(self, features):
        assert len(features) == self.num_levels
        feature_add_all_level = self.convs_all_levels[0](features[0])
        for i in range(1, self.num_levels):
            mask_feat = features[i]
            feature_add_all_level += self.convs_all_levels[i](mask_feat)  # <-- IPL001: overwrites the level-0 ReLU output saved for backward

        mask_pred = self.conv_pred(feature_add_all_level)
        return mask_pred


mask_head = MaskHead()
features = [torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4), torch.randn(2, 4, 2, 2)]
mask_pred = mask_head(features)
kernel_pred = torch.randn(2, 32, requires_grad=True)
ins_masks = torch.einsum('nchw,nc->nhw', mask_pred, kernel_pred).sigmoid()
gt_masks = (torch.rand(2, 8, 8) > 0.5).float()
loss_ins = F.binary_cross_entropy(ins_masks, gt_masks)
loss_ins.backward()
