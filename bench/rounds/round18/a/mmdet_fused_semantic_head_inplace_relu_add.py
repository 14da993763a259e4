# label: hazard raises
# why: with inplace=True lateral ConvModules the fused feature x is the output of an in-place ReLU (saved for its backward), and `x += self.lateral_convs[i](feat)` then overwrites it.
# source: https://github.com/open-mmlab/mmdetection/issues/654
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=True):
        super(ConvModule, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.conv(x))


class FusedSemanticHead(nn.Module):
    def __init__(self, num_ins=3, fusion_level=1, num_convs=2, in_channels=4, conv_out_channels=8, num_classes=5, ignore_label=255):
        super(FusedSemanticHead, self).__init__()
        self.num_ins = num_ins
        self.fusion_level = fusion_level
        self.num_convs = num_convs
        self.in_channels = in_channels
        self.lateral_convs = nn.ModuleList()
        for i in range(self.num_ins):
            self.lateral_convs.append(ConvModule(self.in_channels, self.in_channels, 1, inplace=True))
        self.convs = nn.ModuleList()
        for i in range(self.num_convs):
            in_channels = self.in_channels if i == 0 else conv_out_channels
            self.convs.append(ConvModule(in_channels, conv_out_channels, 3, padding=1))
        self.conv_embedding = ConvModule(conv_out_channels, conv_out_channels, 1)
        self.conv_logits = nn.Conv2d(conv_out_channels, num_classes, 1)
        self.criterion = nn.CrossEntropyLoss(ignore_index=ignore_label)

    def forward(self, feats):
        x = self.lateral_convs[self.fusion_level](feats[self.fusion_level])
        fused_size = tuple(x.shape[-2:])
        for i, feat in enumerate(feats):
            if i != self.fusion_level:
                feat = F.interpolate(feat, size=fused_size, mode="bilinear", align_corners=True)
                x += self.lateral_convs[i](feat)  # <-- IPL001: adds in place into the in-place ReLU output that relu saved for backward

        for i in range(self.num_convs):
            x = self.convs[i](x)

        mask_pred = self.conv_logits(x)
        x = self.conv_embedding(x)
        return mask_pred, x

    def loss(self, mask_pred, labels):
        labels = labels.squeeze(1).long()
        loss_semantic_seg = self.criterion(mask_pred, labels)
        return loss_semantic_seg


head = FusedSemanticHead()
feats = (torch.randn(2, 4, 16, 16), torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4))
gt_semantic_seg = torch.randint(0, 5, (2, 1, 8, 8))
semantic_pred, semantic_feat = head(feats)
loss_seg = head.loss(semantic_pred, gt_semantic_seg)
loss = loss_seg + semantic_feat.mean()
loss.backward()
