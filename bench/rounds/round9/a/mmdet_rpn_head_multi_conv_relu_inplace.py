# label: hazard raises
# why: with num_convs > 1 rpn_conv ends in a ConvModule ReLU whose output ReLU saved for backward, and forward_single applies F.relu(x, inplace=True) on top of it
# source: https://github.com/open-mmlab/mmdetection/issues/7933
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.conv(x))


class RPNHead(nn.Module):
    def __init__(self, in_channels=8, feat_channels=8, num_anchors=3, num_convs=2):
        super().__init__()
        self.in_channels = in_channels
        self.feat_channels = feat_channels
        self.num_anchors = num_anchors
        self.num_convs = num_convs
        self.cls_out_channels = 1
        self._init_layers()

    def _init_layers(self):
        if self.num_convs > 1:
            rpn_convs = []
            for i in range(self.num_convs):
                if i == 0:
                    in_channels = self.in_channels
                else:
                    in_channels = self.feat_channels
                # use ``inplace=False`` to avoid error: one of the variables
                # needed for gradient computation has been modified by an
                # inplace operation.
                rpn_convs.append(
                    ConvModule(in_channels, self.feat_channels, 3, padding=1, inplace=False))
            self.rpn_conv = nn.Sequential(*rpn_convs)
        else:
            self.rpn_conv = nn.Conv2d(self.in_channels, self.feat_channels, 3, padding=1)
        self.rpn_cls = nn.Conv2d(self.feat_channels, self.num_anchors * self.cls_out_channels, 1)
        self.rpn_reg = nn.Conv2d(self.feat_channels, self.num_anchors * 4, 1)

    def forward_single(self, x):
        x = self.rpn_conv(x)
        x = F.relu(x, inplace=True)  # <-- IPL001: in-place ReLU on the last ConvModule's saved ReLU output
        rpn_cls_score = self.rpn_cls(x)
        rpn_bbox_pred = self.rpn_reg(x)
        return rpn_cls_score, rpn_bbox_pred

    def forward(self, feats):
        return tuple(map(list, zip(*[self.forward_single(f) for f in feats])))


rpn_head = RPNHead(num_convs=2)
feats = [torch.randn(2, 8, 8, 8), torch.randn(2, 8, 4, 4)]
cls_scores, bbox_preds = rpn_head(feats)
loss_rpn_cls = sum(F.binary_cross_entropy_with_logits(s, torch.ones_like(s)) for s in cls_scores)
loss_rpn_bbox = sum(p.abs().mean() for p in bbox_preds)
(loss_rpn_cls + loss_rpn_bbox).backward()
