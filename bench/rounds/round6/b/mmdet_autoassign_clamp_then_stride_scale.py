# label: safe
# why: the merged fix uses clamp(min=0), whose backward needs only its input, so scaling its output in place by the stride is harmless
# source: https://github.com/open-mmlab/mmdetection/pull/7074 (AutoAssignHead/FCOSHead.forward_single, "Fix bbox clamp in pt1.10")
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Scale(nn.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(scale, dtype=torch.float))

    def forward(self, x):
        return x * self.scale


def multi_apply(func, *args):
    map_results = map(func, *args)
    return tuple(map(list, zip(*map_results)))


class AnchorFreeHead(nn.Module):
    def __init__(self, num_classes, in_channels, feat_channels=8, strides=(8, 16)):
        super().__init__()
        self.strides = strides
        self.cls_convs = nn.Sequential(nn.Conv2d(in_channels, feat_channels, 3, padding=1),
                                       nn.GroupNorm(2, feat_channels), nn.ReLU(inplace=True))
        self.reg_convs = nn.Sequential(nn.Conv2d(in_channels, feat_channels, 3, padding=1),
                                       nn.GroupNorm(2, feat_channels), nn.ReLU(inplace=True))
        self.conv_cls = nn.Conv2d(feat_channels, num_classes, 3, padding=1)
        self.conv_reg = nn.Conv2d(feat_channels, 4, 3, padding=1)

    def forward_single(self, x):
        cls_feat = x
        reg_feat = x
        cls_feat = self.cls_convs(cls_feat)
        cls_score = self.conv_cls(cls_feat)
        reg_feat = self.reg_convs(reg_feat)
        bbox_pred = self.conv_reg(reg_feat)
        return cls_score, bbox_pred, cls_feat, reg_feat


class FCOSHead(AnchorFreeHead):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.conv_centerness = nn.Conv2d(8, 1, 3, padding=1)
        self.scales = nn.ModuleList([Scale(1.0) for _ in self.strides])

    def forward(self, feats):
        return multi_apply(self.forward_single, feats, self.scales, self.strides)


class AutoAssignHead(FCOSHead):
    def forward_single(self, x, scale, stride):
        cls_score, bbox_pred, cls_feat, reg_feat = super(
            FCOSHead, self).forward_single(x)
        centerness = self.conv_centerness(reg_feat)
        # scale the bbox_pred of different level
        # float to avoid overflow when enabling FP16
        bbox_pred = scale(bbox_pred).float()
        # bbox_pred needed for gradient computation has been modified
        # by F.relu(bbox_pred) when run with PyTorch 1.10. So replace
        # F.relu(bbox_pred) with bbox_pred.clamp(min=0)
        bbox_pred = bbox_pred.clamp(min=0)
        bbox_pred *= stride
        return cls_score, bbox_pred, centerness


head = AutoAssignHead(num_classes=3, in_channels=4)
feats = (torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4))
cls_scores, bbox_preds, centernesses = head(feats)
loss = sum(b.mean() for b in bbox_preds) + sum(c.sigmoid().mean() for c in cls_scores) \
    + sum(o.sigmoid().mean() for o in centernesses)
loss.backward()
